/* SPDX-License-Identifier: MIT */
/*
 * The terminal (doc/DESIGN.md G-18 ... G-20, G-35, X-4): interactive shells in
 * the browser for whoever holds a display's control capability, on the
 * gateway port, with no process or port of their own.
 *
 *   GET /term/<control capability>   websocket; every connection gets a
 *                                    new shell; a view capability, an
 *                                    unknown token or a bad path is
 *                                    refused before the upgrade
 *
 * Input frames: [kind u8][len u32 big-endian][payload], len <= 1 MiB;
 * kind 0 = stdin bytes, kind 1 = resize (cols u16be, rows u16be).  A frame
 * may be split across websocket messages and a message may hold several
 * frames.  Output: the PTY's raw bytes as binary messages.  Anything else
 * closes that connection with a close reason.
 *
 * The PTY server of a capability starts on first use and stops when the
 * capability is revoked, expires or its display closes: every shell is
 * disconnected (close reason), its session is sent SIGHUP and, after a
 * grace, SIGKILL, and the server's session files are deleted.
 */
#ifndef GUESTD_PTY_H
#define GUESTD_PTY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct capability;
struct lws;

#define PTY_FRAME_HDR		5
#define PTY_FRAME_MAX		(1024 * 1024)	/* payload bytes */
#define PTY_KIND_STDIN		0
#define PTY_KIND_RESIZE		1

/* pty_gateway_cb()'s answer for a connection that is not a terminal's. */
#define PTY_PASS		1

/*
 * The gateway offers every callback of its protocol here first; anything
 * but PTY_PASS is the callback's return value.  reason is an enum
 * lws_callback_reasons.
 */
int	 pty_gateway_cb(struct lws *wsi, int reason, void *in, size_t len);

/* cap is going away: stop its PTY server (see above).  Any cap is fine. */
void	 pty_drop(const struct capability *cap);

/* Connected terminals, and shells still alive (for tests and status). */
unsigned pty_count(void);
unsigned pty_shells(void);

/*
 * The input framer, exposed for the unit test and the fuzzer.  Feed bytes
 * with pty_frame_next(): it consumes some of p and returns how many
 * (> 0), or ERR_* with a reason in *why when the stream is malformed.
 * ev says what was found: stdin bytes (data, n: a slice of p), a resize,
 * or nothing yet.  pty_frame_unread() gives back the last n stdin bytes
 * (the caller could not write them) so they come again next time.
 */
enum pty_ev { PTY_EV_NONE, PTY_EV_STDIN, PTY_EV_RESIZE };

struct pty_framer {
	uint8_t		 hdr[PTY_FRAME_HDR];
	size_t		 hdrlen;
	uint8_t		 kind;
	uint32_t	 left;		/* payload bytes still to come */
	uint8_t		 rs[4];		/* resize payload so far */
	size_t		 rslen;
	int		 in_payload;
};

struct pty_event {
	enum pty_ev	 type;
	const uint8_t	*data;
	size_t		 n;
	unsigned	 cols, rows;
};

void	 pty_frame_init(struct pty_framer *f);
int	 pty_frame_next(struct pty_framer *f, const uint8_t *p, size_t n,
	    struct pty_event *ev, const char **why);
void	 pty_frame_unread(struct pty_framer *f, size_t n);

#endif

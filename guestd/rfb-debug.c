/* SPDX-License-Identifier: MIT */
/*
 * The debug port (doc/DESIGN.md G-16): a VNC port per display on loopback, for
 * viewers that do not come through the gateway.
 *
 * Debug viewers come over TCP, which libvncserver must not serve itself:
 * it would block the loop writing to a viewer that stopped reading, and
 * reading the rest of a half message.  So guestd accepts them, and each
 * connection is relayed to a socketpair whose other end libvncserver
 * serves like a gateway viewer's, gated (rfb_gate in rfb.c):
 *
 *   viewer --tcp--> [in] --framer--> whole messages --> pair
 *   viewer <--tcp-- [out: one chunk] <----------------- pair
 *
 * One chunk at most waits for the viewer: while it does not read, neither
 * do we, so libvncserver's end fills and the gate holds it.  Upwards,
 * whole messages only, none while the viewer's output is backed up or our
 * end lacks room for a whole one, and reading the viewer stops meanwhile.
 */
#include "autoconf.h"

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <linux/sockios.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rfb/rfb.h>

#include "buf.h"
#include "display.h"
#include "err.h"
#include "log.h"
#include "loop.h"
#include "rfb.h"
#include "rfb-int.h"
#include "xmalloc.h"

#define RFB_RELAY_CHUNK		(64 * 1024)
#define RFB_RELAY_IN_MAX	(RFB_MSG_MAX + RFB_RELAY_CHUNK)
#define RFB_RELAY_BACKLOG	(256 * 1024)	/* output not yet relayed */
#define RFB_RELAY_SNDBUF	(4 * 1024 * 1024)
#define RFB_DEBUG_VIEWERS	16	/* per display */

/* A debug-port viewer: its TCP connection and our end of the pair. */
struct rfb_relay {
	struct rfb		*r;
	struct loop_fd		*tcp;
	struct loop_fd		*pair;	/* our end; NULL until the version */
	int			 pair_sndbuf;
	int			 closed;	/* freed by the callback's end */
	struct rfb_framer	 fr;
	uint8_t			*in;	/* from the viewer, not yet up */
	size_t			 inlen, incap;
	size_t			 cur, curoff;	/* message half written up */
	uint8_t			 out[RFB_RELAY_CHUNK];	/* to the viewer */
	size_t			 outlen, outoff;
	size_t			 skip;	/* libvncserver's version, sent */
	LIST_ENTRY(rfb_relay)	 entry;	/* in r's relays until closed */
};

static int		 rfb_debug_enabled;
static int		 rfb_debug_control;
static in_addr_t	 rfb_debug_addr;
static int		 rfb_debug_base = 5900;

/* ---- settings ------------------------------------------------------------ */

int
rfb_set_debug(const char *addr, int base, int control)
{
	struct in_addr	in;

	if (addr == NULL || inet_pton(AF_INET, addr, &in) != 1 ||
	    (ntohl(in.s_addr) >> 24) != 127)
		return ERR_CONFIG;
	if (base < 1 || base > 65535)
		return ERR_CONFIG;
	rfb_debug_enabled = 1;
	rfb_debug_addr = in.s_addr;
	rfb_debug_base = base;
	rfb_debug_control = control ? 1 : 0;
	return 0;
}

int
rfb_debug_on(void)
{
	return rfb_debug_enabled;
}

/* ---- relays -------------------------------------------------------------- */

static void
rfb_relay_close(struct rfb_relay *rl)
{
	if (rl->closed)
		return;
	rl->closed = 1;
	loop_fd_close(rl->tcp);
	rl->tcp = NULL;
	/* libvncserver sees EOF and drops the viewer (rfb_client_gone). */
	loop_fd_close(rl->pair);
	rl->pair = NULL;
	LIST_REMOVE(rl, entry);
	rl->r->nrelays--;
}

/* The callbacks' last step: free rl once closed, never inside the work. */
static void
rfb_relay_reap(struct rfb_relay *rl)
{
	if (!rl->closed)
		return;
	free(rl->in);
	free(rl);
}

/*
 * Whether the next message may go up: libvncserver's output is not backed
 * up (a viewer that does not read has its requests wait in its own
 * socket), and our end of the pair has room for a whole message, so
 * libvncserver never reads half of one.  *blocked is set when not.
 */
static int
rfb_relay_may_send(struct rfb_relay *rl, int *blocked)
{
	int	fd = loop_fd_get(rl->pair), n = 0, q = 0;

	if (ioctl(fd, FIONREAD, &n) == 0 && n > RFB_RELAY_BACKLOG) {
		/* rfb_relay_down calls us again once it read. */
		*blocked = 1;
		return 0;
	}
	if (ioctl(fd, SIOCOUTQ, &q) == 0 && q > rl->pair_sndbuf / 4) {
		/* Writable again at a quarter (unix_writable). */
		loop_fd_want_write(rl->pair);
		*blocked = 1;
		return 0;
	}
	return 1;
}

/* Hand what the viewer sent up, whole messages only. */
static void
rfb_relay_up(struct rfb_relay *rl)
{
	size_t	used = 0;
	ssize_t	len;
	int	type, blocked = 0, r;

	if (rl->pair == NULL)
		return;
	while (used < rl->inlen) {
		if (rl->cur == 0) {
			if (!rfb_relay_may_send(rl, &blocked))
				break;
			len = rfb_frame_next(&rl->fr, rl->in + used,
			    rl->inlen - used, &type);
			if (len == 0)
				break;
			if (len < 0) {
				log_debug("rfb.debug_dropped", "slot=%d "
				    "reason=%s", display_slot(rl->r->d),
				    len == ERR_TOO_LARGE ? "message_too_large" :
				    "protocol_error");
				rfb_relay_close(rl);
				return;
			}
			if (!rfb_debug_control && rfb_msg_is_input(type)) {
				used += (size_t)len;
				continue;
			}
			rl->cur = (size_t)len;
			rl->curoff = 0;
		}
		r = loop_fd_write_pending(rl->pair, rl->in + used, rl->cur,
		    &rl->curoff);
		if (r > 0) {
			used += rl->cur;
			rl->cur = 0;
			continue;
		}
		if (r == 0) {
			blocked = 1;
			break;
		}
		rfb_relay_close(rl);
		return;
	}
	if (used > 0) {
		memmove(rl->in, rl->in + used, rl->inlen - used);
		rl->inlen -= used;
	}
	loop_fd_want_read(rl->tcp, !blocked && rl->inlen < RFB_RELAY_IN_MAX);
}

/* Hand libvncserver's bytes to the viewer, one chunk at a time. */
static void
rfb_relay_down(struct rfb_relay *rl)
{
	ssize_t	n;
	size_t	k;
	int	got = 0, r;

	for (;;) {
		r = loop_fd_write_pending(rl->tcp, rl->out, rl->outlen,
		    &rl->outoff);
		if (r == 0) {
			if (rl->pair != NULL)
				loop_fd_want_read(rl->pair, 0);
			break;
		}
		if (r < 0) {
			rfb_relay_close(rl);
			return;
		}
		rl->outoff = rl->outlen = 0;
		if (rl->pair == NULL)
			break;
		n = read(loop_fd_get(rl->pair), rl->out, sizeof rl->out);
		if (n > 0) {
			got = 1;
			/* libvncserver's version went out on accept. */
			k = rl->skip < (size_t)n ? rl->skip : (size_t)n;
			rl->skip -= k;
			memmove(rl->out, rl->out + k, (size_t)n - k);
			rl->outlen = (size_t)n - k;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			loop_fd_want_read(rl->pair, 1);
			break;
		}
		/* libvncserver dropped the viewer. */
		rfb_relay_close(rl);
		return;
	}
	if (got)
		rfb_relay_up(rl);
}

/* Minor version of the ProtocolVersion "RFB 003.xxx\n" at p, else -1. */
static int
rfb_version_minor(const uint8_t *p, size_t n)
{
	struct cursor	c;
	uint32_t	minor;

	cursor_init(&c, p, n);
	if (cursor_expect(&c, "RFB 003.", 8) != 0 ||
	    cursor_get_digits(&c, 3, &minor) != 0 ||
	    cursor_expect(&c, "\n", 1) != 0)
		return -1;
	return (int)minor;
}

static void	rfb_relay_pair_cb(struct loop_fd *, int, void *);

/*
 * The viewer's ProtocolVersion came: pre-feed it into a new socketpair
 * (so rfbNewClient need not sniff 100 ms for a websocket) and hand the
 * other end to libvncserver.  What the viewer sends next depends on the
 * version as libvncserver sees it: 3.3 has no security type to choose.
 */
static int
rfb_relay_version(struct rfb_relay *rl)
{
	socklen_t	len = sizeof rl->pair_sndbuf;
	int		sv[2], minor, sz = RFB_RELAY_SNDBUF;

	if ((minor = rfb_version_minor(rl->in, rl->inlen)) < 0)
		return ERR_PROTOCOL;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return ERR_IO;
	(void)setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
	if (getsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &rl->pair_sndbuf,
	    &len) != 0)
		rl->pair_sndbuf = 0;
	if (write(sv[0], rl->in, RFB_VERSION_LEN) != RFB_VERSION_LEN) {
		close(sv[0]);
		close(sv[1]);
		return ERR_IO;
	}
	if ((rl->pair = loop_fd_add(sv[0], rfb_relay_pair_cb, rl)) == NULL) {
		close(sv[1]);
		return ERR_IO;
	}
	rl->fr.phase = minor < 7 ? RFB_PHASE_INIT : RFB_PHASE_SECURITY;
	memmove(rl->in, rl->in + RFB_VERSION_LEN, rl->inlen - RFB_VERSION_LEN);
	rl->inlen -= RFB_VERSION_LEN;
	/* No owner: no capability revokes it; closing rl drops it. */
	return rfb_add_viewer(rl->r->d, sv[1], rfb_debug_control, NULL);
}

static void
rfb_relay_read(struct rfb_relay *rl)
{
	size_t	want = RFB_RELAY_IN_MAX - rl->inlen;
	ssize_t	n;

	if (want > RFB_RELAY_CHUNK)
		want = RFB_RELAY_CHUNK;
	if (want == 0 || rl->cur > 0) {
		loop_fd_want_read(rl->tcp, 0);
		return;
	}
	if (rl->incap - rl->inlen < want) {
		/* Doubling, up to the largest message and a chunk. */
		rl->incap = rl->inlen + want > 2 * rl->incap ?
		    rl->inlen + want : 2 * rl->incap;
		if (rl->incap > RFB_RELAY_IN_MAX)
			rl->incap = RFB_RELAY_IN_MAX;
		rl->in = xrealloc(rl->in, rl->incap);
	}
	n = read(loop_fd_get(rl->tcp), rl->in + rl->inlen, want);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return;
	if (n <= 0) {
		rfb_relay_close(rl);
		return;
	}
	rl->inlen += (size_t)n;
	if (rl->pair == NULL) {
		if (rl->inlen < RFB_VERSION_LEN)
			return;
		if (rfb_relay_version(rl) != 0) {
			rfb_relay_close(rl);
			return;
		}
	}
	rfb_relay_up(rl);
}

/*
 * A socket of rl became writable: move bytes both ways.  A write that
 * stops short again asks for LOOP_WRITE from inside this callback, which
 * loop.c re-arms once lws is done with it.
 */
static void
rfb_relay_writable(struct rfb_relay *rl)
{
	rfb_relay_down(rl);
	if (!rl->closed)
		rfb_relay_up(rl);
}

static void
rfb_relay_tcp_cb(struct loop_fd *lf, int events, void *arg)
{
	struct rfb_relay	*rl = arg;

	(void)lf;
	if (events & LOOP_HUP)
		rfb_relay_close(rl);
	if (!rl->closed && (events & LOOP_WRITE))
		rfb_relay_writable(rl);
	if (!rl->closed && (events & LOOP_READ))
		rfb_relay_read(rl);
	rfb_relay_reap(rl);
}

static void
rfb_relay_pair_cb(struct loop_fd *lf, int events, void *arg)
{
	struct rfb_relay	*rl = arg;

	(void)lf;
	if (events & LOOP_HUP) {
		/* Pass on what is left (a failure reason) if it fits. */
		rfb_relay_down(rl);
		rfb_relay_close(rl);
	}
	if (!rl->closed && (events & LOOP_WRITE))
		rfb_relay_writable(rl);
	if (!rl->closed && (events & LOOP_READ))
		rfb_relay_down(rl);
	rfb_relay_reap(rl);
}

static void
rfb_relay_new(struct rfb *r, int fd)
{
	struct rfb_relay	*rl;
	int			 one = 1;

	if (r->nrelays >= RFB_DEBUG_VIEWERS) {
		log_warn("rfb.debug_refused", "slot=%d reason=too_many",
		    display_slot(r->d));
		close(fd);
		return;
	}
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	rl = xcalloc(1, sizeof *rl);
	rl->r = r;
	if ((rl->tcp = loop_fd_add(fd, rfb_relay_tcp_cb, rl)) == NULL) {
		free(rl);
		return;
	}
	LIST_INSERT_HEAD(&r->relays, rl, entry);
	r->nrelays++;
	/* The server speaks first; libvncserver's copy is dropped. */
	rl->outlen = (size_t)snprintf((char *)rl->out, sizeof rl->out,
	    rfbProtocolVersionFormat, rfbProtocolMajorVersion,
	    rfbProtocolMinorVersion);
	rl->skip = rl->outlen;
	rfb_relay_down(rl);
	rfb_relay_reap(rl);
}

static void
rfb_debug_listen_cb(struct loop_fd *lf, int events, void *arg)
{
	struct rfb	*r = arg;
	int		 fd;

	if (events & LOOP_HUP) {
		r->listen_lf = NULL;
		return;
	}
	while ((fd = accept4(loop_fd_get(lf), NULL, NULL,
	    SOCK_NONBLOCK | SOCK_CLOEXEC)) != -1)
		rfb_relay_new(r, fd);
}

void
rfb_debug_listen(struct rfb *r)
{
	struct sockaddr_in	sin;
	char			a[INET_ADDRSTRLEN];
	int			fd, one = 1, port, e;

	port = rfb_debug_base + display_slot(r->d);
	inet_ntop(AF_INET, &rfb_debug_addr, a, sizeof a);
	if (port > 65535)
		return;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = rfb_debug_addr;
	sin.sin_port = htons((uint16_t)port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd != -1 && (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof one) == -1 || bind(fd, (struct sockaddr *)&sin,
	    sizeof sin) == -1 || listen(fd, 16) == -1)) {
		e = errno;
		close(fd);
		fd = -1;
		errno = e;
	}
	if (fd == -1 || (r->listen_lf = loop_fd_add(fd, rfb_debug_listen_cb,
	    r)) == NULL) {
		log_warn("rfb.debug_listen_failed", "addr=%s port=%d "
		    "error=\"%s\"", a, port, fd == -1 ? strerror(errno) :
		    "cannot adopt");
		return;
	}
	log_info("rfb.debug_listening", "addr=%s port=%d slot=%d", a, port,
	    display_slot(r->d));
}

void
rfb_debug_close(struct rfb *r)
{
	struct rfb_relay	*rl;

	loop_fd_close(r->listen_lf);
	r->listen_lf = NULL;
	while ((rl = LIST_FIRST(&r->relays)) != NULL) {
		rfb_relay_close(rl);
		rfb_relay_reap(rl);
	}
}

/* SPDX-License-Identifier: MIT */
/*
 * RFB (VNC) for every open display (doc/DESIGN.md G-14, G-16), served by
 * libvncserver from the damage framebuffer capture.c keeps: one
 * rfbScreenInfo per display, no listening socket of its own (unless the
 * debug port is on), pumped from guestd's one loop only when a viewer sent
 * bytes or the capture saw damage.
 *
 * Viewers arrive as connected stream sockets (the accepted end of a
 * capability's Unix socket, capability.c).  The peer must have sent the
 * client ProtocolVersion "RFB 003.008\n" before the socket is handed over:
 * libvncserver then skips its 100 ms websocket sniff.  Policy is per
 * viewer: view-only viewers never inject (libvncserver's viewOnly plus our
 * own input hooks checking it again).
 *
 * rfb_frame_next() is the framer of the client-to-server byte stream the
 * gateway uses to hand libvncserver whole messages only (libvncserver
 * blocks on a half message) and to drop input messages of view viewers.
 */
#ifndef GUESTD_RFB_H
#define GUESTD_RFB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct display;
struct rfb;

/* The client ProtocolVersion the gateway pre-feeds. */
#define RFB_CLIENT_VERSION	"RFB 003.008\n"
#define RFB_VERSION_LEN		12
/* Largest client message the framer accepts (cut text included). */
#define RFB_MSG_MAX		(1024 * 1024)

/*
 * Debug VNC (G-16): listen on addr (IPv4 loopback only) port base + slot
 * for every display; control says whether such viewers may inject.  Call
 * before any display opens.  0 or ERR_CONFIG.
 */
int	 rfb_set_debug(const char *addr, int base, int control);

/* Display lifecycle (display.c hooks, through capability.c). */
void	 rfb_display_ready(struct display *d);
/* Disconnect every viewer of d and free its screen; before capture goes. */
void	 rfb_display_closing(struct display *d);

/* The screen of d, made on first use.  0 or ERR_*. */
int	 rfb_screen(struct display *d, struct rfb **out);
/*
 * Hand fd (a connected stream socket, ownership taken) to d's screen as
 * a viewer belonging to owner.  0 or ERR_* (fd closed then).
 */
int	 rfb_add_viewer(struct display *d, int fd, int control,
	    const void *owner);
/* Disconnect every viewer of owner now. */
void	 rfb_drop_owner(struct display *d, const void *owner);
unsigned rfb_viewer_count(struct display *d);

/* ---- client message framer ---------------------------------------------- */

enum rfb_phase {
	RFB_PHASE_VERSION = 0,	/* 12-byte ProtocolVersion */
	RFB_PHASE_SECURITY,	/* 1-byte security type (3.7, 3.8) */
	RFB_PHASE_INIT,		/* 1-byte ClientInit */
	RFB_PHASE_NORMAL
};

struct rfb_framer {
	enum rfb_phase	phase;
};

/* Message types (client to server) a view viewer may not send. */
int	 rfb_msg_is_input(int type);

/*
 * Length of the complete message at the start of p[0..n): > 0 (and
 * *type set: the RFB message type, or -1 for handshake bytes; the phase
 * advances), 0 when more bytes are needed, or ERR_PROTOCOL / ERR_TOO_LARGE
 * for a stream to drop.
 */
ssize_t	 rfb_frame_next(struct rfb_framer *f, const uint8_t *p, size_t n,
	    int *type);

#endif

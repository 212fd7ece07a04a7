/* SPDX-License-Identifier: MIT */
/*
 * What the files of the rfb family share and nobody else sees: rfb.c
 * (screens, viewers, the send-room gate, the client message framer) and
 * rfb-debug.c (the debug port: a loopback listener per display and the
 * relays that bring its TCP viewers into the gate).  Other modules use
 * rfb.h.
 */
#ifndef GUESTD_RFB_INT_H
#define GUESTD_RFB_INT_H

#include <rfb/rfb.h>

#include "queue-compat.h"

struct capture;
struct display;
struct loop_fd;
struct loop_timer;
struct rfb_relay;
struct rfb_tight;

/* One per display with a screen. */
struct rfb {
	struct display		*d;
	struct capture		*cap;
	rfbScreenInfoPtr	 s;
	struct loop_timer	*pump;
	struct loop_fd		*listen_lf;	/* debug port */
	LIST_HEAD(, rfb_relay)	 relays;	/* its viewers */
	unsigned		 nrelays;
	int			 closing;	/* no X calls for viewers */
	unsigned		 nviewers;	/* accepted, not yet gone */
	LIST_ENTRY(rfb)		 entry;		/* in rfb.c's list */
};

/* ---- rfb-debug.c --------------------------------------------------------- */

/* Whether rfb_set_debug turned the debug port on. */
int	 rfb_debug_on(void);
/* Listen on r's debug port (a warning logged when that fails). */
void	 rfb_debug_listen(struct rfb *r);
/* Stop listening and drop r's debug viewers; before r's screen goes. */
void	 rfb_debug_close(struct rfb *r);

/* ---- rfb-tight.c --------------------------------------------------------- */

/* Called on the loop once t's update is written (or failed: cl closed). */
typedef void	(*rfb_tight_done_fn)(struct rfb *r, rfbClientPtr cl);

/* Whether cl asked for Tight with JPEG in a form the fast path sends. */
int	 rfb_tight_eligible(rfbClientPtr cl);
/*
 * Right after libvncserver read cl's requests: take its update when it is
 * large enough to be worth it.  1 when taken: then *out is the update in
 * flight (hold cl until done(r, cl) runs), or NULL when it was written at
 * once.  0: libvncserver sends it.
 */
int	 rfb_tight_take(struct rfb *r, rfbClientPtr cl, rfb_tight_done_fn done,
	    struct rfb_tight **out);
/* cl is going: t finishes without it (no write, no done). */
void	 rfb_tight_orphan(struct rfb_tight *t);

#endif

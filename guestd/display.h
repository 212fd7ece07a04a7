/* SPDX-License-Identifier: MIT */
/*
 * Desktops (doc/DESIGN.md G-1 ... G-5): one lazily started Xvfb per active bot
 * on a recycled display slot :N, each with its own MIT-MAGIC-COOKIE-1 file and
 * its own damage capture (capture.h).
 *
 *  display.open  {bot, width?, height?, depth?}  (mutating: fence)
 *                -> {bot, display:":N", slot, width, height, depth,
 *                    xauthority, created}
 *                Starts Xvfb and answers once it is ready (no polling:
 *                Xvfb writes its display number to a -displayfd pipe).
 *                An active bot gets its existing display (created false).
 *                SANDBOX_TEAM_SCREEN_LIMIT=N (0/unset: none): at the limit
 *                the oldest idle (no use for GUESTD_SCREEN_IDLE_MS, default
 *                0) and uncontrolled desktop is torn down (event
 *                display.evicted); without one: MULTI_SCREEN_UNAVAILABLE.
 *  display.close {bot}  (mutating: fence)   -> {bot, display, slot}
 *                once the X server has exited; the slot is free again.
 *  display.list  {}     -> {limit, displays[{bot, display, slot, width,
 *                    height, depth, state, pid, since_ms, idle_ms,
 *                    controlled, frame}]}
 *
 * Events to every connection that used a display op: display.exited {bot,
 * display, slot, status|signal} when an X server died on its own (the next
 * open starts it again), display.evicted {bot, display, slot}.
 *
 * Settings come from the environment on first use: GUESTD_DISPLAY_FIRST
 * (first slot, default 1), GUESTD_DISPLAY_GEOMETRY (default 1280x800x24),
 * GUESTD_XVFB (default "Xvfb" on PATH), SANDBOX_TEAM_SCREEN_LIMIT,
 * GUESTD_SCREEN_IDLE_MS.
 */
#ifndef GUESTD_DISPLAY_H
#define GUESTD_DISPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct control_conn;
struct capture;
struct display;

int	display_op_open(struct control_conn *, uint32_t, json_t *, char *,
	    size_t);
int	display_op_close(struct control_conn *, uint32_t, json_t *, char *,
	    size_t);
int	display_op_list(struct control_conn *, uint32_t, json_t *, char *,
	    size_t);

/* The ready display of bot, or NULL. */
struct display	*display_find(const char *bot);
/* The ready display on slot :N, or NULL. */
struct display	*display_find_slot(int slot);
struct capture	*display_capture(struct display *d);
int		 display_slot(const struct display *d);
/* Path of the display's MIT-MAGIC-COOKIE-1 file (for XAUTHORITY). */
const char	*display_xauthority(const struct display *d);
/* Never reused: tells a display from a later one at the same address. */
uint64_t	 display_generation(const struct display *d);
/*
 * One input executor per desktop (display.act and the /v1/desktop
 * drop-in), or they would fight over the spare keycodes used for typing.
 * claim: 0 or ERR_BUSY; release by the same owner (others are ignored).
 */
int		 display_input_claim(struct display *d, const void *owner);
void		 display_input_release(struct display *d, const void *owner);
/* A tool call used it now (idle time starts again). */
void		 display_touch(struct display *d);
/* A control capability or viewer holds it: never evicted while on. */
void		 display_set_controlled(struct display *d, int on);
/* Count of displays not being torn down. */
unsigned	 display_count(void);
/*
 * Hooks (the screen gateway): ready runs once a display is READY; closing
 * runs once when its teardown starts (or it died), before its capture is
 * freed and before the slot can be reused, to disconnect its viewers.
 */
typedef void	(*display_hook)(struct display *d);
void		 display_set_hooks(display_hook ready, display_hook closing);
/*
 * Open bot's desktop for guestd itself: cb(d, 0, arg) once it is ready
 * (now, if it already is), or cb(NULL, ERR_*, arg) when it failed to
 * start.  Returns 0 (cb will run) or an ERR_* (it will not).
 */
typedef void	(*display_open_cb)(struct display *d, int code, void *arg);
int		 display_open_notify(const char *bot, display_open_cb cb,
		    void *arg);
/* Stop every X server now (guestd exit; also run from atexit). */
void		 display_shutdown(void);

#endif

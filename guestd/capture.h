/* SPDX-License-Identifier: MIT */
/*
 * Damage-driven screen capture of one X display (doc/DESIGN.md G-6).  One Xlib
 * connection per display; a dup of its fd lives in the loop.  XDamage
 * reports the damage's bounding box as it grows
 * (DamageReportBoundingBox); we subtract and XShmGetImage the damaged rows
 * straight into the shared segment, which IS the framebuffer guestd keeps.
 * Each such grab is a new frame id.  No timer anywhere: an idle display
 * costs nothing.
 */
#ifndef GUESTD_CAPTURE_H
#define GUESTD_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

struct capture;

struct capture_box {
	int	x, y, w, h;	/* w == 0: empty */
};

/* The X connection died (server gone).  Called on the loop, once. */
typedef void	(*capture_dead_cb)(struct capture *cap, void *arg);

/*
 * Connect to display name (":5") with the MIT-MAGIC-COOKIE-1 cookie and
 * take the first full frame.  0 or ERR_*.
 */
int	 capture_open(struct capture **out, const char *name,
	    const unsigned char *cookie, size_t cookielen,
	    capture_dead_cb dead, void *arg);
void	 capture_free(struct capture *cap);

/*
 * Fold in every damage the server has seen up to now (one round trip), so
 * a picture drawn before the caller asked is in the framebuffer.
 */
int	 capture_sync(struct capture *cap);

/* capture_sync and capture_cursor in the one round trip. */
int	 capture_sync_cursor(struct capture *cap, int *x, int *y);

uint64_t capture_frame(const struct capture *cap);
/* Wall-clock ms of the last grab. */
uint64_t capture_time_ms(const struct capture *cap);
/* Framebuffer: 32-bit pixels, blue in the low byte (BGRX in memory). */
const uint8_t *capture_pixels(const struct capture *cap, int *w, int *h,
	    size_t *stride);
/*
 * Union of the boxes damaged after frame since; the whole screen when
 * since is older than the history kept.  Empty when since is current.
 */
void	 capture_damage_since(const struct capture *cap, uint64_t since,
	    struct capture_box *box);
/*
 * An encoder reads the framebuffer's rows off the loop: while held, the
 * grabs damage would cause wait (the damage is kept and grabbed once the
 * last hold is released: the next frame follows the encoder's pace), and
 * a capture_free meanwhile leaves the pixels mapped until then.
 * capture_sync still grabs: what an encoder then reads may mix two
 * frames, and the rows it mixed are reported as damage again.
 */
void	 capture_hold(struct capture *cap);
void	 capture_release(struct capture *cap);
/* Pointer position (a round trip).  0 or ERR_*. */
int	 capture_cursor(struct capture *cap, int *x, int *y);
/* The Xlib display, for input injection on the same connection. */
void	*capture_xdisplay(struct capture *cap);

/*
 * Called on the loop with each box of a new frame (a frame changes in
 * one or several boxes), right after it was grabbed into the framebuffer
 * (RFB marks it modified).  One hook per capture; cb NULL removes it.
 */
typedef void	(*capture_damage_cb)(struct capture *cap,
		    const struct capture_box *box, void *arg);
void	 capture_set_damage_cb(struct capture *cap, capture_damage_cb cb,
	    void *arg);

/*
 * Called on the loop when the X cursor image changed (XFixes cursor
 * notify), so RFB can send the new shape.  One hook per capture; cb NULL
 * removes it and stops the notifications.
 */
typedef void	(*capture_cursor_cb)(struct capture *cap, void *arg);
void	 capture_set_cursor_cb(struct capture *cap, capture_cursor_cb cb,
	    void *arg);

/*
 * Called on the loop, before the damage boxes of the same frame, for each
 * part of it that is an earlier part moved: dst now shows what was at
 * dst.y - dy (dy < 0: scrolled up), found by comparing row hashes of the
 * previous and the new frame (capture_scroll_find).  The damage boxes of
 * that frame then leave dst out.  Only while a hook is set does capture
 * keep the row hashes (one per 16 pixels of a row; RFB sets it while a
 * viewer is connected), and it stops hashing while frames change without
 * any sign of a scroll (capture_hash_frame); cb NULL removes it.
 */
typedef void	(*capture_copy_cb)(struct capture *cap,
		    const struct capture_box *dst, int dy, void *arg);
void	 capture_set_copy_cb(struct capture *cap, capture_copy_cb cb,
	    void *arg);

/*
 * The scroll in one box, from the hashes of its rows before (old) and
 * after (cur), h of each: 1 when rows [*y0, *y0 + *n) of cur are rows
 * [*y0 + *d, ...) of old (*d != 0) for a run long enough to be worth a
 * copy, 0 otherwise.
 */
int	 capture_scroll_find(const uint64_t *old, const uint64_t *cur, int h,
	    int *d, int *y0, int *n);

/* Box helpers, also used by the unit test. */
void	 capture_box_union(struct capture_box *a, const struct capture_box *b);
void	 capture_box_clip(struct capture_box *b, int w, int h);
/*
 * Add b to the region v[0..*n) of at most max boxes: merged with every box
 * it comes within a few pixels of, and when the region is full, with the
 * box it wastes the fewest pixels with.  Far apart changes stay apart.
 */
void	 capture_region_add(struct capture_box *v, int *n, int max,
	    const struct capture_box *b);

#endif

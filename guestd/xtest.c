/* SPDX-License-Identifier: MIT */
/*
 * xtest: XTest injection of a parsed batch, as a resumable executor.
 *
 * Each xtest_run() applies actions in order.  A round trip per action
 * would cost more than the action (200 clicks: 14 ms instead of 6), so the
 * requests of consecutive actions that cannot draw an X error are sent as
 * a group and XSynced together: at most XTEST_SYNC_EVERY actions, and at
 * the end of the batch and before any pause.  An action that can fail
 * (a button the server lacks) is synced on its own, before and after, so
 * its error is charged to it and nothing after it is sent.  Should a
 * grouped action fail anyway, the error's request serial names it, "done"
 * stops before it, and the answer says the later ones were sent too.  Time-taking steps (wait, hold, the pause
 * before the keymap is restored, long text) end the call with XTEST_AGAIN
 * and a delay instead of sleeping, so guestd's loop keeps serving.
 *
 * Typing: a character on the keymap is typed with its keycode, with Shift
 * or NumLock as its level needs (keymap.c); any other character with a
 * spare keycode lent to it.  A lent spare keeps its meaning after the
 * batch: clients translate keycodes with their own copy of the map,
 * fetched again when MappingNotify arrives, so a keycode must not change
 * meaning while events typed with it may be unread.  keymap.c reuses the
 * least recently used spare, never within its settle time (the batch
 * waits then), and clears them once the keyboard has been idle.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <X11/Xlib.h>
#include <X11/keysym.h>
#include <X11/extensions/XTest.h>

#include "err.h"
#include "vocab.h"
#include "xtest.h"
#include "keymap.h"

#define XTEST_TYPE_CHUNK	256	/* characters per run call */
#define XTEST_DRAG_STEP_PX	16	/* distance between drag motions */
#define XTEST_DRAG_STEPS_MAX	32	/* motions per drag segment */
#define XTEST_SYNC_EVERY	64	/* actions per XSync at most */
#define XTEST_HELD_MAX		(VOCAB_KEYSPEC_MAX + 1)

enum xtest_state {
	XTEST_ST_ACTIONS,	/* applying b->v[i] */
	XTEST_ST_DONE
};

struct xtest_exec {
	Display			*dpy;
	int			 screen;
	const struct vocab_batch *b;
	enum xtest_state	 state;
	size_t			 i;		/* current action */
	int			 phase;		/* within it */
	size_t			 pos;		/* next code point of type */
	int			 sent;		/* a fake event was sent */
	struct xtest_result	 res;
	int			 nbuttons;	/* the server's pointer */
	size_t			 group;		/* first action not synced */
	unsigned long		 serials[XTEST_SYNC_EVERY]; /* their starts */

	struct keymap		*km;		/* the display's */
	int			 lent;		/* a spare was used */
	int			 blocking;	/* no loop: restore at the end */
	int			 numlock_toggled; /* by the held chord */

	/* Keycodes pressed by a hold, released on resume or free. */
	KeyCode			 held[XTEST_HELD_MAX];
	int			 nheld;
};

/* Xlib's error handler is per process: record, never exit. */
static int		 xtest_xerr_code;
static unsigned long	 xtest_xerr_serial;

static int
xtest_xerror(Display *dpy, XErrorEvent *e)
{
	if (xtest_xerr_code == 0) {
		xtest_xerr_code = e->error_code;
		xtest_xerr_serial = e->serial;
	}
	return 0;
}

static void xtest_fail(struct xtest_exec *, int, const char *, ...)
    __attribute__((format(printf, 3, 4)));

static void
xtest_fail(struct xtest_exec *ex, int code, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	ex->res.code = code;
	ex->res.failed = (int)ex->i;
	ex->res.uncertain = ex->sent;
	n = snprintf(ex->res.msg, sizeof(ex->res.msg), "action %zu: ", ex->i);
	if (n < 0 || (size_t)n >= sizeof(ex->res.msg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(ex->res.msg + n, sizeof(ex->res.msg) - n, fmt, ap);
	va_end(ap);
}

/* ---- keymap -------------------------------------------------------------- */

/*
 * Keycode and modifier needs of sym (keymap.c).  Returns 0, ERR_*, or 1
 * when every spare is too recently used: *busy_ms says how long to wait.
 */
static int
xtest_keycode(struct xtest_exec *ex, unsigned long sym, struct keymap_key *k,
    uint64_t *busy_ms)
{
	int	 r;

	if ((r = keymap_find(ex->km, sym, k, busy_ms)) == 0 && k->spare)
		ex->lent = 1;
	return r;
}

/* ---- primitive events ---------------------------------------------------- */

static void
xtest_key(struct xtest_exec *ex, KeyCode kc, int down)
{
	XTestFakeKeyEvent(ex->dpy, kc, down ? True : False, CurrentTime);
	keymap_used(ex->km, kc);
	ex->sent = 1;
}

/* Is NumLock locked now?  A round trip: only for keypad keys. */
static int
xtest_numlock_on(struct xtest_exec *ex)
{
	Window	 rw, cw;
	int	 x, y, wx, wy;
	unsigned mask = 0;

	XQueryPointer(ex->dpy, RootWindow(ex->dpy, ex->screen), &rw, &cw,
	    &x, &y, &wx, &wy, &mask);
	return (mask & keymap_numlock_mask(ex->km)) != 0;
}

/*
 * Before pressing k: lock or unlock NumLock as its keypad level needs.
 * Returns 1 when it was toggled (toggle again after the key).
 */
static int
xtest_numlock_for(struct xtest_exec *ex, const struct keymap_key *k)
{
	KeyCode	 nl = keymap_numlock_kc(ex->km);
	int	 on;

	if (k->numlock == KEYMAP_ANY || nl == 0 ||
	    keymap_numlock_mask(ex->km) == 0)
		return 0;
	on = xtest_numlock_on(ex);
	if ((k->numlock == KEYMAP_ON) == on)
		return 0;
	xtest_key(ex, nl, 1);
	xtest_key(ex, nl, 0);
	return 1;
}

static void
xtest_numlock_toggle(struct xtest_exec *ex)
{
	xtest_key(ex, keymap_numlock_kc(ex->km), 1);
	xtest_key(ex, keymap_numlock_kc(ex->km), 0);
}

/* A button press may move the focus (click to focus): keys wait for it. */
static void
xtest_button(struct xtest_exec *ex, int button, int down)
{
	XTestFakeButtonEvent(ex->dpy, (unsigned)button, down ? True : False,
	    CurrentTime);
	if (button < 4 || button > 7)
		keymap_pointer_acted(ex->km);
	ex->sent = 1;
}

/* So may entering a window (focus follows the mouse). */
static void
xtest_motion(struct xtest_exec *ex, int x, int y)
{
	XTestFakeMotionEvent(ex->dpy, ex->screen, x, y, CurrentTime);
	keymap_pointer_acted(ex->km);
	ex->sent = 1;
}

/*
 * Press the keys of one chord (keysyms up to a 0 separator) in order,
 * adding Shift when a key sits on the shift level and the chord has no
 * Shift of its own, and setting NumLock as a keypad key needs (set back
 * on release).  Pressed keycodes are appended to ex->held.
 */
static int
xtest_chord_press(struct xtest_exec *ex, const unsigned long *syms,
    size_t n)
{
	struct keymap_key k;
	KeyCode	 shift_kc;
	uint64_t busy;
	int	 r, need_shift = 0, has_shift = 0;
	size_t	 i;

	for (i = 0; i < n; i++)
		if (syms[i] == XK_Shift_L || syms[i] == XK_Shift_R)
			has_shift = 1;
	for (i = 0; i < n; i++) {
		if ((r = xtest_keycode(ex, syms[i], &k, &busy)) != 0) {
			xtest_fail(ex, ERR_KEY_UNKNOWN, "no keycode is free "
			    "for keysym 0x%lx", syms[i]);
			return ERR_KEY_UNKNOWN;
		}
		if (k.shift == KEYMAP_ON && !has_shift && !need_shift) {
			need_shift = 1;
			shift_kc = keymap_shift_kc(ex->km);
			if (shift_kc != 0 && ex->nheld < XTEST_HELD_MAX) {
				xtest_key(ex, shift_kc, 1);
				ex->held[ex->nheld++] = shift_kc;
			}
		}
		if (!ex->numlock_toggled)
			ex->numlock_toggled = xtest_numlock_for(ex, &k);
		if (ex->nheld < XTEST_HELD_MAX) {
			xtest_key(ex, k.kc, 1);
			ex->held[ex->nheld++] = k.kc;
		}
	}
	return 0;
}

static void
xtest_release_held(struct xtest_exec *ex)
{
	while (ex->nheld > 0)
		xtest_key(ex, ex->held[--ex->nheld], 0);
	if (ex->numlock_toggled) {
		xtest_numlock_toggle(ex);
		ex->numlock_toggled = 0;
	}
}

static int
xtest_mods_press(struct xtest_exec *ex, const struct action *a)
{
	if (a->nmods == 0)
		return 0;
	return xtest_chord_press(ex, a->mods, (size_t)a->nmods);
}

/* ---- actions ------------------------------------------------------------- */

static int
xtest_do_click(struct xtest_exec *ex, const struct action *a)
{
	int	 k, r;

	if (a->has_xy)
		xtest_motion(ex, a->x, a->y);
	if ((r = xtest_mods_press(ex, a)) != 0)
		return r;
	for (k = 0; k < a->count; k++) {
		xtest_button(ex, a->button, 1);
		xtest_button(ex, a->button, 0);
	}
	xtest_release_held(ex);
	return 0;
}

static void
xtest_drag_segment(struct xtest_exec *ex, int x0, int y0, int x1, int y1)
{
	int	 dx = x1 - x0, dy = y1 - y0, adx, ady, steps, s;

	adx = dx < 0 ? -dx : dx;
	ady = dy < 0 ? -dy : dy;
	steps = (adx > ady ? adx : ady) / XTEST_DRAG_STEP_PX;
	if (steps > XTEST_DRAG_STEPS_MAX)
		steps = XTEST_DRAG_STEPS_MAX;
	if (steps < 1)
		steps = 1;
	for (s = 1; s <= steps; s++)
		xtest_motion(ex, x0 + dx * s / steps, y0 + dy * s / steps);
}

static int
xtest_do_drag(struct xtest_exec *ex, const struct action *a)
{
	Window	 rw, cw;
	int	 x, y, wx, wy, r;
	unsigned mask;
	size_t	 k;

	if (a->from_current) {
		if (!XQueryPointer(ex->dpy, RootWindow(ex->dpy, ex->screen),
		    &rw, &cw, &x, &y, &wx, &wy, &mask)) {
			xtest_fail(ex, ERR_X, "the pointer is on another "
			    "screen");
			return ERR_X;
		}
	} else {
		x = a->path[0].x;
		y = a->path[0].y;
		xtest_motion(ex, x, y);
	}
	if ((r = xtest_mods_press(ex, a)) != 0)
		return r;
	xtest_button(ex, a->button, 1);
	for (k = 1; k < a->npath; k++) {
		xtest_drag_segment(ex, x, y, a->path[k].x, a->path[k].y);
		x = a->path[k].x;
		y = a->path[k].y;
	}
	xtest_button(ex, a->button, 0);
	xtest_release_held(ex);
	return 0;
}

static void
xtest_wheel(struct xtest_exec *ex, int clicks, int neg_button,
    int pos_button)
{
	int	 b = clicks < 0 ? neg_button : pos_button, k;

	if (clicks < 0)
		clicks = -clicks;
	for (k = 0; k < clicks; k++) {
		xtest_button(ex, b, 1);
		xtest_button(ex, b, 0);
	}
}

static int
xtest_do_scroll(struct xtest_exec *ex, const struct action *a)
{
	int	 r;

	if (a->has_xy)
		xtest_motion(ex, a->x, a->y);
	if ((r = xtest_mods_press(ex, a)) != 0)
		return r;
	xtest_wheel(ex, a->scroll_y, 4, 5);
	xtest_wheel(ex, a->scroll_x, 6, 7);
	xtest_release_held(ex);
	return 0;
}

/*
 * Chords in sequence: press in order, release in reverse, then the next.
 * ex->pos is the start of the next chord, so a chord whose spare must
 * wait is pressed whole after the wait, and those before it not again.
 */
static int
xtest_do_key(struct xtest_exec *ex, const struct action *a,
    uint64_t *delay_ms)
{
	struct keymap_key k;
	uint64_t busy;
	size_t	 end, i;
	int	 r;

	while (ex->pos < a->nkeys) {
		for (end = ex->pos; end < a->nkeys && a->keys[end] != 0; end++)
			;
		for (i = ex->pos; i < end; i++)
			if (xtest_keycode(ex, a->keys[i], &k, &busy) == 1) {
				XSync(ex->dpy, False);
				*delay_ms = busy;
				return 1;
			}
		if ((r = xtest_chord_press(ex, a->keys + ex->pos,
		    end - ex->pos)) != 0)
			return r;
		xtest_release_held(ex);
		ex->pos = end + 1;
	}
	return 0;
}

static unsigned long
xtest_char_keysym(uint32_t cp)
{
	if (cp == '\n' || cp == '\r')
		return XK_Return;
	if (cp == '\t')
		return XK_Tab;
	if ((cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff))
		return cp;
	return 0x01000000UL | cp;
}

/*
 * The next character must be lent a spare: lend spares to every character
 * of the rest of the text that needs one (as many as may change now, so
 * one pause serves the batch), then let
 * clients read the MappingNotify before the first key that uses them, as
 * xdotool does: a client reading behind the keyboard was seen to
 * translate a keycode lent just before its key event as NoSymbol.
 * Returns 1 (come back after *delay_ms) or an error.
 */
static int
xtest_lend_ahead(struct xtest_exec *ex, const struct action *a,
    uint64_t *delay_ms)
{
	struct keymap_key k;
	unsigned long	 sym;
	uint64_t	 busy;
	size_t		 i;
	int		 r, lent = 0;

	for (i = ex->pos; i < a->ntext; i++) {
		sym = xtest_char_keysym(a->text[i]);
		if (keymap_has(ex->km, sym))
			continue;
		if ((r = xtest_keycode(ex, sym, &k, &busy)) == 1) {
			if (lent)
				break;
			/* Every spare is too recently used: wait. */
			XSync(ex->dpy, False);
			*delay_ms = busy;
			return 1;
		}
		if (r != 0) {
			if (lent)
				break;
			xtest_fail(ex, ERR_KEY_UNKNOWN, "no keycode is free "
			    "to type U+%04X", a->text[i]);
			return ERR_KEY_UNKNOWN;
		}
		lent = 1;
	}
	XSync(ex->dpy, False);
	*delay_ms = KEYMAP_LEND_WAIT_MS;
	return 1;
}

/*
 * Type up to XTEST_TYPE_CHUNK characters.  Returns 0 when the text is
 * done, 1 to come back after *delay_ms, or an error.
 */
static int
xtest_do_type(struct xtest_exec *ex, const struct action *a,
    uint64_t *delay_ms)
{
	struct keymap_key k;
	KeyCode	 shift_kc = keymap_shift_kc(ex->km);
	size_t	 end = ex->pos + XTEST_TYPE_CHUNK;
	uint64_t busy;
	int	 r, nl;

	for (; ex->pos < a->ntext && ex->pos < end; ex->pos++) {
		if (!keymap_has(ex->km, xtest_char_keysym(a->text[ex->pos])) &&
		    (r = xtest_lend_ahead(ex, a, delay_ms)) != 0)
			return r;
		r = xtest_keycode(ex, xtest_char_keysym(a->text[ex->pos]), &k,
		    &busy);
		if (r == 1) {
			/*
			 * Every spare carries a character typed moments ago:
			 * give clients time to read it before one changes.
			 */
			XSync(ex->dpy, False);
			*delay_ms = busy;
			return 1;
		}
		if (r != 0) {
			xtest_fail(ex, ERR_KEY_UNKNOWN, "no keycode is free "
			    "to type U+%04X", a->text[ex->pos]);
			return ERR_KEY_UNKNOWN;
		}
		nl = xtest_numlock_for(ex, &k);
		if (k.shift == KEYMAP_ON && shift_kc != 0)
			xtest_key(ex, shift_kc, 1);
		xtest_key(ex, k.kc, 1);
		xtest_key(ex, k.kc, 0);
		if (k.shift == KEYMAP_ON && shift_kc != 0)
			xtest_key(ex, shift_kc, 0);
		if (nl)
			xtest_numlock_toggle(ex);
	}
	if (ex->pos < a->ntext) {
		*delay_ms = 0;	/* let the loop breathe between chunks */
		return 1;
	}
	return 0;
}

static int
xtest_do_cursor(struct xtest_exec *ex)
{
	Window	 rw, cw;
	int	 x, y, wx, wy;
	unsigned mask;

	if (!XQueryPointer(ex->dpy, RootWindow(ex->dpy, ex->screen), &rw, &cw,
	    &x, &y, &wx, &wy, &mask)) {
		xtest_fail(ex, ERR_X, "the pointer is on another screen");
		return ERR_X;
	}
	ex->res.has_cursor = 1;
	ex->res.cursor_x = x;
	ex->res.cursor_y = y;
	return 0;
}

/* One step of the current action: 0 done, 1 again after *delay_ms, <0. */
static int
xtest_step(struct xtest_exec *ex, uint64_t *delay_ms)
{
	const struct action	*a = &ex->b->v[ex->i];
	int			 r;

	switch (a->kind) {
	case ACTION_MOVE:
		if ((r = xtest_mods_press(ex, a)) != 0)
			return r;
		xtest_motion(ex, a->x, a->y);
		xtest_release_held(ex);
		return 0;
	case ACTION_CLICK:
		return xtest_do_click(ex, a);
	case ACTION_DOWN:
	case ACTION_UP:
		if (a->has_xy)
			xtest_motion(ex, a->x, a->y);
		xtest_button(ex, a->button, a->kind == ACTION_DOWN);
		return 0;
	case ACTION_DRAG:
		return xtest_do_drag(ex, a);
	case ACTION_SCROLL:
		return xtest_do_scroll(ex, a);
	case ACTION_KEY:
		return xtest_do_key(ex, a, delay_ms);
	case ACTION_TYPE:
		return xtest_do_type(ex, a, delay_ms);
	case ACTION_HOLD:
		if (ex->phase == 0) {
			if ((r = xtest_chord_press(ex, a->keys,
			    a->nkeys)) != 0)
				return r;
			ex->phase = 1;
			*delay_ms = (uint64_t)a->duration_ms;
			return 1;
		}
		xtest_release_held(ex);
		return 0;
	case ACTION_WAIT:
		if (ex->phase == 0) {
			ex->phase = 1;
			*delay_ms = (uint64_t)a->duration_ms;
			return 1;
		}
		return 0;
	case ACTION_CURSOR_POSITION:
		return xtest_do_cursor(ex);
	case ACTION_SCREENSHOT:
	case ACTION_ZOOM:
		return 0;	/* markers: the caller observes */
	}
	xtest_fail(ex, ERR_INTERNAL, "unknown action kind");
	return ERR_INTERNAL;
}

/* ---- the executor -------------------------------------------------------- */

static int
xtest_point_ok(int x, int y, int w, int h)
{
	return x >= 0 && y >= 0 && x < w && y < h;
}

static int
xtest_check_bounds(const struct vocab_batch *b, int w, int h,
    struct vocab_error *err)
{
	const struct action	*a;
	size_t			 i, k;
	int			 ok;

	for (i = 0; i < b->n; i++) {
		a = &b->v[i];
		ok = !a->has_xy || xtest_point_ok(a->x, a->y, w, h);
		for (k = 0; ok && k < a->npath; k++)
			if (!(k == 0 && a->from_current))
				ok = xtest_point_ok(a->path[k].x,
				    a->path[k].y, w, h);
		if (ok && a->kind == ACTION_ZOOM)
			ok = a->region[2] <= w && a->region[3] <= h;
		if (!ok) {
			err->code = ERR_COORDINATES;
			err->index = (int)i;
			snprintf(err->msg, sizeof(err->msg), "action %zu: a "
			    "point lies outside the %dx%d screen", i, w, h);
			return ERR_COORDINATES;
		}
	}
	return 0;
}

int
xtest_exec_new(Display *dpy, const struct vocab_batch *b,
    struct xtest_exec **out, struct vocab_error *err)
{
	struct xtest_exec	*ex = NULL;
	unsigned char		 pmap[256];
	int			 ev, er, maj, min, r = ERR_INTERNAL;

	*out = NULL;
	memset(err, 0, sizeof(*err));
	err->index = -1;
	if (!XTestQueryExtension(dpy, &ev, &er, &maj, &min)) {
		r = err->code = ERR_X;
		snprintf(err->msg, sizeof(err->msg), "the X server has no "
		    "XTEST extension");
		goto out;
	}
	if ((r = xtest_check_bounds(b, DisplayWidth(dpy, DefaultScreen(dpy)),
	    DisplayHeight(dpy, DefaultScreen(dpy)), err)) != 0)
		goto out;
	if ((ex = calloc(1, sizeof(*ex))) == NULL) {
		r = err->code = ERR_NOMEM;
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		goto out;
	}
	ex->dpy = dpy;
	ex->screen = DefaultScreen(dpy);
	ex->b = b;
	ex->res.failed = -1;
	if ((ex->km = keymap_get(dpy, &r)) == NULL) {
		err->code = r;
		snprintf(err->msg, sizeof(err->msg), "the keymap could not "
		    "be read");
		goto out;
	}
	ex->nbuttons = XGetPointerMapping(dpy, pmap, sizeof(pmap));
	/* Our fake events must not wait behind another client's grab. */
	XTestGrabControl(dpy, True);
	*out = ex;
	ex = NULL;
	r = 0;
out:
	xtest_exec_free(ex);
	return r;
}

/*
 * Sync the group (actions group..i) and charge an X error to the action
 * whose requests it came from.
 */
static int
xtest_sync(struct xtest_exec *ex)
{
	size_t	 k, n, cur = ex->i;

	XSync(ex->dpy, False);
	if (xtest_xerr_code == 0) {
		ex->group = ex->i;
		return 0;
	}
	n = ex->i - ex->group;
	for (k = 0; k < n && k + 1 < XTEST_SYNC_EVERY; k++)
		if ((long)(xtest_xerr_serial - ex->serials[k + 1]) < 0)
			break;
	if (k < n) {
		/* An earlier action of the group: the ones after it ran. */
		ex->i = ex->group + k;
		ex->res.done = ex->i;
		xtest_fail(ex, ERR_X, "the X server refused a request "
		    "(error %d); the %zu actions after it were sent too",
		    xtest_xerr_code, cur - ex->i);
		ex->res.uncertain = 1;
	} else
		xtest_fail(ex, ERR_X, "the X server refused a request "
		    "(error %d)", xtest_xerr_code);
	xtest_xerr_code = 0;
	return ERR_X;
}

/* Could a's requests draw an X error?  Only a button the server lacks. */
static int
xtest_risky(const struct xtest_exec *ex, const struct action *a)
{
	switch (a->kind) {
	case ACTION_CLICK:
	case ACTION_DOWN:
	case ACTION_UP:
	case ACTION_DRAG:
		return a->button > ex->nbuttons;
	case ACTION_SCROLL:
		return (a->scroll_x != 0 && ex->nbuttons < 7) ||
		    (a->scroll_y != 0 && ex->nbuttons < 5);
	default:
		return 0;
	}
}

/* Does a's first event go to the focus? */
static int
xtest_keyed(const struct action *a)
{
	return a->kind == ACTION_KEY || a->kind == ACTION_TYPE ||
	    a->kind == ACTION_HOLD;
}

static int
xtest_run_actions(struct xtest_exec *ex, uint64_t *delay_ms)
{
	int	 r, risky;

	while (ex->i < ex->b->n) {
		risky = xtest_risky(ex, &ex->b->v[ex->i]);
		r = 0;
		/*
		 * Keys after a click or a move: once the window manager has
		 * moved the focus (keymap.h), or it is clear it will not.
		 */
		if (xtest_keyed(&ex->b->v[ex->i]) && ex->phase == 0 &&
		    ex->pos == 0 && keymap_focus_pending(ex->km)) {
			if (ex->i > ex->group && (r = xtest_sync(ex)) != 0)
				goto stop;
			if ((*delay_ms = keymap_focus_wait(ex->km)) > 0)
				return 1;
		}
		/* The group before a risky action answers for itself. */
		if (risky && ex->i > ex->group && (r = xtest_sync(ex)) != 0)
			goto stop;
		if (ex->i - ex->group < XTEST_SYNC_EVERY)
			ex->serials[ex->i - ex->group] = NextRequest(ex->dpy);
		if ((r = xtest_step(ex, delay_ms)) < 0)
			goto stop;
		if ((r == 1 || risky || ex->i + 1 == ex->b->n ||
		    ex->i + 1 - ex->group >= XTEST_SYNC_EVERY) &&
		    xtest_sync(ex) != 0)
			goto stop;
		if (r == 1)
			return 1;
		ex->res.done++;
		ex->i++;
		ex->phase = 0;
		ex->pos = 0;
		ex->sent = 0;
	}
	return 0;
stop:
	/* Failure was recorded; let go of anything held. */
	xtest_release_held(ex);
	XSync(ex->dpy, False);
	xtest_xerr_code = 0;
	return 0;
}

int
xtest_run(struct xtest_exec *ex, uint64_t *delay_ms)
{
	int	(*old)(Display *, XErrorEvent *);
	int	 ret = XTEST_DONE;

	*delay_ms = 0;
	old = XSetErrorHandler(xtest_xerror);
	xtest_xerr_code = 0;
	if (ex->state == XTEST_ST_ACTIONS) {
		if (xtest_run_actions(ex, delay_ms) == 1)
			ret = XTEST_AGAIN;
		else {
			ex->state = XTEST_ST_DONE;
			/* Lent spares stay until the keyboard is idle. */
			if (ex->lent && !ex->blocking)
				keymap_idle_later(ex->km);
		}
	}
	XSetErrorHandler(old);
	return ret;
}

int
xtest_actions_done(const struct xtest_exec *ex)
{
	return ex->state != XTEST_ST_ACTIONS;
}

const struct xtest_result *
xtest_result(const struct xtest_exec *ex)
{
	return &ex->res;
}

void
xtest_exec_free(struct xtest_exec *ex)
{
	int	(*old)(Display *, XErrorEvent *);

	if (ex == NULL)
		return;
	if (ex->state != XTEST_ST_DONE) {
		old = XSetErrorHandler(xtest_xerror);
		xtest_release_held(ex);
		XSync(ex->dpy, False);
		xtest_xerr_code = 0;
		XSetErrorHandler(old);
		if (ex->lent && !ex->blocking)
			keymap_idle_later(ex->km);
	}
	free(ex);
}

int
xtest_apply_blocking(Display *dpy, const struct vocab_batch *b,
    struct xtest_result *res)
{
	struct xtest_exec	*ex;
	struct vocab_error	 err;
	struct timespec		 ts;
	uint64_t		 delay;
	int			 r;

	memset(res, 0, sizeof(*res));
	res->failed = -1;
	if ((r = xtest_exec_new(dpy, b, &ex, &err)) != 0) {
		res->code = r;
		res->failed = err.index;
		memcpy(res->msg, err.msg, sizeof(res->msg));
		return r;
	}
	ex->blocking = 1;
	for (;;) {
		if (xtest_run(ex, &delay) != XTEST_AGAIN) {
			/* No loop to restore later: once clients caught up. */
			if (!ex->lent || (delay = keymap_settle_left(ex->km)) == 0)
				break;
		}
		ts.tv_sec = (time_t)(delay / 1000);
		ts.tv_nsec = (long)(delay % 1000) * 1000000L;
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
	}
	if (ex->lent)
		keymap_restore(ex->km);
	*res = *xtest_result(ex);
	xtest_exec_free(ex);
	return res->code;
}

void
xtest_exec_abandon(struct xtest_exec *ex)
{
	free(ex);
}

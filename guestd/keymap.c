/* SPDX-License-Identifier: MIT */
/*
 * keymap: keysym to keycode and modifiers, spare keycodes lent to keysyms
 * off the keymap, restored when the keyboard is idle.  See keymap.h for
 * why a spare keeps its meaning as long as it can.
 *
 * Only the first two columns of the core map are used (group 1, without
 * and with Shift): a keysym found only further right gets a spare, which
 * types it with any modifiers.  Keypad keys are the exception to "column
 * 1 is Shift": their type (KEYPAD) reaches column 1 with NumLock and
 * without Shift, and column 0 without NumLock.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <X11/Xlib.h>
#include <X11/Xlibint.h>	/* XESetCloseDisplay */
#include <X11/Xutil.h>
#include <X11/keysym.h>

#include "err.h"
#include "keymap.h"
#include "loop.h"
#include "queue-compat.h"
#include "xmalloc.h"

/*
 * A spare keycode carries a lent keysym in column 0 and, only with
 * KEYMAP_SHIFT_COLUMN, another in column 1 typed with Shift (column 1
 * repeats column 0 while it is free).  Each column has its own age:
 * changing one leaves the other's meaning as it was.
 */
struct keymap_spare {
	unsigned long	 sym[2];	/* lent to; 0 = free */
	uint64_t	 used_ms[2];	/* last found for a key event */
	uint64_t	 ready_ms[2];	/* may change meaning from then */
	int		 pins;		/* held down by viewers */
};

struct keymap {
	Display			*dpy;
	int			 ext;		/* our XAddExtension number */
	int			 min_kc, max_kc, per;
	KeySym			*map;
	unsigned char		 pool[256];	/* a spare (ours or empty) */
	struct keymap_spare	 sp[256];	/* by keycode */
	KeyCode			 shift_kc, shift_r_kc, numlock_kc;
	unsigned		 numlock_mask;
	struct loop_timer	*idle;
	uint64_t		 last_ms;	/* last key event, any key */
	uint64_t		 pointer_ms;	/* a pointer event, focus unseen */
	unsigned		 burst;		/* key events without a pause */
	LIST_ENTRY(keymap)	 entry;
};

/*
 * Lend column 1 (typed with Shift) of a spare already carrying a keysym?
 * Off: a client reading behind the keyboard (the benchmark's recorder,
 * behind a full pipe) was seen translating the second keysym with the
 * first one's meaning, though the server's map was right; one keysym per
 * spare has not been seen to fail.
 */
#define KEYMAP_SHIFT_COLUMN	0

static LIST_HEAD(, keymap) keymap_list = LIST_HEAD_INITIALIZER(keymap_list);

static uint64_t
keymap_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static KeySym *
keymap_row(const struct keymap *km, int kc)
{
	return &km->map[(kc - km->min_kc) * km->per];
}

/* XCloseDisplay: forget dpy's state; the connection may be dead. */
static int
keymap_close_hook(Display *dpy, XExtCodes *codes)
{
	struct keymap	*km;

	(void)codes;
	LIST_FOREACH(km, &keymap_list, entry)
		if (km->dpy == dpy)
			break;
	if (km == NULL)
		return 0;
	LIST_REMOVE(km, entry);
	loop_timer_cancel(km->idle);
	if (km->map != NULL)
		XFree(km->map);
	free(km);
	return 0;
}

/*
 * Does row kc hold nothing but what spare sp carries (nothing at all when
 * it carries nothing)?  The server gives back what we set in its own core
 * layout (XKB may fold or repeat the columns), so only the keysyms
 * themselves are compared.
 */
static int
keymap_row_is(const struct keymap *km, int kc, const struct keymap_spare *sp)
{
	const KeySym	*row = keymap_row(km, kc);
	int		 j, seen = 0;

	for (j = 0; j < km->per; j++) {
		if (row[j] == NoSymbol)
			continue;
		if (row[j] != (KeySym)sp->sym[0] &&
		    row[j] != (KeySym)sp->sym[1])
			return 0;
		seen = 1;
	}
	return sp->sym[0] == 0 || seen;
}

static int
keymap_load(struct keymap *km)
{
	XModifierKeymap	*mm;
	KeySym		*map;
	int		 kc, per, i;

	XDisplayKeycodes(km->dpy, &km->min_kc, &km->max_kc);
	if (km->min_kc < 8 || km->max_kc > 255 || km->min_kc > km->max_kc)
		return ERR_X;
	map = XGetKeyboardMapping(km->dpy, (KeyCode)km->min_kc,
	    km->max_kc - km->min_kc + 1, &per);
	if (map == NULL || per < 1) {
		if (map != NULL)
			XFree(map);
		return ERR_X;
	}
	if (km->map != NULL)
		XFree(km->map);
	km->map = map;
	km->per = per;
	/*
	 * Spares: keycodes with nothing on them, and those still carrying
	 * what we lent them.  One another client changed is no longer ours.
	 */
	memset(km->pool, 0, sizeof(km->pool));
	for (kc = km->min_kc; kc <= km->max_kc; kc++) {
		if (keymap_row_is(km, kc, &km->sp[kc]))
			km->pool[kc] = 1;
		else {
			memset(&km->sp[kc], 0, sizeof(km->sp[kc]));
			km->pool[kc] = keymap_row_is(km, kc, &km->sp[kc]);
		}
	}
	km->shift_kc = 0;
	km->shift_r_kc = 0;
	km->numlock_kc = 0;
	for (i = 0; i < 2; i++)
		for (kc = km->min_kc; kc <= km->max_kc; kc++) {
			if (km->shift_kc == 0 && i < per &&
			    keymap_row(km, kc)[i] == XK_Shift_L)
				km->shift_kc = (KeyCode)kc;
			if (km->shift_r_kc == 0 && i < per &&
			    keymap_row(km, kc)[i] == XK_Shift_R)
				km->shift_r_kc = (KeyCode)kc;
			if (km->numlock_kc == 0 && i < per &&
			    keymap_row(km, kc)[i] == XK_Num_Lock)
				km->numlock_kc = (KeyCode)kc;
		}
	km->numlock_mask = 0;
	if (km->numlock_kc != 0 &&
	    (mm = XGetModifierMapping(km->dpy)) != NULL) {
		for (i = 0; i < 8 * mm->max_keypermod; i++)
			if (mm->modifiermap[i] == km->numlock_kc)
				km->numlock_mask = 1u << (i / mm->max_keypermod);
		XFreeModifiermap(mm);
	}
	return 0;
}

struct keymap *
keymap_get(Display *dpy, int *err)
{
	struct keymap	*km;
	XExtCodes	*codes;

	*err = 0;
	LIST_FOREACH(km, &keymap_list, entry)
		if (km->dpy == dpy)
			break;
	if (km == NULL) {
		if ((codes = XAddExtension(dpy)) == NULL) {
			*err = ERR_NOMEM;
			return NULL;
		}
		km = xcalloc(1, sizeof(*km));
		km->dpy = dpy;
		km->ext = codes->extension;
		XESetCloseDisplay(dpy, codes->extension, keymap_close_hook);
		LIST_INSERT_HEAD(&keymap_list, km, entry);
	}
	if ((*err = keymap_load(km)) != 0)
		return NULL;
	return km;
}

/* sym on the keymap proper, in column col (0 or 1). */
static int
keymap_find_col(struct keymap *km, KeySym sym, int col,
    struct keymap_key *k)
{
	const KeySym	*row;
	KeySym		 c0, c1;
	int		 kc, keypad;

	for (kc = km->min_kc; kc <= km->max_kc; kc++) {
		if (km->pool[kc])
			continue;
		row = keymap_row(km, kc);
		c0 = row[0];
		c1 = km->per > 1 ? row[1] : NoSymbol;
		if (c1 == NoSymbol)
			c1 = c0;
		if ((col == 0 ? c0 : c1) != sym)
			continue;
		keypad = IsKeypadKey(c0) && IsKeypadKey(c1) && c0 != c1;
		k->kc = (KeyCode)kc;
		k->spare = 0;
		if (keypad) {
			/* KEYPAD: NumLock picks column 1, Shift undoes it. */
			k->numlock = col == 1 ? KEYMAP_ON : KEYMAP_OFF;
			k->shift = col == 1 ? KEYMAP_OFF : KEYMAP_ANY;
		} else {
			k->numlock = KEYMAP_ANY;
			k->shift = col == 1 ? KEYMAP_ON :
			    (c1 != c0 ? KEYMAP_OFF : KEYMAP_ANY);
		}
		return 1;
	}
	return 0;
}

/* Write spare kc's row: its two columns, or nothing. */
static void
keymap_write(struct keymap *km, int kc)
{
	struct keymap_spare	*sp = &km->sp[kc];
	KeySym			*row = keymap_row(km, kc);
	int			 j;

	for (j = 0; j < km->per; j++)
		row[j] = NoSymbol;
	if (sp->sym[0] != 0) {
		row[0] = (KeySym)sp->sym[0];
		if (km->per > 1)
			row[1] = (KeySym)(sp->sym[1] != 0 ? sp->sym[1] :
			    sp->sym[0]);
	}
	XChangeKeyboardMapping(km->dpy, kc, km->per, row, 1);
}

static void
keymap_spare_key(const struct keymap *km, int kc, int col,
    struct keymap_key *k)
{
	const struct keymap_spare *sp = &km->sp[kc];

	k->kc = (KeyCode)kc;
	k->spare = 1;
	k->numlock = KEYMAP_ANY;
	if (col == 1)
		k->shift = KEYMAP_ON;
	else
		k->shift = (sp->sym[1] != 0 && sp->sym[1] != sp->sym[0]) ?
		    KEYMAP_OFF : KEYMAP_ANY;
}

/*
 * A column found for a key event: its meaning must hold until the client
 * has read that event.  Clients fall behind a burst of events in
 * proportion to its length (an xterm draws each character), so the wait
 * grows with the burst as well.
 */
static void
keymap_slot_used(struct keymap *km, int kc, int col, uint64_t now)
{
	km->sp[kc].used_ms[col] = now;
	km->sp[kc].ready_ms[col] = now + KEYMAP_SETTLE_MS +
	    (uint64_t)km->burst * KEYMAP_LAG_US_PER_EVENT / 1000;
}

int
keymap_has(struct keymap *km, unsigned long sym)
{
	struct keymap_key	 k;
	int			 kc, col;

	if (keymap_find_col(km, (KeySym)sym, 0, &k) ||
	    keymap_find_col(km, (KeySym)sym, 1, &k))
		return 1;
	for (kc = km->min_kc; kc <= km->max_kc; kc++)
		for (col = 0; col < 2; col++)
			if (km->pool[kc] && km->sp[kc].sym[col] == sym)
				return 1;
	return 0;
}

int
keymap_find(struct keymap *km, unsigned long sym, struct keymap_key *k,
    uint64_t *wait_ms)
{
	struct keymap_spare	*sp;
	uint64_t		 now;
	int			 kc, col, best = 0, bcol = 0, any = 0, free_;

	if (wait_ms != NULL)
		*wait_ms = 0;
	memset(k, 0, sizeof(*k));
	if (sym == 0 || sym == NoSymbol)
		return ERR_KEY_UNKNOWN;
	if (keymap_find_col(km, (KeySym)sym, 0, k) ||
	    keymap_find_col(km, (KeySym)sym, 1, k))
		return 0;
	now = keymap_now_ms();
	for (kc = km->min_kc; kc <= km->max_kc; kc++)
		for (col = 0; col < 2; col++)
			if (km->pool[kc] && km->sp[kc].sym[col] == sym) {
				keymap_spare_key(km, kc, col, k);
				keymap_slot_used(km, kc, col, now);
				return 0;
			}
	/*
	 * A free column (column 0 first), else the one that may change
	 * meaning soonest, of a spare not held down.
	 */
	for (kc = km->max_kc; kc >= km->min_kc; kc--) {
		if (!km->pool[kc])
			continue;
		any = 1;
		sp = &km->sp[kc];
		if (sp->pins > 0)
			continue;
		for (col = 0; col < 2; col++) {
			if (col == 1 && (!KEYMAP_SHIFT_COLUMN ||
			    sp->sym[0] == 0 || km->per < 2))
				break;
			free_ = sp->sym[col] == 0;
			if (best == 0 || (free_ && km->sp[best].sym[bcol] != 0) ||
			    (!free_ && km->sp[best].sym[bcol] != 0 &&
			    sp->ready_ms[col] < km->sp[best].ready_ms[bcol])) {
				best = kc;
				bcol = col;
			}
		}
	}
	if (best == 0)
		return any && wait_ms != NULL ? 1 : ERR_KEY_UNKNOWN;
	sp = &km->sp[best];
	if (wait_ms != NULL && sp->sym[bcol] != 0 &&
	    sp->ready_ms[bcol] > now) {
		/* Events typed with its meaning may still be unread. */
		*wait_ms = sp->ready_ms[bcol] - now;
		return 1;
	}
	sp->sym[bcol] = sym;
	keymap_write(km, best);
	keymap_spare_key(km, best, bcol, k);
	keymap_slot_used(km, best, bcol, now);
	return 0;
}

void
keymap_used(struct keymap *km, KeyCode kc)
{
	uint64_t	 now = keymap_now_ms();

	(void)kc;
	/* A pause as long as the settle time lets clients catch up. */
	if (now - km->last_ms >= KEYMAP_SETTLE_MS)
		km->burst = 0;
	km->burst++;
	km->last_ms = now;
}

void
keymap_pin(struct keymap *km, KeyCode kc, int down)
{
	if (!km->pool[kc])
		return;
	if (down)
		km->sp[kc].pins++;
	else if (km->sp[kc].pins > 0)
		km->sp[kc].pins--;
}

KeyCode
keymap_shift_kc(const struct keymap *km)
{
	return km->shift_kc;
}

KeyCode
keymap_shift_r_kc(const struct keymap *km)
{
	return km->shift_r_kc;
}

KeyCode
keymap_numlock_kc(const struct keymap *km)
{
	return km->numlock_kc;
}

unsigned
keymap_numlock_mask(const struct keymap *km)
{
	return km->numlock_mask;
}

int
keymap_lent(const struct keymap *km)
{
	int	 kc;

	for (kc = km->min_kc; kc <= km->max_kc; kc++)
		if (km->pool[kc] && km->sp[kc].sym[0] != 0)
			return 1;
	return 0;
}

uint64_t
keymap_settle_left(const struct keymap *km)
{
	uint64_t	 now = keymap_now_ms(), left = 0;
	int		 kc, col;

	for (kc = km->min_kc; kc <= km->max_kc; kc++)
		for (col = 0; col < 2; col++)
			if (km->pool[kc] && km->sp[kc].sym[col] != 0 &&
			    km->sp[kc].ready_ms[col] > now + left)
				left = km->sp[kc].ready_ms[col] - now;
	return left;
}

void
keymap_restore(struct keymap *km)
{
	int	 kc, sent = 0;

	for (kc = km->min_kc; kc <= km->max_kc; kc++) {
		if (!km->pool[kc] || km->sp[kc].sym[0] == 0 ||
		    km->sp[kc].pins > 0)
			continue;
		memset(&km->sp[kc], 0, sizeof(km->sp[kc]));
		keymap_write(km, kc);
		sent = 1;
	}
	if (sent)
		XSync(km->dpy, False);
}

static void
keymap_idle_fire(void *arg)
{
	struct keymap	*km = arg;
	uint64_t	 quiet = keymap_now_ms() - km->last_ms, left;

	km->idle = NULL;
	left = keymap_settle_left(km);
	if (quiet < KEYMAP_IDLE_MS || left > 0) {
		if (quiet < KEYMAP_IDLE_MS && KEYMAP_IDLE_MS - quiet > left)
			left = KEYMAP_IDLE_MS - quiet;
		km->idle = loop_timer_add(left, keymap_idle_fire, km);
		return;
	}
	/* Re-read first: only what is still ours is cleared. */
	if (keymap_load(km) != 0)
		return;
	keymap_restore(km);
	if (keymap_lent(km))	/* held down: look again later */
		km->idle = loop_timer_add(KEYMAP_IDLE_MS, keymap_idle_fire,
		    km);
}

void
keymap_idle_later(struct keymap *km)
{
	if (km->idle != NULL || !keymap_lent(km))
		return;
	km->idle = loop_timer_add(KEYMAP_IDLE_MS, keymap_idle_fire, km);
}

/* ---- the focus after pointer events -------------------------------------- */

static int	keymap_xerr;

static int
keymap_xerror(Display *dpy, XErrorEvent *e)
{
	(void)dpy;
	(void)e;
	keymap_xerr = 1;
	return 0;
}

/* The child of the root that holds w (w itself when it is one). */
static Window
keymap_toplevel(Display *dpy, Window root, Window w)
{
	Window		 r, parent, *kids;
	unsigned	 n;
	int		 depth;

	for (depth = 0; depth < 64 && w != None && w != root; depth++) {
		kids = NULL;
		if (!XQueryTree(dpy, w, &r, &parent, &kids, &n))
			return None;
		if (kids != NULL)
			XFree(kids);
		if (parent == root)
			return w;
		w = parent;
	}
	return None;
}

/* Is the focus where keys sent now should go?  See keymap.h. */
static int
keymap_focus_settled(Display *dpy)
{
	XWindowAttributes wa;
	Window		 root = DefaultRootWindow(dpy), rw, child, focus;
	int		 x, y, wx, wy, revert, settled;
	unsigned	 mask;

	if (!XQueryPointer(dpy, root, &rw, &child, &x, &y, &wx, &wy, &mask) ||
	    child == None)
		return 1;
	if (!XGetWindowAttributes(dpy, child, &wa) || wa.override_redirect ||
	    wa.map_state != IsViewable)
		return 1;
	XGetInputFocus(dpy, &focus, &revert);
	if (focus == PointerRoot)
		return 1;
	if (focus == None)
		return 0;
	settled = keymap_toplevel(dpy, root, focus) == child;
	return settled;
}

void
keymap_pointer_acted(struct keymap *km)
{
	km->pointer_ms = keymap_now_ms();
	if (km->pointer_ms == 0)
		km->pointer_ms = 1;
}

int
keymap_focus_pending(const struct keymap *km)
{
	return km->pointer_ms != 0;
}

uint64_t
keymap_focus_wait(struct keymap *km)
{
	int	(*old)(Display *, XErrorEvent *);
	uint64_t now = keymap_now_ms(), left;
	int	 settled;

	if (km->pointer_ms == 0)
		return 0;
	if (now - km->pointer_ms >= KEYMAP_FOCUS_WAIT_MS) {
		km->pointer_ms = 0;
		return 0;
	}
	left = KEYMAP_FOCUS_WAIT_MS - (now - km->pointer_ms);
	/* Windows may go while we look: their errors are ours alone. */
	XSync(km->dpy, False);
	old = XSetErrorHandler(keymap_xerror);
	keymap_xerr = 0;
	settled = keymap_focus_settled(km->dpy);
	XSync(km->dpy, False);
	XSetErrorHandler(old);
	if (settled && !keymap_xerr) {
		km->pointer_ms = 0;
		return 0;
	}
	return left < KEYMAP_FOCUS_POLL_MS ? left : KEYMAP_FOCUS_POLL_MS;
}

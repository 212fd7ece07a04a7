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
#include "log.h"

struct keymap_spare {
	unsigned long	 sym;		/* lent to; 0 = free */
	uint64_t	 used_ms;	/* last key event sent with it */
	int		 pins;		/* held down by viewers */
};

struct keymap {
	Display			*dpy;
	int			 ext;		/* our XAddExtension number */
	int			 min_kc, max_kc, per;
	KeySym			*map;
	unsigned char		 pool[256];	/* a spare (ours or empty) */
	struct keymap_spare	 sp[256];	/* by keycode */
	KeyCode			 shift_kc, numlock_kc;
	unsigned		 numlock_mask;
	struct loop_timer	*idle;
	uint64_t		 last_ms;	/* last key event, any key */
	struct keymap		*next;
};

static struct keymap	*keymap_list;

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
	struct keymap	*km, **pp;

	(void)codes;
	for (pp = &keymap_list; (km = *pp) != NULL; pp = &km->next)
		if (km->dpy == dpy)
			break;
	if (km == NULL)
		return 0;
	*pp = km->next;
	loop_timer_cancel(km->idle);
	if (km->map != NULL)
		XFree(km->map);
	free(km);
	return 0;
}

/* Is row kc exactly what we lent it (sym in columns 0 and 1)? */
static int
keymap_row_is(const struct keymap *km, int kc, unsigned long sym)
{
	const KeySym	*row = keymap_row(km, kc);
	int		 j;

	for (j = 0; j < km->per; j++)
		if (row[j] != ((j < 2 && sym != 0) ? (KeySym)sym : NoSymbol))
			return 0;
	return 1;
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
		if (km->sp[kc].sym != 0 &&
		    keymap_row_is(km, kc, km->sp[kc].sym))
			km->pool[kc] = 1;
		else if (keymap_row_is(km, kc, 0)) {
			km->pool[kc] = 1;
			km->sp[kc].sym = 0;
		} else
			memset(&km->sp[kc], 0, sizeof(km->sp[kc]));
	}
	km->shift_kc = 0;
	km->numlock_kc = 0;
	for (i = 0; i < 2; i++)
		for (kc = km->min_kc; kc <= km->max_kc; kc++) {
			if (km->shift_kc == 0 && i < per &&
			    keymap_row(km, kc)[i] == XK_Shift_L)
				km->shift_kc = (KeyCode)kc;
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
	for (km = keymap_list; km != NULL; km = km->next)
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
		km->next = keymap_list;
		keymap_list = km;
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

static void
keymap_lend(struct keymap *km, int kc, unsigned long sym)
{
	KeySym	*row = keymap_row(km, kc);
	int	 j;

	for (j = 0; j < km->per; j++)
		row[j] = (j < 2 && sym != 0) ? (KeySym)sym : NoSymbol;
	XChangeKeyboardMapping(km->dpy, kc, km->per, row, 1);
	km->sp[kc].sym = sym;
}

int
keymap_find(struct keymap *km, unsigned long sym, struct keymap_key *k,
    uint64_t *wait_ms)
{
	uint64_t	 now, age;
	int		 kc, lru = 0, any = 0;

	*wait_ms = 0;
	memset(k, 0, sizeof(*k));
	if (sym == 0 || sym == NoSymbol)
		return ERR_KEY_UNKNOWN;
	if (keymap_find_col(km, (KeySym)sym, 0, k) ||
	    keymap_find_col(km, (KeySym)sym, 1, k))
		return 0;
	k->spare = 1;
	k->shift = k->numlock = KEYMAP_ANY;
	for (kc = km->min_kc; kc <= km->max_kc; kc++)
		if (km->pool[kc] && km->sp[kc].sym == sym) {
			k->kc = (KeyCode)kc;
			return 0;
		}
	/* The least recently used spare not held down. */
	for (kc = km->min_kc; kc <= km->max_kc; kc++) {
		if (!km->pool[kc])
			continue;
		any = 1;
		if (km->sp[kc].pins > 0)
			continue;
		if (lru == 0 || km->sp[kc].sym == 0 ||
		    (km->sp[lru].sym != 0 &&
		    km->sp[kc].used_ms < km->sp[lru].used_ms))
			lru = kc;
		if (km->sp[lru].sym == 0)
			break;
	}
	if (lru == 0)
		return any ? 1 : ERR_KEY_UNKNOWN;
	if (km->sp[lru].sym != 0) {
		/* Events typed with its old meaning may still be unread. */
		now = keymap_now_ms();
		age = now - km->sp[lru].used_ms;
		if (age < KEYMAP_SETTLE_MS) {
			*wait_ms = KEYMAP_SETTLE_MS - age;
			return 1;
		}
	}
	keymap_lend(km, lru, sym);
	k->kc = (KeyCode)lru;
	return 0;
}

void
keymap_used(struct keymap *km, KeyCode kc)
{
	uint64_t	 now = keymap_now_ms();

	km->last_ms = now;
	if (km->pool[kc])
		km->sp[kc].used_ms = now;
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
		if (km->pool[kc] && km->sp[kc].sym != 0)
			return 1;
	return 0;
}

uint64_t
keymap_settle_left(const struct keymap *km)
{
	uint64_t	 now = keymap_now_ms(), left = 0, age;
	int		 kc;

	for (kc = km->min_kc; kc <= km->max_kc; kc++) {
		if (!km->pool[kc] || km->sp[kc].sym == 0)
			continue;
		age = now - km->sp[kc].used_ms;
		if (age < KEYMAP_SETTLE_MS && KEYMAP_SETTLE_MS - age > left)
			left = KEYMAP_SETTLE_MS - age;
	}
	return left;
}

void
keymap_restore(struct keymap *km)
{
	int	 kc, sent = 0;

	for (kc = km->min_kc; kc <= km->max_kc; kc++) {
		if (!km->pool[kc] || km->sp[kc].sym == 0 ||
		    km->sp[kc].pins > 0)
			continue;
		keymap_lend(km, kc, 0);
		sent = 1;
	}
	if (sent)
		XSync(km->dpy, False);
}

static void
keymap_idle_fire(void *arg)
{
	struct keymap	*km = arg;
	uint64_t	 quiet = keymap_now_ms() - km->last_ms;

	km->idle = NULL;
	if (quiet < KEYMAP_IDLE_MS) {
		km->idle = loop_timer_add(KEYMAP_IDLE_MS - quiet,
		    keymap_idle_fire, km);
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

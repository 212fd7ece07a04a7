/* SPDX-License-Identifier: MIT */
/*
 * keymap: which keycode, with which Shift and NumLock, yields a keysym on
 * a display, and spare keycodes lent to keysyms the keymap lacks.  Shared
 * by the action executor (xtest.c) and viewers' key events (rfb.c).
 *
 * X clients translate keycodes with their own copy of the keymap, which
 * they fetch again when a MappingNotify arrives, from the server's map as
 * it is THEN.  A keycode that changes meaning again before a client has
 * read the events typed with it makes that client see the new meaning (or
 * nothing).  So a lent keysym stays as long as it can: a spare is reused
 * only when every spare is taken, the one free soonest first, and not
 * before
 * KEYMAP_SETTLE_MS after its last key event plus KEYMAP_LAG_US_PER_EVENT
 * for each key event of the burst it was typed in (a client drawing each
 * character falls behind a long burst); the batch waits until then.
 * Spares are cleared once the keyboard has been idle for KEYMAP_IDLE_MS
 * (a loop timer, keymap_idle_later).
 *
 * One state per X connection, hung on the Display itself: it goes when the
 * Display is closed (XCloseDisplay calls our hook), with no X call then.
 */
#ifndef GUESTD_KEYMAP_H
#define GUESTD_KEYMAP_H

#include <stdint.h>
#include <X11/Xlib.h>

#define KEYMAP_SETTLE_MS	300	/* before a used column changes */
#define KEYMAP_LAG_US_PER_EVENT	500	/* more per event of its burst */
#define KEYMAP_IDLE_MS		10000	/* quiet keyboard before restoring */
#define KEYMAP_LEND_WAIT_MS	20	/* after lending, before typing */
#define KEYMAP_FOCUS_WAIT_MS	300	/* after a pointer action, at most */
#define KEYMAP_FOCUS_POLL_MS	2	/* between looks at the focus */

/* What a key needs of a modifier. */
#define KEYMAP_ANY	0
#define KEYMAP_ON	1
#define KEYMAP_OFF	2

struct keymap_key {
	KeyCode		 kc;
	int		 shift;		/* KEYMAP_* */
	int		 numlock;	/* KEYMAP_* */
	int		 spare;		/* kc is a lent spare */
};

struct keymap;

/*
 * The state of dpy, created on first use, with the server's keymap read
 * again (another client may have changed it).  NULL with *err set when the
 * keymap cannot be read.
 */
struct keymap	*keymap_get(Display *dpy, int *err);

/*
 * Find sym, lending it a spare if the keymap lacks it.  Returns 0 with *k,
 * ERR_KEY_UNKNOWN when there is no spare at all, or 1 when every spare
 * carried a keysym within the settle time: call again after *wait_ms.
 * With wait_ms NULL (a viewer's key, which cannot wait) the column free
 * soonest is taken at once.
 */
int	 keymap_find(struct keymap *, unsigned long sym, struct keymap_key *k,
	    uint64_t *wait_ms);

/* Is sym on the keymap or already lent (no lending needed)? */
int	 keymap_has(struct keymap *, unsigned long sym);

/* A key event was sent with kc: a spare stays as it is a while longer. */
void	 keymap_used(struct keymap *, KeyCode kc);
/* A spare held down by a viewer is never lent to another keysym. */
void	 keymap_pin(struct keymap *, KeyCode kc, int down);

/* Keycodes of Shift_L, Shift_R, Num_Lock (0 when absent); NumLock's mask. */
KeyCode	 keymap_shift_kc(const struct keymap *);
KeyCode	 keymap_shift_r_kc(const struct keymap *);
KeyCode	 keymap_numlock_kc(const struct keymap *);
unsigned keymap_numlock_mask(const struct keymap *);

/* Whether any spare carries a keysym now. */
int	 keymap_lent(const struct keymap *);
/* Ms until the last lent spare may change meaning (0 when none). */
uint64_t keymap_settle_left(const struct keymap *);
/* Clear every unpinned spare now. */
void	 keymap_restore(struct keymap *);
/* On guestd's loop: restore once the keyboard has been idle a while. */
void	 keymap_idle_later(struct keymap *);

/*
 * Keys follow the focus, and the window manager moves the focus on its
 * own time: a click (or, focus following the mouse, a move) into another
 * window and then a key sent at once would reach the window that had the
 * focus before.  keymap_pointer_acted() notes a pointer event sent;
 * before the next key, keymap_focus_wait() answers 0 once the focus is in
 * the top-level window under the pointer (or cannot go there: the root,
 * an override-redirect window, PointerRoot focus), or KEYMAP_FOCUS_WAIT_MS
 * after the pointer event; else how long to wait before looking again.
 * It makes round trips; X errors of its own are kept from the caller's
 * handler.
 */
void	 keymap_pointer_acted(struct keymap *);
int	 keymap_focus_pending(const struct keymap *);
uint64_t keymap_focus_wait(struct keymap *);

#endif

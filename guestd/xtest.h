/* SPDX-License-Identifier: MIT */
/*
 * xtest: apply a parsed action batch (vocab.h) to an X display with
 * XTest, in order (doc/DESIGN.md G-9, G-10).  The executor is a state machine
 * so waits and held keys never block guestd's loop: xtest_run() works until
 * the batch needs time to pass, then returns XTEST_AGAIN with the delay
 * after which the caller (a loop timer) must call it again.
 *
 * Before anything is sent every coordinate is checked against the screen;
 * one off-screen point refuses the whole batch (ERR_COORDINATES).  Text off
 * the keymap is typed by mapping a spare keycode to the character for the
 * moment; the keymap is restored before the batch reports done.  An X error
 * after a fake event was sent makes the failing action "uncertain": it may
 * have had an effect, and nothing is ever replayed.
 *
 * The Display belongs to the caller (display.c); xtest only borrows it,
 * installs its own X error handler while it runs, and puts the previous
 * one back before returning.
 */
#ifndef GUESTD_XTEST_H
#define GUESTD_XTEST_H

#include <stddef.h>
#include <stdint.h>
#include <X11/Xlib.h>

#include "vocab.h"

#define XTEST_DONE	0	/* the batch finished; see xtest_result() */
#define XTEST_AGAIN	1	/* call xtest_run() again after *delay_ms */

struct xtest_result {
	size_t		 done;		/* actions completed, in order */
	int		 failed;	/* index of the failed action, -1 */
	int		 code;		/* 0 or an err.h code */
	int		 uncertain;	/* the failed action may have acted */
	char		 msg[VOCAB_ERRLEN];
	/* The last cursor_position action, in real pixels. */
	int		 has_cursor;
	int		 cursor_x, cursor_y;
};

struct xtest_exec;

/*
 * Prepare to apply b (borrowed: it must outlive the executor) to dpy.
 * Checks XTest and the screen bounds; on failure returns a code with err
 * filled (index of the off-screen action) and nothing was sent.
 */
int	 xtest_exec_new(Display *dpy, const struct vocab_batch *b,
	    struct xtest_exec **out, struct vocab_error *err);

/* Returns XTEST_DONE or XTEST_AGAIN (then *delay_ms is set). */
int	 xtest_run(struct xtest_exec *, uint64_t *delay_ms);

const struct xtest_result *xtest_result(const struct xtest_exec *);
/*
 * 1 once every action has been applied and the result is final; what may
 * remain is the delayed keymap restore, which changes nothing a client
 * could see of this batch.
 */
int	 xtest_actions_done(const struct xtest_exec *);

/*
 * Stop early if still running: held keys are released and the keymap is
 * restored at once.  NULL is a no-op.
 */
void	 xtest_exec_free(struct xtest_exec *);
/* The display is already gone: free without any X call. */
void	 xtest_exec_abandon(struct xtest_exec *);

/*
 * Run a whole batch, sleeping through its waits.  For tools and tests
 * only, never on guestd's loop.  Returns the result's code.
 */
int	 xtest_apply_blocking(Display *dpy, const struct vocab_batch *b,
	    struct xtest_result *res);

#endif

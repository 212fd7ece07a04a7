/* SPDX-License-Identifier: MIT */
/*
 * The drop-in control server of today's images (doc/DESIGN.md G-33): a third
 * lws vhost in guestd's one context and loop, off unless --compat ADDR:PORT
 * is given (the conventional port is 7070; only the given address is
 * bound).  It is not a control op: nothing is added to the op table.
 *
 *   POST /v1/desktop
 *   Authorization: Bearer <guestd's control secret>  (constant-time compare)
 *   {steps: [{argv: [("env", "DISPLAY=:N", …,) ...xdotool argv...]} |
 *    {waitMs}], display?: 1 | ":1" (":1"), observe?: bool (true),
 *    settleMs?: ms}
 *   -> 200 {completed, total, frame, observation?: {image (base64 PNG),
 *          mimeType: "image/png", width, height, cursor{x,y},
 *          activeWindow?{id (decimal string), title?},
 *          damage?{x,y,width,height}}}
 *
 * The shapes are those upstream's supervisor sends (its env prefixes,
 * launches and clipboard paste included, see deskserver_steps_parse).
 * Limits: body <= 256 KiB (read under a hard cap), <= 32 argv entries of
 * <= 16 KiB each, waits, sleeps and settle clamped to 5000 ms, at most
 * VOCAB_MAX actions in all.  The argv steps are translated into one
 * action batch before anything is applied, so a bad step (unknown form,
 * program or key) is a 400 and nothing happens; points off the screen
 * land on its edge, as xdotool's do.  One request runs per display; the
 * next ones wait in arrival order (DESKSERVER_QUEUE_MAX, DESKSERVER_QUEUE_MS in
 * deskserver.c), then 409 BUSY.
 * Errors: {"error": "message", "code": "CODE"} (upstream's callers print
 * String(payload.error)) with the stable codes of err.h; 401 without or
 * with a wrong token, 400 bad JSON / too large / bad argv / another
 * display's DISPLAY, 404 unknown path or display, 405 other methods, 409
 * busy too long, 500 a program that failed to start.
 */
#ifndef GUESTD_DESKSERVER_H
#define GUESTD_DESKSERVER_H

#include <stddef.h>
#include <jansson.h>

#include "vocab.h"

#define DESKSERVER_BODY_MAX		(256 * 1024)
#define DESKSERVER_ARGV_MAX		32
#define DESKSERVER_ARG_MAX		(16 * 1024)
#define DESKSERVER_WAIT_MAX_MS	5000
#define DESKSERVER_REPEAT_MAX	100

/* What an action of a plan is, besides an xtest.c action. */
#define DESKSERVER_KEY_NONE		0
#define DESKSERVER_KEY_DOWN		1	/* press the chord, keep it down */
#define DESKSERVER_KEY_UP		2	/* release the chord */
#define DESKSERVER_LAUNCH		3	/* start a program (a wait 0 in b) */

/* A program to start: argv (NULL-ended), and "NAME=VALUE" or NULL. */
struct deskserver_launch {
	char		**argv;
	char		 *profile;
};

/*
 * Parsed steps: one batch (NULL when there is nothing to do) and, per
 * action, its DESKSERVER_KEY_* role (keydown/keyup are ACTION_HOLD entries
 * the executor applies itself) and the step it came from.
 */
struct deskserver_plan {
	struct vocab_batch	*b;
	unsigned char		*keyev;
	size_t			*step;
	struct deskserver_launch	**launch;
	size_t			 nsteps;
};

struct lws_context;

/*
 * Translate one xdotool argv (optionally starting with "xdotool"; commands
 * may be chained) into a plan.  Forms: key/keydown/keyup [--clearmodifiers]
 * [--delay N] COMBO..., type [--delay N] [--clearmodifiers] [--] TEXT...,
 * mousemove [--sync] [--clearmodifiers] X Y, click [--repeat N] [--delay
 * N] B, mousedown B, mouseup B, sleep S.  Buttons 4..7 are the wheel.
 * Delays are accepted and not needed (events are sent in-process, in
 * order).  0, or a code with err filled (err->index: the argv entry).
 */
int	 deskserver_xdotool_parse(const char *const *argv, size_t n,
	    struct deskserver_plan **out, struct vocab_error *err);
/*
 * The steps array of a request for display slot (-1: any); err->index is
 * the step.  An argv may start with env and DISPLAY=, XAUTHORITY= and
 * RAKAZO_BROWSER_PROFILE= assignments as upstream's supervisor sends it
 * (DISPLAY must be :slot, else DISPLAY_MISMATCH); xdg-open URL,
 * rakazo-browser [URL] and xterm become DESKSERVER_LAUNCH entries; upstream's
 * clipboard paste pipeline (sh -c "printf %s B64 | base64 -d | xclip …
 * ctrl+v") becomes a type action of its text.
 */
int	 deskserver_steps_parse(json_t *steps, int slot,
	    struct deskserver_plan **out, struct vocab_error *err);
void	 deskserver_plan_free(struct deskserver_plan *);

/* Set at start-up (the token compared against).  */
void	 deskserver_set_secret(const char *secret);
/* Listen on host:port (port 0 picks one) in ctx.  0 or ERR_*. */
int	 deskserver_start(struct lws_context *ctx, const char *host, int port);
/* The bound port, 0 when off. */
int	 deskserver_port(void);
/*
 * The input of display :slot was released (by a request or display.act):
 * start the oldest request waiting for it, if any.
 */
void	 deskserver_kick(int slot);

#endif

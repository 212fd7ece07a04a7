/* SPDX-License-Identifier: MIT */
/*
 * display.act (doc/DESIGN.md G-9 ... G-12): apply an ordered batch of actions
 * to a bot's desktop through xtest.c, on the loop.
 *
 *  display.act {bot, actions:[...], scale?, fence?}   (mutating)
 *    -> {completed, total, frame, cursor?{x,y}, screenshot_requested,
 *        zoom?[{action, region, width, height, mimeType, image}]}
 *    on failure an error whose object also carries done (actions
 *    completed), failed (index) and uncertain (the failed action may have
 *    acted); nothing is ever replayed.
 *
 * Waits and held keys do not block the loop: xtest_run() says how long to
 * wait and a loop timer calls it again.  One batch runs per desktop at a
 * time, because concurrent batches would fight over the spare keycodes used
 * for typing.  The reply goes out as soon as every action has been applied;
 * the keymap restore that typing off the keymap needs happens a moment
 * later, and a batch that arrives meanwhile waits for it (one may wait;
 * more get BUSY).
 *
 * Repeat guard (G-12): when a batch with input is the same as the
 * previous one for that bot and the screen has changed neither while that
 * one ran nor since it ended, it is allowed once; the next identical repeat on an unchanged
 * screen is refused with UNCHANGED_AFTER_REPEAT, steering the agent to the
 * page-text tools instead of clicking blindly.  Batches of navigation keys
 * only (vocab_navigation_only) never count: walking a list presses Down
 * again and again, and a step may show nothing.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "base64.h"
#include "vocab.h"
#include "capture.h"
#include "deskserver.h"
#include "control.h"
#include "display.h"
#include "err.h"
#include "xtest.h"
#include "json.h"
#include "log.h"
#include "loop.h"
#include "observe.h"
#include "path.h"
#include "queue-compat.h"
#include "xmalloc.h"

struct act_job;

/* What we remember per bot between batches. */
struct act_state {
	char			 bot[65];
	uint64_t		 gen;		/* display generation */
	uint64_t		 sig;		/* hash of the last batch */
	int			 has_sig;
	uint64_t		 frame_end;	/* frame when it ended */
	int			 changed;	/* the screen changed during it */
	int			 repeats;	/* identical, screen unchanged */
	struct act_job		*job;		/* the batch running now */
	struct act_job		*waiting;	/* one waiting for it */
	LIST_ENTRY(act_state)	 entry;
};

struct act_job {
	struct control_stream	 s;	/* first: abort() gets this */
	struct act_state	*st;
	uint64_t		 gen;
	uint64_t		 sig;
	uint64_t		 frame0;	/* frame when it arrived */
	int			 repeat_unchanged;
	int			 replied;
	struct vocab_batch	*b;
	struct xtest_exec	*ex;
	struct loop_timer	*timer;
};

static void	act_start(struct act_job *);

static LIST_HEAD(, act_state) act_states = LIST_HEAD_INITIALIZER(act_states);

static struct act_state *
act_state_get(const char *bot)
{
	struct act_state	*st;

	LIST_FOREACH(st, &act_states, entry) {
		if (strcmp(st->bot, bot) == 0)
			return st;
	}
	st = xcalloc(1, sizeof *st);
	snprintf(st->bot, sizeof st->bot, "%s", bot);
	LIST_INSERT_HEAD(&act_states, st, entry);
	return st;
}

/* FNV-1a of the batch in a canonical form (sorted keys) plus its scale. */
static uint64_t
act_signature(json_t *args)
{
	json_t		*pick;
	char		*s;
	uint64_t	 h = 1469598103934665603ULL;
	size_t		 i;

	pick = json_pack("{s:O?,s:O?}", "actions",
	    json_object_get(args, "actions"), "scale",
	    json_object_get(args, "scale"));
	s = json_dumps(pick, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(pick);
	if (s == NULL)
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	free(s);
	return h;
}

/* The job's display, if it is still the one the batch started on. */
static struct display *
act_display(struct act_job *j)
{
	struct display	*d;

	d = display_find(j->st->bot);
	if (d == NULL || display_generation(d) != j->gen ||
	    display_capture(d) == NULL)
		return NULL;
	return d;
}

static void
act_job_free(struct act_job *j)
{
	struct act_state	*st = j->st;
	struct act_job		*next = NULL;
	struct display		*d;
	int			 kick = -1;

	loop_timer_cancel(j->timer);
	if ((d = act_display(j)) != NULL) {
		xtest_exec_free(j->ex);
		display_input_release(d, j);
		/* A /v1/desktop request may be waiting for the input. */
		kick = display_slot(d);
	} else
		xtest_exec_abandon(j->ex);
	vocab_free(j->b);
	if (st->job == j) {
		st->job = NULL;
		next = st->waiting;
		st->waiting = NULL;
	} else if (st->waiting == j)
		st->waiting = NULL;
	control_stream_detach(&j->s);
	free(j);
	if (next != NULL)
		act_start(next);
	else if (kick >= 0)
		deskserver_kick(kick);
}

static int
act_has_screenshot(const struct vocab_batch *b)
{
	size_t	i;

	for (i = 0; i < b->n; i++) {
		if (b->v[i].kind == ACTION_SCREENSHOT ||
		    b->v[i].kind == ACTION_ZOOM)
			return 1;
	}
	return 0;
}

/*
 * zoom (Anthropic computer_20251124): the region of the screen as it is
 * once every action has been applied, cropped at full resolution (the
 * region was given in the batch's scaled coordinates and is in real
 * pixels here), one base64 PNG per zoom action in "zoom": [{action,
 * region{x,y,width,height}, width, height, mimeType, image}].
 */
static int
act_zoom(const struct vocab_batch *b, struct capture *cap, json_t *out)
{
	const struct action	*a;
	const uint8_t		*px;
	uint8_t			*png;
	size_t			 i, stride, pnglen;
	char			*b64;
	json_t			*arr = NULL, *o;
	int			 w, h, rw, rh, r;

	for (i = 0; i < b->n; i++) {
		a = &b->v[i];
		if (a->kind != ACTION_ZOOM)
			continue;
		px = capture_pixels(cap, &w, &h, &stride);
		/* xtest.c checked the region against this screen. */
		if (a->region[2] > w || a->region[3] > h)
			return ERR_COORDINATES;
		rw = a->region[2] - a->region[0];
		rh = a->region[3] - a->region[1];
		png = NULL;
		if ((r = observe_encode_png(px + (size_t)a->region[1] * stride +
		    (size_t)a->region[0] * 4, rw, rh, stride, 1, &png,
		    &pnglen)) != 0)
			return r;
		b64 = base64_encode_new(png, pnglen);
		free(png);
		o = json_pack("{s:I,s:{s:i,s:i,s:i,s:i},s:i,s:i,s:s,s:s}",
		    "action", (json_int_t)i, "region", "x", a->region[0], "y",
		    a->region[1], "width", rw, "height", rh, "width", rw,
		    "height", rh, "mimeType", "image/png", "image", b64);
		free(b64);
		if (o == NULL)
			return ERR_NOMEM;
		if (arr == NULL)
			arr = json_array();
		json_array_append_new(arr, o);
	}
	if (arr != NULL)
		json_object_set_new(out, "zoom", arr);
	return 0;
}

/* Every action is applied: answer now (the keymap restore may follow). */
static void
act_reply(struct act_job *j, struct display *d)
{
	const struct xtest_result	*res = xtest_result(j->ex);
	struct control_conn		*c = j->s.conn;
	struct capture			*cap = display_capture(d);
	struct act_state		*st = j->st;
	json_t				*out;

	j->replied = 1;
	capture_sync(cap);
	st->gen = j->gen;
	st->sig = j->sig;
	st->has_sig = vocab_has_input(j->b);
	st->frame_end = capture_frame(cap);
	st->changed = st->frame_end != j->frame0;
	st->repeats = j->repeat_unchanged ? st->repeats + 1 : 0;
	display_touch(d);
	log_info("display.act", "bot=%s actions=%zu done=%zu code=%s",
	    st->bot, j->b->n, res->done,
	    res->code != 0 ? err_name(res->code) : "OK");
	if (res->code != 0) {
		control_reply_error_ex(c, j->s.id, res->code, res->msg,
		    json_pack("{s:I,s:i,s:b}", "done", (json_int_t)res->done,
		    "failed", res->failed, "uncertain", res->uncertain));
	} else {
		out = json_pack("{s:I,s:I,s:I,s:b}",
		    "completed", (json_int_t)res->done,
		    "total", (json_int_t)j->b->n,
		    "frame", (json_int_t)st->frame_end,
		    "screenshot_requested", act_has_screenshot(j->b));
		if (out != NULL && res->has_cursor)
			json_object_set_new(out, "cursor", json_pack("{s:i,s:i}",
			    "x", res->cursor_x, "y", res->cursor_y));
		if (out != NULL && act_zoom(j->b, cap, out) != 0) {
			json_decref(out);
			control_reply_error(c, j->s.id, ERR_NOMEM,
			    "(the zoomed region could not be encoded)");
			return;
		}
		control_reply(c, j->s.id, out);
	}
}

static void	act_step(void *);

static void
act_step(void *arg)
{
	struct act_job	*j = arg;
	struct display	*d;
	uint64_t	 delay = 0;

	j->timer = NULL;
	if ((d = act_display(j)) == NULL) {
		if (j->replied) {
			act_job_free(j);
			return;
		}
		/* Torn down under us: what was sent may have acted. */
		control_reply_error_ex(j->s.conn, j->s.id, ERR_NO_DISPLAY,
		    "(the desktop closed during the batch)",
		    json_pack("{s:I,s:i,s:b}", "done",
		    (json_int_t)xtest_result(j->ex)->done, "failed",
		    (int)xtest_result(j->ex)->done, "uncertain", 1));
		act_job_free(j);
		return;
	}
	if (xtest_run(j->ex, &delay) == XTEST_AGAIN) {
		if (!j->replied && xtest_actions_done(j->ex))
			act_reply(j, d);
		j->timer = loop_timer_add(delay, act_step, j);
		return;
	}
	if (!j->replied)
		act_reply(j, d);
	act_job_free(j);
}

/* Begin a batch that may have waited for the one before. */
static void
act_start(struct act_job *j)
{
	struct vocab_error	 aerr;
	struct display		*d;
	int			 r;

	j->st->job = j;
	if ((d = act_display(j)) == NULL) {
		control_reply_error(j->s.conn, j->s.id, ERR_NO_DISPLAY, NULL);
		act_job_free(j);
		return;
	}
	if (display_input_claim(d, j) != 0) {
		control_reply_error(j->s.conn, j->s.id, ERR_BUSY,
		    "(the desktop's input is in use by /v1/desktop)");
		act_job_free(j);
		return;
	}
	if ((r = xtest_exec_new(capture_xdisplay(display_capture(d)), j->b,
	    &j->ex, &aerr)) != 0) {
		control_reply_error_ex(j->s.conn, j->s.id, r, aerr.msg,
		    json_pack("{s:i,s:i,s:b}", "done", 0, "failed", aerr.index,
		    "uncertain", 0));
		act_job_free(j);
		return;
	}
	display_touch(d);
	act_step(j);
}

static void
act_abort(struct control_stream *s)
{
	/* The controller went away: stop, release held keys, no reply. */
	act_job_free((struct act_job *)s);
}

static const struct control_stream_ops act_stream_ops = {
	NULL, NULL, act_abort
};

int
act_op(struct control_conn *c, uint32_t id, json_t *args, char *detail,
    size_t detaillen)
{
	static const char *const keys[] = { "bot", "actions", "scale",
	    "fence", NULL };
	struct vocab_error	 aerr;
	struct vocab_batch	*b = NULL;
	struct act_state	*st;
	struct act_job		*j;
	struct display		*d;
	struct capture		*cap;
	const char		*bot;
	uint64_t		 sig, frame;
	int			 r, again;

	if ((r = jsonx_only_keys(args, keys, detail)) != 0)
		return r;
	if ((r = jsonx_str(args, "bot", 64, &bot, detail)) != 0)
		return r == ERR_NOT_FOUND ? ERR_BAD_REQUEST : r;
	if (path_bot_valid(bot) != 0)
		return ERR_INVALID_BOT;
	if ((d = display_find(bot)) == NULL ||
	    (cap = display_capture(d)) == NULL)
		return ERR_NO_DISPLAY;
	st = act_state_get(bot);
	if (st->job != NULL && (!st->job->replied || st->waiting != NULL)) {
		snprintf(detail, detaillen, "(a batch is running for %s)", bot);
		return ERR_BUSY;
	}
	if ((r = vocab_parse_args(args, &b, &aerr)) != 0) {
		return control_reply_error_ex(c, id, r, aerr.msg,
		    json_pack("{s:i,s:i,s:b}", "done", 0, "failed", aerr.index,
		    "uncertain", 0)) == 0 ? 0 : ERR_NOMEM;
	}

	capture_sync(cap);
	frame = capture_frame(cap);
	sig = act_signature(args);
	/*
	 * A repeat had no effect when the screen changed neither while the
	 * last batch ran (a change often lands before the reply) nor since.
	 */
	again = vocab_has_input(b) && !vocab_navigation_only(b) &&
	    st->has_sig && st->gen == display_generation(d) &&
	    st->sig == sig && st->frame_end == frame && !st->changed;
	if (again && st->repeats >= 1) {
		vocab_free(b);
		log_info("display.act", "bot=%s refused=unchanged_after_repeat",
		    bot);
		snprintf(detail, detaillen, "(this exact batch already ran "
		    "twice in a row and the screen did not change after "
		    "either; batches of navigation keys only, such as Down, "
		    "Tab or Page_Down, are never refused)");
		return ERR_UNCHANGED_REPEAT;
	}

	j = xcalloc(1, sizeof *j);
	j->st = st;
	j->gen = display_generation(d);
	j->sig = sig;
	j->frame0 = frame;
	j->repeat_unchanged = again;
	j->b = b;
	control_stream_attach(c, &j->s, id, &act_stream_ops);
	if (st->job != NULL) {
		/* The previous batch only has its keymap restore left. */
		st->waiting = j;
		return 0;
	}
	act_start(j);
	return 0;
}

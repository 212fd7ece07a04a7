/* SPDX-License-Identifier: MIT */
/*
 * The runs resource of the API (api.h): a computer's runs (one from each
 * start to its stop), and the end of a bot run (G-4), named by its
 * execution lease, which revokes the run's control capabilities, ends
 * the lease and, unless the run succeeded, closes the bot's browser and
 * screen.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "guest.h"
#include "json.h"
#include "log.h"
#include "activity.h"
#include "api.h"
#include "api-int.h"
#include "checkpoint.h"
#include "lease.h"
#include "provider.h"
#include "store.h"

/* GET /v1/computers/{id}/runs */
void
api_runs_list(struct api_ctx *x, const char **arg)
{
	const char		*id = arg[0];
	struct store_computer	 c;
	struct store_run	*u;
	size_t			 n, i;
	json_t			*arr;
	int			 r;

	if (api_computers_find(x, id, &c) != 0)
		return;
	if ((r = store_run_list(x->s, id, &u, &n)) != 0) {
		api_error(x, r, NULL);
		return;
	}
	arr = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(arr, json_pack("{s:I, s:I, s:I, s:s?}",
		    "id", (json_int_t)u[i].id, "started_ms",
		    (json_int_t)u[i].started_ms, "ended_ms",
		    (json_int_t)u[i].ended_ms, "endReason",
		    u[i].ended_ms != 0 ? u[i].end_reason : NULL));
	free(u);
	api_reply(x, 200, json_pack("{s:o}", "runs", arr));
}

/*
 * G-4: a bot run (named by its execution lease) ends.  Every outcome
 * revokes the run's control capabilities and ends its lease; a successful
 * run keeps the bot's screen, browser and views for the next run, a failed
 * or cancelled one tears the screen down.
 */
void
api_runs_end(struct api_ctx *x, const char **arg)
{
	const char		*id = arg[0], *lease = arg[1];
	static const char *const keys[] = { "outcome", NULL };
	struct store_computer	 c;
	struct store_lease	 l;
	struct store_bot	 b;
	struct store_home_rev	 h;
	const char		*outcome;
	char			 e[JSONX_ERRLEN], cause[96];
	json_t			*res = NULL;
	int			 r, n = 0, closed = 0, keep, saved;

	if (api_parse_body(x) != 0 || api_computers_find(x, id, &c) != 0)
		return;
	if ((r = jsonx_only_keys(x->body, keys, e)) != 0 ||
	    (r = jsonx_str(x->body, "outcome", 16, &outcome, e)) != 0) {
		if (r == ERR_NOT_FOUND)
			snprintf(e, sizeof e, "\"outcome\" is required");
		api_error(x, ERR_BAD_REQUEST, e);
		return;
	}
	keep = strcmp(outcome, "succeeded") == 0;
	if (!keep && strcmp(outcome, "failed") != 0 &&
	    strcmp(outcome, "cancelled") != 0) {
		api_error(x, ERR_BAD_REQUEST, "\"outcome\" is succeeded, "
		    "failed or cancelled");
		return;
	}
	/* A replaced lease row means another driver has the bot now. */
	if (!api_name_ok(lease) || store_lease_get(x->s, lease, &l) != 0 ||
	    strcmp(l.computer, id) != 0 || strcmp(l.kind, LEASE_EXEC) != 0) {
		api_error(x, ERR_LEASE_EXPIRED, "No such run on this computer.");
		return;
	}
	if ((r = api_control_revoke(x, l.id, outcome, &n)) != 0) {
		api_error(x, r, "A capability of the run could not be revoked.");
		return;
	}
	if (!keep && provider_alive(x->a->prov, &c) == 1) {
		if ((r = store_bot_ensure(x->s, id, l.bot, &b)) != 0)
			goto fail;
		/*
		 * The browser first, through DevTools, so its profile is
		 * written whole; closing the display would kill it.
		 */
		r = guest_call(x->a->prov, &c, "browser.close",
		    json_pack("{s:s, s:I}", "bot", l.bot, "fence",
		    (json_int_t)b.fence), NULL, 0, &res, NULL, NULL, &x->err);
		json_decref(res);
		res = NULL;
		if (r != 0)
			log_warn("run_end.browser_close", "computer=%s bot=%s "
			    "code=%s", id, l.bot, err_name(r));
		r = guest_call(x->a->prov, &c, "display.close",
		    json_pack("{s:s, s:I}", "bot", l.bot, "fence",
		    (json_int_t)b.fence), NULL, 0, &res, NULL, NULL, &x->err);
		json_decref(res);
		/* The lease stays on failure: ending again retries. */
		if (r != 0 && r != ERR_NO_DISPLAY)
			goto fail;
		closed = r == 0;
	}
	if ((r = lease_release(x->s, l.id)) != 0)
		goto fail;
	(void)activity_command(x->s, id, l.bot, "run_end", 1, "run %s%s",
	    outcome, closed ? "; screen closed" : "");
	/*
	 * C-8: the last run to end saves the shared workspace; a failed
	 * save is its own event and does not undo the run's end.
	 */
	snprintf(cause, sizeof cause, "run:%.63s/%.16s", l.bot, outcome);
	saved = checkpoint_run_end(x, &c, cause, &h);
	res = json_pack("{s:s, s:s, s:s, s:i, s:s}", "lease", l.id, "bot",
	    l.bot, "outcome", outcome, "revoked", n, "screen", keep ? "kept" :
	    "closed");
	json_object_set_new(res, "checkpoint", saved < 0 ?
	    json_pack("{s:s}", "error", err_name(saved)) : saved == 0 ?
	    json_string("deferred") :
	    json_pack("{s:I}", "revision", (json_int_t)h.revision));
	api_reply(x, 200, res);
	return;
fail:
	api_error(x, r, x->err.msg);
}

/* SPDX-License-Identifier: MIT */
/*
 * The homes resource of the API (api.h, SPEC C-5, C-8, C-9): an
 * operator's checkpoint of a running computer, a restore of a stored
 * revision (recorded as a new revision, so nothing newer is lost) and
 * the list of a computer's revisions.  The work is checkpoint.c's.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "api.h"
#include "api-int.h"
#include "checkpoint.h"
#include "provider.h"
#include "store.h"

static json_t *
api_homes_json(const struct store_home_rev *h)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:s, s:s}", "revision",
	    (json_int_t)h->revision, "created_ms", (json_int_t)h->created_ms,
	    "bytes", (json_int_t)h->bytes, "files", (json_int_t)h->files,
	    "sha256", h->sha256, "cause", h->cause);
}

json_t *
api_homes_latest_json(struct api_ctx *x, const char *computer)
{
	struct store_home_rev	 h;

	if (store_home_rev_latest(x->s, computer, &h) != 0)
		return NULL;
	return api_homes_json(&h);
}

/*
 * No machine to save from.  Whether its workspace was saved when it
 * stopped is not known here (a machine that crashed saved nothing): the
 * answer names what the store holds, and nothing more.
 */
static void
api_homes_not_running(struct api_ctx *x, const struct store_computer *c)
{
	struct store_home_rev	 h;
	char			 msg[256];

	if (store_home_rev_latest(x->s, c->id, &h) == 0)
		snprintf(msg, sizeof msg, "the computer is not running, so "
		    "there is nothing to save; the newest stored revision is "
		    "%lld (%s)", (long long)h.revision, h.cause);
	else
		snprintf(msg, sizeof msg, "the computer is not running, so "
		    "there is nothing to save; no revision is stored");
	api_error(x, ERR_CHECKPOINT_FAILED, msg);
}

/* POST /v1/computers/{id}/checkpoint */
void
api_homes_checkpoint(struct api_ctx *x, const char **arg)
{
	struct store_computer	 c;
	struct store_home_rev	 h;
	struct errmsg		 e;
	int			 r;

	memset(&e, 0, sizeof e);
	if (api_parse_body(x) != 0 || api_computers_find(x, arg[0], &c) != 0)
		return;
	if (provider_alive(x->a->prov, &c) != 1) {
		api_homes_not_running(x, &c);
		return;
	}
	if ((r = checkpoint_save(x, &c, "operator", &h, &e)) != 0) {
		api_error_cause(x, r, e.cause, errmsg_str(&e));
		return;
	}
	api_reply(x, 200, api_homes_json(&h));
}

/* POST /v1/computers/{id}/restore {revision?, force?} */
void
api_homes_restore(struct api_ctx *x, const char **arg)
{
	static const char *const keys[] = { "revision", "force", NULL };
	struct store_computer	 c;
	struct store_home_rev	 h;
	struct errmsg		 e;
	char			 je[JSONX_ERRLEN];
	int64_t			 rev = 0, live = 0;
	int			 r;

	memset(&e, 0, sizeof e);
	if (api_parse_body(x) != 0 || api_computers_find(x, arg[0], &c) != 0)
		return;
	if ((r = jsonx_only_keys(x->body, keys, je)) != 0 ||
	    ((r = jsonx_int(x->body, "revision", 1, INT64_MAX, &rev,
	    je)) != 0 && r != ERR_NOT_FOUND)) {
		api_error(x, ERR_BAD_REQUEST, je);
		return;
	}
	if ((r = store_lease_count_live(x->s, c.id, store_now_ms(),
	    &live)) != 0) {
		api_error(x, r, NULL);
		return;
	}
	if (live > 0 && !json_is_true(json_object_get(x->body, "force"))) {
		api_error(x, ERR_LEASE_HELD, "A bot or user holds a lease on "
		    "this computer; a restore would replace its workspace "
		    "under it.  Release it or pass force.");
		return;
	}
	if ((r = api_computers_ensure_running(x, &c)) != 0) {
		api_error(x, r, x->err.msg);
		return;
	}
	if ((r = checkpoint_restore(x, &c, rev, 1, &h, &e)) != 0) {
		api_error_cause(x, r, e.cause, errmsg_str(&e));
		return;
	}
	api_reply(x, 200, api_homes_json(&h));
}

/* GET /v1/computers/{id}/homes */
void
api_homes_list(struct api_ctx *x, const char **arg)
{
	struct store_computer	 c;
	struct store_home_rev	*rows = NULL;
	size_t			 n = 0, i;
	json_t			*arr;
	int			 r;

	if (api_computers_find(x, arg[0], &c) != 0)
		return;
	if ((r = store_home_rev_list(x->s, c.id, &rows, &n)) != 0) {
		api_error(x, r, NULL);
		return;
	}
	arr = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(arr, api_homes_json(&rows[i]));
	free(rows);
	api_reply(x, 200, json_pack("{s:s, s:o}", "computer", c.id,
	    "revisions", arr));
}

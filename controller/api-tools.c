/* SPDX-License-Identifier: MIT */
/*
 * The tools resource of the API (api.h, doc/DESIGN.md C-4): the list of tools
 * and a call of one (tool.h).  A call names its computer and bot; before the
 * tool reaches guestd it gets the bot's execution lease (TOOL_LEASE) and
 * a running computer (C-6).  A control capability a tool hands out under
 * the caller's lease (TOOL_CONTROL) is recorded so it ends with the lease
 * (G-4), and a TOOL_RECORD call leaves an activity event (G-30).
 */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "activity.h"
#include "api.h"
#include "api-int.h"
#include "lease.h"
#include "store.h"
#include "tool.h"

struct api_tools_state {
	struct api_ctx			*x;
	const struct tool_entry		*te;
	const char			*lease;
	struct store_lease		 l;
	int				 ephemeral;
};

/* tool_ctx.prepare: the lease, then a running computer (C-6). */
static int
api_tools_prepare(struct tool_ctx *t, struct errmsg *err)
{
	struct api_tools_state	*st = t->prepare_arg;
	struct api_ctx		*x = st->x;
	int			 r;

	if (st->te->flags & TOOL_LEASE) {
		r = api_leases_take(x, t->computer->id, t->bot, st->lease,
		    &st->l, &st->ephemeral);
		if (r != 0)
			return errmsg_set(err, r, "%s", err_message(r));
		t->fence = st->l.fence;
		t->holder = st->l.holder;
		if (!st->ephemeral)
			t->lease_expires_ms = st->l.expires_ms;
	}
	if ((r = api_computers_ensure_running(x, t->computer)) != 0) {
		/* The tool's sink is x->err itself when the API runs it. */
		if (err != &x->err)
			errmsg_set(err, r, "%s", x->err.msg);
		return r;
	}
	(void)store_computer_touch(x->s, t->computer->id, store_now_ms());
	return 0;
}

/* A control capability handed out by a TOOL_CONTROL tool. */
static int
api_tools_grants_control(const struct tool_entry *te, json_t *res)
{
	const char	*pol;

	if (!(te->flags & TOOL_CONTROL))
		return 0;
	pol = json_string_value(json_object_get(res, "policy"));
	return pol != NULL && strcmp(pol, "control") == 0;
}

/* POST /v1/tools/{tool} {computer, bot, lease?, ...} */
void
api_tools_call(struct api_ctx *x, const char **arg)
{
	const char		*name = arg[0];
	struct api_tools_state	 st;
	struct store_computer	 c;
	struct tool_ctx		 t;
	const char		*cid, *bot;
	char			 e[JSONX_ERRLEN];
	json_t			*res = NULL;
	int			 r;

	memset(&st, 0, sizeof st);
	st.x = x;
	if ((st.te = tool_find(name)) == NULL) {
		api_error(x, ERR_UNKNOWN_TOOL, NULL);
		return;
	}
	if (api_parse_body(x) != 0 || api_body_name(x, "computer", &cid) != 0 ||
	    api_body_name(x, "bot", &bot) != 0)
		return;
	if ((r = jsonx_str(x->body, "lease", STORE_ID_MAX - 1, &st.lease,
	    e)) != 0 && r != ERR_NOT_FOUND) {
		api_error(x, r, e);
		return;
	}
	if (api_computers_find(x, cid, &c) != 0)
		return;
	memset(&t, 0, sizeof t);
	t.store = x->s;
	t.prov = x->a->prov;
	t.computer = &c;
	t.bot = bot;
	t.args = x->body;
	t.attach_max = x->a->attach_max;
	t.data_dir = x->a->data_dir;
	t.prepare = api_tools_prepare;
	t.prepare_arg = &st;
	errmsg_clear(&x->err);
	r = st.te->fn(&t, &res, &x->err);
	/* A run's control screen or terminal ends with its lease (G-4). */
	if (r == 0 && st.lease != NULL &&
	    api_tools_grants_control(st.te, res) &&
	    (r = api_control_remember(x, &st.l, res)) != 0) {
		json_decref(res);
		res = NULL;
		errmsg_set(&x->err, r, "The control capability could "
		    "not be recorded.");
	}
	/* A call refused before reaching the computer did nothing. */
	if ((st.te->flags & TOOL_RECORD) && t.summary[0] != '\0' &&
	    (t.prepared || r == 0))
		(void)activity_command(x->s, cid, bot, st.te->name, r == 0,
		    "%s", t.summary);
	if (r != 0)
		api_error(x, r, x->err.msg);
	else
		api_reply(x, 200, res != NULL ? res : json_object());
	if (st.ephemeral)
		api_leases_end_call(x, &st.l);
}

/* GET /v1/tools */
void
api_tools_list(struct api_ctx *x, const char **arg)
{
	api_reply(x, 200, tool_list_json());
}

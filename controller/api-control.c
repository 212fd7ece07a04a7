/* SPDX-License-Identifier: MIT */
/*
 * Control of a computer's screen in the API (api.h): a user takes a bot's
 * control lease with a control screen (and terminal) capability, and
 * gives it back.  Also the bookkeeping of every control capability the
 * controller hands out, through this route or the screen_url and
 * terminal_url tools: each is stored before its token leaves, renewed
 * with its lease's heartbeat and revoked at guestd when the lease ends
 * (G-20), by the caller or by the capability sweep (sweep.c).
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "guest.h"
#include "log.h"
#include "token.h"
#include "api.h"
#include "api-int.h"
#include "lease.h"
#include "provider.h"
#include "store.h"
#include "tool.h"
#include "tool-screen-url.h"

/*
 * Revoke one stored capability at guestd and forget it.  A computer that is
 * gone or not running took its capabilities with it.  The fence is the
 * bot's latest: the lease that granted it may have been replaced.
 */
int
api_control_cap_revoke(struct api *a, struct store *s,
    const struct store_cap *cap, const char *why)
{
	struct store_computer	 c;
	struct store_bot	 b;
	json_t			*res = NULL;
	struct errmsg	 e;
	int			 r;

	r = store_computer_get(s, cap->computer, &c);
	if (r == 0 && provider_alive(a->prov, &c) == 1) {
		if ((r = store_bot_ensure(s, cap->computer, cap->bot, &b)) != 0)
			return r;
		/* By id; rows from before ids were kept hold the token. */
		r = guest_call(a->prov, &c, "capability.revoke",
		    json_pack("{s:s, s:s, s:I}", cap->cap_id[0] != '\0' ?
		    "id" : "token", cap->cap_id[0] != '\0' ? cap->cap_id :
		    cap->token, "bot", cap->bot, "fence", (json_int_t)b.fence),
		    NULL, 0, &res, NULL, NULL, &e);
		json_decref(res);
		/* NOT_FOUND: it expired or its display closed already. */
		if (r != 0 && r != ERR_NOT_FOUND) {
			log_warn("control.revoke_failed", "computer=%s bot=%s "
			    "capability=%s code=%s", cap->computer, cap->bot,
			    cap->cap_id, err_name(r));
			return r;
		}
	} else if (r != 0 && r != ERR_NOT_FOUND)
		return r;
	log_info("control.revoked", "computer=%s bot=%s capability=%s "
	    "reason=%s", cap->computer, cap->bot, cap->cap_id, why);
	return store_cap_delete(s, cap->id);
}

void
api_control_caps_free(struct store_cap *caps, size_t n)
{
	if (caps != NULL)
		token_wipe(caps, n * sizeof *caps);
	free(caps);
}

/* Revoke every capability granted under lease id (G-20: at once). */
int
api_control_revoke(struct api_ctx *x, const char *lease, const char *why,
    int *count)
{
	struct store_cap	*caps;
	size_t			 n, i;
	int			 r, r2;

	*count = 0;
	if ((r = store_cap_list_lease(x->s, lease, &caps, &n)) != 0)
		return r;
	for (i = 0; i < n; i++) {
		if ((r2 = api_control_cap_revoke(x->a, x->s, &caps[i],
		    why)) == 0)
			(*count)++;
		else
			r = r2;	/* the row stays; the sweep retries */
	}
	api_control_caps_free(caps, n);
	return r;
}

/*
 * Move the capabilities granted under lease l to its new expiry at guestd.
 * They were granted with the lease's ttl and guestd ends them on its own
 * timer, so a controller that stops heartbeating, or is killed, leaves
 * no capability behind its lease.  One that cannot be renewed keeps its
 * old deadline: it ends early, never late.  Returns how many were renewed.
 */
int
api_control_renew(struct api_ctx *x, const struct store_lease *l)
{
	struct store_computer	 c;
	struct store_cap	*caps;
	json_t			*res;
	struct errmsg	 e;
	size_t			 n, i;
	int64_t			 ttl;
	int			 r, renewed = 0;

	if (store_cap_list_lease(x->s, l->id, &caps, &n) != 0)
		return 0;
	if (n == 0 || store_computer_get(x->s, l->computer, &c) != 0 ||
	    provider_alive(x->a->prov, &c) != 1)
		goto out;
	ttl = (l->expires_ms - store_now_ms() + 999) / 1000;
	if (ttl < 1)
		ttl = 1;
	for (i = 0; i < n; i++) {
		if (caps[i].cap_id[0] == '\0')
			continue;	/* a row from before ids were kept */
		res = NULL;
		r = guest_call(x->a->prov, &c, "capability.renew",
		    json_pack("{s:s, s:I, s:s, s:I}", "id", caps[i].cap_id,
		    "ttl", (json_int_t)ttl, "bot", caps[i].bot, "fence",
		    (json_int_t)l->fence), NULL, 0, &res, NULL, NULL, &e);
		json_decref(res);
		if (r == 0)
			renewed++;
		else
			log_warn("control.renew_failed", "computer=%s bot=%s "
			    "capability=%s code=%s", caps[i].computer,
			    caps[i].bot, caps[i].cap_id, err_name(r));
	}
out:
	api_control_caps_free(caps, n);
	return renewed;
}

/*
 * Persist a capability granted under lease l (res is guestd's grant reply)
 * before anyone sees its token: one that cannot be stored could not be
 * revoked after a restart, so it is revoked now and the call fails.  Only
 * its public id is kept (guestd revokes by id); the token goes to the
 * caller and nowhere else.
 */
int
api_control_remember(struct api_ctx *x, const struct store_lease *l,
    json_t *res)
{
	struct store_cap	 cap;
	const char		*tok, *id;
	int			 r;

	tok = json_string_value(json_object_get(res, "token"));
	id = json_string_value(json_object_get(res, "id"));
	if (tok == NULL || id == NULL || *id == '\0' ||
	    strlen(id) >= sizeof cap.cap_id)
		return ERR_PROTOCOL;
	memset(&cap, 0, sizeof cap);
	snprintf(cap.lease, sizeof cap.lease, "%s", l->id);
	snprintf(cap.computer, sizeof cap.computer, "%s", l->computer);
	snprintf(cap.bot, sizeof cap.bot, "%s", l->bot);
	snprintf(cap.cap_id, sizeof cap.cap_id, "%s", id);
	cap.created_ms = store_now_ms();
	if ((r = store_cap_add(x->s, &cap)) != 0) {
		cap.id = -1;	/* no row: deleting it is a no-op */
		(void)api_control_cap_revoke(x->a, x->s, &cap, "unrecorded");
	} else if (x->a->cap_deadline != NULL)
		x->a->cap_deadline(l->expires_ms);
	return r;
}

/* POST /v1/computers/{id}/control {bot, holder?, ttl_ms?} */
void
api_control_take(struct api_ctx *x, const char **arg)
{
	const char		*id = arg[0];
	struct store_computer	 c;
	struct store_lease	 l;
	struct tool_ctx		 t;
	const char		*bot, *holder = "user", *tok;
	json_t			*j, *screen = NULL;
	int64_t			 ttl;
	int			 r;

	if (api_parse_body(x) != 0 || api_body_name(x, "bot", &bot) != 0 ||
	    api_leases_body_ttl(x, &ttl) != 0 ||
	    api_computers_find(x, id, &c) != 0)
		return;
	if (json_object_get(x->body, "holder") != NULL &&
	    api_body_name(x, "holder", &holder) != 0)
		return;
	if ((r = lease_acquire_control(x->s, id, bot, holder, ttl,
	    &l)) != 0) {
		api_error(x, r, NULL);
		return;
	}
	if ((r = api_computers_ensure_running(x, &c)) != 0) {
		(void)lease_release(x->s, l.id);
		api_error(x, r, x->err.msg);
		return;
	}
	memset(&t, 0, sizeof t);
	t.store = x->s;
	t.prov = x->a->prov;
	t.computer = &c;
	t.bot = bot;
	t.fence = l.fence;
	t.lease_expires_ms = l.expires_ms;
	j = api_leases_json(&l);
	if ((r = screen_url_grant(&t, "control", 0, &screen, &x->err)) != 0) {
		/* Without a screen there is no control to hand over. */
		(void)lease_release(x->s, l.id);
		json_decref(j);
		api_error(x, r, x->err.msg);
		return;
	}
	if ((r = api_control_remember(x, &l, screen)) != 0) {
		(void)lease_release(x->s, l.id);
		json_decref(screen);
		json_decref(j);
		api_error(x, r, "The control capability could not be recorded.");
		return;
	}
	if ((tok = json_string_value(json_object_get(screen, "token"))) !=
	    NULL) {
		json_object_set_new(j, "terminal_path", json_sprintf("/term/%s",
		    tok));
		json_object_set_new(j, "terminal_page_path", json_sprintf(
		    "/term.html?token=%s", tok));
	}
	json_object_set_new(j, "screen", screen);
	api_reply(x, 201, j);
}

/* DELETE /v1/computers/{id}/control/{lease} */
void
api_control_release(struct api_ctx *x, const char **arg)
{
	api_leases_release(x, arg[1], arg[0]);
}

/* SPDX-License-Identifier: MIT */
/*
 * The leases resource of the API (api.h): a driver takes a bot's
 * execution lease (lease.h), keeps it with heartbeats, which also move the
 * control capabilities granted under it to the new expiry, and releases
 * it, which revokes them.  Also the lease of a single mutating call, taken
 * for a caller that holds none.
 */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "log.h"
#include "token.h"
#include "api.h"
#include "api-int.h"
#include "lease.h"
#include "store.h"
#include "task.h"

#define API_CALL_TTL_MS	(10 * 60 * 1000)

/*
 * Releases of calls' own leases that the store refused (a database that
 * went away as the call ended, a full disk), kept in this process and
 * tried again until the store takes them.  Retrying is safe for the
 * fences: a release deletes only the row of that lease id, so a lease
 * that lapsed and was granted anew (another id, a higher fence) is never
 * touched, and no fence goes back.  Bounded: past API_LEASES_OWED_MAX the
 * oldest is left to its TTL.
 */
#define API_LEASES_OWED_MAX		64
#define API_LEASES_OWED_FIRST_MS	100
#define API_LEASES_OWED_MAX_MS		1000

struct api_leases_owing {
	char	 id[STORE_ID_MAX];
	char	 computer[STORE_ID_MAX];
	char	 bot[STORE_ID_MAX];
};

static struct api_leases_owing	 api_leases_owed_tab[API_LEASES_OWED_MAX];
static int			 api_leases_nowed;
static int			 api_leases_owed_task_on;
static struct api		*api_leases_owed_api;

json_t *
api_leases_json(const struct store_lease *l)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:I}", "id", l->id,
	    "computer", l->computer, "bot", l->bot, "kind", l->kind, "holder",
	    l->holder, "fence", (json_int_t)l->fence, "expires_ms",
	    (json_int_t)l->expires_ms);
}

int
api_leases_body_ttl(struct api_ctx *x, int64_t *ttl)
{
	char	 e[JSONX_ERRLEN];
	int	 r;

	*ttl = LEASE_TTL_DEFAULT_MS;
	r = jsonx_int(x->body, "ttl_ms", 1000, LEASE_TTL_MAX_MS, ttl, e);
	if (r != 0 && r != ERR_NOT_FOUND) {
		api_error(x, r, e);
		return -1;
	}
	return 0;
}

/* POST /v1/leases {computer, bot, holder, ttl_ms?} */
void
api_leases_acquire(struct api_ctx *x, const char **arg)
{
	struct store_computer	 c;
	struct store_lease	 l;
	const char		*cid, *bot, *holder;
	int64_t			 ttl;
	int			 r;

	if (api_parse_body(x) != 0 || api_body_name(x, "computer", &cid) != 0 ||
	    api_body_name(x, "bot", &bot) != 0 ||
	    api_body_name(x, "holder", &holder) != 0 ||
	    api_leases_body_ttl(x, &ttl) != 0 ||
	    api_computers_find(x, cid, &c) != 0)
		return;
	if ((r = lease_acquire(x->s, cid, bot, holder, ttl, LEASE_F_RUN,
	    &l)) != 0) {
		api_error(x, r, NULL);
		return;
	}
	api_reply(x, 201, api_leases_json(&l));
}

/* POST /v1/leases/{id}/heartbeat {ttl_ms?} */
void
api_leases_heartbeat(struct api_ctx *x, const char **arg)
{
	const char		*id = arg[0];
	struct store_lease	 l;
	json_t			*j;
	int64_t			 ttl;
	int			 r, n;

	if (api_parse_body(x) != 0 || api_leases_body_ttl(x, &ttl) != 0)
		return;
	if ((r = lease_heartbeat(x->s, id, ttl, &l)) != 0) {
		api_error(x, r, NULL);
		return;
	}
	n = api_control_renew(x, &l);
	j = api_leases_json(&l);
	json_object_set_new(j, "renewed", json_integer(n));
	api_reply(x, 200, j);
}

/*
 * The execution lease of a mutating call: the caller's, checked, or
 * without one a lease for this call only (a call without a lease drives
 * only a free bot).  The caller releases an ephemeral one when done.
 */
int
api_leases_take(struct api_ctx *x, const char *computer, const char *bot,
    const char *lease, struct store_lease *l, int *ephemeral)
{
	char	 holder[STORE_ID_MAX];
	int	 r;

	*ephemeral = 0;
	if (lease != NULL)
		return lease_check(x->s, lease, computer, bot, l);
	snprintf(holder, sizeof holder, "call-");
	if ((r = token_new(holder + 5, sizeof holder - 5)) == 0)
		r = lease_acquire(x->s, computer, bot, holder, API_CALL_TTL_MS,
		    0, l);
	*ephemeral = r == 0;
	return r;
}

int
api_leases_owed(void)
{
	return api_leases_nowed;
}

static void
api_leases_owed_drop(const char *id)
{
	int	 i;

	/* In order: the first is the oldest, the one dropped when full. */
	for (i = 0; i < api_leases_nowed; i++)
		if (strcmp(api_leases_owed_tab[i].id, id) == 0) {
			memmove(&api_leases_owed_tab[i],
			    &api_leases_owed_tab[i + 1],
			    (size_t)(api_leases_nowed - i - 1) *
			    sizeof api_leases_owed_tab[0]);
			api_leases_nowed--;
			/* The id is a credential: no stale copy stays. */
			explicit_bzero(&api_leases_owed_tab[api_leases_nowed],
			    sizeof api_leases_owed_tab[0]);
			return;
		}
}

/*
 * Try every owed release on s; stop at the first store failure (the
 * store is still away: the rest would fail the same way).  A release
 * waits for the store, and other tasks may add or finish entries
 * meanwhile: each entry is copied, and found again by id after.
 */
void
api_leases_retry(struct store *s)
{
	struct api_leases_owing	 o;
	int			 i, r;

	for (i = 0; i < api_leases_nowed; ) {
		o = api_leases_owed_tab[i];
		r = lease_release(s, o.id);
		if (r != 0 && r != ERR_LEASE_EXPIRED)
			return;
		api_leases_owed_drop(o.id);
		explicit_bzero(o.id, sizeof o.id);
		log_info("lease.released_late", "computer=%s bot=%s%s",
		    o.computer, o.bot, r == ERR_LEASE_EXPIRED ?
		    " gone=1" : "");
		i = 0;
	}
}

/* The retry task: tries again, 100 ms apart doubling to 1 s, until done. */
static void
api_leases_owed_task(void *arg)
{
	struct store	*s;
	struct errmsg	 e;
	int64_t		 wait = API_LEASES_OWED_FIRST_MS;

	(void)arg;
	while (api_leases_nowed > 0) {
		if (task_sleep(wait) != 0)
			break;
		memset(&e, 0, sizeof e);
		if (api_store_get(api_leases_owed_api, &s, &e) == 0) {
			api_leases_retry(s);
			api_store_put(s);
		}
		if (wait < API_LEASES_OWED_MAX_MS)
			wait *= 2;
	}
	api_leases_owed_task_on = 0;
}

void
api_leases_end_call(struct api_ctx *x, const struct store_lease *l)
{
	struct api_leases_owing	*o;
	int			 r;

	r = lease_release(x->s, l->id);
	if (r == 0 || r == ERR_LEASE_EXPIRED)
		return;
	/* The lease id is a credential: the log names the bot only. */
	log_warn("lease.release_failed", "computer=%s bot=%s fence=%lld "
	    "code=%s retry=1", l->computer, l->bot, (long long)l->fence,
	    err_name(r));
	if (api_leases_nowed == API_LEASES_OWED_MAX) {
		log_warn("lease.release_dropped", "computer=%s bot=%s "
		    "msg=\"too many owed releases: left to its TTL\"",
		    api_leases_owed_tab[0].computer,
		    api_leases_owed_tab[0].bot);
		api_leases_owed_drop(api_leases_owed_tab[0].id);
	}
	o = &api_leases_owed_tab[api_leases_nowed++];
	snprintf(o->id, sizeof o->id, "%s", l->id);
	snprintf(o->computer, sizeof o->computer, "%s", l->computer);
	snprintf(o->bot, sizeof o->bot, "%s", l->bot);
	api_leases_owed_api = x->a;
	/* Outside the server's loop (tests) the next request retries. */
	if (!api_leases_owed_task_on && task_self() != NULL &&
	    task_spawn(api_leases_owed_task, NULL) == 0)
		api_leases_owed_task_on = 1;
}

void
api_leases_release(struct api_ctx *x, const char *id,
    const char *computer)
{
	struct store_lease	 l;
	int			 r, n, pending;

	if ((r = store_lease_get(x->s, id, &l)) != 0 ||
	    (computer != NULL && strcmp(l.computer, computer) != 0)) {
		api_error(x, r == 0 || r == ERR_NOT_FOUND ? ERR_LEASE_EXPIRED :
		    r, NULL);
		return;
	}
	/* A capability guestd did not confirm stays stored: the expiry
	 * sweep retries it once the lease row is gone. */
	pending = api_control_revoke(x, l.id, "released", &n) != 0;
	if ((r = lease_release(x->s, id)) != 0) {
		api_error(x, r, NULL);
		return;
	}
	if (pending && x->a->cap_deadline != NULL)
		x->a->cap_deadline(store_now_ms());
	api_reply(x, 200, json_pack("{s:s, s:b, s:i, s:b}", "id", id,
	    "released", 1, "revoked", n, "revoke_pending", pending));
}

/* DELETE /v1/leases/{id} */
void
api_leases_delete(struct api_ctx *x, const char **arg)
{
	api_leases_release(x, arg[0], NULL);
}

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
#include "token.h"
#include "api.h"
#include "api-int.h"
#include "lease.h"
#include "store.h"

#define API_CALL_TTL_MS	(10 * 60 * 1000)

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

/* SPDX-License-Identifier: MIT */
/*
 * The controller's periodic jobs (sweep.h), which serve runs on timers
 * beside the API's requests and which change state the way the API
 * does: the reconciler (C-7) corrects the store to what the provider
 * says is alive, the idle sweep stops computers nobody used for a while
 * (C-6), and the capability sweep revokes at guestd the control
 * capabilities whose lease ended (C-3, G-20).  Each opens a store
 * connection of its own.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "api.h"
#include "api-int.h"
#include "checkpoint.h"
#include "err.h"
#include "provider.h"
#include "run-record.h"
#include "store.h"
#include "sweep.h"

static int
sweep_alive_cb(const struct store_computer *c, void *arg)
{
	struct api	*a = arg;

	if (strcmp(c->provider, provider_name(a->prov)) != 0)
		return -1;	/* another provider's computer: leave it */
	return provider_alive(a->prov, c);
}

int
sweep_objects(struct api *a, int *deleted)
{
	struct store	*s;
	struct errmsg	 err;
	int		 r;

	*deleted = 0;
	memset(&err, 0, sizeof err);
	if ((r = store_open(&s, a->store_url, &err)) != 0)
		return r;
	r = checkpoint_sweep_objects(a, s, deleted);
	store_free(s);
	if (*deleted > 0)
		log_info("sweep.objects", "deleted=%d", *deleted);
	return r;
}

int
sweep_reconcile(struct api *a, int *changed)
{
	struct store	*s;
	struct errmsg	 err;
	int		 r;

	*changed = 0;
	if ((r = store_open(&s, a->store_url, &err)) != 0)
		return r;
	r = run_record_reconcile(s, sweep_alive_cb, a, changed);
	store_free(s);
	return r;
}

int
sweep_idle(struct api *a, int *stopped)
{
	struct store_computer	*cs = NULL;
	struct api_ctx		 x;
	struct api_resp		 dummy;
	struct store_lease	 rsv;
	struct errmsg		 err;
	int64_t			 now, live;
	size_t			 n, i;
	int			 r;

	*stopped = 0;
	if (a->idle_ms <= 0)
		return 0;
	memset(&x, 0, sizeof x);
	memset(&dummy, 0, sizeof dummy);
	x.a = a;
	x.out = &dummy;
	if ((r = store_open(&x.s, a->store_url, &err)) != 0)
		return r;
	if ((r = store_computer_list(x.s, &cs, &n)) != 0)
		goto out;
	now = store_now_ms();
	for (i = 0; i < n; i++) {
		if (strcmp(cs[i].state, "running") != 0 ||
		    strcmp(cs[i].provider, provider_name(a->prov)) != 0 ||
		    now - cs[i].last_used_ms < a->idle_ms)
			continue;
		/* Leases include a user's control of the screen. */
		if (store_lease_count_live(x.s, cs[i].id, now, &live) != 0 ||
		    live > 0)
			continue;
		/*
		 * C-8: reserved first, so no bot starts mid-snapshot; the
		 * stop drops every lease, a failed one only ours.
		 */
		if (checkpoint_reserve(x.s, cs[i].id, &rsv) != 0)
			continue;
		if (api_computers_halt(&x, &cs[i], RUN_IDLE, 0) == 0) {
			(*stopped)++;
			log_info("computer.idle_stop", "computer=%s",
			    cs[i].id);
		} else
			checkpoint_unreserve(x.s, &rsv);
	}
out:
	free(cs);
	store_free(x.s);
	return r;
}

int
sweep_caps(struct api *a, int *revoked, int64_t *next_ms)
{
	struct store_cap	*caps = NULL;
	struct store		*s;
	struct errmsg		 err;
	size_t			 n = 0, i;
	int			 r;

	*revoked = 0;
	*next_ms = 0;
	if ((r = store_open(&s, a->store_url, &err)) != 0)
		return r;
	if ((r = store_cap_list_dead(s, store_now_ms(), &caps, &n)) != 0)
		goto out;
	for (i = 0; i < n; i++)
		if (api_control_cap_revoke(a, s, &caps[i], "expired") == 0)
			(*revoked)++;
	r = store_cap_next_expiry(s, next_ms);
	/* One that failed is retried at the next timer. */
	if (r == 0 && (size_t)*revoked < n)
		*next_ms = 0;
out:
	api_control_caps_free(caps, n);
	store_free(s);
	return r;
}

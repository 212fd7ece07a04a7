/* SPDX-License-Identifier: MIT */
/*
 * The computers resource of the API (api.h): list, create, show, start,
 * stop and delete computers, and read a computer's activity feed (a long
 * poll).  Also what other resources need of a computer: finding it by id,
 * starting it on first use (C-6) under a start lock shared by every
 * rakazoctl process on the host, and halting it (the idle sweep does too).
 */
#include "autoconf.h"

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "guest.h"
#include "log.h"
#include "token.h"
#include "activity.h"
#include "api.h"
#include "api-int.h"
#include "checkpoint.h"
#include "provider.h"
#include "run-record.h"
#include "store.h"
#include "task.h"

static json_t *
api_computers_json(const struct store_computer *c)
{
	return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I}", "id", c->id,
	    "provider", c->provider, "state", c->state, "created_ms",
	    (json_int_t)c->created_ms, "updated_ms", (json_int_t)c->updated_ms,
	    "last_used_ms", (json_int_t)c->last_used_ms);
}

/*
 * One start of computer id at a time, across every rakazoctl process on
 * this host: an flock on DATA_DIR/locks/start-<id>.  Two opens conflict
 * even within one process, so this also orders our own tasks.  flock has
 * no waitable descriptor, so a task that finds it taken retries on a
 * short timer, and only while a start is under way.
 */
static int
api_computers_start_lock(struct api_ctx *x, const char *id, int *fdp)
{
	char	 path[PATH_MAX];
	int64_t	 waited = 0;
	int	 fd;

	*fdp = -1;
	if (x->a->lock_dir == NULL)
		return 0;
	snprintf(path, sizeof path, "%s/locks", x->a->lock_dir);
	if (mkdir(path, 0700) == -1 && errno != EEXIST)
		return err_from_errno(errno);
	if ((size_t)snprintf(path, sizeof path, "%s/locks/start-%s",
	    x->a->lock_dir, id) >= sizeof path)
		return ERR_NAME_TOO_LONG;
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1)
		return err_from_errno(errno);
	while (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if ((errno != EWOULDBLOCK && errno != EINTR) ||
		    waited >= API_START_LOCK_MS) {
			close(fd);
			return ERR_BUSY;
		}
		if (task_sleep(API_START_LOCK_POLL_MS) != 0) {
			close(fd);
			return ERR_BUSY;
		}
		waited += API_START_LOCK_POLL_MS;
	}
	*fdp = fd;
	return 0;
}

/* Make c run (C-6: on the first tool call), once across processes. */
int
api_computers_ensure_running(struct api_ctx *x, struct store_computer *c)
{
	struct errmsg	 e;
	int	 r = 0, lk = -1, replaced = 0, alive;

	memset(&e, 0, sizeof e);
	if ((r = api_computers_start_lock(x, c->id, &lk)) != 0)
		return errmsg_set(&x->err, r, "another start of the "
		    "computer did not finish");
	/* Re-read: another request may have started it meanwhile. */
	if ((r = store_computer_get(x->s, c->id, c)) != 0)
		goto out;
	/*
	 * C-11: the reference is only passed back to the provider type
	 * that made it; another type makes a replacement, restored below.
	 */
	if (strcmp(c->provider, provider_name(x->a->prov)) != 0) {
		replaced = 1;
		if (strcmp(c->state, "running") == 0)
			(void)run_record_ended(x->s, c->id, RUN_REPLACED);
		snprintf(c->provider, sizeof c->provider, "%s",
		    provider_name(x->a->prov));
		snprintf(c->ref, sizeof c->ref, "{}");
		snprintf(c->state, sizeof c->state, "stopped");
	} else if ((alive = provider_alive(x->a->prov, c)) == 1)
		goto out;
	else if (alive < 0) {
		/*
		 * C-13: the provider cannot tell (its API does not answer,
		 * or refuses our credentials).  The computer may still run:
		 * replacing it would make a second one, so the call fails.
		 */
		r = errmsg_set(&x->err, ERR_PROVIDER_UNSURE, "the %s provider "
		    "cannot tell whether the computer runs (see the "
		    "controller's log); it is not replaced",
		    provider_name(x->a->prov));
		goto out;
	}
	if (strcmp(c->state, "running") == 0)
		(void)run_record_ended(x->s, c->id, RUN_GONE);
	if ((r = provider_start(x->a->prov, c, &x->err)) != 0)
		goto out;
	/* C-8: the stored workspace is back before the first call. */
	if ((r = checkpoint_after_start(x, c, replaced, &e)) != 0) {
		x->err = e;
		/* Stopped, so the next call tries the restore again. */
		(void)provider_stop(x->a->prov, c);
		goto out;
	}
	snprintf(c->state, sizeof c->state, "running");
	c->updated_ms = c->last_used_ms = store_now_ms();
	if ((r = store_computer_update(x->s, c)) != 0 ||
	    (r = run_record_started(x->s, c->id)) != 0)
		goto out;
	log_info("computer.started", "computer=%s provider=%s", c->id,
	    c->provider);
out:
	if (lk >= 0)
		close(lk);	/* releases the flock */
	return r;
}

int
api_computers_find(struct api_ctx *x, const char *id,
    struct store_computer *c)
{
	int	 r;

	if (!api_name_ok(id)) {
		api_error(x, ERR_NOT_FOUND, "No such computer.");
		return -1;
	}
	if ((r = store_computer_get(x->s, id, c)) != 0) {
		api_error(x, r, r == ERR_NOT_FOUND ? "No such computer." :
		    NULL);
		return -1;
	}
	return 0;
}

/* POST /v1/computers {id?, start?} */
void
api_computers_create(struct api_ctx *x, const char **arg)
{
	struct store_computer	 c;
	const char		*id;
	char			 gen[TOKEN_STRLEN + 1];
	int			 r, start = 0;

	if (api_parse_body(x) != 0)
		return;
	if (json_object_get(x->body, "id") == NULL) {
		if (token_new(gen, sizeof gen) != 0) {
			api_error(x, ERR_INTERNAL, NULL);
			return;
		}
		/* Names start with a letter or digit. */
		gen[0] = 'c';
		gen[12] = '\0';
		for (r = 0; gen[r] != '\0'; r++)
			if (gen[r] == '-')
				gen[r] = 'x';
		id = gen;
	} else if (api_body_name(x, "id", &id) != 0)
		return;
	if (json_is_true(json_object_get(x->body, "start")))
		start = 1;
	if (strcmp(provider_name(x->a->prov), "none") == 0) {
		api_error(x, ERR_COMPUTERS_DISABLED, NULL);
		return;
	}
	memset(&c, 0, sizeof c);
	snprintf(c.id, sizeof c.id, "%s", id);
	snprintf(c.provider, sizeof c.provider, "%s",
	    provider_name(x->a->prov));
	snprintf(c.state, sizeof c.state, "stopped");
	snprintf(c.ref, sizeof c.ref, "{}");
	c.created_ms = c.updated_ms = c.last_used_ms = store_now_ms();
	if ((r = provider_admit(x->a->prov, x->s, c.id, &x->err)) != 0) {
		api_error(x, r, x->err.msg);
		return;
	}
	if ((r = store_computer_create(x->s, &c)) != 0) {
		api_error(x, r, r == ERR_EXISTS ? "A computer with this id "
		    "exists." : NULL);
		return;
	}
	if (start && (r = api_computers_ensure_running(x, &c)) != 0) {
		api_error(x, r, x->err.msg);
		return;
	}
	api_reply(x, 201, api_computers_json(&c));
}

/* GET /v1/computers */
void
api_computers_list(struct api_ctx *x, const char **arg)
{
	struct store_computer	*cs;
	size_t			 n, i;
	json_t			*arr;
	int			 r;

	if ((r = store_computer_list(x->s, &cs, &n)) != 0) {
		api_error(x, r, NULL);
		return;
	}
	arr = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(arr, api_computers_json(&cs[i]));
	free(cs);
	api_reply(x, 200, json_pack("{s:o}", "computers", arr));
}

/* GET /v1/computers/{id} */
void
api_computers_show(struct api_ctx *x, const char **arg)
{
	const char		*id = arg[0];
	struct store_computer	 c;
	struct store_run	 u;
	json_t			*j, *hj;

	if (api_computers_find(x, id, &c) != 0)
		return;
	j = api_computers_json(&c);
	if (store_run_current(x->s, id, &u) == 0)
		json_object_set_new(j, "run", json_pack("{s:I, s:I}", "id",
		    (json_int_t)u.id, "started_ms", (json_int_t)u.started_ms));
	if ((hj = api_homes_latest_json(x, id)) == NULL)
		hj = json_null();
	json_object_set_new(j, "home", hj);
	api_reply(x, 200, j);
}

int
api_computers_halt(struct api_ctx *x, struct store_computer *c,
    const char *reason, int destroy)
{
	struct store_home_rev	 h;
	struct errmsg		 ce;
	json_t	*res = NULL;
	struct errmsg	 e;
	int	 r, alive;

	memset(&ce, 0, sizeof ce);
	alive = destroy ? 0 : provider_alive(x->a->prov, c);
	/*
	 * C-13: a computer the provider cannot see may still run with
	 * unsaved work; stopping it unsaved would lose that work, so a
	 * stop (the idle one too) waits until the provider can tell.
	 */
	if (alive < 0)
		return errmsg_set(&x->err, ERR_PROVIDER_UNSURE, "the %s "
		    "provider cannot tell whether the computer runs, so its "
		    "work cannot be saved first; it is not stopped",
		    provider_name(x->a->prov));
	/*
	 * C-8: the workspace is saved first; a failed save keeps the
	 * computer running (its previous revision stays current).
	 */
	if (alive == 1 && (r = checkpoint_save(x, c, reason, &h, &ce)) != 0) {
		x->err = ce;
		return r;
	}
	/*
	 * Browsers close through DevTools first so their profiles (cookies,
	 * sessions) are on disk whole before guestd stops; a failure here
	 * only costs that, so the stop goes on.
	 */
	if (!destroy && provider_alive(x->a->prov, c) == 1) {
		r = guest_call(x->a->prov, c, "browser.quiesce",
		    json_object(), NULL, 0, &res, NULL, NULL, &e);
		json_decref(res);
		if (r != 0 && r != ERR_UNKNOWN_OP)
			log_warn("computer.quiesce_failed", "computer=%s code=%s",
			    c->id, err_name(r));
	}
	r = destroy ? provider_destroy(x->a->prov, c) :
	    provider_stop(x->a->prov, c);
	if (r != 0)
		return r;
	if ((r = run_record_ended(x->s, c->id, reason)) != 0)
		return r;
	if (destroy) {
		if ((r = checkpoint_forget(x, c->id)) != 0)
			log_warn("computer.home_forget", "computer=%s code=%s",
			    c->id, err_name(r));
		return store_computer_delete(x->s, c->id);
	}
	snprintf(c->state, sizeof c->state, "stopped");
	c->updated_ms = store_now_ms();
	if ((r = store_computer_update(x->s, c)) != 0)
		return r;
	return store_lease_delete_computer(x->s, c->id);
}

static void
api_computers_stop_delete(struct api_ctx *x, const char *id, int destroy)
{
	struct store_computer	 c;
	int64_t			 live;
	int			 r;

	if (api_computers_find(x, id, &c) != 0)
		return;
	if ((r = store_lease_count_live(x->s, id, store_now_ms(),
	    &live)) != 0) {
		api_error(x, r, NULL);
		return;
	}
	if (live > 0 && !json_is_true(json_object_get(x->body, "force"))) {
		api_error(x, ERR_LEASE_HELD, "A bot or user holds a lease on "
		    "this computer; release it or pass force.");
		return;
	}
	errmsg_clear(&x->err);
	if ((r = api_computers_halt(x, &c, destroy ? RUN_DELETED : RUN_STOPPED,
	    destroy)) != 0) {
		api_error(x, r, x->err.msg[0] != '\0' ? x->err.msg : NULL);
		return;
	}
	if (destroy)
		api_reply(x, 200, json_pack("{s:s, s:b}", "id", id, "deleted",
		    1));
	else
		api_reply(x, 200, api_computers_json(&c));
}

/* DELETE /v1/computers/{id} {force?} */
void
api_computers_delete(struct api_ctx *x, const char **arg)
{
	if (api_parse_body(x) == 0)
		api_computers_stop_delete(x, arg[0], 1);
}

/* POST /v1/computers/{id}/stop {force?} */
void
api_computers_stop(struct api_ctx *x, const char **arg)
{
	if (api_parse_body(x) == 0)
		api_computers_stop_delete(x, arg[0], 0);
}

/* POST /v1/computers/{id}/start */
void
api_computers_start(struct api_ctx *x, const char **arg)
{
	const char		*id = arg[0];
	struct store_computer	 c;
	int			 r;

	if (api_computers_find(x, id, &c) != 0)
		return;
	if ((r = api_computers_ensure_running(x, &c)) != 0) {
		api_error(x, r, x->err.msg);
		return;
	}
	api_reply(x, 200, api_computers_json(&c));
}

/* GET /v1/computers/{id}/activity?after=N&limit=M&wait_ms=W */
void
api_computers_activity(struct api_ctx *x, const char **arg)
{
	const char		*id = arg[0];
	struct store_computer	 c;
	struct store_event	*ev;
	size_t			 n, i;
	int64_t			 after, limit, wait, deadline;
	uint64_t		 seq;
	json_t			*arr;
	int			 r, waited = 0;

	if (api_computers_find(x, id, &c) != 0)
		return;
	after = api_query_int(x->q->query, "after", 0);
	limit = api_query_int(x->q->query, "limit", 100);
	if (limit < 1 || limit > 1000)
		limit = 100;
	wait = api_query_int(x->q->query, "wait_ms", 0);
	if (wait < 0)
		wait = 0;
	if (wait > API_WAIT_MAX_MS)
		wait = API_WAIT_MAX_MS;
	deadline = store_now_ms() + wait;
	for (;;) {
		/* Read the counter first: an insert after it wakes us. */
		seq = activity_seq();
		if ((r = store_event_list(x->s, id, after, (size_t)limit, &ev,
		    &n)) != 0) {
			api_error(x, r, NULL);
			return;
		}
		/* Nobody to answer: free the request's slot now. */
		if (n > 0 || store_now_ms() >= deadline ||
		    (x->q->peer_gone != NULL && *x->q->peer_gone))
			break;
		if (!waited)
			log_debug("activity.wait", "computer=%s after=%lld "
			    "wait_ms=%lld", id, (long long)after,
			    (long long)wait);
		waited = 1;
		/* Outside serve's loop (no task): answer the empty list. */
		if (activity_wait(seq, deadline) != 0)
			break;
		free(ev);
	}
	arr = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(arr, activity_json(&ev[i]));
	api_reply(x, 200, json_pack("{s:o, s:I}", "events", arr, "next",
	    (json_int_t)(n > 0 ? ev[n - 1].id : after)));
	free(ev);
}

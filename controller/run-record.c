/* SPDX-License-Identifier: MIT */
/*
 * computer_runs (run-record.h).  Rows are opened and closed inside one store
 * transaction each, so two controller processes reconciling at once never
 * open two rows for one run.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "err.h"
#include "log.h"
#include "run-record.h"

static const char *const run_reasons[] = {
	RUN_STOPPED, RUN_IDLE, RUN_ACTIVE_LIMIT, RUN_REPLACED, RUN_GONE,
	RUN_DELETED, RUN_RECONCILED, NULL
};

int
run_record_reason_valid(const char *reason)
{
	size_t	 i;

	for (i = 0; run_reasons[i] != NULL; i++)
		if (strcmp(reason, run_reasons[i]) == 0)
			return 1;
	return 0;
}

int
run_record_started(struct store *s, const char *computer)
{
	struct store_run	 u;
	int			 r;

	if ((r = store_begin(s)) != 0)
		return r;
	r = store_run_current(s, computer, &u);
	if (r == ERR_NOT_FOUND)
		r = store_run_open(s, computer, store_now_ms(), NULL);
	return store_end(s, r);
}

int
run_record_ended(struct store *s, const char *computer, const char *reason)
{
	struct store_run	 u;
	int			 r;

	if (!run_record_reason_valid(reason))
		return ERR_BAD_REQUEST;
	if ((r = store_begin(s)) != 0)
		return r;
	r = store_run_current(s, computer, &u);
	if (r == ERR_NOT_FOUND)
		r = 0;
	else if (r == 0)
		r = store_run_close(s, u.id, store_now_ms(), reason);
	return store_end(s, r);
}

/* One computer: make its open row and state agree with alive. */
static int
run_reconcile_one(struct store *s, struct store_computer *c, int alive,
    int *changed)
{
	struct store_run	 u;
	int			 r, open;

	if ((r = store_begin(s)) != 0)
		return r;
	r = store_run_current(s, c->id, &u);
	if (r != 0 && r != ERR_NOT_FOUND)
		goto out;
	open = r == 0;
	r = 0;
	if (alive && !open) {
		r = store_run_open(s, c->id, store_now_ms(), NULL);
		(*changed)++;
	} else if (!alive && open) {
		r = store_run_close(s, u.id, store_now_ms(), RUN_RECONCILED);
		(*changed)++;
	}
	if (r == 0 && strcmp(c->state, alive ? "running" : "stopped") != 0) {
		snprintf(c->state, sizeof c->state, "%s",
		    alive ? "running" : "stopped");
		c->updated_ms = store_now_ms();
		r = store_computer_update(s, c);
	}
out:
	return store_end(s, r);
}

int
run_record_reconcile(struct store *s,
    int (*alive)(const struct store_computer *, void *), void *arg,
    int *changed)
{
	struct store_computer	*cs = NULL;
	size_t			 n, i;
	int			 r, a;

	*changed = 0;
	if ((r = store_computer_list(s, &cs, &n)) != 0)
		return r;
	for (i = 0; i < n; i++) {
		if ((a = alive(&cs[i], arg)) < 0)
			continue;
		if ((r = run_reconcile_one(s, &cs[i], a, changed)) != 0)
			break;
	}
	free(cs);
	return r;
}

/* SPDX-License-Identifier: MIT */
/*
 * store + its backend, run, activity: a real SQLite file in a temp dir, or
 * a real PostgreSQL database (RAKAZO_TEST_STORE_URL; tests/unit/store-pg.sh).
 * Migrations apply once and survive reopening; rows round-trip; runs open
 * and close with endReasons; the reconciler opens and closes rows to match
 * what is alive; activity text is redacted before it is stored.
 */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "unit-tmpdir.h"
#include "unit-store.h"

#include "err.h"
#include "store.h"
#include "run-record.h"
#include "activity.h"

static int
setup(void **state)
{
	(void)state;
	if (unit_tmpdir_new("test_store") != 0)
		return -1;
	return unit_store_reset();
}

static int
teardown(void **state)
{
	(void)state;
	return unit_tmpdir_remove();
}

static struct store *
open_store(void)
{
	struct store	*s = NULL;
	struct errmsg	 err;

	assert_int_equal(store_open(&s, unit_store_url(), &err), 0);
	assert_non_null(s);
	return s;
}

static void
add_computer(struct store *s, const char *id)
{
	struct store_computer	 c;

	memset(&c, 0, sizeof c);
	snprintf(c.id, sizeof c.id, "%s", id);
	snprintf(c.provider, sizeof c.provider, "fake");
	snprintf(c.state, sizeof c.state, "stopped");
	snprintf(c.ref, sizeof c.ref, "{\"port\":1}");
	c.created_ms = c.updated_ms = c.last_used_ms = store_now_ms();
	assert_int_equal(store_computer_create(s, &c), 0);
}

/* store_end: an error rolls the frame back, 0 commits it. */
static void
test_end(void **state)
{
	struct store		*s;
	struct store_computer	 c;

	(void)state;
	s = open_store();
	assert_int_equal(store_begin(s), 0);
	add_computer(s, "gone");
	assert_int_equal(store_end(s, ERR_BUSY), ERR_BUSY);
	assert_false(store_in_tx(s));
	assert_int_equal(store_computer_get(s, "gone", &c), ERR_NOT_FOUND);
	assert_int_equal(store_begin(s), 0);
	add_computer(s, "kept");
	assert_int_equal(store_end(s, 0), 0);
	assert_false(store_in_tx(s));
	assert_int_equal(store_computer_get(s, "kept", &c), 0);
	store_free(s);
}

/*
 * A conflict inside a frame is an answer, not the frame's end: SQLite
 * carries on after it, and PostgreSQL must too (no aborted transaction).
 */
static void
test_exists_in_frame(void **state)
{
	struct store		*s;
	struct store_computer	 c;
	struct store_home_rev	 h;

	(void)state;
	s = open_store();
	assert_int_equal(store_begin(s), 0);
	add_computer(s, "one");
	memset(&c, 0, sizeof c);
	snprintf(c.id, sizeof c.id, "one");
	assert_int_equal(store_computer_create(s, &c), ERR_EXISTS);
	assert_int_equal(store_uid_add(s, "one", 200000, 1), 0);
	assert_int_equal(store_uid_add(s, "two", 200000, 1), ERR_EXISTS);
	memset(&h, 0, sizeof h);
	snprintf(h.computer, sizeof h.computer, "one");
	h.revision = 1;
	assert_int_equal(store_home_rev_add(s, &h), 0);
	assert_int_equal(store_home_rev_add(s, &h), ERR_EXISTS);
	add_computer(s, "two");
	assert_int_equal(store_end(s, 0), 0);
	assert_int_equal(store_computer_get(s, "two", &c), 0);
	assert_int_equal(store_home_rev_latest(s, "one", &h), 0);
	assert_int_equal(h.revision, 1);
	store_free(s);
}

/*
 * The health check's write commits and leaves nothing behind: the schema
 * version is the same, the frame is closed, and it can run again (its
 * probe row is gone, so no conflict).  Inside a frame it refuses.
 */
static void
test_write_check(void **state)
{
	struct store	*s;
	int64_t		 v1, v2;

	(void)state;
	s = open_store();
	assert_int_equal(store_schema_version(s, &v1), 0);
	assert_int_equal(store_write_check(s), 0);
	assert_false(store_in_tx(s));
	assert_int_equal(store_write_check(s), 0);
	assert_int_equal(store_schema_version(s, &v2), 0);
	assert_int_equal(v1, v2);
	assert_int_equal(store_begin(s), 0);
	assert_int_not_equal(store_write_check(s), 0);
	store_rollback(s);
	store_free(s);
}

static void
test_migrate_reopen(void **state)
{
	struct store	*s;
	int64_t		 v1, v2;
	struct errmsg	 err;

	s = open_store();
	assert_string_equal(store_backend(s), unit_store_backend());
	assert_int_equal(store_schema_version(s, &v1), 0);
	assert_true(v1 >= 1);
	store_free(s);
	s = open_store();
	assert_int_equal(store_schema_version(s, &v2), 0);
	assert_int_equal(v1, v2);
	assert_int_equal(store_health(s), 0);
	store_free(s);
	assert_int_equal(store_open(&s, "mysql://x/y", &err), ERR_CONFIG);
	assert_null(s);
	assert_int_equal(store_open(&s, "postgres://u:pw@127.0.0.1:1/y?x=%zz",
	    &err), ERR_CONFIG);
	assert_null(strstr(err.msg, "pw"));
	/* Nothing listens on port 1: unavailable, not a setup error. */
	assert_int_equal(store_open(&s, "postgres://127.0.0.1:1/y", &err),
	    ERR_STORE_UNAVAILABLE);
	assert_null(s);
}

static void
test_computers(void **state)
{
	struct store		*s = open_store();
	struct store_computer	 c, *all;
	size_t			 n;

	add_computer(s, "c1");
	add_computer(s, "c2");
	memset(&c, 0, sizeof c);
	snprintf(c.id, sizeof c.id, "c1");
	assert_int_equal(store_computer_create(s, &c), ERR_EXISTS);
	assert_int_equal(store_computer_get(s, "c1", &c), 0);
	assert_string_equal(c.ref, "{\"port\":1}");
	snprintf(c.state, sizeof c.state, "running");
	assert_int_equal(store_computer_update(s, &c), 0);
	assert_int_equal(store_computer_get(s, "c1", &c), 0);
	assert_string_equal(c.state, "running");
	assert_int_equal(store_computer_touch(s, "c1", 42), 0);
	assert_int_equal(store_computer_get(s, "c1", &c), 0);
	assert_int_equal(c.last_used_ms, 42);
	assert_int_equal(store_computer_list(s, &all, &n), 0);
	assert_int_equal(n, 2);
	free(all);
	assert_int_equal(store_computer_delete(s, "c2"), 0);
	assert_int_equal(store_computer_delete(s, "c2"), ERR_NOT_FOUND);
	assert_int_equal(store_computer_get(s, "c2", &c), ERR_NOT_FOUND);
	/* A name with a quote is data, not SQL. */
	add_computer(s, "x'); DROP TABLE computers; --");
	assert_int_equal(store_computer_get(s, "c1", &c), 0);
	store_free(s);
}

static void
test_runs(void **state)
{
	struct store		*s = open_store();
	struct store_run	*runs, u;
	size_t			 n;

	add_computer(s, "c1");
	assert_int_equal(run_record_started(s, "c1"), 0);
	assert_int_equal(run_record_started(s, "c1"), 0);	/* still one row */
	assert_int_equal(store_run_current(s, "c1", &u), 0);
	assert_int_equal(run_record_ended(s, "c1", "bogus"), ERR_BAD_REQUEST);
	assert_int_equal(run_record_ended(s, "c1", RUN_IDLE), 0);
	assert_int_equal(store_run_current(s, "c1", &u), ERR_NOT_FOUND);
	assert_int_equal(run_record_ended(s, "c1", RUN_STOPPED), 0);
	assert_int_equal(store_run_list(s, "c1", &runs, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(runs[0].end_reason, "idle");
	assert_true(runs[0].ended_ms >= runs[0].started_ms);
	free(runs);
	store_free(s);
}

static int
alive_by_name(const struct store_computer *c, void *arg)
{
	if (strcmp(c->id, "up") == 0)
		return 1;
	if (strcmp(c->id, "unknown") == 0)
		return -1;
	return 0;
}

static void
test_reconcile(void **state)
{
	struct store		*s = open_store();
	struct store_computer	 c;
	struct store_run	*runs;
	size_t			 n;
	int			 changed;

	add_computer(s, "up");		/* running, no row yet */
	add_computer(s, "down");	/* row open, process gone */
	add_computer(s, "unknown");
	assert_int_equal(run_record_started(s, "down"), 0);
	assert_int_equal(run_record_reconcile(s, alive_by_name, NULL, &changed), 0);
	assert_int_equal(changed, 2);
	assert_int_equal(store_computer_get(s, "up", &c), 0);
	assert_string_equal(c.state, "running");
	assert_int_equal(store_run_list(s, "down", &runs, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(runs[0].end_reason, "reconciled");
	free(runs);
	assert_int_equal(store_run_list(s, "up", &runs, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(runs[0].ended_ms, 0);
	free(runs);
	/* A second pass finds nothing to do. */
	assert_int_equal(run_record_reconcile(s, alive_by_name, NULL, &changed), 0);
	assert_int_equal(changed, 0);
	store_free(s);
}

static void
test_activity_redacted(void **state)
{
	struct store		*s = open_store();
	struct store_event	*ev;
	size_t			 n;
	json_t			*j;

	assert_int_equal(activity_command(s, "c1", "b1", "shell", 1,
	    "curl -H 'Authorization: Bearer sekrit123456' x\nline2"), 0);
	assert_int_equal(activity_command(s, "c1", "b1", "write_file", 0,
	    "write a.txt (3 bytes)"), 0);
	assert_int_equal(activity_command(s, "c2", "b1", "shell", 1, "ls"), 0);
	assert_int_equal(store_event_list(s, "c1", 0, 100, &ev, &n), 0);
	assert_int_equal(n, 2);
	assert_null(strstr(ev[0].text, "sekrit123456"));
	assert_non_null(strstr(ev[0].text, "[REDACTED]"));
	assert_null(strchr(ev[0].text, '\n'));
	assert_string_equal(ev[0].kind, "computer.command");
	assert_int_equal(ev[1].ok, 0);
	j = activity_json(&ev[1]);
	assert_string_equal(json_string_value(json_object_get(j, "tool")),
	    "write_file");
	json_decref(j);
	free(ev);
	assert_int_equal(store_event_list(s, "c1", 1, 100, &ev, &n), 0);
	assert_int_equal(n, 1);
	free(ev);
	store_free(s);
}

/* A computer keeps its uid; a deleted one's uid is never handed out again. */
static void
test_uids(void **state)
{
	struct store	*s = open_store();
	int64_t		 uid, *all;
	size_t		 n;

	assert_int_equal(store_uid_get(s, "a", &uid), ERR_NOT_FOUND);
	assert_int_equal(store_uid_add(s, "a", 200000, 1), 0);
	assert_int_equal(store_uid_add(s, "b", 200000, 1), ERR_EXISTS);
	assert_int_equal(store_uid_add(s, "a", 200001, 1), ERR_EXISTS);
	assert_int_equal(store_uid_add(s, "b", 200002, 1), 0);
	assert_int_equal(store_uid_get(s, "a", &uid), 0);
	assert_int_equal(uid, 200000);
	assert_int_equal(store_uid_retire(s, "a", 2), 0);
	assert_int_equal(store_uid_get(s, "a", &uid), ERR_NOT_FOUND);
	assert_int_equal(store_uid_add(s, "c", 200000, 3), ERR_EXISTS);
	assert_int_equal(store_uid_add(s, "a", 200001, 3), 0);
	assert_int_equal(store_uid_list(s, &all, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(all[0], 200000);
	assert_int_equal(all[1], 200001);
	assert_int_equal(all[2], 200002);
	free(all);
	store_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_migrate_reopen, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_uids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_check, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_exists_in_frame, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_computers, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reconcile, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_activity_redacted, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/*
 * lease: fenced execution and control leases over a real SQLite file, or a
 * real PostgreSQL database (RAKAZO_TEST_STORE_URL; tests/unit/store-pg.sh).
 * One holder per bot, fences only grow, expiry frees the bot, a superseded
 * lease answers STALE_FENCE, the 409 rules of C-3, and two processes
 * (fork) contending for one bot: exactly one wins.
 */
#include "autoconf.h"

#include <sys/wait.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "unit-tmpdir.h"
#include "unit-store.h"

#include "err.h"
#include "store.h"
#include "lease.h"

static int
setup(void **state)
{
	(void)state;
	if (unit_tmpdir_new("test_lease") != 0)
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
	return s;
}

/* Make lease id look expired, as time passing would. */
static void
expire(struct store *s, const char *id)
{
	struct store_lease	 l;

	assert_int_equal(store_lease_get(s, id, &l), 0);
	l.expires_ms = store_now_ms() - 1;
	assert_int_equal(store_lease_put(s, &l), 0);
}

static void
test_exclusive_and_fence(void **state)
{
	struct store		*s = open_store();
	struct store_lease	 a, b, c, x;

	assert_int_equal(lease_acquire(s, "c", "bot1", "A", 10000, 0, &a), 0);
	assert_int_equal(a.fence, 1);
	assert_int_equal(lease_acquire(s, "c", "bot1", "B", 10000, 0, &b),
	    ERR_LEASE_HELD);
	/* Another bot does not contend. */
	assert_int_equal(lease_acquire(s, "c", "bot2", "B", 10000, 0, &c), 0);
	assert_int_equal(c.fence, 1);
	assert_int_equal(lease_check(s, a.id, "c", "bot1", &x), 0);
	assert_int_equal(lease_check(s, a.id, "c", "bot2", &x),
	    ERR_LEASE_EXPIRED);
	assert_int_equal(lease_heartbeat(s, a.id, 20000, &x), 0);
	assert_true(x.expires_ms > a.expires_ms);
	/* Expiry frees the bot; the new grant has a higher fence. */
	expire(s, a.id);
	assert_int_equal(lease_heartbeat(s, a.id, 1000, &x),
	    ERR_LEASE_EXPIRED);
	assert_int_equal(lease_acquire(s, "c", "bot1", "B", 10000, 0, &b), 0);
	assert_int_equal(b.fence, 2);
	/* The old lease's id is gone with its row. */
	assert_int_equal(lease_check(s, a.id, "c", "bot1", &x),
	    ERR_LEASE_EXPIRED);
	assert_int_equal(lease_release(s, b.id), 0);
	assert_int_equal(lease_release(s, b.id), ERR_LEASE_EXPIRED);
	assert_int_equal(lease_acquire(s, "c", "bot1", "A", 10000, 0, &a), 0);
	assert_int_equal(a.fence, 3);
	store_free(s);
}

static void
test_superseded_is_stale(void **state)
{
	struct store		*s = open_store();
	struct store_lease	 a, b, x;
	struct store_bot	 bot;

	assert_int_equal(lease_acquire(s, "c", "b", "A", 10000, 0, &a), 0);
	/* Someone else's grant raised the fence (another controller). */
	assert_int_equal(store_bot_ensure(s, "c", "b", &bot), 0);
	bot.fence++;
	assert_int_equal(store_bot_update(s, &bot), 0);
	assert_int_equal(lease_check(s, a.id, "c", "b", &x), ERR_STALE_FENCE);
	assert_int_equal(lease_heartbeat(s, a.id, 1000, &b), ERR_STALE_FENCE);
	store_free(s);
}

static void
test_control_409(void **state)
{
	struct store		*s = open_store();
	struct store_lease	 run, u, u2, x;

	/* Free bot: a user takes control; the bot cannot drive then. */
	assert_int_equal(lease_acquire_control(s, "c", "b", "alice", 10000,
	    &u), 0);
	assert_int_equal(lease_acquire_control(s, "c", "b", "bob", 10000,
	    &u2), ERR_LEASE_HELD);
	assert_int_equal(lease_acquire(s, "c", "b", "agent", 10000, 0, &x),
	    ERR_LEASE_HELD);
	assert_int_equal(lease_release(s, u.id), 0);
	/* A running bot: 409 STOP_THE_BOT_FIRST. */
	assert_int_equal(lease_acquire(s, "c", "b", "agent", 10000,
	    LEASE_F_RUN, &run), 0);
	assert_int_equal(lease_acquire_control(s, "c", "b", "alice", 10000,
	    &u), ERR_STOP_THE_BOT_FIRST);
	/* ... unless the run asked for a takeover. */
	assert_int_equal(lease_request_takeover(s, "c", "b"), 0);
	assert_int_equal(lease_acquire_control(s, "c", "b", "alice", 10000,
	    &u), 0);
	assert_true(u.fence > run.fence);
	assert_int_equal(lease_release(s, u.id), 0);
	/* Ending the run frees the bot for takeover. */
	assert_int_equal(lease_release(s, run.id), 0);
	assert_int_equal(lease_acquire_control(s, "c", "b", "alice", 10000,
	    &u), 0);
	/* A live non-run execution lease also blocks takeover. */
	assert_int_equal(lease_release(s, u.id), 0);
	assert_int_equal(lease_acquire(s, "c", "b", "agent", 10000, 0, &run),
	    0);
	assert_int_equal(lease_acquire_control(s, "c", "b", "alice", 10000,
	    &u), ERR_STOP_THE_BOT_FIRST);
	assert_int_equal(lease_release(s, run.id), 0);
	/* A run whose driver vanished (lease expired) blocks nothing. */
	assert_int_equal(lease_acquire(s, "c", "b", "agent", 10000,
	    LEASE_F_RUN, &run), 0);
	expire(s, run.id);
	assert_int_equal(lease_acquire_control(s, "c", "b", "alice", 10000,
	    &u), 0);
	store_free(s);
}

/* Six processes race for one bot's lease: exactly one wins. */
#define RACERS	6

static void
test_two_processes(void **state)
{
	struct store		*s;
	struct store_lease	 l;
	int			 p[2], i, wins = 0, held = 0, st;
	pid_t			 pid[RACERS];
	char			 c;

	assert_int_equal(pipe(p), 0);
	/* Create the schema first so both children only contend on leases. */
	s = open_store();
	store_free(s);
	for (i = 0; i < RACERS; i++) {
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0) {
			char	 holder[8];
			int	 r;

			close(p[1]);
			/* Start together: both block until the pipe closes. */
			if (read(p[0], &c, 1) < 0)
				_exit(12);
			snprintf(holder, sizeof holder, "p%d", i);
			s = open_store();
			r = lease_acquire(s, "c", "bot", holder, 60000, 0, &l);
			store_free(s);
			_exit(r == 0 ? 10 : r == ERR_LEASE_HELD ? 11 : 12);
		}
	}
	close(p[0]);
	close(p[1]);
	for (i = 0; i < RACERS; i++) {
		assert_int_equal(waitpid(pid[i], &st, 0), pid[i]);
		assert_true(WIFEXITED(st));
		if (WEXITSTATUS(st) == 10)
			wins++;
		else if (WEXITSTATUS(st) == 11)
			held++;
	}
	assert_int_equal(wins, 1);
	assert_int_equal(held, RACERS - 1);
	s = open_store();
	assert_int_equal(store_lease_find(s, "c", "bot", LEASE_EXEC, &l), 0);
	assert_int_equal(l.fence, 1);
	store_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exclusive_and_fence,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_superseded_is_stale,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_control_409, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_two_processes, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

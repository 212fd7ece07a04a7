/* SPDX-License-Identifier: MIT */
/*
 * Tasks (controller/task.c) on a real lws loop: scheduling order, timers,
 * conditions, mutexes, waits on descriptors (readable, writable) and
 * processes, deep stacks, the task limit, and refusals outside a task.
 */
#include "autoconf.h"

#include <sys/socket.h>
#include <sys/wait.h>

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <libwebsockets.h>

#include "err.h"
#include "task.h"
#include "unit-loop.h"

static struct lws_context	*ctx;
static char			 trace[256];
static size_t			 ntrace;

static void
mark(char c)
{
	if (ntrace < sizeof trace - 1)
		trace[ntrace++] = c;
	trace[ntrace] = '\0';
}

static int
setup(void **state)
{
	static struct lws_protocols	 protos[2];
	struct lws_vhost		*vh;

	(void)state;
	protos[0] = task_fd_protocol;
	memset(&protos[1], 0, sizeof protos[1]);
	if (unit_loop_new(protos, &ctx, &vh) != 0)
		return -1;
	ntrace = 0;
	trace[0] = '\0';
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unit_loop_end(ctx);
	return 0;
}

static lws_sorted_usec_list_t	 tick;

static void
tick_cb(lws_sorted_usec_list_t *sul)
{
	(void)sul;
}

/*
 * One turn of the loop.  Tasks run from lws's timer pass, before it
 * polls; with nothing else armed that poll would then sit out lws's
 * 30-second default after the last task ended, so a 5 ms tick bounds it.
 */
static void
service_once(void)
{
	lws_sul_schedule(ctx, 0, &tick, tick_cb, 5 * LWS_US_PER_MS);
	assert_true(lws_service(ctx, 0) >= 0);
	lws_sul_cancel(&tick);
}

/* Serve until every task ended (bounded: a hang fails the test). */
static void
run_all(void)
{
	time_t	 end = time(NULL) + 20;

	while (task_count() > 0 && time(NULL) < end)
		service_once();
	assert_int_equal(task_count(), 0);
}

static void
t_order(void *arg)
{
	mark(*(const char *)arg);
}

static void
test_spawn_runs_in_order_later(void **state)
{
	static const char	 a = 'a', b = 'b';

	(void)state;
	assert_int_equal(task_spawn(t_order, (void *)&a), 0);
	assert_int_equal(task_spawn(t_order, (void *)&b), 0);
	/* Spawning never runs the task on the caller's stack. */
	assert_string_equal(trace, "");
	assert_int_equal(task_count(), 2);
	run_all();
	assert_string_equal(trace, "ab");
}

static void
t_sleeper(void *arg)
{
	int	 ms = *(const int *)arg;

	assert_int_equal(task_sleep(ms), 0);
	mark(ms == 10 ? 's' : 'l');
}

static void
test_sleep_wakes_by_deadline(void **state)
{
	static const int	 longer = 60, shorter = 10;

	(void)state;
	assert_int_equal(task_spawn(t_sleeper, (void *)&longer), 0);
	assert_int_equal(task_spawn(t_sleeper, (void *)&shorter), 0);
	run_all();
	assert_string_equal(trace, "sl");
}

static struct task_cond	 cv;
static int		 flag;

static void
t_waiter(void *arg)
{
	(void)arg;
	mark('w');
	while (!flag)
		assert_int_equal(task_cond_wait(&cv, -1), 0);
	mark('W');
}

static void
t_setter(void *arg)
{
	(void)arg;
	mark('s');
	flag = 1;
	task_cond_broadcast(&cv);
	/* Wakes are deferred: the waiter runs only after this task. */
	mark('S');
}

static void
test_cond_broadcast(void **state)
{
	(void)state;
	flag = 0;
	assert_int_equal(task_spawn(t_waiter, NULL), 0);
	assert_int_equal(task_spawn(t_setter, NULL), 0);
	run_all();
	assert_string_equal(trace, "wsSW");
}

static void
t_timeout(void *arg)
{
	struct task_cond	 lone;

	(void)arg;
	memset(&lone, 0, sizeof lone);
	assert_int_equal(task_cond_wait(&lone, 5), ERR_TIMEOUT);
	assert_null(LIST_FIRST(&lone.waiters));	/* unlinked after the timeout */
	mark('t');
}

static void
test_cond_timeout(void **state)
{
	(void)state;
	assert_int_equal(task_spawn(t_timeout, NULL), 0);
	run_all();
	assert_string_equal(trace, "t");
}

static struct task_mutex	 mu;
static int			 inside;

static void
t_locker(void *arg)
{
	(void)arg;
	assert_int_equal(task_mutex_lock(&mu, -1), 0);
	assert_int_equal(inside, 0);
	inside = 1;
	mark('+');
	assert_int_equal(task_sleep(2), 0);	/* others try meanwhile */
	mark('-');
	inside = 0;
	task_mutex_unlock(&mu);
}

static void
test_mutex_excludes(void **state)
{
	int	 i;

	(void)state;
	for (i = 0; i < 3; i++)
		assert_int_equal(task_spawn(t_locker, NULL), 0);
	run_all();
	assert_string_equal(trace, "+-+-+-");
}

static int	 pipefd[2], pipe2fd[2];

static void
t_reader(void *arg)
{
	char	 c = 0;

	(void)arg;
	assert_int_equal(task_wait_fd(pipefd[0], 5000), 0);
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	mark(c);
}

static void
t_writer(void *arg)
{
	(void)arg;
	mark('w');
	assert_int_equal(write(pipefd[1], "r", 1), 1);
}

static void
test_wait_fd(void **state)
{
	(void)state;
	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(task_spawn(t_reader, NULL), 0);
	assert_int_equal(task_spawn(t_writer, NULL), 0);
	run_all();
	assert_string_equal(trace, "wr");
	close(pipefd[0]);
	close(pipefd[1]);
}

static void
t_fd_timeout(void *arg)
{
	(void)arg;
	assert_int_equal(task_wait_fd(pipefd[0], 5), ERR_TIMEOUT);
	/* The watch is gone: a later byte wakes nobody, and a new wait
	 * sees it. */
	assert_int_equal(write(pipefd[1], "x", 1), 1);
	assert_int_equal(task_wait_fd(pipefd[0], 5000), 0);
	mark('t');
}

static void
test_wait_fd_timeout(void **state)
{
	(void)state;
	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(task_spawn(t_fd_timeout, NULL), 0);
	run_all();
	assert_string_equal(trace, "t");
	close(pipefd[0]);
	close(pipefd[1]);
}

/*
 * A kept descriptor: waits again and again on one adoption; a byte that
 * comes while nobody waits takes it off the loop (the task sleeping
 * meanwhile proves the loop kept turning), and the next wait still sees
 * that byte; the writable side wakes an out wait.
 */
static void
t_keep(void *arg)
{
	struct task_keep	*k, *w;
	char			 c;
	int			 i;

	(void)arg;
	assert_non_null(k = task_keep_new(pipefd[0]));
	assert_int_equal(task_keep_wait(k, 0, 5), ERR_TIMEOUT);
	for (i = 0; i < 3; i++) {
		assert_int_equal(write(pipefd[1], "k", 1), 1);
		assert_int_equal(task_keep_wait(k, 0, 5000), 0);
		assert_int_equal(read(pipefd[0], &c, 1), 1);
	}
	assert_int_equal(write(pipefd[1], "q", 1), 1);
	assert_int_equal(task_sleep(30), 0);
	assert_int_equal(task_keep_wait(k, 0, 5000), 0);
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	assert_int_equal(c, 'q');
	assert_non_null(w = task_keep_new(pipefd[1]));
	assert_int_equal(task_keep_wait(w, 1, 5000), 0);
	task_keep_free(w);
	task_keep_free(k);
	mark('k');
}

static void
test_keep(void **state)
{
	(void)state;
	assert_null(task_keep_new(-1));
	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(task_spawn(t_keep, NULL), 0);
	run_all();
	assert_string_equal(trace, "k");
	close(pipefd[0]);
	close(pipefd[1]);
}

static void
t_two(void *arg)
{
	int	 fds[2], which = -1;

	(void)arg;
	fds[0] = pipefd[0];
	fds[1] = pipe2fd[0];
	assert_int_equal(task_wait_fds(fds, 2, 5000, &which), 0);
	assert_int_equal(which, 1);
	mark('2');
}

static void
t_write_second(void *arg)
{
	(void)arg;
	assert_int_equal(write(pipe2fd[1], "y", 1), 1);
}

static void
test_wait_fds_which(void **state)
{
	(void)state;
	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(pipe(pipe2fd), 0);
	assert_int_equal(task_spawn(t_two, NULL), 0);
	assert_int_equal(task_spawn(t_write_second, NULL), 0);
	run_all();
	assert_string_equal(trace, "2");
	close(pipefd[0]);
	close(pipefd[1]);
	close(pipe2fd[0]);
	close(pipe2fd[1]);
}

/*
 * task_wait_fd_out: a socket whose send buffer is full (and that has
 * nothing to read) waits; drained, it is writable.
 */
static int	 spfd[2];

static void
t_drain(void *arg)
{
	char	 b[65536];

	(void)arg;
	while (read(spfd[1], b, sizeof b) > 0)
		;
	mark('d');
}

static void
t_writable(void *arg)
{
	char	 b[4096];

	(void)arg;
	memset(b, 'x', sizeof b);
	while (write(spfd[0], b, sizeof b) > 0)
		;
	assert_int_equal(task_wait_fd_out(spfd[0], 20), ERR_TIMEOUT);
	assert_int_equal(task_spawn(t_drain, NULL), 0);
	assert_int_equal(task_wait_fd_out(spfd[0], 5000), 0);
	mark('w');
}

static void
test_wait_fd_out(void **state)
{
	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    spfd), 0);
	assert_int_equal(task_spawn(t_writable, NULL), 0);
	run_all();
	assert_string_equal(trace, "dw");
	close(spfd[0]);
	close(spfd[1]);
}

static pid_t	 child;

static void
t_pid(void *arg)
{
	int	 st = 0;

	(void)arg;
	assert_int_equal(task_wait_pid(child, 10000), 0);
	assert_int_equal(waitpid(child, &st, WNOHANG), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	mark('p');
}

static void
test_wait_pid(void **state)
{
	int	 go[2];
	char	 c;

	(void)state;
	assert_int_equal(pipe(go), 0);
	if ((child = fork()) == 0) {
		close(go[1]);
		/* Exit only when the parent says so: it waits first. */
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(7);
	}
	close(go[0]);
	assert_int_equal(task_spawn(t_pid, NULL), 0);
	service_once();		/* the task starts waiting */
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[1]);
	run_all();
	assert_string_equal(trace, "p");
}

static unsigned
deep(unsigned n)
{
	volatile char	 pad[1024];

	pad[0] = (char)n;
	pad[sizeof pad - 1] = (char)n;
	if (n == 0)
		return (unsigned)pad[0];
	return deep(n - 1) + (unsigned char)pad[sizeof pad - 1] % 2;
}

static void
t_deep(void *arg)
{
	(void)arg;
	/* ~400 KiB of frames: jansson and SQLite recurse too. */
	(void)deep(384);
	assert_int_equal(task_sleep(0), 0);	/* and it survives a switch */
	mark('d');
}

static void
test_deep_stack(void **state)
{
	(void)state;
	assert_int_equal(task_spawn(t_deep, NULL), 0);
	run_all();
	assert_string_equal(trace, "d");
}

static void
t_nothing(void *arg)
{
	(void)arg;
}

static void
test_limit_and_outside(void **state)
{
	int	 i;

	(void)state;
	assert_null(task_self());
	assert_int_equal(task_sleep(1), ERR_INTERNAL);
	assert_int_equal(task_cond_wait(&cv, 1), ERR_INTERNAL);
	assert_int_equal(task_wait_fd(0, 1), ERR_INTERNAL);
	for (i = 0; i < TASK_MAX; i++)
		assert_int_equal(task_spawn(t_nothing, NULL), 0);
	assert_int_equal(task_spawn(t_nothing, NULL), ERR_BUSY);
	run_all();
	assert_int_equal(task_spawn(t_nothing, NULL), 0);
	run_all();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_spawn_runs_in_order_later,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_sleep_wakes_by_deadline,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_cond_broadcast, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cond_timeout, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_mutex_excludes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_wait_fd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_fd_timeout, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_keep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_fds_which, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_wait_fd_out, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_wait_pid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deep_stack, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_limit_and_outside, setup,
		    teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

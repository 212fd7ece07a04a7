/* SPDX-License-Identifier: MIT */
/*
 * log: lines have the documented shape, the level filter holds, secrets
 * are masked on the way out, one event is one line, and log_quote quotes
 * exactly when needed and stays in bounds; fatal() reports through the
 * log once it is set up.
 */
#define _GNU_SOURCE
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "xmalloc.h"

static int	 pfd[2];

static int
setup(void **state)
{
	if (pipe2(pfd, O_NONBLOCK) != 0)
		return -1;
	log_init("testd", LOG_LVL_INFO);
	log_set_fd(pfd[1]);
	return 0;
}

static int
teardown(void **state)
{
	log_set_fd(2);
	close(pfd[0]);
	close(pfd[1]);
	return 0;
}

/* Everything written so far (the pipe is non-blocking). */
static char *
drain(void)
{
	static char	 buf[65536];
	ssize_t		 n;
	size_t		 len = 0;

	while (len < sizeof(buf) - 1 &&
	    (n = read(pfd[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	return buf;
}

static void
test_format(void **state)
{
	char	*s;
	size_t	 n;

	log_info("exec.start", "id=%d pid=%d", 7, 1234);
	s = drain();
	n = strlen(s);
	assert_true(n > 0);
	assert_int_equal(s[n - 1], '\n');
	assert_non_null(strchr(s, '\n'));
	assert_ptr_equal(strchr(s, '\n'), s + n - 1);
	/* ts=2026-11-29T17:50:51.123Z */
	assert_memory_equal(s, "ts=", 3);
	assert_int_equal(s[7], '-');
	assert_int_equal(s[13], 'T');
	assert_int_equal(s[22], '.');
	assert_int_equal(s[26], 'Z');
	assert_string_equal(s + 27,
	    " level=info ident=testd event=exec.start id=7 pid=1234\n");

	log_warn("bare", "%s", "");
	s = drain();
	assert_non_null(strstr(s, " level=warn ident=testd event=bare\n"));
}

static void
test_levels(void **state)
{
	log_debug("hidden", "x=1");
	assert_string_equal(drain(), "");
	log_set_level(LOG_LVL_DEBUG);
	log_debug("shown", "x=1");
	assert_non_null(strstr(drain(), "level=debug"));
	log_set_level(LOG_LVL_ERROR);
	log_warn("hidden", "x=1");
	log_info("hidden", "x=1");
	assert_string_equal(drain(), "");
	log_error("shown", "x=1");
	assert_non_null(strstr(drain(), "level=error"));
	log_set_level(LOG_LVL_INFO);

	assert_int_equal(log_level_parse("error"), LOG_LVL_ERROR);
	assert_int_equal(log_level_parse("WARN"), LOG_LVL_WARN);
	assert_int_equal(log_level_parse("info"), LOG_LVL_INFO);
	assert_int_equal(log_level_parse("debug"), LOG_LVL_DEBUG);
	assert_int_equal(log_level_parse("loud"), -1);
	assert_int_equal(log_level_parse(NULL), -1);
}

static void
test_redacted(void **state)
{
	char	*s;

	log_info("req", "token=abc user=bob");
	s = drain();
	assert_non_null(strstr(s, "token=[REDACTED] user=bob\n"));
	assert_null(strstr(s, "abc"));

	log_info("req", "hdr=\"Authorization: Bearer x\" n=1");
	s = drain();
	assert_non_null(strstr(s, "Authorization: [REDACTED]"));
	assert_null(strstr(s, "Bearer x"));

	log_info("req", "url=https://u:p4ss@h/screen/T0k3n");
	s = drain();
	assert_null(strstr(s, "p4ss"));
	assert_null(strstr(s, "T0k3n"));
}

static void
test_one_line(void **state)
{
	char	 big[6000], *s;

	/* A raw newline in a value cannot forge a second event. */
	log_info("x", "msg=a\nts=fake level=error");
	s = drain();
	assert_ptr_equal(strchr(s, '\n'), s + strlen(s) - 1);

	/* Overlong lines are cut but still end in one newline. */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_info("big", "v=%s", big);
	s = drain();
	assert_true(strlen(s) < sizeof(big));
	assert_ptr_equal(strchr(s, '\n'), s + strlen(s) - 1);
}

static void
test_errno_kept(void **state)
{
	errno = ENOENT;
	log_info("x", "y=1");
	assert_int_equal(errno, ENOENT);
	drain();
}

static void
test_quote(void **state)
{
	char	 q[64];
	size_t	 i;

	assert_string_equal(log_quote(q, sizeof(q), "plain"), "plain");
	assert_string_equal(log_quote(q, sizeof(q), ""), "\"\"");
	assert_string_equal(log_quote(q, sizeof(q), "a b"), "\"a b\"");
	assert_string_equal(log_quote(q, sizeof(q), "say \"hi\"\\"),
	    "\"say \\\"hi\\\"\\\\\"");
	assert_string_equal(log_quote(q, sizeof(q), "l1\nl2\t\x01"),
	    "\"l1\\nl2\\t\\x01\"");
	assert_string_equal(log_quote(q, sizeof(q), "k=v"), "\"k=v\"");
	assert_string_equal(log_quote(q, 6, "abcdefgh"), "abcde");
	assert_string_equal(log_quote(q, 6, "a b c d"), "\"a b\"");
	/* An escape is never cut in half. */
	assert_string_equal(log_quote(q, 5, "a\"b"), "\"a\"");
	assert_string_equal(log_quote(q, 2, "a b"), "");
	for (i = 1; i < 12; i++) {
		memset(q, 'Z', sizeof(q));
		log_quote(q, i, "x \"y\" \n z");
		assert_true(strlen(q) < i);
		assert_int_equal(q[i], 'Z');
	}
	q[0] = 'Z';
	log_quote(q, 0, "x");
	assert_int_equal(q[0], 'Z');
}

static void
test_xalloc(void **state)
{
	char	*p;

	p = xstrndup("abcdef", 3);
	assert_string_equal(p, "abc");
	p = xrealloc(p, 100);
	assert_string_equal(p, "abc");
	free(p);
	p = xcalloc(4, 4);
	assert_memory_equal(p, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
	free(p);
	p = xstrdup("q");
	assert_string_equal(p, "q");
	free(p);
	free(xmalloc(0));
}

/* xmalloc.c sits below the log; log_init() routes fatal() through it. */
static void
test_fatal(void **state)
{
	char	*s;
	pid_t	 pid;
	int	 st;

	if ((pid = fork()) == 0)
		fatal("broken with token=abc");
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	s = drain();
	assert_non_null(strstr(s, " level=error ident=testd event=fatal msg="));
	assert_non_null(strstr(s, "token=[REDACTED]"));
	assert_null(strstr(s, "abc"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_redacted),
		cmocka_unit_test(test_one_line),
		cmocka_unit_test(test_errno_kept),
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_xalloc),
		cmocka_unit_test(test_fatal),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of guestd/exec.c's pure parts: the UTF-8 repair that makes
 * command output valid JSON strings, environment names, and the argument
 * checks that refuse a request before anything is spawned.  The module is
 * included whole so its static helpers can be reached; spawning, timeouts
 * and cancels are covered by tests/integration/exec-*.sh.
 */
#include "exec.c"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

struct guestd_settings guestd;

static void
utf8_is(const char *in, size_t n, const char *want)
{
	json_t	*j = exec_utf8_string((const uint8_t *)in, n);

	assert_non_null(j);
	assert_int_equal(json_string_length(j), strlen(want));
	assert_memory_equal(json_string_value(j), want, strlen(want));
	json_decref(j);
}

#define FFFD	"\xef\xbf\xbd"

static void
test_utf8_valid(void **state)
{
	utf8_is("", 0, "");
	utf8_is("plain ascii\n", 12, "plain ascii\n");
	utf8_is("h\xc3\xa9llo", 6, "h\xc3\xa9llo");
	utf8_is("\xe2\x82\xac", 3, "\xe2\x82\xac");		/* U+20AC */
	utf8_is("\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80");	/* U+1F600 */
	utf8_is("\xf4\x8f\xbf\xbf", 4, "\xf4\x8f\xbf\xbf");	/* U+10FFFF */
	utf8_is("\xef\xbf\xbd", 3, FFFD);
}

static void
test_utf8_invalid(void **state)
{
	utf8_is("a\xff" "b", 3, "a" FFFD "b");
	/* Overlong forms, one replacement per byte. */
	utf8_is("\xc0\xaf", 2, FFFD FFFD);
	utf8_is("\xe0\x80\xaf", 3, FFFD FFFD FFFD);
	utf8_is("\xf0\x80\x80\xaf", 4, FFFD FFFD FFFD FFFD);
	/* Surrogates and beyond U+10FFFF. */
	utf8_is("\xed\xa0\x80", 3, FFFD FFFD FFFD);
	utf8_is("\xf4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD);
	/* A lone continuation byte, a sequence cut by the end. */
	utf8_is("\x80x", 2, FFFD "x");
	utf8_is("x\xe2\x82", 3, "x" FFFD FFFD);
	/* A lead byte followed by ASCII keeps the ASCII. */
	utf8_is("\xc3(", 2, FFFD "(");
}

static void
test_utf8_nul(void **state)
{
	json_t	*j = exec_utf8_string((const uint8_t *)"a\0b", 3);

	/* A NUL is U+FFFD: the protocol's JSON strings hold none, and the
	 * controller refuses a reply with one. */
	assert_non_null(j);
	assert_int_equal(json_string_length(j), 5);
	assert_memory_equal(json_string_value(j), "a" FFFD "b", 5);
	json_decref(j);
}

static void
test_env_names(void **state)
{
	char	 name[EXEC_MAX_ENV_NAME + 2];

	assert_true(exec_env_name_ok("PATH"));
	assert_true(exec_env_name_ok("_x1"));
	assert_false(exec_env_name_ok(""));
	assert_false(exec_env_name_ok("1A"));
	assert_false(exec_env_name_ok("A-B"));
	assert_false(exec_env_name_ok("A=B"));
	assert_false(exec_env_name_ok("\xc3\xa9"));
	memset(name, 'A', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_false(exec_env_name_ok(name));
	name[EXEC_MAX_ENV_NAME] = '\0';
	assert_true(exec_env_name_ok(name));
}

static void
env_has(char **envp, const char *want)
{
	size_t	 i;

	for (i = 0; envp[i] != NULL; i++)
		if (strcmp(envp[i], want) == 0)
			return;
	fail_msg("%s missing", want);
}

static void
test_env_build(void **state)
{
	struct exec_args a;
	char		**envp;
	size_t		 n;

	memset(&a, 0, sizeof(a));
	a.bot = "alice";
	a.env = json_pack("{s:s, s:s}", "PATH", "/x", "FOO", "a=b c");
	envp = exec_env_build(&a);
	env_has(envp, "HOME=/ws");
	env_has(envp, "USER=u");
	env_has(envp, "RAKAZO_BOT=alice");
	env_has(envp, "PATH=/x");	/* the caller's wins */
	env_has(envp, "FOO=a=b c");
	for (n = 0; envp[n] != NULL; n++)
		assert_false(strncmp(envp[n], "PATH=/usr", 9) == 0);
	assert_int_equal(n, 10);
	exec_env_free(envp);
	json_decref(a.env);
}

static int
parse(const char *js, struct exec_args *a, char *detail, size_t len)
{
	json_t	*args = json_loads(js, 0, NULL);
	int	 r;

	assert_non_null(args);
	r = exec_parse(args, a, detail, len);
	json_decref(args);
	return r;
}

static void
test_parse(void **state)
{
	struct exec_args a;
	char		 d[256];

	assert_int_equal(parse("{\"command\":\"true\"}", &a, d, sizeof(d)), 0);
	assert_int_equal(a.timeout_ms, EXEC_DEF_TIMEOUT_MS);
	assert_int_equal(a.output_limit, EXEC_DEF_OUTPUT);
	assert_false(a.has_in);
	assert_int_equal(parse("{\"command\":\"x\",\"stdin\":\"\"}", &a, d,
	    sizeof(d)), 0);
	assert_true(a.has_in);
	assert_int_equal(a.inlen, 0);

	assert_int_equal(parse("{}", &a, d, sizeof(d)), ERR_BAD_REQUEST);
	assert_int_equal(parse("{\"command\":\"\"}", &a, d, sizeof(d)),
	    ERR_BAD_REQUEST);
	assert_int_equal(parse("{\"command\":\"x\",\"nope\":1}", &a, d,
	    sizeof(d)), ERR_BAD_REQUEST);
	assert_int_equal(parse("{\"command\":\"x\",\"timeout_ms\":0}", &a, d,
	    sizeof(d)), ERR_BAD_REQUEST);
	assert_int_equal(parse("{\"command\":\"x\",\"timeout_ms\":100001}", &a,
	    d, sizeof(d)), ERR_BAD_REQUEST);
	assert_int_equal(parse("{\"command\":\"x\",\"output_limit\":2000001}",
	    &a, d, sizeof(d)), ERR_BAD_REQUEST);
	assert_int_equal(parse("{\"command\":\"x\",\"env\":{\"1X\":\"v\"}}", &a,
	    d, sizeof(d)), ERR_BAD_REQUEST);
	assert_int_equal(parse("{\"command\":\"x\",\"env\":{\"X\":1}}", &a,
	    d, sizeof(d)), ERR_BAD_REQUEST);
	assert_int_equal(parse("{\"command\":\"x\",\"stdin\":5}", &a, d,
	    sizeof(d)), ERR_BAD_REQUEST);
	assert_int_equal(parse("{\"command\":\"x\",\"bot\":\"../x\"}", &a, d,
	    sizeof(d)), ERR_INVALID_BOT);
	assert_int_equal(parse("{\"command\":\"x\",\"stream\":\"yes\"}", &a, d,
	    sizeof(d)), ERR_BAD_REQUEST);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8_valid),
		cmocka_unit_test(test_utf8_invalid),
		cmocka_unit_test(test_utf8_nul),
		cmocka_unit_test(test_env_names),
		cmocka_unit_test(test_env_build),
		cmocka_unit_test(test_parse),
	};

	guestd.workspace = "/ws";
	guestd.user = "u";
	guestd.shell = "/bin/bash";
	guestd.exec_max_output = 2000000;
	guestd.exec_max_timeout_ms = 100000;
	guestd.exec_max_running = 4;
	return cmocka_run_group_tests(tests, NULL, NULL);
}

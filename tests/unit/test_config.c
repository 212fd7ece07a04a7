/* SPDX-License-Identifier: MIT */
/*
 * config: flags in both spellings, environment fallback and precedence,
 * typed values with bounds, sizes, host:port, and error sentences that
 * name the flag but never echo a secret value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "err.h"

struct settings {
	const char	*listen;
	const char	*token;
	int64_t		 workers;
	int		 verbose;
	uint64_t	 max;
};

static void
table(struct config_opt *o, struct settings *s)
{
	struct config_opt t[] = {
		{ "listen", "TEST_LISTEN", CONFIG_STR, &s->listen, 0, 0, "" },
		{ "token", "TEST_TOKEN", CONFIG_STR, &s->token, 0, 0, "" },
		{ "workers", "TEST_WORKERS", CONFIG_INT, &s->workers, 1, 64,
		    "" },
		{ "verbose", "TEST_VERBOSE", CONFIG_BOOL, &s->verbose, 0, 0,
		    "" },
		{ "max-size", "TEST_MAX", CONFIG_SIZE, &s->max, 1, 1 << 30,
		    "" },
	};

	memcpy(o, t, sizeof(t));
	memset(s, 0, sizeof(*s));
	s->listen = "default";
	s->workers = 4;
}

static int
run(struct settings *s, int *next, struct errmsg *err, char **argv)
{
	struct config_opt	 o[5];
	int			 argc = 0;

	table(o, s);
	while (argv[argc] != NULL)
		argc++;
	return config_parse(o, 5, argc, argv, next, err);
}

static int
setup(void **state)
{
	unsetenv("TEST_LISTEN");
	unsetenv("TEST_TOKEN");
	unsetenv("TEST_WORKERS");
	unsetenv("TEST_VERBOSE");
	unsetenv("TEST_MAX");
	return 0;
}

static void
test_flags(void **state)
{
	char		*argv[] = { "prog", "--listen", "1.2.3.4:5",
	    "--workers=8", "--verbose", "--max-size", "64M", "rest", "--x",
	    NULL };
	struct settings	 s;
	struct errmsg	 err;
	int		 next = -1;

	assert_int_equal(run(&s, &next, &err, argv), 0);
	assert_string_equal(s.listen, "1.2.3.4:5");
	assert_int_equal(s.workers, 8);
	assert_int_equal(s.verbose, 1);
	assert_int_equal(s.max, 64ULL << 20);
	assert_null(s.token);
	assert_int_equal(next, 7);
}

static void
test_double_dash(void **state)
{
	char		*argv[] = { "prog", "--verbose", "--", "--workers=1",
	    NULL };
	char		*none[] = { "prog", NULL };
	struct settings	 s;
	struct errmsg	 err;
	int		 next = -1;

	assert_int_equal(run(&s, &next, &err, argv), 0);
	assert_int_equal(next, 3);
	assert_int_equal(s.workers, 4);
	/* Parsing twice works: getopt state is reset. */
	assert_int_equal(run(&s, &next, &err, argv), 0);
	assert_int_equal(next, 3);
	assert_int_equal(run(&s, &next, &err, none), 0);
	assert_int_equal(next, 1);
	assert_string_equal(s.listen, "default");
}

static void
test_env(void **state)
{
	char		*argv[] = { "prog", "--workers", "2", NULL };
	struct settings	 s;
	struct errmsg	 err;
	int		 next;

	setenv("TEST_LISTEN", "[::1]:80", 1);
	setenv("TEST_WORKERS", "not-a-number", 1);
	setenv("TEST_VERBOSE", "true", 1);
	/* The flag wins, so the bad TEST_WORKERS is never looked at. */
	assert_int_equal(run(&s, &next, &err, argv), 0);
	assert_string_equal(s.listen, "[::1]:80");
	assert_int_equal(s.workers, 2);
	assert_int_equal(s.verbose, 1);
	setup(state);
}

static void
test_env_errors(void **state)
{
	char		*argv[] = { "prog", NULL };
	struct settings	 s;
	struct errmsg	 err;
	int		 next;

	setenv("TEST_MAX", "2G", 1);
	assert_int_equal(run(&s, &next, &err, argv), ERR_CONFIG);
	assert_non_null(strstr(err.msg, "TEST_MAX"));
	assert_non_null(strstr(err.msg, "2G"));
	setup(state);
	setenv("TEST_VERBOSE", "maybe", 1);
	assert_int_equal(run(&s, &next, &err, argv), ERR_CONFIG);
	assert_non_null(strstr(err.msg, "TEST_VERBOSE"));
	setup(state);
	setenv("TEST_VERBOSE", "0", 1);
	assert_int_equal(run(&s, &next, &err, argv), 0);
	assert_int_equal(s.verbose, 0);
	setup(state);
}

static void
test_flag_errors(void **state)
{
	char		*a1[] = { "prog", "--workers=0", NULL };
	char		*a2[] = { "prog", "--workers", "12x", NULL };
	char		*a3[] = { "prog", "--listen", NULL };
	char		*a4[] = { "prog", "--bogus=val", NULL };
	char		*a5[] = { "prog", "--verbose=1", NULL };
	char		*a6[] = { "prog", "--max-size", "10Q", NULL };
	struct settings	 s;
	struct errmsg	 err;
	int		 next;

	assert_int_equal(run(&s, &next, &err, a1), ERR_CONFIG);
	assert_non_null(strstr(err.msg, "--workers"));
	assert_non_null(strstr(err.msg, "1 to 64"));
	assert_int_equal(run(&s, &next, &err, a2), ERR_CONFIG);
	assert_non_null(strstr(err.msg, "\"12x\""));
	assert_int_equal(run(&s, &next, &err, a3), ERR_CONFIG);
	assert_non_null(strstr(err.msg, "--listen"));
	assert_int_equal(run(&s, &next, &err, a4), ERR_CONFIG);
	assert_non_null(strstr(err.msg, "--bogus"));
	assert_null(strstr(err.msg, "val"));
	assert_int_equal(run(&s, &next, &err, a5), ERR_CONFIG);
	assert_non_null(strstr(err.msg, "--verbose"));
	assert_int_equal(run(&s, &next, &err, a6), ERR_CONFIG);
	assert_non_null(strstr(err.msg, "--max-size"));
}

static void
test_secret_not_echoed(void **state)
{
	struct config_opt	 o[1];
	int64_t			 v = 0;
	char			*argv[] = { "prog", "--api-key=hunter2", NULL };
	struct errmsg		 err;
	int			 next;

	o[0] = (struct config_opt){ "api-key", "TEST_API_KEY", CONFIG_INT,
	    &v, 0, 10, "" };
	assert_int_equal(config_parse(o, 1, 2, argv, &next, &err),
	    ERR_CONFIG);
	assert_non_null(strstr(err.msg, "--api-key"));
	assert_null(strstr(err.msg, "hunter2"));
}

static void
test_size(void **state)
{
	uint64_t	 v = 7;

	assert_int_equal(config_parse_size("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(config_parse_size("10K", &v), 0);
	assert_int_equal(v, 10240);
	assert_int_equal(config_parse_size("64M", &v), 0);
	assert_int_equal(v, 64ULL * 1024 * 1024);
	assert_int_equal(config_parse_size("2G", &v), 0);
	assert_int_equal(v, 2ULL << 30);
	assert_int_equal(config_parse_size("123", &v), 0);
	assert_int_equal(v, 123);
	assert_int_equal(config_parse_size("18446744073709551615", &v), 0);
	assert_int_equal(v, UINT64_MAX);
	v = 7;
	assert_int_equal(config_parse_size("18446744073709551616", &v),
	    ERR_CONFIG);
	assert_int_equal(config_parse_size("17179869184G", &v), ERR_CONFIG);
	assert_int_equal(config_parse_size("", &v), ERR_CONFIG);
	assert_int_equal(config_parse_size("K", &v), ERR_CONFIG);
	assert_int_equal(config_parse_size("-1", &v), ERR_CONFIG);
	assert_int_equal(config_parse_size(" 1", &v), ERR_CONFIG);
	assert_int_equal(config_parse_size("1KB", &v), ERR_CONFIG);
	assert_int_equal(config_parse_size("1T", &v), ERR_CONFIG);
	assert_int_equal(v, 7);
}

static void
test_hostport(void **state)
{
	char	 h[64];
	int	 port = -1;

	assert_int_equal(config_parse_hostport("127.0.0.1:0", h, sizeof(h),
	    &port), 0);
	assert_string_equal(h, "127.0.0.1");
	assert_int_equal(port, 0);
	assert_int_equal(config_parse_hostport("[::1]:80", h, sizeof(h),
	    &port), 0);
	assert_string_equal(h, "::1");
	assert_int_equal(port, 80);
	assert_int_equal(config_parse_hostport("localhost:65535", h,
	    sizeof(h), &port), 0);
	assert_string_equal(h, "localhost");
	assert_int_equal(port, 65535);

	assert_int_equal(config_parse_hostport("h:65536", h, sizeof(h),
	    &port), ERR_CONFIG);
	assert_int_equal(config_parse_hostport("h:-1", h, sizeof(h), &port),
	    ERR_CONFIG);
	assert_int_equal(config_parse_hostport("h:", h, sizeof(h), &port),
	    ERR_CONFIG);
	assert_int_equal(config_parse_hostport("h", h, sizeof(h), &port),
	    ERR_CONFIG);
	assert_int_equal(config_parse_hostport(":80", h, sizeof(h), &port),
	    ERR_CONFIG);
	assert_int_equal(config_parse_hostport("::1:80", h, sizeof(h),
	    &port), ERR_CONFIG);
	assert_int_equal(config_parse_hostport("[::1]80", h, sizeof(h),
	    &port), ERR_CONFIG);
	assert_int_equal(config_parse_hostport("[::1:80", h, sizeof(h),
	    &port), ERR_CONFIG);
	assert_int_equal(config_parse_hostport("h:80x", h, sizeof(h), &port),
	    ERR_CONFIG);
	assert_int_equal(config_parse_hostport("h:0000080", h, sizeof(h),
	    &port), ERR_CONFIG);
	assert_int_equal(config_parse_hostport("longhostname:1", h, 5,
	    &port), ERR_CONFIG);
	assert_int_equal(config_parse_hostport("a b:1", h, sizeof(h), &port),
	    ERR_CONFIG);
	assert_int_equal(port, 65535);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_flags, setup),
		cmocka_unit_test_setup(test_double_dash, setup),
		cmocka_unit_test_setup(test_env, setup),
		cmocka_unit_test_setup(test_env_errors, setup),
		cmocka_unit_test_setup(test_flag_errors, setup),
		cmocka_unit_test_setup(test_secret_not_echoed, setup),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_hostport),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

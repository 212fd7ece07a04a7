/* SPDX-License-Identifier: MIT */
/*
 * err: every code has a distinct stable NAME and a sentence, unknown codes
 * read as INTERNAL, and errno values map to the codes clients expect.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "err.h"

static void
test_names_distinct_upper(void **state)
{
	const char	*names[128];
	const char	*n, *m, *p;
	int		 code, i, k = 0;

	for (code = -1; code > ERR__LAST; code--) {
		n = err_name(code);
		m = err_message(code);
		assert_non_null(n);
		assert_non_null(m);
		assert_true(strlen(n) > 0);
		assert_true(strlen(m) > 1);
		assert_int_equal(m[strlen(m) - 1], '.');
		for (p = n; *p != '\0'; p++)
			assert_true((*p >= 'A' && *p <= 'Z') || *p == '_');
		for (i = 0; i < k; i++)
			assert_string_not_equal(names[i], n);
		names[k++] = n;
	}
	assert_int_equal(k, -ERR__LAST - 1);
}

static void
test_known_names(void **state)
{
	assert_string_equal(err_name(ERR_PATH_OUTSIDE),
	    "PATH_OUTSIDE_WORKSPACE");
	assert_string_equal(err_message(ERR_PATH_OUTSIDE),
	    "The path leads outside the workspace.");
	assert_string_equal(err_name(ERR_NOMEM), "OUT_OF_MEMORY");
	assert_string_equal(err_name(ERR_EXISTS), "ALREADY_EXISTS");
	assert_string_equal(err_name(ERR_RANGE), "RANGE_INVALID");
	assert_string_equal(err_name(ERR_CONFIG), "CONFIG_INVALID");
}

static void
test_unknown_codes(void **state)
{
	assert_string_equal(err_name(ERR__LAST), "INTERNAL");
	assert_string_equal(err_name(ERR__LAST - 1), "INTERNAL");
	assert_string_equal(err_name(1), "INTERNAL");
	assert_string_equal(err_name(-100000), "INTERNAL");
	assert_string_equal(err_message(5), err_message(ERR_INTERNAL));
}

static void
test_from_errno(void **state)
{
	assert_int_equal(err_from_errno(ENOENT), ERR_NOT_FOUND);
	assert_int_equal(err_from_errno(EEXIST), ERR_EXISTS);
	assert_int_equal(err_from_errno(ENOTDIR), ERR_NOT_DIR);
	assert_int_equal(err_from_errno(EISDIR), ERR_IS_DIR);
	assert_int_equal(err_from_errno(EACCES), ERR_PERMISSION);
	assert_int_equal(err_from_errno(EPERM), ERR_PERMISSION);
	assert_int_equal(err_from_errno(ENOSPC), ERR_NO_SPACE);
	assert_int_equal(err_from_errno(EDQUOT), ERR_NO_SPACE);
	assert_int_equal(err_from_errno(ENAMETOOLONG), ERR_NAME_TOO_LONG);
	assert_int_equal(err_from_errno(ENOTEMPTY), ERR_NOT_EMPTY);
	assert_int_equal(err_from_errno(EXDEV), ERR_PATH_OUTSIDE);
	assert_int_equal(err_from_errno(ELOOP), ERR_PATH_OUTSIDE);
	assert_int_equal(err_from_errno(ENOMEM), ERR_NOMEM);
	assert_int_equal(err_from_errno(EINVAL), ERR_BAD_REQUEST);
	assert_int_equal(err_from_errno(EIO), ERR_IO);
	assert_int_equal(err_from_errno(EPIPE), ERR_IO);
}

static void
test_errmsg(void **state)
{
	struct errmsg	e;
	char		long_arg[2 * ERRMSG_MAX];

	(void)state;
	errmsg_clear(&e);
	assert_int_equal(e.code, 0);
	assert_int_equal(errmsg_set(&e, ERR_NOT_FOUND, "no %s", "bot"),
	    ERR_NOT_FOUND);
	assert_int_equal(e.code, ERR_NOT_FOUND);
	assert_string_equal(errmsg_str(&e), "no bot");
	/* A code alone reads as the table's sentence. */
	assert_int_equal(errmsg_code(&e, ERR_BUSY), ERR_BUSY);
	assert_string_equal(errmsg_str(&e), err_message(ERR_BUSY));
	/* Long sentences are cut, never overrun. */
	memset(long_arg, 'x', sizeof(long_arg) - 1);
	long_arg[sizeof(long_arg) - 1] = '\0';
	errmsg_set(&e, ERR_IO, "%s", long_arg);
	assert_int_equal(strlen(e.msg), ERRMSG_MAX - 1);
	/* NULL sinks are allowed: the code still comes back. */
	assert_int_equal(errmsg_set(NULL, ERR_IO, "x"), ERR_IO);
	assert_int_equal(errmsg_code(NULL, ERR_IO), ERR_IO);
	errmsg_clear(NULL);
	assert_string_equal(errmsg_str(NULL), err_message(ERR_INTERNAL));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_distinct_upper),
		cmocka_unit_test(test_known_names),
		cmocka_unit_test(test_unknown_codes),
		cmocka_unit_test(test_from_errno),
		cmocka_unit_test(test_errmsg),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/*
 * token: fresh tokens are base64url of the right length and differ,
 * comparison is exact, and secret files are read with the documented
 * refusals.
 */
#include <sys/stat.h>

#include <fcntl.h>
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

#include "err.h"
#include "token.h"

static int
setup(void **state)
{
	(void)state;
	return unit_tmpdir_new("test_token");
}

static int
teardown(void **state)
{
	(void)state;
	return unit_tmpdir_remove();
}

static void
test_new(void **state)
{
	char	 a[TOKEN_STRLEN + 1], b[TOKEN_STRLEN + 1];
	size_t	 i;

	assert_int_equal(token_new(a, sizeof(a)), 0);
	assert_int_equal(token_new(b, sizeof(b)), 0);
	assert_int_equal(strlen(a), TOKEN_STRLEN);
	assert_string_not_equal(a, b);
	for (i = 0; i < TOKEN_STRLEN; i++)
		assert_non_null(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789-_", a[i]));
	assert_int_not_equal(token_new(a, TOKEN_STRLEN), 0);
	/* Never a leading '-', which a command line reads as an option:
	 * 2000 draws would show one about 31 times otherwise. */
	for (i = 0; i < 2000; i++) {
		assert_int_equal(token_new(a, sizeof(a)), 0);
		assert_int_not_equal(a[0], '-');
	}
}

static void
test_hex(void **state)
{
	char	 a[33], b[33];
	size_t	 i;

	assert_int_equal(token_hex(a, 16), 0);
	assert_int_equal(token_hex(b, 16), 0);
	assert_int_equal(strlen(a), 32);
	assert_string_not_equal(a, b);
	for (i = 0; i < 32; i++)
		assert_non_null(strchr("0123456789abcdef", a[i]));
	/* Longer than one internal batch of randomness. */
	{
		char	big[2 * 100 + 1];

		assert_int_equal(token_hex(big, 100), 0);
		assert_int_equal(strlen(big), 200);
	}
}

static void
test_random(void **state)
{
	uint8_t	 a[64], b[64];

	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	assert_int_equal(token_random(a, sizeof(a)), 0);
	assert_int_equal(token_random(b, sizeof(b)), 0);
	assert_memory_not_equal(a, b, sizeof(a));
	assert_int_equal(token_random(a, 0), 0);
}

static void
test_equal(void **state)
{
	assert_true(token_equal("abc", 3, "abc", 3));
	assert_false(token_equal("abc", 3, "abd", 3));
	assert_false(token_equal("abc", 3, "xbc", 3));
	assert_false(token_equal("abc", 3, "abcd", 4));
	assert_false(token_equal("abcd", 4, "abc", 3));
	assert_false(token_equal("abc", 3, "", 0));
	assert_false(token_equal("", 0, "abc", 3));
	assert_true(token_equal("", 0, "", 0));
	/* A trailing NUL in b must not make a prefix equal. */
	assert_false(token_equal("ab\0", 3, "ab", 2));
}

static void
test_wipe(void **state)
{
	char	 s[8] = "secret!";

	token_wipe(s, sizeof(s));
	assert_memory_equal(s, "\0\0\0\0\0\0\0\0", 8);
	token_wipe(NULL, 0);
}

static void
write_file(const char *name, const void *p, size_t n, mode_t mode, char *path)
{
	int	 fd;

	snprintf(path, 128, "%s/%s", unit_tmpdir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void
test_read_file(void **state)
{
	char	 path[128], out[SECRET_MAX + 1], big[SECRET_MAX + 2];

	write_file("ok", "s3cret\n", 7, 0600, path);
	assert_int_equal(token_read_file(path, out, sizeof(out), 1), 0);
	assert_string_equal(out, "s3cret");

	write_file("crlf", "abc\r\n", 5, 0400, path);
	assert_int_equal(token_read_file(path, out, sizeof(out), 1), 0);
	assert_string_equal(out, "abc");

	write_file("nonl", "abc", 3, 0600, path);
	assert_int_equal(token_read_file(path, out, sizeof(out), 1), 0);
	assert_string_equal(out, "abc");

	write_file("group", "abc\n", 4, 0640, path);
	assert_int_equal(token_read_file(path, out, sizeof(out), 1),
	    ERR_PERMISSION);
	assert_string_equal(out, "");
	assert_int_equal(token_read_file(path, out, sizeof(out), 0), 0);
	write_file("other", "abc\n", 4, 0604, path);
	assert_int_equal(token_read_file(path, out, sizeof(out), 1),
	    ERR_PERMISSION);

	write_file("empty", "\n", 1, 0600, path);
	assert_int_equal(token_read_file(path, out, sizeof(out), 1),
	    ERR_CONFIG);
	write_file("space", "a b\n", 4, 0600, path);
	assert_int_equal(token_read_file(path, out, sizeof(out), 1),
	    ERR_CONFIG);
	write_file("twolines", "a\n\n", 3, 0600, path);
	assert_int_equal(token_read_file(path, out, sizeof(out), 1),
	    ERR_CONFIG);
	write_file("nul", "a\0b\n", 4, 0600, path);
	assert_int_equal(token_read_file(path, out, sizeof(out), 1),
	    ERR_CONFIG);

	memset(big, 'x', sizeof(big));
	write_file("max", big, SECRET_MAX, 0600, path);
	assert_int_equal(token_read_file(path, out, sizeof(out), 1), 0);
	assert_int_equal(strlen(out), SECRET_MAX);
	assert_int_equal(token_read_file(path, out, 10, 1), ERR_TOO_LARGE);
	write_file("long", big, SECRET_MAX + 1, 0600, path);
	assert_int_equal(token_read_file(path, out, sizeof(out), 1),
	    ERR_TOO_LARGE);

	snprintf(path, sizeof(path), "%s/missing", unit_tmpdir);
	assert_int_equal(token_read_file(path, out, sizeof(out), 1),
	    ERR_NOT_FOUND);
	assert_int_equal(token_read_file(unit_tmpdir, out, sizeof(out), 0),
	    ERR_NOT_REGULAR);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new),
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_equal),
		cmocka_unit_test(test_wipe),
		cmocka_unit_test(test_read_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

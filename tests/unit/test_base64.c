/* SPDX-License-Identifier: MIT */
/*
 * base64: the test vectors of RFC 4648 section 10 in both forms, the two
 * characters where the alphabets differ, and the lengths BASE64_SIZE
 * promises.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base64.h"

static const struct {
	const char	*in;
	const char	*std;
	const char	*url;
} vectors[] = {
	{ "", "", "" },
	{ "f", "Zg==", "Zg" },
	{ "fo", "Zm8=", "Zm8" },
	{ "foo", "Zm9v", "Zm9v" },
	{ "foob", "Zm9vYg==", "Zm9vYg" },
	{ "fooba", "Zm9vYmE=", "Zm9vYmE" },
	{ "foobar", "Zm9vYmFy", "Zm9vYmFy" },
};

static void
test_rfc4648(void **state)
{
	char	 out[16];
	size_t	 i, n;

	for (i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		n = strlen(vectors[i].in);
		memset(out, '#', sizeof(out));
		assert_int_equal(base64_encode(vectors[i].in, n, out),
		    strlen(vectors[i].std));
		assert_string_equal(out, vectors[i].std);
		assert_true(strlen(out) + 1 <= BASE64_SIZE(n));
		memset(out, '#', sizeof(out));
		assert_int_equal(base64_encode_url(vectors[i].in, n, out),
		    strlen(vectors[i].url));
		assert_string_equal(out, vectors[i].url);
	}
}

static void
test_alphabets(void **state)
{
	const uint8_t	 hi[] = { 0xfb, 0xef, 0xbe, 0xff, 0xff, 0xff, 0xfb,
			    0xff };
	char		 out[BASE64_SIZE(sizeof(hi))];

	/* 62 and 63 are where the two alphabets part. */
	assert_int_equal(base64_encode(hi, sizeof(hi), out), 12);
	assert_string_equal(out, "++++////+/8=");
	assert_int_equal(base64_encode_url(hi, sizeof(hi), out), 11);
	assert_string_equal(out, "----____-_8");
	assert_int_equal(base64_encode("\0\0\0", 3, out), 4);
	assert_string_equal(out, "AAAA");
}

static void
test_new(void **state)
{
	uint8_t	 all[256];
	char	*s;
	size_t	 i;

	for (i = 0; i < sizeof(all); i++)
		all[i] = (uint8_t)i;
	s = base64_encode_new(all, sizeof(all));
	assert_int_equal(strlen(s), BASE64_SIZE(sizeof(all)) - 1);
	assert_memory_equal(s, "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g", 44);
	assert_string_equal(s + strlen(s) - 8, "/P3+/w==");
	free(s);
	s = base64_encode_new("", 0);
	assert_string_equal(s, "");
	free(s);
	s = base64_encode_new("foob", 4);
	assert_string_equal(s, "Zm9vYg==");
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc4648),
		cmocka_unit_test(test_alphabets),
		cmocka_unit_test(test_new),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

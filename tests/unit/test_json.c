/* SPDX-License-Identifier: MIT */
/*
 * json: untrusted JSON is capped, duplicates and NUL refused, errors give
 * a position but never the input, getters check type and bounds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "err.h"
#include "json.h"

static json_t *
parse(const char *s, int *code, char *err)
{
	return jsonx_parse(s, strlen(s), 1024, 1, code, err);
}

static void
test_parse_ok(void **state)
{
	char	 err[JSONX_ERRLEN];
	int	 code = 99;
	json_t	*j;

	j = parse("{\"id\": 7, \"op\": \"file.stat\"}", &code, err);
	assert_non_null(j);
	assert_int_equal(code, 0);
	json_decref(j);
	/* Scalars only when no object is wanted. */
	j = jsonx_parse("5", 1, 10, 0, &code, err);
	assert_non_null(j);
	json_decref(j);
	assert_null(jsonx_parse("5", 1, 10, 1, &code, err));
	assert_int_equal(code, ERR_BAD_JSON);
	assert_null(jsonx_parse("[1]", 3, 10, 1, &code, err));
	assert_int_equal(code, ERR_BAD_JSON);
}

static void
test_duplicates(void **state)
{
	char	 err[JSONX_ERRLEN];
	int	 code = 0;

	assert_null(parse("{\"a\": 1,\n \"a\": 2}", &code, err));
	assert_int_equal(code, ERR_BAD_JSON);
	assert_non_null(strstr(err, "line 2"));
	assert_non_null(strstr(err, "duplicate"));
}

static void
test_too_large(void **state)
{
	char	 err[JSONX_ERRLEN];
	int	 code = 0;

	assert_null(jsonx_parse("{\"a\": 1}", 8, 7, 1, &code, err));
	assert_int_equal(code, ERR_TOO_LARGE);
	assert_true(strlen(err) > 0);
	/* Exactly max is fine. */
	json_decref(jsonx_parse("{\"a\": 1}", 8, 8, 1, &code, err));
	assert_int_equal(code, 0);
}

static void
test_no_echo(void **state)
{
	char	 err[JSONX_ERRLEN];
	int	 code = 0;

	assert_null(parse("{\"token\": hunter2secret}", &code, err));
	assert_int_equal(code, ERR_BAD_JSON);
	assert_non_null(strstr(err, "column"));
	assert_null(strstr(err, "hunter2"));
	assert_null(parse("{\"a\": 1} trailing", &code, err));
	assert_int_equal(code, ERR_BAD_JSON);
	assert_null(strstr(err, "trailing\""));
	assert_null(parse("", &code, err));
	assert_int_equal(code, ERR_BAD_JSON);
}

static void
test_nul(void **state)
{
	const char	 raw[] = "{\"a\": \"x\0y\"}";
	char		 err[JSONX_ERRLEN];
	int		 code = 0;

	assert_null(parse("{\"a\": \"x\\u0000y\"}", &code, err));
	assert_int_equal(code, ERR_BAD_JSON);
	assert_non_null(strstr(err, "NUL"));
	assert_null(parse("{\"a\\u0000b\": 1}", &code, err));
	assert_int_equal(code, ERR_BAD_JSON);
	assert_null(jsonx_parse(raw, sizeof(raw) - 1, 1024, 1, &code, err));
	assert_int_equal(code, ERR_BAD_JSON);
}

static void
test_getters(void **state)
{
	char		 err[JSONX_ERRLEN];
	const char	*s = "untouched";
	int64_t		 i = 42;
	int		 b = 5, code;
	json_t		*j, *o = NULL;

	j = parse("{\"s\": \"abc\", \"e\": \"\", \"i\": -3, \"f\": 1.5, "
	    "\"b\": true, \"o\": {}, \"n\": null, \"big\": 9007199254740993}",
	    &code, err);
	assert_non_null(j);

	assert_int_equal(jsonx_str(j, "s", 3, &s, err), 0);
	assert_string_equal(s, "abc");
	assert_int_equal(jsonx_str(j, "s", 2, &s, err), ERR_BAD_REQUEST);
	assert_non_null(strstr(err, "\"s\""));
	assert_int_equal(jsonx_str(j, "e", 10, &s, err), ERR_BAD_REQUEST);
	assert_int_equal(jsonx_str(j, "i", 10, &s, err), ERR_BAD_REQUEST);
	s = "untouched";
	assert_int_equal(jsonx_str(j, "missing", 10, &s, err), ERR_NOT_FOUND);
	assert_string_equal(s, "untouched");
	assert_int_equal(jsonx_str(j, "n", 10, &s, err), ERR_NOT_FOUND);

	assert_int_equal(jsonx_int(j, "i", -3, 3, &i, err), 0);
	assert_int_equal(i, -3);
	assert_int_equal(jsonx_int(j, "i", -2, 3, &i, err), ERR_BAD_REQUEST);
	assert_int_equal(i, -3);
	assert_int_equal(jsonx_int(j, "f", -10, 10, &i, err),
	    ERR_BAD_REQUEST);
	assert_int_equal(jsonx_int(j, "s", -10, 10, &i, err),
	    ERR_BAD_REQUEST);
	assert_int_equal(jsonx_int(j, "big", 0, INT64_MAX, &i, err), 0);
	assert_int_equal(i, 9007199254740993LL);
	assert_int_equal(jsonx_int(j, "nope", 0, 1, &i, err), ERR_NOT_FOUND);

	assert_int_equal(jsonx_bool(j, "b", &b, err), 0);
	assert_int_equal(b, 1);
	assert_int_equal(jsonx_bool(j, "i", &b, err), ERR_BAD_REQUEST);
	assert_int_equal(jsonx_bool(j, "nope", &b, err), ERR_NOT_FOUND);
	assert_int_equal(b, 1);

	assert_int_equal(jsonx_obj(j, "o", &o, err), 0);
	assert_true(json_is_object(o));
	assert_int_equal(jsonx_obj(j, "s", &o, err), ERR_BAD_REQUEST);
	assert_int_equal(jsonx_obj(j, "nope", &o, err), ERR_NOT_FOUND);

	/* A non-object holder is a bad request, not a crash. */
	assert_int_equal(jsonx_str(json_object_get(j, "s"), "x", 5, &s, err),
	    ERR_BAD_REQUEST);
	assert_int_equal(jsonx_int(NULL, "x", 0, 5, &i, NULL),
	    ERR_BAD_REQUEST);
	json_decref(j);
}

static void
test_only_keys(void **state)
{
	static const char *const allowed[] = { "id", "op", "args", NULL };
	static const char *const none[] = { NULL };
	char	 err[JSONX_ERRLEN];
	int	 code;
	json_t	*j;

	j = parse("{\"id\": 1, \"op\": \"x\"}", &code, err);
	assert_int_equal(jsonx_only_keys(j, allowed, err), 0);
	assert_int_equal(jsonx_only_keys(j, none, err), ERR_BAD_REQUEST);
	json_decref(j);

	j = parse("{\"id\": 1, \"extra\": 2}", &code, err);
	assert_int_equal(jsonx_only_keys(j, allowed, err), ERR_BAD_REQUEST);
	assert_non_null(strstr(err, "extra"));
	json_decref(j);

	j = parse("{\"id\": 1, \"bad key\\n\": 2}", &code, err);
	assert_int_equal(jsonx_only_keys(j, allowed, err), ERR_BAD_REQUEST);
	assert_null(strstr(err, "bad key"));
	json_decref(j);
}

static void
test_dump(void **state)
{
	char	 err[JSONX_ERRLEN], *s;
	size_t	 len = 0;
	int	 code;
	json_t	*j;

	j = parse("{ \"a\" : [1, 2] }", &code, err);
	s = jsonx_dump(j, &len);
	assert_string_equal(s, "{\"a\":[1,2]}");
	assert_int_equal(len, strlen(s));
	free(s);
	json_decref(j);
	assert_null(jsonx_dump(NULL, &len));
	assert_int_equal(len, 0);
}

static void
test_utf8(void **state)
{
	static const struct {
		const char	*in;
		size_t		 len;
		uint32_t	 cp;
	} seqs[] = {
		{ "a", 1, 'a' }, { "\xc3\xa9", 2, 0xe9 },
		{ "\xe2\x86\x92", 3, 0x2192 },
		{ "\xf0\x9f\x98\x80", 4, 0x1f600 },
		{ "\xc3", 0, 0 },			/* cut short */
		{ "\xc0\xaf", 0, 0 },			/* overlong */
		{ "\xe0\x80\xaf", 0, 0 },		/* overlong */
		{ "\xed\xa0\x80", 0, 0 },		/* surrogate */
		{ "\xf4\x90\x80\x80", 0, 0 },	/* past U+10FFFF */
		{ "\x80", 0, 0 },			/* continuation */
	};
	char		 s[32];
	uint32_t	 cp;
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof seqs / sizeof seqs[0]; i++) {
		cp = 0;
		assert_int_equal(jsonx_utf8_len((const uint8_t *)seqs[i].in,
		    strlen(seqs[i].in), &cp), seqs[i].len);
		if (seqs[i].len > 0)
			assert_int_equal(cp, seqs[i].cp);
	}
	/* A sentence cut inside a character becomes a JSON string. */
	snprintf(s, sizeof s, "key \"ab\xc3\xa9\xe2\x86");
	jsonx_utf8_fix(s);
	assert_string_equal(s, "key \"ab\xc3\xa9??");
	snprintf(s, sizeof s, "\xff ok \xf0\x9f\x98\x80");
	jsonx_utf8_fix(s);
	assert_string_equal(s, "? ok \xf0\x9f\x98\x80");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ok),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_no_echo),
		cmocka_unit_test(test_nul),
		cmocka_unit_test(test_getters),
		cmocka_unit_test(test_only_keys),
		cmocka_unit_test(test_dump),
		cmocka_unit_test(test_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

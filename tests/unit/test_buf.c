/* SPDX-License-Identifier: MIT */
/*
 * buf and cursor: the hard cap holds (including around SIZE_MAX), getters
 * never move when short or on a mismatch, big-endian values come out
 * right, literals and decimal digits match exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "buf.h"
#include "err.h"

static void
test_append_cap(void **state)
{
	struct buf	 b;

	buf_init(&b, 8);
	assert_int_equal(buf_append(&b, "abcde", 5), 0);
	assert_int_equal(buf_append(&b, "fgh", 3), 0);
	assert_int_equal(b.len, 8);
	assert_int_equal(buf_append(&b, "i", 1), ERR_TOO_LARGE);
	assert_int_equal(b.len, 8);
	assert_int_equal(buf_reserve(&b, 1), ERR_TOO_LARGE);
	assert_int_equal(buf_reserve(&b, SIZE_MAX), ERR_TOO_LARGE);
	assert_int_equal(buf_append(&b, "", 0), 0);
	assert_memory_equal(b.data, "abcdefgh", 8);
	/* A full buffer can still be terminated. */
	assert_int_equal(buf_cstr(&b), 0);
	assert_string_equal((char *)b.data, "abcdefgh");
	assert_int_equal(b.len, 8);
	assert_true(b.cap <= b.max + 1);
	buf_free(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.max, 8);
	assert_int_equal(buf_append(&b, "xy", 2), 0);
	buf_free(&b);
	buf_free(&b);
}

static void
test_huge_max(void **state)
{
	struct buf	 b;

	buf_init(&b, SIZE_MAX);
	assert_int_equal(buf_put_u8(&b, 1), 0);
	assert_int_equal(buf_reserve(&b, SIZE_MAX), ERR_TOO_LARGE);
	assert_int_equal(b.len, 1);
	buf_free(&b);
}

static void
test_put_consume(void **state)
{
	struct buf	 b;

	buf_init(&b, 1024);
	assert_int_equal(buf_put_u8(&b, 0xab), 0);
	assert_int_equal(buf_put_u16be(&b, 0x0102), 0);
	assert_int_equal(buf_put_u32be(&b, 0xdeadbeef), 0);
	assert_int_equal(b.len, 7);
	assert_memory_equal(b.data, "\xab\x01\x02\xde\xad\xbe\xef", 7);
	buf_consume(&b, 3);
	assert_int_equal(b.len, 4);
	assert_memory_equal(b.data, "\xde\xad\xbe\xef", 4);
	buf_consume(&b, 100);
	assert_int_equal(b.len, 0);
	assert_int_equal(buf_append(&b, "z", 1), 0);
	buf_reset(&b);
	assert_int_equal(b.len, 0);
	assert_non_null(b.data);
	buf_free(&b);
}

static void
test_growth(void **state)
{
	struct buf	 b;
	uint8_t		 chunk[1000];
	int		 i;

	memset(chunk, 'q', sizeof(chunk));
	buf_init(&b, 100000);
	for (i = 0; i < 100; i++)
		assert_int_equal(buf_append(&b, chunk, sizeof(chunk)), 0);
	assert_int_equal(b.len, 100000);
	assert_int_equal(buf_put_u8(&b, 1), ERR_TOO_LARGE);
	assert_int_equal(b.data[99999], 'q');
	buf_free(&b);
}

static void
test_cursor(void **state)
{
	const uint8_t	 d[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	const uint8_t	*p;
	struct cursor	 c;
	uint8_t		 u8;
	uint16_t	 u16;
	uint32_t	 u32;

	cursor_init(&c, d, sizeof(d));
	assert_int_equal(cursor_left(&c), 9);
	assert_int_equal(cursor_get_u8(&c, &u8), 0);
	assert_int_equal(u8, 1);
	assert_int_equal(cursor_get_u16be(&c, &u16), 0);
	assert_int_equal(u16, 0x0203);
	assert_int_equal(cursor_peek_u32be(&c, &u32), 0);
	assert_int_equal(u32, 0x04050607);
	assert_int_equal(cursor_left(&c), 6);
	assert_int_equal(cursor_get_u32be(&c, &u32), 0);
	assert_int_equal(u32, 0x04050607);
	assert_int_equal(cursor_left(&c), 2);

	assert_int_equal(cursor_get_u32be(&c, &u32), ERR_NEED_MORE);
	assert_int_equal(cursor_peek_u32be(&c, &u32), ERR_NEED_MORE);
	assert_int_equal(cursor_get_bytes(&c, 3, &p), ERR_NEED_MORE);
	assert_int_equal(cursor_get_bytes(&c, SIZE_MAX, &p), ERR_NEED_MORE);
	assert_int_equal(cursor_skip(&c, SIZE_MAX), ERR_NEED_MORE);
	assert_int_equal(cursor_left(&c), 2);

	assert_int_equal(cursor_get_bytes(&c, 2, &p), 0);
	assert_ptr_equal(p, d + 7);
	assert_int_equal(cursor_left(&c), 0);
	assert_int_equal(cursor_get_u8(&c, &u8), ERR_NEED_MORE);
	assert_int_equal(cursor_get_u16be(&c, &u16), ERR_NEED_MORE);
	assert_int_equal(cursor_skip(&c, 0), 0);
	assert_int_equal(cursor_get_bytes(&c, 0, &p), 0);

	cursor_init(&c, d, 1);
	assert_int_equal(cursor_get_u16be(&c, &u16), ERR_NEED_MORE);
	assert_int_equal(cursor_skip(&c, 1), 0);
	assert_int_equal(cursor_skip(&c, 1), ERR_NEED_MORE);
}

static void
test_cursor_u64be(void **state)
{
	const uint8_t	 d[] = { 0x81, 2, 3, 4, 5, 6, 7, 0xfe, 0xaa };
	struct cursor	 c;
	uint64_t	 v = 0;

	cursor_init(&c, d, sizeof(d));
	assert_int_equal(cursor_get_u64be(&c, &v), 0);
	assert_true(v == 0x81020304050607feULL);
	assert_int_equal(cursor_left(&c), 1);
	/* Seven short of eight: nothing read, nothing moved. */
	v = 42;
	assert_int_equal(cursor_get_u64be(&c, &v), ERR_NEED_MORE);
	assert_true(v == 42);
	assert_int_equal(cursor_left(&c), 1);
	cursor_init(&c, d, 7);
	assert_int_equal(cursor_get_u64be(&c, &v), ERR_NEED_MORE);
	assert_int_equal(cursor_left(&c), 7);
	cursor_init(&c, "\xff\xff\xff\xff\xff\xff\xff\xff", 8);
	assert_int_equal(cursor_get_u64be(&c, &v), 0);
	assert_true(v == UINT64_MAX);
}

static void
test_cursor_peek(void **state)
{
	const uint8_t	 d[] = { 0xab, 0xcd };
	struct cursor	 c;
	uint8_t		 u8;
	uint16_t	 u16;

	cursor_init(&c, d, sizeof(d));
	assert_int_equal(cursor_peek_u8(&c, &u8), 0);
	assert_int_equal(u8, 0xab);
	assert_int_equal(cursor_peek_u16be(&c, &u16), 0);
	assert_int_equal(u16, 0xabcd);
	/* Peeking never moves. */
	assert_int_equal(cursor_left(&c), 2);
	assert_int_equal(cursor_get_u8(&c, &u8), 0);
	assert_int_equal(cursor_peek_u8(&c, &u8), 0);
	assert_int_equal(u8, 0xcd);
	assert_int_equal(cursor_peek_u16be(&c, &u16), ERR_NEED_MORE);
	assert_int_equal(cursor_skip(&c, 1), 0);
	assert_int_equal(cursor_peek_u8(&c, &u8), ERR_NEED_MORE);
	cursor_init(&c, NULL, 5);
	assert_int_equal(cursor_left(&c), 0);
	assert_int_equal(cursor_peek_u8(&c, &u8), ERR_NEED_MORE);
}

static void
test_cursor_expect(void **state)
{
	struct cursor	 c;

	cursor_init(&c, "RFB 003.008\n", 12);
	assert_int_equal(cursor_expect(&c, "RFB 003.", 8), 0);
	assert_int_equal(cursor_left(&c), 4);
	/* A mismatch and a short cursor both leave it where it was. */
	assert_int_equal(cursor_expect(&c, "009", 3), ERR_PROTOCOL);
	assert_int_equal(cursor_expect(&c, "008\n!", 5), ERR_NEED_MORE);
	assert_int_equal(cursor_left(&c), 4);
	assert_int_equal(cursor_expect(&c, "", 0), 0);
	assert_int_equal(cursor_expect(&c, "008\n", 4), 0);
	assert_int_equal(cursor_left(&c), 0);
	assert_int_equal(cursor_expect(&c, "x", 1), ERR_NEED_MORE);
}

static void
test_cursor_digits(void **state)
{
	struct cursor	 c;
	uint32_t	 v = 7;

	cursor_init(&c, "1010x999999999", 14);
	assert_int_equal(cursor_get_digits(&c, 3, &v), 0);
	assert_int_equal(v, 101);
	/* "0x" is not two digits: nothing moves, v keeps its value. */
	v = 7;
	assert_int_equal(cursor_get_digits(&c, 2, &v), ERR_PROTOCOL);
	assert_int_equal(v, 7);
	assert_int_equal(cursor_left(&c), 11);
	assert_int_equal(cursor_get_digits(&c, 1, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(cursor_skip(&c, 1), 0);
	assert_int_equal(cursor_get_digits(&c, 10, &v), ERR_INTERNAL);
	assert_int_equal(cursor_get_digits(&c, 0, &v), ERR_INTERNAL);
	assert_int_equal(cursor_get_digits(&c, 9, &v), 0);
	assert_int_equal(v, 999999999);
	assert_int_equal(cursor_get_digits(&c, 1, &v), ERR_NEED_MORE);
	cursor_init(&c, "12", 2);
	assert_int_equal(cursor_get_digits(&c, 3, &v), ERR_NEED_MORE);
	assert_int_equal(cursor_left(&c), 2);
	cursor_init(&c, "/:", 2);	/* the bytes either side of 0-9 */
	assert_int_equal(cursor_get_digits(&c, 1, &v), ERR_PROTOCOL);
	assert_int_equal(cursor_skip(&c, 1), 0);
	assert_int_equal(cursor_get_digits(&c, 1, &v), ERR_PROTOCOL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_append_cap),
		cmocka_unit_test(test_huge_max),
		cmocka_unit_test(test_put_consume),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_cursor),
		cmocka_unit_test(test_cursor_u64be),
		cmocka_unit_test(test_cursor_peek),
		cmocka_unit_test(test_cursor_expect),
		cmocka_unit_test(test_cursor_digits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * buf and cursor: the hard cap holds (including around SIZE_MAX), getters
 * never move when short, big-endian values come out right.
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_append_cap),
		cmocka_unit_test(test_huge_max),
		cmocka_unit_test(test_put_consume),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_cursor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

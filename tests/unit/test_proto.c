/* SPDX-License-Identifier: MIT */
/*
 * proto: frame headers round-trip and the parser refuses every frame the
 * protocol does not define.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "err.h"
#include "proto.h"

static void
test_roundtrip(void **state)
{
	uint8_t			 msg[PROTO_FRAME_HDR + 3];
	struct proto_frame	 f;

	proto_frame_header(msg, 0x01020304, PROTO_CH_STDERR, PROTO_F_END);
	assert_memory_equal(msg, "\x01\x02\x03\x04\x02\x01", 6);
	memcpy(msg + PROTO_FRAME_HDR, "abc", 3);
	assert_int_equal(proto_frame_parse(msg, sizeof(msg), &f), 0);
	assert_int_equal(f.id, 0x01020304);
	assert_int_equal(f.channel, PROTO_CH_STDERR);
	assert_int_equal(f.flags, PROTO_F_END);
	assert_int_equal(f.len, 3);
	assert_ptr_equal(f.payload, msg + PROTO_FRAME_HDR);
	assert_memory_equal(f.payload, "abc", 3);
}

static void
test_empty_payload(void **state)
{
	uint8_t			 msg[PROTO_FRAME_HDR];
	struct proto_frame	 f;

	proto_frame_header(msg, 0xffffffff, PROTO_CH_DATA, 0);
	assert_int_equal(proto_frame_parse(msg, sizeof(msg), &f), 0);
	assert_int_equal(f.id, 0xffffffffu);
	assert_int_equal(f.len, 0);
}

static void
test_rejects(void **state)
{
	static uint8_t		 big[PROTO_MAX_BINARY + 1];
	uint8_t			 msg[PROTO_FRAME_HDR];
	struct proto_frame	 f;

	proto_frame_header(msg, 7, PROTO_CH_STDOUT, 0);
	assert_int_equal(proto_frame_parse(msg, 5, &f), ERR_PROTOCOL);
	assert_int_equal(proto_frame_parse(msg, 0, &f), ERR_PROTOCOL);
	assert_int_equal(proto_frame_parse(NULL, 6, &f), ERR_PROTOCOL);

	proto_frame_header(msg, 0, PROTO_CH_STDOUT, 0);
	assert_int_equal(proto_frame_parse(msg, 6, &f), ERR_PROTOCOL);
	proto_frame_header(msg, 7, 3, 0);
	assert_int_equal(proto_frame_parse(msg, 6, &f), ERR_PROTOCOL);
	proto_frame_header(msg, 7, PROTO_CH_DATA, 0x02);
	assert_int_equal(proto_frame_parse(msg, 6, &f), ERR_PROTOCOL);
	proto_frame_header(msg, 7, PROTO_CH_DATA, 0x81);
	assert_int_equal(proto_frame_parse(msg, 6, &f), ERR_PROTOCOL);

	proto_frame_header(big, 7, PROTO_CH_DATA, 0);
	assert_int_equal(proto_frame_parse(big, sizeof(big), &f),
	    ERR_PROTOCOL);
	assert_int_equal(proto_frame_parse(big, sizeof(big) - 1, &f), 0);
	assert_int_equal(f.len, PROTO_MAX_BINARY - PROTO_FRAME_HDR);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_empty_payload),
		cmocka_unit_test(test_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

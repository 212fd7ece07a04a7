/* SPDX-License-Identifier: MIT */
/*
 * rfb: the client-message framer hands out whole messages only, in the
 * handshake phases and after, never a length beyond the bytes it was
 * given; it refuses unknown types and oversize cut text; view viewers'
 * input types are the ones the gateway drops.  capability: the token
 * shape check.
 */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "capability.h"
#include "err.h"
#include "rfb.h"

static void
test_handshake_phases(void **state)
{
	struct rfb_framer	f = { RFB_PHASE_VERSION };
	const uint8_t		*v = (const uint8_t *)RFB_CLIENT_VERSION;
	int			 type;

	(void)state;
	assert_int_equal(rfb_frame_next(&f, v, 11, &type), 0);
	assert_int_equal(f.phase, RFB_PHASE_VERSION);
	assert_int_equal(rfb_frame_next(&f, v, 12, &type), 12);
	assert_int_equal(type, -1);
	assert_int_equal(rfb_frame_next(&f, (const uint8_t *)"\1", 1, &type),
	    1);
	assert_int_equal(f.phase, RFB_PHASE_INIT);
	assert_int_equal(rfb_frame_next(&f, (const uint8_t *)"\1", 1, &type),
	    1);
	assert_int_equal(f.phase, RFB_PHASE_NORMAL);
	assert_int_equal(rfb_frame_next(&f, NULL, 0, &type), 0);
}

static void
test_fixed_sizes(void **state)
{
	struct rfb_framer	f = { RFB_PHASE_NORMAL };
	uint8_t			 m[64];
	int			 type;

	(void)state;
	memset(m, 0, sizeof m);
	m[0] = 5;	/* PointerEvent: 6 bytes */
	assert_int_equal(rfb_frame_next(&f, m, 5, &type), 0);
	assert_int_equal(rfb_frame_next(&f, m, 6, &type), 6);
	assert_int_equal(type, 5);
	m[0] = 4;	/* KeyEvent: 8 */
	assert_int_equal(rfb_frame_next(&f, m, 7, &type), 0);
	assert_int_equal(rfb_frame_next(&f, m, 64, &type), 8);
	m[0] = 3;	/* FramebufferUpdateRequest: 10 */
	assert_int_equal(rfb_frame_next(&f, m, 64, &type), 10);
	m[0] = 0;	/* SetPixelFormat: 20 */
	assert_int_equal(rfb_frame_next(&f, m, 19, &type), 0);
	assert_int_equal(rfb_frame_next(&f, m, 20, &type), 20);
}

static void
test_variable_sizes(void **state)
{
	struct rfb_framer	f = { RFB_PHASE_NORMAL };
	uint8_t			 m[4096];
	int			 type;

	(void)state;
	memset(m, 0, sizeof m);
	m[0] = 2;	/* SetEncodings, 3 encodings: 4 + 12 */
	m[3] = 3;
	assert_int_equal(rfb_frame_next(&f, m, 3, &type), 0);
	assert_int_equal(rfb_frame_next(&f, m, 15, &type), 0);
	assert_int_equal(rfb_frame_next(&f, m, 16, &type), 16);
	memset(m, 0, 16);
	m[0] = 6;	/* ClientCutText, 100 bytes */
	m[7] = 100;
	assert_int_equal(rfb_frame_next(&f, m, 107, &type), 0);
	assert_int_equal(rfb_frame_next(&f, m, 108, &type), 108);
	/* Extended clipboard: length -100. */
	m[4] = m[5] = m[6] = 0xff;
	m[7] = 0x9c;
	assert_int_equal(rfb_frame_next(&f, m, 108, &type), 108);
	/* Cut text past the cap: the viewer is dropped. */
	m[4] = 0x7f;
	m[5] = m[6] = m[7] = 0xff;
	assert_int_equal(rfb_frame_next(&f, m, 8, &type), ERR_TOO_LARGE);
	m[4] = 0x80;	/* -2^31 */
	m[5] = m[6] = m[7] = 0;
	assert_int_equal(rfb_frame_next(&f, m, 8, &type), ERR_TOO_LARGE);
	memset(m, 0, 16);
	m[0] = 251;	/* SetDesktopSize, 2 screens: 8 + 32 */
	m[6] = 2;
	assert_int_equal(rfb_frame_next(&f, m, 39, &type), 0);
	assert_int_equal(rfb_frame_next(&f, m, 40, &type), 40);
	m[0] = 248;	/* Fence, 4 payload bytes: 9 + 4 */
	m[8] = 4;
	assert_int_equal(rfb_frame_next(&f, m, 12, &type), 0);
	assert_int_equal(rfb_frame_next(&f, m, 13, &type), 13);
}

static void
test_refused(void **state)
{
	struct rfb_framer	f = { RFB_PHASE_NORMAL };
	uint8_t			 m[16];
	int			 type;

	(void)state;
	memset(m, 0, sizeof m);
	m[0] = 7;
	assert_int_equal(rfb_frame_next(&f, m, 16, &type), ERR_PROTOCOL);
	m[0] = 255;	/* QEMU, unknown subtype */
	m[1] = 9;
	assert_int_equal(rfb_frame_next(&f, m, 16, &type), ERR_PROTOCOL);
	m[1] = 0;	/* QEMU extended key event: 12 */
	assert_int_equal(rfb_frame_next(&f, m, 16, &type), 12);
}

static void
test_input_types(void **state)
{
	(void)state;
	assert_true(rfb_msg_is_input(4));
	assert_true(rfb_msg_is_input(5));
	assert_true(rfb_msg_is_input(6));
	assert_true(rfb_msg_is_input(251));
	assert_true(rfb_msg_is_input(255));
	assert_false(rfb_msg_is_input(0));
	assert_false(rfb_msg_is_input(2));
	assert_false(rfb_msg_is_input(3));
}

static void
test_token_shape(void **state)
{
	(void)state;
	assert_true(capability_token_wellformed(
	    "abcdefghijklmnopqrstuvwxyz012-_A", 32));
	assert_false(capability_token_wellformed(
	    "abcdefghijklmnopqrstuvwxyz012-_", 31));
	assert_false(capability_token_wellformed(
	    "abcdefghijklmnopqrstuvwxyz012-_A/", 33));
	assert_false(capability_token_wellformed(
	    "abcdefghijklmnopqrstuvwxyz012-+A", 32));
	assert_false(capability_token_wellformed(
	    "abcdefghijklmnopqrstuvwxyz012-%A", 32));
	assert_null(capability_find("abcdefghijklmnopqrstuvwxyz012-_A", 32));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handshake_phases),
		cmocka_unit_test(test_fixed_sizes),
		cmocka_unit_test(test_variable_sizes),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_input_types),
		cmocka_unit_test(test_token_shape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

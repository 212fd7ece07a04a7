/* SPDX-License-Identifier: MIT */
/*
 * pty: the G-35 input framer.  Stdin bytes come out as slices of what was
 * given, whatever the split; resize gives cols and rows; unknown kinds,
 * lengths over 1 MiB and resize frames of the wrong size are refused with
 * a reason; unread stdin bytes come back on the next call.
 */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "err.h"
#include "guestd.h"
#include "pty.h"

/* pty.c reads the settings; main.c is not linked here. */
struct guestd_settings guestd;

/* Feed all of p, n bytes at a time; collect stdin and the last resize. */
static int
feed(struct pty_framer *f, const uint8_t *p, size_t len, size_t step,
    char *out, size_t *outlen, unsigned *cols, unsigned *rows)
{
	struct pty_event	 ev;
	const char		*why;
	size_t			 off = 0, k;
	int			 r;

	*outlen = 0;
	while (off < len) {
		k = len - off < step ? len - off : step;
		while (k > 0) {
			r = pty_frame_next(f, p + off, k, &ev, &why);
			if (r < 0) {
				assert_non_null(why);
				return r;
			}
			assert_true(r > 0 && (size_t)r <= k);
			if (ev.type == PTY_EV_STDIN) {
				assert_ptr_equal(ev.data, p + off);
				assert_int_equal(ev.n, (size_t)r);
				memcpy(out + *outlen, ev.data, ev.n);
				*outlen += ev.n;
			} else if (ev.type == PTY_EV_RESIZE) {
				*cols = ev.cols;
				*rows = ev.rows;
			}
			off += (size_t)r;
			k -= (size_t)r;
		}
	}
	return 0;
}

static void
test_split_anywhere(void **state)
{
	static const uint8_t	 in[] = { 0, 0, 0, 0, 3, 'a', 'b', 'c',
	    1, 0, 0, 0, 4, 0x01, 0x02, 0x00, 0x30,
	    0, 0, 0, 0, 0,
	    0, 0, 0, 0, 2, 0xc3, 0xa9 };
	struct pty_framer	 f;
	char			 out[64];
	size_t			 n, step;
	unsigned		 cols, rows;

	(void)state;
	for (step = 1; step <= sizeof in; step++) {
		pty_frame_init(&f);
		cols = rows = 0;
		assert_int_equal(feed(&f, in, sizeof in, step, out, &n, &cols,
		    &rows), 0);
		assert_int_equal(n, 5);
		assert_memory_equal(out, "abc\xc3\xa9", 5);
		assert_int_equal(cols, 258);
		assert_int_equal(rows, 48);
		assert_int_equal(f.in_payload, 0);
		assert_int_equal(f.hdrlen, 0);
	}
}

static void
test_refused(void **state)
{
	static const struct { uint8_t b[9]; size_t n; int err; } bad[] = {
		{ { 2, 0, 0, 0, 0 }, 5, ERR_PROTOCOL },
		{ { 255, 0, 0, 0, 1, 0 }, 6, ERR_PROTOCOL },
		{ { 0, 0, 0x10, 0, 1 }, 5, ERR_TOO_LARGE },
		{ { 0, 0xff, 0xff, 0xff, 0xff }, 5, ERR_TOO_LARGE },
		{ { 1, 0, 0, 0, 2, 0, 80 }, 7, ERR_PROTOCOL },
		{ { 1, 0, 0, 0, 5, 0, 80, 0, 24 }, 9, ERR_PROTOCOL },
		{ { 1, 0, 0, 0, 0 }, 5, ERR_PROTOCOL },
	};
	struct pty_framer	 f;
	char			 out[16];
	size_t			 i, n;
	unsigned		 c, r;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		pty_frame_init(&f);
		assert_int_equal(feed(&f, bad[i].b, bad[i].n, 1, out, &n, &c,
		    &r), bad[i].err);
	}
}

static void
test_max_and_unread(void **state)
{
	static const uint8_t	 hdr[] = { 0, 0, 0x10, 0, 0 };	/* 1 MiB */
	static const uint8_t	 data[] = "0123456789";
	struct pty_framer	 f;
	struct pty_event	 ev;
	const char		*why;

	(void)state;
	pty_frame_init(&f);
	assert_int_equal(pty_frame_next(&f, hdr, 5, &ev, &why), 5);
	assert_int_equal(ev.type, PTY_EV_NONE);
	assert_int_equal(f.left, PTY_FRAME_MAX);
	assert_int_equal(pty_frame_next(&f, data, 10, &ev, &why), 10);
	assert_int_equal(ev.type, PTY_EV_STDIN);
	/* Only 4 could be written: the other 6 come again. */
	pty_frame_unread(&f, 6);
	assert_int_equal(f.left, PTY_FRAME_MAX - 4);
	assert_int_equal(pty_frame_next(&f, data + 4, 6, &ev, &why), 6);
	assert_ptr_equal(ev.data, data + 4);
	assert_int_equal(f.left, PTY_FRAME_MAX - 10);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_anywhere),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_max_and_unread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

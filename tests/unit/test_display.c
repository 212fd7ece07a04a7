/*
 * Unit tests of the pieces of the desktop modules that need no X server:
 * damage box arithmetic (capture.c), the area-average downscale and the
 * PNG/JPEG encoders (observe.c), checked by decoding what they produce.
 * The X parts are tested on real Xvfb in tests/integration/display-*.sh.
 */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <png.h>
#include <turbojpeg.h>

#include "capture.h"
#include "observe.h"

/* A w x h BGRX picture: left half red, right half blue, one green pixel. */
static uint8_t *
make_picture(int w, int h)
{
	uint8_t	*px = calloc((size_t)w * (size_t)h, 4), *p;
	int	 x, y;

	for (y = 0; y < h; y++) {
		for (x = 0; x < w; x++) {
			p = px + ((size_t)y * (size_t)w + (size_t)x) * 4;
			if (x < w / 2)
				p[2] = 0xff;	/* R */
			else
				p[0] = 0xff;	/* B */
		}
	}
	p = px + ((size_t)1 * (size_t)w + 1) * 4;
	p[0] = p[2] = 0;
	p[1] = 0xff;
	return px;
}

static void
test_box_union_clip(void **state)
{
	struct capture_box	a = { 0, 0, 0, 0 }, b = { 10, 20, 5, 5 };
	struct capture_box	c = { 0, 0, 2, 2 };

	(void)state;
	capture_box_union(&a, &b);
	assert_int_equal(a.x, 10);
	assert_int_equal(a.w, 5);
	capture_box_union(&a, &c);
	assert_int_equal(a.x, 0);
	assert_int_equal(a.y, 0);
	assert_int_equal(a.w, 15);
	assert_int_equal(a.h, 25);
	b = (struct capture_box){ -5, -5, 10, 10 };
	capture_box_clip(&b, 100, 100);
	assert_int_equal(b.x, 0);
	assert_int_equal(b.w, 5);
	b = (struct capture_box){ 95, 95, 10, 10 };
	capture_box_clip(&b, 100, 100);
	assert_int_equal(b.w, 5);
	assert_int_equal(b.h, 5);
	b = (struct capture_box){ 200, 0, 10, 10 };
	capture_box_clip(&b, 100, 100);
	assert_int_equal(b.w, 0);
	assert_int_equal(b.h, 0);
}

static void
test_scale(void **state)
{
	uint8_t	*px = make_picture(8, 4), dst[4 * 2 * 4];

	(void)state;
	observe_scale(px, 8, 4, 8 * 4, dst, 4, 2);
	/* Left half stays red, right half blue. */
	assert_int_equal(dst[4 * 1 + 2], 0xff);
	assert_int_equal(dst[4 * 1 + 0], 0);
	assert_int_equal(dst[4 * 3 + 0], 0xff);
	assert_int_equal(dst[4 * 3 + 2], 0);
	/* The green pixel is averaged over its 2x2 box. */
	assert_int_equal(dst[1], 0x40);
	free(px);
}

static void
test_png_roundtrip(void **state)
{
	uint8_t		*px = make_picture(64, 32), *out, rgb[64 * 32 * 3];
	png_image	 img;
	size_t		 len;

	(void)state;
	assert_int_equal(observe_encode_png(px, 64, 32, 64 * 4, &out, &len), 0);
	memset(&img, 0, sizeof img);
	img.version = PNG_IMAGE_VERSION;
	assert_true(png_image_begin_read_from_memory(&img, out, len));
	assert_int_equal(img.width, 64);
	assert_int_equal(img.height, 32);
	img.format = PNG_FORMAT_RGB;
	assert_true(png_image_finish_read(&img, NULL, rgb, 0, NULL));
	/* Exact: red left, blue right, green at (1,1). */
	assert_int_equal(rgb[0], 0xff);
	assert_int_equal(rgb[2], 0);
	assert_int_equal(rgb[63 * 3 + 2], 0xff);
	assert_int_equal(rgb[(64 + 1) * 3 + 1], 0xff);
	assert_int_equal(rgb[(64 + 1) * 3 + 0], 0);
	free(out);
	free(px);
}

static void
test_jpeg_roundtrip(void **state)
{
	uint8_t		*px = make_picture(64, 32), *out, rgb[64 * 32 * 3];
	tjhandle	 tj;
	size_t		 len;
	int		 w, h, ss, cs;

	(void)state;
	assert_int_equal(observe_encode_jpeg(px, 64, 32, 64 * 4, 90, &out,
	    &len), 0);
	assert_true(len > 100);
	tj = tjInitDecompress();
	assert_int_equal(tjDecompressHeader3(tj, out, len, &w, &h, &ss, &cs),
	    0);
	assert_int_equal(w, 64);
	assert_int_equal(h, 32);
	assert_int_equal(tjDecompress2(tj, out, len, rgb, 64, 0, 32, TJPF_RGB,
	    0), 0);
	/* Lossy: within a tolerance away from the edge. */
	assert_true(rgb[(10 * 64 + 8) * 3 + 0] > 0xe0);
	assert_true(rgb[(10 * 64 + 8) * 3 + 2] < 0x20);
	assert_true(rgb[(10 * 64 + 56) * 3 + 2] > 0xe0);
	tjDestroy(tj);
	free(out);
	free(px);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_box_union_clip),
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_png_roundtrip),
		cmocka_unit_test(test_jpeg_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the pieces of the desktop modules that need no X server:
 * damage box arithmetic (capture.c), the area-average downscale and the
 * PNG/JPEG encoders (observe.c, encode.c), checked by decoding what they
 * produce, whole and in bands joined into one picture.
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

/* Damage far apart stays apart; near damage merges; a full region grows
 * the box it wastes least with. */
static void
test_region_add(void **state)
{
	struct capture_box	v[3];
	int			n = 0, i;

	(void)state;
	capture_region_add(v, &n, 3, &(struct capture_box){ 0, 0, 10, 10 });
	capture_region_add(v, &n, 3,
	    &(struct capture_box){ 1260, 780, 20, 20 });
	assert_int_equal(n, 2);
	assert_int_equal(v[0].w * v[0].h + v[1].w * v[1].h, 100 + 400);
	/* A glyph next to the first box joins it. */
	capture_region_add(v, &n, 3, &(struct capture_box){ 12, 0, 8, 10 });
	assert_int_equal(n, 2);
	i = v[0].x == 0 ? 0 : 1;
	assert_int_equal(v[i].x, 0);
	assert_int_equal(v[i].w, 20);
	assert_int_equal(v[1 - i].x, 1260);
	/* A box bridging both merges all three. */
	capture_region_add(v, &n, 3, &(struct capture_box){ 0, 0, 1280, 800 });
	assert_int_equal(n, 1);
	assert_int_equal(v[0].w, 1280);
	assert_int_equal(v[0].h, 800);
	/* Full: the new box goes to the nearest one. */
	n = 0;
	capture_region_add(v, &n, 3, &(struct capture_box){ 0, 0, 10, 10 });
	capture_region_add(v, &n, 3, &(struct capture_box){ 500, 0, 10, 10 });
	capture_region_add(v, &n, 3, &(struct capture_box){ 1000, 0, 10, 10 });
	capture_region_add(v, &n, 3, &(struct capture_box){ 900, 0, 10, 10 });
	assert_int_equal(n, 3);
	assert_int_equal(v[2].x, 900);
	assert_int_equal(v[2].w, 110);
}

/* Rows of a terminal: text lines of 13 rows with blank rows between,
 * each line's rows its own, line l's row k hashed as l * 100 + k. */
static uint64_t
term_row(int line, int k)
{
	return k >= 11 ? 7 : (uint64_t)line * 100 + (uint64_t)k + 1000;
}

/* A scroll is found with its shift and run; blank rows, a redraw and a
 * small change are not taken for one. */
static void
test_scroll_find(void **state)
{
	uint64_t	old[312], cur[312];
	int		r, d, y0, n;

	(void)state;
	/* 24 lines of 13 rows; then scrolled up by 3 lines. */
	for (r = 0; r < 312; r++) {
		old[r] = term_row(r / 13, r % 13);
		cur[r] = term_row(r / 13 + 3, r % 13);
	}
	assert_int_equal(capture_scroll_find(old, cur, 312, &d, &y0, &n), 1);
	assert_int_equal(d, 39);
	assert_int_equal(y0, 0);
	assert_int_equal(n, 312 - 39);
	/* Down by three lines: the top three are the new ones. */
	assert_int_equal(capture_scroll_find(cur, old, 312, &d, &y0, &n), 1);
	assert_int_equal(d, -39);
	assert_int_equal(y0, 39);
	assert_int_equal(n, 312 - 39);
	/* Everything new: no copy. */
	for (r = 0; r < 312; r++)
		cur[r] = 50000 + (uint64_t)r;
	assert_int_equal(capture_scroll_find(old, cur, 312, &d, &y0, &n), 0);
	/* Only blank rows changed places: nothing worth copying. */
	for (r = 0; r < 312; r++)
		old[r] = cur[r] = 7;
	for (r = 0; r < 20; r++)
		cur[r] = 8;
	assert_int_equal(capture_scroll_find(old, cur, 312, &d, &y0, &n), 0);
	/* A few rows changed in place: damage, not a copy. */
	for (r = 0; r < 312; r++)
		old[r] = cur[r] = (uint64_t)r;
	for (r = 100; r < 104; r++)
		cur[r] = 90000 + (uint64_t)r;
	assert_int_equal(capture_scroll_find(old, cur, 312, &d, &y0, &n), 0);
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
	assert_int_equal(observe_encode_png(px, 64, 32, 64 * 4, 1, &out, &len), 0);
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
	assert_int_equal(observe_encode_jpeg(px, 64, 32, 64 * 4, 90, 1, &out,
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

/* A w x h BGRX picture with texture everywhere: gradients and a grid. */
static uint8_t *
make_busy(int w, int h, size_t stride)
{
	uint8_t	*px = calloc(stride, (size_t)h), *p;
	int	 x, y;

	for (y = 0; y < h; y++) {
		for (x = 0; x < w; x++) {
			p = px + (size_t)y * stride + (size_t)x * 4;
			p[0] = (uint8_t)(x * 3);
			p[1] = (uint8_t)(y * 5);
			p[2] = (uint8_t)((x / 7 + y / 5) % 2 ? 0xf0 : 0x10);
		}
	}
	return px;
}

/*
 * Bands joined into one PNG decode to exactly the picture: the deflate
 * streams concatenate and the Adler-32 of the whole is right (libpng
 * checks it).  Odd sizes, a stride wider than the rows.
 */
static void
test_png_bands(void **state)
{
	const int	 w = 301, h = 203;
	size_t		 stride = (size_t)w * 4 + 12, len;
	uint8_t		*px = make_busy(w, h, stride), *out, *rgb, *p, *q;
	png_image	 img;
	int		 x, y, n;

	(void)state;
	rgb = malloc((size_t)w * h * 3);
	for (n = 1; n <= 4; n++) {
		assert_int_equal(observe_encode_png(px, w, h, stride, n, &out,
		    &len), 0);
		memset(&img, 0, sizeof img);
		img.version = PNG_IMAGE_VERSION;
		assert_true(png_image_begin_read_from_memory(&img, out, len));
		assert_int_equal(img.width, w);
		assert_int_equal(img.height, h);
		img.format = PNG_FORMAT_RGB;
		assert_true(png_image_finish_read(&img, NULL, rgb, 0, NULL));
		for (y = 0; y < h; y++)
			for (x = 0; x < w; x++) {
				p = px + (size_t)y * stride + (size_t)x * 4;
				q = rgb + ((size_t)y * w + x) * 3;
				assert_int_equal(q[0], p[2]);
				assert_int_equal(q[1], p[1]);
				assert_int_equal(q[2], p[0]);
			}
		free(out);
	}
	free(rgb);
	free(px);
}

/*
 * Bands joined into one JPEG (restart markers between MCU rows) decode to
 * the very pixels the one-band JPEG decodes to: the same blocks, the same
 * tables.  A height that is not a multiple of 16.
 */
static void
test_jpeg_bands(void **state)
{
	const int	 w = 200, h = 150;
	size_t		 stride = (size_t)w * 4, len1, len;
	uint8_t		*px = make_busy(w, h, stride), *one, *out, *a, *b;
	tjhandle	 tj;
	int		 n, ww, hh, ss, cs;

	(void)state;
	a = malloc((size_t)w * h * 3);
	b = malloc((size_t)w * h * 3);
	tj = tjInitDecompress();
	assert_int_equal(observe_encode_jpeg(px, w, h, stride, 80, 1, &one,
	    &len1), 0);
	assert_int_equal(tjDecompress2(tj, one, len1, a, w, 0, h, TJPF_RGB,
	    0), 0);
	for (n = 2; n <= 4; n++) {
		assert_int_equal(observe_encode_jpeg(px, w, h, stride, 80, n,
		    &out, &len), 0);
		assert_int_equal(tjDecompressHeader3(tj, out, len, &ww, &hh,
		    &ss, &cs), 0);
		assert_int_equal(ww, w);
		assert_int_equal(hh, h);
		assert_int_equal(ss, TJSAMP_420);
		/* 0: no warning of corrupt data either. */
		assert_int_equal(tjDecompress2(tj, out, len, b, w, 0, h,
		    TJPF_RGB, 0), 0);
		assert_memory_equal(a, b, (size_t)w * h * 3);
		free(out);
	}
	tjDestroy(tj);
	free(one);
	free(a);
	free(b);
	free(px);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_box_union_clip),
		cmocka_unit_test(test_region_add),
		cmocka_unit_test(test_scroll_find),
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_png_bands),
		cmocka_unit_test(test_jpeg_bands),
		cmocka_unit_test(test_png_roundtrip),
		cmocka_unit_test(test_jpeg_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

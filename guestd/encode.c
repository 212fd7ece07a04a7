/* SPDX-License-Identifier: MIT */
/*
 * Banded JPEG and PNG encoding of BGRX rows (encode.h): the bands run on
 * the worker pool, the joins on the caller.
 *
 * JPEG goes through libjpeg's own API rather than TurboJPEG's: only it
 * sets restart markers (TurboJPEG 2.1 has no parameter for them), and it
 * takes BGRX scanlines straight from the framebuffer (JCS_EXT_BGRX), as
 * TurboJPEG does, with the same SIMD code underneath.
 *
 * Measured on this kind of machine: a dense 1280x800 frame is ~4 ms of
 * JPEG and ~16 ms of PNG on one core; two bands halve both when both
 * cores are free.
 */
#include "autoconf.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <zlib.h>

#include "buf.h"
#include "bytes.h"
#include "encode.h"
#include "err.h"
#include "loop.h"
#include "worker-pool.h"
#include "xmalloc.h"

#define ENCODE_MCU_ROWS		16	/* 4:2:0: a band starts on an MCU row */
#define ENCODE_PNG_ROWS		16	/* filtered rows per deflate call */
#define ENCODE_PNG_LEVEL	1

/*
 * A band per idle worker: on a busy pool (several viewers, an observe at
 * once) more bands only add headers, wakeups and queueing, no speed.
 */
int
encode_bands(int w, int h)
{
	int	n;

	if ((long)w * h < ENCODE_SPLIT_PIXELS || h < 2 * ENCODE_MCU_ROWS)
		return 1;
	n = (int)worker_pool_idle();
	if (n > ENCODE_BANDS_MAX)
		n = ENCODE_BANDS_MAX;
	return n < 1 ? 1 : n;
}

/* ---- JPEG ---------------------------------------------------------------- */

struct encode_jerr {
	struct jpeg_error_mgr	 pub;	/* first */
	jmp_buf			 jb;
};

static void
encode_jpeg_exit(j_common_ptr c)
{
	longjmp(((struct encode_jerr *)(void *)c->err)->jb, 1);
}

static void
encode_jpeg_quiet(j_common_ptr c, int level)
{
	(void)c;
	(void)level;
}

/*
 * Each thread compresses into a buffer of its own that it keeps, and the
 * band gets a copy of exactly its bytes: libjpeg's memory destination
 * otherwise starts at 4 KiB and doubles, copying and faulting in fresh
 * pages at every step (~5% of a full-screen band).  It grows to the
 * largest band the thread has encoded.
 */
#define ENCODE_JPEG_BUF0	(256 * 1024)
static __thread unsigned char	*encode_jpeg_buf;
static __thread unsigned long	 encode_jpeg_cap;

/* libjpeg reports errors by longjmp: nothing in this frame needs freeing
 * but what the compress object owns (a buffer libjpeg grew meanwhile is
 * lost: that needs a failed malloc first). */
static int
encode_jpeg_band(struct encode_job *j, struct encode_band *b)
{
	struct jpeg_compress_struct	 c;
	struct encode_jerr		 e;
	unsigned char			*out;
	unsigned long			 outlen;
	JSAMPROW			 rows[ENCODE_MCU_ROWS];
	JDIMENSION			 n, y;

	if (encode_jpeg_buf == NULL) {
		encode_jpeg_buf = xmalloc(ENCODE_JPEG_BUF0);
		encode_jpeg_cap = ENCODE_JPEG_BUF0;
	}
	out = encode_jpeg_buf;
	outlen = encode_jpeg_cap;
	memset(&c, 0, sizeof c);
	c.err = jpeg_std_error(&e.pub);
	e.pub.error_exit = encode_jpeg_exit;
	e.pub.emit_message = encode_jpeg_quiet;
	if (setjmp(e.jb)) {
		jpeg_destroy_compress(&c);
		return ERR_INTERNAL;
	}
	jpeg_create_compress(&c);
	jpeg_mem_dest(&c, &out, &outlen);
	c.image_width = (JDIMENSION)j->w;
	c.image_height = (JDIMENSION)b->h;
	c.input_components = 4;
	c.in_color_space = JCS_EXT_BGRX;
	jpeg_set_defaults(&c);		/* YCbCr 4:2:0, standard tables */
	jpeg_set_quality(&c, j->quality, TRUE);
	/* Luma's sampling factors set the chroma's resolution. */
	if (j->subsamp == ENCODE_SAMP_444 || j->subsamp == ENCODE_SAMP_422) {
		c.comp_info[0].h_samp_factor =
		    j->subsamp == ENCODE_SAMP_422 ? 2 : 1;
		c.comp_info[0].v_samp_factor = 1;
	}
	c.dct_method = JDCT_IFAST;
	if (j->join && j->nbands > 1)
		c.restart_in_rows = 1;
	jpeg_start_compress(&c, TRUE);
	while (c.next_scanline < c.image_height) {
		y = c.next_scanline;
		for (n = 0; n < ENCODE_MCU_ROWS && y + n < c.image_height; n++)
			rows[n] = (JSAMPROW)(uintptr_t)(j->px +
			    (size_t)(b->y + (int)(y + n)) * j->stride);
		jpeg_write_scanlines(&c, rows, n);
	}
	jpeg_finish_compress(&c);
	jpeg_destroy_compress(&c);
	if (out != encode_jpeg_buf) {
		/* libjpeg outgrew ours: its larger buffer is ours now. */
		free(encode_jpeg_buf);
		encode_jpeg_buf = out;
		encode_jpeg_cap = outlen;
	}
	b->buf = xmalloc(outlen);
	memcpy(b->buf, out, outlen);
	b->len = outlen;
	return 0;
}

/*
 * Where the entropy-coded data of JPEG p starts (after the SOS segment),
 * with the offset of its SOF0 segment's height in *sof.  0 when p is not
 * a baseline JPEG of ours.
 */
static size_t
encode_jpeg_scan(const uint8_t *p, size_t n, size_t *sof)
{
	size_t		off = 2, seglen;
	uint8_t		m;

	*sof = 0;
	if (n < 4 || p[0] != 0xff || p[1] != 0xd8)
		return 0;
	while (off + 4 <= n) {
		if (p[off] != 0xff)
			return 0;
		m = p[off + 1];
		seglen = (size_t)p[off + 2] << 8 | p[off + 3];
		if (seglen < 2 || seglen > n - off - 2)
			return 0;
		if (m == 0xc0 && seglen >= 7)
			*sof = off + 5;	/* length 2, precision 1 */
		off += 2 + seglen;
		if (m == 0xda)
			return *sof != 0 ? off : 0;
	}
	return 0;
}

/* Append src's entropy-coded bytes to dst, numbering its restart markers
 * on from *rst. */
static void
encode_jpeg_copy_scan(struct buf *dst, const uint8_t *src, size_t n,
    unsigned *rst)
{
	size_t	i, from = 0;
	uint8_t	m[2];

	for (i = 0; i + 1 < n; i++) {
		if (src[i] != 0xff || src[i + 1] < 0xd0 || src[i + 1] > 0xd7)
			continue;
		buf_append(dst, src + from, i - from);
		m[0] = 0xff;
		m[1] = (uint8_t)(0xd0 + (*rst)++ % 8);
		buf_append(dst, m, 2);
		from = i + 2;
		i++;
	}
	buf_append(dst, src + from, n - from);
}

static int
encode_jpeg_join(const struct encode_job *j, struct buf *dst)
{
	const struct encode_band	*b;
	size_t				 scan, sof;
	unsigned			 rst = 0;
	uint8_t				 m[2];
	int				 i;

	for (i = 0; i < j->nbands; i++) {
		b = &j->band[i];
		if ((scan = encode_jpeg_scan(b->buf, b->len, &sof)) == 0 ||
		    b->len < scan + 2 || b->buf[b->len - 2] != 0xff ||
		    b->buf[b->len - 1] != 0xd9)
			return ERR_INTERNAL;
		if (i == 0) {
			buf_append(dst, b->buf, scan);
			/* The first band's header, for the whole height. */
			dst->data[sof] = (uint8_t)(j->h >> 8);
			dst->data[sof + 1] = (uint8_t)j->h;
		} else {
			m[0] = 0xff;
			m[1] = (uint8_t)(0xd0 + rst++ % 8);
			buf_append(dst, m, 2);
		}
		encode_jpeg_copy_scan(dst, b->buf + scan, b->len - scan - 2,
		    &rst);
	}
	m[0] = 0xff;
	m[1] = 0xd9;
	buf_append(dst, m, 2);
	return 0;
}

/* ---- PNG ----------------------------------------------------------------- */

/*
 * Row y of the picture as PNG filter type 2 (up) + RGB: the difference to
 * the row above, which the picture has even at a band's first row.  On
 * screens (flat areas, repeated lines) it makes the output a third
 * smaller than no filter for ~3% more instructions (callgrind); the
 * adaptive filters cost several times more.
 */
static void
encode_png_row(const struct encode_job *j, int y, uint8_t *q)
{
	const uint8_t	*p = j->px + (size_t)y * j->stride, *u;
	int		 x;

	if (y == 0) {
		*q++ = 0;	/* none */
		for (x = 0; x < j->w; x++, p += 4, q += 3) {
			q[0] = p[2];
			q[1] = p[1];
			q[2] = p[0];
		}
		return;
	}
	u = p - j->stride;
	*q++ = 2;
	for (x = 0; x < j->w; x++, p += 4, u += 4, q += 3) {
		q[0] = (uint8_t)(p[2] - u[2]);
		q[1] = (uint8_t)(p[1] - u[1]);
		q[2] = (uint8_t)(p[0] - u[0]);
	}
}

static int
encode_png_deflate(z_stream *z, struct buf *out, int flush)
{
	int	zr;

	do {
		if (out->cap - out->len < 4096 &&
		    buf_reserve(out, out->cap) != 0)
			return ERR_NOMEM;
		z->next_out = out->data + out->len;
		z->avail_out = (uInt)(out->cap - out->len);
		zr = deflate(z, flush);
		out->len = out->cap - z->avail_out;
		if (zr == Z_STREAM_ERROR)
			return ERR_INTERNAL;
	} while (z->avail_out == 0 ||
	    (flush == Z_FINISH && zr != Z_STREAM_END));
	return 0;
}

/*
 * Band b as a piece of the PNG's zlib stream: the first band keeps the
 * zlib header, the last drops its own trailer (encode_join writes the
 * whole picture's), the others are bare deflate blocks.  zlib computes
 * the band's Adler-32 as it reads.
 */
static int
encode_png_band(struct encode_job *j, struct encode_band *b)
{
	struct buf	 out;
	z_stream	 z;
	uint8_t		*rows;
	size_t		 rowlen = (size_t)j->w * 3 + 1, skip;
	int		 y, n, last = b->y + b->h == j->h, r = ERR_INTERNAL;

	memset(&z, 0, sizeof z);
	buf_init(&out, SIZE_MAX);
	(void)buf_reserve(&out, rowlen * (size_t)b->h / 8 + 4096);
	rows = xmalloc(rowlen * ENCODE_PNG_ROWS);
	/* memLevel 8: a fifth fewer instructions than 9 at level 1. */
	if (deflateInit2(&z, ENCODE_PNG_LEVEL, Z_DEFLATED, 15, 8,
	    Z_DEFAULT_STRATEGY) != Z_OK)
		goto out;
	for (y = 0; y < b->h; y += n) {
		for (n = 0; n < ENCODE_PNG_ROWS && y + n < b->h; n++)
			encode_png_row(j, b->y + y + n, rows +
			    (size_t)n * rowlen);
		z.next_in = rows;
		z.avail_in = (uInt)(rowlen * (size_t)n);
		if (encode_png_deflate(&z, &out, y + n < b->h ? Z_NO_FLUSH :
		    last ? Z_FINISH : Z_SYNC_FLUSH) != 0)
			goto out;
	}
	b->adler = (uint32_t)z.adler;
	b->rawlen = rowlen * (size_t)b->h;
	skip = b->y == 0 ? 0 : 2;
	if (last && out.len < 4 + skip)
		goto out;
	b->len = out.len - skip - (last ? 4 : 0);
	b->buf = xmalloc(b->len + 1);
	memcpy(b->buf, out.data + skip, b->len);
	b->crc = (uint32_t)crc32(crc32(0, (const Bytef *)"IDAT", 4), b->buf,
	    (uInt)b->len);
	r = 0;
out:
	deflateEnd(&z);
	free(rows);
	buf_free(&out);
	return r;
}

static void
encode_png_chunk(struct buf *dst, const char *type, const uint8_t *p,
    size_t n, uint32_t crc)
{
	buf_put_u32be(dst, (uint32_t)n);
	buf_append(dst, type, 4);
	buf_append(dst, p, n);
	buf_put_u32be(dst, crc);
}

/*
 * zlib's crc32() given a NULL buffer returns its initial value, whatever
 * the crc passed in: IEND's (no data) must not go through it.
 */
static uint32_t
encode_png_crc(const char *type, const uint8_t *p, size_t n)
{
	uLong	crc = crc32(crc32(0, Z_NULL, 0), (const Bytef *)type, 4);

	if (n > 0)
		crc = crc32(crc, p, (uInt)n);
	return (uint32_t)crc;
}

static int
encode_png_join(const struct encode_job *j, struct buf *dst)
{
	static const uint8_t	sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n',
	    0x1a, '\n' };
	uint8_t			ihdr[13], adler[4];
	uLong			a = 1;
	int			i;

	buf_append(dst, sig, sizeof sig);
	bytes_put_be32(ihdr, (uint32_t)j->w);
	bytes_put_be32(ihdr + 4, (uint32_t)j->h);
	ihdr[8] = 8;		/* bit depth */
	ihdr[9] = 2;		/* RGB */
	ihdr[10] = ihdr[11] = ihdr[12] = 0;
	encode_png_chunk(dst, "IHDR", ihdr, sizeof ihdr,
	    encode_png_crc("IHDR", ihdr, sizeof ihdr));
	for (i = 0; i < j->nbands; i++) {
		encode_png_chunk(dst, "IDAT", j->band[i].buf, j->band[i].len,
		    j->band[i].crc);
		a = i == 0 ? j->band[i].adler : adler32_combine(a,
		    j->band[i].adler, (z_off_t)j->band[i].rawlen);
	}
	bytes_put_be32(adler, (uint32_t)a);
	encode_png_chunk(dst, "IDAT", adler, 4,
	    encode_png_crc("IDAT", adler, 4));
	encode_png_chunk(dst, "IEND", NULL, 0, encode_png_crc("IEND", NULL,
	    0));
	return 0;
}

/* ---- bands --------------------------------------------------------------- */

static void
encode_split(struct encode_job *j)
{
	int	i, step, y = 0;

	if (j->nbands <= 0)
		j->nbands = encode_bands(j->w, j->h);
	if (j->nbands > ENCODE_BANDS_MAX)
		j->nbands = ENCODE_BANDS_MAX;
	/* Bands start on an MCU row (also for PNG: it costs nothing). */
	step = (j->h / j->nbands + ENCODE_MCU_ROWS - 1) / ENCODE_MCU_ROWS *
	    ENCODE_MCU_ROWS;
	if (step <= 0)
		step = ENCODE_MCU_ROWS;
	for (i = 0; i < j->nbands && y < j->h; i++) {
		memset(&j->band[i], 0, sizeof j->band[i]);
		j->band[i].job = j;
		j->band[i].y = y;
		j->band[i].h = i == j->nbands - 1 || y + step > j->h ?
		    j->h - y : step;
		y += j->band[i].h;
	}
	j->nbands = i;
	j->r = 0;
}

static void
encode_band_job(void *arg)
{
	struct encode_band	*b = arg;
	struct encode_job	*j = b->job;

	b->r = j->format == ENCODE_JPEG ? encode_jpeg_band(j, b) :
	    encode_png_band(j, b);
}

/*
 * On the loop, once every band is back: one wakeup per job, not one per
 * band (each a loop_post and a turn of the loop).
 */
static void
encode_job_done(void *arg)
{
	struct encode_job	*j = arg;
	int			 i;

	for (i = 0; i < j->nbands; i++)
		if (j->band[i].r != 0 && j->r == 0)
			j->r = j->band[i].r;
	j->done(j, j->arg);
}

/* A band is encoded (on a worker or the caller): the last one posts. */
static void
encode_band_left(struct encode_job *j)
{
	if (__atomic_sub_fetch(&j->left, 1, __ATOMIC_ACQ_REL) == 0)
		loop_post(encode_job_done, j);
}

static void
encode_band_async(void *arg)
{
	struct encode_band	*b = arg;

	encode_band_job(b);
	encode_band_left(b->job);
}

int
encode_start(struct encode_job *j, encode_done_fn done, void *arg)
{
	int	i, r = 0;

	encode_split(j);
	j->done = done;
	j->arg = arg;
	/* Counted before the first band can finish. */
	j->left = j->nbands;
	/* The done callback runs on the loop, after we return. */
	for (i = 0; i < j->nbands; i++)
		if ((r = worker_pool_submit(encode_band_async, NULL,
		    &j->band[i])) != 0)
			break;
	if (i == 0)
		return r != 0 ? r : ERR_INTERNAL;
	/* The queue filled up: the bands left are encoded right here. */
	for (; i < j->nbands; i++) {
		encode_band_job(&j->band[i]);
		encode_band_left(j);
	}
	return 0;
}

int
encode_run(struct encode_job *j)
{
	int	i;

	encode_split(j);
	for (i = 0; i < j->nbands; i++) {
		encode_band_job(&j->band[i]);
		if (j->band[i].r != 0 && j->r == 0)
			j->r = j->band[i].r;
	}
	return j->r;
}

int
encode_join(const struct encode_job *j, uint8_t **out, size_t *outlen)
{
	struct buf	dst;
	size_t		total = 1024;
	int		i, r;

	*out = NULL;
	*outlen = 0;
	if (j->r != 0)
		return j->r;
	for (i = 0; i < j->nbands; i++)
		total += j->band[i].len + 64;
	buf_init(&dst, SIZE_MAX);
	(void)buf_reserve(&dst, total);
	r = j->format == ENCODE_JPEG ? encode_jpeg_join(j, &dst) :
	    encode_png_join(j, &dst);
	if (r != 0) {
		buf_free(&dst);
		return r;
	}
	*out = dst.data;
	*outlen = dst.len;
	return 0;
}

void
encode_clear(struct encode_job *j)
{
	int	i;

	for (i = 0; i < j->nbands && i < ENCODE_BANDS_MAX; i++) {
		free(j->band[i].buf);
		j->band[i].buf = NULL;
		j->band[i].len = 0;
	}
}

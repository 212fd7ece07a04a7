/* SPDX-License-Identifier: MIT */
/*
 * observe (doc/DESIGN.md G-7): screenshots from the capture framebuffer.
 *
 * The frame is made current with one round trip (capture_sync_cursor,
 * which also reads the pointer), so a picture drawn before the request is
 * in it.  When the caller already holds the current frame, the answer is
 * metadata only.  Otherwise the pixels are cropped and area-averaged
 * down when asked, encoded (encode.h: JPEG by libjpeg-turbo straight
 * from BGRX, PNG at zlib level 1 without filters), and sent as channel 0
 * frames under the control channel's backpressure before the metadata
 * reply.
 *
 * Encoding runs on the worker pool (worker-pool.h), off the loop.  An
 * unscaled picture is cut into bands encoded on every worker at once and
 * joined into one image: a dense 1280x800 frame is ~4 ms of JPEG and ~16
 * ms of PNG on one core.  The region is copied off the framebuffer first
 * (~0.4 ms at 1280x800), as capture goes on grabbing into it.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "control.h"
#include "display.h"
#include "encode.h"
#include "err.h"
#include "json.h"
#include "observe.h"
#include "proto.h"
#include "worker-pool.h"
#include "xmalloc.h"

#define OBSERVE_MAX_SIDE	16384

struct observe_send {
	struct control_stream	 s;	/* first */
	uint8_t			*buf;
	size_t			 len, off;
	json_t			*meta;

	/* Encoding on a worker (worker-pool.c): the region copied off the
	 * framebuffer, which capture keeps writing meanwhile. */
	uint8_t			*px;
	int			 w, h, dw, dh, jpeg, quality;
	struct encode_job	 job;		/* unscaled: bands on workers */
	int			 encoding;	/* a worker owns px/buf now */
	int			 aborted;	/* the connection went meanwhile */
	int			 r;
};

/* ---- encoders ------------------------------------------------------------ */

/* One picture on the calling thread, in one band or several (encode.h). */
static int
observe_encode(const uint8_t *px, int w, int h, size_t stride,
    enum encode_format format, int quality, int nbands, uint8_t **out,
    size_t *outlen)
{
	struct encode_job	j;
	int			r;

	memset(&j, 0, sizeof j);
	j.px = px;
	j.w = w;
	j.h = h;
	j.stride = stride;
	j.format = format;
	j.quality = quality;
	j.join = 1;
	j.nbands = nbands;
	if ((r = encode_run(&j)) == 0)
		r = encode_join(&j, out, outlen);
	encode_clear(&j);
	return r;
}

int
observe_encode_png(const uint8_t *px, int w, int h, size_t stride,
    int nbands, uint8_t **out, size_t *outlen)
{
	return observe_encode(px, w, h, stride, ENCODE_PNG, 0, nbands, out,
	    outlen);
}

int
observe_encode_jpeg(const uint8_t *px, int w, int h, size_t stride,
    int quality, int nbands, uint8_t **out, size_t *outlen)
{
	return observe_encode(px, w, h, stride, ENCODE_JPEG, quality, nbands,
	    out, outlen);
}

void
observe_scale(const uint8_t *px, int w, int h, size_t stride, uint8_t *dst,
    int dw, int dh)
{
	int		*x0, *x1;
	int		 dx, dy, sx, sy, sy0, sy1, c;
	uint32_t	 sum[3], n;
	const uint8_t	*p;
	uint8_t		*q;

	x0 = xcalloc((size_t)dw, sizeof *x0);
	x1 = xcalloc((size_t)dw, sizeof *x1);
	for (dx = 0; dx < dw; dx++) {
		x0[dx] = (int)((int64_t)dx * w / dw);
		x1[dx] = (int)((int64_t)(dx + 1) * w / dw);
		if (x1[dx] <= x0[dx])
			x1[dx] = x0[dx] + 1;
	}
	for (dy = 0; dy < dh; dy++) {
		sy0 = (int)((int64_t)dy * h / dh);
		sy1 = (int)((int64_t)(dy + 1) * h / dh);
		if (sy1 <= sy0)
			sy1 = sy0 + 1;
		q = dst + (size_t)dy * (size_t)dw * 4;
		for (dx = 0; dx < dw; dx++, q += 4) {
			sum[0] = sum[1] = sum[2] = 0;
			n = 0;
			for (sy = sy0; sy < sy1; sy++) {
				p = px + (size_t)sy * stride +
				    (size_t)x0[dx] * 4;
				for (sx = x0[dx]; sx < x1[dx]; sx++, p += 4) {
					for (c = 0; c < 3; c++)
						sum[c] += p[c];
					n++;
				}
			}
			for (c = 0; c < 3; c++)
				q[c] = (uint8_t)((sum[c] + n / 2) / n);
			q[3] = 0;
		}
	}
	free(x0);
	free(x1);
}

/* ---- sending ------------------------------------------------------------- */

static void
observe_send_free(struct observe_send *o)
{
	control_stream_detach(&o->s);
	free(o->px);
	free(o->buf);
	json_decref(o->meta);
	free(o);
}

/* Send what the queue takes; pause when full; reply at the end. */
static void
observe_send_more(struct observe_send *o)
{
	struct control_conn	*c = o->s.conn;
	size_t			 n;
	int			 end;

	while (o->off < o->len || o->len == 0) {
		if (control_out_full(c)) {
			control_stream_pause(&o->s);
			return;
		}
		n = o->len - o->off;
		if (n > PROTO_CHUNK)
			n = PROTO_CHUNK;
		end = o->off + n == o->len;
		if (control_send_data(c, o->s.id, PROTO_CH_DATA,
		    o->buf + o->off, n, end) != 0) {
			control_reply_error(c, o->s.id, ERR_NOMEM, NULL);
			observe_send_free(o);
			return;
		}
		o->off += n;
		if (end)
			break;
	}
	control_reply(c, o->s.id, o->meta);
	o->meta = NULL;
	observe_send_free(o);
}

static void
observe_resume(struct control_stream *s)
{
	observe_send_more((struct observe_send *)s);
}

static void
observe_abort(struct control_stream *s)
{
	struct observe_send	*o = (struct observe_send *)s;

	o->s.conn = NULL;
	if (o->encoding) {
		/* The worker still has it; observe_encoded() frees it. */
		o->aborted = 1;
		return;
	}
	free(o->px);
	free(o->buf);
	json_decref(o->meta);
	free(o);
}

static const struct control_stream_ops observe_stream_ops = {
	observe_resume, NULL, observe_abort
};

/* ---- the op ------------------------------------------------------------- */

struct observe_req {
	const char		*bot;
	int			 jpeg;
	int			 quality;
	int64_t			 max_w, max_h;
	struct capture_box	 region;
	int			 has_region;
	int64_t			 since;		/* -1: not given */
};

static int
observe_parse_region(json_t *args, struct observe_req *q, char *detail)
{
	static const char *const keys[] = { "x", "y", "width", "height",
	    NULL };
	json_t	*reg;
	int64_t	 x, y, w, h;
	int	 r;

	r = jsonx_obj(args, "region", &reg, detail);
	if (r == ERR_NOT_FOUND)
		return 0;
	if (r != 0 || (r = jsonx_only_keys(reg, keys, detail)) != 0)
		return r;
	if ((r = jsonx_int(reg, "x", 0, OBSERVE_MAX_SIDE, &x, detail)) != 0 ||
	    (r = jsonx_int(reg, "y", 0, OBSERVE_MAX_SIDE, &y, detail)) != 0 ||
	    (r = jsonx_int(reg, "width", 1, OBSERVE_MAX_SIDE, &w,
	    detail)) != 0 ||
	    (r = jsonx_int(reg, "height", 1, OBSERVE_MAX_SIDE, &h,
	    detail)) != 0)
		return r == ERR_NOT_FOUND ? ERR_BAD_REQUEST : r;
	q->region.x = (int)x;
	q->region.y = (int)y;
	q->region.w = (int)w;
	q->region.h = (int)h;
	q->has_region = 1;
	return 0;
}

static int
observe_parse(json_t *args, struct observe_req *q, char *detail)
{
	static const char *const keys[] = { "bot", "format", "quality",
	    "max_width", "max_height", "region", "since_frame", NULL };
	const char	*fmt;
	int64_t		 v;
	int		 r;

	memset(q, 0, sizeof *q);
	q->quality = 80;
	q->max_w = q->max_h = OBSERVE_MAX_SIDE;
	q->since = -1;
	if ((r = jsonx_only_keys(args, keys, detail)) != 0)
		return r;
	if ((r = jsonx_str(args, "bot", 64, &q->bot, detail)) != 0)
		return r == ERR_NOT_FOUND ? ERR_BAD_REQUEST : r;
	r = jsonx_str(args, "format", 8, &fmt, detail);
	if (r == 0) {
		if (strcmp(fmt, "jpeg") == 0 || strcmp(fmt, "jpg") == 0)
			q->jpeg = 1;
		else if (strcmp(fmt, "png") != 0) {
			snprintf(detail, JSONX_ERRLEN, "(format: png or jpeg)");
			return ERR_BAD_REQUEST;
		}
	} else if (r != ERR_NOT_FOUND)
		return r;
	if ((r = jsonx_int(args, "quality", 1, 100, &v, detail)) == 0)
		q->quality = (int)v;
	else if (r != ERR_NOT_FOUND)
		return r;
	if ((r = jsonx_int(args, "max_width", 1, OBSERVE_MAX_SIDE, &q->max_w,
	    detail)) != 0 && r != ERR_NOT_FOUND)
		return r;
	if ((r = jsonx_int(args, "max_height", 1, OBSERVE_MAX_SIDE,
	    &q->max_h, detail)) != 0 && r != ERR_NOT_FOUND)
		return r;
	if ((r = jsonx_int(args, "since_frame", 0, INT64_MAX, &q->since,
	    detail)) != 0 && r != ERR_NOT_FOUND)
		return r;
	return observe_parse_region(args, q, detail);
}

static json_t *
observe_box_json(const struct capture_box *b)
{
	return json_pack("{s:i,s:i,s:i,s:i}", "x", b->x, "y", b->y,
	    "width", b->w, "height", b->h);
}

/* On a worker: scale the copied region to dw x dh and encode it in one
 * band (scaled pictures are small). */
static void
observe_encode_job(void *arg)
{
	struct observe_send	*o = arg;
	const uint8_t		*src = o->px;
	uint8_t			*tmp = NULL;
	size_t			 stride = (size_t)o->w * 4;

	if (o->dw != o->w || o->dh != o->h) {
		tmp = xmalloc((size_t)o->dw * (size_t)o->dh * 4);
		observe_scale(src, o->w, o->h, stride, tmp, o->dw, o->dh);
		src = tmp;
		stride = (size_t)o->dw * 4;
	}
	if (o->jpeg)
		o->r = observe_encode_jpeg(src, o->dw, o->dh, stride,
		    o->quality, 1, &o->buf, &o->len);
	else
		o->r = observe_encode_png(src, o->dw, o->dh, stride, 1,
		    &o->buf, &o->len);
	free(tmp);
}

static void	observe_encoded(void *arg);

/* Back on the loop, every band encoded: join them and send. */
static void
observe_bands_done(struct encode_job *j, void *arg)
{
	struct observe_send	*o = arg;

	o->r = encode_join(j, &o->buf, &o->len);
	encode_clear(j);
	observe_encoded(o);
}

/* Back on the loop: send the image, or the error. */
static void
observe_encoded(void *arg)
{
	struct observe_send	*o = arg;

	o->encoding = 0;
	free(o->px);
	o->px = NULL;
	if (o->aborted) {
		free(o->buf);
		json_decref(o->meta);
		free(o);
		return;
	}
	if (o->r != 0) {
		control_reply_error(o->s.conn, o->s.id, o->r, NULL);
		observe_send_free(o);
		return;
	}
	json_object_set_new(o->meta, "bytes", json_integer((json_int_t)o->len));
	observe_send_more(o);
}

int
observe_op(struct control_conn *c, uint32_t id, json_t *args, char *detail,
    size_t detaillen)
{
	struct observe_req	 q;
	struct observe_send	*o;
	struct capture_box	 dmg;
	struct display		*d;
	struct capture		*cap;
	const uint8_t		*fb;
	size_t			 stride;
	json_t			*meta;
	uint64_t		 frame;
	double			 scale;
	int			 sw, sh, dw, dh, cx, cy, r, y;

	if ((r = observe_parse(args, &q, detail)) != 0)
		return r;
	if ((d = display_find(q.bot)) == NULL)
		return ERR_NO_DISPLAY;
	display_touch(d);
	cap = display_capture(d);
	if (capture_sync_cursor(cap, &cx, &cy) != 0) {
		snprintf(detail, detaillen, "(the X server went away)");
		return ERR_NO_DISPLAY;
	}
	fb = capture_pixels(cap, &sw, &sh, &stride);
	if (!q.has_region) {
		q.region.w = sw;
		q.region.h = sh;
	} else if (q.region.x + q.region.w > sw ||
	    q.region.y + q.region.h > sh) {
		snprintf(detail, detaillen, "(region outside the %dx%d screen)",
		    sw, sh);
		return ERR_RANGE;
	}
	scale = 1.0;
	if ((double)q.max_w / q.region.w < scale)
		scale = (double)q.max_w / q.region.w;
	if ((double)q.max_h / q.region.h < scale)
		scale = (double)q.max_h / q.region.h;
	dw = (int)(q.region.w * scale + 0.5);
	dh = (int)(q.region.h * scale + 0.5);
	if (dw < 1)
		dw = 1;
	if (dh < 1)
		dh = 1;
	if (dw > q.max_w)
		dw = (int)q.max_w;
	if (dh > q.max_h)
		dh = (int)q.max_h;
	frame = capture_frame(cap);
	meta = json_pack("{s:I,s:i,s:i,s:f,s:{s:i,s:i},s:{s:i,s:i},s:I}",
	    "frame", (json_int_t)frame, "width", dw, "height", dh,
	    "scale", scale, "screen", "width", sw, "height", sh,
	    "cursor", "x", cx, "y", cy,
	    "captured_ms", (json_int_t)capture_time_ms(cap));
	if (meta == NULL)
		return ERR_NOMEM;
	if (q.since >= 0 && (uint64_t)q.since == frame) {
		json_object_set_new(meta, "unchanged", json_true());
		return control_reply(c, id, meta);
	}
	capture_damage_since(cap, q.since >= 0 ? (uint64_t)q.since : 0, &dmg);
	json_object_set_new(meta, "unchanged", json_false());
	json_object_set_new(meta, "format", json_string(q.jpeg ? "jpeg" :
	    "png"));
	json_object_set_new(meta, "region", observe_box_json(&q.region));
	json_object_set_new(meta, "damage", dmg.w > 0 ?
	    observe_box_json(&dmg) : json_null());
	o = xcalloc(1, sizeof *o);
	o->meta = meta;
	o->w = q.region.w;
	o->h = q.region.h;
	o->dw = dw;
	o->dh = dh;
	o->jpeg = q.jpeg;
	o->quality = q.quality;
	/* A copy: capture goes on grabbing into the framebuffer. */
	o->px = xmalloc((size_t)o->w * (size_t)o->h * 4);
	for (y = 0; y < o->h; y++)
		memcpy(o->px + (size_t)y * o->w * 4, fb + (size_t)(q.region.y +
		    y) * stride + (size_t)q.region.x * 4, (size_t)o->w * 4);
	control_stream_attach(c, &o->s, id, &observe_stream_ops);
	o->encoding = 1;
	if (dw == o->w && dh == o->h) {
		/* Unscaled: in bands over the whole pool. */
		o->job.px = o->px;
		o->job.w = o->w;
		o->job.h = o->h;
		o->job.stride = (size_t)o->w * 4;
		o->job.format = q.jpeg ? ENCODE_JPEG : ENCODE_PNG;
		o->job.quality = q.quality;
		o->job.join = 1;
		r = encode_start(&o->job, observe_bands_done, o);
	} else
		r = worker_pool_submit(observe_encode_job, observe_encoded, o);
	if (r != 0) {
		o->encoding = 0;
		observe_send_free(o);
		snprintf(detail, detaillen, "(too many screenshots in progress)");
		return r;
	}
	return 0;
}

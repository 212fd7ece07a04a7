/* SPDX-License-Identifier: MIT */
/*
 * The fast path for viewers that ask for Tight with JPEG (noVNC's
 * default): their large updates are answered here, JPEG rectangles
 * encoded on the worker pool (encode.h) and written as one whole
 * FramebufferUpdate, instead of by libvncserver's Tight encoder, which
 * hunts for solid areas and palettes across the whole update and then
 * encodes 64 Ki-pixel pieces one by one on the loop.  Small updates
 * (a cursor blink, a few glyphs) are still libvncserver's: its solid and
 * few-colour subencodings are the right choice there.
 *
 * The update is taken between libvncserver reading the viewer's request
 * and it answering (rfb.c pumps rfbCheckFds, then rfb_tight_take, then
 * rfbProcessEvents): the region is the viewer's modified region within
 * what it asked for, cut out of its modified region, and its request is
 * cleared, so libvncserver has nothing to send it.  The viewer is held
 * (rfb_hold) until the update is written, so no later update of
 * libvncserver's can overtake it.  Updates with something else pending
 * (a cursor shape or position, a size change, a copy) stay
 * libvncserver's, as do scaled viewers.
 *
 * The workers encode straight from the framebuffer: the capture is held
 * (capture_hold) until every piece is back, so no grab rewrites the rows
 * meanwhile (the next damage waits, which keeps grabs at the encoder's
 * pace) and the pixels stay mapped even if the display closes.  Copying
 * the rectangles out instead cost ~12% of a full-screen update.  Large
 * rectangles are cut
 * into bands, one per worker, each a Tight rectangle of its own.  The
 * viewer's JPEG quality and chroma subsampling are what libvncserver's
 * Tight would use: its fine quality and subsampling pseudo-encodings
 * when sent, else those its quality level implies (levels 0-2 4:2:0,
 * 3-5 4:2:2, 6-9 4:4:4: noVNC's default 6 is 4:4:4).  Grey JPEG stays
 * libvncserver's.
 */
#include "autoconf.h"

#include <sys/uio.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rfb/rfb.h>
#include <rfb/rfbregion.h>

#include "bytes.h"
#include "capture.h"
#include "encode.h"
#include "log.h"
#include "rfb-int.h"
#include "xmalloc.h"

/* Below this many pixels an update is libvncserver's. */
#define RFB_TIGHT_MIN_PIXELS	(128 * 128)
/* Tight rectangles are at most 2048 pixels wide. */
#define RFB_TIGHT_MAX_W		2048
/* Pieces of one update; more rectangles are sent as their bounding box. */
#define RFB_TIGHT_PIECES	8
/* Tight's compact length takes 22 bits. */
#define RFB_TIGHT_MAX_LEN	((1u << 22) - 1)

struct rfb_tight_piece {
	struct encode_job	 job;
	int			 x, y;
	struct rfb_tight	*t;
};

struct rfb_tight {
	rfbClientPtr		 cl;	/* NULL: the viewer went */
	struct rfb		*r;
	struct capture		*cap;	/* held while pieces are out */
	struct rfb_tight_piece	 piece[RFB_TIGHT_PIECES];
	int			 npieces;
	int			 pending;
	int			 async;		/* done is to be called */
	rfb_tight_done_fn	 done;
};

/* JPEG quality the viewer asked for (fine level, else Tight level). */
static int
rfb_tight_quality(rfbClientPtr cl)
{
	static const int	q[10] = { 15, 29, 41, 42, 62, 77, 79, 86, 92,
	    100 };

	if (cl->turboQualityLevel >= 1 && cl->turboQualityLevel <= 100)
		return cl->turboQualityLevel;
	if (cl->tightQualityLevel >= 0 && cl->tightQualityLevel <= 9)
		return q[cl->tightQualityLevel];
	return 80;
}

/* libvncserver's turboSubsampLevel: 0 4:4:4, 1 4:2:0, 2 4:2:2, 3 grey. */
static enum encode_samp
rfb_tight_subsamp(rfbClientPtr cl)
{
	switch (cl->turboSubsampLevel) {
	case 0:
		return ENCODE_SAMP_444;
	case 2:
		return ENCODE_SAMP_422;
	default:
		return ENCODE_SAMP_420;
	}
}

int
rfb_tight_eligible(rfbClientPtr cl)
{
	return cl->preferredEncoding == rfbEncodingTight &&
	    cl->tightQualityLevel >= 0 &&
	    cl->turboSubsampLevel >= 0 && cl->turboSubsampLevel <= 2 &&
	    cl->format.bitsPerPixel == 32 && cl->format.trueColour &&
	    cl->scaledScreen == cl->screen &&
	    cl->enableCursorShapeUpdates;
}

/* Anything in this update libvncserver must send itself? */
static int
rfb_tight_other_pending(rfbClientPtr cl)
{
	return cl->cursorWasChanged || cl->cursorWasMoved ||
	    (cl->useNewFBSize && cl->newFBSizePending) ||
	    !sraRgnEmpty(cl->copyRegion) ||
	    cl->enableSupportedMessages || cl->enableSupportedEncodings ||
	    cl->enableServerIdentity;
}

static void
rfb_tight_free(struct rfb_tight *t)
{
	int	i;

	for (i = 0; i < t->npieces; i++)
		encode_clear(&t->piece[i].job);
	if (t->cap != NULL)
		capture_release(t->cap);
	free(t);
}

static void
rfb_tight_compact_len(uint8_t *p, size_t *n, uint32_t len)
{
	*n = 0;
	p[(*n)++] = (uint8_t)(len & 0x7f) | (len > 0x7f ? 0x80 : 0);
	if (len > 0x7f) {
		p[(*n)++] = (uint8_t)(len >> 7 & 0x7f) |
		    (len > 0x3fff ? 0x80 : 0);
		if (len > 0x3fff)
			p[(*n)++] = (uint8_t)(len >> 14);
	}
}

/* Iovecs of one update: its header, then a header and the bytes per band. */
#define RFB_TIGHT_IOV	(1 + 2 * RFB_TIGHT_PIECES * ENCODE_BANDS_MAX)
#define RFB_TIGHT_HDR	(4 + 16 * RFB_TIGHT_PIECES * ENCODE_BANDS_MAX)

/*
 * Write the whole FramebufferUpdate of t's bands with one writev, from
 * the bands' own buffers: no message is assembled (a copy and an
 * allocation of the whole update each time).  rfb_gate made sure it fits
 * in the socket; should the kernel still take only part, the rest goes
 * through libvncserver's blocking write.  0, or -1 (the viewer is to be
 * closed).
 */
static int
rfb_tight_write(struct rfb_tight *t, rfbClientPtr cl)
{
	const struct encode_band	*b;
	struct iovec			 iov[RFB_TIGHT_IOV];
	uint8_t				 hdr[RFB_TIGHT_HDR], *p = hdr;
	size_t				 n;
	ssize_t				 w;
	int				 i, k, niov = 1, nrects = 0;

	*p++ = rfbFramebufferUpdate;
	*p++ = 0;
	p += 2;		/* the count, below */
	iov[0].iov_base = hdr;
	iov[0].iov_len = 4;
	for (i = 0; i < t->npieces; i++)
		for (k = 0; k < t->piece[i].job.nbands; k++) {
			b = &t->piece[i].job.band[k];
			if (b->len > RFB_TIGHT_MAX_LEN)
				return -1;
			iov[niov].iov_base = p;
			bytes_put_be16(p, (uint16_t)t->piece[i].x);
			bytes_put_be16(p + 2, (uint16_t)(t->piece[i].y + b->y));
			bytes_put_be16(p + 4, (uint16_t)t->piece[i].job.w);
			bytes_put_be16(p + 6, (uint16_t)b->h);
			bytes_put_be32(p + 8, (uint32_t)rfbEncodingTight);
			p[12] = rfbTightJpeg << 4;
			rfb_tight_compact_len(p + 13, &n, (uint32_t)b->len);
			iov[niov++].iov_len = 13 + n;
			p += 13 + n;
			iov[niov].iov_base = b->buf;
			iov[niov++].iov_len = b->len;
			nrects++;
		}
	bytes_put_be16(hdr + 2, (uint16_t)nrects);
	for (i = 0; i < niov; ) {
		if ((w = writev(cl->sock, iov + i, niov - i)) < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return -1;
			break;
		}
		for (; i < niov && (size_t)w >= iov[i].iov_len; i++)
			w -= (ssize_t)iov[i].iov_len;
		if (i < niov) {
			iov[i].iov_base = (uint8_t *)iov[i].iov_base + w;
			iov[i].iov_len -= (size_t)w;
		}
	}
	for (; i < niov; i++)
		if (rfbWriteExact(cl, iov[i].iov_base, (int)iov[i].iov_len) < 0)
			return -1;
	return 0;
}

/* Every piece back: write the update, let the viewer go on. */
static void
rfb_tight_finish(struct rfb_tight *t)
{
	rfbClientPtr	 cl = t->cl;
	int		 i, r = 0;

	if (cl == NULL) {
		rfb_tight_free(t);
		return;
	}
	for (i = 0; i < t->npieces; i++)
		if (t->piece[i].job.r != 0)
			r = t->piece[i].job.r;
	/*
	 * A failed encoding closes the viewer, as a failed write does: what
	 * it shows would be wrong from here on.
	 */
	if (cl->sock == RFB_INVALID_SOCKET)
		;	/* closed meanwhile, reaped on the next pump */
	else if (r != 0 || rfb_tight_write(t, cl) != 0) {
		log_debug("rfb.tight_failed", "r=%d", r);
		rfbCloseClient(cl);
	}
	if (t->async)
		t->done(t->r, cl);
	rfb_tight_free(t);
}

static void
rfb_tight_piece_done(struct encode_job *j, void *arg)
{
	struct rfb_tight_piece	*pc = arg;
	struct rfb_tight	*t = pc->t;

	(void)j;
	if (--t->pending == 0)
		rfb_tight_finish(t);
}

/* Rectangles of region rgn, at most RFB_TIGHT_PIECES, none too wide. */
static int
rfb_tight_rects(sraRegionPtr rgn, sraRect *v)
{
	sraRectangleIterator	*it;
	sraRegionPtr		 bb;
	sraRect			 rc;
	int			 n = 0, x;

	if (sraRgnCountRects(rgn) <= RFB_TIGHT_PIECES) {
		it = sraRgnGetIterator(rgn);
		while (sraRgnIteratorNext(it, &rc) && n < RFB_TIGHT_PIECES)
			v[n++] = rc;
		sraRgnReleaseIterator(it);
	} else {
		bb = sraRgnBBox(rgn);
		if (sraRgnPopRect(bb, &rc, 0))
			v[n++] = rc;
		sraRgnDestroy(bb);
	}
	/* Split what is too wide into columns, as room allows. */
	for (x = 0; x < n; x++) {
		if (v[x].x2 - v[x].x1 <= RFB_TIGHT_MAX_W ||
		    n == RFB_TIGHT_PIECES)
			continue;
		v[n] = v[x];
		v[n].x1 = v[x].x1 + RFB_TIGHT_MAX_W;
		v[x].x2 = v[n].x1;
		n++;
	}
	return n;
}

static long
rfb_tight_area(sraRegionPtr rgn)
{
	sraRectangleIterator	*it;
	sraRect			 rc;
	long			 a = 0;

	it = sraRgnGetIterator(rgn);
	while (sraRgnIteratorNext(it, &rc))
		a += (long)(rc.x2 - rc.x1) * (rc.y2 - rc.y1);
	sraRgnReleaseIterator(it);
	return a;
}

static void
rfb_tight_start_piece(struct rfb_tight *t, struct rfb_tight_piece *pc,
    const sraRect *rc, int quality, enum encode_samp subsamp)
{
	rfbScreenInfoPtr	 s = t->cl->screen;

	pc->t = t;
	pc->x = rc->x1;
	pc->y = rc->y1;
	pc->job.w = rc->x2 - rc->x1;
	pc->job.h = rc->y2 - rc->y1;
	pc->job.stride = (size_t)s->paddedWidthInBytes;
	pc->job.px = (const uint8_t *)s->frameBuffer +
	    (size_t)rc->y1 * pc->job.stride + (size_t)rc->x1 * 4;
	pc->job.format = ENCODE_JPEG;
	pc->job.quality = quality;
	pc->job.subsamp = subsamp;
	t->pending++;
	if (encode_start(&pc->job, rfb_tight_piece_done, pc) == 0)
		return;
	/* The pool is full: on the loop then, still whole. */
	pc->job.nbands = 1;
	(void)encode_run(&pc->job);
	t->pending--;
}

int
rfb_tight_take(struct rfb *r, rfbClientPtr cl, rfb_tight_done_fn done,
    struct rfb_tight **out)
{
	struct rfb_tight	*t;
	sraRegionPtr		 upd;
	sraRect			 v[RFB_TIGHT_PIECES];
	int			 i, n, quality;

	*out = NULL;
	if (!rfb_tight_eligible(cl) || cl->sock == RFB_INVALID_SOCKET ||
	    sraRgnEmpty(cl->requestedRegion) || rfb_tight_other_pending(cl))
		return 0;
	upd = sraRgnCreateRgn(cl->modifiedRegion);
	sraRgnAnd(upd, cl->requestedRegion);
	if (rfb_tight_area(upd) < RFB_TIGHT_MIN_PIXELS) {
		sraRgnDestroy(upd);
		return 0;
	}
	n = rfb_tight_rects(upd, v);
	/* What we send is no longer modified; the request is answered. */
	for (i = 0; i < n; i++) {
		sraRegionPtr	rc = sraRgnCreateRect(v[i].x1, v[i].y1,
		    v[i].x2, v[i].y2);

		sraRgnSubtract(cl->modifiedRegion, rc);
		sraRgnDestroy(rc);
	}
	sraRgnMakeEmpty(cl->requestedRegion);
	sraRgnDestroy(upd);
	t = xcalloc(1, sizeof *t);
	t->cl = cl;
	t->r = r;
	/* No grab rewrites the rows until every piece is encoded. */
	if ((t->cap = r->cap) != NULL)
		capture_hold(t->cap);
	t->done = done;
	t->npieces = n;
	quality = rfb_tight_quality(cl);
	/* Count every piece first: a band may only finish after we return. */
	for (i = 0; i < n; i++)
		rfb_tight_start_piece(t, &t->piece[i], &v[i], quality,
		    rfb_tight_subsamp(cl));
	if (t->pending == 0) {
		/* All done on the loop (the pool was full): written now. */
		rfb_tight_finish(t);
		return 1;
	}
	t->async = 1;
	*out = t;
	return 1;
}

void
rfb_tight_orphan(struct rfb_tight *t)
{
	t->cl = NULL;
}

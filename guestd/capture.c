/* SPDX-License-Identifier: MIT */
/*
 * Damage-driven capture of one X display (doc/DESIGN.md G-6).
 *
 * The framebuffer is an XShm segment the size of the screen: XShmGetImage
 * writes the damaged rows straight into it, so there is no copy.  The
 * server computes the row pitch of a shm grab from the width it is asked
 * for, so we always grab whole-width bands (y .. y+h): that keeps the
 * pitch equal to the framebuffer's and costs at most one full grab
 * (~0.4 ms at 1280x800).
 *
 * Damage is reported as delta rectangles: each event carries a rectangle
 * newly added to the damage region (nothing more is reported for what is
 * already damaged), so a grab is one round trip per band of rows
 * (subtract everything, then XShmGetImage), with no region to fetch.  The
 * rectangles are kept as a small region (capture_region_add: merged when
 * close, at most CAPTURE_RECTS), so two small changes at opposite corners
 * grab and report two small boxes, not the screen between them.  The
 * rectangles of the events read before a subtract cover everything
 * damaged before it; what is drawn after it is reported anew.
 *
 * Scrolls are found, not guessed: while RFB listens (capture_set_copy_cb)
 * every grabbed row is hashed in tiles of CAPTURE_TILE pixels, so the
 * hashes describe the framebuffer (no second copy of it is kept), but for
 * rows marked stale: while the screen changes all over without a sign of
 * a scroll, most frames are not hashed (capture_hash_frame).
 * Before a grab, the rows of each tall enough damage box get a signature
 * from the old hashes of the tiles wholly inside it; after the grab, from
 * the new ones; capture_scroll_find looks for a shift that lines most of
 * them up (an xterm or a browser scrolling).  What it finds is reported
 * as a copy, and only the rest of the box as damage.  The columns of the
 * box's partial tiles are not compared and stay damage.
 *
 * Xlib reads ahead: events it has queued do not make the fd readable
 * again, so every pass reads once (XPending) and drains Xlib's queue.  Xlib's default
 * handlers exit the process on any error; ours record and return, and an
 * I/O error (the server died) only marks the capture dead.
 */
#include "autoconf.h"

#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/time.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XShm.h>
#include <X11/extensions/Xdamage.h>
#include <X11/extensions/Xfixes.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#endif

#include "capture.h"
#include "err.h"
#include "loop.h"
#include "xmalloc.h"

#define CAPTURE_HIST		64	/* damage boxes remembered (frames) */
#define CAPTURE_MAX_PASSES	8	/* grabs per loop turn before yielding */
#define CAPTURE_RECTS		16	/* damage rectangles kept apart */
/* Rectangles closer than this merge: a box per glyph costs more (in
 * rectangles, headers and JPEG blocks) than the pixels between them. */
#define CAPTURE_NEAR		32
/* Row bands closer than this are one grab: a round trip costs more. */
#define CAPTURE_BAND_GAP	64
/* Pixels of a row per hash. */
#define CAPTURE_TILE		16
/* A box is looked at for a scroll from this many whole tiles and rows. */
#define CAPTURE_SCROLL_TILES	4
#define CAPTURE_SCROLL_ROWS	32
/* A copy is reported for a run of this many rows, this many changed. */
#define CAPTURE_SCROLL_RUN	16
#define CAPTURE_SCROLL_CHANGED	8
/* Rows sampled for candidate shifts; matches above this: a blank row. */
#define CAPTURE_SCROLL_SAMPLES	12
#define CAPTURE_SCROLL_AMBIG	4
#define CAPTURE_SCROLL_CANDS	32
/* Frames changed without a sign of a scroll before hashing stops; then
 * after this many frames not hashed, one is. */
#define CAPTURE_HASH_QUIET	3
#define CAPTURE_HASH_SKIPS	3

struct capture {
	Display			*dpy;
	Window			 root;
	struct loop_fd		*lf;
	struct loop_timer	*again;	/* yield to the loop, continue soon */
	int			 dead;
	capture_dead_cb		 dead_cb;
	void			*arg;
	capture_damage_cb	 damage_cb;
	void			*damage_arg;
	capture_cursor_cb	 cursor_cb;
	void			*cursor_arg;
	capture_copy_cb		 copy_cb;
	void			*copy_arg;
	/* While copy_cb is set: tile hashes of every row (h x ntiles), and
	 * row signatures of the boxes looked at (old ones, then one new). */
	uint64_t		*rowhash;
	uint8_t			*stale;		/* per row: rowhash is old */
	int			 quiet;		/* frames without a scroll sign */
	int			 skips;		/* frames not hashed in a row */
	int			 ntiles;
	uint64_t		*sig;
	int			 fixes_event;

	int			 damage_event;
	Damage			 damage;
	/* Reported, not yet grabbed: disjoint-ish boxes, merged when near. */
	struct capture_box	 damaged[CAPTURE_RECTS];
	int			 ndamaged;
	XShmSegmentInfo		 shm;
	int			 shm_attached;
	XImage			*img;
	int			 w, h;

	/* capture_hold: grabs from damage wait, the pixels stay mapped. */
	int			 holds;
	int			 freed;		/* capture_free came while held */
	int			 force;		/* capture_sync: grab even held */

	uint64_t		 frame;
	uint64_t		 time_ms;
	struct capture_box	 hist[CAPTURE_HIST];
};

/* Last X protocol error seen (Xlib calls the handler synchronously). */
static int	capture_xerr;
static int	capture_handlers_set;

static int
capture_error_handler(Display *dpy, XErrorEvent *ev)
{
	(void)dpy;
	capture_xerr = ev->error_code ? ev->error_code : 1;
	return 0;
}

static int
capture_io_handler(Display *dpy)
{
	(void)dpy;
	return 0;
}

/* Replaces Xlib's exit(): the connection is dead, the process lives. */
static void
capture_io_exit(Display *dpy, void *arg)
{
	struct capture	*cap = arg;

	(void)dpy;
	cap->dead = 1;
}

static uint64_t
capture_wall_ms(void)
{
	struct timeval	tv;

	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
}

void
capture_box_union(struct capture_box *a, const struct capture_box *b)
{
	int	x1, y1, x2, y2;

	if (b->w <= 0 || b->h <= 0)
		return;
	if (a->w <= 0 || a->h <= 0) {
		*a = *b;
		return;
	}
	x1 = a->x < b->x ? a->x : b->x;
	y1 = a->y < b->y ? a->y : b->y;
	x2 = a->x + a->w > b->x + b->w ? a->x + a->w : b->x + b->w;
	y2 = a->y + a->h > b->y + b->h ? a->y + a->h : b->y + b->h;
	a->x = x1;
	a->y = y1;
	a->w = x2 - x1;
	a->h = y2 - y1;
}

void
capture_box_clip(struct capture_box *b, int w, int h)
{
	int	x2, y2;

	x2 = b->x + b->w;
	y2 = b->y + b->h;
	if (b->x < 0)
		b->x = 0;
	if (b->y < 0)
		b->y = 0;
	if (x2 > w)
		x2 = w;
	if (y2 > h)
		y2 = h;
	b->w = x2 > b->x ? x2 - b->x : 0;
	b->h = y2 > b->y ? y2 - b->y : 0;
	if (b->w == 0 || b->h == 0)
		b->x = b->y = b->w = b->h = 0;
}

static long
capture_box_area(const struct capture_box *b)
{
	return (long)b->w * b->h;
}

/* Is b within CAPTURE_NEAR of a (touching, overlapping or close)? */
static int
capture_box_near(const struct capture_box *a, const struct capture_box *b)
{
	return b->x <= a->x + a->w + CAPTURE_NEAR &&
	    a->x <= b->x + b->w + CAPTURE_NEAR &&
	    b->y <= a->y + a->h + CAPTURE_NEAR &&
	    a->y <= b->y + b->h + CAPTURE_NEAR;
}

/* Pixels the union of a and b adds to their own. */
static long
capture_box_waste(const struct capture_box *a, const struct capture_box *b)
{
	struct capture_box	u = *a;

	capture_box_union(&u, b);
	return capture_box_area(&u) - capture_box_area(a) -
	    capture_box_area(b);
}

void
capture_region_add(struct capture_box *v, int *n, int max,
    const struct capture_box *b)
{
	struct capture_box	nb = *b;
	long			w, best;
	int			i, bi;

	if (nb.w <= 0 || nb.h <= 0)
		return;
	/* Fold in every box nb is near; the grown box may reach more. */
	for (i = 0; i < *n; i++) {
		if (!capture_box_near(&v[i], &nb))
			continue;
		capture_box_union(&nb, &v[i]);
		v[i] = v[--*n];
		i = -1;
	}
	if (*n < max) {
		v[(*n)++] = nb;
		return;
	}
	/* Full: into the box whose union with it wastes least. */
	bi = 0;
	best = -1;
	for (i = 0; i < *n; i++) {
		w = capture_box_waste(&v[i], &nb);
		if (best < 0 || w < best) {
			best = w;
			bi = i;
		}
	}
	capture_box_union(&v[bi], &nb);
}

/* Grab rows [y, y+h) of the screen into the framebuffer. */
static int
capture_grab_rows(struct capture *cap, int y, int h)
{
	XImage	sub;

	if (h <= 0)
		return 0;
	sub = *cap->img;
	sub.data = cap->img->data + (size_t)y * (size_t)cap->img->bytes_per_line;
	sub.height = h;
	capture_xerr = 0;
	if (!XShmGetImage(cap->dpy, cap->root, &sub, 0, y, AllPlanes) ||
	    capture_xerr != 0 || cap->dead)
		return ERR_IO;
	return 0;
}

/* ---- scrolls ------------------------------------------------------------ */

#define CAPTURE_HASH_K	0xff51afd7ed558ccdULL
#define CAPTURE_STALE_SIG	0xc4ceb9fe1a85ec53ULL

static inline uint64_t
capture_mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * CAPTURE_HASH_K;
	return h ^ h >> 29;
}

/*
 * One tile's hash, portably: its 64-bit words through a multiply-xorshift
 * chain (~1.5 instructions a byte; tiles are independent, so the chains
 * of a row overlap in the CPU).  A short last tile is padded with zeros.
 */
static inline uint64_t
capture_tile_hash(const uint8_t *p)
{
	uint64_t	a = 0x9e3779b97f4a7c15ULL, w;
	int		k;

	for (k = 0; k < CAPTURE_TILE * 4 / 8; k++) {
		memcpy(&w, p + (size_t)k * 8, 8);
		a = capture_mix(a, w);
	}
	return a;
}

/* Row r's tiles into out, with tile hash function fn. */
#define CAPTURE_HASH_ROW(cap, row, out, fn) do {			\
	uint8_t	pad_[CAPTURE_TILE * 4];					\
	int	t_, n_;							\
									\
	for (t_ = 0; t_ < (cap)->ntiles; t_++) {			\
		n_ = (cap)->w - t_ * CAPTURE_TILE;			\
		if (n_ >= CAPTURE_TILE) {				\
			(out)[t_] = fn((row) + (size_t)t_ *		\
			    CAPTURE_TILE * 4);				\
			continue;					\
		}							\
		/* The last tile is short: padded. */			\
		memset(pad_, 0, sizeof pad_);				\
		memcpy(pad_, (row) + (size_t)t_ * CAPTURE_TILE * 4,	\
		    (size_t)n_ * 4);					\
		(out)[t_] = fn(pad_);					\
	}								\
} while (0)

static void
capture_hash_rows_mul(struct capture *cap, int y, int h)
{
	const size_t	 stride = (size_t)cap->img->bytes_per_line;
	const uint8_t	*row;
	uint64_t	*out;
	int		 r;

	for (r = y; r < y + h; r++) {
		row = (const uint8_t *)cap->img->data + (size_t)r * stride;
		out = cap->rowhash + (size_t)r * (size_t)cap->ntiles;
		CAPTURE_HASH_ROW(cap, row, out, capture_tile_hash);
	}
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CAPTURE_HAVE_CRC32C	1
/*
 * The same with SSE4.2's CRC32C, one instruction per 8 bytes (a whole
 * 1280x800 frame ~0.2 ms, a third of the chain's instructions): two
 * independent CRCs over the tile's halves make the 64 bits.  A CRC
 * catches every change of up to 32 adjacent bits (a pixel) for sure, and
 * a larger one confined to half a tile with odds of 2^-32; a row's
 * signature (capture_box_sigs) sums every tile, so rows that differ in
 * several tiles collide only by chance at 2^-64.
 */
__attribute__((target("sse4.2"))) static inline uint64_t
capture_tile_crc(const uint8_t *p)
{
	uint64_t	a = 0x9e3779b9U, b = 0x7f4a7c15U, w[8];

	memcpy(w, p, sizeof w);
	a = _mm_crc32_u64(a, w[0]);
	b = _mm_crc32_u64(b, w[4]);
	a = _mm_crc32_u64(a, w[1]);
	b = _mm_crc32_u64(b, w[5]);
	a = _mm_crc32_u64(a, w[2]);
	b = _mm_crc32_u64(b, w[6]);
	a = _mm_crc32_u64(a, w[3]);
	b = _mm_crc32_u64(b, w[7]);
	return a << 32 | b;
}

__attribute__((target("sse4.2"))) static void
capture_hash_rows_crc(struct capture *cap, int y, int h)
{
	const size_t	 stride = (size_t)cap->img->bytes_per_line;
	const uint8_t	*row;
	uint64_t	*out;
	int		 r;

	for (r = y; r < y + h; r++) {
		row = (const uint8_t *)cap->img->data + (size_t)r * stride;
		out = cap->rowhash + (size_t)r * (size_t)cap->ntiles;
		CAPTURE_HASH_ROW(cap, row, out, capture_tile_crc);
	}
}
#endif

/* Hash rows [y, y+h) of the framebuffer into rowhash, tile by tile: with
 * CRC32C where the CPU has it (asked at run time). */
static void
capture_hash_rows(struct capture *cap, int y, int h)
{
#ifdef CAPTURE_HAVE_CRC32C
	static int	crc = -1;
#endif

	memset(cap->stale + y, 0, (size_t)h);
#ifdef CAPTURE_HAVE_CRC32C

	if (crc == -1)
		crc = __builtin_cpu_supports("sse4.2") ? 1 : 0;
	if (crc) {
		capture_hash_rows_crc(cap, y, h);
		return;
	}
#endif
	capture_hash_rows_mul(cap, y, h);
}

/* Whole tiles of box b: [*t1, *t2); 0 when too few to look at. */
static int
capture_box_tiles(const struct capture *cap, const struct capture_box *b,
    int *t1, int *t2)
{
	*t1 = (b->x + CAPTURE_TILE - 1) / CAPTURE_TILE;
	*t2 = (b->x + b->w) / CAPTURE_TILE;
	if ((b->x + b->w) == cap->w)
		*t2 = cap->ntiles;	/* the short last tile is whole */
	return *t2 - *t1 >= CAPTURE_SCROLL_TILES && b->h >= CAPTURE_SCROLL_ROWS;
}

/* Signatures of box b's rows from the tile hashes now kept: a sum of
 * the tiles' hashes, each times its own odd factor (no chain of
 * dependent multiplies), mixed once. */
static void
capture_box_sigs(const struct capture *cap, const struct capture_box *b,
    int t1, int t2, uint64_t *sig)
{
	const uint64_t	*th;
	uint64_t	 a;
	int		 r, t;

	for (r = 0; r < b->h; r++) {
		/* A row not hashed since it changed matches nothing (but by
		 * chance, 2^-64). */
		if (cap->stale[b->y + r]) {
			sig[r] = capture_mix(CAPTURE_STALE_SIG, (uint64_t)r);
			continue;
		}
		th = cap->rowhash + (size_t)(b->y + r) * (size_t)cap->ntiles;
		a = (uint64_t)(t2 - t1);
		for (t = t1; t < t2; t++)
			a += th[t] * (CAPTURE_HASH_K + 2 * (uint64_t)t);
		sig[r] = capture_mix(a, (uint64_t)t1);
	}
}

/* Longest run of rows r with cur[r] == old[r + d]: its start, length and
 * how many of its rows changed (cur[r] != old[r]). */
static int
capture_scroll_run(const uint64_t *old, const uint64_t *cur, int h, int d,
    int *y0, int *n)
{
	int	r, lo, hi, start = 0, len = 0, ch = 0, best = 0, bch = 0;

	lo = d < 0 ? -d : 0;
	hi = d > 0 ? h - d : h;
	*y0 = *n = 0;
	for (r = lo; r <= hi; r++) {
		if (r < hi && cur[r] == old[r + d]) {
			if (len++ == 0)
				start = r;
			ch += cur[r] != old[r];
			continue;
		}
		if (len > best || (len == best && ch > bch)) {
			best = len;
			bch = ch;
			*y0 = start;
			*n = len;
		}
		len = ch = 0;
	}
	return bch;
}

int
capture_scroll_find(const uint64_t *old, const uint64_t *cur, int h, int *d,
    int *y0, int *n)
{
	int	cand[CAPTURE_SCROLL_CANDS], nc = 0, changed = 0, i, j, k, r;
	int	m, found[CAPTURE_SCROLL_AMBIG], best = 0, ch, by0, bn;

	*d = *y0 = *n = 0;
	for (r = 0; r < h; r++)
		changed += cur[r] != old[r];
	if (changed < CAPTURE_SCROLL_CHANGED)
		return 0;
	/* Candidate shifts: where changed rows, spread over the box, were
	 * before.  A row found in many places (blank) says nothing. */
	for (i = 0, k = 0; i < h && nc < CAPTURE_SCROLL_CANDS; i++) {
		if (cur[i] == old[i])
			continue;
		if (k++ % (changed / CAPTURE_SCROLL_SAMPLES + 1) != 0)
			continue;
		for (j = 0, m = 0; j < h && m <= CAPTURE_SCROLL_AMBIG; j++)
			if (old[j] == cur[i] && j != i) {
				if (m < CAPTURE_SCROLL_AMBIG)
					found[m] = j - i;
				m++;
			}
		if (m == 0 || m > CAPTURE_SCROLL_AMBIG)
			continue;
		for (j = 0; j < m && nc < CAPTURE_SCROLL_CANDS; j++) {
			for (r = 0; r < nc && cand[r] != found[j]; r++)
				;
			if (r == nc)
				cand[nc++] = found[j];
		}
	}
	for (i = 0; i < nc; i++) {
		ch = capture_scroll_run(old, cur, h, cand[i], &by0, &bn);
		if (ch > best && bn >= CAPTURE_SCROLL_RUN) {
			best = ch;
			*d = cand[i];
			*y0 = by0;
			*n = bn;
		}
	}
	return best >= CAPTURE_SCROLL_CHANGED;
}

/*
 * Whether box b of the frame just grabbed may have scrolled, from a few
 * of its rows hashed now (they stay hashed) against the signatures of
 * all its rows before (old): 1 when a sampled row is found elsewhere in
 * old (a shift, or a blank row: worth hashing the rest), 0 when none is,
 * -1 when most of old is stale (not hashed since it changed: no answer).
 */
static int
capture_box_may_scroll(struct capture *cap, const struct capture_box *b,
    const uint64_t *old)
{
	struct capture_box	one;
	uint64_t		sig;
	int			t1, t2, k, r, j, nstale = 0;

	for (r = 0; r < b->h; r++)
		nstale += cap->stale[b->y + r];
	if (nstale > b->h / 2)
		return -1;
	capture_box_tiles(cap, b, &t1, &t2);
	for (k = 0; k < CAPTURE_SCROLL_SAMPLES; k++) {
		r = (int)((long)b->h * (2 * k + 1) / (2 * CAPTURE_SCROLL_SAMPLES));
		capture_hash_rows(cap, b->y + r, 1);
		one = (struct capture_box){ b->x, b->y + r, b->w, 1 };
		capture_box_sigs(cap, &one, t1, t2, &sig);
		for (j = 0; j < b->h; j++)
			if (j != r && old[j] == sig)
				return 1;
	}
	return 0;
}

/*
 * Report box b of a new frame: as a copy and the rest (up to four boxes
 * into out) when its rows were found moved, else whole.  old is its
 * rows' signatures before the grab.  Returns the boxes added to out.
 */
static int
capture_box_scroll(struct capture *cap, const struct capture_box *b,
    const uint64_t *old, struct capture_box *out)
{
	struct capture_box	 dst, rest[4];
	uint64_t		*cur = cap->sig + (size_t)CAPTURE_RECTS * cap->h;
	int			 t1, t2, d, y0, n, i, k = 0;

	capture_box_tiles(cap, b, &t1, &t2);
	capture_box_sigs(cap, b, t1, t2, cur);
	if (!capture_scroll_find(old, cur, b->h, &d, &y0, &n)) {
		out[0] = *b;
		return 1;
	}
	dst.x = t1 * CAPTURE_TILE;
	dst.w = (t2 * CAPTURE_TILE < cap->w ? t2 * CAPTURE_TILE : cap->w) -
	    dst.x;
	dst.y = b->y + y0;
	dst.h = n;
	cap->copy_cb(cap, &dst, -d, cap->copy_arg);
	rest[0] = (struct capture_box){ b->x, b->y, b->w, y0 };
	rest[1] = (struct capture_box){ b->x, dst.y + n, b->w,
	    b->y + b->h - dst.y - n };
	rest[2] = (struct capture_box){ b->x, dst.y, dst.x - b->x, n };
	rest[3] = (struct capture_box){ dst.x + dst.w, dst.y,
	    b->x + b->w - dst.x - dst.w, n };
	for (i = 0; i < 4; i++)
		if (rest[i].w > 0 && rest[i].h > 0)
			out[k++] = rest[i];
	return k;
}

void
capture_set_copy_cb(struct capture *cap, capture_copy_cb cb, void *arg)
{
	cap->copy_cb = cb;
	cap->copy_arg = cb != NULL ? arg : NULL;
	if (cb == NULL) {
		free(cap->rowhash);
		free(cap->sig);
		free(cap->stale);
		cap->rowhash = cap->sig = NULL;
		cap->stale = NULL;
		return;
	}
	if (cap->rowhash != NULL)
		return;
	cap->ntiles = (cap->w + CAPTURE_TILE - 1) / CAPTURE_TILE;
	cap->rowhash = xcalloc((size_t)cap->h * (size_t)cap->ntiles,
	    sizeof *cap->rowhash);
	cap->sig = xcalloc((size_t)(CAPTURE_RECTS + 1) * (size_t)cap->h,
	    sizeof *cap->sig);
	cap->stale = xcalloc((size_t)cap->h, 1);
	cap->quiet = cap->skips = 0;
	/* The framebuffer holds the last grab: hash it all once. */
	capture_hash_rows(cap, 0, cap->h);
}

/* ---- frames -------------------------------------------------------------- */

/*
 * A new frame changed in boxes v[0..n): one damage report each, or a
 * copy and the rest for a box found scrolled (old[i]: its rows'
 * signatures before the grab, NULL when not looked at).
 */
static void
capture_new_frame(struct capture *cap, const struct capture_box *v, int n,
    uint64_t *const *old)
{
	struct capture_box	u, out[CAPTURE_RECTS * 4];
	int			i, nout = 0;

	memset(&u, 0, sizeof u);
	for (i = 0; i < n; i++)
		capture_box_union(&u, &v[i]);
	cap->frame++;
	cap->hist[cap->frame % CAPTURE_HIST] = u;
	cap->time_ms = capture_wall_ms();
	/* Copies first: damage reported before a copy whose source it
	 * covers would turn the copy into damage too (RFB's rule). */
	for (i = 0; i < n; i++) {
		if (old != NULL && old[i] != NULL && cap->copy_cb != NULL)
			nout += capture_box_scroll(cap, &v[i], old[i],
			    out + nout);
		else
			out[nout++] = v[i];
	}
	for (i = 0; i < nout && cap->damage_cb != NULL; i++)
		cap->damage_cb(cap, &out[i], cap->damage_arg);
}

void
capture_set_cursor_cb(struct capture *cap, capture_cursor_cb cb, void *arg)
{
	cap->cursor_cb = cb;
	cap->cursor_arg = cb != NULL ? arg : NULL;
	if (cap->dead)
		return;
	XFixesSelectCursorInput(cap->dpy, cap->root, cb != NULL ?
	    XFixesDisplayCursorNotifyMask : 0);
	XFlush(cap->dpy);
}

void
capture_set_damage_cb(struct capture *cap, capture_damage_cb cb, void *arg)
{
	cap->damage_cb = cb;
	cap->damage_arg = cb != NULL ? arg : NULL;
}

/*
 * Grab the damage reported so far.  The subtract goes first: damage drawn
 * between it and the grab is in the grab and reported again (a spare
 * grab, never a lost one).  Subtract and grab share one round trip.
 */
static int
capture_cmp_y(const void *a, const void *b)
{
	const struct capture_box	*x = a, *y = b;

	return x->y < y->y ? -1 : x->y > y->y;
}

/*
 * Hash the rows just grabbed (bands rows[0..nrows)), or not: a screen
 * changing all over without scrolling (a video, an animation) would pay
 * a hash of every pixel per frame for nothing.  So once every box looked
 * at (old[i] set) showed no sign of a scroll (capture_box_may_scroll) for
 * CAPTURE_HASH_QUIET frames, the rows are left stale; when their old rows
 * are stale too, one frame in CAPTURE_HASH_SKIPS + 1 is hashed so the
 * next can be compared (a scroll that starts then is found a few frames
 * late).  Boxes too small to be looked at are hashed, as cheap.  1 when
 * hashed.
 */
static int
capture_hash_frame(struct capture *cap, const struct capture_box *v, int n,
    uint64_t *const *old, const struct capture_box *rows, int nrows)
{
	int	i, m, looked = 0, maybe = 0, unknown = 0;

	for (i = 0; i < n && !maybe; i++) {
		if (old[i] == NULL)
			continue;
		looked = 1;
		m = capture_box_may_scroll(cap, &v[i], old[i]);
		maybe |= m == 1;
		unknown |= m == -1;
	}
	if (maybe)
		cap->quiet = 0;
	else if (looked && !unknown)
		cap->quiet++;
	if (!looked || maybe || cap->quiet <= CAPTURE_HASH_QUIET ||
	    (unknown && cap->skips >= CAPTURE_HASH_SKIPS)) {
		for (i = 0; i < nrows; i++)
			capture_hash_rows(cap, rows[i].y, rows[i].h);
		/* Only a looked-at box counts: a terminal's new line between
		 * its scrolls must not put off hashing the rest for ever. */
		if (looked)
			cap->skips = 0;
		return 1;
	}
	for (i = 0; i < nrows; i++)
		memset(cap->stale + rows[i].y, 1, (size_t)rows[i].h);
	cap->skips++;
	return 0;
}

static int
capture_grab_damage(struct capture *cap)
{
	struct capture_box	 v[CAPTURE_RECTS], rows[CAPTURE_RECTS];
	uint64_t		*old[CAPTURE_RECTS];
	int			 i, n = 0, nrows = 0, end, t1, t2;

	/* Held: the damage waits in cap->damaged for capture_release. */
	if (cap->holds > 0 && !cap->force)
		return 0;
	for (i = 0; i < cap->ndamaged; i++) {
		v[n] = cap->damaged[i];
		capture_box_clip(&v[n], cap->w, cap->h);
		if (v[n].w > 0)
			n++;
	}
	cap->ndamaged = 0;
	XDamageSubtract(cap->dpy, cap->damage, None, None);
	if (n == 0)
		return 0;
	/* Whole-width bands of the boxes' rows, near ones as one grab. */
	memcpy(rows, v, sizeof v[0] * (size_t)n);
	qsort(rows, (size_t)n, sizeof rows[0], capture_cmp_y);
	for (i = 0; i < n; i++) {
		if (nrows > 0 && rows[i].y <= rows[nrows - 1].y +
		    rows[nrows - 1].h + CAPTURE_BAND_GAP) {
			end = rows[i].y + rows[i].h;
			if (end > rows[nrows - 1].y + rows[nrows - 1].h)
				rows[nrows - 1].h = end - rows[nrows - 1].y;
			continue;
		}
		rows[nrows++] = rows[i];
	}
	/* The rows as they were, for boxes that may have scrolled. */
	for (i = 0; i < n; i++) {
		old[i] = NULL;
		if (cap->copy_cb == NULL ||
		    !capture_box_tiles(cap, &v[i], &t1, &t2))
			continue;
		old[i] = cap->sig + (size_t)i * (size_t)cap->h;
		capture_box_sigs(cap, &v[i], t1, t2, old[i]);
	}
	for (i = 0; i < nrows; i++)
		if (capture_grab_rows(cap, rows[i].y, rows[i].h) != 0)
			return ERR_IO;
	if (cap->rowhash != NULL && !capture_hash_frame(cap, v, n, old,
	    rows, nrows))
		memset(old, 0, sizeof old[0] * (size_t)n);
	capture_new_frame(cap, v, n, old);
	return 0;
}

static void	capture_again(void *arg);

/*
 * Drain Xlib's queue; grab when damage was reported.  Bounded passes so a
 * client drawing without pause cannot hold the loop: the rest continues
 * on the next turn.
 */
static void
capture_event(struct capture *cap, XEvent *ev, int *damaged)
{
	const XDamageNotifyEvent	*de;
	struct capture_box		 b;

	if (ev->type == cap->damage_event + XDamageNotify) {
		de = (const XDamageNotifyEvent *)ev;
		b.x = de->area.x;
		b.y = de->area.y;
		b.w = de->area.width;
		b.h = de->area.height;
		capture_region_add(cap->damaged, &cap->ndamaged,
		    CAPTURE_RECTS, &b);
		*damaged = 1;
	} else if (ev->type == cap->fixes_event + XFixesCursorNotify &&
	    cap->cursor_cb != NULL)
		cap->cursor_cb(cap, cap->cursor_arg);
}

static int
capture_pump(struct capture *cap)
{
	XEvent	ev;
	int	damaged, pass;

	for (pass = 0; pass < CAPTURE_MAX_PASSES; pass++) {
		damaged = 0;
		/*
		 * One read (XPending also moves what xcb holds into Xlib's
		 * queue), then the queue: another XPending per event would
		 * be another read each.  What arrives meanwhile makes the
		 * fd readable.
		 */
		if (!cap->dead && XPending(cap->dpy) > 0) {
			while (!cap->dead && QLength(cap->dpy) > 0) {
				XNextEvent(cap->dpy, &ev);
				capture_event(cap, &ev, &damaged);
			}
		}
		if (cap->dead)
			return ERR_IO;
		if (!damaged)
			return 0;
		if (capture_grab_damage(cap) != 0)
			return ERR_IO;
	}
	/* Damage reported but not grabbed: the server stays quiet until
	 * we subtract (or the box grows), so continue ourselves. */
	if (cap->again == NULL)
		cap->again = loop_timer_add(0, capture_again, cap);
	return 0;
}

static void
capture_report_dead(struct capture *cap)
{
	loop_fd_close(cap->lf);
	cap->lf = NULL;
	if (cap->dead_cb != NULL) {
		capture_dead_cb cb = cap->dead_cb;

		cap->dead_cb = NULL;
		cb(cap, cap->arg);
	}
}

static void
capture_again(void *arg)
{
	struct capture	*cap = arg;

	cap->again = NULL;
	/* Grab even without a new event: the last one was not acted on. */
	if (!cap->dead && capture_grab_damage(cap) == 0 &&
	    capture_pump(cap) == 0)
		return;
	capture_report_dead(cap);
}

/*
 * Before the loop sleeps: another Xlib call on this connection (XSync from
 * input, the cursor image for RFB, XQueryPointer) may have read our damage
 * events into Xlib's queue, where they no longer make the fd readable.
 * Unhandled, the damage is never subtracted and the server stays quiet for
 * good.
 */
static void
capture_prepoll(void *arg)
{
	struct capture	*cap = arg;

	if (cap->dead || cap->lf == NULL ||
	    XEventsQueued(cap->dpy, QueuedAlready) == 0)
		return;
	if (capture_pump(cap) != 0)
		capture_report_dead(cap);
}

static void
capture_fd_cb(struct loop_fd *lf, int events, void *arg)
{
	struct capture	*cap = arg;

	(void)lf;
	if (events & LOOP_HUP)
		cap->lf = NULL;
	if (capture_pump(cap) != 0 || (events & LOOP_HUP))
		capture_report_dead(cap);
}

static int
capture_shm_setup(struct capture *cap)
{
	Visual	*vis;
	int	 depth, scr;
	size_t	 size;

	scr = DefaultScreen(cap->dpy);
	vis = DefaultVisual(cap->dpy, scr);
	depth = DefaultDepth(cap->dpy, scr);
	cap->img = XShmCreateImage(cap->dpy, vis, (unsigned)depth, ZPixmap,
	    NULL, &cap->shm, (unsigned)cap->w, (unsigned)cap->h);
	if (cap->img == NULL)
		return ERR_DISPLAY_FAILED;
	/* observe and RFB read 32-bit little-endian BGRX. */
	if (cap->img->bits_per_pixel != 32 || cap->img->byte_order != LSBFirst)
		return ERR_DISPLAY_FAILED;
	size = (size_t)cap->img->bytes_per_line * (size_t)cap->h;
	cap->shm.shmid = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	if (cap->shm.shmid == -1)
		return err_from_errno(errno);
	cap->shm.shmaddr = shmat(cap->shm.shmid, NULL, 0);
	if (cap->shm.shmaddr == (void *)-1) {
		cap->shm.shmaddr = NULL;
		return err_from_errno(errno);
	}
	cap->img->data = cap->shm.shmaddr;
	cap->shm.readOnly = False;
	capture_xerr = 0;
	if (!XShmAttach(cap->dpy, &cap->shm))
		return ERR_DISPLAY_FAILED;
	XSync(cap->dpy, False);
	if (capture_xerr != 0 || cap->dead)
		return ERR_DISPLAY_FAILED;
	cap->shm_attached = 1;
	/* Gone once both sides detach, even if we crash. */
	shmctl(cap->shm.shmid, IPC_RMID, NULL);
	return 0;
}

static int
capture_damage_setup(struct capture *cap)
{
	int	ev, er, major = 2, minor = 0;

	if (!XFixesQueryExtension(cap->dpy, &ev, &er) ||
	    !XFixesQueryVersion(cap->dpy, &major, &minor) || major < 2)
		return ERR_DISPLAY_FAILED;
	cap->fixes_event = ev;
	major = 1;
	minor = 1;
	if (!XDamageQueryExtension(cap->dpy, &cap->damage_event, &er) ||
	    !XDamageQueryVersion(cap->dpy, &major, &minor))
		return ERR_DISPLAY_FAILED;
	cap->damage = XDamageCreate(cap->dpy, cap->root,
	    XDamageReportDeltaRectangles);
	XSync(cap->dpy, False);
	return capture_xerr != 0 || cap->dead ? ERR_DISPLAY_FAILED : 0;
}

int
capture_open(struct capture **out, const char *name,
    const unsigned char *cookie, size_t cookielen, capture_dead_cb dead,
    void *arg)
{
	static char		 authname[] = "MIT-MAGIC-COOKIE-1";
	struct capture		*cap;
	struct capture_box	 full;
	int			 r = ERR_INTERNAL, fd;

	*out = NULL;
	if (!capture_handlers_set) {
		XSetErrorHandler(capture_error_handler);
		XSetIOErrorHandler(capture_io_handler);
		capture_handlers_set = 1;
	}
	cap = xcalloc(1, sizeof *cap);
	cap->shm.shmid = -1;
	cap->dead_cb = dead;
	cap->arg = arg;
	/* Process-wide, but we are single-threaded and reset it at once. */
	XSetAuthorization(authname, (int)strlen(authname), (char *)cookie,
	    (int)cookielen);
	cap->dpy = XOpenDisplay(name);
	XSetAuthorization(NULL, 0, NULL, 0);
	if (cap->dpy == NULL) {
		r = ERR_DISPLAY_FAILED;
		goto out;
	}
	XSetIOErrorExitHandler(cap->dpy, capture_io_exit, cap);
	cap->root = DefaultRootWindow(cap->dpy);
	cap->w = DisplayWidth(cap->dpy, DefaultScreen(cap->dpy));
	cap->h = DisplayHeight(cap->dpy, DefaultScreen(cap->dpy));
	if (!XShmQueryExtension(cap->dpy)) {
		r = ERR_DISPLAY_FAILED;
		goto out;
	}
	if ((r = capture_shm_setup(cap)) != 0 ||
	    (r = capture_damage_setup(cap)) != 0)
		goto out;
	/* Damage from before XDamageCreate is in this first full grab. */
	if ((r = capture_grab_rows(cap, 0, cap->h)) != 0)
		goto out;
	full.x = full.y = 0;
	full.w = cap->w;
	full.h = cap->h;
	capture_new_frame(cap, &full, 1, NULL);
	/* lws closes what it adopts: give it a dup, Xlib keeps its own. */
	if ((fd = fcntl(ConnectionNumber(cap->dpy), F_DUPFD_CLOEXEC, 3)) == -1) {
		r = err_from_errno(errno);
		goto out;
	}
	loop_prepoll_add(capture_prepoll, cap);
	if ((cap->lf = loop_fd_add(fd, capture_fd_cb, cap)) == NULL) {
		r = ERR_INTERNAL;
		goto out;
	}
	/* Events may already sit in Xlib's queue. */
	if (capture_pump(cap) != 0) {
		r = ERR_DISPLAY_FAILED;
		goto out;
	}
	*out = cap;
	cap = NULL;
	r = 0;
out:
	capture_free(cap);
	return r;
}

static void	capture_unmap(struct capture *cap);

void
capture_free(struct capture *cap)
{
	if (cap == NULL)
		return;
	loop_prepoll_remove(capture_prepoll, cap);
	loop_timer_cancel(cap->again);
	loop_fd_close(cap->lf);
	if (cap->dpy != NULL) {
		if (cap->shm_attached && !cap->dead)
			XShmDetach(cap->dpy, &cap->shm);
		if (cap->img != NULL) {
			cap->img->data = NULL;
			XDestroyImage(cap->img);
		}
		XCloseDisplay(cap->dpy);
	} else if (cap->img != NULL) {
		cap->img->data = NULL;
		XDestroyImage(cap->img);
	}
	if (cap->shm.shmid != -1 && !cap->shm_attached)
		shmctl(cap->shm.shmid, IPC_RMID, NULL);
	cap->dpy = NULL;
	cap->img = NULL;
	/* An encoder still reads the pixels: unmapped when it is done. */
	if (cap->holds > 0) {
		cap->freed = 1;
		return;
	}
	capture_unmap(cap);
}

static void
capture_unmap(struct capture *cap)
{
	if (cap->shm.shmaddr != NULL)
		shmdt(cap->shm.shmaddr);
	free(cap->rowhash);
	free(cap->sig);
	free(cap->stale);
	free(cap);
}

/* A pump that grabs even while held: the caller wants what is on the
 * screen now (an encoder reading the rows meanwhile is sent them again:
 * they are damage). */
static int
capture_pump_forced(struct capture *cap)
{
	int	r;

	cap->force = 1;
	r = capture_pump(cap);
	cap->force = 0;
	return r;
}

int
capture_sync(struct capture *cap)
{
	if (cap->dead)
		return ERR_IO;
	XSync(cap->dpy, False);
	if (capture_pump_forced(cap) != 0) {
		capture_report_dead(cap);
		return ERR_IO;
	}
	return 0;
}

int
capture_sync_cursor(struct capture *cap, int *x, int *y)
{
	int	r;

	/* The pointer query's reply is the round trip capture_sync makes. */
	if ((r = capture_cursor(cap, x, y)) != 0) {
		if (cap->dead)
			capture_report_dead(cap);
		return r;
	}
	if (capture_pump_forced(cap) != 0) {
		capture_report_dead(cap);
		return ERR_IO;
	}
	return 0;
}

void
capture_hold(struct capture *cap)
{
	cap->holds++;
}

void
capture_release(struct capture *cap)
{
	if (--cap->holds > 0)
		return;
	if (cap->freed) {
		capture_unmap(cap);
		return;
	}
	/* What was damaged meanwhile is grabbed on the next turn. */
	if (cap->ndamaged > 0 && !cap->dead && cap->again == NULL)
		cap->again = loop_timer_add(0, capture_again, cap);
}

uint64_t
capture_frame(const struct capture *cap)
{
	return cap->frame;
}

uint64_t
capture_time_ms(const struct capture *cap)
{
	return cap->time_ms;
}

const uint8_t *
capture_pixels(const struct capture *cap, int *w, int *h, size_t *stride)
{
	*w = cap->w;
	*h = cap->h;
	*stride = (size_t)cap->img->bytes_per_line;
	return (const uint8_t *)cap->img->data;
}

void
capture_damage_since(const struct capture *cap, uint64_t since,
    struct capture_box *box)
{
	uint64_t	f;

	memset(box, 0, sizeof *box);
	if (since >= cap->frame)
		return;
	if (since == 0 || cap->frame - since >= CAPTURE_HIST) {
		box->w = cap->w;
		box->h = cap->h;
		return;
	}
	for (f = since + 1; f <= cap->frame; f++)
		capture_box_union(box, &cap->hist[f % CAPTURE_HIST]);
}

int
capture_cursor(struct capture *cap, int *x, int *y)
{
	Window		 rr, cr;
	unsigned int	 mask;
	int		 wx, wy;

	*x = *y = 0;
	if (cap->dead)
		return ERR_IO;
	if (!XQueryPointer(cap->dpy, cap->root, &rr, &cr, x, y, &wx, &wy,
	    &mask))
		return cap->dead ? ERR_IO : 0;
	return 0;
}

void *
capture_xdisplay(struct capture *cap)
{
	return cap->dpy;
}

/* SPDX-License-Identifier: MIT */
/*
 * RFB per display with libvncserver, driven from guestd's one loop.
 *
 * The framebuffer libvncserver serves IS capture.c's shared-memory
 * segment (32-bit BGRX, i.e. pixel value 0x00RRGGBB little-endian): no
 * copy.  capture.c reports each grabbed box through its damage hook; we
 * mark it modified and pump once per loop turn (a zero-delay one-shot
 * timer coalesces the boxes of one turn).  Viewers' sockets are watched by
 * adopting a dup() into the loop (lws closes what it adopts; libvncserver
 * closes its own).  Nothing polls: an idle display with viewers costs no
 * CPU.
 *
 * libvncserver blocks in two places, both made harmless: rfbReadExact on
 * a half message (the gateway and the debug port's relay deliver whole
 * messages), and rfbWriteExact whenever a write does not fit in the
 * socket's send buffer (it then waits in 5 s slices, the whole loop with
 * it).  libvncserver listens nowhere and every viewer is a Unix socket:
 * the gateway's, or a socketpair relaying a debug-port TCP connection
 * (rfb-debug.c).  A viewer is never given more than fits: before
 * every pump each viewer's free send space (SO_SNDBUF less SIOCOUTQ) is
 * compared with the largest update it could be sent, and a viewer without
 * that room is held (onHold, and out of allFds, or libvncserver spins on
 * it) until its socket is writable again, i.e. the gateway or the relay
 * drained it to a quarter.  Requests are clipped to the rows that fit in
 * three quarters of the buffer, so whatever the kernel's wmem_max, one
 * update always fits in a drained socket; the rows left out stay modified
 * and go with the viewer's next request.
 */
#include "autoconf.h"

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <linux/sockios.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <X11/Xlib.h>
#include <X11/keysym.h>
#include <X11/extensions/XTest.h>
#include <X11/extensions/Xfixes.h>

#include <rfb/rfb.h>
#include <rfb/rfbregion.h>

#include "buf.h"
#include "capture.h"
#include "display.h"
#include "err.h"
#include "keymap.h"
#include "log.h"
#include "loop.h"
#include "queue-compat.h"
#include "rfb.h"
#include "rfb-int.h"
#include "xmalloc.h"

#define RFB_SNDBUF		(8 * 1024 * 1024)
#define RFB_CLIENT_WAIT_MS	500	/* a half message (none should come) */
#define RFB_BUTTONS		8
#define RFB_KEYS_DOWN		16	/* per viewer, at once */
#define RFB_KEYQ		64	/* key events waiting for a spare */
/* Update bytes beyond the pixels: headers and a cursor mask. */
#define RFB_SLACK		(64 * 1024)
/* Not named by libvncserver 0.9.14's headers. */
#define RFB_MSG_CONTINUOUS	150
#define RFB_MSG_FENCE		248

struct rfb_viewer {
	struct rfb		*r;
	rfbClientPtr		 cl;
	struct loop_fd		*lf;	/* a dup of cl->sock, for readiness */
	const void		*owner;
	int			 control;
	int			 buttons;	/* last button mask injected */
	int			 gated;		/* a Unix socket: see rfb_gate */
	int			 sndbuf;	/* SO_SNDBUF granted */
	int			 held;		/* waiting for room */
	struct rfb_tight	*tight;		/* its update being encoded */
	/* Keys down, with the keycode each was pressed with. */
	struct {
		rfbKeySym	 sym;
		KeyCode		 kc;
	}			 keys[RFB_KEYS_DOWN];
	int			 nkeys;
	/*
	 * Key events behind one that waits for a spare keycode to settle
	 * (keymap.h): applied in order from a timer; meanwhile the viewer
	 * is not read, so the queue holds what one read brought.
	 */
	struct {
		rfbKeySym	 sym;
		int		 down;
	}			 keyq[RFB_KEYQ];
	int			 nkeyq;
	int			 keystop;	/* not read since one waited */
	struct loop_timer	*keyt;
};

static LIST_HEAD(, rfb)	 rfb_list = LIST_HEAD_INITIALIZER(rfb_list);
static int		 rfb_log_set;

/* Set while rfbNewClient runs: who the new viewer belongs to. */
static struct {
	int		 set;
	const void	*owner;
	int		 control;
} rfb_pending;

/* ---- libvncserver's log -------------------------------------------------- */

static void
rfb_log_quiet(const char *fmt, ...)
{
	(void)fmt;
}

static void	rfb_log_err(const char *fmt, ...)
		    __attribute__((format(printf, 1, 2)));

static void
rfb_log_err(const char *fmt, ...)
{
	char	buf[256], q[300];
	va_list	ap;
	size_t	n;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	n = strlen(buf);
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	log_debug("rfb.lib", "msg=%s", log_quote(q, sizeof q, buf));
}

/* ---- send room ----------------------------------------------------------- */

/* Bytes a pixel takes on the wire to cl. */
static long
rfb_client_bpp(rfbClientPtr cl)
{
	return cl->format.bitsPerPixel >= 8 ? cl->format.bitsPerPixel / 8 : 1;
}

/*
 * Room v's socket is sure to have once writable again: unix_writable()
 * wakes us when at most a quarter of the buffer is used.
 */
static long
rfb_budget(const struct rfb_viewer *v)
{
	return (long)v->sndbuf / 4 * 3;
}

/* Largest update of rows full rows to cl: Raw, plus 1/8 for encodings
 * that expand noise, plus headers and the cursor shape. */
static long
rfb_update_max(rfbClientPtr cl, int rows)
{
	rfbCursorPtr	c = cl->screen->cursor;
	long		bpp = rfb_client_bpp(cl), n;

	n = (long)cl->screen->width * rows * bpp * 9 / 8 + RFB_SLACK;
	if (c != NULL && cl->enableCursorShapeUpdates)
		n += (long)c->width * c->height * (bpp + 1);
	return n;
}

/* How many rows one update to v may cover, at least 1. */
static int
rfb_rows_max(const struct rfb_viewer *v)
{
	rfbClientPtr	cl = v->cl;
	long		row, over;

	row = (long)cl->screen->width * rfb_client_bpp(cl) * 9 / 8;
	over = rfb_update_max(cl, 0);
	if (row <= 0 || rfb_budget(v) - over < row)
		return 1;
	if ((rfb_budget(v) - over) / row >= cl->screen->height)
		return cl->screen->height;
	return (int)((rfb_budget(v) - over) / row);
}

/* Send room v needs before libvncserver may write to it. */
static long
rfb_need(const struct rfb_viewer *v)
{
	long	need = rfb_update_max(v->cl, rfb_rows_max(v));

	/* Never more than a drained socket has, or we would wait forever. */
	return need < rfb_budget(v) ? need : rfb_budget(v);
}

/*
 * Read v only when it is neither held nor has keys waiting.  Held but
 * still in allFds, libvncserver loops on it (trap 2).  A closed viewer
 * (sock -1, reaped on the next pump) is in no set.
 */
static void
rfb_reads(struct rfb *r, struct rfb_viewer *v)
{
	rfbClientPtr	cl = v->cl;
	int		on = !v->held && v->nkeyq == 0;

	if (cl->sock == RFB_INVALID_SOCKET)
		;
	else if (on)
		FD_SET(cl->sock, &r->s->allFds);
	else
		FD_CLR(cl->sock, &r->s->allFds);
	/* Its messages wait in the socket; no wakeups for them meanwhile. */
	if (v->lf != NULL)
		loop_fd_want_read(v->lf, on);
}

static void
rfb_hold(struct rfb *r, struct rfb_viewer *v, int on)
{
	v->held = on;
	v->cl->onHold = on ? TRUE : FALSE;
	rfb_reads(r, v);
}

/*
 * Hold every gateway viewer whose socket cannot take the largest update
 * without blocking, and let go those drained enough.
 */
static void
rfb_gate(struct rfb *r)
{
	rfbClientIteratorPtr	 it;
	rfbClientPtr		 cl;
	struct rfb_viewer	*v;
	int			 q, room;

	it = rfbGetClientIterator(r->s);
	while ((cl = rfbClientIteratorNext(it)) != NULL) {
		v = cl->clientData;
		if (v == NULL || !v->gated || cl->sock == RFB_INVALID_SOCKET ||
		    v->tight != NULL)
			continue;
		if (ioctl(cl->sock, SIOCOUTQ, &q) == -1)
			q = 0;
		room = (long)v->sndbuf - q >= rfb_need(v);
		if (room == v->held)
			rfb_hold(r, v, !room);
		if (v->held && v->lf != NULL)
			loop_fd_want_write(v->lf);
	}
	rfbReleaseClientIterator(it);
}

/* ---- pumping ------------------------------------------------------------- */

static void	rfb_pump_soon(struct rfb *r);

/* A fast-path update was written: the viewer may be read and sent to. */
static void
rfb_tight_done(struct rfb *r, rfbClientPtr cl)
{
	struct rfb_viewer	*v = cl->clientData;

	if (v == NULL)
		return;
	v->tight = NULL;
	rfb_hold(r, v, 0);
	/* Its next request may be waiting; rfb_gate holds it again if the
	 * socket has no room. */
	rfb_pump_soon(r);
}

/* Updates for Tight+JPEG viewers go the fast path (rfb-tight.c). */
static void
rfb_take_updates(struct rfb *r)
{
	rfbClientIteratorPtr	 it;
	rfbClientPtr		 cl;
	struct rfb_viewer	*v;
	struct rfb_tight	*t;

	it = rfbGetClientIterator(r->s);
	while ((cl = rfbClientIteratorNext(it)) != NULL) {
		v = cl->clientData;
		if (v == NULL || v->held || v->tight != NULL)
			continue;
		if (rfb_tight_take(r, cl, rfb_tight_done, &t) && t != NULL) {
			v->tight = t;
			rfb_hold(r, v, 1);
		}
	}
	rfbReleaseClientIterator(it);
}

static void
rfb_pump_now(struct rfb *r)
{
	rfb_gate(r);
	/* Reads ready viewers (whole messages), so their requests are in. */
	rfbCheckFds(r->s, 0);
	rfb_take_updates(r);
	/* Reads what came meanwhile, sends the pending updates left and
	 * reaps closed viewers (rfb_client_gone). */
	rfbProcessEvents(r->s, 0);
}

static void
rfb_pump_timer(void *arg)
{
	struct rfb	*r = arg;

	r->pump = NULL;
	rfb_pump_now(r);
}

static void
rfb_pump_soon(struct rfb *r)
{
	if (r->pump == NULL)
		r->pump = loop_timer_add(0, rfb_pump_timer, r);
}

static void
rfb_damage(struct capture *cap, const struct capture_box *box, void *arg)
{
	struct rfb	*r = arg;

	(void)cap;
	if (box->w <= 0 || box->h <= 0)
		return;
	rfbMarkRectAsModified(r->s, box->x, box->y, box->x + box->w,
	    box->y + box->h);
	rfb_pump_soon(r);
}

/*
 * Part of a frame is an earlier part moved (capture found a scroll): a
 * CopyRect for viewers that take it; libvncserver marks it modified for
 * the others.  Scaled copies of the screen are kept by marking modified,
 * so with any scaled viewer it is damage like the rest.
 */
static void
rfb_copy(struct capture *cap, const struct capture_box *dst, int dy,
    void *arg)
{
	struct rfb	*r = arg;
	sraRegionPtr	 rgn;

	(void)cap;
	if (r->s->scaledScreenNext != NULL) {
		rfbMarkRectAsModified(r->s, dst->x, dst->y, dst->x + dst->w,
		    dst->y + dst->h);
	} else {
		rgn = sraRgnCreateRect(dst->x, dst->y, dst->x + dst->w,
		    dst->y + dst->h);
		rfbScheduleCopyRegion(r->s, rgn, 0, dy);
		sraRgnDestroy(rgn);
	}
	rfb_pump_soon(r);
}

static void
rfb_viewer_fd_cb(struct loop_fd *lf, int events, void *arg)
{
	struct rfb_viewer	*v = arg;

	if (events & LOOP_HUP)
		v->lf = NULL;
	(void)lf;
	/* The viewer may be freed inside: do not touch v afterwards. */
	rfb_pump_now(v->r);
}

/* ---- the cursor shape (cursor pseudo-encodings) --------------------------- */

#define RFB_CURSOR_MAX	256	/* side; larger cursors keep the old shape */

/*
 * The X cursor is not in XShm grabs: viewers draw it from the shape we
 * send (RichCursor / XCursor pseudo-encodings), in the server's pixel
 * format, with a mask where it is at least half opaque.
 */
static rfbCursorPtr
rfb_cursor_from_x(const XFixesCursorImage *ci)
{
	rfbCursorPtr	 c;
	size_t		 bpr, i, n;
	uint32_t	*rich;
	unsigned long	 p;
	int		 x, y, a, lum;

	if (ci->width == 0 || ci->height == 0 ||
	    ci->width > RFB_CURSOR_MAX || ci->height > RFB_CURSOR_MAX)
		return NULL;
	bpr = ((size_t)ci->width + 7) / 8;
	n = (size_t)ci->width * ci->height;
	c = xcalloc(1, sizeof *c);
	c->width = ci->width;
	c->height = ci->height;
	c->xhot = ci->xhot < ci->width ? ci->xhot : 0;
	c->yhot = ci->yhot < ci->height ? ci->yhot : 0;
	c->source = xcalloc(bpr * ci->height, 1);
	c->mask = xcalloc(bpr * ci->height, 1);
	rich = xcalloc(n, 4);
	c->richSource = (unsigned char *)rich;
	for (i = 0; i < n; i++) {
		x = (int)(i % ci->width);
		y = (int)(i / ci->width);
		p = ci->pixels[i];	/* premultiplied ARGB */
		a = (int)(p >> 24 & 0xff);
		rich[i] = (uint32_t)(p & 0xffffff);
		if (a < 128)
			continue;
		c->mask[(size_t)y * bpr + (size_t)x / 8] |=
		    (unsigned char)(0x80 >> (x % 8));
		lum = (int)((p >> 16 & 0xff) + (p >> 8 & 0xff) + (p & 0xff));
		if (lum >= 3 * 128)	/* source bit: foreground white */
			c->source[(size_t)y * bpr + (size_t)x / 8] |=
			    (unsigned char)(0x80 >> (x % 8));
	}
	c->foreRed = c->foreGreen = c->foreBlue = 0xffff;
	c->cleanup = c->cleanupSource = c->cleanupMask = TRUE;
	c->cleanupRichSource = TRUE;
	return c;
}

/*
 * Put libvncserver's idea of the pointer where X has it (x, y):
 * viewers that take pointer positions are told, and viewers that take no
 * shapes get the cursor drawn in the right place.
 */
static void
rfb_set_pointer(struct rfb *r, int x, int y)
{
	rfbClientIteratorPtr	 it;
	rfbClientPtr		 cl;

	if (x == r->s->cursorX && y == r->s->cursorY)
		return;
	r->s->cursorX = x;
	r->s->cursorY = y;
	it = rfbGetClientIterator(r->s);
	while ((cl = rfbClientIteratorNext(it)) != NULL) {
		if (cl->enableCursorPosUpdates)
			cl->cursorWasMoved = TRUE;
	}
	rfbReleaseClientIterator(it);
}

/* The same, asking X (one round trip). */
static void
rfb_sync_pointer(struct rfb *r)
{
	int	x, y;

	if (r->cap != NULL && capture_cursor(r->cap, &x, &y) == 0)
		rfb_set_pointer(r, x, y);
}

static void
rfb_cursor_changed(struct capture *cap, void *arg)
{
	struct rfb		*r = arg;
	XFixesCursorImage	*ci;
	rfbCursorPtr		 c;

	if ((ci = XFixesGetCursorImage(capture_xdisplay(cap))) == NULL)
		return;
	c = rfb_cursor_from_x(ci);
	XFree(ci);
	if (c == NULL)
		return;
	rfbSetCursor(r->s, c);
	rfb_sync_pointer(r);
	rfb_pump_soon(r);
}

/* ---- input of control viewers -------------------------------------------- */

static Display *
rfb_xdpy(struct rfb *r)
{
	return r->cap != NULL ? capture_xdisplay(r->cap) : NULL;
}

static void
rfb_ptr_event(int mask, int x, int y, rfbClientPtr cl)
{
	struct rfb_viewer	*v = cl->clientData;
	Display			*dpy;
	int			 b, changed;

	if (v == NULL || !v->control || cl->viewOnly ||
	    (dpy = rfb_xdpy(v->r)) == NULL)
		return;
	XTestFakeMotionEvent(dpy, -1, x, y, CurrentTime);
	changed = mask ^ v->buttons;
	for (b = 0; b < RFB_BUTTONS; b++) {
		if (changed & (1 << b))
			XTestFakeButtonEvent(dpy, (unsigned)b + 1,
			    (mask & (1 << b)) ? True : False, CurrentTime);
	}
	v->buttons = mask;
	XFlush(dpy);
	display_touch(v->r->d);
	rfbDefaultPtrAddEvent(mask, x, y, cl);
}

/* Is keycode kc down now, by XQueryKeymap's vector? */
static int
rfb_kc_down(const char keys[32], KeyCode kc)
{
	return kc != 0 && (keys[kc / 8] & (1 << (kc % 8))) != 0;
}

static void
rfb_tap(Display *dpy, KeyCode kc)
{
	XTestFakeKeyEvent(dpy, kc, True, CurrentTime);
	XTestFakeKeyEvent(dpy, kc, False, CurrentTime);
}

/*
 * Press the keycode that yields sym, whatever the keymap (x11vnc's
 * "modtweak"): a keysym off the keymap gets a spare keycode; Shift is
 * pressed around a key on the shift level when the viewer holds none, and
 * the viewer's Shift is let go around a key that must not be shifted ('1'
 * while Shift is down); NumLock is set for a keypad key as its level
 * needs, and set back.  Tab with the viewer's Shift is ISO_Left_Tab with
 * Shift, as X keyboards give it (viewers send Tab: letting Shift go made
 * it a plain Tab).  Returns 0 with *kc the keycode pressed (0 for none),
 * or 1 when every spare carries a keysym typed too recently to change
 * (keymap.h): come back after *wait_ms, nothing was sent.
 */
static int
rfb_key_press(Display *dpy, rfbKeySym sym, KeyCode *kc, uint64_t *wait_ms)
{
	struct keymap_key k;
	struct keymap	*km;
	Window		 rw, cw;
	KeyCode		 sh[2];
	char		 down[32];
	unsigned	 mask = 0;
	int		 x, y, wx, wy, err, i, numlock = 0, shift_down, r;

	*kc = 0;
	*wait_ms = 0;
	if ((km = keymap_get(dpy, &err)) == NULL)
		return 0;
	XQueryPointer(dpy, DefaultRootWindow(dpy), &rw, &cw, &x, &y, &wx, &wy,
	    &mask);
	shift_down = (mask & ShiftMask) != 0;
	if (sym == XK_Tab && shift_down)
		sym = XK_ISO_Left_Tab;
	if ((r = keymap_find(km, (unsigned long)sym, &k, wait_ms)) == 1 &&
	    *wait_ms > 0)
		return 1;
	if (r != 0)
		return 0;	/* none, or every spare held down */
	if (k.numlock != KEYMAP_ANY && keymap_numlock_kc(km) != 0 &&
	    keymap_numlock_mask(km) != 0 &&
	    ((mask & keymap_numlock_mask(km)) != 0) !=
	    (k.numlock == KEYMAP_ON)) {
		numlock = 1;
		rfb_tap(dpy, keymap_numlock_kc(km));
	}
	if (k.shift == KEYMAP_ON && !shift_down) {
		XTestFakeKeyEvent(dpy, keymap_shift_kc(km), True, CurrentTime);
		XTestFakeKeyEvent(dpy, k.kc, True, CurrentTime);
		XTestFakeKeyEvent(dpy, keymap_shift_kc(km), False,
		    CurrentTime);
	} else if (k.shift == KEYMAP_OFF && shift_down) {
		XQueryKeymap(dpy, down);
		sh[0] = keymap_shift_kc(km);
		sh[1] = keymap_shift_r_kc(km);
		for (i = 0; i < 2; i++)
			if (rfb_kc_down(down, sh[i]))
				XTestFakeKeyEvent(dpy, sh[i], False,
				    CurrentTime);
		XTestFakeKeyEvent(dpy, k.kc, True, CurrentTime);
		for (i = 0; i < 2; i++)
			if (rfb_kc_down(down, sh[i]))
				XTestFakeKeyEvent(dpy, sh[i], True,
				    CurrentTime);
	} else
		XTestFakeKeyEvent(dpy, k.kc, True, CurrentTime);
	if (numlock)
		rfb_tap(dpy, keymap_numlock_kc(km));
	keymap_used(km, k.kc);
	if (k.spare) {
		keymap_pin(km, k.kc, 1);
		keymap_idle_later(km);
	}
	*kc = k.kc;
	return 0;
}

/*
 * Apply one key event of v.  Returns 1 when it must wait *wait_ms for a
 * spare (nothing sent).
 */
static int
rfb_key_apply(struct rfb_viewer *v, Display *dpy, rfbKeySym sym, int down,
    uint64_t *wait_ms)
{
	struct keymap		*km;
	KeyCode			 kc = 0;
	int			 i, err;

	*wait_ms = 0;
	for (i = 0; i < v->nkeys; i++)
		if (v->keys[i].sym == sym)
			break;
	if (down) {
		/* A repeat while down types again with the same keycode. */
		if (i < v->nkeys)
			XTestFakeKeyEvent(dpy, v->keys[i].kc, True,
			    CurrentTime);
		else if (v->nkeys < RFB_KEYS_DOWN) {
			if (rfb_key_press(dpy, sym, &kc, wait_ms) == 1)
				return 1;
			if (kc != 0) {
				v->keys[v->nkeys].sym = sym;
				v->keys[v->nkeys].kc = kc;
				v->nkeys++;
			}
		}
	} else if (i < v->nkeys) {
		kc = v->keys[i].kc;
		v->keys[i] = v->keys[--v->nkeys];
		XTestFakeKeyEvent(dpy, kc, False, CurrentTime);
		if ((km = keymap_get(dpy, &err)) != NULL) {
			keymap_used(km, kc);
			keymap_pin(km, kc, 0);
		}
	}
	return 0;
}

static void	rfb_keyq_timer(void *);

/*
 * Apply v's queued key events in order, up to one that must wait: then a
 * timer comes back for it and v is not read meanwhile (its later events
 * stay in its socket, in order).
 */
static void
rfb_keyq_run(struct rfb_viewer *v)
{
	Display		*dpy = rfb_xdpy(v->r);
	uint64_t	 wait_ms;

	while (v->nkeyq > 0 && dpy != NULL) {
		if (rfb_key_apply(v, dpy, v->keyq[0].sym, v->keyq[0].down,
		    &wait_ms) == 1) {
			XFlush(dpy);
			loop_timer_cancel(v->keyt);
			v->keyt = loop_timer_add(wait_ms, rfb_keyq_timer, v);
			v->keystop = 1;
			rfb_reads(v->r, v);
			return;
		}
		memmove(&v->keyq[0], &v->keyq[1], (size_t)(v->nkeyq - 1) *
		    sizeof v->keyq[0]);
		v->nkeyq--;
	}
	v->nkeyq = 0;
	if (dpy != NULL)
		XFlush(dpy);
	display_touch(v->r->d);
	if (v->keystop) {
		/* Read it again: what it sent meanwhile is in its socket. */
		v->keystop = 0;
		rfb_reads(v->r, v);
		rfb_pump_soon(v->r);
	}
}

static void
rfb_keyq_timer(void *arg)
{
	struct rfb_viewer	*v = arg;

	v->keyt = NULL;
	rfb_keyq_run(v);
}

static void
rfb_kbd_event(rfbBool down, rfbKeySym sym, rfbClientPtr cl)
{
	struct rfb_viewer	*v = cl->clientData;

	if (v == NULL || !v->control || cl->viewOnly ||
	    rfb_xdpy(v->r) == NULL)
		return;
	if (v->nkeyq >= RFB_KEYQ) {
		/* Not read while keys wait: only a burst of one read. */
		log_warn("rfb.key_dropped", "slot=%d keysym=0x%lx",
		    display_slot(v->r->d), (unsigned long)sym);
		return;
	}
	v->keyq[v->nkeyq].sym = sym;
	v->keyq[v->nkeyq].down = down ? 1 : 0;
	v->nkeyq++;
	if (v->keyt == NULL)
		rfb_keyq_run(v);
}

/* Clipboard from viewers is not taken yet; view viewers never. */
static void
rfb_cut_text(char *str, int len, rfbClientPtr cl)
{
	(void)str;
	(void)len;
	(void)cl;
}

/* ---- viewers ------------------------------------------------------------- */

/*
 * Cut a request to the rows one update to v may cover (rfb_gate): the
 * band starts at the first changed row, so successive requests walk down
 * the changes.  The rows left out of a full request are marked modified
 * for this viewer, so its next request, full or incremental, brings them.
 */
static void
rfb_clip_request(struct rfb_viewer *v, rfbFramebufferUpdateRequestMsg *msg)
{
	sraRegionPtr	req, m, band;
	sraRect		bb;
	int		rows = rfb_rows_max(v), top = msg->y;

	if (msg->h <= rows)
		return;
	req = sraRgnCreateRect(msg->x, msg->y, msg->x + msg->w,
	    msg->y + msg->h);
	if (msg->incremental) {
		m = sraRgnCreateRgn(v->cl->modifiedRegion);
		sraRgnAnd(m, req);
		if (!sraRgnEmpty(m)) {
			band = sraRgnBBox(m);
			if (sraRgnPopRect(band, &bb, 0))
				top = bb.y1;
			sraRgnDestroy(band);
		}
		sraRgnDestroy(m);
	}
	if (top + rows > msg->y + msg->h)
		top = msg->y + msg->h - rows;
	if (!msg->incremental) {
		band = sraRgnCreateRect(msg->x, top, msg->x + msg->w,
		    top + rows);
		sraRgnSubtract(req, band);
		sraRgnOr(v->cl->modifiedRegion, req);
		sraRgnDestroy(band);
	}
	sraRgnDestroy(req);
	msg->y = (uint16_t)top;
	msg->h = (uint16_t)rows;
}

/*
 * A viewer asks for a frame: fold in the damage the X server has already
 * seen and read the pointer (one round trip), so a picture drawn before
 * the request is in the answer, as observe does.
 */
static void
rfb_update_request(rfbClientPtr cl, rfbFramebufferUpdateRequestMsg *msg)
{
	struct rfb_viewer	*v = cl->clientData;
	int			 x, y;

	if (v == NULL)
		return;
	if (v->gated)
		rfb_clip_request(v, msg);
	if (v->r->cap != NULL && capture_sync_cursor(v->r->cap, &x, &y) == 0)
		rfb_set_pointer(v->r, x, y);
}

static void
rfb_client_gone(rfbClientPtr cl)
{
	struct rfb_viewer	*v = cl->clientData;
	Display			*dpy;
	uint64_t		 wait_ms;

	if (v == NULL)
		return;
	/* Keys still waiting are dropped; those it left down go up (not
	 * while the display closes). */
	loop_timer_cancel(v->keyt);
	v->keyt = NULL;
	v->nkeyq = 0;
	if (!v->r->closing && (dpy = rfb_xdpy(v->r)) != NULL) {
		while (v->nkeys > 0)
			(void)rfb_key_apply(v, dpy, v->keys[v->nkeys - 1].sym,
			    0, &wait_ms);
		XFlush(dpy);
	}
	cl->clientData = NULL;
	if (v->tight != NULL)
		rfb_tight_orphan(v->tight);
	/* No viewer left: capture stops hashing rows for scrolls. */
	if (--v->r->nviewers == 0 && !v->r->closing && v->r->cap != NULL)
		capture_set_copy_cb(v->r->cap, NULL, NULL);
	loop_fd_close(v->lf);
	free(v);
}

/*
 * Gateway viewers (Unix sockets) are gated on their send room; note the
 * buffer the kernel granted (it caps SO_SNDBUF at twice
 * net.core.wmem_max).  Below a full frame, updates are cut into bands,
 * which costs viewers round trips: say so once.
 */
static void
rfb_check_sndbuf(struct rfb_viewer *v)
{
	static int		warned;
	struct sockaddr_storage	ss;
	socklen_t		len = sizeof ss;
	int			got = 0;

	if (getsockname(v->cl->sock, (struct sockaddr *)&ss, &len) != 0 ||
	    ss.ss_family != AF_UNIX)
		return;
	len = sizeof got;
	if (getsockopt(v->cl->sock, SOL_SOCKET, SO_SNDBUF, &got, &len) != 0 ||
	    got <= 0)
		return;
	v->gated = 1;
	v->sndbuf = got;
	if (warned || rfb_rows_max(v) >= v->cl->screen->height)
		return;
	warned = 1;
	log_warn("rfb.sndbuf_small", "got=%d rows=%d hint=\"raise "
	    "net.core.wmem_max\"", got, rfb_rows_max(v));
}

static enum rfbNewClientAction
rfb_new_client(rfbClientPtr cl)
{
	struct rfb		*r = cl->screen->screenData;
	struct rfb_viewer	*v;
	int			 dfd, sz = RFB_SNDBUF;

	v = xcalloc(1, sizeof *v);
	v->r = r;
	v->cl = cl;
	/* Every viewer comes through rfb_add_viewer: no listener. */
	if (rfb_pending.set) {
		v->owner = rfb_pending.owner;
		v->control = rfb_pending.control;
	}
	cl->clientData = v;
	cl->clientGoneHook = rfb_client_gone;
	cl->clientFramebufferUpdateRequestHook = rfb_update_request;
	cl->viewOnly = v->control ? FALSE : TRUE;
	/* Room for a full frame saves cutting updates (rfb_gate). */
	(void)setsockopt(cl->sock, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
	rfb_check_sndbuf(v);
	if ((dfd = fcntl(cl->sock, F_DUPFD_CLOEXEC, 3)) == -1 ||
	    (v->lf = loop_fd_add(dfd, rfb_viewer_fd_cb, v)) == NULL) {
		cl->clientData = NULL;
		free(v);
		return RFB_CLIENT_REFUSE;
	}
	log_debug("rfb.viewer", "slot=%d control=%d", display_slot(r->d),
	    v->control);
	/* Scrolls are looked for (row hashes kept) only while viewed. */
	if (r->nviewers++ == 0 && r->cap != NULL)
		capture_set_copy_cb(r->cap, rfb_copy, r);
	return RFB_CLIENT_ACCEPT;
}

/* ---- screens ------------------------------------------------------------- */

static struct rfb *
rfb_lookup(struct display *d)
{
	struct rfb	*r;

	LIST_FOREACH(r, &rfb_list, entry) {
		if (r->d == d)
			return r;
	}
	return NULL;
}

int
rfb_screen(struct display *d, struct rfb **out)
{
	struct capture	*cap;
	struct rfb	*r;
	const uint8_t	*px;
	size_t		 stride;
	int		 w, h, argc = 0;

	*out = NULL;
	if ((r = rfb_lookup(d)) != NULL) {
		*out = r;
		return 0;
	}
	if ((cap = display_capture(d)) == NULL)
		return ERR_NO_DISPLAY;
	if (!rfb_log_set) {
		rfbLog = rfb_log_quiet;
		rfbErr = rfb_log_err;
		rfb_log_set = 1;
	}
	px = capture_pixels(cap, &w, &h, &stride);
	r = xcalloc(1, sizeof *r);
	r->d = d;
	r->cap = cap;
	if ((r->s = rfbGetScreen(&argc, NULL, w, h, 8, 3, 4)) == NULL) {
		free(r);
		return ERR_NOMEM;
	}
	r->s->screenData = r;
	r->s->desktopName = "rakazo";
	/* capture's segment: 0x00RRGGBB little-endian, stride from X. */
	r->s->frameBuffer = (char *)(uintptr_t)px;
	r->s->paddedWidthInBytes = (int)stride;
	r->s->serverFormat.redShift = 16;
	r->s->serverFormat.greenShift = 8;
	r->s->serverFormat.blueShift = 0;
	/*
	 * rfbGetScreen says depth 32 and trueColour 255; viewers say 24 and
	 * 1 for the same pixels, and libvncserver then translates every
	 * pixel through lookup tables instead of copying.  X's depth is 24.
	 */
	r->s->serverFormat.depth = 24;
	r->s->serverFormat.trueColour = TRUE;
	r->s->depth = 24;
	r->s->port = 0;
	r->s->ipv6port = 0;
	r->s->autoPort = FALSE;
	r->s->httpPort = 0;
	r->s->httpDir = NULL;
	r->s->deferUpdateTime = 0;
	r->s->maxClientWait = RFB_CLIENT_WAIT_MS;
	r->s->alwaysShared = TRUE;
	r->s->neverShared = FALSE;
	r->s->newClientHook = rfb_new_client;
	r->s->ptrAddEvent = rfb_ptr_event;
	r->s->kbdAddEvent = rfb_kbd_event;
	r->s->setXCutText = rfb_cut_text;
	r->s->setXCutTextUTF8 = rfb_cut_text;
	rfbInitServer(r->s);	/* no listener: port 0 */
	if (rfb_debug_on())
		rfb_debug_listen(r);
	capture_set_damage_cb(cap, rfb_damage, r);
	capture_set_cursor_cb(cap, rfb_cursor_changed, r);
	rfb_cursor_changed(cap, r);
	LIST_INSERT_HEAD(&rfb_list, r, entry);
	*out = r;
	return 0;
}

void
rfb_display_ready(struct display *d)
{
	struct rfb	*r;

	if (rfb_debug_on())
		(void)rfb_screen(d, &r);
}

void
rfb_display_closing(struct display *d)
{
	struct rfb	*r;

	if ((r = rfb_lookup(d)) == NULL)
		return;
	LIST_REMOVE(r, entry);
	if (r->cap != NULL) {
		capture_set_damage_cb(r->cap, NULL, NULL);
		capture_set_copy_cb(r->cap, NULL, NULL);
		capture_set_cursor_cb(r->cap, NULL, NULL);
	}
	loop_timer_cancel(r->pump);
	r->closing = 1;
	rfb_debug_close(r);
	/* Closes every viewer socket (the peers see EOF at once) and frees
	 * the clients through rfb_client_gone. */
	rfbShutdownServer(r->s, TRUE);
	rfbScreenCleanup(r->s);
	free(r);
}

int
rfb_add_viewer(struct display *d, int fd, int control, const void *owner)
{
	struct rfb	*r;
	rfbClientPtr	 cl;
	int		 ret;

	if (fd >= FD_SETSIZE) {
		/* libvncserver select()s on fd_sets. */
		close(fd);
		return ERR_BUSY;
	}
	if ((ret = rfb_screen(d, &r)) != 0) {
		close(fd);
		return ret;
	}
	rfb_pending.set = 1;
	rfb_pending.owner = owner;
	rfb_pending.control = control;
	cl = rfbNewClient(r->s, fd);	/* on failure it closed fd */
	rfb_pending.set = 0;
	if (cl == NULL)
		return ERR_IO;
	/* The pre-fed version may already be waiting. */
	rfb_pump_soon(r);
	return 0;
}

void
rfb_drop_owner(struct display *d, const void *owner)
{
	struct rfb		*r;
	rfbClientIteratorPtr	 it;
	rfbClientPtr		 cl;
	struct rfb_viewer	*v;
	int			 any = 0;

	if ((r = rfb_lookup(d)) == NULL)
		return;
	it = rfbGetClientIterator(r->s);
	while ((cl = rfbClientIteratorNext(it)) != NULL) {
		v = cl->clientData;
		if (v != NULL && v->owner == owner &&
		    cl->sock != RFB_INVALID_SOCKET) {
			/* Also no input from here on. */
			v->control = 0;
			cl->viewOnly = TRUE;
			rfbCloseClient(cl);
			any = 1;
		}
	}
	rfbReleaseClientIterator(it);
	if (any)
		rfb_pump_now(r);
}

unsigned
rfb_viewer_count(struct display *d)
{
	struct rfb		*r;
	rfbClientIteratorPtr	 it;
	rfbClientPtr		 cl;
	unsigned		 n = 0;

	if ((r = rfb_lookup(d)) == NULL)
		return 0;
	it = rfbGetClientIterator(r->s);
	while ((cl = rfbClientIteratorNext(it)) != NULL) {
		if (cl->sock != RFB_INVALID_SOCKET)
			n++;
	}
	rfbReleaseClientIterator(it);
	return n;
}

/* ---- client message framer ----------------------------------------------- */

int
rfb_msg_is_input(int type)
{
	switch (type) {
	case rfbKeyEvent:
	case rfbPointerEvent:
	case rfbClientCutText:
	case rfbSetDesktopSize:
	case rfbXvp:
	case rfbQemuEvent:
		return 1;
	default:
		return 0;
	}
}

/*
 * Length of a normal-phase message read through c (at its type byte),
 * 0 when its header is incomplete.
 */
static ssize_t
rfb_normal_len(struct cursor *c, uint8_t type)
{
	uint32_t	len;
	uint16_t	count;
	uint8_t		u8;

	switch (type) {
	case rfbSetPixelFormat:
		return 20;
	case rfbSetEncodings:
		/* type, padding, number-of-encodings u16 */
		if (cursor_skip(c, 2) != 0 || cursor_get_u16be(c, &count) != 0)
			return 0;
		return 4 + 4 * (ssize_t)count;
	case rfbFramebufferUpdateRequest:
		return 10;
	case rfbKeyEvent:
		return 8;
	case rfbPointerEvent:
		return 6;
	case rfbClientCutText:
		/* type, 3 padding, length u32 */
		if (cursor_skip(c, 4) != 0 || cursor_get_u32be(c, &len) != 0)
			return 0;
		/* Extended clipboard: a negative length. */
		if (len & 0x80000000U)
			len = ~len + 1;
		if (len > RFB_MSG_MAX - 8)
			return ERR_TOO_LARGE;
		return 8 + (ssize_t)len;
	case RFB_MSG_CONTINUOUS:
		return 10;
	case RFB_MSG_FENCE:
		/* type, 3 padding, flags u32, length u8 */
		if (cursor_skip(c, 8) != 0 || cursor_get_u8(c, &u8) != 0)
			return 0;
		return 9 + (ssize_t)u8;
	case rfbXvp:
		return 4;
	case rfbSetDesktopSize:
		/* type, padding, width u16, height u16, screens u8, padding */
		if (cursor_skip(c, 6) != 0 || cursor_get_u8(c, &u8) != 0 ||
		    cursor_skip(c, 1) != 0)
			return 0;
		return 8 + 16 * (ssize_t)u8;
	case rfbQemuEvent:
		/* type, submessage type u8: only 0, the extended key event */
		if (cursor_skip(c, 1) != 0 || cursor_get_u8(c, &u8) != 0)
			return 0;
		return u8 == 0 ? 12 : ERR_PROTOCOL;
	default:
		return ERR_PROTOCOL;
	}
}

ssize_t
rfb_frame_next(struct rfb_framer *f, const uint8_t *p, size_t n, int *type)
{
	struct cursor	c;
	ssize_t		len;
	uint8_t		t;

	*type = -1;
	if (n == 0)
		return 0;
	switch (f->phase) {
	case RFB_PHASE_VERSION:
		if (n < RFB_VERSION_LEN)
			return 0;
		f->phase = RFB_PHASE_SECURITY;
		return RFB_VERSION_LEN;
	case RFB_PHASE_SECURITY:
		f->phase = RFB_PHASE_INIT;
		return 1;
	case RFB_PHASE_INIT:
		f->phase = RFB_PHASE_NORMAL;
		return 1;
	case RFB_PHASE_NORMAL:
		break;
	}
	cursor_init(&c, p, n);
	if (cursor_peek_u8(&c, &t) != 0)
		return 0;
	if ((len = rfb_normal_len(&c, t)) <= 0)
		return len;
	if ((size_t)len > n)
		return 0;
	*type = t;
	return len;
}

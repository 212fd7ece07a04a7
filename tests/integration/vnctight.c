/* SPDX-License-Identifier: MIT */
/*
 * vnctight: a native VNC client (libvncclient) asking Tight with JPEG
 * (quality 6, noVNC's default) and CopyRect, and a painter on the same
 * display (DISPLAY, XAUTHORITY), for the screen fast-path test.  It
 * connects to HOST:PORT over TCP, takes the first full frame, then:
 *
 *   big      paints the whole screen with a busy picture (its own
 *            override-redirect window), follows incremental updates until
 *            every pixel of it arrived, and compares the decoded frame
 *            with the screen (XGetImage): prints "big rects=N
 *            full_width=N mae=M" (rects of the updates that carried it,
 *            how many spanned the whole width, the mean absolute error
 *            per channel, x100)
 *   corners  paints two 40x40 squares, at the top-left and bottom-right
 *            corners, follows updates until both show, and prints
 *            "corners area=A center=0|1" (pixels the updates covered,
 *            whether any covered the screen's centre)
 *   scroll   writes 24 lines of text in a 640x312 area, then scrolls it
 *            up a line (XCopyArea, as a terminal does) and writes a new
 *            last line, VT_STEPS times, each time until the viewer shows
 *            it; then follows updates until the area matches the screen
 *            and prints "scroll copies=N copy_area=A pixel_area=P bad=B"
 *            (CopyRect rectangles and their pixels, the pixels of the
 *            other rectangles, pixels of the area still wrong: 0)
 *   churn    repaints the text area of scroll with a changing picture
 *            whose rows are found nowhere before (an animation: capture
 *            then stops hashing rows), VT_CHURN times, each until the
 *            viewer shows it; prints "churn frames=N".  A scroll after
 *            it must still come right (and mostly as copies).
 *
 *   vnctight [-nocopyrect] HOST:PORT big|corners|scroll|churn...
 * -nocopyrect asks Tight only (no CopyRect), as a viewer that cannot.
 * Exit 3 when it cannot connect, 4 on a timeout, 2 on bad usage.  Not
 * installed.
 */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <rfb/rfbclient.h>

#define VT_TRIES	100	/* x 100 ms */
#define VT_STEPS	12	/* scroll steps */
#define VT_CHURN	10	/* churn frames */
/* The text area of the scroll phase: 24 lines of 13 rows. */
#define VT_TX		96
#define VT_TY		160
#define VT_TW		640
#define VT_LINE		13
#define VT_TH		(24 * VT_LINE)

static struct {
	Display	*dpy;
	Window	 win;
	GC	 gc;
	long	 area;		/* pixels of rects since the last reset */
	int	 rects, full_width, centre;
	long	 copy_area;	/* of them, CopyRect */
	int	 copies;
	GotCopyRectProc copy;	/* libvncclient's own */
} V;

static void
vt_copy(rfbClient *cl, int sx, int sy, int w, int h, int dx, int dy)
{
	V.copies++;
	V.copy_area += (long)w * h;
	V.copy(cl, sx, sy, w, h, dx, dy);
}

static void
vt_got(rfbClient *cl, int x, int y, int w, int h)
{
	V.area += (long)w * h;
	V.rects++;
	if (w == cl->width)
		V.full_width++;
	if (x <= cl->width / 2 && cl->width / 2 < x + w &&
	    y <= cl->height / 2 && cl->height / 2 < y + h)
		V.centre = 1;
}

static void
vt_quiet(const char *fmt, ...)
{
	(void)fmt;
}

static void
vt_reset(void)
{
	V.area = V.copy_area = 0;
	V.rects = V.full_width = V.centre = V.copies = 0;
}

/* Pixel x, y of the client's framebuffer as 0xRRGGBB. */
static unsigned
vt_pixel(rfbClient *cl, int x, int y)
{
	const uint8_t	*p = cl->frameBuffer + ((size_t)y * (size_t)cl->width +
	    (size_t)x) * 4;

	return (unsigned)p[0] << 16 | (unsigned)p[1] << 8 | p[2];
}

static int
vt_close(unsigned a, unsigned b, int tol)
{
	int	i, d;

	for (i = 0; i < 24; i += 8) {
		d = (int)(a >> i & 0xff) - (int)(b >> i & 0xff);
		if (d < -tol || d > tol)
			return 0;
	}
	return 1;
}

/* Serve messages until done(cl) or VT_TRIES; 0 when done. */
static int
vt_until(rfbClient *cl, int (*done)(rfbClient *))
{
	int	tries, n;

	for (tries = 0; tries < VT_TRIES; tries++) {
		if (done(cl))
			return 0;
		if ((n = WaitForMessage(cl, 100000)) < 0)
			return 3;
		if (n > 0 && !HandleRFBServerMessage(cl))
			return 3;
	}
	return done(cl) ? 0 : 4;
}

static int
vt_whole(rfbClient *cl)
{
	return V.area >= (long)cl->width * cl->height;
}

/* The busy picture: blocks of colour (64x48) over a gradient, every
 * JPEG block different from its neighbours. */
static unsigned
vt_busy(int x, int y)
{
	return (unsigned)((x / 64) * 40 % 256) << 16 |
	    (unsigned)((y / 48) * 50 % 256) << 8 |
	    (unsigned)((x + y) / 8 % 256);
}

static int
vt_big_shown(rfbClient *cl)
{
	return vt_close(vt_pixel(cl, cl->width / 3, cl->height / 3 + 1),
	    vt_busy(cl->width / 3, cl->height / 3 + 1), 40) &&
	    vt_close(vt_pixel(cl, cl->width - 3, cl->height - 3),
	    vt_busy(cl->width - 3, cl->height - 3), 40) &&
	    vt_close(vt_pixel(cl, 5, 5), vt_busy(5, 5), 40);
}

static int
vt_big(rfbClient *cl)
{
	XImage		*img;
	long long	 err = 0;
	unsigned	 a, b;
	int		 x, y, i, r;

	img = XCreateImage(V.dpy, DefaultVisual(V.dpy, 0), 24, ZPixmap, 0,
	    malloc((size_t)cl->width * cl->height * 4), (unsigned)cl->width,
	    (unsigned)cl->height, 32, 0);
	for (y = 0; y < cl->height; y++)
		for (x = 0; x < cl->width; x++)
			XPutPixel(img, x, y, vt_busy(x, y));
	vt_reset();
	XPutImage(V.dpy, V.win, V.gc, img, 0, 0, 0, 0, (unsigned)cl->width,
	    (unsigned)cl->height);
	XSync(V.dpy, False);
	XDestroyImage(img);
	if ((r = vt_until(cl, vt_big_shown)) != 0)
		return r;
	img = XGetImage(V.dpy, DefaultRootWindow(V.dpy), 0, 0,
	    (unsigned)cl->width, (unsigned)cl->height, AllPlanes, ZPixmap);
	for (y = 0; y < cl->height; y++)
		for (x = 0; x < cl->width; x++) {
			a = vt_pixel(cl, x, y);
			b = (unsigned)XGetPixel(img, x, y) & 0xffffff;
			for (i = 0; i < 24; i += 8)
				err += abs((int)(a >> i & 0xff) -
				    (int)(b >> i & 0xff));
		}
	if (getenv("VT_DEBUG") != NULL)
		for (i = 0; i < 8; i++)
			fprintf(stderr, "px %d,%d got %06x want %06x\n",
			    100 + i * 37, 200 + i * 3, vt_pixel(cl, 100 + i * 37,
			    200 + i * 3), (unsigned)XGetPixel(img, 100 + i * 37,
			    200 + i * 3) & 0xffffff);
	XDestroyImage(img);
	printf("big rects=%d full_width=%d mae=%lld\n", V.rects, V.full_width,
	    err * 100 / ((long long)cl->width * cl->height * 3));
	return 0;
}

static int
vt_corners_shown(rfbClient *cl)
{
	return vt_close(vt_pixel(cl, 20, 20), 0xff0000, 40) &&
	    vt_close(vt_pixel(cl, cl->width - 20, cl->height - 20), 0x0000ff,
	    40);
}

/* The client shows the screen (within JPEG error, on a grid): nothing
 * of an earlier phase is still on its way. */
static int
vt_in_sync(rfbClient *cl)
{
	XImage	*img;
	int	 x, y, ok = 1;

	img = XGetImage(V.dpy, DefaultRootWindow(V.dpy), 0, 0,
	    (unsigned)cl->width, (unsigned)cl->height, AllPlanes, ZPixmap);
	for (y = 2; y < cl->height && ok; y += 16)
		for (x = 2; x < cl->width && ok; x += 16)
			ok = vt_close(vt_pixel(cl, x, y),
			    (unsigned)XGetPixel(img, x, y) & 0xffffff, 100);
	XDestroyImage(img);
	return ok;
}

static int
vt_corners(rfbClient *cl)
{
	int	r;

	if ((r = vt_until(cl, vt_in_sync)) != 0)
		return r;
	vt_reset();
	XSetForeground(V.dpy, V.gc, 0xff0000);
	XFillRectangle(V.dpy, V.win, V.gc, 0, 0, 40, 40);
	XSetForeground(V.dpy, V.gc, 0x0000ff);
	XFillRectangle(V.dpy, V.win, V.gc, cl->width - 40, cl->height - 40,
	    40, 40);
	XSync(V.dpy, False);
	if ((r = vt_until(cl, vt_corners_shown)) != 0)
		return r;
	printf("corners area=%ld center=%d\n", V.area, V.centre);
	return 0;
}

/* Pixels of the client's picture of the text area that are wrong: a
 * channel off by more than half its range (black for white: a glyph
 * misplaced), where JPEG's error around glyphs stays well below. */
static long
vt_text_bad(rfbClient *cl)
{
	XImage	*img;
	long	 bad = 0;
	int	 x, y;

	img = XGetImage(V.dpy, DefaultRootWindow(V.dpy), VT_TX, VT_TY, VT_TW,
	    VT_TH, AllPlanes, ZPixmap);
	for (y = 0; y < VT_TH; y++)
		for (x = 0; x < VT_TW; x++)
			bad += !vt_close(vt_pixel(cl, VT_TX + x, VT_TY + y),
			    (unsigned)XGetPixel(img, x, y) & 0xffffff, 128);
	XDestroyImage(img);
	return bad;
}

static int
vt_text_shown(rfbClient *cl)
{
	return vt_text_bad(cl) == 0;
}

/* Line n of the text: its number and words of a length it sets. */
static void
vt_text_line(int row, int n)
{
	char	buf[96];
	int	len;

	len = snprintf(buf, sizeof buf, "%05d ", n);
	while (len < 20 + n * 7 % 50 && len < (int)sizeof buf - 8)
		len += snprintf(buf + len, sizeof buf - (size_t)len, "%s ",
		    n % 3 == 0 ? "scroll" : n % 3 == 1 ? "copy" : "rect");
	XSetForeground(V.dpy, V.gc, 0xffffff);
	XFillRectangle(V.dpy, V.win, V.gc, VT_TX, VT_TY + row * VT_LINE,
	    VT_TW, VT_LINE);
	XSetForeground(V.dpy, V.gc, 0x000000);
	XDrawString(V.dpy, V.win, V.gc, VT_TX + 4,
	    VT_TY + row * VT_LINE + VT_LINE - 3, buf, len);
}

static int
vt_scroll(rfbClient *cl)
{
	int	i, r;

	for (i = 0; i < 24; i++)
		vt_text_line(i, i);
	XSync(V.dpy, False);
	if ((r = vt_until(cl, vt_text_shown)) != 0)
		return r;
	vt_reset();
	for (i = 0; i < VT_STEPS; i++) {
		/* What a terminal does for a new line at the bottom. */
		XCopyArea(V.dpy, V.win, V.win, V.gc, VT_TX, VT_TY + VT_LINE,
		    VT_TW, VT_TH - VT_LINE, VT_TX, VT_TY);
		vt_text_line(23, 24 + i);
		XSync(V.dpy, False);
		if ((r = vt_until(cl, vt_in_sync)) != 0)
			return r;
	}
	if ((r = vt_until(cl, vt_text_shown)) != 0)
		return r;
	printf("scroll copies=%d copy_area=%ld pixel_area=%ld bad=%ld\n",
	    V.copies, V.copy_area, V.area - V.copy_area, vt_text_bad(cl));
	return 0;
}

/* Frame k of the churn picture at (x, y): no row of it is another row of
 * this frame or of the one before. */
static unsigned
vt_churn_px(int x, int y, int k)
{
	return (unsigned)((x * 5 + k * 37) & 0xff) << 16 |
	    (unsigned)((y * 3 + k * 11) & 0xff) << 8 |
	    (unsigned)(((x ^ y) + k * 29) & 0xff);
}

static int
vt_churn(rfbClient *cl)
{
	XImage	*img;
	int	 k, x, y, r;

	img = XCreateImage(V.dpy, DefaultVisual(V.dpy, 0), 24, ZPixmap, 0,
	    malloc((size_t)VT_TW * VT_TH * 4), VT_TW, VT_TH, 32, 0);
	for (k = 0; k < VT_CHURN; k++) {
		for (y = 0; y < VT_TH; y++)
			for (x = 0; x < VT_TW; x++)
				XPutPixel(img, x, y, vt_churn_px(x, y, k));
		XPutImage(V.dpy, V.win, V.gc, img, 0, 0, VT_TX, VT_TY, VT_TW,
		    VT_TH);
		XSync(V.dpy, False);
		if ((r = vt_until(cl, vt_in_sync)) != 0) {
			XDestroyImage(img);
			return r;
		}
	}
	XDestroyImage(img);
	printf("churn frames=%d\n", k);
	return 0;
}

int
main(int argc, char **argv)
{
	XSetWindowAttributes	 wa;
	rfbClient		*cl;
	char			 host[256], *colon;
	int			 i, r, copyrect = 1;

	if (argc > 1 && strcmp(argv[1], "-nocopyrect") == 0) {
		copyrect = 0;
		argc--;
		argv++;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: vnctight [-nocopyrect] HOST:PORT "
		    "big|corners|scroll|churn...\n");
		return 2;
	}
	snprintf(host, sizeof host, "%s", argv[1]);
	if ((colon = strrchr(host, ':')) == NULL)
		return 2;
	*colon = '\0';
	if ((V.dpy = XOpenDisplay(NULL)) == NULL) {
		fprintf(stderr, "vnctight: no display\n");
		return 2;
	}
	rfbClientLog = vt_quiet;
	rfbClientErr = vt_quiet;
	cl = rfbGetClient(8, 3, 4);	/* RGBX in memory */
	free(cl->serverHost);
	cl->serverHost = strdup(host);
	cl->serverPort = atoi(colon + 1);
	cl->GotFrameBufferUpdate = vt_got;
	V.copy = cl->GotCopyRect;
	cl->GotCopyRect = vt_copy;
	cl->appData.encodingsString = copyrect ? "tight copyrect" : "tight";
	cl->appData.enableJPEG = TRUE;
	cl->appData.qualityLevel = 6;
	cl->appData.compressLevel = 2;
	cl->appData.useRemoteCursor = TRUE;
	if (!rfbInitClient(cl, NULL, NULL)) {
		printf("connect-failed\n");
		return 3;
	}
	if ((r = vt_until(cl, vt_whole)) != 0) {
		printf("timeout first frame\n");
		return r;
	}
	wa.override_redirect = True;
	V.win = XCreateWindow(V.dpy, DefaultRootWindow(V.dpy), 0, 0,
	    (unsigned)cl->width, (unsigned)cl->height, 0, CopyFromParent,
	    InputOutput, CopyFromParent, CWOverrideRedirect, &wa);
	V.gc = XCreateGC(V.dpy, V.win, 0, NULL);
	XMapRaised(V.dpy, V.win);
	XSetForeground(V.dpy, V.gc, 0x808080);
	XFillRectangle(V.dpy, V.win, V.gc, 0, 0, (unsigned)cl->width,
	    (unsigned)cl->height);
	XSync(V.dpy, False);
	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "big") == 0)
			r = vt_big(cl);
		else if (strcmp(argv[i], "corners") == 0)
			r = vt_corners(cl);
		else if (strcmp(argv[i], "scroll") == 0)
			r = vt_scroll(cl);
		else if (strcmp(argv[i], "churn") == 0)
			r = vt_churn(cl);
		else
			return 2;
		if (r != 0) {
			printf("timeout %s\n", argv[i]);
			return r;
		}
		fflush(stdout);
	}
	free(cl->frameBuffer);
	cl->frameBuffer = NULL;
	rfbClientCleanup(cl);
	XCloseDisplay(V.dpy);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * rfb-tight-latency: the viewer and the painter behind
 * bench/screen-tight.sh, in one process (one clock).  A libvncclient
 * viewer asking noVNC's encodings (Tight, JPEG quality 6, compression 2,
 * CopyRect, cursor shapes) connects over TCP to HOST:PORT (guestd's debug
 * port, x11vnc, or a bridge to a websocket); the painter, FPS times a
 * second for S seconds, changes the screen as MODE says:
 *
 *   0  full     the whole 1280x800 screen, a busy picture moving
 *   1  window   a 384x288 window of the same
 *   2  scroll   text over the screen scrolled up a line (XCopyArea, as a
 *               terminal does) and a new last line written
 *   3  corners  a 48x48 square at each of two opposite corners
 *   4  floor    no viewer: the frames of mode 0, FPS x S of them, each
 *               compressed by TurboJPEG as libvncserver's Tight does for
 *               this request (quality 79, 4:4:4, fast DCT), the whole
 *               frame at once on this thread; prints
 *               "floor frames=N jpeg_median_us=N jpeg_p95_us=N bytes=N"
 *               (CPU time of the compression alone: what no server
 *               sending these pictures at this quality can go below)
 *
 * and puts the frame's number (mod 32) in the red of a flat 48x48 square
 * (the centre of the picture, beside the text, or the top-left corner).
 * After each update the viewer reads the square to know which paint
 * arrived.  Prints
 *
 *   paint-start
 *   paint-end paints=N seen=N lat_median_us=N lat_p95_us=N bytes=N
 *
 * (seen: paints whose number reached the viewer; latency from the paint
 * being on the X server, XSync, to the end of the update carrying it;
 * bytes: RFB bytes received meanwhile, from TCP_INFO).
 *
 *   rfb-tight-latency HOST:PORT FPS S [MODE]
 * Uses DISPLAY and XAUTHORITY.  Built by `make benchmarks`; not installed.
 */
#include "autoconf.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/tcp.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <rfb/rfbclient.h>
#include <turbojpeg.h>

#define W	1280
#define H	800
#define SQ	24	/* half the marker square */
#define LINE	13	/* text line height */
#define TEXT_W	1152	/* the scrolled text's width */
#define MAXP	100000

static struct {
	int		 seen, cur;
	uint64_t	 tp[MAXP];
	int		 lat[MAXP], nlat;
	int		 mx, my;
} B = { .seen = -1, .cur = -1 };

/* Microseconds on clock c: CLOCK_MONOTONIC, or a thread's CPU time. */
static uint64_t
clock_us(clockid_t c)
{
	struct timespec	t;

	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_nsec / 1000;
}

static uint64_t
us(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

static uint64_t
rx_bytes(int fd)
{
	struct tcp_info	ti;
	socklen_t	len = sizeof ti;

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
		return 0;
	return ti.tcpi_bytes_received;
}

/* An update ended: which paint does the marker show? */
static void
fin(rfbClient *cl)
{
	const uint8_t	*p = cl->frameBuffer +
	    ((size_t)B.my * (size_t)cl->width + (size_t)B.mx) * 4;
	int		 v = (p[0] + 4) / 8 % 32, k;

	for (k = B.cur; k >= 0 && k > B.cur - 32; k--)
		if (k % 32 == v && k > B.seen) {
			B.seen = k;
			B.lat[B.nlat++] = (int)(us() - B.tp[k]);
			break;
		}
}

static int
cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static void
quiet(const char *f, ...)
{
	(void)f;
}

static unsigned
busy(int x, int y, int n)
{
	return (unsigned)(((x + n * 8) / 64 * 40) % 256) << 16 |
	    (unsigned)(((y + n * 4) / 48 * 50) % 256) << 8 |
	    (unsigned)(((x + y + n * 16) / 8) % 256);
}

/* Frame n of the busy picture, marker square included, into img. */
static void
busy_frame(XImage *img, int ww, int wh, int n)
{
	unsigned	v;
	int		x, y;

	for (y = 0; y < wh; y++)
		for (x = 0; x < ww; x++) {
			v = busy(x, y, n);
			if (abs(x - B.mx) < SQ && abs(y - B.my) < SQ)
				v = (unsigned)((n % 32) * 8) << 16 | 0x8080;
			XPutPixel(img, x, y, v);
		}
}

static uint64_t
cpu_us(void)
{
	return clock_us(CLOCK_THREAD_CPUTIME_ID);
}

/*
 * Mode 4: the JPEG of each frame alone, as libvncserver's Tight makes it
 * for quality level 6 (its tight2turbo tables: quality 79, 4:4:4; its
 * TurboJPEG flags: the fast DCT), into a buffer made once.
 */
static int
floor_run(int frames)
{
	XImage		 img;
	tjhandle	 tj;
	unsigned char	*out;
	unsigned long	 len, cap = tjBufSize(W, H, TJSAMP_444), bytes = 0;
	uint64_t	 t;
	int		 n;

	memset(&img, 0, sizeof img);
	img.width = W;
	img.height = H;
	img.format = ZPixmap;
	img.byte_order = LSBFirst;
	img.bitmap_unit = img.bitmap_pad = 32;
	img.depth = 24;
	img.bits_per_pixel = 32;
	img.bytes_per_line = W * 4;
	img.red_mask = 0xff0000;
	img.green_mask = 0xff00;
	img.blue_mask = 0xff;
	if ((img.data = malloc((size_t)W * H * 4)) == NULL ||
	    (out = tjAlloc((int)cap)) == NULL || !XInitImage(&img) ||
	    (tj = tjInitCompress()) == NULL)
		return 3;
	B.mx = W / 2;
	B.my = H / 2;
	for (n = 0; n < frames && n < MAXP; n++) {
		busy_frame(&img, W, H, n);
		len = cap;
		t = cpu_us();
		if (tjCompress2(tj, (unsigned char *)img.data, W, W * 4, H,
		    TJPF_BGRX, &out, &len, TJSAMP_444, 79,
		    TJFLAG_FASTDCT | TJFLAG_NOREALLOC) != 0)
			return 3;
		B.lat[B.nlat++] = (int)(cpu_us() - t);
		bytes += len;
	}
	qsort(B.lat, (size_t)B.nlat, sizeof B.lat[0], cmp);
	printf("floor frames=%d jpeg_median_us=%d jpeg_p95_us=%d bytes=%lu\n",
	    B.nlat, B.nlat ? B.lat[B.nlat / 2] : 0,
	    B.nlat ? B.lat[B.nlat * 95 / 100] : 0, bytes / (unsigned long)
	    (B.nlat ? B.nlat : 1));
	tjDestroy(tj);
	tjFree(out);
	free(img.data);
	return 0;
}

static void
marker(Display *d, Window win, GC gc, int n)
{
	XSetForeground(d, gc, (unsigned long)((n % 32) * 8) << 16 | 0x8080);
	XFillRectangle(d, win, gc, B.mx - SQ, B.my - SQ, 2 * SQ, 2 * SQ);
}

static void
text_line(Display *d, Window win, GC gc, int row, int n)
{
	char	buf[160];
	int	len;

	len = snprintf(buf, sizeof buf, "%06d ", n);
	while (len < 40 + n * 37 % 100 && len < (int)sizeof buf - 12)
		len += snprintf(buf + len, sizeof buf - (size_t)len, "%s ",
		    n % 3 == 0 ? "scrolling" : n % 3 == 1 ? "text" : "lines");
	XSetForeground(d, gc, 0xffffff);
	XFillRectangle(d, win, gc, 0, row * LINE, TEXT_W, LINE);
	XSetForeground(d, gc, 0x000000);
	XDrawString(d, win, gc, 4, row * LINE + LINE - 3, buf, len);
}

int
main(int argc, char **argv)
{
	XSetWindowAttributes	 wa;
	Display			*d;
	rfbClient		*cl;
	XImage			*img;
	Window			 win;
	GC			 gc;
	char			 host[64], *c;
	uint64_t		 t0, next, period, b0;
	int			 fps, secs, mode, ww, wh, y, n = 0, r;
	int			 rows = H / LINE;

	if (argc < 4) {
		fprintf(stderr, "usage: rfb-tight-latency HOST:PORT FPS S "
		    "[MODE]\n");
		return 2;
	}
	snprintf(host, sizeof host, "%s", argv[1]);
	if ((c = strrchr(host, ':')) == NULL)
		return 2;
	*c = '\0';
	fps = atoi(argv[2]);
	secs = atoi(argv[3]);
	mode = argc > 4 ? atoi(argv[4]) : 0;
	if (mode == 4)
		return floor_run(fps * secs);
	if ((d = XOpenDisplay(NULL)) == NULL)
		return 2;
	rfbClientLog = quiet;
	rfbClientErr = quiet;
	cl = rfbGetClient(8, 3, 4);
	free(cl->serverHost);
	cl->serverHost = strdup(host);
	cl->serverPort = atoi(c + 1);
	cl->FinishedFrameBufferUpdate = fin;
	cl->appData.encodingsString = "tight copyrect";
	cl->appData.enableJPEG = TRUE;
	cl->appData.qualityLevel = 6;
	cl->appData.compressLevel = 2;
	cl->appData.useRemoteCursor = TRUE;
	if (!rfbInitClient(cl, NULL, NULL)) {
		printf("connect-failed\n");
		return 3;
	}
	ww = mode == 1 ? 384 : W;
	wh = mode == 1 ? 288 : H;
	switch (mode) {
	case 2:		/* beside the text */
		B.mx = TEXT_W + (W - TEXT_W) / 2;
		B.my = H / 2;
		break;
	case 3:		/* the top-left corner */
		B.mx = B.my = SQ;
		break;
	default:
		B.mx = ww / 2;
		B.my = wh / 2;
	}
	wa.override_redirect = True;
	win = XCreateWindow(d, DefaultRootWindow(d), 0, 0, (unsigned)ww,
	    (unsigned)wh, 0, CopyFromParent, InputOutput, CopyFromParent,
	    CWOverrideRedirect, &wa);
	gc = XCreateGC(d, win, 0, NULL);
	XMapRaised(d, win);
	XSetForeground(d, gc, 0x808080);
	XFillRectangle(d, win, gc, 0, 0, (unsigned)ww, (unsigned)wh);
	if (mode == 2)
		for (y = 0; y < rows; y++)
			text_line(d, win, gc, y, y);
	XSync(d, False);
	img = XCreateImage(d, DefaultVisual(d, 0), 24, ZPixmap, 0,
	    malloc((size_t)ww * (size_t)wh * 4), (unsigned)ww, (unsigned)wh,
	    32, 0);
	/* Let the first picture through before measuring. */
	t0 = us();
	while (us() - t0 < 500000) {
		r = WaitForMessage(cl, 10000);
		if (r < 0 || (r > 0 && !HandleRFBServerMessage(cl)))
			return 3;
	}
	t0 = next = us();
	period = 1000000 / (uint64_t)fps;
	b0 = rx_bytes(cl->sock);
	printf("paint-start\n");
	fflush(stdout);
	while (us() - t0 < (uint64_t)secs * 1000000) {
		if (us() >= next && B.cur + 1 < MAXP) {
			B.cur++;
			switch (mode) {
			case 2:
				XCopyArea(d, win, win, gc, 0, LINE, TEXT_W,
				    (unsigned)((rows - 1) * LINE), 0, 0);
				text_line(d, win, gc, rows - 1, rows + B.cur);
				marker(d, win, gc, B.cur);
				break;
			case 3:
				XSetForeground(d, gc, (unsigned long)
				    (B.cur * 40 % 256) << 8 | 0x40);
				XFillRectangle(d, win, gc, W - 2 * SQ,
				    H - 2 * SQ, 2 * SQ, 2 * SQ);
				marker(d, win, gc, B.cur);
				break;
			default:
				busy_frame(img, ww, wh, B.cur);
				XPutImage(d, win, gc, img, 0, 0, 0, 0,
				    (unsigned)ww, (unsigned)wh);
			}
			XSync(d, False);
			B.tp[B.cur] = us();
			next += period;
			n++;
		}
		r = WaitForMessage(cl, 1000);
		if (r < 0 || (r > 0 && !HandleRFBServerMessage(cl)))
			break;
	}
	qsort(B.lat, (size_t)B.nlat, sizeof B.lat[0], cmp);
	printf("paint-end paints=%d seen=%d lat_median_us=%d lat_p95_us=%d "
	    "bytes=%llu\n", n, B.nlat, B.nlat ? B.lat[B.nlat / 2] : 0,
	    B.nlat ? B.lat[B.nlat * 95 / 100] : 0,
	    (unsigned long long)(rx_bytes(cl->sock) - b0));
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * rfb-latency: the viewer and the painter behind bench/screen-gateway.sh.
 * One process paints and watches, so paint and arrival times share one
 * clock.  It connects to an RFB-over-websocket URL (guestd's gateway or
 * websockify in front of x11vnc), speaks RFB 3.8 with security None and
 * Raw 32-bit pixels, keeps one incremental update request outstanding, and
 * for each phase prints one line:
 *
 *   connect  connect_us=N first_byte_us=N upgraded_first_byte_us=N
 *            (connect started -> upgraded, -> first RFB byte, and
 *            upgraded -> first RFB byte)
 *   idle S   "idle-start", then S seconds of nothing painted, then
 *            "idle-end updates=N bytes=N" (what the server sent meanwhile)
 *   paint FPS S
 *            "paint-start", then S seconds of painting the region (its
 *            own override-redirect window) a new solid colour FPS times a
 *            second, then "paint-end paints=N seen=N updates=N bytes=N
 *            lat_median_us=N lat_p90_us=N": seen counts paints whose colour
 *            reached the viewer, latency runs from the paint being on the
 *            X server (XSync) to the end of the update carrying it.
 *
 *   rfb-latency --url ws://HOST:PORT/PATH --region X,Y,W,H
 *       [--idle S] [--paint FPS,S]...   (phases run in the order given)
 *
 * Uses DISPLAY and XAUTHORITY for painting.  Built by `make benchmarks`;
 * not installed.
 */
#include "autoconf.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <libwebsockets.h>

#include "rfbwire.h"

#define RL_TIMEOUT_US	(10 * 1000000ULL)
#define RL_MAX_PAINTS	100000
#define RL_MAX_PHASES	8

static struct {
	struct lws_context	*ctx;
	struct lws		*wsi;
	int			 open, failed, closed;
	uint8_t			*rx;
	size_t			 rxlen, rxoff, rxcap;
	uint8_t			 tx[LWS_PRE + 64];
	size_t			 txlen;
	uint64_t		 t_connect, t_open, t_first;
	uint64_t		 bytes;
	int			 w, h;

	/* painting */
	Display			*dpy;
	Window			 win;
	GC			 gc;
	int			 rx_, ry, rw, rh;
	uint64_t		*t_paint;	/* by sequence number */
	unsigned		 npaint, seen_max;
	uint64_t		 next_paint, period;
	int			 painting;
	lws_sorted_usec_list_t	 sul;
} R;

static uint64_t
rl_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void
rl_die(const char *why)
{
	printf("error %s\n", why);
	exit(1);
}

static int
rl_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	(void)user;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		R.failed = 1;
		R.wsi = NULL;
		break;
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		R.open = 1;
		R.t_open = rl_us();
		break;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		if (R.t_first == 0)
			R.t_first = rl_us();
		R.bytes += len;
		if (R.rxlen + len > R.rxcap) {
			if (R.rxoff > 0) {
				memmove(R.rx, R.rx + R.rxoff, R.rxlen - R.rxoff);
				R.rxlen -= R.rxoff;
				R.rxoff = 0;
			}
			if (R.rxlen + len > R.rxcap) {
				R.rxcap = (R.rxlen + len) * 2;
				if ((R.rx = realloc(R.rx, R.rxcap)) == NULL)
					rl_die("memory");
			}
		}
		memcpy(R.rx + R.rxlen, in, len);
		R.rxlen += len;
		break;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		if (R.txlen > 0) {
			if (lws_write(wsi, R.tx + LWS_PRE, R.txlen,
			    LWS_WRITE_BINARY) < (int)R.txlen)
				return -1;
			R.txlen = 0;
		}
		break;
	case LWS_CALLBACK_CLIENT_CLOSED:
		R.closed = 1;
		R.wsi = NULL;
		break;
	default:
		break;
	}
	return 0;
}

static const struct lws_protocols rl_protocols[] = {
	{ "rfb-latency", rl_cb, 0, 1 << 20, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

/* ---- painting ------------------------------------------------------------ */

/* Colour of paint n: distinct for every n below 2^16, never black. */
static unsigned long
rl_colour(unsigned n)
{
	return ((unsigned long)(n & 0xffff) << 8) | 0x5a;
}

static void
rl_paint(void)
{
	XSetForeground(R.dpy, R.gc, rl_colour(R.npaint));
	XFillRectangle(R.dpy, R.win, R.gc, 0, 0, (unsigned)R.rw,
	    (unsigned)R.rh);
	XSync(R.dpy, False);
	R.t_paint[R.npaint++] = rl_us();
}

static void
rl_x_open(void)
{
	XSetWindowAttributes	a;

	if ((R.dpy = XOpenDisplay(NULL)) == NULL)
		rl_die("cannot open display");
	memset(&a, 0, sizeof a);
	a.override_redirect = True;
	a.background_pixel = 0x5a;
	R.win = XCreateWindow(R.dpy, DefaultRootWindow(R.dpy), R.rx_, R.ry,
	    (unsigned)R.rw, (unsigned)R.rh, 0, CopyFromParent, InputOutput,
	    CopyFromParent, CWOverrideRedirect | CWBackPixel, &a);
	R.gc = XCreateGC(R.dpy, R.win, 0, NULL);
	XMapRaised(R.dpy, R.win);
	XSync(R.dpy, False);
	if ((R.t_paint = calloc(RL_MAX_PAINTS, sizeof *R.t_paint)) == NULL)
		rl_die("memory");
}

/* ---- the wire ------------------------------------------------------------ */

/*
 * The painter's clock, on lws's own timer list: paints when a paint is
 * due and always stays scheduled (a timer that has fired leaves lws's
 * poll without a timeout), every 100 ms when not painting so deadlines
 * are noticed.
 */
static void
rl_tick(lws_sorted_usec_list_t *sul)
{
	uint64_t	now = rl_us();

	(void)sul;
	if (R.painting && now >= R.next_paint && R.npaint < RL_MAX_PAINTS) {
		rl_paint();
		R.next_paint += R.period;
		now = rl_us();
		if (R.next_paint < now)
			R.next_paint = now + R.period;
	}
	lws_sul_schedule(R.ctx, 0, &R.sul, rl_tick, R.painting ?
	    (lws_usec_t)(R.next_paint > now ? R.next_paint - now : 1) :
	    (lws_usec_t)100000);
}

static void
rl_service(void)
{
	lws_service(R.ctx, 0);
}

static void
rl_send(const void *p, size_t n)
{
	uint64_t	end = rl_us() + RL_TIMEOUT_US;

	if (R.wsi == NULL)
		rl_die("closed");
	memcpy(R.tx + LWS_PRE, p, n);
	R.txlen = n;
	lws_callback_on_writable(R.wsi);
	while (R.txlen > 0 && !R.closed && rl_us() < end)
		rl_service();
	if (R.txlen > 0)
		rl_die(R.closed ? "closed" : "send-timeout");
}

/* Wait for n unread bytes, or until the deadline (then NULL). */
static const uint8_t *
rl_need_until(size_t n, uint64_t deadline)
{
	const uint8_t	*p;

	while (R.rxlen - R.rxoff < n && !R.closed && rl_us() < deadline)
		rl_service();
	if (R.rxlen - R.rxoff < n) {
		if (R.closed)
			rl_die("closed");
		return NULL;
	}
	p = R.rx + R.rxoff;
	R.rxoff += n;
	return p;
}

static const uint8_t *
rl_need(size_t n)
{
	const uint8_t	*p = rl_need_until(n, rl_us() + RL_TIMEOUT_US);

	if (p == NULL)
		rl_die("timeout");
	return p;
}

static void
rl_request(int inc)
{
	uint8_t	m[10];

	rfbwire_update_request(m, inc, R.w, R.h);
	rl_send(m, sizeof m);
}

static void
rl_handshake(void)
{
	const uint8_t	*p;
	static const int32_t encs[] = { RFBWIRE_ENC_RAW,
	    RFBWIRE_ENC_DESKTOP_SIZE };
	uint8_t		 m[20], enc[4 + 8 * 4];
	unsigned	 n, i;

	p = rl_need(12);
	if (memcmp(p, "RFB 003.", 8) != 0)
		rl_die("bad-version");
	rl_send("RFB 003.008\n", 12);
	n = *rl_need(1);
	p = rl_need(n);
	for (i = 0; i < n && p[i] != 1; i++)
		;
	if (n == 0 || i == n)
		rl_die("no-security-none");
	m[0] = 1;
	rl_send(m, 1);
	if (rfbwire_be32(rl_need(4)) != 0)
		rl_die("security-failed");
	m[0] = 1;	/* shared */
	rl_send(m, 1);
	p = rl_need(24);
	R.w = (int)rfbwire_be16(p);
	R.h = (int)rfbwire_be16(p + 2);
	(void)rl_need(rfbwire_be32(p + 20));
	rfbwire_pixel_format(m);
	rl_send(m, 20);
	rl_send(enc, rfbwire_encodings(enc, encs, 2));
}

/*
 * Read one server message by the deadline: 1 for a FramebufferUpdate
 * (*seq: the paint whose colour is at the region's centre, or -1), 0 for
 * another message, -1 when nothing came.
 */
static int
rl_message(uint64_t deadline, long *seq)
{
	const uint8_t	*p;
	unsigned	 n, i, row, x, y, w, h, cx, cy;
	uint32_t	 px;

	*seq = -1;
	if ((p = rl_need_until(1, deadline)) == NULL)
		return -1;
	switch (p[0]) {
	case 0:
		break;
	case 2:
		return 0;
	case 3:
		p = rl_need(7);
		(void)rl_need(rfbwire_be32(p + 3));
		return 0;
	default:
		rl_die("unexpected-message");
	}
	p = rl_need(3);
	n = rfbwire_be16(p + 1);
	cx = (unsigned)(R.rx_ + R.rw / 2);
	cy = (unsigned)(R.ry + R.rh / 2);
	for (i = 0; i < n; i++) {
		p = rl_need(12);
		x = rfbwire_be16(p);
		y = rfbwire_be16(p + 2);
		w = rfbwire_be16(p + 4);
		h = rfbwire_be16(p + 6);
		if ((int32_t)rfbwire_be32(p + 8) == RFBWIRE_ENC_DESKTOP_SIZE) {
			R.w = (int)w;
			R.h = (int)h;
			continue;
		}
		if (rfbwire_be32(p + 8) != 0)
			rl_die("unexpected-encoding");
		for (row = 0; row < h; row++) {
			p = rl_need((size_t)w * 4);
			if (y + row != cy || cx < x || cx >= x + w)
				continue;
			p += (size_t)(cx - x) * 4;
			px = (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
			if ((px & 0xff) == 0x5a)
				*seq = (long)(px >> 8);
		}
	}
	return 1;
}

static int
rl_cmp(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * One phase: paint at fps (0: none) for seconds, keeping one incremental
 * request outstanding; report what arrived.
 */
static void
rl_phase(unsigned fps, unsigned seconds)
{
	uint64_t	 end, bytes0 = R.bytes, t, *lat;
	unsigned	 updates = 0, nlat = 0, first = R.npaint;
	long		 seq, base;
	int		 m;

	lat = calloc(RL_MAX_PAINTS, sizeof *lat);
	if (lat == NULL)
		rl_die("memory");
	printf("%s\n", fps > 0 ? "paint-start" : "idle-start");
	fflush(stdout);
	R.painting = fps > 0;
	R.period = fps > 0 ? 1000000 / fps : 0;
	R.next_paint = rl_us();
	rl_tick(&R.sul);
	end = rl_us() + (uint64_t)seconds * 1000000;
	while (rl_us() < end) {
		m = rl_message(end, &seq);
		if (m < 0)
			break;
		if (m == 0)
			continue;
		updates++;
		t = rl_us();
		rl_request(1);
		/* The colour carries the low 16 bits of the paint number. */
		if (seq >= 0 && R.npaint > 0) {
			base = (long)(R.npaint - 1) & ~0xffffL;
			if (base + seq > (long)R.npaint - 1)
				base -= 0x10000;
			seq += base;
			if (seq >= (long)first && (unsigned)seq + 1 > R.seen_max) {
				R.seen_max = (unsigned)seq + 1;
				lat[nlat++] = t - R.t_paint[seq];
			}
		}
	}
	R.painting = 0;
	if (fps == 0) {
		printf("idle-end updates=%u bytes=%llu\n", updates,
		    (unsigned long long)(R.bytes - bytes0));
	} else {
		qsort(lat, nlat, sizeof *lat, rl_cmp);
		printf("paint-end paints=%u seen=%u updates=%u bytes=%llu "
		    "lat_median_us=%llu lat_p90_us=%llu\n", R.npaint - first,
		    nlat, updates, (unsigned long long)(R.bytes - bytes0),
		    (unsigned long long)(nlat ? lat[nlat / 2] : 0),
		    (unsigned long long)(nlat ? lat[nlat * 9 / 10] : 0));
	}
	fflush(stdout);
	free(lat);
}

static void
rl_connect(const char *url)
{
	struct lws_context_creation_info	info;
	struct lws_client_connect_info		ci;
	char	host[256], hosthdr[300], path[1024], *slash, *colon;
	int	port;

	if (strncmp(url, "ws://", 5) != 0)
		rl_die("url");
	snprintf(host, sizeof host, "%s", url + 5);
	snprintf(path, sizeof path, "/");
	if ((slash = strchr(host, '/')) != NULL) {
		snprintf(path, sizeof path, "%s", strchr(url + 5, '/'));
		*slash = '\0';
	}
	if ((colon = strrchr(host, ':')) == NULL)
		rl_die("url");
	*colon = '\0';
	port = atoi(colon + 1);
	snprintf(hosthdr, sizeof hosthdr, "%s:%d", host, port);
	lws_set_log_level(0, NULL);
	memset(&info, 0, sizeof info);
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = rl_protocols;
	info.gid = -1;
	info.uid = -1;
	if ((R.ctx = lws_create_context(&info)) == NULL)
		rl_die("lws");
	memset(&ci, 0, sizeof ci);
	ci.context = R.ctx;
	ci.address = host;
	ci.port = port;
	ci.path = path;
	ci.host = hosthdr;
	ci.origin = hosthdr;
	ci.protocol = "binary";
	ci.local_protocol_name = "rfb-latency";
	ci.pwsi = &R.wsi;
	rl_tick(&R.sul);
	R.t_connect = rl_us();
	if (lws_client_connect_via_info(&ci) == NULL)
		rl_die("connect");
	while (R.t_first == 0 && !R.failed && !R.closed &&
	    rl_us() < R.t_connect + RL_TIMEOUT_US)
		lws_service(R.ctx, 0);
	if (R.t_first == 0)
		rl_die("connect-failed");
	printf("connect connect_us=%llu first_byte_us=%llu "
	    "upgraded_first_byte_us=%llu\n",
	    (unsigned long long)(R.t_open - R.t_connect),
	    (unsigned long long)(R.t_first - R.t_connect),
	    (unsigned long long)(R.t_first - R.t_open));
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "region", required_argument, NULL, 'r' },
		{ "idle", required_argument, NULL, 'i' },
		{ "paint", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned	 fps[RL_MAX_PHASES], secs[RL_MAX_PHASES];
	const char	*url = NULL;
	int		 ch, nph = 0, i;
	long		 seq;

	R.rw = 320;
	R.rh = 240;
	R.rx_ = 100;
	R.ry = 100;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (nph == RL_MAX_PHASES && (ch == 'i' || ch == 'p'))
			rl_die("too many phases");
		switch (ch) {
		case 'u':
			url = optarg;
			break;
		case 'r':
			if (sscanf(optarg, "%d,%d,%d,%d", &R.rx_, &R.ry, &R.rw,
			    &R.rh) != 4 || R.rw <= 0 || R.rh <= 0)
				rl_die("region");
			break;
		case 'i':
			fps[nph] = 0;
			secs[nph++] = (unsigned)atoi(optarg);
			break;
		case 'p':
			if (sscanf(optarg, "%u,%u", &fps[nph], &secs[nph]) != 2 ||
			    fps[nph] == 0 || fps[nph] > 1000)
				rl_die("paint");
			nph++;
			break;
		default:
			return 2;
		}
	}
	if (url == NULL) {
		fprintf(stderr, "usage: rfb-latency --url ws://HOST:PORT/PATH "
		    "[--region X,Y,W,H] [--idle S] [--paint FPS,S]...\n");
		return 2;
	}
	rl_x_open();
	rl_connect(url);
	rl_handshake();
	/* The whole screen once, then incremental requests only. */
	rl_request(0);
	while (rl_message(rl_us() + RL_TIMEOUT_US, &seq) == 0)
		;
	rl_request(1);
	for (i = 0; i < nph; i++)
		rl_phase(fps[i], secs[i]);
	lws_context_destroy(R.ctx);
	XCloseDisplay(R.dpy);
	return 0;
}

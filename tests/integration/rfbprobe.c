/* SPDX-License-Identifier: MIT */
/*
 * rfbprobe: a small RFB client over a websocket, for the screen gateway
 * tests.  It speaks RFB 3.8 with security None, asks for 32-bit pixels
 * (0x00RRGGBB little-endian) in Raw, and follows a script on stdin:
 *
 *   handshake [cursor] version, security, init, pixel format, encodings
 *                      (Raw, DesktopSize, and RichCursor with "cursor");
 *                      prints "init W H first_byte_us=N"; updates then
 *                      print "cursor W H HOTX HOTY" for each shape
 *   update [inc]       request (full, or incremental) and read one update;
 *                      prints "update RECTS"
 *   request [inc]      only send the request
 *   read-update        only read one update; prints "update RECTS"
 *   pixel X Y RRGGBB   compare one pixel; "ok", else "pixel X Y got C"
 *                      and exit 5
 *   pointer X Y MASK   send a PointerEvent
 *   key KEYSYM 1|0     send a KeyEvent (keysym in hex)
 *   ready              print "ready"
 *   wait-close MS      print "closed <epoch ms>" once the server closes,
 *                      or "open" (exit 4)
 *   quiet MS           read for MS; "quiet", or "unexpected N" (exit 6)
 *   flood N            send N full update requests, read nothing
 *   stall MS           read nothing for MS
 *
 *   rfbprobe --url ws://HOST:PORT/PATH [--no-subprotocol]
 * Output on failure to connect: "connect-failed <status or why>" (exit 3).
 * After the upgrade it prints "open cache-control=<value>".  Not
 * installed.
 */
#include "autoconf.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <libwebsockets.h>

#include "rfbwire.h"

#define RP_TIMEOUT_MS	10000

static struct {
	struct lws_context	*ctx;
	struct lws		*wsi;
	int			 open, failed, closed, timed_out;
	char			 why[128];
	char			 cache[128];
	uint8_t			*rx;
	size_t			 rxlen, rxoff, rxcap;
	uint8_t			*tx;
	size_t			 txlen;
	uint64_t		 t_connect, t_first;
	lws_sorted_usec_list_t	 sul;
	int			 w, h;
	uint8_t			*fb;
} R;

static uint64_t
rp_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static uint64_t
rp_epoch_ms(void)
{
	struct timeval	tv;

	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
}

static void *
rp_realloc(void *p, size_t n)
{
	if ((p = realloc(p, n)) == NULL) {
		fprintf(stderr, "rfbprobe: out of memory\n");
		exit(1);
	}
	return p;
}

static int
rp_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	int	n;

	(void)user;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		n = (int)lws_http_client_http_response(wsi);
		snprintf(R.why, sizeof R.why, "%s", n != 0 ? "http" :
		    in != NULL ? (const char *)in : "unknown");
		if (n != 0)
			snprintf(R.why, sizeof R.why, "%d", n);
		R.failed = 1;
		R.wsi = NULL;
		break;
	case LWS_CALLBACK_CLIENT_FILTER_PRE_ESTABLISH:
		if (lws_hdr_copy(wsi, R.cache, sizeof R.cache,
		    WSI_TOKEN_HTTP_CACHE_CONTROL) < 0)
			R.cache[0] = '\0';
		break;
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		R.open = 1;
		break;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		if (R.t_first == 0)
			R.t_first = rp_us();
		if (R.rxlen + len > R.rxcap) {
			R.rxcap = (R.rxlen + len) * 2;
			R.rx = rp_realloc(R.rx, R.rxcap);
		}
		memcpy(R.rx + R.rxlen, in, len);
		R.rxlen += len;
		break;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		if (R.txlen == 0)
			break;
		n = lws_write(wsi, R.tx + LWS_PRE, R.txlen, LWS_WRITE_BINARY);
		R.txlen = 0;
		if (n < 0)
			return -1;
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

static const struct lws_protocols rp_protocols[] = {
	{ "rfbprobe", rp_cb, 0, 65536, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

static void
rp_timeout(lws_sorted_usec_list_t *sul)
{
	(void)sul;
	R.timed_out = 1;
	lws_cancel_service(R.ctx);
}

static void
rp_arm(uint64_t ms)
{
	R.timed_out = 0;
	lws_sul_schedule(R.ctx, 0, &R.sul, rp_timeout, (lws_usec_t)ms * 1000);
}

/* Send one whole RFB message as one websocket message. */
static void
rp_send(const void *p, size_t n)
{
	if (R.closed || R.wsi == NULL)
		return;
	R.tx = rp_realloc(R.tx, LWS_PRE + n);
	memcpy(R.tx + LWS_PRE, p, n);
	R.txlen = n;
	lws_callback_on_writable(R.wsi);
	rp_arm(RP_TIMEOUT_MS);
	while (R.txlen > 0 && !R.closed && !R.timed_out)
		lws_service(R.ctx, 0);
	lws_sul_cancel(&R.sul);
}

/* Wait for n unread bytes; exits on close or timeout. */
static const uint8_t *
rp_need(size_t n)
{
	const uint8_t	*p;

	rp_arm(RP_TIMEOUT_MS);
	while (R.rxlen - R.rxoff < n && !R.closed && !R.timed_out)
		lws_service(R.ctx, 0);
	lws_sul_cancel(&R.sul);
	if (R.rxlen - R.rxoff < n) {
		printf("%s\n", R.closed ? "closed-early" : "timeout");
		exit(4);
	}
	p = R.rx + R.rxoff;
	R.rxoff += n;
	return p;
}

static void
rp_handshake(int cursor)
{
	const uint8_t	*p;
	static const int32_t encs[] = { RFBWIRE_ENC_RAW,
	    RFBWIRE_ENC_DESKTOP_SIZE, RFBWIRE_ENC_RICH_CURSOR };
	uint8_t		 m[20], enc[4 + 8 * 4];
	unsigned	 n, i;
	uint32_t	 namelen;

	p = rp_need(12);
	if (memcmp(p, "RFB 003.008\n", 12) != 0) {
		printf("bad-version %.11s\n", (const char *)p);
		exit(5);
	}
	rp_send("RFB 003.008\n", 12);
	n = *rp_need(1);
	if (n == 0) {
		printf("security-refused\n");
		exit(5);
	}
	p = rp_need(n);
	for (i = 0; i < n && p[i] != 1; i++)
		;
	if (i == n) {
		printf("no-security-none\n");
		exit(5);
	}
	m[0] = 1;
	rp_send(m, 1);
	if (rfbwire_be32(rp_need(4)) != 0) {
		printf("security-failed\n");
		exit(5);
	}
	m[0] = 1;	/* shared */
	rp_send(m, 1);
	p = rp_need(24);
	R.w = (int)rfbwire_be16(p);
	R.h = (int)rfbwire_be16(p + 2);
	namelen = rfbwire_be32(p + 20);
	(void)rp_need(namelen);
	R.fb = calloc((size_t)R.w * (size_t)R.h, 4);
	rfbwire_pixel_format(m);
	rp_send(m, 20);
	rp_send(enc, rfbwire_encodings(enc, encs, cursor ? 3 : 2));
	printf("init %d %d first_byte_us=%llu\n", R.w, R.h,
	    (unsigned long long)(R.t_first - R.t_connect));
}

static void
rp_request(int inc)
{
	uint8_t	m[10];

	rfbwire_update_request(m, inc, R.w, R.h);
	rp_send(m, sizeof m);
}

static void
rp_raw_rect(int x, int y, int w, int h)
{
	const uint8_t	*p;
	int		 row;

	if (x + w > R.w || y + h > R.h) {
		printf("rect-outside %d %d %d %d\n", x, y, w, h);
		exit(5);
	}
	for (row = 0; row < h; row++) {
		p = rp_need((size_t)w * 4);
		memcpy(R.fb + ((size_t)(y + row) * (size_t)R.w + (size_t)x) *
		    4, p, (size_t)w * 4);
	}
}

static void
rp_update(void)
{
	const uint8_t	*p;
	unsigned	 n, i;
	int32_t		 enc;

	for (;;) {
		p = rp_need(1);
		if (p[0] == 0)
			break;
		if (p[0] == 2)		/* Bell */
			continue;
		if (p[0] == 3) {	/* ServerCutText */
			p = rp_need(7);
			(void)rp_need(rfbwire_be32(p + 3));
			continue;
		}
		printf("unexpected-message %u\n", p[0]);
		exit(5);
	}
	p = rp_need(3);
	n = rfbwire_be16(p + 1);
	for (i = 0; i < n; i++) {
		p = rp_need(12);
		enc = (int32_t)rfbwire_be32(p + 8);
		if (enc == 0)
			rp_raw_rect((int)rfbwire_be16(p), (int)rfbwire_be16(p + 2),
			    (int)rfbwire_be16(p + 4), (int)rfbwire_be16(p + 6));
		else if (enc == -239) {
			unsigned cw = rfbwire_be16(p + 4), chh = rfbwire_be16(p + 6);

			printf("cursor %u %u %u %u\n", cw, chh, rfbwire_be16(p),
			    rfbwire_be16(p + 2));
			(void)rp_need((size_t)cw * chh * 4 +
			    (size_t)((cw + 7) / 8) * chh);
		} else if (enc != -223) {
			printf("unexpected-encoding %d\n", (int)enc);
			exit(5);
		}
	}
	printf("update %u\n", n);
}

static void
rp_pixel(int x, int y, unsigned want)
{
	const uint8_t	*p;
	unsigned	 got;

	if (x < 0 || y < 0 || x >= R.w || y >= R.h) {
		printf("pixel-outside\n");
		exit(5);
	}
	p = R.fb + ((size_t)y * (size_t)R.w + (size_t)x) * 4;
	got = (unsigned)p[2] << 16 | (unsigned)p[1] << 8 | p[0];
	if (got != want) {
		printf("pixel %d %d got %06x\n", x, y, got);
		exit(5);
	}
	printf("ok\n");
}

static void
rp_wait(uint64_t ms)
{
	rp_arm(ms);
	while (!R.timed_out && !R.closed)
		lws_service(R.ctx, 0);
	lws_sul_cancel(&R.sul);
}

static void
rp_run(const char *line)
{
	unsigned	 a, b, c;
	int		 x, y;
	uint8_t		 m[8];

	if (strncmp(line, "handshake", 9) == 0)
		rp_handshake(strstr(line, "cursor") != NULL);
	else if (strncmp(line, "request", 7) == 0)
		rp_request(strstr(line, "inc") != NULL);
	else if (strncmp(line, "read-update", 11) == 0)
		rp_update();
	else if (strncmp(line, "update", 6) == 0) {
		rp_request(strstr(line, "inc") != NULL);
		rp_update();
	} else if (sscanf(line, "pixel %d %d %x", &x, &y, &a) == 3)
		rp_pixel(x, y, a);
	else if (sscanf(line, "pointer %u %u %u", &a, &b, &c) == 3) {
		m[0] = 5;
		m[1] = (uint8_t)c;
		rfbwire_put16(m + 2, a);
		rfbwire_put16(m + 4, b);
		rp_send(m, 6);
	} else if (sscanf(line, "key %x %u", &a, &b) == 2) {
		memset(m, 0, sizeof m);
		m[0] = 4;
		m[1] = (uint8_t)b;
		rfbwire_put32(m + 4, a);
		rp_send(m, 8);
	} else if (strncmp(line, "ready", 5) == 0)
		printf("ready\n");
	else if (sscanf(line, "wait-close %u", &a) == 1) {
		rp_wait(a);
		if (!R.closed) {
			printf("open\n");
			exit(4);
		}
		printf("closed %llu\n", (unsigned long long)rp_epoch_ms());
	} else if (sscanf(line, "quiet %u", &a) == 1) {
		size_t	before = R.rxlen;

		rp_wait(a);
		if (R.rxlen != before) {
			printf("unexpected %zu\n", R.rxlen - before);
			exit(6);
		}
		printf("quiet\n");
	} else if (sscanf(line, "flood %u", &a) == 1) {
		while (a-- > 0 && !R.closed)
			rp_request(0);
		printf("flooded\n");
	} else if (sscanf(line, "stall %u", &a) == 1) {
		struct timespec ts = { (time_t)(a / 1000),
		    (long)(a % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		printf("stalled\n");
	} else {
		printf("unknown-command %s", line);
		exit(2);
	}
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "no-subprotocol", no_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 }
	};
	struct lws_context_creation_info	info;
	struct lws_client_connect_info		ci;
	const char	*url = NULL, *proto = "binary";
	char		 host[256], hosthdr[300], path[1024], *slash, *colon;
	char		*line = NULL;
	size_t		 cap = 0;
	int		 ch, port;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'u': url = optarg; break;
		case 'N': proto = NULL; break;
		default: return 2;
		}
	}
	if (url == NULL || strncmp(url, "ws://", 5) != 0) {
		fprintf(stderr, "usage: rfbprobe --url ws://HOST:PORT/PATH\n");
		return 2;
	}
	snprintf(host, sizeof host, "%s", url + 5);
	snprintf(path, sizeof path, "/");
	if ((slash = strchr(host, '/')) != NULL) {
		snprintf(path, sizeof path, "%s", strchr(url + 5, '/'));
		*slash = '\0';
	}
	if ((colon = strrchr(host, ':')) == NULL)
		return 2;
	*colon = '\0';
	port = atoi(colon + 1);
	snprintf(hosthdr, sizeof hosthdr, "%s:%d", host, port);

	lws_set_log_level(0, NULL);
	memset(&info, 0, sizeof info);
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = rp_protocols;
	info.gid = -1;
	info.uid = -1;
	if ((R.ctx = lws_create_context(&info)) == NULL)
		return 1;
	memset(&ci, 0, sizeof ci);
	ci.context = R.ctx;
	ci.address = host;
	ci.port = port;
	ci.path = path;
	ci.host = hosthdr;
	ci.origin = hosthdr;
	ci.protocol = proto;
	ci.local_protocol_name = "rfbprobe";
	ci.pwsi = &R.wsi;
	R.t_connect = rp_us();
	if (lws_client_connect_via_info(&ci) == NULL && !R.failed) {
		R.failed = 1;
		snprintf(R.why, sizeof R.why, "connect");
	}
	rp_arm(RP_TIMEOUT_MS);
	while (!R.open && !R.failed && !R.closed && !R.timed_out)
		lws_service(R.ctx, 0);
	lws_sul_cancel(&R.sul);
	if (!R.open) {
		printf("connect-failed %s\n", R.failed ? R.why :
		    R.timed_out ? "timeout" : "closed");
		return 3;
	}
	printf("open cache-control=%s\n", R.cache);
	fflush(stdout);
	while (getline(&line, &cap, stdin) > 0)
		rp_run(line);
	free(line);
	lws_context_destroy(R.ctx);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * termprobe: a scriptable terminal client for the integration tests and
 * the terminal bench.  It speaks websocket itself (a plain socket, RFC
 * 6455 by hand) so a test decides every byte and every pause: frames
 * split across messages, hostile headers, a reader that stalls.
 *
 *   termprobe --url ws://127.0.0.1:PORT/term/TOKEN [--timeout MS] < script
 *
 * Script lines:
 *   send TEXT        one stdin frame (kind 0); C escapes \r \n \t \\ \xHH
 *   split N TEXT     the same frame cut into websocket messages of N bytes
 *   resize C R       one resize frame (kind 1)
 *   raw HEX          one binary message of exactly these bytes
 *   text STR         one text message
 *   bigframe LEN     a stdin frame header claiming LEN, then LEN bytes 'a'
 *   expect STR       read output until STR appears (since the last match)
 *   grab PREFIX      read until PREFIX and a line; print "grab VALUE"
 *   until STR        read until STR; print "until bytes=N ms=T"
 *   stall MS         read nothing for MS milliseconds
 *   echo-latency N   N keystrokes, each timed until echoed; print
 *                    "latency median_us=.. p99_us=.."
 *   expect-close     read until the close frame
 *   sleep MS         wait (a pause in input, never synchronisation)
 * Output: "open", "ok", "grab ...", "closed CODE REASON" (whenever the
 * server closes; then exit 0), "timeout" (exit 4), "refused STATUS" or
 * "connect-failed" (exit 3).  Not installed.
 */
#include "autoconf.h"

#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TP_WIN		(1024 * 1024)	/* output kept for matching */
#define TP_LINE		(64 * 1024)

static int		 tp_fd = -1;
static int		 tp_timeout_ms = 10000;
static unsigned char	 tp_win[TP_WIN];
static size_t		 tp_winlen;	/* unmatched output */
static uint64_t		 tp_total;	/* output bytes so far */
static unsigned char	 tp_rbuf[256 * 1024];
static size_t		 tp_rlen;

static uint64_t
tp_now_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void
tp_write_all(const void *p, size_t n)
{
	const unsigned char	*b = p;
	ssize_t			 w;

	while (n > 0) {
		w = write(tp_fd, b, n);
		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0) {
			printf("write-failed %s\n", strerror(errno));
			exit(5);
		}
		b += w;
		n -= (size_t)w;
	}
}

/* One masked message of opcode op. */
static void
tp_send_msg(int op, const void *p, size_t n)
{
	unsigned char	 h[14], *m;
	size_t		 hl = 0, i;
	uint32_t	 key = (uint32_t)random();

	h[hl++] = 0x80 | (unsigned char)op;
	if (n < 126)
		h[hl++] = 0x80 | (unsigned char)n;
	else if (n < 65536) {
		h[hl++] = 0x80 | 126;
		h[hl++] = (unsigned char)(n >> 8);
		h[hl++] = (unsigned char)n;
	} else {
		h[hl++] = 0x80 | 127;
		for (i = 0; i < 8; i++)
			h[hl++] = (unsigned char)((uint64_t)n >> (56 - 8 * i));
	}
	memcpy(h + hl, &key, 4);
	hl += 4;
	m = malloc(n + 1);
	for (i = 0; i < n; i++)
		m[i] = ((const unsigned char *)p)[i] ^ ((unsigned char *)&key)[i % 4];
	tp_write_all(h, hl);
	tp_write_all(m, n);
	free(m);
}

/* Fill tp_rbuf; 0 on timeout. */
static int
tp_fill(int ms)
{
	struct pollfd	pfd = { tp_fd, POLLIN, 0 };
	ssize_t		n;

	if (tp_rlen == sizeof tp_rbuf)
		return 1;
	if (poll(&pfd, 1, ms) <= 0)
		return 0;
	n = read(tp_fd, tp_rbuf + tp_rlen, sizeof tp_rbuf - tp_rlen);
	if (n <= 0) {
		printf("closed 1006 eof\n");
		exit(0);
	}
	tp_rlen += (size_t)n;
	return 1;
}

static void
tp_take_output(const unsigned char *p, size_t n)
{
	tp_total += n;
	if (n >= TP_WIN) {
		memcpy(tp_win, p + n - TP_WIN, TP_WIN);
		tp_winlen = TP_WIN;
		return;
	}
	if (tp_winlen + n > TP_WIN) {
		size_t	drop = tp_winlen + n - TP_WIN;

		memmove(tp_win, tp_win + drop, tp_winlen - drop);
		tp_winlen -= drop;
	}
	memcpy(tp_win + tp_winlen, p, n);
	tp_winlen += n;
}

/*
 * Read one server message's worth of frames into the window; 0 on
 * timeout.  A close frame ends the program.
 */
static int
tp_read_frame(int ms)
{
	uint64_t	 len;
	size_t		 hl;
	int		 op;

	for (;;) {
		if (tp_rlen >= 2) {
			op = tp_rbuf[0] & 0x0f;
			len = tp_rbuf[1] & 0x7f;
			hl = 2;
			if (len == 126 && tp_rlen >= 4) {
				len = (uint64_t)tp_rbuf[2] << 8 | tp_rbuf[3];
				hl = 4;
			} else if (len == 127 && tp_rlen >= 10) {
				int	i;

				for (len = 0, i = 0; i < 8; i++)
					len = len << 8 | tp_rbuf[2 + i];
				hl = 10;
			} else if (len >= 126)
				hl = 0;
			if (hl > 0 && len > sizeof tp_rbuf - hl) {
				printf("frame-too-large %llu\n",
				    (unsigned long long)len);
				exit(5);
			}
			if (hl > 0 && tp_rlen >= hl + len)
				break;
		}
		if (!tp_fill(ms))
			return 0;
	}
	if (op == 8) {
		unsigned	code = len >= 2 ? (unsigned)tp_rbuf[hl] << 8 |
		    tp_rbuf[hl + 1] : 1005;

		printf("closed %u %.*s\n", code, len > 2 ? (int)len - 2 : 0,
		    (const char *)tp_rbuf + hl + 2);
		exit(0);
	}
	if (op == 9)
		tp_send_msg(10, tp_rbuf + hl, (size_t)len);
	else if (op == 0 || op == 2 || op == 1)
		tp_take_output(tp_rbuf + hl, (size_t)len);
	memmove(tp_rbuf, tp_rbuf + hl + len, tp_rlen - hl - (size_t)len);
	tp_rlen -= hl + (size_t)len;
	return 1;
}

static unsigned char *
tp_find(const char *s, size_t n)
{
	return memmem(tp_win, tp_winlen, s, n);
}

/* Read until s (n bytes) is in the window; consume through it. */
static unsigned char *
tp_wait_for(const char *s, size_t n)
{
	uint64_t	 deadline = tp_now_us() + (uint64_t)tp_timeout_ms * 1000;
	unsigned char	*at;
	uint64_t	 seen;

	/* Search only what came since, plus n - 1 bytes of overlap. */
	at = tp_find(s, n);
	while (at == NULL) {
		uint64_t	now = tp_now_us();

		seen = tp_total;
		do {
			if (now >= deadline || !tp_read_frame((int)
			    ((deadline - now) / 1000) + 1))
				break;
			now = tp_now_us();
		} while (tp_total == seen);
		if (tp_total > seen) {
			size_t	fresh = (size_t)(tp_total - seen) + n - 1;

			if (fresh > tp_winlen)
				fresh = tp_winlen;
			at = memmem(tp_win + tp_winlen - fresh, fresh, s, n);
			continue;
		}
		{
			printf("timeout\n");
			fflush(stdout);
			fprintf(stderr, "termprobe: waiting for '%.*s'; last "
			    "output: '%.*s'\n", (int)n, s, tp_winlen > 300 ?
			    300 : (int)tp_winlen, tp_winlen > 300 ? tp_win +
			    tp_winlen - 300 : tp_win);
			exit(4);
		}
	}
	return at;
}

static void
tp_consume(size_t upto)
{
	memmove(tp_win, tp_win + upto, tp_winlen - upto);
	tp_winlen -= upto;
}

static size_t
tp_unescape(const char *s, unsigned char *out)
{
	size_t		 n = 0;
	unsigned	 v;

	while (*s != '\0') {
		if (*s != '\\' || s[1] == '\0') {
			out[n++] = (unsigned char)*s++;
			continue;
		}
		s++;
		switch (*s) {
		case 'r': out[n++] = '\r'; s++; break;
		case 'n': out[n++] = '\n'; s++; break;
		case 't': out[n++] = '\t'; s++; break;
		case 'x':
			if (sscanf(s + 1, "%2x", &v) == 1) {
				out[n++] = (unsigned char)v;
				s += 3;
				break;
			}
			/* FALLTHROUGH */
		default: out[n++] = (unsigned char)*s++; break;
		}
	}
	return n;
}

static size_t
tp_frame(unsigned char *f, int kind, const unsigned char *p, size_t n)
{
	f[0] = (unsigned char)kind;
	f[1] = (unsigned char)(n >> 24);
	f[2] = (unsigned char)(n >> 16);
	f[3] = (unsigned char)(n >> 8);
	f[4] = (unsigned char)n;
	memcpy(f + 5, p, n);
	return n + 5;
}

static void
tp_connect(const char *url)
{
	char			 host[256], path[1024], req[2048], resp[4096];
	struct sockaddr_in	 sin;
	int			 port, one = 1;
	size_t			 got = 0;
	ssize_t			 n;
	char			*e;

	if (sscanf(url, "ws://%255[^:/]:%d%1023s", host, &port, path) != 3) {
		fprintf(stderr, "termprobe: bad url\n");
		exit(2);
	}
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sin.sin_addr) != 1) {
		fprintf(stderr, "termprobe: host must be an IPv4 address\n");
		exit(2);
	}
	tp_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (tp_fd == -1 || connect(tp_fd, (struct sockaddr *)&sin,
	    sizeof sin) == -1) {
		printf("connect-failed %s\n", strerror(errno));
		exit(3);
	}
	(void)setsockopt(tp_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s:%d\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
	    "Sec-WebSocket-Version: 13\r\n\r\n", path, host, port);
	tp_write_all(req, strlen(req));
	for (;;) {
		struct pollfd	pfd = { tp_fd, POLLIN, 0 };

		if (poll(&pfd, 1, tp_timeout_ms) <= 0) {
			printf("timeout\n");
			exit(4);
		}
		n = read(tp_fd, resp + got, sizeof resp - 1 - got);
		if (n <= 0) {
			printf("refused eof\n");
			exit(3);
		}
		got += (size_t)n;
		resp[got] = '\0';
		if ((e = strstr(resp, "\r\n\r\n")) != NULL)
			break;
		if (got == sizeof resp - 1) {
			printf("refused header-too-long\n");
			exit(3);
		}
	}
	if (strncmp(resp, "HTTP/1.1 101", 12) != 0) {
		printf("refused %.3s\n", resp + 9);
		exit(3);
	}
	e += 4;
	tp_rlen = got - (size_t)(e - resp);
	memcpy(tp_rbuf, e, tp_rlen);
	printf("open\n");
}

static int
tp_cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
tp_echo_latency(int count)
{
	uint64_t	*lat = calloc((size_t)count, sizeof *lat), t0;
	unsigned char	 f[6];
	char		 c;
	int		 i;

	for (i = 0; i < count; i++) {
		c = (char)('a' + i % 26);
		tp_winlen = 0;
		t0 = tp_now_us();
		tp_send_msg(2, f, tp_frame(f, 0, (unsigned char *)&c, 1));
		tp_wait_for(&c, 1);
		lat[i] = tp_now_us() - t0;
		if (i % 50 == 49) {
			/* Kill the line (C-u) so it never wraps. */
			c = 0x15;
			tp_send_msg(2, f, tp_frame(f, 0, (unsigned char *)&c,
			    1));
		}
	}
	qsort(lat, (size_t)count, sizeof *lat, tp_cmp_u64);
	printf("latency n=%d median_us=%llu p99_us=%llu\n", count,
	    (unsigned long long)lat[count / 2],
	    (unsigned long long)lat[(count * 99) / 100 >= count ? count - 1 :
	    (count * 99) / 100]);
	free(lat);
}

static void
tp_run(char *line)
{
	static unsigned char	 buf[2 * TP_LINE + 16], fr[2 * TP_LINE + 16];
	char			*arg;
	unsigned char		*at;
	size_t			 n, off, k;
	long			 v, w;
	uint64_t		 t0, b0;

	line[strcspn(line, "\n")] = '\0';
	if ((arg = strchr(line, ' ')) != NULL)
		*arg++ = '\0';
	else
		arg = line + strlen(line);
	if (strcmp(line, "send") == 0) {
		n = tp_unescape(arg, buf);
		tp_send_msg(2, fr, tp_frame(fr, 0, buf, n));
	} else if (strcmp(line, "split") == 0) {
		v = strtol(arg, &arg, 10);
		n = tp_frame(fr, 0, buf, tp_unescape(arg + 1, buf));
		for (off = 0; off < n; off += k) {
			k = n - off < (size_t)v ? n - off : (size_t)v;
			tp_send_msg(2, fr + off, k);
		}
	} else if (strcmp(line, "resize") == 0) {
		if (sscanf(arg, "%ld %ld", &v, &w) != 2)
			exit(2);
		buf[0] = (unsigned char)(v >> 8);
		buf[1] = (unsigned char)v;
		buf[2] = (unsigned char)(w >> 8);
		buf[3] = (unsigned char)w;
		tp_send_msg(2, fr, tp_frame(fr, 1, buf, 4));
	} else if (strcmp(line, "raw") == 0) {
		for (n = 0; arg[2 * n] != '\0' && arg[2 * n + 1] != '\0'; n++) {
			unsigned	x;

			sscanf(arg + 2 * n, "%2x", &x);
			buf[n] = (unsigned char)x;
		}
		tp_send_msg(2, buf, n);
	} else if (strcmp(line, "text") == 0) {
		tp_send_msg(1, arg, strlen(arg));
	} else if (strcmp(line, "bigframe") == 0) {
		uint64_t	len = strtoull(arg, NULL, 10);
		unsigned char	*big = malloc(64 * 1024);

		memset(big, 'a', 64 * 1024);
		fr[0] = 0;
		fr[1] = (unsigned char)(len >> 24);
		fr[2] = (unsigned char)(len >> 16);
		fr[3] = (unsigned char)(len >> 8);
		fr[4] = (unsigned char)len;
		tp_send_msg(2, fr, 5);
		while (len > 0) {
			k = len < 64 * 1024 ? (size_t)len : 64 * 1024;
			tp_send_msg(2, big, k);
			len -= k;
		}
		free(big);
	} else if (strcmp(line, "expect") == 0) {
		n = tp_unescape(arg, buf);
		at = tp_wait_for((char *)buf, n);
		tp_consume((size_t)(at - tp_win) + n);
		printf("ok\n");
	} else if (strcmp(line, "grab") == 0) {
		n = tp_unescape(arg, buf);
		at = tp_wait_for((char *)buf, n);
		off = (size_t)(at - tp_win);
		for (;;) {
			unsigned char	*eol = memchr(tp_win + off + n, '\n',
			    tp_winlen - off - n);
			unsigned char	*cr = memchr(tp_win + off + n, '\r',
			    tp_winlen - off - n);

			if (cr != NULL && (eol == NULL || cr < eol))
				eol = cr;
			if (eol != NULL) {
				printf("grab %.*s\n", (int)(eol - tp_win - off),
				    (char *)tp_win + off);
				tp_consume((size_t)(eol - tp_win));
				break;
			}
			if (!tp_read_frame(tp_timeout_ms)) {
				printf("timeout\n");
				exit(4);
			}
			at = tp_find((char *)buf, n);
			off = (size_t)(at - tp_win);
		}
	} else if (strcmp(line, "until") == 0) {
		n = tp_unescape(arg, buf);
		t0 = tp_now_us();
		b0 = tp_total - tp_winlen;
		at = tp_wait_for((char *)buf, n);
		printf("until bytes=%llu ms=%llu\n", (unsigned long long)
		    (tp_total - b0), (unsigned long long)(tp_now_us() - t0) /
		    1000);
		tp_consume((size_t)(at - tp_win) + n);
	} else if (strcmp(line, "stall") == 0 || strcmp(line, "sleep") == 0) {
		usleep((useconds_t)strtol(arg, NULL, 10) * 1000);
	} else if (strcmp(line, "echo-latency") == 0) {
		tp_echo_latency((int)strtol(arg, NULL, 10));
	} else if (strcmp(line, "expect-close") == 0) {
		for (;;) {
			if (!tp_read_frame(tp_timeout_ms)) {
				printf("timeout\n");
				exit(4);
			}
		}
	} else if (line[0] != '\0' && line[0] != '#') {
		fprintf(stderr, "termprobe: unknown command %s\n", line);
		exit(2);
	}
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	static char	 line[TP_LINE];
	const char	*url = NULL;
	int		 ch;
	static const struct option opts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'u':
			url = optarg;
			break;
		case 't':
			tp_timeout_ms = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	if (url == NULL) {
		fprintf(stderr, "usage: termprobe --url ws://H:P/term/T "
		    "[--timeout MS] < script\n");
		return 2;
	}
	srandom((unsigned)tp_now_us());
	tp_connect(url);
	fflush(stdout);
	while (fgets(line, sizeof line, stdin) != NULL)
		tp_run(line);
	return 0;
}

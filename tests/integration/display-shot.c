/* SPDX-License-Identifier: MIT */
/*
 * display-shot: the desktop tests' client of guestd's control channel.
 * It sends one request, keeps the channel 0 bytes (a screenshot), checks
 * pixels of the decoded image, and can wait for an event afterwards.
 *
 *   display-shot --url URL --secret-file F [--out FILE]
 *       [--pixel X,Y,RRGGBB,TOL]... [--repeat N] [--wait-event NAME]
 *       OP JSON
 *
 * Prints the result JSON (of the last request with --repeat, preceded by
 * "median_us N"), "bytes N", and with --wait-event, "subscribed" once the
 * request was answered and then the event JSON.  PNG and JPEG are decoded
 * with libpng and TurboJPEG, so a pixel check needs no other tool.  Exit 0
 * when everything matched, 1 on an error reply or mismatch, 2 on usage.
 * Not installed.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <libwebsockets.h>
#include <png.h>
#include <turbojpeg.h>

#include "err.h"
#include "guest-client.h"
#include "xmalloc.h"

#define SHOT_MAX_PIXELS	16
#define SHOT_MAX_BYTES	(256 * 1024 * 1024)

struct shot_pixel {
	int		x, y, tol;
	unsigned	rgb;
};

struct shot {
	int		 done;
	json_t		*reply;
	unsigned char	*buf;
	size_t		 len;
	const char	*want_event;
	json_t		*event;
};

static void
shot_reply(struct gclient *c, uint32_t id, json_t *msg, void *arg)
{
	struct shot	*s = arg;

	(void)c;
	(void)id;
	s->reply = json_incref(msg);
	s->done = 1;
}

static int
shot_data(struct gclient *c, uint32_t id, uint8_t ch, const uint8_t *p,
    size_t n, int end, void *arg)
{
	struct shot	*s = arg;

	(void)c;
	(void)id;
	(void)end;
	if (ch != 0 || s->len + n > SHOT_MAX_BYTES)
		return ERR_TOO_LARGE;
	s->buf = xrealloc(s->buf, s->len + n + 1);
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	return 0;
}

static void
shot_event(struct gclient *c, json_t *ev, void *arg)
{
	struct shot	*s = arg;
	const char	*name;

	(void)c;
	name = json_string_value(json_object_get(ev, "event"));
	if (s->want_event != NULL && s->event == NULL && name != NULL &&
	    strcmp(name, s->want_event) == 0) {
		s->event = json_incref(ev);
		/* An event may come before the reply: wait for both. */
		if (s->reply != NULL)
			s->done = 1;
	}
}

/* Decode to RGB; 0 or -1. */
static int
shot_decode(const unsigned char *p, size_t n, unsigned char **rgb, int *w,
    int *h)
{
	png_image	 img;
	tjhandle	 tj;
	int		 ss, cs;

	*rgb = NULL;
	if (n >= 8 && memcmp(p, "\211PNG", 4) == 0) {
		memset(&img, 0, sizeof img);
		img.version = PNG_IMAGE_VERSION;
		if (!png_image_begin_read_from_memory(&img, p, n))
			return -1;
		img.format = PNG_FORMAT_RGB;
		*w = (int)img.width;
		*h = (int)img.height;
		*rgb = xmalloc(PNG_IMAGE_SIZE(img));
		if (!png_image_finish_read(&img, NULL, *rgb, 0, NULL)) {
			free(*rgb);
			*rgb = NULL;
			return -1;
		}
		return 0;
	}
	if ((tj = tjInitDecompress()) == NULL)
		return -1;
	if (tjDecompressHeader3(tj, p, (unsigned long)n, w, h, &ss, &cs) != 0) {
		tjDestroy(tj);
		return -1;
	}
	*rgb = xmalloc((size_t)*w * (size_t)*h * 3);
	if (tjDecompress2(tj, p, (unsigned long)n, *rgb, *w, 0, *h, TJPF_RGB,
	    0) != 0) {
		tjDestroy(tj);
		free(*rgb);
		*rgb = NULL;
		return -1;
	}
	tjDestroy(tj);
	return 0;
}

static int
shot_check(const struct shot *s, const struct shot_pixel *px, int npx)
{
	unsigned char	*rgb;
	const unsigned char *q;
	int		 w, h, i, c, bad = 0, want, d;

	if (npx == 0)
		return 0;
	if (shot_decode(s->buf, s->len, &rgb, &w, &h) != 0) {
		printf("decode-failed\n");
		return 1;
	}
	for (i = 0; i < npx; i++) {
		if (px[i].x >= w || px[i].y >= h) {
			printf("pixel %d,%d outside %dx%d\n", px[i].x, px[i].y,
			    w, h);
			bad = 1;
			continue;
		}
		q = rgb + ((size_t)px[i].y * (size_t)w + (size_t)px[i].x) * 3;
		for (c = 0; c < 3; c++) {
			want = (int)(px[i].rgb >> (16 - 8 * c)) & 0xff;
			d = q[c] - want;
			if (d < -px[i].tol || d > px[i].tol)
				bad = 1;
		}
		printf("pixel %d,%d %02x%02x%02x\n", px[i].x, px[i].y, q[0],
		    q[1], q[2]);
	}
	free(rgb);
	return bad;
}

static char *
shot_secret(const char *path)
{
	char	 buf[512];
	ssize_t	 n;
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	return xstrdup(buf);
}

static uint64_t
shot_now_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int
shot_cmp(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One request; 0 ok, 1 error reply or failure. */
static int
shot_once(struct gclient *gc, struct shot *s, const char *op, json_t *args)
{
	free(s->buf);
	s->buf = NULL;
	s->len = 0;
	json_decref(s->reply);
	s->reply = NULL;
	s->done = 0;
	if (gclient_request(gc, op, json_deep_copy(args), shot_reply,
	    shot_data, s) == 0 || gclient_run(gc, &s->done, 20000) != 0 ||
	    s->reply == NULL) {
		printf("failed %s\n", gclient_error(gc));
		return 1;
	}
	return json_is_true(json_object_get(s->reply, "ok")) ? 0 : 1;
}

static int
display_shot_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "secret-file", required_argument, NULL, 's' },
		{ "out", required_argument, NULL, 'o' },
		{ "pixel", required_argument, NULL, 'p' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "wait-event", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 }
	};
	struct shot_pixel	 px[SHOT_MAX_PIXELS];
	struct gclient_opts	 o;
	struct gclient		*gc;
	struct shot		 s;
	const char		*out = NULL;
	struct errmsg		 err;
	char			 *dump;
	json_t			*args, *res;
	json_error_t		 je;
	uint64_t		*times, t0;
	int			 ch, npx = 0, repeat = 1, i, fd, rc = 1;

	memset(&o, 0, sizeof o);
	memset(&s, 0, sizeof s);
	lws_set_log_level(LLL_ERR, NULL);
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'u':
			o.url = optarg;
			break;
		case 's':
			o.secret = shot_secret(optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case 'p':
			if (npx == SHOT_MAX_PIXELS || sscanf(optarg,
			    "%d,%d,%x,%d", &px[npx].x, &px[npx].y,
			    &px[npx].rgb, &px[npx].tol) != 4)
				return 2;
			npx++;
			break;
		case 'r':
			repeat = atoi(optarg);
			if (repeat < 1 || repeat > 100000)
				return 2;
			break;
		case 'e':
			s.want_event = optarg;
			break;
		default:
			return 2;
		}
	}
	if (argc - optind != 2 || o.url == NULL || o.secret == NULL)
		return 2;
	args = json_loads(argv[optind + 1], JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(args))
		return 2;
	if (gclient_connect(&gc, &o, &err) != 0) {
		printf("connect-failed %s\n", err.msg);
		json_decref(args);
		free((char *)o.secret);
		return 1;
	}
	gclient_on_event(gc, shot_event, &s);
	times = xcalloc((size_t)repeat, sizeof *times);
	for (i = 0; i < repeat; i++) {
		t0 = shot_now_us();
		if (shot_once(gc, &s, argv[optind], args) != 0)
			break;
		times[i] = shot_now_us() - t0;
	}
	if (repeat > 1 && i == repeat) {
		qsort(times, (size_t)repeat, sizeof *times, shot_cmp);
		printf("median_us %llu\n", (unsigned long long)times[repeat / 2]);
	}
	if (s.reply == NULL)
		goto out;
	res = json_object_get(s.reply, json_is_true(json_object_get(s.reply,
	    "ok")) ? "result" : "error");
	dump = json_dumps(res, JSON_COMPACT);
	printf("%s\nbytes %zu\n", dump ? dump : "null", s.len);
	free(dump);
	if (!json_is_true(json_object_get(s.reply, "ok")))
		goto out;
	if (out != NULL) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd == -1 || write(fd, s.buf, s.len) != (ssize_t)s.len)
			goto out;
		close(fd);
	}
	if (shot_check(&s, px, npx) != 0)
		goto out;
	if (s.want_event != NULL) {
		printf("subscribed\n");
		fflush(stdout);
		s.done = s.event != NULL;
		if (s.event == NULL && (gclient_run(gc, &s.done, 30000) != 0 ||
		    s.event == NULL)) {
			printf("no-event\n");
			goto out;
		}
		dump = json_dumps(s.event, JSON_COMPACT);
		printf("%s\n", dump ? dump : "null");
		free(dump);
	}
	rc = 0;
out:
	gclient_free(gc);
	json_decref(args);
	json_decref(s.reply);
	json_decref(s.event);
	free(s.buf);
	free(times);
	free((char *)o.secret);
	return rc;
}

/* The body is a task on the client's loop (guest-client.h). */
int
main(int argc, char **argv)
{
	return gclient_main(argc, argv, display_shot_main);
}

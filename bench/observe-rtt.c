/* SPDX-License-Identifier: MIT */
/*
 * Observe round trip: screenshots of a bot's desktop through guestd's
 * control channel (one connection, as a controller holds it), each timed
 * from sending the request to having the reply and every image byte.
 *
 *   observe-rtt URL SECRET-FILE BOT [N [N-UNCHANGED [PAINT-IN PAINT-OUT]]]
 *
 * Runs N full-screen PNG observes, N JPEG observes at quality 80, then
 * N-UNCHANGED observes with since_frame set to the current frame (nothing
 * drawn meanwhile, so each answer is "unchanged").  With PAINT-IN and
 * PAINT-OUT (the stdin and stdout FIFOs of bench/xnoise), the screen is
 * changed before every PNG and JPEG observe, outside the timed part.
 * Prints one line per series:
 *
 *   png n=50 median_us=.. p90_us=.. min_us=.. median_bytes=.. changed=..
 *
 * where changed counts the frames that were new since the previous
 * observe.  Built by `make benchmarks`; not part of `make check`.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libwebsockets.h>

#include "err.h"
#include "timing.h"
#include "guest-client.h"
#include "token.h"

struct ort_call {
	int	 done;
	json_t	*reply;
	size_t	 bytes;
};

struct ort {
	struct gclient	*c;
	const char	*bot;
	FILE		*paint_in;
	FILE		*paint_out;
};

static void
ort_reply(struct gclient *c, uint32_t id, json_t *msg, void *arg)
{
	struct ort_call	*oc = arg;

	oc->reply = json_incref(msg);
	oc->done = 1;
}

static int
ort_data(struct gclient *c, uint32_t id, uint8_t channel, const uint8_t *p,
    size_t n, int end, void *arg)
{
	struct ort_call	*oc = arg;

	oc->bytes += n;
	return 0;
}

/* One observe; *us is the round trip, *frame the answer's frame id. */
static int
ort_observe(struct ort *o, json_t *args, double *us, size_t *bytes,
    json_int_t *frame, int *unchanged)
{
	struct ort_call	 oc;
	json_t		*res;
	struct errmsg	 err;
	double		 t0;
	int		 r;

	memset(&oc, 0, sizeof oc);
	json_object_set_new(args, "bot", json_string(o->bot));
	t0 = bench_now_us();
	if (gclient_request(o->c, "display.observe", args, ort_reply,
	    ort_data, &oc) == 0)
		return ERR_PEER_GONE;
	if ((r = gclient_run(o->c, &oc.done, 30000)) != 0)
		return r;
	*us = bench_now_us() - t0;
	if (!json_is_true(json_object_get(oc.reply, "ok"))) {
		r = gclient_reply_error(oc.reply, &err);
		fprintf(stderr, "observe: %s\n", err.msg);
		json_decref(oc.reply);
		return r;
	}
	res = json_object_get(oc.reply, "result");
	*frame = json_integer_value(json_object_get(res, "frame"));
	*unchanged = json_is_true(json_object_get(res, "unchanged"));
	if (!*unchanged && (json_int_t)oc.bytes !=
	    json_integer_value(json_object_get(res, "bytes"))) {
		fprintf(stderr, "observe: %zu bytes received, %lld announced\n",
		    oc.bytes, (long long)json_integer_value(
		    json_object_get(res, "bytes")));
		json_decref(oc.reply);
		return ERR_PROTOCOL;
	}
	*bytes = oc.bytes;
	json_decref(oc.reply);
	return 0;
}

/* Tell xnoise to draw, and wait until the pixels are on the screen. */
static int
ort_paint(struct ort *o)
{
	char	line[64];

	if (o->paint_in == NULL)
		return 0;
	if (fputs("paint 20\n", o->paint_in) == EOF ||
	    fflush(o->paint_in) == EOF ||
	    fgets(line, sizeof line, o->paint_out) == NULL ||
	    strncmp(line, "ok", 2) != 0) {
		fprintf(stderr, "xnoise did not answer\n");
		return ERR_IO;
	}
	return 0;
}

static void
ort_report(const char *what, double *v, size_t *b, int n, int changed)
{
	size_t	i, j, t;

	bench_sort(v, (size_t)n);
	/* Bytes sorted on their own: a median of sizes, not of times. */
	for (i = 1; i < (size_t)n; i++)
		for (j = i; j > 0 && b[j - 1] > b[j]; j--) {
			t = b[j];
			b[j] = b[j - 1];
			b[j - 1] = t;
		}
	printf("%s n=%d median_us=%.0f p90_us=%.0f min_us=%.0f "
	    "median_bytes=%zu changed=%d\n", what, n, v[n / 2],
	    v[(n * 9) / 10], v[0], b[n / 2], changed);
	fflush(stdout);
}

/* n observes of one kind; since: ask with the previous frame. */
static int
ort_series(struct ort *o, const char *what, const char *format, int n,
    int paint, int since)
{
	double		*us;
	size_t		*bytes;
	json_t		*args;
	json_int_t	 frame = -1, prev = -1;
	int		 i, un, changed = 0, r = 0;

	us = calloc((size_t)n, sizeof *us);
	bytes = calloc((size_t)n, sizeof *bytes);
	if (us == NULL || bytes == NULL)
		return ERR_NOMEM;
	/* Unchanged needs a frame to compare with: one untimed observe. */
	if (since) {
		args = json_pack("{s:s}", "format", format);
		r = ort_observe(o, args, &us[0], &bytes[0], &prev, &un);
	}
	for (i = 0; i < n && r == 0; i++) {
		if (paint && (r = ort_paint(o)) != 0)
			break;
		args = json_pack("{s:s}", "format", format);
		if (strcmp(format, "jpeg") == 0)
			json_object_set_new(args, "quality", json_integer(80));
		if (since && prev >= 0)
			json_object_set_new(args, "since_frame",
			    json_integer(prev));
		r = ort_observe(o, args, &us[i], &bytes[i], &frame, &un);
		if (r == 0 && since && !un) {
			fprintf(stderr, "%s: frame %lld changed\n", what,
			    (long long)frame);
			r = ERR_INTERNAL;
		}
		if (r == 0 && frame != prev)
			changed++;
		prev = frame;
	}
	if (r == 0)
		ort_report(what, us, bytes, n, changed);
	free(us);
	free(bytes);
	return r;
}

static int
observe_rtt_main(int argc, char **argv)
{
	struct gclient_opts	 opts;
	struct ort		 o;
	struct errmsg		 err;
	char			 secret[SECRET_MAX + 1];
	int			 n = 50, nu = 500, r;

	if (argc != 4 && argc != 5 && argc != 6 && argc != 8) {
		fprintf(stderr, "usage: observe-rtt URL SECRET-FILE BOT "
		    "[N [N-UNCHANGED [PAINT-IN PAINT-OUT]]]\n");
		return 2;
	}
	if (argc > 4 && (n = atoi(argv[4])) < 1)
		n = 1;
	if (argc > 5 && (nu = atoi(argv[5])) < 2)
		nu = 2;
	memset(&o, 0, sizeof o);
	o.bot = argv[3];
	if (argc == 8 && ((o.paint_in = fopen(argv[6], "w")) == NULL ||
	    (o.paint_out = fopen(argv[7], "r")) == NULL)) {
		perror("paint fifo");
		return 1;
	}
	if ((r = token_read_file(argv[2], secret, sizeof secret, 0)) != 0) {
		fprintf(stderr, "secret: %s\n", err_name(r));
		return 1;
	}
	lws_set_log_level(0, NULL);
	memset(&opts, 0, sizeof opts);
	opts.url = argv[1];
	opts.secret = secret;
	if (gclient_connect(&o.c, &opts, &err) != 0) {
		fprintf(stderr, "connect: %s\n", err.msg);
		return 1;
	}
	/* A few unmeasured calls first: connection and caches warm. */
	if ((r = ort_series(&o, "warmup", "png", 3, 0, 0)) == 0 &&
	    (r = ort_series(&o, "png", "png", n, 1, 0)) == 0 &&
	    (r = ort_series(&o, "jpeg_q80", "jpeg", n, 1, 0)) == 0)
		r = ort_series(&o, "unchanged", "jpeg", nu, 0, 1);
	if (r != 0)
		fprintf(stderr, "observe-rtt: %s\n", err_name(r));
	gclient_free(o.c);
	if (o.paint_in != NULL)
		fclose(o.paint_in);
	if (o.paint_out != NULL)
		fclose(o.paint_out);
	return r == 0 ? 0 : 1;
}

/* The body is a task on the client's loop (guest-client.h). */
int
main(int argc, char **argv)
{
	return gclient_main(argc, argv, observe_rtt_main);
}

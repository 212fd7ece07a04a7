/* SPDX-License-Identifier: MIT */
/*
 * The in-client timer behind bench/browser-page.sh: page.snapshot and
 * page.act (one click) on the bot's visible tab, over one control
 * connection as the controller holds it.  Prints one line per measure
 * (microseconds) and, last, a JSON line the script reads.  Not part of
 * `make check`.
 *
 *   page-rtt URL SECRET-FILE BOT N
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <libwebsockets.h>

#include "err.h"
#include "timing.h"
#include "guest-client.h"
#include "token.h"

static double
report(const char *what, double *v, int n)
{
	bench_sort(v, (size_t)n);
	printf("%-24s n=%d median=%.0fus p90=%.0fus min=%.0fus\n", what, n,
	    v[n / 2], v[(n * 9) / 10], v[0]);
	return v[n / 2];
}

static int
page_rtt_main(int argc, char **argv)
{
	struct gclient_opts	 o;
	struct gclient		*c;
	struct errmsg		 err;
	char			 secret[SECRET_MAX + 1];
	const char		*bot, *ref = NULL;
	double			*snap, *act, t0, ms, ma;
	json_t			*res, *el;
	size_t			 i;
	int			 n, k, r, nel = 0;

	if (argc != 5) {
		fprintf(stderr, "usage: page-rtt URL SECRET-FILE BOT N\n");
		return 2;
	}
	bot = argv[3];
	if ((n = atoi(argv[4])) < 5)
		n = 5;
	if ((r = token_read_file(argv[2], secret, sizeof secret, 0)) != 0) {
		fprintf(stderr, "secret: %s\n", err_name(r));
		return 1;
	}
	lws_set_log_level(0, NULL);
	memset(&o, 0, sizeof o);
	o.url = argv[1];
	o.secret = secret;
	if (gclient_connect(&c, &o, &err) != 0) {
		fprintf(stderr, "connect: %s\n", err.msg);
		return 1;
	}
	snap = calloc((size_t)n, sizeof *snap);
	act = calloc((size_t)n, sizeof *act);
	if (snap == NULL || act == NULL)
		return 1;
	for (k = 0; k < n; k++) {
		t0 = bench_now_us();
		if (gclient_call(c, "page.snapshot", json_pack("{s:s}", "bot",
		    bot), &res, &err) != 0) {
			fprintf(stderr, "page.snapshot: %s\n", err.msg);
			return 1;
		}
		snap[k] = bench_now_us() - t0;
		/* Click the same button the baseline clicks: the 501st. */
		json_array_foreach(json_object_get(res, "elements"), i, el) {
			if (strcmp(json_string_value(json_object_get(el,
			    "name")), "Button 40") == 0) {
				free((void *)ref);
				ref = strdup(json_string_value(json_object_get(
				    el, "ref")));
			}
		}
		nel = (int)json_array_size(json_object_get(res, "elements"));
		json_decref(res);
	}
	if (ref == NULL) {
		fprintf(stderr, "no \"Button 40\" in the snapshot\n");
		return 1;
	}
	for (k = 0; k < n; k++) {
		t0 = bench_now_us();
		if (gclient_call(c, "page.act", json_pack("{s:s,s:[{s:s,s:s}]}",
		    "bot", bot, "steps", "kind", "click", "ref", ref), &res,
		    &err) != 0) {
			fprintf(stderr, "page.act: %s\n", err.msg);
			return 1;
		}
		act[k] = bench_now_us() - t0;
		json_decref(res);
	}
	ms = report("guestd page.snapshot", snap, n);
	ma = report("guestd page.act click", act, n);
	printf("{\"snapshot_us\":%.0f,\"act_us\":%.0f,\"elements\":%d}\n", ms,
	    ma, nel);
	gclient_free(c);
	return 0;
}

/* The body is a task on the client's loop (guest-client.h). */
int
main(int argc, char **argv)
{
	return gclient_main(argc, argv, page_rtt_main);
}

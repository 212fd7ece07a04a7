/* SPDX-License-Identifier: MIT */
/*
 * The in-client timer behind controller-overhead.sh: tool calls through
 * rakazoctl serve (one keep-alive HTTP connection per client, as an agent
 * holds it) against the same operations sent straight to the computer's
 * guestd over one control connection, in the same run.  Not part of
 * `make check`.
 *
 *   ctl-rtt overhead CTL-URL TOKEN-FILE GUEST-URL SECRET-FILE COMPUTER N [BOT]
 *   ctl-rtt lease    CTL-URL TOKEN-FILE COMPUTER BOT N
 *   ctl-rtt act      CTL-URL TOKEN-FILE COMPUTER NBOTS N
 */
#include "autoconf.h"

#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <libwebsockets.h>

#include "err.h"
#include "timing.h"
#include "guest-client.h"
#include "token.h"

struct hc {
	int	 fd;
	char	 auth[700];
	char	 buf[1 << 16];
};

static double
median(double *v, int n)
{
	bench_sort(v, (size_t)n);
	return v[n / 2];
}

/* "http://127.0.0.1:PORT" only: this is a loopback benchmark. */
static int
hc_open(struct hc *h, const char *url, const char *tokfile)
{
	struct sockaddr_in	 sa;
	char			 tok[600];
	int			 one = 1;

	if (token_read_file(tokfile, tok, sizeof tok, 0) != 0)
		return -1;
	snprintf(h->auth, sizeof h->auth, "Authorization: Bearer %s\r\n", tok);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)atoi(strrchr(url, ':') + 1));
	if ((h->fd = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    connect(h->fd, (struct sockaddr *)&sa, sizeof sa) == -1)
		return -1;
	setsockopt(h->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return 0;
}

/* One request; the status, body discarded unless out. */
static int
hc_req(struct hc *h, const char *method, const char *path, const char *body,
    json_t **out)
{
	char	 req[2048], *p, *e;
	size_t	 have = 0, need;
	long	 cl;
	ssize_t	 k;
	int	 n, status;

	n = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: bench\r\n%s"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
	    method, path, h->auth, body ? strlen(body) : 0, body ? body : "");
	if (write(h->fd, req, (size_t)n) != n)
		return -1;
	for (;;) {
		if ((k = read(h->fd, h->buf + have, sizeof h->buf - 1 - have))
		    <= 0)
			return -1;
		have += (size_t)k;
		h->buf[have] = '\0';
		if ((e = strstr(h->buf, "\r\n\r\n")) != NULL)
			break;
	}
	status = atoi(h->buf + 9);
	p = strcasestr(h->buf, "content-length:");
	cl = p != NULL && p < e ? atol(p + 15) : 0;
	need = (size_t)(e + 4 - h->buf) + (size_t)cl;
	if (need >= sizeof h->buf)
		return -1;
	while (have < need) {
		if ((k = read(h->fd, h->buf + have, need - have)) <= 0)
			return -1;
		have += (size_t)k;
	}
	h->buf[need] = '\0';
	if (out != NULL)
		*out = json_loads(e + 4, 0, NULL);
	return status;
}

static void
report(const char *what, double *v, int n, double *med)
{
	*med = median(v, n);
	printf("%-34s n=%d median=%.0fus p90=%.0fus\n", what, n, *med,
	    v[n * 9 / 10]);
}

static int
overhead(int argc, char **argv)
{
	struct gclient_opts	 o;
	struct gclient		*c;
	struct hc		 h;
	json_t			*res = NULL;
	struct errmsg		 err;
	char			 secret[256], body[512];
	double			*d, *v, t0, md, mv, ms, me;
	long long		 frame;
	int			 n = atoi(argv[7]), i;
	/* Its own bot per client: two clients at once never contend. */
	const char		*bot = argc > 8 ? argv[8] : "bench";

	if (n < 10 || hc_open(&h, argv[2], argv[3]) != 0 ||
	    token_read_file(argv[5], secret, sizeof secret, 0) != 0)
		return 2;
	memset(&o, 0, sizeof o);
	o.url = argv[4];
	o.secret = secret;
	lws_set_log_level(0, NULL);
	if (gclient_connect(&c, &o, &err) != 0) {
		fprintf(stderr, "connect: %s\n", err.msg);
		return 1;
	}
	/* Open the desktop through the controller; learn its frame. */
	snprintf(body, sizeof body, "{\"computer\":\"%s\",\"bot\":\"%s\"}",
	    argv[6], bot);
	if (hc_req(&h, "POST", "/v1/tools/computer_observe", body, &res) !=
	    200 || (frame = json_integer_value(json_object_get(res,
	    "frame"))) <= 0) {
		fprintf(stderr, "first observe failed\n");
		return 1;
	}
	json_decref(res);
	d = calloc((size_t)n, sizeof *d);
	v = calloc((size_t)n, sizeof *v);
	snprintf(body, sizeof body, "{\"computer\":\"%s\",\"bot\":\"%s\","
	    "\"since_frame\":%lld}", argv[6], bot, frame);
	for (i = 0; i < n; i++) {
		t0 = bench_now_us();
		if (gclient_call(c, "display.observe", json_pack("{s:s, s:I}",
		    "bot", bot, "since_frame", (json_int_t)frame), &res,
		    &err) != 0)
			return 1;
		json_decref(res);
		d[i] = bench_now_us() - t0;
		t0 = bench_now_us();
		if (hc_req(&h, "POST", "/v1/tools/computer_observe", body,
		    NULL) != 200)
			return 1;
		v[i] = bench_now_us() - t0;
	}
	report("guestd display.observe unchanged", d, n, &md);
	report("controller computer_observe unch.", v, n, &mv);
	printf("ratio controller/guestd observe (median): %.2f "
	    "(+%.0fus per call)\n", mv / md, mv - md);
	snprintf(body, sizeof body, "{\"computer\":\"%s\",\"bot\":\"%s\","
	    "\"command\":\"true\"}", argv[6], bot);
	for (i = 0; i < n; i++) {
		t0 = bench_now_us();
		if (gclient_call(c, "exec", json_pack("{s:s}", "command",
		    "true"), &res, &err) != 0)
			return 1;
		json_decref(res);
		d[i] = bench_now_us() - t0;
		t0 = bench_now_us();
		if (hc_req(&h, "POST", "/v1/tools/shell", body, NULL) != 200)
			return 1;
		v[i] = bench_now_us() - t0;
	}
	report("guestd exec `true`", d, n, &me);
	report("controller shell `true`", v, n, &ms);
	printf("ratio controller/guestd exec (median): %.2f "
	    "(+%.0fus per call)\n", ms / me, ms - me);
	gclient_free(c);
	return 0;
}

static int
lease(char **argv)
{
	struct hc	 h;
	json_t		*res = NULL;
	char		 body[512], path[256];
	double		 t0, t1;
	int		 n = atoi(argv[6]), i;

	if (hc_open(&h, argv[2], argv[3]) != 0)
		return 2;
	snprintf(body, sizeof body, "{\"computer\":\"%s\",\"bot\":\"%s\","
	    "\"holder\":\"bench\"}", argv[4], argv[5]);
	t0 = bench_now_us();
	for (i = 0; i < n; i++) {
		if (hc_req(&h, "POST", "/v1/leases", body, &res) != 201)
			return 1;
		snprintf(path, sizeof path, "/v1/leases/%s",
		    json_string_value(json_object_get(res, "id")));
		json_decref(res);
		if (hc_req(&h, "DELETE", path, NULL, NULL) != 200)
			return 1;
	}
	t1 = bench_now_us();
	printf("lease %s: %d acquire+release in %.3fs (%.0f pairs/s)\n",
	    argv[5], n, (t1 - t0) / 1e6, n / ((t1 - t0) / 1e6));
	return 0;
}

struct actor {
	pthread_t	 t;
	char		**argv;
	int		 bot, n, ok;
	double		*lat;
};

static void *
actor_run(void *arg)
{
	struct actor	*a = arg;
	struct hc	*h = calloc(1, sizeof *h);
	char		 body[512];
	double		 t0;
	int		 i;

	if (hc_open(h, a->argv[2], a->argv[3]) != 0)
		return NULL;
	for (i = 0; i < a->n; i++) {
		snprintf(body, sizeof body, "{\"computer\":\"%s\",\"bot\":"
		    "\"bot%d\",\"action\":{\"type\":\"move\",\"x\":%d,"
		    "\"y\":%d}}", a->argv[4], a->bot, 10 + i % 300,
		    10 + a->bot);
		t0 = bench_now_us();
		if (hc_req(h, "POST", "/v1/tools/computer_act", body, NULL) !=
		    200)
			return NULL;
		a->lat[i] = bench_now_us() - t0;
	}
	a->ok = 1;
	close(h->fd);
	free(h);
	return NULL;
}

static int
act(char **argv)
{
	struct actor	*a;
	double		*all, t0, t1, m;
	int		 nb = atoi(argv[5]), n = atoi(argv[6]), i, j, k = 0;

	a = calloc((size_t)nb, sizeof *a);
	all = calloc((size_t)(nb * n), sizeof *all);
	for (i = 0; i < nb; i++) {
		a[i].argv = argv;
		a[i].bot = i;
		a[i].lat = calloc((size_t)n, sizeof(double));
	}
	/* Warm-up: each bot's desktop opens on its first act. */
	for (i = 0; i < nb; i++)
		a[i].n = 1;
	for (i = 0; i < nb; i++)
		pthread_create(&a[i].t, NULL, actor_run, &a[i]);
	for (i = 0; i < nb; i++)
		pthread_join(a[i].t, NULL);
	for (i = 0; i < nb; i++) {
		if (!a[i].ok)
			return 1;
		a[i].n = n;
		a[i].ok = 0;
	}
	t0 = bench_now_us();
	for (i = 0; i < nb; i++)
		pthread_create(&a[i].t, NULL, actor_run, &a[i]);
	for (i = 0; i < nb; i++)
		pthread_join(a[i].t, NULL);
	t1 = bench_now_us();
	for (i = 0; i < nb; i++) {
		if (!a[i].ok)
			return 1;
		for (j = 0; j < n; j++)
			all[k++] = a[i].lat[j];
	}
	report("computer_act move, all bots", all, k, &m);
	printf("%d bots x %d acts at once: %.3fs total, %.0f acts/s\n", nb, n,
	    (t1 - t0) / 1e6, k / ((t1 - t0) / 1e6));
	return 0;
}

static int
ctl_rtt_main(int argc, char **argv)
{
	if ((argc == 8 || argc == 9) && strcmp(argv[1], "overhead") == 0)
		return overhead(argc, argv);
	if (argc == 7 && strcmp(argv[1], "lease") == 0)
		return lease(argv);
	if (argc == 7 && strcmp(argv[1], "act") == 0)
		return act(argv);
	fprintf(stderr, "usage: ctl-rtt overhead CTL-URL TOKEN-FILE GUEST-URL "
	    "SECRET-FILE COMPUTER N [BOT]\n"
	    "       ctl-rtt lease CTL-URL TOKEN-FILE COMPUTER BOT N\n"
	    "       ctl-rtt act CTL-URL TOKEN-FILE COMPUTER NBOTS N\n");
	return 2;
}

/* The body is a task on the client's loop (guest-client.h). */
int
main(int argc, char **argv)
{
	return gclient_main(argc, argv, ctl_rtt_main);
}

/*
 * rakazoctl serve (SPEC C-1): the controller daemon, one thread, one
 * libwebsockets loop.  The loop serves HTTP (bound to loopback by
 * default), reads each request whole (body capped at 1 MiB via
 * LWS_CALLBACK_HTTP_BODY) and runs api_handle() for it as a task
 * (task.h): a tool call that waits for guestd, for a computer to start or
 * for SQLite's write lock hands the loop back, so other bots and other
 * requests go on meanwhile.  guestd connections (guest-client.h, attached
 * mode), descriptors tasks wait on and the store watch all live on the
 * same loop, on a vhost that does not listen.
 *
 * File transfers stream instead (api.h): a PUT .../files task starts as
 * soon as its headers arrived and reads the body from a bounded pipe the
 * HTTP_BODY callbacks fill; at the pipe's high water the connection stops
 * being read (lws_rx_flow_control) until the task drained it below low
 * water, so TCP holds the client back.  A GET .../files reply is written
 * from another pipe, chunks while the socket takes them, as the task
 * refills it.  A reply made before the body ended (a refusal) is sent at
 * once; the rest of the body is read and dropped, then the connection
 * closes.
 *
 * Timers, all lws sul on the loop:
 *  - maintenance, every reconcile period: the reconciler (C-7) and the
 *    idle stop (C-6), as one task;
 *  - capability expiry (C-3, G-20): set for the earliest expiry of a lease
 *    holding capabilities; when it fires a task revokes the dead ones at
 *    guestd and the timer is set for the next.  A request that stores a new
 *    capability moves it earlier through api.cap_deadline.  It also fires
 *    at start-up (a previous process's leases may have lapsed) and at least
 *    every reconcile period (other processes grant too).
 *
 * Other rakazoctl processes write the same state.db; an inotify watch on
 * DATA_DIR turns their writes into a wake-up for activity long polls
 * (G-30), so a follower sees every process's events without polling.
 *
 * Start-up refuses to run without a bearer token or a data directory: a
 * missing credential is a setup failure, never a silent fallback (C-1).
 */
#include "autoconf.h"

#include <sys/inotify.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <libwebsockets.h>

#include "config.h"
#include "err.h"
#include "json.h"
#include "log.h"
#include "token.h"
#include "activity.h"
#include "api.h"
#include "cli.h"
#include "guest-client.h"
#include "provider.h"
#include "run.h"
#include "store.h"
#include "task.h"
#include "xfer.h"

#define SERVE_MAX_JOBS		64
#define SERVE_WATCH_PROTOCOL	"rakazo-serve-watch"
/* A streaming client that neither sends nor reads for this long goes. */
#define SERVE_STREAM_IDLE_S	60
#define SERVE_CHUNK		(64 * 1024)

struct serve_job {
	struct lws		*wsi;		/* NULL once the peer left */
	int			 running, done;
	int			 gone;		/* the peer left */
	char			 method[8];
	char			*path, *query, *auth;
	char			*body;
	size_t			 len, cap;
	int			 too_large;
	int64_t			 length;	/* Content-Length; -1 none */
	struct api_resp		 resp;
	/* Streaming (api.h): a PUT's body, a GET's reply. */
	int			 streamin;	/* the body goes through in */
	int			 body_done;	/* all of it arrived */
	int			 rx_paused;	/* in is full: not reading */
	int			 replied;	/* answered before body_done */
	struct xfer		 in, out;
	int			 streaming;	/* the reply comes from out */
	int			 hdr_sent;
	int64_t			 out_left;
};

struct serve_pss {
	struct serve_job	*job;
};

static struct lws_context	*serve_ctx;
static struct lws_vhost		*serve_inner;	/* clients, fds, watch */
static struct api		 serve_api;
static volatile sig_atomic_t	 serve_stop;
static int64_t			 serve_tick_ms;
static unsigned			 serve_njobs;

/* The capability expiry timer. */
static lws_sorted_usec_list_t	 serve_sweep_sul;
static int64_t			 serve_sweep_at;	/* armed for; 0 none */
static int			 serve_sweep_running;

/* The maintenance timer. */
static lws_sorted_usec_list_t	 serve_maint_sul;
static int			 serve_maint_running;

static void
serve_job_free(struct serve_job *j)
{
	free(j->path);
	free(j->query);
	if (j->auth != NULL) {
		token_wipe(j->auth, strlen(j->auth));
		free(j->auth);
	}
	free(j->body);
	free(j->resp.body);
	xfer_release(&j->in);
	xfer_release(&j->out);
	free(j);
	serve_njobs--;
}

/* Read the body again (in drained below low water, or no one reads it). */
static void
serve_rx_resume(struct serve_job *j)
{
	if (!j->rx_paused || j->wsi == NULL)
		return;
	j->rx_paused = 0;
	lws_rx_flow_control(j->wsi, 1);
	lws_set_timeout(j->wsi, PENDING_TIMEOUT_HTTP_CONTENT,
	    SERVE_STREAM_IDLE_S);
}

/* in.on_room */
static void
serve_in_room(void *arg)
{
	serve_rx_resume(arg);
}

/* out.on_data: bytes (or the end) for a streamed reply. */
static void
serve_out_data(void *arg)
{
	struct serve_job	*j = arg;

	if (j->wsi != NULL && j->streaming)
		lws_callback_on_writable(j->wsi);
}

/* api_req.respond: the task set a streamed reply's status and length. */
static void
serve_respond(void *arg)
{
	struct serve_job	*j = arg;

	j->streaming = 1;
	j->out_left = j->resp.stream_len;
	if (j->wsi != NULL)
		lws_callback_on_writable(j->wsi);
}

/* The request's task. */
static void
serve_job_run(void *arg)
{
	struct serve_job	*j = arg;
	struct api_req		 q;

	memset(&q, 0, sizeof q);
	q.method = j->method;
	q.path = j->path;
	q.query = j->query;
	q.auth = j->auth;
	q.body = j->body;
	q.bodylen = j->len;
	q.too_large = j->too_large;
	q.length = j->length;
	q.in = j->streamin ? &j->in : NULL;
	q.out = &j->out;
	q.respond = serve_respond;
	q.respond_arg = j;
	q.peer_gone = &j->gone;
	api_handle(&serve_api, &q, &j->resp);
	j->done = 1;
	if (j->wsi == NULL) {
		serve_job_free(j);	/* the peer left meanwhile */
		return;
	}
	/* What is left of a body is read and dropped from now on. */
	serve_rx_resume(j);
	lws_callback_on_writable(j->wsi);
}

/* A reply written by the loop itself (busy), no task involved. */
static void
serve_local_error(struct serve_job *j, int code)
{
	json_t	*e;

	e = json_pack("{s:{s:s, s:s}}", "error", "code", err_name(code),
	    "message", err_message(code));
	j->resp.status = api_status(code);
	j->resp.body = jsonx_dump(e, &j->resp.len);
	json_decref(e);
	j->done = 1;
}

static char *
serve_hdr(struct lws *wsi, enum lws_token_indexes h)
{
	int	 n = lws_hdr_total_length(wsi, h);
	char	*s;

	if (n <= 0)
		return xstrdup("");
	s = xmalloc((size_t)n + 2);
	if (lws_hdr_copy(wsi, s, n + 1, h) < 0)
		s[0] = '\0';
	return s;
}

/*
 * The query string: lws keeps each argument as a fragment, already
 * %-decoded, and lws_hdr_copy() joins them without their '&', so join
 * them here.  A '%' or '&' inside an argument (a file name) is encoded
 * again so the joined string splits back the same way.
 */
static char *
serve_query(struct lws *wsi)
{
	int	 n = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS);
	int	 i, k, c;
	size_t	 len = 0, cap;
	char	*s, *frag;

	if (n <= 0)
		return xstrdup("");
	/* Each byte may become three, each fragment adds a separator. */
	cap = (size_t)n * 4 + 2;
	s = xmalloc(cap);
	frag = xmalloc((size_t)n + 2);
	for (i = 0; ; i++) {
		k = lws_hdr_copy_fragment(wsi, frag, n + 2,
		    WSI_TOKEN_HTTP_URI_ARGS, i);
		if (k < 0)
			break;
		if (len > 0 && len < cap - 1)
			s[len++] = '&';
		for (c = 0; c < k && len + 3 < cap; c++) {
			if (frag[c] == '%' || frag[c] == '&') {
				len += (size_t)snprintf(s + len, cap - len,
				    "%%%02X", (unsigned char)frag[c]);
				continue;
			}
			s[len++] = frag[c];
		}
	}
	s[len] = '\0';
	free(frag);
	return s;
}

static struct serve_job *
serve_job_new(struct lws *wsi, const char *uri)
{
	struct serve_job	*j;
	static const struct {
		enum lws_token_indexes	 h;
		const char		*m;
	} methods[] = {
		{ WSI_TOKEN_GET_URI, "GET" }, { WSI_TOKEN_POST_URI, "POST" },
		{ WSI_TOKEN_DELETE_URI, "DELETE" }, { WSI_TOKEN_PUT_URI, "PUT" },
	};
	size_t			 i;

	j = xcalloc(1, sizeof *j);
	serve_njobs++;
	j->wsi = wsi;
	for (i = 0; i < sizeof methods / sizeof methods[0]; i++)
		if (lws_hdr_total_length(wsi, methods[i].h) > 0) {
			snprintf(j->method, sizeof j->method, "%s",
			    methods[i].m);
			break;
		}
	j->path = xstrdup(uri);
	j->query = serve_query(wsi);
	j->auth = serve_hdr(wsi, WSI_TOKEN_HTTP_AUTHORIZATION);
	j->length = -1;
	xfer_init(&j->in, API_PIPE_IN_HIGH);
	j->in.on_room = serve_in_room;
	j->in.on_room_arg = j;
	xfer_init(&j->out, API_PIPE_OUT_HIGH);
	j->out.on_data = serve_out_data;
	j->out.on_data_arg = j;
	return j;
}

static void
serve_start(struct serve_job *j)
{
	if (task_spawn(serve_job_run, j) == 0)
		j->running = 1;
	else {
		serve_local_error(j, ERR_BUSY);
		lws_callback_on_writable(j->wsi);
	}
}

/* The job is answered and gone; the connection may carry the next. */
static int
serve_finish(struct lws *wsi, struct serve_pss *pss)
{
	serve_job_free(pss->job);
	pss->job = NULL;
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

static int
serve_stream_headers(struct lws *wsi, struct serve_job *j)
{
	unsigned char	 hdr[LWS_PRE + 512], *p, *end;

	p = hdr + LWS_PRE;
	end = hdr + sizeof hdr - 1;
	if (lws_add_http_common_headers(wsi, (unsigned)j->resp.status,
	    "application/octet-stream", (lws_filepos_t)j->resp.stream_len,
	    &p, end) ||
	    lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL,
	    (const unsigned char *)"no-store", 8, &p, end) ||
	    lws_finalize_write_http_header(wsi, hdr + LWS_PRE, &p, end))
		return -1;
	j->hdr_sent = 1;
	return 0;
}

/*
 * A streamed reply: the headers, then chunks of out while the socket takes
 * them.  An empty pipe waits for the task (out.on_data asks for writable
 * again); a pipe that broke, or a task that ended short, closes the
 * connection so the client sees fewer bytes than the Content-Length.
 */
static int
serve_write_stream(struct lws *wsi, struct serve_pss *pss)
{
	static unsigned char	 buf[LWS_PRE + SERVE_CHUNK];
	struct serve_job	*j = pss->job;
	size_t			 want, n;

	if (!j->hdr_sent && serve_stream_headers(wsi, j) != 0)
		return -1;
	while (j->out_left > 0) {
		want = j->out_left < SERVE_CHUNK ? (size_t)j->out_left :
		    SERVE_CHUNK;
		if ((n = xfer_get(&j->out, buf + LWS_PRE, want)) == 0) {
			if (j->out.broken != 0 || j->out.end || j->done)
				return -1;
			/* Our side is slow, not the client. */
			lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
			return 0;
		}
		j->out_left -= (int64_t)n;
		if (lws_write(wsi, buf + LWS_PRE, n, j->out_left == 0 ?
		    LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) < (int)n)
			return -1;
		if (j->out_left > 0 && lws_send_pipe_choked(wsi)) {
			lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT,
			    SERVE_STREAM_IDLE_S);
			lws_callback_on_writable(wsi);
			return 0;
		}
	}
	if (!j->done)
		return 0;	/* the task's end asks for writable again */
	return serve_finish(wsi, pss);
}

static int
serve_write(struct lws *wsi, struct serve_pss *pss)
{
	struct serve_job	*j = pss->job;
	unsigned char		 hdr[LWS_PRE + 512], *p, *end, *buf;
	int			 r;

	if (j == NULL)
		return 0;
	if (j->streaming)
		return serve_write_stream(wsi, pss);
	if (!j->done || j->replied)
		return 0;
	p = hdr + LWS_PRE;
	end = hdr + sizeof hdr - 1;
	if (lws_add_http_common_headers(wsi, (unsigned)j->resp.status,
	    "application/json", (lws_filepos_t)j->resp.len, &p, end) ||
	    lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL,
	    (const unsigned char *)"no-store", 8, &p, end) ||
	    lws_finalize_write_http_header(wsi, hdr + LWS_PRE, &p, end))
		return -1;
	buf = xmalloc(LWS_PRE + j->resp.len + 1);
	memcpy(buf + LWS_PRE, j->resp.body, j->resp.len);
	/* lws keeps whatever the socket did not take and sends it later. */
	r = lws_write(wsi, buf + LWS_PRE, j->resp.len, LWS_WRITE_HTTP_FINAL);
	free(buf);
	if (r < 0)
		return -1;
	if (j->streamin && !j->body_done) {
		/*
		 * Answered before the body ended (a refusal): read and drop
		 * the rest, then close, so the client reads this reply
		 * instead of a reset.  curl stops sending when it sees it.
		 */
		j->replied = 1;
		lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT,
		    SERVE_STREAM_IDLE_S);
		return 0;
	}
	return serve_finish(wsi, pss);
}

/* ---- capability expiry ------------------------------------------------- */

static void	serve_sweep_fire(lws_sorted_usec_list_t *sul);

/* Make the timer fire by at (ms, store clock). */
static void
serve_sweep_arm(int64_t at)
{
	int64_t	 now = store_now_ms();

	if (at <= 0 || at > now + serve_tick_ms)
		at = now + serve_tick_ms;
	if (serve_sweep_at != 0 && serve_sweep_at <= at)
		return;
	serve_sweep_at = at;
	/* +1 ms: the sweep compares expires_ms <= now. */
	lws_sul_schedule(serve_ctx, 0, &serve_sweep_sul, serve_sweep_fire,
	    (at > now ? at - now + 1 : 1) * LWS_US_PER_MS);
}

static void
serve_sweep_task(void *arg)
{
	int64_t	 next = 0;
	int	 n = 0;

	(void)arg;
	if (api_cap_sweep(&serve_api, &n, &next) == 0 && n > 0)
		log_info("control.expired", "revoked=%d", n);
	serve_sweep_running = 0;
	serve_sweep_arm(next);
}

static void
serve_sweep_fire(lws_sorted_usec_list_t *sul)
{
	(void)sul;
	serve_sweep_at = 0;
	if (serve_sweep_running)
		return;		/* its end re-arms */
	if (task_spawn(serve_sweep_task, NULL) == 0)
		serve_sweep_running = 1;
	else
		serve_sweep_arm(0);
}

/* api.cap_deadline: a request stored a capability expiring at at_ms. */
static void
serve_cap_deadline(int64_t at_ms)
{
	serve_sweep_arm(at_ms);
}

/* ---- maintenance ------------------------------------------------------ */

static void	serve_maint_fire(lws_sorted_usec_list_t *sul);

static void
serve_maint_task(void *arg)
{
	int	 changed, stopped;

	(void)arg;
	if (api_reconcile(&serve_api, &changed) == 0 && changed > 0)
		log_info("reconcile", "changed=%d", changed);
	(void)api_idle_sweep(&serve_api, &stopped);
	serve_maint_running = 0;
	lws_sul_schedule(serve_ctx, 0, &serve_maint_sul, serve_maint_fire,
	    serve_tick_ms * LWS_US_PER_MS);
}

static void
serve_maint_fire(lws_sorted_usec_list_t *sul)
{
	(void)sul;
	if (serve_maint_running)
		return;
	if (task_spawn(serve_maint_task, NULL) == 0)
		serve_maint_running = 1;
	else
		lws_sul_schedule(serve_ctx, 0, &serve_maint_sul,
		    serve_maint_fire, serve_tick_ms * LWS_US_PER_MS);
}

/* ---- the HTTP side ---------------------------------------------------- */

/*
 * Over SERVE_MAX_JOBS requests in progress: answer 503 BUSY at once, in
 * the API's error shape, without allocating a job, and close.
 */
static void
serve_refuse_busy(struct lws *wsi)
{
	unsigned char	 buf[LWS_PRE + 768], *p, *end;
	char		 body[256];
	int		 n;

	n = snprintf(body, sizeof body, "{\"error\":{\"code\":\"%s\","
	    "\"message\":\"%s\"}}", err_name(ERR_BUSY),
	    err_message(ERR_BUSY));
	p = buf + LWS_PRE;
	end = buf + sizeof buf - 1;
	if (lws_add_http_common_headers(wsi, HTTP_STATUS_SERVICE_UNAVAILABLE,
	    "application/json", (lws_filepos_t)n, &p, end) ||
	    lws_finalize_http_header(wsi, &p, end))
		return;
	memcpy(p, body, (size_t)n);
	p += n;
	(void)lws_write(wsi, buf + LWS_PRE, (size_t)(p - (buf + LWS_PRE)),
	    LWS_WRITE_HTTP_FINAL);
}

/*
 * "Expect: 100-continue" (curl sends it for large bodies): lws does not
 * answer it, and the client would wait a second before sending.
 */
static int
serve_continue(struct lws *wsi)
{
	static const char	 msg[] = "HTTP/1.1 100 Continue\r\n\r\n";
	unsigned char		 buf[LWS_PRE + sizeof msg];
	char			 v[32];

	if (lws_hdr_copy(wsi, v, sizeof v, WSI_TOKEN_HTTP_EXPECT) <= 0 ||
	    strcasecmp(v, "100-continue") != 0)
		return 0;
	memcpy(buf + LWS_PRE, msg, sizeof msg - 1);
	return lws_write(wsi, buf + LWS_PRE, sizeof msg - 1, LWS_WRITE_RAW) <
	    (int)(sizeof msg - 1) ? -1 : 0;
}

/* HTTP_BODY of a streamed body: into the pipe, or dropped once answered. */
static int
serve_body_stream(struct lws *wsi, struct serve_job *j, const void *in,
    size_t len)
{
	if (j->done || j->replied)
		return 0;
	xfer_put(&j->in, in, len);
	if (xfer_full(&j->in) && !j->rx_paused) {
		j->rx_paused = 1;
		lws_rx_flow_control(wsi, 0);
		/* Waiting for guestd is not the client's fault. */
		lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
	} else if (!j->rx_paused)
		lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT,
		    SERVE_STREAM_IDLE_S);
	return 0;
}

static int
serve_http_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	struct serve_pss	*pss = user;
	struct serve_job	*j;
	char			 cl[32];
	long long		 n;

	switch (reason) {
	case LWS_CALLBACK_HTTP:
		if (pss->job != NULL)
			return -1;
		if (serve_njobs >= SERVE_MAX_JOBS) {
			serve_refuse_busy(wsi);
			return -1;
		}
		j = serve_job_new(wsi, (const char *)in);
		pss->job = j;
		n = -1;
		if (lws_hdr_copy(wsi, cl, sizeof cl,
		    WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0)
			n = strtoll(cl, NULL, 10);
		j->length = n;
		if (api_files_streams_body(j->method, j->path)) {
			/* The task reads the body as it comes. */
			j->streamin = 1;
			if (n <= 0) {
				j->body_done = 1;
				xfer_end(&j->in);
			}
			lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT,
			    SERVE_STREAM_IDLE_S);
			if (n > 0 && serve_continue(wsi) != 0)
				return -1;
			serve_start(j);
			return 0;
		}
		if (n > API_MAX_BODY)
			j->too_large = 1;
		/* Bodies come through HTTP_BODY; the rest runs now. */
		if (strcmp(j->method, "GET") == 0 || n <= 0)
			serve_start(j);
		return 0;
	case LWS_CALLBACK_HTTP_BODY:
		if ((j = pss->job) == NULL)
			return -1;
		if (j->streamin)
			return serve_body_stream(wsi, j, in, len);
		if (j->too_large || j->len + len > API_MAX_BODY) {
			/* Read and drop the rest so the 413 reaches them. */
			j->too_large = 1;
			return 0;
		}
		if (j->len + len > j->cap) {
			j->cap = (j->len + len) * 2;
			if (j->cap > API_MAX_BODY)
				j->cap = API_MAX_BODY;
			j->body = xrealloc(j->body, j->cap);
		}
		memcpy(j->body + j->len, in, len);
		j->len += len;
		return 0;
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		if ((j = pss->job) != NULL && j->streamin) {
			j->body_done = 1;
			xfer_end(&j->in);
			lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
			/* Answered early: nothing is left unread now. */
			return j->replied ? -1 : 0;
		}
		if (j == NULL || j->running || j->done)
			return -1;
		serve_start(j);
		return 0;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return serve_write(wsi, pss);
	case LWS_CALLBACK_CLOSED_HTTP:
		if ((j = pss->job) == NULL)
			return 0;
		pss->job = NULL;
		if (j->running && !j->done) {
			j->wsi = NULL;	/* the task frees it */
			/* A long poll ends now instead of at its wait_ms. */
			j->gone = 1;
			activity_notify();
			/* A short body is refused by guestd; a reply stops. */
			xfer_break(&j->in, ERR_PEER_GONE);
			xfer_break(&j->out, ERR_PEER_GONE);
		} else
			serve_job_free(j);
		return 0;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		return 0;	/* a signal: the loop checks serve_stop */
	default:
		break;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

/* ---- the store watch ---------------------------------------------------- */

/*
 * inotify on DATA_DIR: a write to state.db or its WAL by any process wakes
 * the activity long polls, which then read the table again.
 */
static int
serve_watch_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	char			 buf[4096]
			    __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	ssize_t			 n;
	size_t			 off;
	int			 hit = 0;

	(void)user;
	(void)in;
	(void)len;
	if (reason != LWS_CALLBACK_RAW_RX_FILE)
		return 0;
	while ((n = read(lws_get_socket_fd(wsi), buf, sizeof buf)) > 0)
		for (off = 0; off + sizeof *ev <= (size_t)n;
		    off += sizeof *ev + ev->len) {
			ev = (const struct inotify_event *)(buf + off);
			if (ev->len > 0 && strncmp(ev->name, "state.db",
			    8) == 0)
				hit = 1;
		}
	if (hit)
		activity_notify();
	return 0;
}

static int
serve_watch_start(const char *data_dir)
{
	lws_adopt_desc_t	 ad;
	int			 fd;

	if ((fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) == -1)
		return err_from_errno(errno);
	if (inotify_add_watch(fd, data_dir, IN_MODIFY) == -1) {
		close(fd);
		return err_from_errno(errno);
	}
	memset(&ad, 0, sizeof ad);
	ad.vh = serve_inner;
	ad.type = LWS_ADOPT_RAW_FILE_DESC;
	ad.fd.filefd = fd;
	ad.vh_prot_name = SERVE_WATCH_PROTOCOL;
	return lws_adopt_descriptor_vhost_via_info(&ad) != NULL ? 0 :
	    ERR_INTERNAL;
}

static const struct lws_protocols serve_protocols[] = {
	{ "http", serve_http_cb, sizeof(struct serve_pss), 0, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

static struct lws_protocols serve_inner_protocols[4];

static void
serve_on_signal(int sig)
{
	(void)sig;
	serve_stop = 1;
	if (serve_ctx != NULL)
		lws_cancel_service(serve_ctx);
}

/* ---- start-up ----------------------------------------------------------- */

/*
 * The context and the inner vhost: guestd clients, task fds and the store
 * watch.  The API's listening vhost comes later, after the reconciler.
 */
static int
serve_loop_new(void)
{
	struct lws_context_creation_info	 info;

	serve_inner_protocols[0] = gclient_protocol;
	serve_inner_protocols[1] = task_fd_protocol;
	serve_inner_protocols[2] = (struct lws_protocols){
		SERVE_WATCH_PROTOCOL, serve_watch_cb, 0, 0, 0, NULL, 0 };
	memset(&serve_inner_protocols[3], 0, sizeof serve_inner_protocols[3]);
	memset(&info, 0, sizeof info);
	info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
	/* Socket reads of 64 KiB, not 4: streamed uploads cost less. */
	info.pt_serv_buf_size = 64 * 1024;
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = serve_inner_protocols;
	info.gid = -1;
	info.uid = -1;
	if ((serve_ctx = lws_create_context(&info)) == NULL)
		return ERR_INTERNAL;
	info.vhost_name = "inner";
	if ((serve_inner = lws_create_vhost(serve_ctx, &info)) == NULL)
		return ERR_INTERNAL;
	task_init(serve_ctx, serve_inner);
	return 0;
}

static int
serve_usage(FILE *f)
{
	fprintf(f, "usage: rakazoctl serve --data-dir DIR (--token-file F | "
	    "RAKAZO_API_TOKEN) [--listen ADDR:PORT] [--provider NAME]\n"
	    "       [--idle-ms N] [--reconcile-ms N] [--guestd PATH] "
	    "[--guest-user NAME] [--ready-file F] [--log-level L]\n");
	return CLI_EXIT_USAGE;
}

static int
serve_write_ready(const char *path, int port)
{
	char	 line[16];
	int	 fd, n, r = 0;

	/* Non-blocking: a FIFO without a reader must not hang start-up. */
	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK,
	    0644)) == -1)
		return -1;
	n = snprintf(line, sizeof line, "%d\n", port);
	if (write(fd, line, (size_t)n) != n)
		r = -1;
	close(fd);
	return r;
}

static int
serve_main(int argc, char **argv)
{
	const char	*listen_s = "127.0.0.1:8420", *data_dir = NULL;
	const char	*token_file = NULL, *provider = "local";
	const char	*guestd = "guestd", *guest_user = "nobody";
	const char	*ready = NULL, *level = "info";
	const char	*uid_range = "200000-299999";
	int64_t		 idle_ms = 1800000, reconcile_ms = 30000;
	int		 shared_ok = 0;
	const struct config_opt opts[] = {
		{ "listen", "RAKAZO_LISTEN", CONFIG_STR, &listen_s, 0, 0,
		  "ADDR:PORT (default 127.0.0.1:8420)" },
		{ "data-dir", "DATA_DIR", CONFIG_STR, &data_dir, 0, 0,
		  "state and computers live here" },
		{ "token-file", "RAKAZO_API_TOKEN_FILE", CONFIG_STR,
		  &token_file, 0, 0, "bearer token file (mode 0600)" },
		{ "provider", "SANDBOX_PROVIDER", CONFIG_STR, &provider, 0, 0,
		  "local, fake or none" },
		{ "idle-ms", "SANDBOX_IDLE_MS", CONFIG_INT, &idle_ms, 0,
		  INT64_C(1) << 40, "stop idle computers after (0: never)" },
		{ "reconcile-ms", "RAKAZO_RECONCILE_MS", CONFIG_INT,
		  &reconcile_ms, 100, 86400000, "reconciler period" },
		{ "guestd", "RAKAZO_GUESTD", CONFIG_STR, &guestd, 0, 0,
		  "guestd binary for the local provider" },
		{ "guest-user", "RAKAZO_GUEST_USER", CONFIG_STR, &guest_user,
		  0, 0, "user guestd becomes when we are root and the uid "
		  "range is off" },
		{ "local-uid-range", "LOCAL_UID_RANGE", CONFIG_STR, &uid_range,
		  0, 0, "LO-HI: as root, a uid of its own per local computer "
		  "(default 200000-299999; off: all as --guest-user)" },
		{ "allow-shared-user", "RAKAZO_ALLOW_SHARED_USER",
		  CONFIG_BOOL, &shared_ok, 0, 0, "accept several local "
		  "computers running as one user (not isolated)" },
		{ "ready-file", NULL, CONFIG_STR, &ready, 0, 0,
		  "write the bound port here once listening" },
		{ "log-level", "RAKAZO_LOG_LEVEL", CONFIG_STR, &level, 0, 0,
		  "error, warn, info or debug" },
	};
	struct lws_context_creation_info info;
	struct provider_config	 pc;
	struct provider		*prov = NULL;
	struct store		*s = NULL;
	struct lws_vhost	*vh;
	char			 err[512], host[256], tok[SECRET_MAX + 1];
	const char		*envtok;
	int			 next, port, r, lvl, changed;
	int			 status = CLI_EXIT_ERROR;

	if (argc > 1 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		serve_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (config_parse(opts, sizeof opts / sizeof opts[0], argc, argv,
	    &next, err, sizeof err) != 0) {
		cli_error("%s", err);
		return serve_usage(stderr);
	}
	if (next != argc)
		return serve_usage(stderr);
	if ((lvl = log_level_parse(level)) < 0) {
		cli_error("CONFIG_INVALID: --log-level %s is not a level",
		    level);
		return CLI_EXIT_USAGE;
	}
	log_init("rakazoctl", (enum log_level)lvl);
	if (data_dir == NULL || *data_dir == '\0') {
		cli_error("CONFIG_INVALID: no data directory: give --data-dir "
		    "DIR or DATA_DIR");
		return CLI_EXIT_USAGE;
	}
	/* The API token: a file, else the environment; never a default. */
	if (token_file != NULL) {
		if (token_read_file(token_file, tok, sizeof tok, 1) != 0) {
			cli_error("CONFIG_INVALID: cannot use the token file "
			    "(missing, empty, or readable by others)");
			return CLI_EXIT_USAGE;
		}
	} else if ((envtok = getenv("RAKAZO_API_TOKEN")) != NULL &&
	    *envtok != '\0' && strlen(envtok) <= SECRET_MAX) {
		snprintf(tok, sizeof tok, "%s", envtok);
		unsetenv("RAKAZO_API_TOKEN");
	} else {
		cli_error("CONFIG_INVALID: no API token: give --token-file F "
		    "or RAKAZO_API_TOKEN; the controller never runs without "
		    "one");
		return CLI_EXIT_USAGE;
	}
	if (config_parse_hostport(listen_s, host, sizeof host, &port) != 0) {
		cli_error("CONFIG_INVALID: --listen wants ADDR:PORT");
		return CLI_EXIT_USAGE;
	}
	/* state.db, secrets and logs are ours alone. */
	umask(077);
	if (mkdir(data_dir, 0700) == -1 && errno != EEXIST) {
		cli_error("IO_ERROR: cannot create the data directory: %s",
		    strerror(errno));
		return CLI_EXIT_ERROR;
	}
	/* The loop first: providers attach their guestd clients to it. */
	if ((r = serve_loop_new()) != 0) {
		cli_error("%s: cannot create the event loop", err_name(r));
		goto out;
	}
	memset(&pc, 0, sizeof pc);
	pc.data_dir = data_dir;
	pc.guestd = guestd;
	pc.guest_user = guest_user;
	pc.uid_range = uid_range;
	pc.allow_shared_user = shared_ok != 0;
	pc.ctx = serve_ctx;
	pc.vhost = serve_inner;
	if (provider_new(&prov, provider, &pc, err, sizeof err) != 0) {
		cli_error("CONFIG_INVALID: %s", err);
		status = CLI_EXIT_USAGE;
		goto out;
	}
	/* Open (and migrate) now so a broken store stops start-up. */
	if ((r = store_open(&s, data_dir, err, sizeof err)) != 0) {
		cli_error("%s: %s", err_name(r), err);
		goto out;
	}
	store_free(s);
	serve_api.store_url = data_dir;
	serve_api.lock_dir = data_dir;
	serve_api.prov = prov;
	serve_api.token = tok;
	serve_api.idle_ms = idle_ms;
	serve_api.cap_deadline = serve_cap_deadline;
	serve_tick_ms = reconcile_ms;
	if (idle_ms > 0 && idle_ms / 4 < serve_tick_ms)
		serve_tick_ms = idle_ms / 4 > 100 ? idle_ms / 4 : 100;
	/* C-7: rows match reality before the first request. */
	if ((r = api_reconcile(&serve_api, &changed)) != 0) {
		cli_error("%s: the start-up reconciler failed", err_name(r));
		goto out;
	}
	log_info("reconcile", "changed=%d at=start", changed);

	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, serve_on_signal);
	signal(SIGINT, serve_on_signal);
	if (serve_watch_start(data_dir) != 0)
		log_warn("serve.watch", "cannot watch the data directory: "
		    "activity long polls see only this process's events");
	memset(&info, 0, sizeof info);
	info.port = port;
	info.iface = host;
	info.protocols = serve_protocols;
	info.vhost_name = "api";
	/* MACHINE-NOTES: iface is ignored while IPv6 is on. */
	info.options = LWS_SERVER_OPTION_DISABLE_IPV6;
	if ((vh = lws_create_vhost(serve_ctx, &info)) == NULL) {
		cli_error("CONNECT_FAILED: cannot listen on %s", listen_s);
		goto out;
	}
	port = lws_get_vhost_listen_port(vh);
	log_info("serve.listening", "addr=%s port=%d provider=%s data_dir=%s",
	    host, port, provider_name(prov), data_dir);
	if (ready != NULL && serve_write_ready(ready, port) != 0) {
		cli_error("IO_ERROR: cannot write the ready file");
		goto out;
	}
	lws_sul_schedule(serve_ctx, 0, &serve_maint_sul, serve_maint_fire,
	    serve_tick_ms * LWS_US_PER_MS);
	/* Now: capabilities of leases that lapsed while no one watched. */
	serve_sweep_arm(store_now_ms());
	while (!serve_stop)
		if (lws_service(serve_ctx, 0) < 0)
			break;
	status = CLI_EXIT_OK;
out:
	/*
	 * Computers keep running: a restarted controller reconnects.  Tasks
	 * still waiting (long polls, commands) end with the process; nothing
	 * resumes them while the context goes.
	 */
	task_shutdown();
	if (serve_ctx != NULL) {
		lws_sul_cancel(&serve_maint_sul);
		lws_sul_cancel(&serve_sweep_sul);
		lws_context_destroy(serve_ctx);
	}
	serve_ctx = NULL;
	token_wipe(tok, sizeof tok);
	provider_free(prov);
	return status;
}

const struct cli_cmd cli_serve_entry = {
	"serve", "--data-dir DIR --token-file F [--listen ADDR:PORT] "
	    "[--provider local|fake|none]", serve_main
};

/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl serve (doc/DESIGN.md C-1): the controller daemon, one thread, one
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
 * Intake (serve_intake, serve-req.c) happens when a request's headers are
 * complete and before anything is spent on it: the token, the slot and the
 * Content-Length are checked there, and a refusal closes the connection
 * without reading the body.  A body then has a deadline (serve_body_fire),
 * and lws's own timeouts bound a connection that never completes its
 * headers; see "Limits" in rakazoctl(1).
 *
 * Timers, all lws sul on the loop:
 *  - maintenance, every reconcile period: the reconciler (C-7) and the
 *    idle stop (C-6) of sweep.h, as one task;
 *  - capability expiry (C-3, G-20): set for the earliest expiry of a lease
 *    holding capabilities; when it fires a task revokes the dead ones at
 *    guestd (sweep_caps()) and the timer is set for the next.  A request
 *    that stores a new capability moves it earlier through
 *    api.cap_deadline.  It also fires
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
#include <sys/resource.h>
#include <sys/socket.h>
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
#include "conncap.h"
#include "conncap-lws.h"
#include "err.h"
#include "http-head.h"
#include "json.h"
#include "log.h"
#include "token.h"
#include "activity.h"
#include "checkpoint.h"
#include "curl-loop.h"
#include "home-object.h"
#include "s3.h"
#include "seal-key.h"
#include "api.h"
#include "cli.h"
#include "guest-client.h"
#include "guest.h"
#include "provider.h"
#include "run-record.h"
#include "serve-req.h"
#include "store.h"
#include "sweep.h"
#include "task.h"
#include "bytepipe.h"
#include "xmalloc.h"

/*
 * Capacity (see "Limits" in rakazoctl(1)).  A request takes a slot only
 * once its headers are complete and its token is right: a peer without
 * the token is answered 401 at header time, its body never read, so it
 * never holds anything an authenticated client needs.
 */
#define SERVE_MAX_JOBS		64	/* authenticated requests at once */
#define SERVE_MAX_PUBLIC	8	/* health checks at once */
#define SERVE_MAX_CONNS		512	/* API connections, also bounded by fds */
/*
 * Who holds those connections (conncap.h): one peer address at most
 * SERVE_PEER_CONNS, and SERVE_MAX_JOBS places kept for connections that
 * showed the token.  A newcomer past either bound sheds the oldest
 * connection that has not (of its own address first), so a flood of
 * idle or half-sent connections pushes out only itself.
 */
#define SERVE_PEER_CONNS	128
/*
 * lws timeouts.  lws gives a new connection a header table at once, so the
 * header timeout runs from the connection's opening, silent or not; the
 * idle one bounds a pause within a body and a reply nobody reads.
 */
#define SERVE_IDLE_S		5
#define SERVE_ATTACH_MAX	(25 * 1024 * 1024)
#define SERVE_HEADER_MS		10000	/* --header-timeout-ms */
#define SERVE_KEEPALIVE_S	5
/* A streamed body brings this much per body-timeout window, or is cut. */
#define SERVE_BODY_MIN		(64 * 1024)
#define SERVE_WATCH_PROTOCOL	"rakazo-serve-watch"
#define SERVE_NOTES_PROTOCOL	"rakazo-serve-notes"
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
	int			 public;	/* counted in serve_npublic */
	/* The body deadline (serve_body_fire). */
	lws_sorted_usec_list_t	 body_sul;
	lws_sorted_usec_list_t	 peer_sul;	/* has the client left? */
	int64_t			 win_bytes;	/* body bytes this window */
	int			 expired;	/* too slow: answered, closing */
	struct api_resp		 resp;
	/* Streaming (api.h): a PUT's body, a GET's reply. */
	int			 streamin;	/* the body goes through in */
	int			 body_done;	/* all of it arrived */
	int			 rx_paused;	/* in is full: not reading */
	int			 replied;	/* answered before body_done */
	struct bytepipe		 in, out;
	int			 streaming;	/* the reply comes from out */
	int			 hdr_sent;
	int64_t			 out_left;
};

static struct lws_context	*serve_ctx;
static struct lws_vhost		*serve_inner;	/* clients, fds, watch */
static struct api		 serve_api;
static volatile sig_atomic_t	 serve_stop;
static int64_t			 serve_tick_ms;
static unsigned			 serve_njobs, serve_npublic;
static unsigned			 serve_nconns, serve_max_conns;
static struct conncap		*serve_cap;
static int64_t			 serve_body_ms;

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
	bytepipe_release(&j->in);
	bytepipe_release(&j->out);
	lws_sul_cancel(&j->body_sul);
	lws_sul_cancel(&j->peer_sul);
	if (j->public)
		serve_npublic--;
	else
		serve_njobs--;
	free(j);
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

/* A reply written by the loop itself (busy, too slow), no task involved. */
static void
serve_local_error(struct serve_job *j, int status, int code)
{
	json_t	*e;

	e = json_pack("{s:{s:s, s:s}}", "error", "code", err_name(code),
	    "message", err_message(code));
	j->resp.status = status;
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
 * them again (serve-req.c re-encodes what would split them wrong).
 */
static char *
serve_query(struct lws *wsi)
{
	struct serve_query	 q;
	int			 n = lws_hdr_total_length(wsi,
				    WSI_TOKEN_HTTP_URI_ARGS);
	int			 i, k;
	char			*frag;

	memset(&q, 0, sizeof q);
	if (n <= 0)
		return serve_req_query_take(&q);
	frag = xmalloc((size_t)n + 2);
	for (i = 0; (k = lws_hdr_copy_fragment(wsi, frag, n + 2,
	    WSI_TOKEN_HTTP_URI_ARGS, i)) >= 0; i++)
		serve_req_query_add(&q, frag, (size_t)k);
	free(frag);
	return serve_req_query_take(&q);
}

/* The method, "" for one the API has no route for. */
static void
serve_method(struct lws *wsi, char *m, size_t msize)
{
	static const struct {
		enum lws_token_indexes	 h;
		const char		*m;
	} methods[] = {
		{ WSI_TOKEN_GET_URI, "GET" }, { WSI_TOKEN_POST_URI, "POST" },
		{ WSI_TOKEN_DELETE_URI, "DELETE" }, { WSI_TOKEN_PUT_URI, "PUT" },
	};
	size_t			 i;

	m[0] = '\0';
	for (i = 0; i < sizeof methods / sizeof methods[0]; i++)
		if (lws_hdr_total_length(wsi, methods[i].h) > 0) {
			snprintf(m, msize, "%s", methods[i].m);
			return;
		}
}

static struct serve_job *
serve_job_new(struct lws *wsi, const char *method, const char *uri,
    int public)
{
	struct serve_job	*j;

	j = xcalloc(1, sizeof *j);
	j->public = public;
	if (public)
		serve_npublic++;
	else
		serve_njobs++;
	j->wsi = wsi;
	snprintf(j->method, sizeof j->method, "%s", method);
	j->path = xstrdup(uri);
	j->query = serve_query(wsi);
	j->auth = serve_hdr(wsi, WSI_TOKEN_HTTP_AUTHORIZATION);
	j->length = -1;
	bytepipe_init(&j->in, API_PIPE_IN_HIGH);
	j->in.on_room = serve_in_room;
	j->in.on_room_arg = j;
	bytepipe_init(&j->out, API_PIPE_OUT_HIGH);
	j->out.on_data = serve_out_data;
	j->out.on_data_arg = j;
	return j;
}

/*
 * Whether the client of a running request has left.  lws stops reading a
 * connection while its transaction runs, so a client that closes (EOF) is
 * not seen until serve writes the reply: a long poll would hold its slot
 * for its whole wait.  While a request whose body is read runs, peek at
 * its socket once a second; EOF or an error ends the connection, and the
 * task sees it gone.  Bytes of a pipelined request are left for lws.
 * Only requests in flight arm it: an idle serve has no timer.
 */
#define SERVE_PEER_CHECK_MS	1000

static void
serve_peer_fire(lws_sorted_usec_list_t *sul)
{
	struct serve_job	*j = lws_container_of(sul, struct serve_job,
				    peer_sul);
	char			 c;
	ssize_t			 n;

	if (j->wsi == NULL || j->done || j->replied)
		return;
	n = recv(lws_get_socket_fd(j->wsi), &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR)) {
		log_debug("serve.peer_gone", "method=%s", j->method);
		lws_set_timeout(j->wsi, PENDING_TIMEOUT_HTTP_CONTENT,
		    LWS_TO_KILL_ASYNC);
		return;
	}
	lws_sul_schedule(serve_ctx, 0, &j->peer_sul, serve_peer_fire,
	    SERVE_PEER_CHECK_MS * LWS_US_PER_MS);
}

static void
serve_start(struct serve_job *j)
{
	if (task_spawn(serve_job_run, j) == 0) {
		j->running = 1;
		if (j->body_done && !j->streamin)
			lws_sul_schedule(serve_ctx, 0, &j->peer_sul,
			    serve_peer_fire,
			    SERVE_PEER_CHECK_MS * LWS_US_PER_MS);
	} else {
		serve_local_error(j, HTTP_STATUS_SERVICE_UNAVAILABLE, ERR_BUSY);
		lws_callback_on_writable(j->wsi);
	}
}

/*
 * The job is answered and gone; the connection may carry the next.  Not
 * when some of the body is still to come: lws would read and drop it at
 * whatever pace the client likes, with no deadline of ours, so close.
 */
static int
serve_finish(struct lws *wsi, struct serve_job *j)
{
	int	 whole = j->body_done;

	lws_set_opaque_user_data(wsi, NULL);
	serve_job_free(j);
	if (!whole)
		return -1;
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
serve_write_stream(struct lws *wsi, struct serve_job *j)
{
	static unsigned char	 buf[LWS_PRE + SERVE_CHUNK];
	size_t			 want, n;

	if (!j->hdr_sent && serve_stream_headers(wsi, j) != 0)
		return -1;
	while (j->out_left > 0) {
		want = j->out_left < SERVE_CHUNK ? (size_t)j->out_left :
		    SERVE_CHUNK;
		if ((n = bytepipe_get(&j->out, buf + LWS_PRE, want)) == 0) {
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
	return serve_finish(wsi, j);
}

static int
serve_write(struct lws *wsi, struct serve_job *j)
{
	unsigned char		 hdr[LWS_PRE + 512], *p, *end, *buf;
	int			 r;

	if (j == NULL)
		return 0;
	if (j->streaming)
		return serve_write_stream(wsi, j);
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
	if (r < 0 || j->expired)
		return -1;	/* lws sends what it holds, then closes */
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
	return serve_finish(wsi, j);
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
	if (sweep_caps(&serve_api, &n, &next) == 0 && n > 0)
		log_info("control.expired", "revoked=%d", n);
	serve_sweep_running = 0;
	if (!serve_stop)
		serve_sweep_arm(next);
}

static void
serve_sweep_fire(lws_sorted_usec_list_t *sul)
{
	(void)sul;
	serve_sweep_at = 0;
	if (serve_sweep_running || serve_stop)
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
static int	serve_notes_start(void);
static struct store	*serve_notes;

static void
serve_maint_task(void *arg)
{
	int	 changed, stopped, deleted;

	(void)arg;
	/* A broken database watch: watch again, and catch up once. */
	if (serve_notes == NULL && serve_notes_start() == 0 &&
	    serve_notes != NULL)
		activity_notify();
	if (sweep_reconcile(&serve_api, &changed) == 0 && changed > 0)
		log_info("reconcile", "changed=%d", changed);
	/* Shutting down (serve_drain()): no new job. */
	if (!serve_stop)
		(void)sweep_idle(&serve_api, &stopped);
	if (!serve_stop)
		(void)sweep_objects(&serve_api, &deleted);
	serve_maint_running = 0;
	if (!serve_stop)
		lws_sul_schedule(serve_ctx, 0, &serve_maint_sul,
		    serve_maint_fire, serve_tick_ms * LWS_US_PER_MS);
}

static void
serve_maint_fire(lws_sorted_usec_list_t *sul)
{
	(void)sul;
	if (serve_maint_running || serve_stop)
		return;
	if (task_spawn(serve_maint_task, NULL) == 0)
		serve_maint_running = 1;
	else
		lws_sul_schedule(serve_ctx, 0, &serve_maint_sul,
		    serve_maint_fire, serve_tick_ms * LWS_US_PER_MS);
}

/* ---- the HTTP side ---------------------------------------------------- */

/*
 * A refusal made at header time (no token, no slot, a bad length): the
 * API's error shape, then the connection closes, so whatever body was
 * announced is never read.
 */
static void
serve_refuse(struct lws *wsi, unsigned status, int code)
{
	unsigned char	 buf[LWS_PRE + 768], *p, *end;
	char		 body[256];
	int		 n;

	n = snprintf(body, sizeof body, "{\"error\":{\"code\":\"%s\","
	    "\"message\":\"%s\"}}", err_name(code), err_message(code));
	p = buf + LWS_PRE;
	end = buf + sizeof buf - 1;
	if (lws_add_http_common_headers(wsi, status, "application/json",
	    (lws_filepos_t)n, &p, end) ||
	    lws_add_http_header_by_token(wsi, WSI_TOKEN_CONNECTION,
	    (const unsigned char *)"close", 5, &p, end) ||
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

/* Does the request carry the bearer token? */
static int
serve_auth_ok(struct lws *wsi)
{
	char	 h[SECRET_MAX + 64];
	int	 n = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_AUTHORIZATION);
	int	 ok;

	if (n <= 0 || (size_t)n >= sizeof h ||
	    (n = lws_hdr_copy(wsi, h, sizeof h,
	    WSI_TOKEN_HTTP_AUTHORIZATION)) < 0)
		return 0;
	ok = serve_req_authorized(h, (size_t)n, serve_api.token);
	token_wipe(h, sizeof h);
	return ok;
}

/*
 * The Content-Length: -1 for none, ERR_BAD_REQUEST for anything but
 * digits (lws itself would read "12abc" as 12, and "-1" as a huge body).
 */
static int
serve_length(struct lws *wsi, int64_t *len)
{
	char	 v[SERVE_REQ_LENGTH_DIGITS + 2];
	int	 n = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH);

	*len = -1;
	if (n <= 0)
		return 0;
	if ((size_t)n >= sizeof v ||
	    (n = lws_hdr_copy(wsi, v, sizeof v,
	    WSI_TOKEN_HTTP_CONTENT_LENGTH)) < 0)
		return ERR_BAD_REQUEST;
	return serve_req_length(v, (size_t)n, len);
}

/*
 * The body deadline.  A buffered body (at most API_MAX_BODY) must arrive
 * whole within serve_body_ms of its headers: if not, the client gets 408
 * and the connection closes.  A streamed upload must bring SERVE_BODY_MIN
 * bytes (or its end) in every window of serve_body_ms in which the
 * server was reading it; a slower one is cut.  Either way a client that
 * trickles its body holds a slot for a bounded time only.
 */
static void	serve_body_fire(lws_sorted_usec_list_t *sul);

static void
serve_body_arm(struct serve_job *j)
{
	lws_sul_schedule(serve_ctx, 0, &j->body_sul, serve_body_fire,
	    serve_body_ms * LWS_US_PER_MS);
}

static void
serve_body_fire(lws_sorted_usec_list_t *sul)
{
	struct serve_job	*j = lws_container_of(sul, struct serve_job,
				    body_sul);

	if (j->wsi == NULL || j->body_done || j->expired)
		return;
	if (j->streamin && (j->rx_paused || j->win_bytes >= SERVE_BODY_MIN)) {
		j->win_bytes = 0;
		serve_body_arm(j);
		return;
	}
	log_info("serve.body_timeout", "method=%s streamed=%d", j->method,
	    j->streamin);
	j->expired = 1;
	if (j->running || j->done) {
		/* The task owns the reply: end the connection, it sees gone. */
		lws_set_timeout(j->wsi, PENDING_TIMEOUT_HTTP_CONTENT,
		    LWS_TO_KILL_ASYNC);
		return;
	}
	/*
	 * Answer 408 and close; what still arrives meanwhile is dropped.
	 * (Not lws_rx_flow_control(): called from a timer it kept lws
	 * 4.1.6 from ever calling back for writable.)
	 */
	serve_local_error(j, HTTP_STATUS_REQUEST_TIMEOUT, ERR_TIMEOUT);
	lws_set_timeout(j->wsi, PENDING_TIMEOUT_HTTP_CONTENT, SERVE_IDLE_S);
	lws_callback_on_writable(j->wsi);
}

/* HTTP_BODY of a streamed body: into the pipe, or dropped once answered. */
static int
serve_body_stream(struct lws *wsi, struct serve_job *j, const void *in,
    size_t len)
{
	j->win_bytes += (int64_t)len;
	if (j->done || j->replied)
		return 0;
	bytepipe_put(&j->in, in, len);
	if (bytepipe_full(&j->in) && !j->rx_paused) {
		j->rx_paused = 1;
		lws_rx_flow_control(wsi, 0);
		/* Waiting for guestd is not the client's fault. */
		lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
	} else if (!j->rx_paused)
		lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT,
		    SERVE_STREAM_IDLE_S);
	return 0;
}

/*
 * LWS_CALLBACK_HTTP: the headers are complete.  Everything that can be
 * refused from them is refused here, before a slot is taken or a body
 * byte read: no token (401), no slot (503), a bad Content-Length (400).
 */
static int
serve_intake(struct lws *wsi, const char *uri)
{
	struct serve_job	*j;
	char			 method[8];
	int64_t			 n;
	int			 public, r;

	serve_method(wsi, method, sizeof method);
	public = serve_req_public(method, uri);
	/*
	 * How the body is framed, before anything else: lws reads only
	 * Content-Length, so a chunked body would be taken for the next
	 * request on this connection (RFC 9112 6.3).
	 */
	if ((r = http_head_req_framing(
	    lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0,
	    lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0))
	    != 0) {
		log_info("serve.refused", "reason=framing code=%s",
		    err_name(r));
		serve_refuse(wsi, r == ERR_LENGTH_REQUIRED ?
		    HTTP_STATUS_LENGTH_REQUIRED : HTTP_STATUS_BAD_REQUEST, r);
		return -1;
	}
	if (!public && !serve_auth_ok(wsi)) {
		serve_refuse(wsi, HTTP_STATUS_UNAUTHORIZED, ERR_UNAUTHORIZED);
		return -1;
	}
	/* Shed meanwhile (its close is on its way): drop it now. */
	if (!public && conncap_trust(serve_cap, wsi) != 0)
		return -1;
	if (public ? serve_npublic >= SERVE_MAX_PUBLIC :
	    serve_njobs >= SERVE_MAX_JOBS) {
		serve_refuse(wsi, HTTP_STATUS_SERVICE_UNAVAILABLE, ERR_BUSY);
		return -1;
	}
	if (serve_length(wsi, &n) != 0) {
		serve_refuse(wsi, HTTP_STATUS_BAD_REQUEST, ERR_BAD_REQUEST);
		return -1;
	}
	j = serve_job_new(wsi, method, uri, public);
	lws_set_opaque_user_data(wsi, j);
	j->length = n;
	j->body_done = n <= 0;
	if (n > 0)
		serve_body_arm(j);
	if (api_files_streams_body(j->method, j->path)) {
		/* The task reads the body as it comes. */
		j->streamin = 1;
		if (n <= 0)
			bytepipe_end(&j->in);
		lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT,
		    SERVE_STREAM_IDLE_S);
		if (n > 0 && serve_continue(wsi) != 0)
			return -1;
		serve_start(j);
		return 0;
	}
	if (n > API_MAX_BODY)
		j->too_large = 1;
	/*
	 * Without a body nothing more is wanted from the client: lws's
	 * content timeout (5 s) would cut a long poll or a slow tool call.
	 */
	if (j->body_done)
		lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
	/* Bodies come through HTTP_BODY; the rest runs now. */
	if (strcmp(j->method, "GET") == 0 || n <= 0)
		serve_start(j);
	return 0;
}

/* The connection is gone: its job goes too, or is left to its task. */
static void
serve_detach(struct lws *wsi, struct serve_job *j)
{
	lws_set_opaque_user_data(wsi, NULL);
	lws_sul_cancel(&j->body_sul);
	lws_sul_cancel(&j->peer_sul);
	if (j->running && !j->done) {
		j->wsi = NULL;	/* the task frees it */
		/* A long poll ends now instead of at its wait_ms. */
		j->gone = 1;
		activity_notify();
		/* A short body is refused by guestd; a reply stops. */
		bytepipe_break(&j->in, ERR_PEER_GONE);
		bytepipe_break(&j->out, ERR_PEER_GONE);
	} else
		serve_job_free(j);
}

/*
 * The API's connections.  No per-session data: lws allocates it only once
 * a request's headers arrive, and calls several of these (a close, a
 * timeout, a connection's end) for connections that never got that far.
 * A connection's request lives in its opaque user data instead, NULL
 * until serve_intake() accepted one, and every case below expects NULL.
 */
static int
serve_http_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	struct serve_job	*j;

	switch (reason) {
	case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
		/*
		 * On the listening socket; user is not ours either.  The
		 * descriptors' own ceiling: conncap admits serve_max_conns,
		 * and a quarter more may still be closing after a shed.
		 */
		if (serve_nconns >= serve_max_conns + serve_max_conns / 4) {
			log_debug("serve.refused", "reason=connections");
			return -1;
		}
		return 0;
	case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
		if (conncap_lws_admit(serve_cap, wsi, "serve.conn") != 0) {
			/* lws 4.1 documents the return as ignored. */
			lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT,
			    LWS_TO_KILL_ASYNC);
			return -1;
		}
		return 0;
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
		/*
		 * The API has no websockets, and lws would answer an h2c
		 * Upgrade 101 before LWS_CALLBACK_HTTP ever checked the
		 * token: refuse every upgrade.
		 */
		log_info("serve.refused", "reason=upgrade");
		serve_refuse(wsi, HTTP_STATUS_BAD_REQUEST, ERR_BAD_REQUEST);
		return -1;
	case LWS_CALLBACK_WSI_CREATE:
		serve_nconns++;
		return 0;
	case LWS_CALLBACK_WSI_DESTROY:
		/* Also the listener's, never counted in. */
		if (serve_nconns > 0)
			serve_nconns--;
		conncap_gone(serve_cap, wsi);
		if ((j = lws_get_opaque_user_data(wsi)) != NULL)
			serve_detach(wsi, j);
		return 0;
	case LWS_CALLBACK_HTTP:
		if (lws_get_opaque_user_data(wsi) != NULL || in == NULL)
			return -1;
		return serve_intake(wsi, (const char *)in);
	case LWS_CALLBACK_HTTP_BODY:
		if ((j = lws_get_opaque_user_data(wsi)) == NULL)
			return -1;
		if (j->streamin)
			return serve_body_stream(wsi, j, in, len);
		if (j->expired)
			return 0;
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
		if ((j = lws_get_opaque_user_data(wsi)) == NULL)
			return -1;
		j->body_done = 1;
		lws_sul_cancel(&j->body_sul);
		if (j->streamin) {
			bytepipe_end(&j->in);
			lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
			/* Answered early: nothing is left unread now. */
			return j->replied ? -1 : 0;
		}
		if (j->expired)
			return 0;	/* the 408 is on its way */
		if (j->running || j->done)
			return 0;	/* a GET's body, read while it ran */
		serve_start(j);
		return 0;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return serve_write(wsi, lws_get_opaque_user_data(wsi));
	case LWS_CALLBACK_CLOSED_HTTP:
		if ((j = lws_get_opaque_user_data(wsi)) != NULL)
			serve_detach(wsi, j);
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

/*
 * The same wake-up from a shared database: a connection of its own
 * LISTENing (store_watch()), its socket on the loop.  When it breaks (the
 * server restarted) the wake-ups pause until the next maintenance pass
 * opens another, which wakes every long poll once for what it missed.
 */
static int
serve_notes_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	int	 r;

	(void)user;
	(void)in;
	(void)len;
	if (reason != LWS_CALLBACK_RAW_RX_FILE || serve_notes == NULL ||
	    lws_get_opaque_user_data(wsi) != serve_notes)
		return 0;
	if ((r = store_watch_read(serve_notes)) > 0)
		activity_notify();
	if (r >= 0)
		return 0;
	log_warn("serve.store_watch", "code=%s", err_name(r));
	/* No pointer to the freed store is left on the closing wsi. */
	lws_set_opaque_user_data(wsi, NULL);
	store_free(serve_notes);
	serve_notes = NULL;
	return -1;	/* lws closes its dup */
}

/* 0 when watching (or the store has no notices); a task may call it. */
static int
serve_notes_start(void)
{
	lws_adopt_desc_t	 ad;
	struct errmsg		 err;
	int			 fd, d, r;

	if (serve_notes != NULL)
		return 0;
	if ((r = store_open(&serve_notes, serve_api.store_url, &err)) != 0)
		return r;
	if ((r = store_watch(serve_notes, &fd)) != 0 ||
	    (d = fcntl(fd, F_DUPFD_CLOEXEC, 0)) == -1) {
		store_free(serve_notes);
		serve_notes = NULL;
		return r == ERR_UNKNOWN_OP ? 0 : r != 0 ? r :
		    err_from_errno(errno);
	}
	memset(&ad, 0, sizeof ad);
	ad.vh = serve_inner;
	ad.type = LWS_ADOPT_RAW_FILE_DESC;
	ad.fd.filefd = d;
	ad.vh_prot_name = SERVE_NOTES_PROTOCOL;
	ad.opaque = serve_notes;
	/* On failure lws closed d. */
	if (lws_adopt_descriptor_vhost_via_info(&ad) == NULL) {
		store_free(serve_notes);
		serve_notes = NULL;
		return ERR_INTERNAL;
	}
	return 0;
}

static const struct lws_protocols serve_protocols[] = {
	{ "http", serve_http_cb, 0, 0, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

static struct lws_protocols serve_inner_protocols[6];
static struct curl_loop	*serve_curl;
static struct s3	*serve_s3;

/* How long exit waits for the periodic jobs (serve_drain()). */
#define SERVE_DRAIN_MS		5000

static lws_sorted_usec_list_t	 serve_drain_sul;
static int			 serve_drain_over;
static int			 serve_objects_checking;

/* One of the controller's own jobs (not a request's) is under way. */
static int
serve_jobs_busy(void)
{
	return serve_maint_running || serve_sweep_running ||
	    serve_objects_checking;
}

static void
serve_drain_cb(lws_sorted_usec_list_t *sul)
{
	(void)sul;
	serve_drain_over = 1;
}

/*
 * At exit the periodic jobs run to their end before the context goes: a
 * task left suspended (the object sweep inside an S3 LIST) is never
 * resumed, so what its frames own (store rows, a store connection, the
 * request) would never be freed.  Transfers in flight end at once and
 * new ones fail, so a sweep or the first bucket check unwinds within a
 * loop turn or two; the bound is for a job waiting on something else (a
 * guestd revoke).
 */
static void
serve_drain(void)
{
	curl_loop_abort_all(serve_curl);
	if (!serve_jobs_busy())
		return;
	serve_drain_over = 0;
	lws_sul_schedule(serve_ctx, 0, &serve_drain_sul, serve_drain_cb,
	    SERVE_DRAIN_MS * LWS_US_PER_MS);
	while (serve_jobs_busy() && !serve_drain_over)
		if (lws_service(serve_ctx, 0) < 0)
			break;
	lws_sul_cancel(&serve_drain_sul);
	if (serve_jobs_busy())
		log_warn("serve.drain", "a periodic job did not end within "
		    "%d ms", SERVE_DRAIN_MS);
}

static void
serve_on_signal(int sig)
{
	(void)sig;
	serve_stop = 1;
	if (serve_ctx != NULL)
		lws_cancel_service(serve_ctx);
}

/* ---- start-up ----------------------------------------------------------- */

/* The first bucket check, as soon as the loop turns. */
static void
serve_objects_check_task(void *arg)
{
	struct errmsg	 e;

	(void)arg;
	memset(&e, 0, sizeof e);
	(void)home_object_check(&e);
	serve_objects_checking = 0;
}

/*
 * The object home store (C-10) when OBJECT_STORAGE_BUCKET is set: the
 * content key (made 0600 when absent, and said so), the S3 client on
 * the loop.  A bad setting stops start-up; a bucket that does not
 * answer or refuses the credentials does not, but /internal/health
 * reports it and checkpoints fail: homes never fall back to local.
 */
static int
serve_objects_setup(const char *data_dir, const char *key_file)
{
	struct s3_config cfg;
	struct errmsg	 e;
	uint8_t		 ck[SEAL_KEY_LEN];
	char		 path[PATH_MAX];
	int		 enabled, created = 0, r;

	memset(&e, 0, sizeof e);
	if ((r = s3_config_from_env(&cfg, &enabled, &e)) != 0) {
		cli_error("%s: %s", err_name(r), errmsg_str(&e));
		return r;
	}
	if (!enabled)
		return 0;
	if (key_file == NULL || *key_file == '\0') {
		snprintf(path, sizeof path, "%s/content.key", data_dir);
		key_file = path;
	}
	if ((r = seal_key_load(key_file, ck, &created, &e)) != 0) {
		cli_error("%s: the content key: %s", err_name(r),
		    errmsg_str(&e));
		goto out;
	}
	if (created)
		log_info("home.content_key", "file=%s msg=\"no content key "
		    "file: a new key was made (mode 0600); keep it, the "
		    "homes in the bucket are unreadable without it\"",
		    key_file);
	if ((r = s3_new(&serve_s3, serve_curl, &cfg, &e)) != 0) {
		cli_error("%s: %s", err_name(r), errmsg_str(&e));
		goto out;
	}
	home_object_configure(serve_s3, ck);
	log_info("home.object_store", "bucket=%s endpoint=%s addressing=%s "
	    "part_size=%llu", cfg.bucket, cfg.endpoint, cfg.path_style ?
	    "path" : "virtual", (unsigned long long)s3_part_size(serve_s3));
	if (task_spawn(serve_objects_check_task, NULL) == 0)
		serve_objects_checking = 1;
out:
	explicit_bzero(ck, sizeof ck);
	s3_config_release(&cfg);
	return r;
}

/*
 * The context and the inner vhost: guestd clients, task fds and the store
 * watch.  The API's listening vhost comes later, after the reconciler.
 */
static int
serve_loop_new(void)
{
	struct lws_context_creation_info	 info;
	struct errmsg				 e;

	serve_inner_protocols[0] = gclient_protocol;
	serve_inner_protocols[1] = task_fd_protocol;
	serve_inner_protocols[2] = (struct lws_protocols){
		SERVE_WATCH_PROTOCOL, serve_watch_cb, 0, 0, 0, NULL, 0 };
	serve_inner_protocols[3] = (struct lws_protocols){
		SERVE_NOTES_PROTOCOL, serve_notes_cb, 0, 0, 0, NULL, 0 };
	serve_inner_protocols[4] = curl_loop_protocol;
	memset(&serve_inner_protocols[5], 0, sizeof serve_inner_protocols[5]);
	memset(&info, 0, sizeof info);
	info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
	/* Socket reads of 64 KiB, not 4: streamed uploads cost less. */
	info.pt_serv_buf_size = 64 * 1024;
	/* lws's own waits: a pause within a body, a close to complete. */
	info.timeout_secs = SERVE_IDLE_S;
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
	guest_init(serve_ctx, serve_inner);
	/* HTTP on the loop: the object store's and the providers' APIs. */
	if (curl_loop_new(&serve_curl, serve_ctx, serve_inner, &e) != 0)
		return ERR_INTERNAL;
	return 0;
}

/*
 * At most SERVE_MAX_CONNS API connections, and never more than half the
 * descriptors we may open, counting the quarter more that may still be
 * closing after a shed: the rest are for guestd connections, the store
 * and the tasks, which a flood of idle connections must not starve.
 */
static unsigned
serve_conn_limit(void)
{
	struct rlimit	 rl;
	unsigned	 n = SERVE_MAX_CONNS;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur * 2 / 5 < n)
		n = rl.rlim_cur * 2 / 5 > 8 ? (unsigned)(rl.rlim_cur * 2 / 5) :
		    8;
	return n;
}

static int
serve_usage(FILE *f)
{
	fprintf(f, "usage: rakazoctl serve --data-dir DIR (--token-file F | "
	    "RAKAZO_API_TOKEN) [--listen ADDR:PORT] [--provider NAME]\n"
	    "       [--idle-ms N] [--reconcile-ms N] [--header-timeout-ms N] "
	    "[--body-timeout-ms N]\n"
	    "       [--guestd PATH]"
	    " [--guest-user NAME] [--ready-file F] [--log-level L]\n");
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

struct serve_first {
	int	 r, changed, done;
};

static void
serve_first_task(void *arg)
{
	struct serve_first	*f = arg;

	f->r = sweep_reconcile(&serve_api, &f->changed);
	f->done = 1;
	lws_cancel_service(serve_ctx);
}

/* The start-up reconciler, run to its end on the loop (nothing listens). */
static int
serve_reconcile_first(int *changed)
{
	struct serve_first	 f;

	memset(&f, 0, sizeof f);
	if ((f.r = task_spawn(serve_first_task, &f)) != 0)
		return f.r;
	while (!f.done)
		if (lws_service(serve_ctx, 0) < 0)
			return ERR_INTERNAL;
	*changed = f.changed;
	return f.r;
}

/*
 * A name for the state store that carries no secret: FNV-1a of its URL
 * without the password (postgres://user:PASSWORD@host/db?...) and query,
 * or of the SQLite data directory.
 */
static void
serve_store_id(const char *url, char *out, size_t len)
{
	uint64_t	 h = 1469598103934665603ULL;
	const char	*s, *auth, *at, *colon;

	auth = strstr(url, "://");
	auth = auth != NULL ? auth + 3 : NULL;
	at = auth != NULL ? strchr(auth, '@') : NULL;
	colon = at != NULL ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
	for (s = url; *s != '\0' && *s != '?'; s++) {
		if (colon != NULL && s >= colon && s < at)
			continue;
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	snprintf(out, len, "%016llx", (unsigned long long)h);
}

static int
serve_main(int argc, char **argv)
{
	const char	*listen_s = "127.0.0.1:8420", *data_dir = NULL;
	const char	*token_file = NULL, *provider = "local";
	const char	*guestd = "guestd", *guest_user = "nobody";
	const char	*ready = NULL, *level = "info";
	const char	*uid_range = "200000-299999", *store_url = NULL;
	char		*store_copy = NULL;
	const char	*docker_host = "unix:///var/run/docker.sock";
	const char	*image = "rakazo-computer", *image_tag = "latest";
	const char	*docker_home = "bind", *docker_cpus = "2";
	uint64_t	 docker_memory = 2ULL << 30;
	int64_t		 docker_pids = 1024;
	const char	*k8s_ns = NULL, *k8s_image = "rakazo-computer:latest";
	const char	*k8s_runtime = NULL, *k8s_cpu = "2", *k8s_memory = "2Gi";
	const char	*k8s_labels = NULL, *k8s_annotations = NULL;
	const char	*k8s_claim = NULL, *kubeconfig = NULL;
	int64_t		 k8s_ready_ms = 120000;
	int64_t		 idle_ms = 1800000, reconcile_ms = 30000;
	int64_t		 body_ms = 30000, header_ms = SERVE_HEADER_MS;
	int64_t		 home_keep = CHECKPOINT_KEEP_DEFAULT;
	uint64_t	 home_max = 0;
	int64_t		 attach_max = SERVE_ATTACH_MAX;
	int		 shared_ok = 0, cleaned;
	const struct config_opt opts[] = {
		{ "listen", "RAKAZO_LISTEN", CONFIG_STR, &listen_s, 0, 0,
		  "ADDR:PORT (default 127.0.0.1:8420)" },
		{ "data-dir", "DATA_DIR", CONFIG_STR, &data_dir, 0, 0,
		  "state and computers live here" },
		{ "store", "DATABASE_URL", CONFIG_STR, &store_url, 0, 0,
		  "state store: postgres://... (default: DATA_DIR/state.db)" },
		{ "token-file", "RAKAZO_API_TOKEN_FILE", CONFIG_STR,
		  &token_file, 0, 0, "bearer token file (mode 0600)" },
		{ "provider", "SANDBOX_PROVIDER", CONFIG_STR, &provider, 0, 0,
		  "local, docker, kubernetes, fake or none" },
		{ "idle-ms", "SANDBOX_IDLE_MS", CONFIG_INT, &idle_ms, 0,
		  INT64_C(1) << 40, "stop idle computers after (0: never)" },
		{ "reconcile-ms", "RAKAZO_RECONCILE_MS", CONFIG_INT,
		  &reconcile_ms, 100, 86400000, "reconciler period" },
		{ "header-timeout-ms", "RAKAZO_HEADER_TIMEOUT_MS", CONFIG_INT,
		  &header_ms, 1000, 600000, "a request's headers' deadline" },
		{ "body-timeout-ms", "RAKAZO_BODY_TIMEOUT_MS", CONFIG_INT,
		  &body_ms, 100, 3600000, "a request body's deadline" },
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
		{ "docker-host", "DOCKER_HOST", CONFIG_STR, &docker_host, 0,
		  0, "docker: the engine's socket (unix:///var/run/"
		  "docker.sock)" },
		{ "image", "RAKAZO_COMPUTER_IMAGE", CONFIG_STR, &image, 0, 0,
		  "docker: the computer image (rakazo-computer)" },
		{ "image-tag", "RAKAZO_COMPUTER_IMAGE_TAG", CONFIG_STR,
		  &image_tag, 0, 0, "docker: its tag (latest)" },
		{ "docker-home", "DOCKER_HOME", CONFIG_STR, &docker_home, 0, 0,
		  "docker: bind (a directory of DATA_DIR) or volume" },
		{ "docker-cpus", "DOCKER_CPUS", CONFIG_STR, &docker_cpus, 0, 0,
		  "docker: CPUs per computer (2)" },
		{ "docker-memory", "DOCKER_MEMORY", CONFIG_SIZE,
		  &docker_memory, 0, INT64_C(1) << 50, "docker: memory per "
		  "computer (2G; 0: no limit)" },
		{ "docker-pids", "DOCKER_PIDS_LIMIT", CONFIG_INT, &docker_pids,
		  0, 1 << 22, "docker: processes per computer (1024; 0: no "
		  "limit)" },
		{ "kubeconfig", "KUBECONFIG", CONFIG_STR, &kubeconfig, 0, 0,
		  "kubernetes: a kubeconfig file (default: in-cluster)" },
		{ "k8s-namespace", "KUBERNETES_SANDBOX_NAMESPACE", CONFIG_STR,
		  &k8s_ns, 0, 0, "kubernetes: the computers' namespace "
		  "(default: the kubeconfig's, the pod's, or default)" },
		{ "k8s-image", "KUBERNETES_SANDBOX_COMPUTER_IMAGE", CONFIG_STR,
		  &k8s_image, 0, 0, "kubernetes: the computer image "
		  "(rakazo-computer:latest)" },
		{ "k8s-runtime-class", "KUBERNETES_SANDBOX_RUNTIME_CLASS_NAME",
		  CONFIG_STR, &k8s_runtime, 0, 0, "kubernetes: the pods' "
		  "runtime class (e.g. gvisor)" },
		{ "k8s-cpu", "KUBERNETES_SANDBOX_CPU_LIMIT", CONFIG_STR,
		  &k8s_cpu, 0, 0, "kubernetes: CPU per computer (2)" },
		{ "k8s-memory", "KUBERNETES_SANDBOX_MEMORY_LIMIT", CONFIG_STR,
		  &k8s_memory, 0, 0, "kubernetes: memory per computer (2Gi)" },
		{ "k8s-pod-labels", "KUBERNETES_SANDBOX_POD_LABELS", CONFIG_STR,
		  &k8s_labels, 0, 0, "kubernetes: extra pod labels (a JSON "
		  "object)" },
		{ "k8s-pod-annotations", "KUBERNETES_SANDBOX_POD_ANNOTATIONS",
		  CONFIG_STR, &k8s_annotations, 0, 0, "kubernetes: pod "
		  "annotations (a JSON object)" },
		{ "k8s-ready-timeout-ms", "KUBERNETES_SANDBOX_READY_TIMEOUT_MS",
		  CONFIG_INT, &k8s_ready_ms, 100, 3600000, "kubernetes: a "
		  "pod's deadline to be ready (120000)" },
		{ "k8s-home-claim", "KUBERNETES_SANDBOX_HOME_CLAIM", CONFIG_STR,
		  &k8s_claim, 0, 0, "kubernetes: a PersistentVolumeClaim for "
		  "the homes (default: an emptyDir per pod)" },
		{ "home-keep", "HOME_KEEP_REVISIONS", CONFIG_INT, &home_keep,
		  1, 1000, "home revisions kept per computer (default 3)" },
		{ "home-max-bytes", "HOME_MAX_BYTES", CONFIG_SIZE, &home_max,
		  1, INT64_MAX, "the home size cap every computer's guestd "
		  "gets (default: guestd's, 16G)" },
		{ "attach-max", "ATTACHMENT_MAX_BYTES", CONFIG_INT,
		  &attach_max, 1, INT64_C(1) << 40, "the largest upload or "
		  "attachment (default 25 MiB)" },
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
	struct errmsg		 err;
	char			 host[256], tok[SECRET_MAX + 1], store_id[17];
	const char		*envtok;
	int			 next, port, r, lvl, changed;
	int			 status = CLI_EXIT_ERROR;

	if (argc > 1 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		serve_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (config_parse(opts, sizeof opts / sizeof opts[0], argc, argv,
	    &next, &err) != 0) {
		cli_error("%s", err.msg);
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
	/*
	 * The store URL may carry the database's password: keep our copy and
	 * take it out of the environment, which every computer's guestd
	 * (started by the local provider) would inherit.
	 */
	if (store_url != NULL && *store_url != '\0')
		store_url = store_copy = xstrdup(store_url);
	else
		store_url = data_dir;
	unsetenv("DATABASE_URL");
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
	pc.docker_host = docker_host;
	pc.image = image;
	pc.image_tag = image_tag;
	pc.docker_home = docker_home;
	pc.docker_cpus = docker_cpus;
	pc.docker_memory = (int64_t)docker_memory;
	pc.docker_pids = docker_pids;
	pc.home_max_bytes = home_max;
	pc.k8s_namespace = k8s_ns;
	pc.k8s_image = k8s_image;
	pc.k8s_runtime_class = k8s_runtime;
	pc.k8s_cpu = k8s_cpu;
	pc.k8s_memory = k8s_memory;
	pc.k8s_labels = k8s_labels;
	pc.k8s_annotations = k8s_annotations;
	pc.k8s_ready_ms = k8s_ready_ms;
	pc.k8s_home_claim = k8s_claim;
	pc.kubeconfig = kubeconfig;
	serve_store_id(store_url, store_id, sizeof store_id);
	pc.store_id = store_id;
	pc.curl = serve_curl;
	pc.ctx = serve_ctx;
	pc.vhost = serve_inner;
	if (provider_new(&prov, provider, &pc, &err) != 0) {
		cli_error("CONFIG_INVALID: %s", err.msg);
		status = CLI_EXIT_USAGE;
		goto out;
	}
	if (serve_objects_setup(data_dir, getenv("CONTENT_KEY_FILE")) != 0) {
		status = CLI_EXIT_USAGE;
		goto out;
	}
	/* Open (and migrate) now so a broken store stops start-up. */
	if ((r = store_open(&s, store_url, &err)) != 0) {
		cli_error("%s: %s", err_name(r), err.msg);
		goto out;
	}
	serve_api.store_url = store_url;
	serve_api.lock_dir = data_dir;
	serve_api.data_dir = data_dir;
	serve_api.home_keep = home_keep;
	serve_api.attach_max = attach_max;
	/* What crashed checkpoints left is never current: it goes now. */
	if ((r = checkpoint_cleanup(&serve_api, s, &cleaned)) != 0)
		log_warn("checkpoint.cleanup", "code=%s", err_name(r));
	store_free(s);
	serve_api.prov = prov;
	serve_api.token = tok;
	serve_api.idle_ms = idle_ms;
	serve_api.cap_deadline = serve_cap_deadline;
	serve_tick_ms = reconcile_ms;
	serve_body_ms = body_ms;
	if (idle_ms > 0 && idle_ms / 4 < serve_tick_ms)
		serve_tick_ms = idle_ms / 4 > 100 ? idle_ms / 4 : 100;
	/*
	 * C-7: rows match reality before the first request.  In a task,
	 * as every later sweep: a provider may wait for its engine.
	 */
	if ((r = serve_reconcile_first(&changed)) != 0) {
		cli_error("%s: the start-up reconciler failed", err_name(r));
		goto out;
	}
	log_info("reconcile", "changed=%d at=start", changed);

	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, serve_on_signal);
	signal(SIGINT, serve_on_signal);
	if ((r = serve_notes_start()) != 0)
		log_warn("serve.store_watch", "code=%s", err_name(r));
	if (serve_watch_start(data_dir) != 0)
		log_warn("serve.watch", "cannot watch the data directory: "
		    "activity long polls see only this process's events");
	memset(&info, 0, sizeof info);
	info.port = port;
	info.iface = host;
	info.protocols = serve_protocols;
	info.vhost_name = "api";
	/* lws 4.1 ignores an IPv4 iface while IPv6 is on. */
	info.options = LWS_SERVER_OPTION_DISABLE_IPV6;
	/* Headers end within this of the connection's opening, or it goes. */
	info.timeout_secs_ah_idle = (unsigned)((header_ms + 999) / 1000);
	info.keepalive_timeout = SERVE_KEEPALIVE_S;
	serve_max_conns = serve_conn_limit();
	serve_cap = conncap_new(serve_max_conns,
	    serve_max_conns > 2 * SERVE_MAX_JOBS ? SERVE_MAX_JOBS :
	    serve_max_conns / 2, serve_max_conns < SERVE_PEER_CONNS ?
	    serve_max_conns : SERVE_PEER_CONNS);
	if ((vh = lws_create_vhost(serve_ctx, &info)) == NULL) {
		cli_error("CONNECT_FAILED: cannot listen on %s", listen_s);
		goto out;
	}
	port = lws_get_vhost_listen_port(vh);
	/* The store by backend only: its URL may carry a password. */
	log_info("serve.listening", "addr=%s port=%d provider=%s data_dir=%s "
	    "store=%s", host, port, provider_name(prov), data_dir,
	    strncmp(store_url, "postgres", 8) == 0 ? "postgres" : "sqlite");
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
	serve_stop = 1;
	serve_drain();
	status = CLI_EXIT_OK;
out:
	/*
	 * Computers keep running: a restarted controller reconnects.  Tasks
	 * still waiting (long polls, commands) end with the process; nothing
	 * resumes them while the context goes.
	 */
	task_shutdown();
	home_object_configure(NULL, NULL);
	s3_free(serve_s3);
	serve_s3 = NULL;
	curl_loop_free(serve_curl);
	serve_curl = NULL;
	if (serve_ctx != NULL) {
		lws_sul_cancel(&serve_maint_sul);
		lws_sul_cancel(&serve_sweep_sul);
		lws_context_destroy(serve_ctx);
	}
	serve_ctx = NULL;
	conncap_free(serve_cap);
	serve_cap = NULL;
	token_wipe(tok, sizeof tok);
	store_free(serve_notes);
	serve_notes = NULL;
	if (store_copy != NULL) {
		explicit_bzero(store_copy, strlen(store_copy));
		free(store_copy);
	}
	provider_free(prov);
	return status;
}

const struct cli_cmd cli_serve_entry = {
	"serve", "--data-dir DIR --token-file F [--listen ADDR:PORT] "
	    "[--provider local|docker|kubernetes|fake|none]", serve_main
};

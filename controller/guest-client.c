/*
 * A client of one guestd over its control channel (guest-client.h).
 *
 * Each client owns a libwebsockets client context with one connection.
 * Outgoing messages wait in a FIFO and are written one per WRITEABLE
 * callback; an upload is pulled from its source only when that FIFO is
 * empty and the socket is writable, so memory stays at one chunk however
 * slow guestd reads.  A source with nothing to give yet pauses its upload
 * (no busy loop on writable) until its owner resumes it.  Incoming fragments are reassembled under the
 * protocol's caps (a peer that exceeds them is dropped with
 * PROTOCOL_ERROR), JSON responses are routed by id, events to the event
 * callback and binary frames to the data callback of their request.
 *
 * The bearer secret lives only in this struct and in the handshake header
 * lws builds; it is wiped on free and never copied into an error sentence.
 */
#include "autoconf.h"

#include <sys/types.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libwebsockets.h>

#include "buf.h"
#include "err.h"
#include "json.h"
#include "log.h"
#include "proto.h"
#include "redact.h"
#include "controller/guest-client.h"
#include "controller/task.h"

#ifndef VERSION
#define VERSION "0"
#endif

#define GCLIENT_DEFAULT_TIMEOUT	10000
#define GCLIENT_ERRLEN		256
#define GCLIENT_HOSTLEN		256
#define GCLIENT_PATHLEN		512

enum gclient_state {
	GCLIENT_CONNECTING = 0,
	GCLIENT_OPEN,
	GCLIENT_CLOSED
};

struct gclient_req {
	uint32_t		 id;
	gclient_reply_cb	 on_reply;
	gclient_data_cb		 on_data;
	void			*arg;
	gclient_source_cb	 src;		/* upload still to send */
	void			*src_arg;
	int			 paused;	/* src had nothing: resume */
	struct gclient_req	*next;
};

struct gclient_msg {
	struct gclient_msg	*next;
	int			 binary;
	size_t			 len;
	uint8_t			 data[];	/* LWS_PRE + len */
};

struct gclient_watch {
	struct gclient_watch	*next;
	struct lws		*wsi;
	gclient_fd_cb		 cb;
	void			*arg;
};

struct gclient {
	struct lws_context	*ctx;
	struct lws_vhost	*vhost;		/* attached: the owner's */
	int			 attached;
	struct task_cond	 cv;		/* attached: waiting tasks */
	struct lws		*wsi;
	enum gclient_state	 state;
	int			 err;		/* first fatal error */
	char			 errmsg[GCLIENT_ERRLEN];

	char			*secret;
	size_t			 secretlen;
	char			 host[GCLIENT_HOSTLEN];
	char			 hosthdr[GCLIENT_HOSTLEN + 8];
	char			 path[GCLIENT_PATHLEN];
	int			 port;
	int			 timeout_ms;

	uint32_t		 next_id;
	struct gclient_req	*reqs;
	struct gclient_msg	*qhead;
	struct gclient_msg	**qtail;
	uint8_t			*upbuf;		/* LWS_PRE + hdr + chunk */

	struct buf		 rx;
	int			 rx_binary;
	int			 rx_active;

	json_t			*hello;
	gclient_event_cb	 on_event;
	void			*event_arg;
	struct gclient_watch	*watches;

	/* Idle timer of gclient_run(). */
	lws_sorted_usec_list_t	 sul;
	lws_usec_t		 last_activity;
	lws_usec_t		 idle_us;
	int			 timed_out;
};

/* The state of one blocking call (gclient_call, hello). */
struct gclient_wait {
	int	 done;
	json_t	*msg;
};

static int	gclient_lws_cb(struct lws *, enum lws_callback_reasons, void *,
		    void *, size_t);
static int	gclient_fd_lws_cb(struct lws *, enum lws_callback_reasons,
		    void *, void *, size_t);
static int	gclient_lws_event(struct gclient *, struct lws *,
		    enum lws_callback_reasons, void *, size_t);

#define GCLIENT_FD_PROTOCOL	"rakazo-gclient-fd"

static const struct lws_protocols gclient_protocols[] = {
	{ PROTO_SUBPROTOCOL, gclient_lws_cb, 0, 65536, 0, NULL, 0 },
	{ GCLIENT_FD_PROTOCOL, gclient_fd_lws_cb, 0, 0, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

const struct lws_protocols gclient_protocol = {
	PROTO_SUBPROTOCOL, gclient_lws_cb, 0, 65536, 0, NULL, 0
};

/* Record the first fatal error; later ones are consequences. */
static void
gclient_fail(struct gclient *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
gclient_fail(struct gclient *c, int code, const char *fmt, ...)
{
	char	 tmp[GCLIENT_ERRLEN];
	va_list	 ap;

	if (c->err != 0)
		return;
	c->err = code;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	redact_text(c->errmsg, sizeof(c->errmsg), tmp);
}

/* ---- URL ---------------------------------------------------------------- */

/*
 * ws://host[:port][/path].  Credentials in the URL are refused rather than
 * used: the secret belongs in a file, and a URL ends up in shell history.
 */
static int
gclient_parse_url(struct gclient *c, const char *url, char *err,
    size_t errlen)
{
	const char	*p, *auth, *end, *colon;
	size_t		 hlen;
	long		 port = 80;
	char		*ep;

	if (url == NULL || *url == '\0') {
		snprintf(err, errlen, "CONFIG_INVALID: no URL given");
		return ERR_CONFIG;
	}
	if (strncasecmp(url, "wss://", 6) == 0) {
		snprintf(err, errlen, "CONFIG_INVALID: wss:// is not supported "
		    "yet; use ws://host:port");
		return ERR_CONFIG;
	}
	if (strncasecmp(url, "ws://", 5) != 0) {
		snprintf(err, errlen, "CONFIG_INVALID: unsupported URL scheme; "
		    "use ws://host:port");
		return ERR_CONFIG;
	}
	auth = url + 5;
	end = auth + strcspn(auth, "/?#");
	if (memchr(auth, '@', (size_t)(end - auth)) != NULL) {
		snprintf(err, errlen, "CONFIG_INVALID: credentials in the URL "
		    "are not supported; use a secret file");
		return ERR_CONFIG;
	}
	if (*auth == '[') {
		p = memchr(auth, ']', (size_t)(end - auth));
		if (p == NULL)
			goto bad;
		hlen = (size_t)(p - auth - 1);
		auth++;
		colon = (p + 1 < end && p[1] == ':') ? p + 1 : NULL;
		if (p + 1 != end && colon == NULL)
			goto bad;
	} else {
		colon = memchr(auth, ':', (size_t)(end - auth));
		hlen = (size_t)((colon != NULL ? colon : end) - auth);
	}
	if (hlen == 0 || hlen >= sizeof(c->host))
		goto bad;
	memcpy(c->host, auth, hlen);
	c->host[hlen] = '\0';
	if (colon != NULL) {
		errno = 0;
		port = strtol(colon + 1, &ep, 10);
		if (ep != end || colon + 1 == end || errno != 0 || port < 1 ||
		    port > 65535)
			goto bad;
	}
	c->port = (int)port;
	snprintf(c->hosthdr, sizeof(c->hosthdr), strchr(c->host, ':') ?
	    "[%s]:%d" : "%s:%d", c->host, c->port);
	if (*end != '/' || end[1] == '\0') {
		if (*end != '\0' && strcmp(end, "/") != 0)
			goto bad;
		snprintf(c->path, sizeof(c->path), "%s", PROTO_PATH);
		return 0;
	}
	if (strlen(end) >= sizeof(c->path))
		goto bad;
	for (p = end; *p != '\0'; p++)
		if (!isgraph((unsigned char)*p))
			goto bad;
	snprintf(c->path, sizeof(c->path), "%s", end);
	return 0;
bad:
	snprintf(err, errlen, "CONFIG_INVALID: the URL is not of the form "
	    "ws://host:port[/path]");
	return ERR_CONFIG;
}

/* ---- requests and the outgoing queue ------------------------------------ */

static struct gclient_req *
gclient_req_find(struct gclient *c, uint32_t id, struct gclient_req ***prevp)
{
	struct gclient_req	**pp;

	for (pp = &c->reqs; *pp != NULL; pp = &(*pp)->next) {
		if ((*pp)->id == id) {
			if (prevp != NULL)
				*prevp = pp;
			return *pp;
		}
	}
	return NULL;
}

static void
gclient_want_write(struct gclient *c)
{
	if (c->wsi != NULL && c->state == GCLIENT_OPEN)
		lws_callback_on_writable(c->wsi);
}

/* Queue a copy of p; the header (if any) goes in front of the payload. */
static int
gclient_enqueue(struct gclient *c, int binary, const void *hdr, size_t hlen,
    const void *p, size_t n)
{
	struct gclient_msg	*m;

	if (c->state != GCLIENT_OPEN)
		return ERR_PEER_GONE;
	m = xmalloc(sizeof(*m) + LWS_PRE + hlen + n);
	m->next = NULL;
	m->binary = binary;
	m->len = hlen + n;
	if (hlen > 0)
		memcpy(m->data + LWS_PRE, hdr, hlen);
	if (n > 0)
		memcpy(m->data + LWS_PRE + hlen, p, n);
	*c->qtail = m;
	c->qtail = &m->next;
	gclient_want_write(c);
	return 0;
}

static void
gclient_queue_free(struct gclient *c)
{
	struct gclient_msg	*m;

	while ((m = c->qhead) != NULL) {
		c->qhead = m->next;
		free(m);
	}
	c->qtail = &c->qhead;
}

static struct gclient_req *
gclient_upload_next(struct gclient *c)
{
	struct gclient_req	*r;

	for (r = c->reqs; r != NULL; r = r->next)
		if (r->src != NULL && !r->paused)
			return r;
	return NULL;
}

/* Pull one chunk of the oldest upload and write it as one frame. */
static int
gclient_write_upload(struct gclient *c, struct gclient_req *r)
{
	uint8_t	*body = c->upbuf + LWS_PRE;
	ssize_t	 n;
	int	 end = 0;

	n = r->src(r->src_arg, body + PROTO_FRAME_HDR, PROTO_CHUNK, &end);
	if (n < 0) {
		r->src = NULL;
		gclient_fail(c, (int)n, "the upload source failed: %s",
		    err_message((int)n));
		return -1;
	}
	if ((size_t)n > PROTO_CHUNK) {
		gclient_fail(c, ERR_INTERNAL, "the upload source overran");
		return -1;
	}
	if (n == 0 && !end) {
		/* Nothing yet: skipped until gclient_upload_resume(). */
		r->paused = 1;
		return 0;
	}
	proto_frame_header(body, r->id, PROTO_CH_DATA, end ? PROTO_F_END : 0);
	if (lws_write(c->wsi, body, PROTO_FRAME_HDR + (size_t)n,
	    LWS_WRITE_BINARY) < (int)(PROTO_FRAME_HDR + n)) {
		gclient_fail(c, ERR_PEER_GONE, "writing to guestd failed");
		return -1;
	}
	if (end)
		r->src = NULL;
	return 0;
}

static int
gclient_writeable(struct gclient *c)
{
	struct gclient_msg	*m;
	struct gclient_req	*r;

	c->last_activity = lws_now_usecs();
	if ((m = c->qhead) != NULL) {
		c->qhead = m->next;
		if (c->qhead == NULL)
			c->qtail = &c->qhead;
		if (lws_write(c->wsi, m->data + LWS_PRE, m->len, m->binary ?
		    LWS_WRITE_BINARY : LWS_WRITE_TEXT) < (int)m->len) {
			free(m);
			gclient_fail(c, ERR_PEER_GONE, "writing to guestd "
			    "failed");
			return -1;
		}
		free(m);
	} else if ((r = gclient_upload_next(c)) != NULL) {
		if (gclient_write_upload(c, r) != 0)
			return -1;
	}
	if (c->qhead != NULL || gclient_upload_next(c) != NULL)
		lws_callback_on_writable(c->wsi);
	return 0;
}

/* ---- incoming messages -------------------------------------------------- */

static void
gclient_on_text(struct gclient *c, const char *s, size_t n)
{
	struct gclient_req	*r, **pp;
	json_t			*msg, *jid;
	char			 perr[JSONX_ERRLEN];
	int			 code;
	json_int_t		 id;

	msg = jsonx_parse(s, n, PROTO_MAX_REPLY, 1, &code, perr);
	if (msg == NULL) {
		gclient_fail(c, ERR_PROTOCOL, "guestd sent bad JSON: %s", perr);
		return;
	}
	if (json_object_get(msg, "event") != NULL) {
		if (c->on_event != NULL)
			c->on_event(c, msg, c->event_arg);
		goto out;
	}
	jid = json_object_get(msg, "id");
	if (!json_is_integer(jid) || (id = json_integer_value(jid)) <= 0 ||
	    id > UINT32_MAX)
		goto out;	/* an unsolicited error reply: nothing to route */
	if ((r = gclient_req_find(c, (uint32_t)id, &pp)) == NULL)
		goto out;
	/* Unlink first so the callback may issue new requests freely. */
	*pp = r->next;
	if (r->on_reply != NULL)
		r->on_reply(c, r->id, msg, r->arg);
	free(r);
out:
	json_decref(msg);
}

static void
gclient_on_binary(struct gclient *c, const uint8_t *p, size_t n)
{
	struct proto_frame	 f;
	struct gclient_req	*r;
	int			 rc;

	if (proto_frame_parse(p, n, &f) != 0) {
		gclient_fail(c, ERR_PROTOCOL, "guestd sent a bad binary frame");
		return;
	}
	r = gclient_req_find(c, f.id, NULL);
	if (r == NULL || r->on_data == NULL)
		return;
	rc = r->on_data(c, f.id, f.channel, f.payload, f.len,
	    (f.flags & PROTO_F_END) != 0, r->arg);
	if (rc != 0)
		gclient_fail(c, rc, "%s", err_message(rc));
}

/* Append one fragment; dispatch when the message is whole. */
static int
gclient_receive(struct gclient *c, struct lws *wsi, const void *in,
    size_t len)
{
	size_t	 cap;

	c->last_activity = lws_now_usecs();
	if (lws_is_first_fragment(wsi) || !c->rx_active) {
		buf_reset(&c->rx);
		c->rx_binary = lws_frame_is_binary(wsi);
		c->rx_active = 1;
	}
	cap = c->rx_binary ? PROTO_MAX_BINARY : PROTO_MAX_REPLY;
	if (len > cap || c->rx.len > cap - len) {
		gclient_fail(c, ERR_PROTOCOL, "guestd sent a message larger "
		    "than %zu bytes", cap);
		lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE,
		    (unsigned char *)"too large", 9);
		return -1;
	}
	if (len > 0 && buf_append(&c->rx, in, len) != 0) {
		gclient_fail(c, ERR_NOMEM, "out of memory");
		return -1;
	}
	if (!lws_is_final_fragment(wsi))
		return 0;
	c->rx_active = 0;
	if (c->rx_binary)
		gclient_on_binary(c, c->rx.data, c->rx.len);
	else
		gclient_on_text(c, (const char *)c->rx.data, c->rx.len);
	buf_reset(&c->rx);
	if (c->err != 0) {
		lws_close_reason(wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION,
		    NULL, 0);
		return -1;
	}
	return 0;
}

/* ---- lws callbacks ------------------------------------------------------ */

static int
gclient_append_auth(struct gclient *c, struct lws *wsi, void *in, size_t len)
{
	unsigned char	**p = in, *end = *p + len;
	char		 *val;
	size_t		  vlen;
	int		  r;

	vlen = 7 + c->secretlen;
	val = xmalloc(vlen + 1);
	memcpy(val, "Bearer ", 7);
	memcpy(val + 7, c->secret, c->secretlen);
	val[vlen] = '\0';
	r = lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_AUTHORIZATION,
	    (unsigned char *)val, (int)vlen, p, end);
	explicit_bzero(val, vlen);
	free(val);
	return r != 0 ? -1 : 0;
}

static void
gclient_connect_error(struct gclient *c, struct lws *wsi, const char *why)
{
	unsigned	 status = wsi != NULL ? lws_http_client_http_response(wsi)
			    : 0;

	if (status == 401 || status == 403 ||
	    (why != NULL && strstr(why, "unauthorized") != NULL)) {
		gclient_fail(c, ERR_UNAUTHORIZED, "guestd at %s refused the "
		    "secret (HTTP %u)", c->hosthdr, status ? status : 401);
		return;
	}
	if (status != 0)
		gclient_fail(c, ERR_CONNECT, "cannot connect to ws://%s%s: "
		    "HTTP %u instead of a websocket upgrade", c->hosthdr,
		    c->path, status);
	else
		gclient_fail(c, ERR_CONNECT, "cannot connect to ws://%s%s: %s",
		    c->hosthdr, c->path, why != NULL ? why : "unknown error");
}

static int
gclient_lws_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	struct gclient	*c = lws_get_opaque_user_data(wsi);
	int		 r;

	if (c == NULL)
		return 0;
	r = gclient_lws_event(c, wsi, reason, in, len);
	/* Attached: tasks waiting on this client recheck their state. */
	if (c->attached)
		task_cond_broadcast(&c->cv);
	return r;
}

static int
gclient_lws_event(struct gclient *c, struct lws *wsi,
    enum lws_callback_reasons reason, void *in, size_t len)
{
	switch (reason) {
	case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
		return gclient_append_auth(c, wsi, in, len);
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		gclient_connect_error(c, wsi, in);
		c->wsi = NULL;
		c->state = GCLIENT_CLOSED;
		break;
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		c->state = GCLIENT_OPEN;
		c->last_activity = lws_now_usecs();
		if (c->qhead != NULL)
			lws_callback_on_writable(wsi);
		break;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		return gclient_receive(c, wsi, in, len);
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		if (c->err != 0)
			return -1;
		return gclient_writeable(c);
	case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
		if (len >= 2) {
			const uint8_t *p = in;
			int code = (p[0] << 8) | p[1];
			char reason_s[124];
			size_t rl = len - 2 < sizeof(reason_s) - 1 ?
			    len - 2 : sizeof(reason_s) - 1;

			memcpy(reason_s, p + 2, rl);
			reason_s[rl] = '\0';
			gclient_fail(c, ERR_PEER_GONE, "guestd closed the "
			    "connection (%d%s%s)", code, rl ? " " : "",
			    reason_s);
		}
		break;
	case LWS_CALLBACK_CLIENT_CLOSED:
		gclient_fail(c, ERR_PEER_GONE, "guestd closed the connection");
		c->wsi = NULL;
		c->state = GCLIENT_CLOSED;
		break;
	default:
		break;
	}
	return 0;
}

static int
gclient_fd_lws_cb(struct lws *wsi, enum lws_callback_reasons reason,
    void *user, void *in, size_t len)
{
	struct gclient		*c = lws_get_opaque_user_data(wsi);
	struct gclient_watch	*w;

	if (c == NULL)
		return 0;
	for (w = c->watches; w != NULL; w = w->next)
		if (w->wsi == wsi)
			break;
	if (w == NULL)
		return 0;
	switch (reason) {
	case LWS_CALLBACK_RAW_RX_FILE:
		w->cb(c, lws_get_socket_fd(wsi), w->arg);
		break;
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		w->wsi = NULL;
		break;
	default:
		break;
	}
	return 0;
}

/* ---- running the loop --------------------------------------------------- */

static void
gclient_idle_cb(lws_sorted_usec_list_t *sul)
{
	struct gclient	*c = lws_container_of(sul, struct gclient, sul);
	lws_usec_t	 now = lws_now_usecs(), due;

	due = c->last_activity + c->idle_us;
	if (now >= due) {
		c->timed_out = 1;
		/* Timers run just before lws polls: wake that poll. */
		lws_cancel_service(c->ctx);
		return;
	}
	lws_sul_schedule(c->ctx, 0, &c->sul, gclient_idle_cb, due - now);
}

/*
 * Attached: the owner's loop runs; this task waits for the client's
 * callbacks.  Several tasks may wait on one client, each for its own
 * request, so the idle limit is measured per waiter from the later of its
 * start and the connection's last traffic.
 */
static int
gclient_run_task(struct gclient *c, const int *done, int timeout_ms)
{
	lws_usec_t	 start = lws_now_usecs(), since, now;
	int64_t		 left = -1;

	for (;;) {
		if (done != NULL && *done)
			return 0;
		if (c->err != 0 || c->state == GCLIENT_CLOSED)
			return c->err != 0 ? c->err : ERR_PEER_GONE;
		if (timeout_ms > 0) {
			now = lws_now_usecs();
			since = c->last_activity > start ? c->last_activity :
			    start;
			left = timeout_ms - (int64_t)(now - since) / 1000;
			if (left <= 0) {
				gclient_fail(c, ERR_PEER_GONE, "guestd did not "
				    "answer within %d ms", timeout_ms);
				task_cond_broadcast(&c->cv);
				return c->err;
			}
		}
		if (task_cond_wait(&c->cv, left) == ERR_INTERNAL) {
			gclient_fail(c, ERR_INTERNAL, "an attached client "
			    "waited outside a task");
			return c->err;
		}
	}
}

int
gclient_run(struct gclient *c, const int *done, int timeout_ms)
{
	int	 r = ERR_INTERNAL;

	if (c->attached)
		return gclient_run_task(c, done, timeout_ms);
	c->timed_out = 0;
	c->last_activity = lws_now_usecs();
	if (timeout_ms > 0) {
		c->idle_us = (lws_usec_t)timeout_ms * 1000;
		lws_sul_schedule(c->ctx, 0, &c->sul, gclient_idle_cb,
		    c->idle_us);
	}
	for (;;) {
		if (done != NULL && *done) {
			r = 0;
			break;
		}
		if (c->err != 0 || c->state == GCLIENT_CLOSED) {
			r = c->err != 0 ? c->err : ERR_PEER_GONE;
			break;
		}
		if (c->timed_out) {
			gclient_fail(c, ERR_PEER_GONE, "guestd did not answer "
			    "within %d ms", timeout_ms);
			r = c->err;
			break;
		}
		if (lws_service(c->ctx, 0) < 0) {
			gclient_fail(c, ERR_INTERNAL, "the event loop failed");
			r = c->err;
			break;
		}
	}
	lws_sul_cancel(&c->sul);
	return r;
}

/* ---- public API --------------------------------------------------------- */

static void
gclient_wait_reply(struct gclient *c, uint32_t id, json_t *msg, void *arg)
{
	struct gclient_wait	*w = arg;

	w->msg = json_incref(msg);
	w->done = 1;
}

int
gclient_reply_error(json_t *msg, char *err, size_t errlen)
{
	json_t		*e;
	const char	*name = NULL, *message = NULL;
	char		 red[GCLIENT_ERRLEN];
	int		 code;

	e = json_object_get(msg, "error");
	if (json_is_object(e)) {
		name = json_string_value(json_object_get(e, "code"));
		message = json_string_value(json_object_get(e, "message"));
	}
	code = ERR_INTERNAL;
	if (name != NULL) {
		for (code = ERR_INTERNAL; code > ERR__LAST; code--)
			if (strcmp(err_name(code), name) == 0)
				break;
		if (code == ERR__LAST)
			code = ERR_INTERNAL;
	}
	if (err != NULL && errlen > 0) {
		redact_text(red, sizeof(red), message != NULL ? message :
		    err_message(code));
		snprintf(err, errlen, "%s: %s", name != NULL ? name :
		    err_name(code), red);
	}
	return code;
}

uint32_t
gclient_request(struct gclient *c, const char *op, json_t *args,
    gclient_reply_cb on_reply, gclient_data_cb on_data, void *arg)
{
	struct gclient_req	*r;
	json_t			*msg;
	char			*s = NULL;
	size_t			 n;
	uint32_t		 id = 0;

	if (args == NULL)
		args = json_object();
	if (c->state != GCLIENT_OPEN || c->err != 0)
		goto out;
	if (++c->next_id == 0)
		c->next_id = 1;
	msg = json_pack("{s:I, s:s, s:O}", "id", (json_int_t)c->next_id,
	    "op", op, "args", args);
	if (msg == NULL)
		goto out;
	s = jsonx_dump(msg, &n);
	json_decref(msg);
	if (s == NULL || n > PROTO_MAX_JSON)
		goto out;
	if (gclient_enqueue(c, 0, NULL, 0, s, n) != 0)
		goto out;
	r = xcalloc(1, sizeof(*r));
	r->id = c->next_id;
	r->on_reply = on_reply;
	r->on_data = on_data;
	r->arg = arg;
	r->next = c->reqs;
	c->reqs = r;
	id = r->id;
out:
	free(s);
	json_decref(args);
	return id;
}

void
gclient_forget(struct gclient *c, uint32_t id)
{
	struct gclient_req	*r, **pp;

	if ((r = gclient_req_find(c, id, &pp)) == NULL)
		return;
	*pp = r->next;
	free(r);
}

int
gclient_upload(struct gclient *c, uint32_t id, gclient_source_cb src,
    void *arg)
{
	struct gclient_req	*r;

	if ((r = gclient_req_find(c, id, NULL)) == NULL)
		return ERR_NOT_FOUND;
	if (r->src != NULL || src == NULL)
		return ERR_BUSY;
	r->src = src;
	r->src_arg = arg;
	r->paused = 0;
	gclient_want_write(c);
	return 0;
}

int
gclient_upload_resume(struct gclient *c, uint32_t id)
{
	struct gclient_req	*r;

	if ((r = gclient_req_find(c, id, NULL)) == NULL || r->src == NULL)
		return ERR_NOT_FOUND;
	if (r->paused) {
		r->paused = 0;
		gclient_want_write(c);
	}
	return 0;
}

int
gclient_call(struct gclient *c, const char *op, json_t *args,
    json_t **result, char *err, size_t errlen)
{
	struct gclient_wait	 w = { 0, NULL };
	json_t			*ok;
	int			 r = ERR_INTERNAL;

	*result = NULL;
	if (err != NULL && errlen > 0)
		*err = '\0';
	if (gclient_request(c, op, args, gclient_wait_reply, NULL, &w) == 0) {
		r = c->err != 0 ? c->err : ERR_PEER_GONE;
		goto fail;
	}
	if ((r = gclient_run(c, &w.done, c->timeout_ms)) != 0)
		goto fail;
	ok = json_object_get(w.msg, "ok");
	if (!json_is_true(ok)) {
		r = gclient_reply_error(w.msg, err, errlen);
		goto out;
	}
	*result = json_incref(json_object_get(w.msg, "result"));
	if (*result == NULL)
		*result = json_object();
	r = 0;
	goto out;
fail:
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s: %s", err_name(r), c->errmsg[0] ?
		    c->errmsg : err_message(r));
out:
	json_decref(w.msg);
	return r;
}

static int
gclient_open(struct gclient *c, char *err, size_t errlen)
{
	struct lws_context_creation_info	 info;
	struct lws_client_connect_info		 ci;
	int					 r;

	if (!c->attached) {
		memset(&info, 0, sizeof(info));
		info.port = CONTEXT_PORT_NO_LISTEN;
		info.protocols = gclient_protocols;
		info.gid = -1;
		info.uid = -1;
		c->ctx = lws_create_context(&info);
		if (c->ctx == NULL) {
			snprintf(err, errlen, "INTERNAL: cannot create the "
			    "websocket context");
			return ERR_INTERNAL;
		}
	}
	memset(&ci, 0, sizeof(ci));
	ci.context = c->ctx;
	ci.vhost = c->vhost;
	ci.opaque_user_data = c;
	ci.address = c->host;
	ci.port = c->port;
	ci.path = c->path;
	ci.host = c->hosthdr;
	ci.origin = c->hosthdr;
	ci.protocol = PROTO_SUBPROTOCOL;
	ci.local_protocol_name = PROTO_SUBPROTOCOL;
	ci.pwsi = &c->wsi;
	if (lws_client_connect_via_info(&ci) == NULL) {
		/* The CONNECTION_ERROR callback usually said why already. */
		gclient_fail(c, ERR_CONNECT, "cannot connect to ws://%s%s",
		    c->hosthdr, c->path);
		c->state = GCLIENT_CLOSED;
	}
	c->last_activity = lws_now_usecs();
	c->idle_us = (lws_usec_t)c->timeout_ms * 1000;
	if (c->attached) {
		while (c->state == GCLIENT_CONNECTING)
			if (task_cond_wait(&c->cv, c->timeout_ms) != 0)
				break;
	} else {
		lws_sul_schedule(c->ctx, 0, &c->sul, gclient_idle_cb,
		    c->idle_us);
		while (c->state == GCLIENT_CONNECTING && !c->timed_out)
			if (lws_service(c->ctx, 0) < 0)
				break;
		lws_sul_cancel(&c->sul);
	}
	if (c->state == GCLIENT_OPEN)
		return 0;
	if (c->err == 0)
		gclient_fail(c, ERR_CONNECT, "cannot connect to ws://%s%s: no "
		    "answer within %d ms", c->hosthdr, c->path, c->timeout_ms);
	r = c->err == ERR_UNAUTHORIZED ? ERR_UNAUTHORIZED : ERR_CONNECT;
	snprintf(err, errlen, "%s: %s", err_name(r), c->errmsg);
	return r;
}

static int
gclient_do_hello(struct gclient *c, char *err, size_t errlen)
{
	json_t	*args, *res = NULL;
	int	 r;

	args = json_pack("{s:i, s:s}", "version", PROTO_VERSION, "client",
	    "rakazoctl/" VERSION);
	r = gclient_call(c, "hello", args, &res, err, errlen);
	if (r != 0)
		return r;
	c->hello = res;
	return 0;
}

int
gclient_connect(struct gclient **out, const struct gclient_opts *o,
    char *err, size_t errlen)
{
	struct gclient	*c;
	int		 r = ERR_INTERNAL;

	*out = NULL;
	if (errlen > 0)
		*err = '\0';
	c = xcalloc(1, sizeof(*c));
	c->qtail = &c->qhead;
	c->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms :
	    GCLIENT_DEFAULT_TIMEOUT;
	buf_init(&c->rx, PROTO_MAX_REPLY);
	c->upbuf = xmalloc(LWS_PRE + PROTO_FRAME_HDR + PROTO_CHUNK);
	if (o->secret == NULL || *o->secret == '\0' ||
	    strpbrk(o->secret, "\r\n") != NULL) {
		snprintf(err, errlen, "CONFIG_INVALID: the secret is empty or "
		    "spans lines");
		r = ERR_CONFIG;
		goto out;
	}
	c->secret = xstrdup(o->secret);
	c->secretlen = strlen(c->secret);
	if (o->vhost != NULL) {
		if (task_self() == NULL || o->ctx == NULL) {
			snprintf(err, errlen, "INTERNAL: an attached client "
			    "connects from a task only");
			goto out;
		}
		c->attached = 1;
		c->vhost = o->vhost;
		c->ctx = o->ctx;
	}
	if ((r = gclient_parse_url(c, o->url, err, errlen)) != 0)
		goto out;
	if ((r = gclient_open(c, err, errlen)) != 0)
		goto out;
	if ((r = gclient_do_hello(c, err, errlen)) != 0)
		goto out;
	*out = c;
	c = NULL;
	r = 0;
out:
	gclient_free(c);
	return r;
}

void
gclient_free(struct gclient *c)
{
	struct gclient_req	*r;
	struct gclient_watch	*w;

	if (c == NULL)
		return;
	if (c->attached) {
		/* The loop is the owner's: close ours, leave the rest. */
		if (c->wsi != NULL) {
			lws_set_opaque_user_data(c->wsi, NULL);
			lws_set_timeout(c->wsi, PENDING_TIMEOUT_KILLED_BY_PARENT,
			    LWS_TO_KILL_ASYNC);
		}
		for (w = c->watches; w != NULL; w = w->next)
			if (w->wsi != NULL) {
				lws_set_opaque_user_data(w->wsi, NULL);
				lws_set_timeout(w->wsi,
				    PENDING_TIMEOUT_KILLED_BY_PARENT,
				    LWS_TO_KILL_ASYNC);
			}
	} else if (c->ctx != NULL) {
		lws_sul_cancel(&c->sul);
		lws_context_destroy(c->ctx);
	}
	while ((r = c->reqs) != NULL) {
		c->reqs = r->next;
		free(r);
	}
	while ((w = c->watches) != NULL) {
		c->watches = w->next;
		free(w);
	}
	gclient_queue_free(c);
	buf_free(&c->rx);
	free(c->upbuf);
	json_decref(c->hello);
	if (c->secret != NULL) {
		explicit_bzero(c->secret, c->secretlen);
		free(c->secret);
	}
	free(c);
}

json_t *
gclient_hello(struct gclient *c)
{
	return c->hello;
}

void
gclient_on_event(struct gclient *c, gclient_event_cb cb, void *arg)
{
	c->on_event = cb;
	c->event_arg = arg;
}

int
gclient_watch_fd(struct gclient *c, int fd, gclient_fd_cb cb, void *arg)
{
	struct gclient_watch	*w;
	lws_sock_file_fd_type	 u;
	lws_adopt_desc_t	 ad;

	if (c->wsi == NULL || c->attached) {
		/* Attached clients have the owner's loop for their fds. */
		close(fd);
		return c->attached ? ERR_INTERNAL : ERR_PEER_GONE;
	}
	w = xcalloc(1, sizeof(*w));
	w->cb = cb;
	w->arg = arg;
	/* Linked before adoption: lws may call back during the adopt. */
	w->next = c->watches;
	c->watches = w;
	u.filefd = fd;
	memset(&ad, 0, sizeof(ad));
	ad.vh = lws_get_vhost(c->wsi);
	ad.type = LWS_ADOPT_RAW_FILE_DESC;
	ad.fd = u;
	ad.vh_prot_name = GCLIENT_FD_PROTOCOL;
	ad.opaque = c;
	w->wsi = lws_adopt_descriptor_vhost_via_info(&ad);
	if (w->wsi == NULL) {
		/* lws closed fd already. */
		c->watches = w->next;
		free(w);
		return ERR_INTERNAL;
	}
	return 0;
}

const char *
gclient_error(struct gclient *c)
{
	return c->errmsg;
}

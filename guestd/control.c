/* SPDX-License-Identifier: MIT */
/*
 * The control channel (doc/DESIGN.md G-31): one websocket at /control per
 * controller, authenticated with the per-computer bearer secret.
 *
 * Everything a peer sends is bounded here before anyone parses it: text
 * messages reassemble into a buffer capped at PROTO_MAX_JSON and binary ones
 * at PROTO_MAX_BINARY; a larger message is discarded to its end and answered
 * with TOO_LARGE, and the connection lives on.  Requests are dispatched to
 * the op table; an op replies at once or later through control_reply*().
 *
 * Outbound messages queue per connection.  Producers of bulk bytes (command
 * output, file reads, tar streams) look at control_out_full() and pause as
 * control streams; they are resumed when the queue drains below
 * CONTROL_OUT_LOW.  So a controller that stops reading costs at most about
 * CONTROL_OUT_HIGH plus one chunk per stream, not an unbounded queue.
 *
 * Inbound bulk bytes go to the stream of their request id.  A sink that is
 * full answers ERR_BUSY: we keep that one message, stop reading the socket
 * (lws_rx_flow_control) and offer it again when the sink calls
 * control_stream_rx_resume().
 */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libwebsockets.h>

#include "buf.h"
#include "control.h"
#include "err.h"
#include "json.h"
#include "log.h"
#include "path.h"
#include "proto.h"
#include "queue-compat.h"
#include "redact.h"
#include "token.h"
#include "xmalloc.h"

#define CONTROL_MAX_CONNS	32
#define CONTROL_MAX_FENCES	4096
/*
 * Requests in progress (streams) per connection.  Each may hold fds and a
 * chunk buffer, so a client that pipelines requests it never finishes
 * (uploads without a body, reads it never drains) is answered BUSY past
 * this, instead of spending guestd's fds and memory.  Above exec's 64
 * running commands, so a controller's ordinary load never meets it.
 */
#define CONTROL_MAX_STREAMS	128

struct control_out {
	STAILQ_ENTRY(control_out) entry;
	size_t			 len;
	int			 binary;
	unsigned char		 data[];	/* LWS_PRE + len */
};

struct control_conn {
	struct lws		*wsi;
	char			 peer[64];
	int			 hello;
	int			 closing;

	/* inbound reassembly */
	struct buf		 rx;
	int			 rx_binary;
	int			 rx_discard;	/* oversized: drop to final */
	int			 rx_held;	/* rx holds a frame a sink refused */
	int			 rx_out_paused;	/* not reading: replies back up */
	lws_sorted_usec_list_t	 rx_retry;

	/* outbound queue */
	STAILQ_HEAD(, control_out) outq;
	size_t			 out_bytes;

	LIST_HEAD(, control_stream) streams;
	unsigned		 nstreams;
	LIST_ENTRY(control_conn) entry;
};

/*
 * Highest fence seen per bot (G-32), for the CONTROL_MAX_FENCES bots used
 * most recently.  When a new bot arrives with the table full, the bot
 * whose fence was last checked longest ago is forgotten: bots come and go
 * (their leases end), and refusing every new one until a restart would be
 * worse than forgetting the idlest.
 */
struct control_fence {
	char			 bot[65];
	int64_t			 fence;
	uint64_t		 used;		/* control_fence_clock then */
};

static char			 control_secret[SECRET_MAX + 1];
static size_t			 control_secret_len;
static const struct control_op	*control_ops;
static size_t			 control_nops;
static LIST_HEAD(, control_conn) control_conns =
    LIST_HEAD_INITIALIZER(control_conns);
static unsigned			 control_nconns;
static struct control_fence	*control_fences;
static size_t			 control_nfences;
static uint64_t			 control_fence_clock;

static int	control_cb(struct lws *, enum lws_callback_reasons, void *,
		    void *, size_t);

const struct lws_protocols control_protocol = {
	PROTO_SUBPROTOCOL, control_cb, sizeof(struct control_conn *),
	64 * 1024, 0, NULL, 0
};

void
control_set_secret(const char *secret)
{
	control_secret_len = strlen(secret);
	if (control_secret_len > SECRET_MAX)
		fatal("secret too long");
	memcpy(control_secret, secret, control_secret_len);
}

void
control_set_ops(const struct control_op *ops, size_t n)
{
	control_ops = ops;
	control_nops = n;
}

unsigned
control_count(void)
{
	return control_nconns;
}

void
control_hello_done(struct control_conn *c)
{
	c->hello = 1;
}

void
control_close_all(void)
{
	struct control_conn	*c;

	LIST_FOREACH(c, &control_conns, entry) {
		c->closing = 1;
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_KILLED_BY_PARENT,
		    LWS_TO_KILL_ASYNC);
	}
}

/* ---- authentication ---------------------------------------------------- */

/*
 * Only GET /control with "Authorization: Bearer <secret>" gets through.
 * The token is compared in constant time and never logged.
 */
static int
control_authorize(struct lws *wsi, const char *peer)
{
	char	uri[64], auth[SECRET_MAX + 32];
	int	n, ok;

	n = lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI);
	if (n <= 0 || n >= (int)sizeof uri ||
	    lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI) < 0 ||
	    strcmp(uri, PROTO_PATH) != 0) {
		log_warn("control.rejected", "peer=%s reason=path", peer);
		return ERR_NOT_FOUND;
	}
	n = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_AUTHORIZATION);
	if (n <= 7 || n >= (int)sizeof auth ||
	    lws_hdr_copy(wsi, auth, sizeof auth,
	    WSI_TOKEN_HTTP_AUTHORIZATION) < 0 ||
	    strncasecmp(auth, "Bearer ", 7) != 0) {
		log_warn("control.rejected", "peer=%s reason=no_credentials",
		    peer);
		return ERR_UNAUTHORIZED;
	}
	ok = control_secret_len > 0 && token_equal(auth + 7, strlen(auth + 7),
	    control_secret, control_secret_len);
	token_wipe(auth, sizeof auth);
	if (!ok) {
		log_warn("control.rejected", "peer=%s reason=bad_credentials",
		    peer);
		return ERR_UNAUTHORIZED;
	}
	return 0;
}

/* ---- outbound ------------------------------------------------------------ */

static int
control_queue(struct control_conn *c, const void *hdr, size_t hlen,
    const void *p, size_t n, int binary)
{
	struct control_out	*o;

	if (c->closing)
		return ERR_PEER_GONE;
	o = xmalloc(sizeof *o + LWS_PRE + hlen + n);
	o->len = hlen + n;
	o->binary = binary;
	if (hlen > 0)
		memcpy(o->data + LWS_PRE, hdr, hlen);
	if (n > 0)
		memcpy(o->data + LWS_PRE + hlen, p, n);
	STAILQ_INSERT_TAIL(&c->outq, o, entry);
	c->out_bytes += o->len;
	lws_callback_on_writable(c->wsi);
	return 0;
}

static int
control_queue_json(struct control_conn *c, json_t *j)
{
	char	*s;
	size_t	 len;
	int	 r;

	s = jsonx_dump(j, &len);
	json_decref(j);
	if (s == NULL)
		return ERR_NOMEM;
	r = control_queue(c, NULL, 0, s, len, 0);
	free(s);
	return r;
}

int
control_reply(struct control_conn *c, uint32_t id, json_t *result)
{
	json_t	*j;

	if (result == NULL)
		result = json_object();
	j = json_pack("{s:I,s:b,s:o}", "id", (json_int_t)id, "ok", 1,
	    "result", result);
	if (j == NULL)
		return ERR_NOMEM;
	return control_queue_json(c, j);
}

int
control_reply_error(struct control_conn *c, uint32_t id, int code,
    const char *detail)
{
	return control_reply_error_ex(c, id, code, detail, NULL);
}

int
control_reply_error_ex(struct control_conn *c, uint32_t id, int code,
    const char *detail, json_t *extra)
{
	char	 msg[512];
	json_t	*j;

	if (detail != NULL && *detail != '\0') {
		char	tmp[512];

		snprintf(tmp, sizeof tmp, "%s %s", err_message(code), detail);
		redact_text(msg, sizeof msg, tmp);
	} else
		snprintf(msg, sizeof msg, "%s", err_message(code));
	j = json_pack("{s:I,s:b,s:{s:s,s:s}}", "id", (json_int_t)id, "ok", 0,
	    "error", "code", err_name(code), "message", msg);
	if (j == NULL) {
		json_decref(extra);
		return ERR_NOMEM;
	}
	if (extra != NULL) {
		/* Progress of a partly done request (e.g. act's "done"). */
		json_object_update_missing(json_object_get(j, "error"), extra);
		json_decref(extra);
	}
	log_debug("control.error", "id=%u code=%s", id, err_name(code));
	return control_queue_json(c, j);
}

int
control_event(struct control_conn *c, const char *name, uint32_t id,
    json_t *body)
{
	if (body == NULL)
		body = json_object();
	if (body == NULL || json_object_set_new(body, "event",
	    json_string(name)) != 0) {
		json_decref(body);
		return ERR_NOMEM;
	}
	if (id != 0)
		json_object_set_new(body, "id", json_integer(id));
	return control_queue_json(c, body);
}

void
control_broadcast(const char *name, json_t *body)
{
	struct control_conn	*c;

	LIST_FOREACH(c, &control_conns, entry) {
		/* Diagnostics are dropped, never queued without bound. */
		if (c->hello && !c->closing && !control_out_full(c))
			control_event(c, name, 0, json_deep_copy(body));
	}
	json_decref(body);
}

int
control_send_data(struct control_conn *c, uint32_t id, uint8_t channel,
    const void *p, size_t n, int end)
{
	uint8_t	hdr[PROTO_FRAME_HDR];

	if (n > PROTO_MAX_BINARY - PROTO_FRAME_HDR)
		return ERR_TOO_LARGE;
	proto_frame_header(hdr, id, channel, end ? PROTO_F_END : 0);
	return control_queue(c, hdr, sizeof hdr, p, n, 1);
}

struct control_out *
control_data_new(size_t max, uint8_t **payload)
{
	struct control_out	*o;

	if (max > PROTO_MAX_BINARY - PROTO_FRAME_HDR)
		return NULL;
	o = xmalloc(sizeof *o + LWS_PRE + PROTO_FRAME_HDR + max);
	o->len = PROTO_FRAME_HDR + max;
	o->binary = 1;
	*payload = o->data + LWS_PRE + PROTO_FRAME_HDR;
	return o;
}

int
control_data_send(struct control_conn *c, struct control_out *o,
    uint32_t id, uint8_t channel, size_t n, int end)
{
	if (c->closing || PROTO_FRAME_HDR + n > o->len) {
		free(o);
		return c->closing ? ERR_PEER_GONE : ERR_TOO_LARGE;
	}
	proto_frame_header(o->data + LWS_PRE, id, channel,
	    end ? PROTO_F_END : 0);
	o->len = PROTO_FRAME_HDR + n;
	STAILQ_INSERT_TAIL(&c->outq, o, entry);
	c->out_bytes += o->len;
	lws_callback_on_writable(c->wsi);
	return 0;
}

void
control_data_free(struct control_out *o)
{
	free(o);
}

int
control_out_full(const struct control_conn *c)
{
	return c->closing || c->out_bytes >= CONTROL_OUT_HIGH;
}

/*
 * Read the socket only while nothing says stop: a binary frame a sink
 * refused is held (rx_held), or the replies to earlier requests back up
 * because the client does not read them (rx_out_paused).  The second is
 * what bounds a pipelining client: its further requests wait in its own
 * socket buffer, not as our streams, fds and queued replies.
 */
static void
control_rx_update(struct control_conn *c)
{
	lws_rx_flow_control(c->wsi, !c->rx_held && !c->rx_out_paused);
}

static void
control_resume_streams(struct control_conn *c)
{
	struct control_stream	*s, *next;

	LIST_FOREACH_SAFE(s, &c->streams, entry, next) {
		/* resume() may detach s */
		if (s->paused) {
			s->paused = 0;
			if (s->ops->resume != NULL)
				s->ops->resume(s);
		}
		if (c->out_bytes >= CONTROL_OUT_HIGH)
			break;
	}
}

static int
control_write_one(struct control_conn *c)
{
	struct control_out	*o = STAILQ_FIRST(&c->outq);
	int			 n;

	if (o == NULL)
		return 0;
	n = lws_write(c->wsi, o->data + LWS_PRE, o->len,
	    o->binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT);
	if (n < 0)
		return -1;
	/* lws keeps any unsent tail itself and holds off WRITEABLE. */
	STAILQ_REMOVE_HEAD(&c->outq, entry);
	c->out_bytes -= o->len;
	free(o);
	if (c->out_bytes < CONTROL_OUT_LOW)
		control_resume_streams(c);
	if (c->rx_out_paused && c->out_bytes < CONTROL_OUT_LOW) {
		c->rx_out_paused = 0;
		control_rx_update(c);
	}
	if (!STAILQ_EMPTY(&c->outq))
		lws_callback_on_writable(c->wsi);
	return 0;
}

/* ---- streams ------------------------------------------------------------- */

void
control_stream_attach(struct control_conn *c, struct control_stream *s,
    uint32_t id, const struct control_stream_ops *ops)
{
	s->conn = c;
	s->id = id;
	s->ops = ops;
	s->paused = 0;
	LIST_INSERT_HEAD(&c->streams, s, entry);
	c->nstreams++;
}

void
control_stream_detach(struct control_stream *s)
{
	/* conn says whether s is linked: set by attach, cleared here. */
	if (s->conn == NULL)
		return;
	LIST_REMOVE(s, entry);
	s->conn->nstreams--;
	s->conn = NULL;
}

void
control_stream_pause(struct control_stream *s)
{
	s->paused = 1;
	/* Already drained meanwhile?  Then resume on the next turn. */
	if (s->conn != NULL && STAILQ_EMPTY(&s->conn->outq))
		lws_callback_on_writable(s->conn->wsi);
}

static struct control_stream *
control_stream_find(struct control_conn *c, uint32_t id)
{
	struct control_stream	*s;

	LIST_FOREACH(s, &c->streams, entry) {
		if (s->id == id)
			return s;
	}
	return NULL;
}

/* ---- inbound ------------------------------------------------------------- */

static int	control_offer_binary(struct control_conn *);

static void
control_rx_retry(lws_sorted_usec_list_t *sul)
{
	struct control_conn	*c;

	c = lws_container_of(sul, struct control_conn, rx_retry);
	if (c->rx_held && control_offer_binary(c) == 0) {
		buf_reset(&c->rx);
		control_rx_update(c);
	}
}

void
control_stream_rx_resume(struct control_stream *s)
{
	struct control_conn	*c = s->conn;

	/* Offer the held frame from a fresh loop turn, not from inside the
	 * sink's own callback. */
	if (c != NULL && c->rx_held)
		lws_sul_schedule(lws_get_context(c->wsi), 0, &c->rx_retry,
		    control_rx_retry, 1);
}

/* 0: the message is done with; ERR_BUSY: held for later. */
static int
control_offer_binary(struct control_conn *c)
{
	struct proto_frame	 f;
	struct control_stream	*s;
	int			 r;

	c->rx_held = 0;
	if (proto_frame_parse(c->rx.data, c->rx.len, &f) != 0) {
		control_reply_error(c, 0, ERR_PROTOCOL,
		    "(malformed binary frame)");
		return 0;
	}
	/*
	 * A client sends bodies on the data channel only; stdout/stderr
	 * frames are guestd's.  One on another channel is dropped, never
	 * written into the body of the request it names.
	 */
	if (f.channel != PROTO_CH_DATA) {
		control_reply_error(c, 0, ERR_PROTOCOL,
		    "(a client sends binary frames on channel 0 only)");
		return 0;
	}
	/*
	 * Frames for ids without a stream are dropped: a sink that failed
	 * early has already replied, and the client may still be sending.
	 */
	if ((s = control_stream_find(c, f.id)) == NULL || s->ops->data == NULL)
		return 0;
	r = s->ops->data(s, f.payload, f.len, (f.flags & PROTO_F_END) != 0);
	if (r == ERR_BUSY) {
		c->rx_held = 1;
		return ERR_BUSY;
	}
	return 0;
}

static int
control_fence_check(json_t *args, char *detail, size_t detaillen)
{
	struct control_fence	*f;
	json_t			*jf;
	const char		*bot;
	size_t			 i;
	int64_t			 fence;
	int			 r;

	if ((jf = json_object_get(args, "fence")) == NULL)
		return 0;
	if ((r = jsonx_int(args, "fence", 0, INT64_MAX, &fence, detail)) != 0)
		return r;
	if ((r = jsonx_str(args, "bot", 64, &bot, detail)) != 0) {
		snprintf(detail, detaillen, "(a fence needs its bot)");
		return ERR_BAD_REQUEST;
	}
	if (path_bot_valid(bot) != 0)
		return ERR_INVALID_BOT;
	for (i = 0; i < control_nfences; i++) {
		f = &control_fences[i];
		if (strcmp(f->bot, bot) != 0)
			continue;
		if (fence < f->fence) {
			snprintf(detail, detaillen, "(bot %s: fence %lld < %lld)",
			    bot, (long long)fence, (long long)f->fence);
			return ERR_STALE_FENCE;
		}
		f->fence = fence;
		f->used = ++control_fence_clock;
		return 0;
	}
	if (control_nfences >= CONTROL_MAX_FENCES) {
		/* Full: forget the bot idle longest. */
		f = &control_fences[0];
		for (i = 1; i < control_nfences; i++) {
			if (control_fences[i].used < f->used)
				f = &control_fences[i];
		}
		log_debug("control.fence_forgotten", "bot=%s", f->bot);
	} else {
		control_fences = xrealloc(control_fences,
		    (control_nfences + 1) * sizeof *control_fences);
		f = &control_fences[control_nfences++];
	}
	snprintf(f->bot, sizeof f->bot, "%s", bot);
	f->fence = fence;
	f->used = ++control_fence_clock;
	return 0;
}

static const struct control_op *
control_op_find(const char *name)
{
	size_t	i;

	for (i = 0; i < control_nops; i++) {
		if (strcmp(control_ops[i].name, name) == 0)
			return &control_ops[i];
	}
	return NULL;
}

static void
control_dispatch(struct control_conn *c, json_t *req)
{
	static const char *const keys[] = { "id", "op", "args", NULL };
	const struct control_op	*op;
	char			 detail[JSONX_ERRLEN + 96];
	const char		*name;
	json_t			*args = NULL;
	int64_t			 id = 0;
	int			 r;

	detail[0] = '\0';
	if ((r = jsonx_int(req, "id", 1, UINT32_MAX, &id, detail)) != 0) {
		id = 0;
		goto bad;
	}
	if ((r = jsonx_only_keys(req, keys, detail)) != 0 ||
	    (r = jsonx_str(req, "op", 64, &name, detail)) != 0)
		goto bad;
	r = jsonx_obj(req, "args", &args, detail);
	if (r == ERR_NOT_FOUND) {
		args = json_object();
		json_object_set_new(req, "args", args);
	} else if (r != 0)
		goto fail;
	if ((op = control_op_find(name)) == NULL) {
		r = ERR_UNKNOWN_OP;
		snprintf(detail, sizeof detail, "(%.64s)", name);
		goto fail;
	}
	if (!c->hello && strcmp(name, "hello") != 0) {
		r = ERR_HELLO_REQUIRED;
		goto fail;
	}
	if (c->nstreams >= CONTROL_MAX_STREAMS) {
		r = ERR_BUSY;
		snprintf(detail, sizeof detail, "(%u requests are in progress "
		    "on this connection; wait for their replies)",
		    c->nstreams);
		goto fail;
	}
	if (control_stream_find(c, (uint32_t)id) != NULL) {
		r = ERR_BAD_REQUEST;
		snprintf(detail, sizeof detail, "(id %lld is still active)",
		    (long long)id);
		goto fail;
	}
	if (op->mutating &&
	    (r = control_fence_check(args, detail, sizeof detail)) != 0)
		goto fail;
	log_debug("control.request", "id=%lld op=%s", (long long)id, name);
	r = op->fn(c, (uint32_t)id, args, detail, sizeof detail);
	if (r == 0)
		return;
	goto fail;
bad:
	/* A missing "id" or "op" is a malformed request, not a lookup. */
	if (r == ERR_NOT_FOUND)
		r = ERR_BAD_REQUEST;
fail:
	control_reply_error(c, (uint32_t)id, r, detail);
}

static void
control_on_text(struct control_conn *c)
{
	char	 err[JSONX_ERRLEN];
	json_t	*req;
	int	 code;

	req = jsonx_parse((const char *)c->rx.data, c->rx.len, PROTO_MAX_JSON,
	    1, &code, err);
	if (req == NULL) {
		control_reply_error(c, 0, code, err);
		return;
	}
	control_dispatch(c, req);
	json_decref(req);
}

/*
 * After each whole message: a client that does not read its replies
 * stops being read until they drain below CONTROL_OUT_LOW.
 */
static void
control_rx_pace(struct control_conn *c)
{
	if (!c->rx_out_paused && c->out_bytes >= CONTROL_OUT_HIGH) {
		c->rx_out_paused = 1;
		control_rx_update(c);
	}
}

static void
control_on_receive(struct control_conn *c, const void *in, size_t len)
{
	struct lws	*wsi = c->wsi;
	size_t		 max;
	int		 first, final;

	first = lws_is_first_fragment(wsi);
	final = lws_is_final_fragment(wsi);
	if (first) {
		buf_reset(&c->rx);
		c->rx_discard = 0;
		c->rx_binary = lws_frame_is_binary(wsi);
	}
	max = c->rx_binary ? PROTO_MAX_BINARY : PROTO_MAX_JSON;
	if (!c->rx_discard && (len > max - c->rx.len ||
	    buf_append(&c->rx, in, len) != 0)) {
		c->rx_discard = 1;
		buf_reset(&c->rx);
	}
	if (!final)
		return;
	if (c->rx_discard) {
		c->rx_discard = 0;
		control_reply_error(c, 0, ERR_TOO_LARGE,
		    c->rx_binary ? "(binary message over 1 MiB)" :
		    "(JSON message over 1 MiB)");
		control_rx_pace(c);
		return;
	}
	if (!c->rx_binary) {
		control_on_text(c);
		buf_reset(&c->rx);
	} else if (control_offer_binary(c) == ERR_BUSY) {
		/* Keep c->rx as it is and stop reading until the sink has
		 * room. */
		control_rx_update(c);
		return;
	} else
		buf_reset(&c->rx);
	control_rx_pace(c);
}

/* ---- lifecycle ----------------------------------------------------------- */

static struct control_conn *
control_conn_new(struct lws *wsi)
{
	struct control_conn	*c;

	c = xcalloc(1, sizeof *c);
	c->wsi = wsi;
	buf_init(&c->rx, PROTO_MAX_BINARY);
	STAILQ_INIT(&c->outq);
	lws_get_peer_simple(wsi, c->peer, sizeof c->peer);
	LIST_INSERT_HEAD(&control_conns, c, entry);
	control_nconns++;
	return c;
}

static void
control_conn_free(struct control_conn *c)
{
	struct control_stream	*s;
	struct control_out	*o;

	c->closing = 1;
	lws_sul_cancel(&c->rx_retry);
	while ((s = LIST_FIRST(&c->streams)) != NULL) {
		control_stream_detach(s);
		s->conn = NULL;
		if (s->ops->abort != NULL)
			s->ops->abort(s);
	}
	while ((o = STAILQ_FIRST(&c->outq)) != NULL) {
		STAILQ_REMOVE_HEAD(&c->outq, entry);
		free(o);
	}
	buf_free(&c->rx);
	LIST_REMOVE(c, entry);
	control_nconns--;
	free(c);
}

static int
control_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	struct control_conn	**pc = user, *c;
	char			  peer[64];
	int			  r;

	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		lws_get_peer_simple(wsi, peer, sizeof peer);
		if ((r = control_authorize(wsi, peer)) != 0) {
			/* Say why before closing, so clients can tell a bad
			 * secret from a dead server. */
			lws_return_http_status(wsi, r == ERR_UNAUTHORIZED ?
			    HTTP_STATUS_UNAUTHORIZED : HTTP_STATUS_NOT_FOUND,
			    NULL);
			return -1;
		}
		if (control_nconns >= CONTROL_MAX_CONNS) {
			log_warn("control.rejected", "peer=%s reason=busy",
			    peer);
			return -1;
		}
		return 0;
	case LWS_CALLBACK_ESTABLISHED:
		c = control_conn_new(wsi);
		*pc = c;
		log_info("control.connected", "peer=%s", c->peer);
		return 0;
	case LWS_CALLBACK_RECEIVE:
		if ((c = *pc) == NULL || c->closing)
			return 0;
		control_on_receive(c, in, len);
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		if ((c = *pc) == NULL)
			return 0;
		if (c->closing && STAILQ_EMPTY(&c->outq))
			return -1;
		if (STAILQ_EMPTY(&c->outq)) {
			/* A pause raced with the drain: wake paused streams. */
			if (c->out_bytes < CONTROL_OUT_LOW)
				control_resume_streams(c);
			if (c->rx_out_paused && c->out_bytes < CONTROL_OUT_LOW) {
				c->rx_out_paused = 0;
				control_rx_update(c);
			}
			return 0;
		}
		return control_write_one(c);
	case LWS_CALLBACK_CLOSED:
		if ((c = *pc) == NULL)
			return 0;
		log_info("control.closed", "peer=%s", c->peer);
		*pc = NULL;
		control_conn_free(c);
		return 0;
	default:
		return 0;
	}
}

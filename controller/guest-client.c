/* SPDX-License-Identifier: MIT */
/*
 * A client of one guestd over its control channel (guest-client.h).
 *
 * The connection is ours: a non-blocking TCP socket adopted into the
 * owner's lws context as a raw descriptor, with the WebSocket handshake and framing of wsframe.c.  We
 * do not use lws's websocket client because it parses what it receives
 * one byte at a time, which capped transfers at ~100 MB/s; here a frame
 * is one header parse and its payload moves with memcpy (or not at all
 * when a whole message sits in the read buffer).
 *
 * Outgoing messages wait in a FIFO, already framed and masked, and are
 * written when the socket is writable; an upload is pulled from its
 * source only when that FIFO is empty and the socket is writable, so
 * memory stays at one chunk however slow guestd reads.  A source with
 * nothing to give yet pauses its upload (no busy loop on writable) until
 * its owner resumes it.  Incoming fragments are reassembled under the
 * protocol's caps (a peer that exceeds them is dropped with
 * PROTOCOL_ERROR), JSON responses are routed by id, events to the event
 * callback and binary frames to the data callback of their request.
 *
 * The bearer secret lives only in this struct and in the handshake
 * request while it is being written; both are wiped after use and the
 * secret is never copied into an error sentence.
 */
#include "autoconf.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libwebsockets.h>

#include "buf.h"
#include "err.h"
#include "guest-client.h"
#include "json.h"
#include "proto.h"
#include "queue-compat.h"
#include "redact.h"
#include "task.h"
#include "token.h"
#include "wsframe.h"
#include "xmalloc.h"

#ifndef VERSION
#define VERSION "0"
#endif

#define GCLIENT_DEFAULT_TIMEOUT	10000
#define GCLIENT_ERRLEN		256
#define GCLIENT_HOSTLEN		256
#define GCLIENT_PATHLEN		512
/* Read buffer: a few frames per read(); payloads stream through it. */
#define GCLIENT_INBUF		(256 * 1024)
/* A frame's rest at least this long is read straight into its message. */
#define GCLIENT_DIRECT_MIN	(16 * 1024)
/* Frames written per writable callback before others get the loop. */
#define GCLIENT_WRITE_BURST	16
/*
 * Payload of an upload's frame.  guestd takes binary messages up to
 * PROTO_MAX_BINARY; a quarter of a megabyte costs a 256 MiB restore
 * ~1200 frames (a header, a source read and a guestd hand-off each)
 * instead of 4096, and fits guestd's import chunks (workspace.c) whole.
 */
#define GCLIENT_UPLOAD_CHUNK	(224 * 1024)

enum gclient_state {
	GCLIENT_CONNECTING = 0,	/* TCP connect in progress */
	GCLIENT_HANDSHAKE,	/* upgrade request sent, awaiting 101 */
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
	LIST_ENTRY(gclient_req)	 entry;		/* in reqs until answered */
};

/* One framed, masked message; its bytes are data[start..start+len). */
struct gclient_msg {
	STAILQ_ENTRY(gclient_msg) entry;
	size_t			 start;
	size_t			 len;
	uint8_t			 data[];
};

struct gclient {
	struct lws_context	*ctx;
	struct lws_vhost	*vhost;		/* the owner's */
	struct task_cond	 cv;		/* waiting tasks */
	struct lws		*wsi;
	enum gclient_state	 state;
	int			 err;		/* first fatal error */
	char			 errmsg[GCLIENT_ERRLEN];
	int			 conn_errno;	/* why connect() failed */

	char			*secret;
	size_t			 secretlen;
	char			 host[GCLIENT_HOSTLEN];
	char			 hosthdr[GCLIENT_HOSTLEN + 8];
	char			 path[GCLIENT_PATHLEN];
	int			 port;
	int			 timeout_ms;
	char			 key[WSFRAME_KEYLEN + 1];

	uint32_t		 next_id;
	LIST_HEAD(, gclient_req) reqs;
	STAILQ_HEAD(, gclient_msg) q;		/* to write, oldest first */
	uint8_t			*upbuf;		/* ws hdr + frame + chunk */

	/* What is being written: a message, an upload frame or the request. */
	struct gclient_msg	*wmsg;
	char			*hsreq;		/* has the secret: wiped */
	size_t			 hsreqlen;
	const uint8_t		*wp;
	size_t			 wlen, woff;

	uint8_t			*in;		/* GCLIENT_INBUF */
	size_t			 inlen;
	/* The frame being received. */
	int			 fr_active;
	int			 fr_opcode;
	int			 fr_fin;
	size_t			 fr_left;
	uint8_t			 ctl[125];	/* control frame payload */
	size_t			 ctllen;

	struct buf		 rx;
	int			 rx_binary;
	int			 rx_active;

	json_t			*hello;
	gclient_event_cb	 on_event;
	void			*event_arg;

	/* Re-arms writability after a writable callback (gclient_flush). */
	lws_sorted_usec_list_t	 wsul;

	/* The last traffic: gclient_run()'s idle limit counts from it. */
	lws_usec_t		 last_activity;
};

/* The state of one blocking call (gclient_call, hello). */
struct gclient_wait {
	int	 done;
	json_t	*msg;
};

static int	gclient_lws_cb(struct lws *, enum lws_callback_reasons, void *,
		    void *, size_t);
static int	gclient_lws_event(struct gclient *, struct lws *,
		    enum lws_callback_reasons);

/* gclient_main()'s loop, for its task's connections. */
static struct lws_context	*gclient_loop_ctx;
static struct lws_vhost		*gclient_loop_vh;

/* Named in the vhost our raw connection is adopted into. */
const struct lws_protocols gclient_protocol = {
	PROTO_SUBPROTOCOL, gclient_lws_cb, 0, 0, 0, NULL, 0
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
gclient_parse_url(struct gclient *c, const char *url, struct errmsg *err)
{
	const char	*p, *auth, *end, *colon;
	size_t		 hlen;
	long		 port = 80;
	char		*ep;

	if (url == NULL || *url == '\0')
		return errmsg_set(err, ERR_CONFIG, "CONFIG_INVALID: no URL "
		    "given");
	if (strncasecmp(url, "wss://", 6) == 0)
		return errmsg_set(err, ERR_CONFIG, "CONFIG_INVALID: wss:// is "
		    "not supported yet; use ws://host:port");
	if (strncasecmp(url, "ws://", 5) != 0)
		return errmsg_set(err, ERR_CONFIG, "CONFIG_INVALID: "
		    "unsupported URL scheme; use ws://host:port");
	auth = url + 5;
	end = auth + strcspn(auth, "/?#");
	if (memchr(auth, '@', (size_t)(end - auth)) != NULL)
		return errmsg_set(err, ERR_CONFIG, "CONFIG_INVALID: "
		    "credentials in the URL are not supported; use a secret "
		    "file");
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
	return errmsg_set(err, ERR_CONFIG, "CONFIG_INVALID: the URL is not of "
	    "the form ws://host:port[/path]");
}

/* ---- requests and the outgoing queue ------------------------------------ */

static struct gclient_req *
gclient_req_find(struct gclient *c, uint32_t id)
{
	struct gclient_req	*r;

	LIST_FOREACH(r, &c->reqs, entry) {
		if (r->id == id)
			return r;
	}
	return NULL;
}

static void
gclient_want_write(struct gclient *c)
{
	if (c->wsi != NULL && c->state == GCLIENT_OPEN)
		lws_callback_on_writable(c->wsi);
}

/*
 * Frame the n payload bytes at buf + WSFRAME_MAX_HDR in place: mask them
 * and put the header right in front.  Returns where the frame starts, or
 * SIZE_MAX when no random mask could be had.
 */
static size_t
gclient_frame(uint8_t *buf, int opcode, size_t n)
{
	uint8_t	hdr[WSFRAME_MAX_HDR], mask[4];
	size_t	h;

	if (token_random(mask, sizeof(mask)) != 0)
		return SIZE_MAX;
	h = wsframe_client_header(hdr, opcode, n, mask);
	wsframe_mask(buf + WSFRAME_MAX_HDR, n, mask);
	memcpy(buf + WSFRAME_MAX_HDR - h, hdr, h);
	return WSFRAME_MAX_HDR - h;
}

/* Queue a frame of p; the header (if any) goes in front of the payload. */
static int
gclient_enqueue_op(struct gclient *c, int opcode, const void *hdr,
    size_t hlen, const void *p, size_t n)
{
	struct gclient_msg	*m;
	size_t			 start;

	m = xmalloc(sizeof(*m) + WSFRAME_MAX_HDR + hlen + n);
	if (hlen > 0)
		memcpy(m->data + WSFRAME_MAX_HDR, hdr, hlen);
	if (n > 0)
		memcpy(m->data + WSFRAME_MAX_HDR + hlen, p, n);
	if ((start = gclient_frame(m->data, opcode, hlen + n)) == SIZE_MAX) {
		free(m);
		return ERR_INTERNAL;
	}
	m->start = start;
	m->len = WSFRAME_MAX_HDR - start + hlen + n;
	STAILQ_INSERT_TAIL(&c->q, m, entry);
	gclient_want_write(c);
	return 0;
}

static int
gclient_enqueue(struct gclient *c, int binary, const void *hdr, size_t hlen,
    const void *p, size_t n)
{
	if (c->state != GCLIENT_OPEN)
		return ERR_PEER_GONE;
	return gclient_enqueue_op(c, binary ? WSFRAME_BINARY : WSFRAME_TEXT,
	    hdr, hlen, p, n);
}

static void
gclient_queue_free(struct gclient *c)
{
	struct gclient_msg	*m;

	while ((m = STAILQ_FIRST(&c->q)) != NULL) {
		STAILQ_REMOVE_HEAD(&c->q, entry);
		free(m);
	}
}

static struct gclient_req *
gclient_upload_next(struct gclient *c)
{
	struct gclient_req	*r;

	LIST_FOREACH(r, &c->reqs, entry)
		if (r->src != NULL && !r->paused)
			return r;
	return NULL;
}

/*
 * Pull one chunk of the oldest upload and make it the frame to write.
 * 0 (maybe nothing to write: paused) or -1 with the client failed.
 */
static int
gclient_pull_upload(struct gclient *c, struct gclient_req *r)
{
	uint8_t	*body = c->upbuf + WSFRAME_MAX_HDR;
	ssize_t	 n;
	size_t	 start;
	int	 end = 0;

	n = r->src(r->src_arg, body + PROTO_FRAME_HDR, GCLIENT_UPLOAD_CHUNK,
	    &end);
	if (n < 0) {
		r->src = NULL;
		gclient_fail(c, (int)n, "the upload source failed: %s",
		    err_message((int)n));
		return -1;
	}
	if ((size_t)n > GCLIENT_UPLOAD_CHUNK) {
		gclient_fail(c, ERR_INTERNAL, "the upload source overran");
		return -1;
	}
	if (n == 0 && !end) {
		/* Nothing yet: skipped until gclient_upload_resume(). */
		r->paused = 1;
		return 0;
	}
	proto_frame_header(body, r->id, PROTO_CH_DATA, end ? PROTO_F_END : 0);
	start = gclient_frame(c->upbuf, WSFRAME_BINARY,
	    PROTO_FRAME_HDR + (size_t)n);
	if (start == SIZE_MAX) {
		gclient_fail(c, ERR_INTERNAL, "no random bytes for a mask");
		return -1;
	}
	c->wp = c->upbuf + start;
	c->wlen = WSFRAME_MAX_HDR - start + PROTO_FRAME_HDR + (size_t)n;
	c->woff = 0;
	if (end)
		r->src = NULL;
	return 0;
}

/* The current buffer is written: release it. */
static void
gclient_write_done(struct gclient *c)
{
	free(c->wmsg);
	c->wmsg = NULL;
	if (c->hsreq != NULL) {
		explicit_bzero(c->hsreq, c->hsreqlen);
		free(c->hsreq);
		c->hsreq = NULL;
	}
	c->wp = NULL;
	c->wlen = c->woff = 0;
}

/* Pick what to write next; 0 (maybe nothing) or -1 with the client failed. */
static int
gclient_write_next(struct gclient *c)
{
	struct gclient_msg	*m;
	struct gclient_req	*r;

	if ((m = STAILQ_FIRST(&c->q)) != NULL) {
		STAILQ_REMOVE_HEAD(&c->q, entry);
		c->wmsg = m;
		c->wp = m->data + m->start;
		c->wlen = m->len;
		c->woff = 0;
		return 0;
	}
	if ((r = gclient_upload_next(c)) != NULL)
		return gclient_pull_upload(c, r);
	return 0;
}

static void
gclient_rearm_cb(lws_sorted_usec_list_t *sul)
{
	struct gclient	*c = lws_container_of(sul, struct gclient, wsul);

	if (c->wsi != NULL)
		lws_callback_on_writable(c->wsi);
}

/*
 * Write what we can.  Returns 0 (the rest waits for the next writable
 * callback) or -1 with the client failed.
 */
static int
gclient_flush(struct gclient *c)
{
	ssize_t	 n;
	int	 frames = 0, fd = lws_get_socket_fd(c->wsi);

	for (;;) {
		if (c->woff == c->wlen) {
			gclient_write_done(c);
			if (c->state != GCLIENT_OPEN ||
			    frames++ >= GCLIENT_WRITE_BURST)
				break;
			if (gclient_write_next(c) != 0)
				return -1;
			if (c->wlen == 0)
				break;
		}
		n = write(fd, c->wp + c->woff, c->wlen - c->woff);
		if (n > 0) {
			c->woff += (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		gclient_fail(c, ERR_PEER_GONE, "writing to guestd failed");
		return -1;
	}
	/*
	 * lws 4.1 clears a raw descriptor's POLLOUT after its writable
	 * callback returns, undoing a request made inside it: ask from a
	 * zero-delay timer instead, which runs before the next poll.
	 */
	if (c->woff < c->wlen || (c->state == GCLIENT_OPEN &&
	    (!STAILQ_EMPTY(&c->q) || gclient_upload_next(c) != NULL)))
		lws_sul_schedule(c->ctx, 0, &c->wsul, gclient_rearm_cb, 0);
	return 0;
}

/* A last word before we drop guestd; best effort, it may not fit. */
static void
gclient_send_close(struct gclient *c, int code, const char *why)
{
	uint8_t	 p[2 + 32], f[sizeof(p) + WSFRAME_MAX_HDR];
	size_t	 n = strlen(why), len;

	if (c->wsi == NULL || c->state != GCLIENT_OPEN || c->woff < c->wlen)
		return;
	if (n > sizeof(p) - 2)
		n = sizeof(p) - 2;
	p[0] = (uint8_t)(code >> 8);
	p[1] = (uint8_t)code;
	memcpy(p + 2, why, n);
	if ((len = wsframe_client_frame(f, WSFRAME_CLOSE, p, n + 2)) > 0)
		(void)!write(lws_get_socket_fd(c->wsi), f, len);
}

/* ---- incoming messages -------------------------------------------------- */

static void
gclient_on_text(struct gclient *c, const char *s, size_t n)
{
	struct gclient_req	*r;
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
	if ((r = gclient_req_find(c, (uint32_t)id)) == NULL)
		goto out;
	/* Unlink first so the callback may issue new requests freely. */
	LIST_REMOVE(r, entry);
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
	r = gclient_req_find(c, f.id);
	if (r == NULL || r->on_data == NULL)
		return;
	rc = r->on_data(c, f.id, f.channel, f.payload, f.len,
	    (f.flags & PROTO_F_END) != 0, r->arg);
	if (rc != 0)
		gclient_fail(c, rc, "%s", err_message(rc));
}

static void
gclient_dispatch(struct gclient *c, const uint8_t *p, size_t n)
{
	if (c->rx_binary)
		gclient_on_binary(c, p, n);
	else
		gclient_on_text(c, (const char *)p, n);
}

/* A control frame is whole; 0, or -1 to drop the connection. */
static int
gclient_control(struct gclient *c)
{
	struct cursor	 cur;
	const uint8_t	*rp;
	char		 reason[124];
	size_t		 rl;
	uint16_t	 code;

	switch (c->fr_opcode) {
	case WSFRAME_PING:
		if (gclient_enqueue_op(c, WSFRAME_PONG, NULL, 0, c->ctl,
		    c->ctllen) != 0) {
			gclient_fail(c, ERR_INTERNAL, "cannot answer a ping");
			return -1;
		}
		return 0;
	case WSFRAME_CLOSE:
		/* A close body is a u16 code and a reason (RFC 6455 5.5.1). */
		cursor_init(&cur, c->ctl, c->ctllen);
		if (cursor_get_u16be(&cur, &code) == 0) {
			rl = cursor_left(&cur);
			if (rl > sizeof(reason) - 1)
				rl = sizeof(reason) - 1;
			(void)cursor_get_bytes(&cur, rl, &rp);
			memcpy(reason, rp, rl);
			reason[rl] = '\0';
			gclient_fail(c, ERR_PEER_GONE, "guestd closed the "
			    "connection (%d%s%s)", (int)code, rl ? " " : "",
			    reason);
		} else
			gclient_fail(c, ERR_PEER_GONE, "guestd closed the "
			    "connection");
		/* Echo it (RFC 6455 5.5.1), then close our side. */
		gclient_send_close(c, 1000, "");
		return -1;
	default:
		return 0;	/* a pong */
	}
}

/*
 * A new frame's header: check it against the message in progress and
 * the protocol's caps.  0, or -1 with the client failed.
 */
static int
gclient_frame_start(struct gclient *c, const struct wsframe *f)
{
	size_t	cap;

	c->fr_active = 1;
	c->fr_opcode = f->opcode;
	c->fr_fin = f->fin;
	c->fr_left = f->len;
	c->ctllen = 0;
	if (f->opcode >= WSFRAME_CLOSE)
		return 0;
	if (f->opcode == WSFRAME_CONT ? !c->rx_active : c->rx_active) {
		gclient_fail(c, ERR_PROTOCOL, "guestd sent a bad fragment");
		gclient_send_close(c, 1002, "bad fragment");
		return -1;
	}
	if (f->opcode != WSFRAME_CONT) {
		buf_reset(&c->rx);
		c->rx_binary = f->opcode == WSFRAME_BINARY;
		c->rx_active = 1;
	}
	cap = c->rx_binary ? PROTO_MAX_BINARY : PROTO_MAX_REPLY;
	if (f->len > cap || c->rx.len > cap - f->len) {
		gclient_fail(c, ERR_PROTOCOL, "guestd sent a message larger "
		    "than %zu bytes", cap);
		gclient_send_close(c, 1009, "too large");
		return -1;
	}
	return 0;
}

/* The frame in progress is whole; 0, or -1 to drop the connection. */
static int
gclient_frame_end(struct gclient *c)
{
	c->fr_active = 0;
	if (c->fr_opcode >= WSFRAME_CLOSE)
		return gclient_control(c);
	if (!c->fr_fin)
		return 0;
	c->rx_active = 0;
	gclient_dispatch(c, c->rx.data, c->rx.len);
	buf_reset(&c->rx);
	return 0;
}

/*
 * Consume the frames in the read buffer.  Payloads are copied in bulk
 * into the message being reassembled, or handed over in place when a
 * whole unfragmented message is there.  0, or -1 to drop the connection.
 */
static int
gclient_consume(struct gclient *c)
{
	struct wsframe	 f;
	const uint8_t	*p;
	size_t		 off = 0, take;
	int		 r = 0;

	while (c->err == 0 && c->state == GCLIENT_OPEN) {
		p = c->in + off;
		if (!c->fr_active) {
			if (off == c->inlen)
				break;
			r = wsframe_header(p, c->inlen - off, PROTO_MAX_REPLY,
			    &f);
			if (r == 0)
				break;
			if (r < 0) {
				if (r == ERR_TOO_LARGE)
					gclient_fail(c, ERR_PROTOCOL, "guestd "
					    "sent a message larger than %zu "
					    "bytes", (size_t)PROTO_MAX_REPLY);
				else
					gclient_fail(c, ERR_PROTOCOL, "guestd "
					    "sent a bad frame");
				gclient_send_close(c, r == ERR_TOO_LARGE ?
				    1009 : 1002, "bad frame");
				return -1;
			}
			off += (size_t)r;
			p += r;
			if (gclient_frame_start(c, &f) != 0)
				return -1;
			if (f.opcode != WSFRAME_CONT &&
			    f.opcode < WSFRAME_CLOSE && f.fin &&
			    c->inlen - off >= f.len) {
				/* The usual case: no copy at all. */
				c->fr_active = 0;
				c->rx_active = 0;
				off += f.len;
				gclient_dispatch(c, p, f.len);
				continue;
			}
		}
		take = c->inlen - off < c->fr_left ? c->inlen - off :
		    c->fr_left;
		if (take > 0 && c->fr_opcode >= WSFRAME_CLOSE) {
			memcpy(c->ctl + c->ctllen, p, take);
			c->ctllen += take;
		} else if (take > 0 && buf_append(&c->rx, p, take) != 0) {
			gclient_fail(c, ERR_NOMEM, "out of memory");
			return -1;
		}
		off += take;
		c->fr_left -= take;
		if (c->fr_left > 0)
			break;
		if (gclient_frame_end(c) != 0)
			return -1;
	}
	if (c->err != 0) {
		gclient_send_close(c, 1008, "");
		return -1;
	}
	if (off > 0) {
		memmove(c->in, c->in + off, c->inlen - off);
		c->inlen -= off;
	}
	return 0;
}

/* ---- the connection ----------------------------------------------------- */

static void
gclient_handshake_error(struct gclient *c, int r, int status)
{
	if (status == 401 || status == 403)
		gclient_fail(c, ERR_UNAUTHORIZED, "guestd at %s refused the "
		    "secret (HTTP %d)", c->hosthdr, status);
	else if (r == ERR_CONNECT)
		gclient_fail(c, ERR_CONNECT, "cannot connect to ws://%s%s: "
		    "HTTP %d instead of a websocket upgrade", c->hosthdr,
		    c->path, status);
	else
		gclient_fail(c, ERR_CONNECT, "cannot connect to ws://%s%s: "
		    "the websocket handshake failed", c->hosthdr, c->path);
}

/* The 101 (or not) in the read buffer; 0 or -1 to drop the connection. */
static int
gclient_handshake(struct gclient *c)
{
	int	r, status;

	r = wsframe_response((const char *)c->in, c->inlen, c->key, &status);
	if (r == 0)
		return 0;
	if (r < 0) {
		gclient_handshake_error(c, r, status);
		return -1;
	}
	memmove(c->in, c->in + r, c->inlen - (size_t)r);
	c->inlen -= (size_t)r;
	c->state = GCLIENT_OPEN;
	c->last_activity = lws_now_usecs();
	if (!STAILQ_EMPTY(&c->q) || gclient_upload_next(c) != NULL)
		lws_callback_on_writable(c->wsi);
	return 0;
}

/*
 * Where the next read goes: the rest of a large data frame in progress
 * goes from the socket straight into the message being reassembled (one
 * copy less for a checkpoint's archive), but only when the read buffer
 * is empty, so bytes stay in the socket's order; all else goes to the
 * read buffer.  *direct says which; NULL when the message cannot grow.
 */
static uint8_t *
gclient_read_into(struct gclient *c, size_t *space, int *direct)
{
	*direct = c->state == GCLIENT_OPEN && c->fr_active &&
	    c->inlen == 0 && c->fr_opcode < WSFRAME_CLOSE &&
	    c->fr_left >= GCLIENT_DIRECT_MIN;
	if (*direct) {
		/* frame_start checked the message's cap. */
		if (buf_reserve(&c->rx, c->fr_left) != 0)
			return NULL;
		*space = c->fr_left;
		return c->rx.data + c->rx.len;
	}
	*space = GCLIENT_INBUF - c->inlen;
	return c->in + c->inlen;
}

/* Bytes arrived (or the end); 0, or -1 to drop the connection. */
static int
gclient_readable(struct gclient *c)
{
	ssize_t	 n;
	size_t	 space;
	uint8_t	*dst;
	int	 fd = lws_get_socket_fd(c->wsi), reads, direct;

	for (reads = 0; reads < 4; reads++) {
		if (c->inlen == GCLIENT_INBUF) {
			/* Only a handshake head can fill it; it is capped. */
			gclient_handshake_error(c, ERR_TOO_LARGE, 0);
			return -1;
		}
		if ((dst = gclient_read_into(c, &space, &direct)) == NULL) {
			gclient_fail(c, ERR_NOMEM, "out of memory");
			return -1;
		}
		n = read(fd, dst, space);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0) {
			if (c->state == GCLIENT_HANDSHAKE)
				gclient_fail(c, ERR_CONNECT, "cannot connect "
				    "to ws://%s%s: guestd closed the "
				    "connection", c->hosthdr, c->path);
			else
				gclient_fail(c, ERR_PEER_GONE, "guestd closed "
				    "the connection");
			return -1;
		}
		if (direct) {
			/* consume() ends the frame when this was its rest. */
			c->rx.len += (size_t)n;
			c->fr_left -= (size_t)n;
		} else
			c->inlen += (size_t)n;
		c->last_activity = lws_now_usecs();
		if (c->state == GCLIENT_HANDSHAKE &&
		    gclient_handshake(c) != 0)
			return -1;
		if (c->state == GCLIENT_OPEN && gclient_consume(c) != 0)
			return -1;
		if (c->state != GCLIENT_OPEN && c->state != GCLIENT_HANDSHAKE)
			return -1;
		/* A short read: the socket is drained for now. */
		if ((size_t)n < space)
			return 0;
	}
	return 0;
}

/* The connect finished: send the upgrade request.  0 or -1. */
static int
gclient_connected(struct gclient *c)
{
	socklen_t	 sl = sizeof(int);
	char		*auth;
	size_t		 alen, cap;
	int		 soerr = 0, n;

	if (getsockopt(lws_get_socket_fd(c->wsi), SOL_SOCKET, SO_ERROR,
	    &soerr, &sl) == -1)
		soerr = errno;
	if (soerr != 0) {
		c->conn_errno = soerr;
		return -1;
	}
	c->state = GCLIENT_HANDSHAKE;
	if (wsframe_key(c->key) != 0) {
		gclient_fail(c, ERR_CONNECT, "cannot connect to ws://%s%s: no "
		    "random bytes for the handshake", c->hosthdr, c->path);
		return -1;
	}
	alen = 7 + c->secretlen;
	auth = xmalloc(alen + 1);
	memcpy(auth, "Bearer ", 7);
	memcpy(auth + 7, c->secret, c->secretlen);
	auth[alen] = '\0';
	cap = alen + strlen(c->path) + strlen(c->hosthdr) + 512;
	c->hsreq = xmalloc(cap);
	n = wsframe_request(c->hsreq, cap, c->path, c->hosthdr, c->key,
	    PROTO_SUBPROTOCOL, auth);
	explicit_bzero(auth, alen);
	free(auth);
	if (n < 0) {
		explicit_bzero(c->hsreq, cap);
		free(c->hsreq);
		c->hsreq = NULL;
		gclient_fail(c, ERR_CONNECT, "cannot connect to ws://%s%s: the "
		    "request does not fit", c->hosthdr, c->path);
		return -1;
	}
	c->hsreqlen = cap;
	c->wp = (const uint8_t *)c->hsreq;
	c->wlen = (size_t)n;
	c->woff = 0;
	return gclient_flush(c);
}

/* The socket is gone: lws closes it after this callback. */
static void
gclient_closed(struct gclient *c)
{
	socklen_t	 sl = sizeof(int);
	int		 soerr = 0;

	if (c->state == GCLIENT_CONNECTING) {
		if (c->conn_errno == 0 && (getsockopt(lws_get_socket_fd(c->wsi),
		    SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr == 0))
			soerr = ECONNREFUSED;
		if (c->conn_errno == 0)
			c->conn_errno = soerr;
	} else if (c->state == GCLIENT_HANDSHAKE)
		gclient_fail(c, ERR_CONNECT, "cannot connect to ws://%s%s: "
		    "guestd closed the connection", c->hosthdr, c->path);
	else
		gclient_fail(c, ERR_PEER_GONE, "guestd closed the connection");
	gclient_write_done(c);
	lws_sul_cancel(&c->wsul);
	c->wsi = NULL;
	c->state = GCLIENT_CLOSED;
}

static int
gclient_lws_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	struct gclient	*c;
	int		 r;

	/*
	 * As the vhost's protocols[0], lws (4.1) also calls this with
	 * LWS_CALLBACK_WSI_DESTROY for every other descriptor of the vhost
	 * (a task's, curl's): their opaque data is not a client, and may be
	 * freed by then.  Only our own descriptors' events are ours.
	 */
	switch (reason) {
	case LWS_CALLBACK_RAW_RX_FILE:
	case LWS_CALLBACK_RAW_WRITEABLE_FILE:
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		break;
	default:
		return 0;
	}
	if (lws_get_protocol(wsi) == NULL ||
	    lws_get_protocol(wsi)->callback != gclient_lws_cb ||
	    (c = lws_get_opaque_user_data(wsi)) == NULL || c->wsi != wsi)
		return 0;
	r = gclient_lws_event(c, wsi, reason);
	/* Tasks waiting on this client recheck their state. */
	task_cond_broadcast(&c->cv);
	return r;
}

static int
gclient_lws_event(struct gclient *c, struct lws *wsi,
    enum lws_callback_reasons reason)
{
	switch (reason) {
	case LWS_CALLBACK_RAW_RX_FILE:
		if (c->state == GCLIENT_CONNECTING)
			return gclient_connected(c);
		return gclient_readable(c);
	case LWS_CALLBACK_RAW_WRITEABLE_FILE:
		if (c->err != 0)
			return -1;
		if (c->state == GCLIENT_CONNECTING)
			return gclient_connected(c);
		c->last_activity = lws_now_usecs();
		return gclient_flush(c);
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		gclient_closed(c);
		break;
	default:
		break;
	}
	return 0;
}

/* ---- running the loop --------------------------------------------------- */

/*
 * The owner's loop runs; this task waits for the client's callbacks.  Several tasks may wait on one client, each for its own
 * request, so the idle limit is measured per waiter from the later of its
 * start and the connection's last traffic.
 */
int
gclient_run(struct gclient *c, const int *done, int timeout_ms)
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
			gclient_fail(c, ERR_INTERNAL, "a client waited "
			    "outside a task");
			return c->err;
		}
	}
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
gclient_reply_error(json_t *msg, struct errmsg *err)
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
	if (err != NULL) {
		redact_text(red, sizeof(red), message != NULL ? message :
		    err_message(code));
		errmsg_set(err, code, "%s: %s", name != NULL ? name :
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
	LIST_INSERT_HEAD(&c->reqs, r, entry);
	id = r->id;
out:
	free(s);
	json_decref(args);
	return id;
}

void
gclient_forget(struct gclient *c, uint32_t id)
{
	struct gclient_req	*r;

	if ((r = gclient_req_find(c, id)) == NULL)
		return;
	LIST_REMOVE(r, entry);
	free(r);
}

int
gclient_upload(struct gclient *c, uint32_t id, gclient_source_cb src,
    void *arg)
{
	struct gclient_req	*r;

	if ((r = gclient_req_find(c, id)) == NULL)
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

	if ((r = gclient_req_find(c, id)) == NULL || r->src == NULL)
		return ERR_NOT_FOUND;
	if (r->paused) {
		r->paused = 0;
		gclient_want_write(c);
	}
	return 0;
}

int
gclient_call(struct gclient *c, const char *op, json_t *args,
    json_t **result, struct errmsg *err)
{
	struct gclient_wait	 w = { 0, NULL };
	json_t			*ok;
	int			 r = ERR_INTERNAL;

	*result = NULL;
	errmsg_clear(err);
	if (gclient_request(c, op, args, gclient_wait_reply, NULL, &w) == 0) {
		r = c->err != 0 ? c->err : ERR_PEER_GONE;
		goto fail;
	}
	if ((r = gclient_run(c, &w.done, c->timeout_ms)) != 0)
		goto fail;
	ok = json_object_get(w.msg, "ok");
	if (!json_is_true(ok)) {
		r = gclient_reply_error(w.msg, err);
		goto out;
	}
	*result = json_incref(json_object_get(w.msg, "result"));
	if (*result == NULL)
		*result = json_object();
	r = 0;
	goto out;
fail:
	errmsg_set(err, r, "%s: %s", err_name(r), c->errmsg[0] ?
	    c->errmsg : err_message(r));
out:
	json_decref(w.msg);
	return r;
}

/* Start a TCP connect to ai and adopt the socket.  0 or -1 (errno set). */
static int
gclient_start(struct gclient *c, const struct addrinfo *ai)
{
	lws_adopt_desc_t	 ad;
	int			 fd, one = 1, e;

	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (fd == -1)
		return -1;
	/* Requests are small and latency-bound: no Nagle delay. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == -1 &&
	    errno != EINPROGRESS) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	c->state = GCLIENT_CONNECTING;
	c->conn_errno = 0;
	memset(&ad, 0, sizeof(ad));
	ad.vh = c->vhost;
	ad.type = LWS_ADOPT_RAW_FILE_DESC;
	ad.fd.filefd = fd;
	ad.vh_prot_name = PROTO_SUBPROTOCOL;
	ad.opaque = c;
	c->wsi = lws_adopt_descriptor_vhost_via_info(&ad);
	if (c->wsi == NULL) {
		/* lws closed fd already. */
		c->state = GCLIENT_CLOSED;
		errno = ENOMEM;
		return -1;
	}
	/* Writable: the connect finished, one way or the other. */
	lws_callback_on_writable(c->wsi);
	return 0;
}

/* Wait until the connection opens, fails or the timeout passes. */
static void
gclient_wait_open(struct gclient *c)
{
	while (c->state == GCLIENT_CONNECTING ||
	    c->state == GCLIENT_HANDSHAKE)
		if (task_cond_wait(&c->cv, c->timeout_ms) != 0)
			break;
}

static int
gclient_open(struct gclient *c, struct errmsg *err)
{
	struct addrinfo		 hints, *res = NULL, *ai;
	char			 port[8];
	int			 r, e = 0;

	c->state = GCLIENT_CLOSED;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(port, sizeof(port), "%d", c->port);
	if ((r = getaddrinfo(c->host, port, &hints, &res)) != 0) {
		gclient_fail(c, ERR_CONNECT, "cannot connect to ws://%s%s: %s",
		    c->hosthdr, c->path, gai_strerror(r));
		res = NULL;
	}
	c->last_activity = lws_now_usecs();
	/* Each address in turn while the connect itself is refused. */
	for (ai = res; ai != NULL && c->err == 0; ai = ai->ai_next) {
		if (gclient_start(c, ai) != 0) {
			e = errno;
			continue;
		}
		gclient_wait_open(c);
		if (c->state != GCLIENT_CLOSED || c->conn_errno == 0)
			break;
		e = c->conn_errno;
	}
	if (res != NULL)
		freeaddrinfo(res);
	if (c->state == GCLIENT_OPEN)
		return 0;
	if (c->err == 0 && c->state == GCLIENT_CLOSED && e != 0)
		gclient_fail(c, ERR_CONNECT, "cannot connect to ws://%s%s: %s",
		    c->hosthdr, c->path, strerror(e));
	if (c->err == 0)
		gclient_fail(c, ERR_CONNECT, "cannot connect to ws://%s%s: no "
		    "answer within %d ms", c->hosthdr, c->path, c->timeout_ms);
	r = c->err == ERR_UNAUTHORIZED ? ERR_UNAUTHORIZED : ERR_CONNECT;
	errmsg_set(err, r, "%s: %s", err_name(r), c->errmsg);
	return r;
}

static int
gclient_do_hello(struct gclient *c, struct errmsg *err)
{
	json_t	*args, *res = NULL;
	int	 r;

	args = json_pack("{s:i, s:s}", "version", PROTO_VERSION, "client",
	    "rakazoctl/" VERSION);
	r = gclient_call(c, "hello", args, &res, err);
	if (r != 0)
		return r;
	c->hello = res;
	return 0;
}

int
gclient_connect(struct gclient **out, const struct gclient_opts *o,
    struct errmsg *err)
{
	struct gclient	*c;
	int		 r = ERR_INTERNAL;

	*out = NULL;
	errmsg_clear(err);
	c = xcalloc(1, sizeof(*c));
	STAILQ_INIT(&c->q);
	c->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms :
	    GCLIENT_DEFAULT_TIMEOUT;
	buf_init(&c->rx, PROTO_MAX_REPLY);
	c->upbuf = xmalloc(WSFRAME_MAX_HDR + PROTO_FRAME_HDR +
	    GCLIENT_UPLOAD_CHUNK);
	c->in = xmalloc(GCLIENT_INBUF);
	if (o->secret == NULL || *o->secret == '\0' ||
	    strpbrk(o->secret, "\r\n") != NULL) {
		r = errmsg_set(err, ERR_CONFIG, "CONFIG_INVALID: the secret is "
		    "empty or spans lines");
		goto out;
	}
	c->secret = xstrdup(o->secret);
	c->secretlen = strlen(c->secret);
	c->ctx = o->ctx != NULL ? o->ctx : gclient_loop_ctx;
	c->vhost = o->vhost != NULL ? o->vhost : gclient_loop_vh;
	if (task_self() == NULL || c->ctx == NULL || c->vhost == NULL) {
		c->ctx = NULL;
		errmsg_set(err, r, "INTERNAL: a guestd client connects from "
		    "a task, on its owner's loop");
		goto out;
	}
	if ((r = gclient_parse_url(c, o->url, err)) != 0)
		goto out;
	if ((r = gclient_open(c, err)) != 0)
		goto out;
	if ((r = gclient_do_hello(c, err)) != 0)
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

	if (c == NULL)
		return;
	if (c->ctx != NULL)
		lws_sul_cancel(&c->wsul);
	/* The loop is the owner's: close ours, leave the rest. */
	if (c->wsi != NULL) {
		lws_set_opaque_user_data(c->wsi, NULL);
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_KILLED_BY_PARENT,
		    LWS_TO_KILL_ASYNC);
	}
	while ((r = LIST_FIRST(&c->reqs)) != NULL) {
		LIST_REMOVE(r, entry);
		free(r);
	}
	gclient_queue_free(c);
	gclient_write_done(c);
	buf_free(&c->rx);
	free(c->upbuf);
	free(c->in);
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

const char *
gclient_error(struct gclient *c)
{
	return c->errmsg;
}

/* ---- a program whose one loop is the client's ---------------------------- */

struct gclient_job {
	int	(*fn)(int, char **);
	int	  argc;
	char	**argv;
	int	  r;
	int	  done;
	struct lws_context *ctx;
};

static void
gclient_job_run(void *arg)
{
	struct gclient_job	*j = arg;

	j->r = j->fn(j->argc, j->argv);
	j->done = 1;
	lws_cancel_service(j->ctx);
}

int
gclient_main(int argc, char **argv, int (*fn)(int, char **))
{
	static struct lws_protocols		 protos[3];
	struct lws_context_creation_info	 info;
	struct gclient_job			 j;
	struct lws_vhost			*vh;

	protos[0] = gclient_protocol;
	protos[1] = task_fd_protocol;
	memset(&protos[2], 0, sizeof protos[2]);
	memset(&info, 0, sizeof info);
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = protos;
	info.gid = -1;
	info.uid = -1;
	lws_set_log_level(LLL_ERR, NULL);
	memset(&j, 0, sizeof j);
	j.fn = fn;
	j.argc = argc;
	j.argv = argv;
	j.r = 1;
	if ((j.ctx = lws_create_context(&info)) == NULL ||
	    (vh = lws_get_vhost_by_name(j.ctx, "default")) == NULL) {
		fprintf(stderr, "%s: cannot create the event loop\n",
		    argc > 0 ? argv[0] : "gclient");
		if (j.ctx != NULL)
			lws_context_destroy(j.ctx);
		return 1;
	}
	gclient_loop_ctx = j.ctx;
	gclient_loop_vh = vh;
	task_init(j.ctx, vh);
	if (task_spawn(gclient_job_run, &j) != 0)
		j.done = 1;
	while (!j.done)
		if (lws_service(j.ctx, 0) < 0)
			break;
	/* Tasks still waiting (a watcher of signals) die with the loop. */
	lws_context_destroy(j.ctx);
	gclient_loop_ctx = NULL;
	gclient_loop_vh = NULL;
	return j.r;
}

/* SPDX-License-Identifier: MIT */
/*
 * The DevTools client: HTTP/1.1 discovery requests and one WebSocket per
 * browser, both over loopback sockets adopted into guestd's loop.
 *
 * We speak WebSocket ourselves instead of through lws's client because the
 * framing we need is tiny (text frames out, whole messages in) and owning
 * it keeps the one hard cap on message size in one place, next to the
 * parser that the fuzzer exercises.  The connection never blocks: a
 * connect in progress, a short write or a partial frame just waits for the
 * next loop event.
 *
 * Lifetime: a struct cdp may be freed from inside any of its own
 * callbacks; "busy" counts the callbacks on the stack and the memory goes
 * only when the last one returns.
 */
#include "autoconf.h"

#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cdp.h"
#include "err.h"
#include "http-head.h"
#include "json.h"
#include "log.h"
#include "loop.h"
#include "queue-compat.h"
#include "wsframe.h"
#include "xmalloc.h"

#define CDP_INBUF_FIRST	(64 * 1024)

enum cdp_mode { CDP_WS, CDP_HTTP };
enum cdp_state { CDP_CONNECTING, CDP_HANDSHAKE, CDP_OPEN, CDP_DEAD };

struct cdp_call {
	uint64_t		 id;
	cdp_reply_fn		 fn;
	void			*arg;
	struct loop_timer	*timer;
	struct cdp		*c;
	LIST_ENTRY(cdp_call)	 entry;	/* in c's calls until answered */
};

struct cdp {
	enum cdp_mode		 mode;
	enum cdp_state		 state;
	struct loop_fd		*lf;
	int			 port;
	char			*path;
	uint8_t			*in;
	size_t			 inlen, incap;
	uint8_t			*out;
	size_t			 outlen, outoff;
	uint8_t			*msg;
	size_t			 msglen;
	int			 inmsg;
	uint64_t		 next_id;
	LIST_HEAD(, cdp_call)	 calls;
	cdp_state_fn		 state_fn;
	cdp_event_fn		 event_fn;
	cdp_http_fn		 http_fn;
	void			*arg;
	int			 busy;
	int			 dying;
	int			 freeme;
};

static void	cdp_fd_cb(struct loop_fd *, int, void *);

/* ---- parsers (pure) ------------------------------------------------------ */

/* The frame parser is wsframe's; this keeps cdp.h's shape for its users. */
int
cdp_ws_parse(const uint8_t *p, size_t n, size_t max, struct cdp_frame *f)
{
	struct wsframe	wf;
	int		r;

	memset(f, 0, sizeof *f);
	r = wsframe_parse(p, n, max, &wf);
	if (r <= 0)
		return r;
	f->fin = wf.fin;
	f->opcode = wf.opcode;
	f->payload = wf.payload;
	f->len = wf.len;
	return r;
}

/* The head parser is http-head's, with the DevTools head's cap. */
int
cdp_http_head(const char *p, size_t n, int *status, int64_t *clen)
{
	return http_head_parse(p, n, CDP_MAX_HTTP_HEAD, status, clen);
}

/* ---- lifetime ------------------------------------------------------------ */

static void
cdp_destroy(struct cdp *c)
{
	free(c->path);
	free(c->in);
	free(c->out);
	free(c->msg);
	free(c);
}

static void
cdp_leave(struct cdp *c)
{
	if (--c->busy == 0 && c->freeme)
		cdp_destroy(c);
}

static void
cdp_call_free(struct cdp_call *k)
{
	loop_timer_cancel(k->timer);
	free(k);
}

/* Answer every pending call with code; each is unlinked before its reply. */
static void
cdp_fail_all(struct cdp *c, int code, const char *why)
{
	struct cdp_call	*k;

	while ((k = LIST_FIRST(&c->calls)) != NULL) {
		LIST_REMOVE(k, entry);
		loop_timer_cancel(k->timer);
		k->timer = NULL;
		if (k->fn != NULL)
			k->fn(k->arg, code, NULL, why);
		free(k);
	}
}

/* The connection ended on its own: tell the owner once. */
static void
cdp_die(struct cdp *c, int code, const char *why)
{
	if (c->state == CDP_DEAD)
		return;
	c->state = CDP_DEAD;
	loop_fd_close(c->lf);
	c->lf = NULL;
	log_debug("cdp.closed", "port=%d error=%s", c->port, err_name(code));
	cdp_fail_all(c, code == 0 ? ERR_PEER_GONE : code, why);
	if (c->mode == CDP_HTTP) {
		if (c->http_fn != NULL && !c->dying)
			c->http_fn(c->arg, code == 0 ? ERR_PEER_GONE : code,
			    NULL, 0);
		c->http_fn = NULL;
		/* Nobody else holds an HTTP request: it frees itself. */
		c->dying = 1;
		c->freeme = 1;
		return;
	}
	if (c->state_fn != NULL && !c->dying)
		c->state_fn(c->arg, code == 0 ? ERR_PEER_GONE : code);
}

void
cdp_free(struct cdp *c)
{
	if (c == NULL || c->dying)
		return;
	c->dying = 1;
	c->busy++;
	c->state = CDP_DEAD;
	loop_fd_close(c->lf);
	c->lf = NULL;
	cdp_fail_all(c, ERR_PEER_GONE, "(the DevTools connection was closed)");
	c->freeme = 1;
	cdp_leave(c);
}

/* ---- output ---------------------------------------------------------------- */

static int
cdp_flush(struct cdp *c)
{
	int	r;

	r = loop_fd_write_pending(c->lf, c->out, c->outlen, &c->outoff);
	if (r < 0)
		return ERR_CONNECT;
	if (r > 0)
		c->outoff = c->outlen = 0;
	return 0;
}

static int
cdp_queue(struct cdp *c, const void *p, size_t n)
{
	if (c->outlen - c->outoff + n > CDP_MAX_MESSAGE + 64)
		return ERR_TOO_LARGE;
	if (c->outoff > 0) {
		memmove(c->out, c->out + c->outoff, c->outlen - c->outoff);
		c->outlen -= c->outoff;
		c->outoff = 0;
	}
	c->out = xrealloc(c->out, c->outlen + n);
	memcpy(c->out + c->outlen, p, n);
	c->outlen += n;
	/* Still connecting: the connect's writability flushes. */
	if (c->state == CDP_CONNECTING)
		return 0;
	return cdp_flush(c);
}

/* A masked client frame (RFC 6455 5.3). */
static int
cdp_send_frame(struct cdp *c, int opcode, const void *p, size_t n)
{
	uint8_t	*f;
	size_t	 len;
	int	 r;

	f = xmalloc(n + WSFRAME_MAX_HDR);
	if ((len = wsframe_client_frame(f, opcode, p, n)) == 0)
		r = ERR_INTERNAL;
	else
		r = cdp_queue(c, f, len);
	free(f);
	return r;
}

/* ---- connecting ------------------------------------------------------------ */

static int
cdp_connect_fd(int port)
{
	struct sockaddr_in	sin;
	int			fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return err_from_errno(errno);
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sin, sizeof sin) == -1 &&
	    errno != EINPROGRESS) {
		close(fd);
		return ERR_CONNECT;
	}
	return fd;
}

static struct cdp *
cdp_new(enum cdp_mode mode, int port, const char *path, void *arg)
{
	struct cdp	*c;
	int		 fd;

	if (port <= 0 || port > 65535 || path == NULL || path[0] != '/' ||
	    strlen(path) > 1024 || strpbrk(path, " \r\n") != NULL)
		return NULL;
	if ((fd = cdp_connect_fd(port)) < 0)
		return NULL;
	c = xcalloc(1, sizeof *c);
	c->mode = mode;
	c->port = port;
	c->path = xstrdup(path);
	c->arg = arg;
	c->state = CDP_CONNECTING;
	c->next_id = 1;
	if ((c->lf = loop_fd_add(fd, cdp_fd_cb, c)) == NULL) {
		cdp_destroy(c);
		return NULL;
	}
	loop_fd_want_write(c->lf);
	return c;
}

static int
cdp_send_request(struct cdp *c)
{
	char		req[1400], key[WSFRAME_KEYLEN + 1], host[32];
	int		n;

	snprintf(host, sizeof host, "127.0.0.1:%d", c->port);
	if (c->mode == CDP_HTTP)
		n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\n"
		    "Host: %s\r\nConnection: close\r\n\r\n", c->path, host);
	else {
		/* Only the 101 is checked: it is our Chromium, on loopback. */
		if (wsframe_key(key) != 0)
			return ERR_INTERNAL;
		n = wsframe_request(req, sizeof req, c->path, host, key, NULL,
		    NULL);
	}
	if (n < 0 || (size_t)n >= sizeof req)
		return ERR_INTERNAL;
	return cdp_queue(c, req, (size_t)n);
}

/* ---- input ----------------------------------------------------------------- */

static void
cdp_dispatch(struct cdp *c, const char *s, size_t n)
{
	struct cdp_call	*k;
	json_t		*j, *v, *err;
	const char	*method, *session, *msg;
	char		 e[JSONX_ERRLEN];
	json_int_t	 id;
	int		 code;

	j = jsonx_parse(s, n, CDP_MAX_MESSAGE, 1, &code, e);
	if (j == NULL) {
		log_warn("cdp.bad_message", "port=%d error=%s", c->port,
		    err_name(code));
		return;
	}
	v = json_object_get(j, "id");
	if (json_is_integer(v)) {
		id = json_integer_value(v);
		LIST_FOREACH(k, &c->calls, entry) {
			if ((json_int_t)k->id == id)
				break;
		}
		if (k != NULL) {
			LIST_REMOVE(k, entry);
			err = json_object_get(j, "error");
			if (err != NULL) {
				msg = json_string_value(json_object_get(err,
				    "message"));
				k->fn(k->arg, ERR_CDP, NULL,
				    msg != NULL ? msg : "(no message)");
			} else {
				v = json_object_get(j, "result");
				k->fn(k->arg, 0, json_is_object(v) ? v :
				    NULL, NULL);
			}
			cdp_call_free(k);
		}
	} else if ((method = json_string_value(json_object_get(j,
	    "method"))) != NULL && c->event_fn != NULL && !c->dying) {
		session = json_string_value(json_object_get(j, "sessionId"));
		c->event_fn(c->arg, method, json_object_get(j, "params"),
		    session);
	}
	json_decref(j);
}

/* One frame; returns 0 or an ERR_* that ends the connection. */
static int
cdp_frame(struct cdp *c, const struct cdp_frame *f)
{
	switch (f->opcode) {
	case 9:
		return cdp_send_frame(c, 10, f->payload, f->len);
	case 10:
		return 0;
	case 8:
		return ERR_PEER_GONE;
	case 0:
		if (!c->inmsg)
			return ERR_PROTOCOL;
		break;
	default:
		if (c->inmsg)
			return ERR_PROTOCOL;
		c->inmsg = 1;
		c->msglen = 0;
		break;
	}
	if (c->msglen + f->len > CDP_MAX_MESSAGE)
		return ERR_TOO_LARGE;
	if (f->fin && c->msglen == 0) {
		/* The usual case: a whole message in one frame, no copy. */
		c->inmsg = 0;
		cdp_dispatch(c, (const char *)f->payload, f->len);
		return 0;
	}
	c->msg = xrealloc(c->msg, c->msglen + f->len + 1);
	memcpy(c->msg + c->msglen, f->payload, f->len);
	c->msglen += f->len;
	if (f->fin) {
		c->inmsg = 0;
		cdp_dispatch(c, (const char *)c->msg, c->msglen);
		free(c->msg);
		c->msg = NULL;
		c->msglen = 0;
	}
	return 0;
}

/* Consume what is buffered; 0 or an ERR_* that ends the connection. */
static int
cdp_consume(struct cdp *c, int eof)
{
	struct cdp_frame	f;
	size_t			off = 0;
	int64_t			clen;
	int			r = 0, status;

	if (c->state == CDP_HANDSHAKE || c->mode == CDP_HTTP) {
		r = cdp_http_head((const char *)c->in, c->inlen, &status,
		    &clen);
		if (r == 0)
			return eof ? ERR_PROTOCOL : 0;
		if (r < 0)
			return r;
		if (c->mode == CDP_HTTP) {
			size_t	body = c->inlen - (size_t)r;

			if (status != 200)
				return ERR_CDP;
			if (clen > CDP_MAX_MESSAGE)
				return ERR_TOO_LARGE;
			if ((clen < 0 && !eof) || (clen >= 0 &&
			    body < (size_t)clen))
				return eof ? ERR_PROTOCOL : 0;
			if (clen >= 0)
				body = (size_t)clen;
			if (c->http_fn != NULL)
				c->http_fn(c->arg, 0, (const char *)c->in + r,
				    body);
			c->http_fn = NULL;
			return ERR_PEER_GONE;
		}
		if (status != 101)
			return ERR_CONNECT;
		off = (size_t)r;
		c->state = CDP_OPEN;
		if (c->state_fn != NULL && !c->dying)
			c->state_fn(c->arg, 0);
		if (c->dying)
			return 0;
	}
	while (off < c->inlen && !c->dying) {
		r = cdp_ws_parse(c->in + off, c->inlen - off, CDP_MAX_MESSAGE,
		    &f);
		if (r <= 0)
			break;
		off += (size_t)r;
		if ((r = cdp_frame(c, &f)) != 0)
			break;
	}
	if (off > 0 && !c->dying) {
		memmove(c->in, c->in + off, c->inlen - off);
		c->inlen -= off;
	}
	if (r < 0)
		return r;
	return eof ? ERR_PEER_GONE : 0;
}

/*
 * One read into the buffer, grown only while a frame does not fit yet.
 * *got: bytes arrived; *eof: the peer closed.  0 or ERR_*.
 */
static int
cdp_read(struct cdp *c, int *got, int *eof)
{
	ssize_t	n;
	size_t	want, cap = CDP_MAX_MESSAGE + CDP_MAX_HTTP_HEAD + 16;

	*got = *eof = 0;
	if (c->inlen == c->incap) {
		want = c->incap == 0 ? CDP_INBUF_FIRST : c->incap * 2;
		if (want > cap)
			want = cap;
		if (want <= c->incap)
			return ERR_TOO_LARGE;
		c->in = xrealloc(c->in, want);
		c->incap = want;
	}
	for (;;) {
		n = read(loop_fd_get(c->lf), c->in + c->inlen,
		    c->incap - c->inlen);
		if (n > 0) {
			c->inlen += (size_t)n;
			*got = 1;
			return 0;
		}
		if (n == 0) {
			*eof = 1;
			return 0;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		return ERR_CONNECT;
	}
}

static void
cdp_fd_cb(struct loop_fd *lf, int events, void *arg)
{
	struct cdp	*c = arg;
	socklen_t	 sl = sizeof(int);
	int		 r = 0, eof = 0, soerr = 0;

	c->busy++;
	if (c->state == CDP_CONNECTING && (events & (LOOP_WRITE | LOOP_HUP |
	    LOOP_READ))) {
		if (getsockopt(loop_fd_get(lf), SOL_SOCKET, SO_ERROR, &soerr,
		    &sl) == -1 || soerr != 0) {
			r = ERR_CONNECT;
			goto out;
		}
		c->state = CDP_HANDSHAKE;
		if ((r = cdp_send_request(c)) != 0)
			goto out;
		if ((r = cdp_flush(c)) != 0)
			goto out;
	}
	if (events & LOOP_WRITE) {
		if ((r = cdp_flush(c)) != 0)
			goto out;
	}
	if (events & (LOOP_READ | LOOP_HUP)) {
		while (r == 0 && !eof && !c->dying && c->lf != NULL) {
			int	got;

			r = cdp_read(c, &got, &eof);
			if (r != 0 || (!got && !eof))
				break;
			r = cdp_consume(c, eof);
		}
	}
out:
	if (events & LOOP_HUP) {
		/* lf is gone once we return. */
		c->lf = NULL;
		if (r == 0)
			r = ERR_PEER_GONE;
	}
	if (r != 0 && !c->dying)
		cdp_die(c, r, r == ERR_TOO_LARGE ?
		    "(a DevTools message exceeded 8 MiB)" :
		    "(the DevTools connection failed)");
	cdp_leave(c);
}

/* ---- public ---------------------------------------------------------------- */

struct cdp *
cdp_open(int port, const char *path, cdp_state_fn state, cdp_event_fn event,
    void *arg)
{
	struct cdp	*c;

	if ((c = cdp_new(CDP_WS, port, path, arg)) == NULL)
		return NULL;
	c->state_fn = state;
	c->event_fn = event;
	return c;
}

static void
cdp_call_timeout(void *arg)
{
	struct cdp_call	*k = arg;
	struct cdp	*c = k->c;

	/* Armed only while k is linked: every unlink cancels it. */
	k->timer = NULL;
	LIST_REMOVE(k, entry);
	c->busy++;
	k->fn(k->arg, ERR_CDP, NULL, "(the browser did not answer in time)");
	free(k);
	cdp_leave(c);
}

int
cdp_call(struct cdp *c, const char *session, const char *method,
    json_t *params, uint64_t timeout_ms, cdp_reply_fn reply, void *arg)
{
	struct cdp_call	*k;
	json_t		*msg;
	char		*s;
	size_t		 n;
	int		 r = ERR_INTERNAL;

	if (params == NULL)
		params = json_object();
	if (c == NULL || c->dying || c->state == CDP_DEAD ||
	    c->mode != CDP_WS) {
		json_decref(params);
		return ERR_PEER_GONE;
	}
	msg = json_pack("{s:I,s:s,s:o}", "id", (json_int_t)c->next_id,
	    "method", method, "params", params);
	if (msg == NULL)
		return ERR_NOMEM;
	if (session != NULL)
		json_object_set_new(msg, "sessionId", json_string(session));
	s = jsonx_dump(msg, &n);
	json_decref(msg);
	if (s == NULL)
		return ERR_NOMEM;
	if (c->state != CDP_OPEN) {
		r = ERR_PEER_GONE;
		goto out;
	}
	if ((r = cdp_send_frame(c, 1, s, n)) != 0)
		goto out;
	k = xcalloc(1, sizeof *k);
	k->id = c->next_id++;
	k->fn = reply;
	k->arg = arg;
	k->c = c;
	k->timer = loop_timer_add(timeout_ms > 0 ? timeout_ms :
	    CDP_CALL_TIMEOUT_MS, cdp_call_timeout, k);
	LIST_INSERT_HEAD(&c->calls, k, entry);
	r = 0;
out:
	free(s);
	return r;
}

void
cdp_forget(struct cdp *c, void *arg)
{
	struct cdp_call	*k, *next;

	if (c == NULL)
		return;
	LIST_FOREACH_SAFE(k, &c->calls, entry, next) {
		if (k->arg == arg) {
			LIST_REMOVE(k, entry);
			cdp_call_free(k);
		}
	}
}

int
cdp_http_get(int port, const char *path, cdp_http_fn done, void *arg)
{
	struct cdp	*c;

	if ((c = cdp_new(CDP_HTTP, port, path, arg)) == NULL)
		return ERR_CONNECT;
	c->http_fn = done;
	return 0;
}

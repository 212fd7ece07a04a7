/* SPDX-License-Identifier: MIT */
/*
 * Calls to a computer's guestd for every provider (guest.h).
 *
 * Connections are cached per computer and control URL and shared: tasks
 * hold references while they use one; a connection that failed, or whose
 * computer stopped (guest_forget), is unlinked (dead) and freed by its
 * last user, never under a waiting task.  One task connects, the others
 * wait for its outcome.  A call on a cached connection that fails before
 * anything of its body was taken and before any byte came back runs once
 * more on a fresh connection: the guestd the cache knew may have been
 * replaced behind our back.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "guest-client.h"
#include "guest.h"
#include "proto.h"
#include "provider.h"
#include "queue-compat.h"
#include "task.h"
#include "xmalloc.h"

#define GUEST_CONNECT_MS	10000
#define GUEST_CALL_IDLE_MS	600000
/* Bodies and downloads kept whole in memory (in-process, file.read). */
#define GUEST_BUFFER_MAX	(64 * 1024 * 1024)
#define GUEST_INPROC_MAX	4
#define GUEST_INPROC_SCHEME	"inproc://"

struct guest_conn {
	char			 id[STORE_ID_MAX];
	char			 url[PROVIDER_URL_MAX];
	struct gclient		*c;
	int			 refs;
	int			 connecting;
	int			 dead;
	struct task_cond	 cv;		/* connecting finished */
	LIST_ENTRY(guest_conn)	 entry;
};

static LIST_HEAD(, guest_conn)	 guest_conns =
				    LIST_HEAD_INITIALIZER(guest_conns);
static struct lws_context	*guest_ctx;
static struct lws_vhost		*guest_vh;
static const struct guest_inproc *guest_inprocs[GUEST_INPROC_MAX];

void
guest_init(struct lws_context *ctx, struct lws_vhost *vh)
{
	guest_ctx = ctx;
	guest_vh = vh;
}

void
guest_inproc_register(const struct guest_inproc *s)
{
	size_t	 i;

	for (i = 0; i < GUEST_INPROC_MAX; i++) {
		if (guest_inprocs[i] == s)
			return;
		if (guest_inprocs[i] == NULL) {
			guest_inprocs[i] = s;
			return;
		}
	}
	fatal("guest: more than %d in-process endpoints", GUEST_INPROC_MAX);
}

/* ---- the connection cache --------------------------------------------- */

static void
guest_conn_free(struct guest_conn *l)
{
	gclient_free(l->c);
	free(l);
}

/* Unlink l; its last user frees it. */
static void
guest_conn_kill(struct guest_conn *l)
{
	if (l->dead)
		return;
	l->dead = 1;
	LIST_REMOVE(l, entry);
	if (l->refs == 0)
		guest_conn_free(l);
}

static void
guest_conn_put(struct guest_conn *l)
{
	if (--l->refs == 0 && l->dead)
		guest_conn_free(l);
}

void
guest_forget(const char *id)
{
	struct guest_conn	*l, *next;

	LIST_FOREACH_SAFE(l, &guest_conns, entry, next)
		if (strcmp(l->id, id) == 0)
			guest_conn_kill(l);
}

static int
guest_connect(const struct provider_endpoint *ep, struct gclient **out,
    struct errmsg *err)
{
	struct gclient_opts	 o;

	memset(&o, 0, sizeof o);
	o.url = ep->control_url;
	o.secret = ep->secret;
	o.timeout_ms = GUEST_CONNECT_MS;
	o.ctx = guest_ctx;
	o.vhost = guest_vh;
	if (guest_ctx == NULL || guest_vh == NULL)
		return errmsg_set(err, ERR_INTERNAL, "INTERNAL: no loop for "
		    "guestd connections");
	return gclient_connect(out, &o, err);
}

/*
 * A referenced, connected connection to ep (computer id), created on
 * first use.  *fresh (may be NULL) says whether it was opened now rather
 * than found open.
 */
static int
guest_conn_get(const char *id, const struct provider_endpoint *ep,
    struct guest_conn **out, int *fresh, struct errmsg *err)
{
	struct guest_conn	*l;
	int			 r;

	*out = NULL;
	LIST_FOREACH(l, &guest_conns, entry)
		if (strcmp(l->id, id) == 0 &&
		    strcmp(l->url, ep->control_url) == 0)
			break;
	if (l == NULL) {
		l = xcalloc(1, sizeof *l);
		snprintf(l->id, sizeof l->id, "%s", id);
		snprintf(l->url, sizeof l->url, "%s", ep->control_url);
		LIST_INSERT_HEAD(&guest_conns, l, entry);
	}
	l->refs++;
	/* Opened by this call (or one it waited for): it cannot be stale. */
	if (fresh != NULL)
		*fresh = l->c == NULL;
	while (l->connecting)
		(void)task_cond_wait(&l->cv, -1);
	if (l->c == NULL && !l->dead) {
		l->connecting = 1;
		r = guest_connect(ep, &l->c, err);
		l->connecting = 0;
		task_cond_broadcast(&l->cv);
		if (r != 0) {
			l->refs--;
			guest_conn_kill(l);	/* frees it without users */
			return r;
		}
	}
	if (l->c == NULL) {
		errmsg_set(err, ERR_PEER_GONE, "the connection to guestd "
		    "failed");
		guest_conn_put(l);
		return ERR_PEER_GONE;
	}
	*out = l;
	return 0;
}

/* ---- one request over a connection -------------------------------------- */

/*
 * One request in flight.  Its body comes from memory (in) or from a
 * streaming source (src); its channel 0 goes to memory (buf) or to a sink.
 */
struct guest_req {
	int			 done;
	json_t			*reply;
	char			*buf;
	size_t			 len, cap;
	const uint8_t		*in;
	size_t			 inlen, inoff;
	struct guest_src	*src;
	const struct guest_sink	*sink;
	int			 sink_err;
	uint64_t		 taken;		/* bytes from src or to sink */
	struct gclient		*gc;		/* while the upload runs */
	uint32_t		 id;
};

static void
guest_on_reply(struct gclient *gc, uint32_t id, json_t *msg, void *arg)
{
	struct guest_req	*q = arg;

	q->reply = json_incref(msg);
	q->done = 1;
}

static int
guest_on_data(struct gclient *gc, uint32_t id, uint8_t ch, const uint8_t *p,
    size_t n, int end, void *arg)
{
	struct guest_req	*q = arg;

	if (ch != PROTO_CH_DATA || n == 0)
		return 0;
	/*
	 * A sink that gives up (its HTTP client left) drops this call's
	 * bytes only: failing here would close a connection other
	 * requests share.
	 */
	if (q->sink != NULL) {
		q->taken += n;
		if (q->sink_err == 0)
			q->sink_err = q->sink->write(q->sink->arg, p, n);
		return 0;
	}
	/* Bounded by what the tool asked for (file.read length, images). */
	if (q->len + n > GUEST_BUFFER_MAX)
		return ERR_TOO_LARGE;
	if (q->len + n > q->cap) {
		q->cap = (q->len + n) * 2;
		q->buf = xrealloc(q->buf, q->cap);
	}
	memcpy(q->buf + q->len, p, n);
	q->len += n;
	return 0;
}

static ssize_t
guest_source(void *arg, uint8_t *p, size_t max, int *end)
{
	struct guest_req	*q = arg;
	size_t			 n = q->inlen - q->inoff;

	if (n > max)
		n = max;
	memcpy(p, q->in + q->inoff, n);
	q->inoff += n;
	if (q->inoff == q->inlen)
		*end = 1;
	return (ssize_t)n;
}

/* A streamed body: 0 without end pauses the upload in gclient. */
static ssize_t
guest_stream_source(void *arg, uint8_t *p, size_t max, int *end)
{
	struct guest_req	*q = arg;
	ssize_t			 n;

	n = q->src->read(q->src->arg, p, max, end);
	if (n > 0)
		q->taken += (uint64_t)n;
	return n;
}

/* guest_src.ready: the source has bytes again. */
static void
guest_stream_ready(void *arg)
{
	struct guest_req	*q = arg;

	if (q->gc != NULL && q->id != 0)
		(void)gclient_upload_resume(q->gc, q->id);
}

static int
guest_req_once(const char *cid, const struct provider_endpoint *ep,
    const char *op, json_t *args, struct guest_req *q, int *fresh,
    struct errmsg *err)
{
	struct guest_conn	*l;
	uint32_t		 id;
	int			 r = 0;

	if ((r = guest_conn_get(cid, ep, &l, fresh, err)) != 0) {
		json_decref(args);
		return r;
	}
	id = gclient_request(l->c, op, args, guest_on_reply, guest_on_data,
	    q);
	if (id == 0) {
		r = errmsg_set(err, ERR_PEER_GONE, "%s", gclient_error(l->c));
	} else if (q->src != NULL) {
		q->gc = l->c;
		q->id = id;
		q->src->ready = guest_stream_ready;
		q->src->ready_arg = q;
		r = gclient_upload(l->c, id, guest_stream_source, q);
	} else if (q->in != NULL)
		r = gclient_upload(l->c, id, guest_source, q);
	if (r == 0 && id != 0 &&
	    (r = gclient_run(l->c, &q->done, GUEST_CALL_IDLE_MS)) != 0)
		errmsg_set(err, r, "%s", gclient_error(l->c));
	/* The source outlives the call; the connection may not. */
	if (q->src != NULL) {
		q->src->ready = NULL;
		q->src->ready_arg = NULL;
	}
	q->gc = NULL;
	q->id = 0;
	/* A connection that failed is nobody's any more. */
	if (r != 0 && q->reply == NULL) {
		if (id != 0)
			gclient_forget(l->c, id);
		l->refs--;
		guest_conn_kill(l);	/* frees it without users */
	} else
		guest_conn_put(l);
	return r;
}

/* Reset q for another try, keeping what the caller gave. */
static void
guest_req_reset(struct guest_req *q)
{
	struct guest_req	 keep = *q;

	free(q->buf);
	json_decref(q->reply);
	memset(q, 0, sizeof *q);
	q->in = keep.in;
	q->inlen = keep.inlen;
	q->src = keep.src;
	q->sink = keep.sink;
}

/* Run q (args stolen) on ep and turn its reply into *result or an error. */
static int
guest_req_run(const char *cid, const struct provider_endpoint *ep,
    const char *op, json_t *args, struct guest_req *q, json_t **result,
    struct errmsg *err)
{
	int	 r, fresh = 1;

	json_incref(args);
	r = guest_req_once(cid, ep, op, args, q, &fresh, err);
	if (r != 0 && !fresh && q->reply == NULL && q->inoff == 0 &&
	    q->taken == 0 && q->len == 0) {
		guest_req_reset(q);
		json_incref(args);
		r = guest_req_once(cid, ep, op, args, q, &fresh, err);
	}
	json_decref(args);
	if (r != 0)
		return r;
	if (!json_is_true(json_object_get(q->reply, "ok")))
		return gclient_reply_error(q->reply, err);
	*result = json_incref(json_object_get(q->reply, "result"));
	if (*result == NULL)
		*result = json_object();
	return 0;
}

/* ---- in-process endpoints ----------------------------------------------- */

/* inproc://NAME/COMPUTER: the stand-in and the computer, or NULL. */
static const struct guest_inproc *
guest_inproc_find(const char *url, const char **computer)
{
	const char	*name, *slash;
	size_t		 i, n;

	if (strncmp(url, GUEST_INPROC_SCHEME,
	    sizeof GUEST_INPROC_SCHEME - 1) != 0)
		return NULL;
	name = url + sizeof GUEST_INPROC_SCHEME - 1;
	if ((slash = strchr(name, '/')) == NULL)
		return NULL;
	n = (size_t)(slash - name);
	for (i = 0; i < GUEST_INPROC_MAX && guest_inprocs[i] != NULL; i++)
		if (strlen(guest_inprocs[i]->name) == n &&
		    strncmp(guest_inprocs[i]->name, name, n) == 0) {
			*computer = slash + 1;
			return guest_inprocs[i];
		}
	return NULL;
}

struct guest_fill {
	struct task_cond	 cv;
};

static void
guest_fill_ready(void *arg)
{
	struct guest_fill	*f = arg;

	task_cond_broadcast(&f->cv);
}

/* Read src whole, waiting for it in the task. */
static int
guest_src_slurp(struct guest_src *src, uint8_t **out, size_t *outlen)
{
	struct guest_fill	 f;
	uint8_t			*buf = NULL;
	size_t			 len = 0, cap = 0;
	ssize_t			 n;
	int			 end = 0, r = 0;

	memset(&f, 0, sizeof f);
	src->ready = guest_fill_ready;
	src->ready_arg = &f;
	while (!end) {
		if (cap - len < 65536) {
			cap = (len + 65536) * 2;
			buf = xrealloc(buf, cap);
		}
		if ((n = src->read(src->arg, buf + len, cap - len,
		    &end)) < 0) {
			r = (int)n;
			break;
		}
		len += (size_t)n;
		if (len > GUEST_BUFFER_MAX) {
			r = ERR_TOO_LARGE;
			break;
		}
		if (n == 0 && !end && (r = task_cond_wait(&f.cv, -1)) != 0)
			break;
	}
	src->ready = NULL;
	src->ready_arg = NULL;
	if (r != 0) {
		free(buf);
		return r;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

/* One request to an in-process stand-in; args stolen. */
static int
guest_inproc_req(const struct guest_inproc *s, const char *computer,
    const char *op, json_t *args, struct guest_req *q, json_t **result,
    struct errmsg *err)
{
	uint8_t	*body = NULL;
	void	*out = NULL;
	size_t	 bodylen = 0, outlen = 0;
	int	 r;

	if (q->src != NULL) {
		if ((r = guest_src_slurp(q->src, &body, &bodylen)) != 0) {
			errmsg_set(err, r, "%s", err_message(r));
			goto out;
		}
		q->in = body != NULL ? body : (const uint8_t *)"";
		q->inlen = bodylen;
	}
	r = s->call(computer, op, args, q->in, q->inlen, result,
	    &out, &outlen, err);
	if (r == 0 && outlen > 0) {
		if (q->sink != NULL)
			(void)q->sink->write(q->sink->arg, out, outlen);
		else {
			q->buf = out;
			q->len = outlen;
			out = NULL;
		}
	}
out:
	free(out);
	free(body);
	json_decref(args);
	return r;
}

/* ---- calls ------------------------------------------------------------ */

/* q against c's endpoint, wherever it is served; args stolen. */
static int
guest_run(struct provider *p, const struct store_computer *c, const char *op,
    json_t *args, struct guest_req *q, json_t **result, struct errmsg *err)
{
	struct provider_endpoint	 ep;
	const struct guest_inproc	*s;
	const char			*computer = NULL;
	int				 r;

	*result = NULL;
	errmsg_clear(err);
	if ((r = provider_endpoint(p, c, &ep, err)) != 0) {
		if (err->msg[0] == '\0')
			errmsg_set(err, r, "%s", err_message(r));
		json_decref(args);
		goto out;
	}
	if ((s = guest_inproc_find(ep.control_url, &computer)) != NULL)
		r = guest_inproc_req(s, computer, op, args, q, result, err);
	else
		r = guest_req_run(c->id, &ep, op, args, q, result, err);
out:
	provider_endpoint_wipe(&ep);
	return r;
}

int
guest_call(struct provider *p, const struct store_computer *c, const char *op,
    json_t *args, const void *in, size_t inlen, json_t **result, void **out,
    size_t *outlen, struct errmsg *err)
{
	struct guest_req	 q;
	int			 r;

	if (out != NULL) {
		*out = NULL;
		*outlen = 0;
	}
	memset(&q, 0, sizeof q);
	q.in = in;
	q.inlen = inlen;
	r = guest_run(p, c, op, args, &q, result, err);
	if (r == 0 && out != NULL) {
		*out = q.buf;
		*outlen = q.len;
		q.buf = NULL;
	}
	free(q.buf);
	json_decref(q.reply);
	return r;
}

int
guest_call_upload(struct provider *p, const struct store_computer *c,
    const char *op, json_t *args, struct guest_src *src, json_t **result,
    struct errmsg *err)
{
	struct guest_req	 q;
	int			 r;

	memset(&q, 0, sizeof q);
	q.src = src;
	r = guest_run(p, c, op, args, &q, result, err);
	free(q.buf);
	json_decref(q.reply);
	return r;
}

int
guest_call_download(struct provider *p, const struct store_computer *c,
    const char *op, json_t *args, const struct guest_sink *sink,
    json_t **result, struct errmsg *err)
{
	struct guest_req	 q;
	int			 r;

	memset(&q, 0, sizeof q);
	q.sink = sink;
	r = guest_run(p, c, op, args, &q, result, err);
	free(q.buf);
	json_decref(q.reply);
	return r;
}

/* The host of ws://HOST:PORT (brackets kept for IPv6). */
static int
guest_url_host(const char *url, char *host, size_t len)
{
	const char	*p, *end;

	if ((p = strstr(url, "://")) == NULL)
		return ERR_NOT_FOUND;
	p += 3;
	if (*p == '[') {
		if ((end = strchr(p, ']')) == NULL)
			return ERR_NOT_FOUND;
		end++;
	} else if ((end = strpbrk(p, ":/")) == NULL)
		end = p + strlen(p);
	if (end == p || (size_t)(end - p) >= len)
		return ERR_NOT_FOUND;
	memcpy(host, p, (size_t)(end - p));
	host[end - p] = '\0';
	return 0;
}

int
guest_gateway(struct provider *p, const struct store_computer *c,
    char *hostport, size_t len)
{
	struct provider_endpoint	 ep;
	struct guest_conn		*l = NULL;
	struct errmsg			 err;
	char				 host[PROVIDER_URL_MAX];
	const char			*computer;
	json_int_t			 port = 0;
	int				 r;

	if ((r = provider_endpoint(p, c, &ep, &err)) != 0)
		goto out;
	r = ERR_NOT_FOUND;
	if (ep.gateway[0] != '\0') {
		if ((size_t)snprintf(hostport, len, "%s", ep.gateway) < len)
			r = 0;
		goto out;
	}
	/* An in-process stand-in has no gateway. */
	if (guest_inproc_find(ep.control_url, &computer) != NULL ||
	    guest_url_host(ep.control_url, host, sizeof host) != 0)
		goto out;
	/* The gateway port comes from guestd's hello (G-13: one port). */
	if ((r = guest_conn_get(c->id, &ep, &l, NULL, &err)) != 0)
		goto out;
	port = json_integer_value(json_object_get(gclient_hello(l->c),
	    "gateway_port"));
	guest_conn_put(l);
	r = ERR_NOT_FOUND;
	if (port > 0 && port <= 65535 &&
	    (size_t)snprintf(hostport, len, "%s:%d", host, (int)port) < len)
		r = 0;
out:
	provider_endpoint_wipe(&ep);
	return r;
}

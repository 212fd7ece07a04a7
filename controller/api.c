/* SPDX-License-Identifier: MIT */
/*
 * The controller's HTTP/JSON API (api.h): the router and what every route
 * shares.  Each request takes its own store connection (requests run as
 * tasks that may wait; SQLite connections are not shared between them),
 * checks the bearer token in constant time, finds its handler in one
 * table of {method, path pattern, handler} and answers JSON.  The
 * handlers live one resource per file (api-computers.c, api-leases.c,
 * api-control.c, api-runs.c, api-files.c, api-tools.c); this file shapes
 * replies and errors and parses bodies for them.  Bad input is refused
 * before anything changes; every refusal carries a stable code.
 */
#include "autoconf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "err.h"
#include "json.h"
#include "log.h"
#include "redact.h"
#include "token.h"
#include "api.h"
#include "api-int.h"
#include "home-object.h"
#include "provider.h"
#include "store.h"
#include "xmalloc.h"

int
api_status(int code)
{
	switch (code) {
	case 0:
		return 200;
	case ERR_BAD_REQUEST: case ERR_BAD_JSON: case ERR_PATH_INVALID:
	case ERR_PATH_OUTSIDE: case ERR_NAME_TOO_LONG: case ERR_INVALID_BOT:
	case ERR_RANGE: case ERR_ACTION_INVALID: case ERR_COORDINATES:
	case ERR_KEY_UNKNOWN: case ERR_NOT_DIR: case ERR_IS_DIR:
	case ERR_NOT_REGULAR: case ERR_UNKNOWN_OP: case ERR_CONFIG:
	case ERR_SIZE_MISMATCH:
		return 400;
	case ERR_UNAUTHORIZED:
		return 401;
	case ERR_PERMISSION:
		return 403;
	case ERR_NOT_FOUND: case ERR_UNKNOWN_TOOL: case ERR_NO_REVISION:
		return 404;
	case ERR_METHOD:
		return 405;
	case ERR_EXISTS: case ERR_BUSY: case ERR_LEASE_HELD:
	case ERR_STOP_THE_BOT_FIRST: case ERR_STALE_FENCE:
	case ERR_LEASE_EXPIRED: case ERR_MULTI_SCREEN_UNAVAILABLE:
	case ERR_UNCHANGED_REPEAT: case ERR_NO_DISPLAY: case ERR_NOT_EMPTY:
	case ERR_SHARED_USER:
		return 409;
	case ERR_TOO_LARGE: case ERR_TAR_TOO_LARGE:
		return 413;
	case ERR_LENGTH_REQUIRED:
		return 411;
	case ERR_CONNECT: case ERR_PEER_GONE: case ERR_PROVIDER:
	case ERR_PROTOCOL: case ERR_DISPLAY_FAILED:
		return 502;
	case ERR_COMPUTERS_DISABLED: case ERR_STORE_UNAVAILABLE:
		return 503;
	case ERR_NO_SPACE:
		return 507;
	default:
		return 500;
	}
}

void
api_reply(struct api_ctx *x, int status, json_t *j)
{
	static const char	 fail[] = "{\"error\":{\"code\":\"INTERNAL\","
	    "\"message\":\"The reply could not be built.\"}}";

	x->out->status = status;
	x->out->body = jsonx_dump(j, &x->out->len);
	json_decref(j);
	/* A reply that cannot be serialised is our bug: never the peer's. */
	if (x->out->body == NULL) {
		log_error("api.reply", "status=%d unserialisable", status);
		x->out->status = 500;
		x->out->body = xstrdup(fail);
		x->out->len = sizeof fail - 1;
	}
}

/*
 * An error reply.  msg may be "CODE: sentence" (from guestd through
 * gclient): the code is ours already, keep the sentence.
 */
void
api_error(struct api_ctx *x, int code, const char *msg)
{
	api_error_cause(x, code, 0, msg);
}

/* With "cause": the stable code a summary code stands for, when known. */
void
api_error_cause(struct api_ctx *x, int code, int cause, const char *msg)
{
	char		 red[API_ERRLEN];
	const char	*s = msg;
	size_t		 n;

	if (code == 0)
		code = ERR_INTERNAL;
	if (s != NULL) {
		n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_");
		if (n > 0 && strncmp(s + n, ": ", 2) == 0)
			s += n + 2;
	}
	if (s == NULL || *s == '\0')
		s = err_message(code);
	redact_text(red, sizeof red, s);
	/* Sentences quote what clients sent, cut at fixed lengths. */
	jsonx_utf8_fix(red);
	if (cause != 0 && cause != code)
		api_reply(x, api_status(code), json_pack("{s:{s:s, s:s, s:s}}",
		    "error", "code", err_name(code), "cause", err_name(cause),
		    "message", red));
	else
		api_reply(x, api_status(code), json_pack("{s:{s:s, s:s}}",
		    "error", "code", err_name(code), "message", red));
}

int
api_name_ok(const char *s)
{
	size_t	 i;

	if (s == NULL || s[0] == '\0' || s[0] == '.' || s[0] == '-')
		return 0;
	for (i = 0; s[i] != '\0'; i++)
		if (i >= 63 || !(isalnum((unsigned char)s[i]) || s[i] == '.' ||
		    s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

int
api_parse_body(struct api_ctx *x)
{
	int	 code;
	char	 e[JSONX_ERRLEN];

	if (x->q->too_large) {
		api_error(x, ERR_TOO_LARGE, "The request body is over 1 MiB.");
		return -1;
	}
	if (x->q->bodylen == 0) {
		x->body = json_object();
		return 0;
	}
	x->body = jsonx_parse(x->q->body, x->q->bodylen, API_MAX_BODY, 1,
	    &code, e);
	if (x->body == NULL) {
		api_error(x, code, e);
		return -1;
	}
	return 0;
}

int
api_body_name(struct api_ctx *x, const char *key, const char **out)
{
	char	 e[JSONX_ERRLEN];
	int	 r;

	if ((r = jsonx_str(x->body, key, 63, out, e)) != 0) {
		if (r == ERR_NOT_FOUND)
			snprintf(e, sizeof e, "\"%s\" is required", key);
		api_error(x, ERR_BAD_REQUEST, e);
		return -1;
	}
	if (!api_name_ok(*out)) {
		snprintf(e, sizeof e, "\"%s\" must be 1..63 of A-Z a-z 0-9 . _ -",
		    key);
		api_error(x, strcmp(key, "bot") == 0 ? ERR_INVALID_BOT :
		    ERR_BAD_REQUEST, e);
		return -1;
	}
	return 0;
}

int64_t
api_query_int(const char *query, const char *key, int64_t def)
{
	const char	*p = query;
	size_t		 kl = strlen(key);

	while (p != NULL && *p != '\0') {
		if (strncmp(p, key, kl) == 0 && p[kl] == '=')
			return strtoll(p + kl + 1, NULL, 10);
		if ((p = strchr(p, '&')) != NULL)
			p++;
	}
	return def;
}

/* ---- routing ---------------------------------------------------------- */

/* GET /internal/health, without a token. */
static void
api_health(struct api_ctx *x, const char **arg)
{
	const char	*iso = provider_isolation(x->a->prov);
	json_t		*j;
	int64_t		 v = 0;
	int		 r;

	struct errmsg	 perr;
	const char	*hmsg = "";
	json_t		*st;
	int		 pr, h = 0;

	r = store_schema_version(x->s, &v);
	/*
	 * A store that answers reads but refuses writes (a full disk) is
	 * down for every grant and release: a write is the check.
	 */
	if (r == 0)
		r = store_write_check(x->s);
	/* The provider's machinery (an engine's socket) is setup too. */
	pr = provider_check(x->a->prov, &perr);
	/*
	 * The object home store (C-10): a bucket that cannot be reached or
	 * refuses the credentials is a setup failure, never a fallback.
	 */
	if (home_object_enabled())
		h = home_object_health(&hmsg);
	j = json_pack("{s:s, s:s, s:{s:s, s:s, s:I}, s:{s:s, s:s}}", "sandbox",
	    provider_name(x->a->prov), "state", r == 0 && pr == 0 && h == 0 ?
	    "ok" : "degraded", "store", "backend", store_backend(x->s),
	    "state", r == 0 ? "ok" : "failed", "schema", (json_int_t)v,
	    "home_store", "backend", home_object_enabled() ? "object" :
	    "local", "state", h == 0 ? "ok" : "failed");
	if (j != NULL && r != 0) {
		st = json_object_get(j, "store");
		json_object_set_new(st, "code", json_string(err_name(r)));
		json_object_set_new(st, "error", json_string(err_message(r)));
	}
	if (j != NULL && h != 0) {
		json_object_set_new(json_object_get(j, "home_store"), "code",
		    json_string(err_name(h)));
		json_object_set_new(json_object_get(j, "home_store"), "error",
		    json_string(hmsg));
	}
	/* How computers are kept apart: "uid", "shared-user", "container". */
	if (j != NULL && iso != NULL)
		json_object_set_new(j, "isolation", json_string(iso));
	if (j != NULL && pr != 0)
		json_object_set_new(j, "setup", json_pack("{s:s, s:s}",
		    "code", err_name(pr), "message", errmsg_str(&perr)));
	api_reply(x, r == 0 && pr == 0 && h == 0 ? 200 : 503, j);
}

static int
api_authorized(struct api_ctx *x)
{
	const char	*h = x->q->auth;

	if (strncasecmp(h, "Bearer ", 7) != 0)
		return 0;
	h += 7;
	return token_equal(h, strlen(h), x->a->token, strlen(x->a->token));
}

/* Split "/v1/computers/ID/activity" into at most max segments. */
static size_t
api_split(char *path, char **seg, size_t max)
{
	size_t	 n = 0;
	char	*p = path, *s;

	while (*p == '/')
		p++;
	while (*p != '\0' && n < max) {
		seg[n++] = p;
		if ((s = strchr(p, '/')) == NULL)
			break;
		*s = '\0';
		p = s + 1;
	}
	if (*p != '\0' && n == max && strchr(p, '/') != NULL)
		return max + 1;
	return n;
}

/* The most segments a route has; a longer path is no route. */
#define API_SEGS_MAX	6
#define API_OPEN	0x01	/* answers without the bearer token */

struct api_route {
	const char	*method;
	/* Path segments; "*" matches any one and hands it to the handler. */
	const char	*pattern;
	api_handler	*handler;
	int		 flags;
};

static const struct api_route api_routes[] = {
	{ "GET", "/internal/health", api_health, API_OPEN },
	{ "GET", "/v1/tools", api_tools_list, 0 },
	{ "POST", "/v1/tools/*", api_tools_call, 0 },
	{ "GET", "/v1/computers", api_computers_list, 0 },
	{ "POST", "/v1/computers", api_computers_create, 0 },
	{ "GET", "/v1/computers/*", api_computers_show, 0 },
	{ "DELETE", "/v1/computers/*", api_computers_delete, 0 },
	{ "POST", "/v1/computers/*/stop", api_computers_stop, 0 },
	{ "POST", "/v1/computers/*/start", api_computers_start, 0 },
	{ "POST", "/v1/computers/*/checkpoint", api_homes_checkpoint, 0 },
	{ "POST", "/v1/computers/*/restore", api_homes_restore, 0 },
	{ "GET", "/v1/computers/*/homes", api_homes_list, 0 },
	{ "GET", "/v1/computers/*/activity", api_computers_activity, 0 },
	{ "GET", "/v1/computers/*/runs", api_runs_list, 0 },
	{ "POST", "/v1/computers/*/runs/*/end", api_runs_end, 0 },
	{ "POST", "/v1/computers/*/control", api_control_take, 0 },
	{ "DELETE", "/v1/computers/*/control/*", api_control_release, 0 },
	{ "PUT", "/v1/computers/*/files", api_files_put, 0 },
	{ "GET", "/v1/computers/*/files", api_files_get, 0 },
	{ "POST", "/v1/leases", api_leases_acquire, 0 },
	{ "POST", "/v1/leases/*/heartbeat", api_leases_heartbeat, 0 },
	{ "DELETE", "/v1/leases/*", api_leases_delete, 0 },
};

/*
 * Does the path's n segments match pattern?  The segments "*" matched go
 * to arg, in order.
 */
static int
api_match(const char *pattern, char **seg, size_t n, const char **arg)
{
	const char	*p = pattern, *e;
	size_t		 i, len, na = 0;

	for (i = 0; i < n; i++) {
		if (*p != '/')
			return 0;	/* the pattern ended first */
		p++;
		if ((e = strchr(p, '/')) == NULL)
			e = p + strlen(p);
		len = (size_t)(e - p);
		if (len == 1 && *p == '*') {
			if (na == API_ARGS_MAX)
				return 0;
			arg[na++] = seg[i];
		} else if (strlen(seg[i]) != len || strncmp(seg[i], p,
		    len) != 0)
			return 0;
		p = e;
	}
	return *p == '\0';
}

/* The route of method and path, or NULL; arg gets what "*"s matched. */
static const struct api_route *
api_route_find(const char *method, char **seg, size_t n, const char **arg)
{
	size_t	 i;

	if (n > API_SEGS_MAX)
		return NULL;	/* api_split() filled only API_SEGS_MAX */
	for (i = 0; i < sizeof api_routes / sizeof api_routes[0]; i++)
		if (strcmp(api_routes[i].method, method) == 0 &&
		    api_match(api_routes[i].pattern, seg, n, arg))
			return &api_routes[i];
	return NULL;
}

/*
 * Opening the store costs a file open, WAL setup and a schema check: keep a
 * few open handles for the request tasks to reuse instead of paying that
 * on every call.  A task owns its handle until it replies, so tasks that
 * wait (on guestd, or in SQLite's busy handler) never share one.
 */
#define API_STORE_POOL	8

static struct store	*api_pool[API_STORE_POOL];
static int		 api_npool;

int
api_store_get(struct api *a, struct store **s, struct errmsg *err)
{
	if (api_npool > 0) {
		*s = api_pool[--api_npool];
		return 0;
	}
	return store_open(s, a->store_url, err);
}

void
api_store_put(struct store *s)
{
	if (s == NULL)
		return;
	/* A request that failed inside a transaction: never reuse. */
	if (store_in_tx(s)) {
		store_rollback(s);
		store_free(s);
		return;
	}
	if (api_npool < API_STORE_POOL) {
		api_pool[api_npool++] = s;
		s = NULL;
	}
	store_free(s);
}


void
api_handle(struct api *a, const struct api_req *q, struct api_resp *out)
{
	const struct api_route	*rt;
	struct api_ctx		 x;
	const char		*arg[API_ARGS_MAX];
	char			*path, *seg[API_SEGS_MAX + 1];
	size_t			 n;
	int			 r;

	memset(&x, 0, sizeof x);
	memset(out, 0, sizeof *out);
	memset(arg, 0, sizeof arg);
	x.a = a;
	x.q = q;
	x.out = out;
	path = xstrdup(q->path);
	n = api_split(path, seg, API_SEGS_MAX);
	if ((r = api_store_get(a, &x.s, &x.err)) != 0) {
		api_error(&x, r == ERR_STORE_UNAVAILABLE ? r : ERR_STORE,
		    x.err.msg);
		goto out;
	}
	/* An unknown path asks for the token too: 401 before 404. */
	rt = api_route_find(q->method, seg, n, arg);
	if ((rt == NULL || !(rt->flags & API_OPEN)) && !api_authorized(&x)) {
		api_error(&x, ERR_UNAUTHORIZED, NULL);
		goto out;
	}
	if (rt == NULL) {
		api_error(&x, ERR_NOT_FOUND, "No such API path.");
		goto out;
	}
	/*
	 * A call's lease whose release met a store fault: released before
	 * this request looks at leases, so the store's return frees its bot
	 * for the very next call rather than at the retry task's next turn.
	 */
	if (api_leases_owed() > 0 && !(rt->flags & API_OPEN))
		api_leases_retry(x.s);
	rt->handler(&x, arg);
out:
	if (out->body == NULL && !out->stream)
		api_error(&x, ERR_INTERNAL, NULL);
	json_decref(x.body);
	api_store_put(x.s);
	free(path);
}

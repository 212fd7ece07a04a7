/*
 * The controller's HTTP/JSON API (api.h).  Each request takes its own
 * store connection (requests run as tasks that may wait; SQLite
 * connections are not shared between them), checks the bearer token in constant time,
 * routes by method and path, and answers JSON.  Bad input is refused
 * before anything changes; every refusal carries a stable code.
 */
#include "autoconf.h"

#include <sys/file.h>
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "err.h"
#include "json.h"
#include "log.h"
#include "redact.h"
#include "token.h"
#include "activity.h"
#include "api.h"
#include "api-int.h"
#include "lease.h"
#include "run.h"
#include "store.h"
#include "task.h"
#include "tool.h"
#include "xmalloc.h"

#define API_CALL_TTL_MS	(10 * 60 * 1000)

static int	api_grant_remember(struct api_ctx *, const struct store_lease *,
		    json_t *);

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
	case ERR_NOT_FOUND: case ERR_UNKNOWN_TOOL:
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
	case ERR_COMPUTERS_DISABLED:
		return 503;
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
	api_reply(x, api_status(code), json_pack("{s:{s:s, s:s}}", "error",
	    "code", err_name(code), "message", red));
}

/* Names: computers and bots are [A-Za-z0-9._-], 1..63, no leading dot. */
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

static int
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

/* A required name field of the body. */
static int
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

static int64_t
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

static json_t *
api_computer_json(const struct store_computer *c)
{
	return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I}", "id", c->id,
	    "provider", c->provider, "state", c->state, "created_ms",
	    (json_int_t)c->created_ms, "updated_ms", (json_int_t)c->updated_ms,
	    "last_used_ms", (json_int_t)c->last_used_ms);
}

static json_t *
api_lease_json(const struct store_lease *l)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:I}", "id", l->id,
	    "computer", l->computer, "bot", l->bot, "kind", l->kind, "holder",
	    l->holder, "fence", (json_int_t)l->fence, "expires_ms",
	    (json_int_t)l->expires_ms);
}

/* ---- computers -------------------------------------------------------- */

/*
 * One start of computer id at a time, across every rakazoctl process on
 * this host: an flock on DATA_DIR/locks/start-<id>.  Two opens conflict
 * even within one process, so this also orders our own tasks.  flock has
 * no waitable descriptor, so a task that finds it taken retries on a
 * short timer, and only while a start is under way.
 */
static int
api_start_lock(struct api_ctx *x, const char *id, int *fdp)
{
	char	 path[PATH_MAX];
	int64_t	 waited = 0;
	int	 fd;

	*fdp = -1;
	if (x->a->lock_dir == NULL)
		return 0;
	snprintf(path, sizeof path, "%s/locks", x->a->lock_dir);
	if (mkdir(path, 0700) == -1 && errno != EEXIST)
		return err_from_errno(errno);
	if ((size_t)snprintf(path, sizeof path, "%s/locks/start-%s",
	    x->a->lock_dir, id) >= sizeof path)
		return ERR_NAME_TOO_LONG;
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1)
		return err_from_errno(errno);
	while (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if ((errno != EWOULDBLOCK && errno != EINTR) ||
		    waited >= API_START_LOCK_MS) {
			close(fd);
			return ERR_BUSY;
		}
		if (task_sleep(API_START_LOCK_POLL_MS) != 0) {
			close(fd);
			return ERR_BUSY;
		}
		waited += API_START_LOCK_POLL_MS;
	}
	*fdp = fd;
	return 0;
}

/* Make c run (C-6: on the first tool call), once across processes. */
int
api_ensure_running(struct api_ctx *x, struct store_computer *c)
{
	int	 r = 0, lk = -1;

	if ((r = api_start_lock(x, c->id, &lk)) != 0) {
		snprintf(x->err, sizeof x->err, "another start of the "
		    "computer did not finish");
		return r;
	}
	/* Re-read: another request may have started it meanwhile. */
	if ((r = store_computer_get(x->s, c->id, c)) != 0)
		goto out;
	if (provider_alive(x->a->prov, c) == 1)
		goto out;
	if (strcmp(c->state, "running") == 0)
		(void)run_ended(x->s, c->id, RUN_GONE);
	if ((r = provider_start(x->a->prov, c, x->err, sizeof x->err)) != 0)
		goto out;
	snprintf(c->state, sizeof c->state, "running");
	c->updated_ms = c->last_used_ms = store_now_ms();
	if ((r = store_computer_update(x->s, c)) != 0 ||
	    (r = run_started(x->s, c->id)) != 0)
		goto out;
	log_info("computer.started", "computer=%s provider=%s", c->id,
	    c->provider);
out:
	if (lk >= 0)
		close(lk);	/* releases the flock */
	return r;
}

int
api_computer_find(struct api_ctx *x, const char *id,
    struct store_computer *c)
{
	int	 r;

	if (!api_name_ok(id)) {
		api_error(x, ERR_NOT_FOUND, "No such computer.");
		return -1;
	}
	if ((r = store_computer_get(x->s, id, c)) != 0) {
		api_error(x, r, r == ERR_NOT_FOUND ? "No such computer." :
		    NULL);
		return -1;
	}
	return 0;
}

static void
api_computer_create(struct api_ctx *x)
{
	struct store_computer	 c;
	const char		*id;
	char			 gen[TOKEN_STRLEN + 1];
	int			 r, start = 0;

	if (api_parse_body(x) != 0)
		return;
	if (json_object_get(x->body, "id") == NULL) {
		if (token_new(gen, sizeof gen) != 0) {
			api_error(x, ERR_INTERNAL, NULL);
			return;
		}
		/* Names start with a letter or digit. */
		gen[0] = 'c';
		gen[12] = '\0';
		for (r = 0; gen[r] != '\0'; r++)
			if (gen[r] == '-')
				gen[r] = 'x';
		id = gen;
	} else if (api_body_name(x, "id", &id) != 0)
		return;
	if (json_is_true(json_object_get(x->body, "start")))
		start = 1;
	if (strcmp(provider_name(x->a->prov), "none") == 0) {
		api_error(x, ERR_COMPUTERS_DISABLED, NULL);
		return;
	}
	memset(&c, 0, sizeof c);
	snprintf(c.id, sizeof c.id, "%s", id);
	snprintf(c.provider, sizeof c.provider, "%s",
	    provider_name(x->a->prov));
	snprintf(c.state, sizeof c.state, "stopped");
	snprintf(c.ref, sizeof c.ref, "{}");
	c.created_ms = c.updated_ms = c.last_used_ms = store_now_ms();
	if ((r = provider_admit(x->a->prov, x->s, c.id, x->err,
	    sizeof x->err)) != 0) {
		api_error(x, r, x->err);
		return;
	}
	if ((r = store_computer_create(x->s, &c)) != 0) {
		api_error(x, r, r == ERR_EXISTS ? "A computer with this id "
		    "exists." : NULL);
		return;
	}
	if (start && (r = api_ensure_running(x, &c)) != 0) {
		api_error(x, r, x->err);
		return;
	}
	api_reply(x, 201, api_computer_json(&c));
}

static void
api_computer_list(struct api_ctx *x)
{
	struct store_computer	*cs;
	size_t			 n, i;
	json_t			*arr;
	int			 r;

	if ((r = store_computer_list(x->s, &cs, &n)) != 0) {
		api_error(x, r, NULL);
		return;
	}
	arr = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(arr, api_computer_json(&cs[i]));
	free(cs);
	api_reply(x, 200, json_pack("{s:o}", "computers", arr));
}

static void
api_computer_show(struct api_ctx *x, const char *id)
{
	struct store_computer	 c;
	struct store_run	 u;
	json_t			*j;

	if (api_computer_find(x, id, &c) != 0)
		return;
	j = api_computer_json(&c);
	if (store_run_current(x->s, id, &u) == 0)
		json_object_set_new(j, "run", json_pack("{s:I, s:I}", "id",
		    (json_int_t)u.id, "started_ms", (json_int_t)u.started_ms));
	api_reply(x, 200, j);
}

/* Stop (or destroy) c, closing its run with reason. */
static int
api_computer_halt(struct api_ctx *x, struct store_computer *c,
    const char *reason, int destroy)
{
	json_t	*res = NULL;
	char	 e[API_ERRLEN];
	int	 r;

	/*
	 * Browsers close through DevTools first so their profiles (cookies,
	 * sessions) are on disk whole before guestd stops; a failure here
	 * only costs that, so the stop goes on.
	 */
	if (!destroy && provider_alive(x->a->prov, c) == 1) {
		r = provider_call(x->a->prov, c, "browser.quiesce",
		    json_object(), NULL, 0, &res, NULL, NULL, e, sizeof e);
		json_decref(res);
		if (r != 0 && r != ERR_UNKNOWN_OP)
			log_warn("computer.quiesce_failed", "computer=%s code=%s",
			    c->id, err_name(r));
	}
	r = destroy ? provider_destroy(x->a->prov, c) :
	    provider_stop(x->a->prov, c);
	if (r != 0)
		return r;
	if ((r = run_ended(x->s, c->id, reason)) != 0)
		return r;
	if (destroy)
		return store_computer_delete(x->s, c->id);
	snprintf(c->state, sizeof c->state, "stopped");
	c->updated_ms = store_now_ms();
	if ((r = store_computer_update(x->s, c)) != 0)
		return r;
	return store_lease_delete_computer(x->s, c->id);
}

static void
api_computer_stop_delete(struct api_ctx *x, const char *id, int destroy)
{
	struct store_computer	 c;
	int64_t			 live;
	int			 r;

	if (api_computer_find(x, id, &c) != 0)
		return;
	if ((r = store_lease_count_live(x->s, id, store_now_ms(),
	    &live)) != 0) {
		api_error(x, r, NULL);
		return;
	}
	if (live > 0 && !json_is_true(json_object_get(x->body, "force"))) {
		api_error(x, ERR_LEASE_HELD, "A bot or user holds a lease on "
		    "this computer; release it or pass force.");
		return;
	}
	if ((r = api_computer_halt(x, &c, destroy ? RUN_DELETED : RUN_STOPPED,
	    destroy)) != 0) {
		api_error(x, r, NULL);
		return;
	}
	if (destroy)
		api_reply(x, 200, json_pack("{s:s, s:b}", "id", id, "deleted",
		    1));
	else
		api_reply(x, 200, api_computer_json(&c));
}

static void
api_computer_start(struct api_ctx *x, const char *id)
{
	struct store_computer	 c;
	int			 r;

	if (api_computer_find(x, id, &c) != 0)
		return;
	if ((r = api_ensure_running(x, &c)) != 0) {
		api_error(x, r, x->err);
		return;
	}
	api_reply(x, 200, api_computer_json(&c));
}

static void
api_activity(struct api_ctx *x, const char *id)
{
	struct store_computer	 c;
	struct store_event	*ev;
	size_t			 n, i;
	int64_t			 after, limit, wait, deadline;
	uint64_t		 seq;
	json_t			*arr;
	int			 r, waited = 0;

	if (api_computer_find(x, id, &c) != 0)
		return;
	after = api_query_int(x->q->query, "after", 0);
	limit = api_query_int(x->q->query, "limit", 100);
	if (limit < 1 || limit > 1000)
		limit = 100;
	wait = api_query_int(x->q->query, "wait_ms", 0);
	if (wait < 0)
		wait = 0;
	if (wait > API_WAIT_MAX_MS)
		wait = API_WAIT_MAX_MS;
	deadline = store_now_ms() + wait;
	for (;;) {
		/* Read the counter first: an insert after it wakes us. */
		seq = activity_seq();
		if ((r = store_event_list(x->s, id, after, (size_t)limit, &ev,
		    &n)) != 0) {
			api_error(x, r, NULL);
			return;
		}
		/* Nobody to answer: free the request's slot now. */
		if (n > 0 || store_now_ms() >= deadline ||
		    (x->q->peer_gone != NULL && *x->q->peer_gone))
			break;
		if (!waited)
			log_debug("activity.wait", "computer=%s after=%lld "
			    "wait_ms=%lld", id, (long long)after,
			    (long long)wait);
		waited = 1;
		/* Outside serve's loop (no task): answer the empty list. */
		if (activity_wait(seq, deadline) != 0)
			break;
		free(ev);
	}
	arr = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(arr, activity_json(&ev[i]));
	api_reply(x, 200, json_pack("{s:o, s:I}", "events", arr, "next",
	    (json_int_t)(n > 0 ? ev[n - 1].id : after)));
	free(ev);
}

static void
api_runs(struct api_ctx *x, const char *id)
{
	struct store_computer	 c;
	struct store_run	*u;
	size_t			 n, i;
	json_t			*arr;
	int			 r;

	if (api_computer_find(x, id, &c) != 0)
		return;
	if ((r = store_run_list(x->s, id, &u, &n)) != 0) {
		api_error(x, r, NULL);
		return;
	}
	arr = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(arr, json_pack("{s:I, s:I, s:I, s:s?}",
		    "id", (json_int_t)u[i].id, "started_ms",
		    (json_int_t)u[i].started_ms, "ended_ms",
		    (json_int_t)u[i].ended_ms, "endReason",
		    u[i].ended_ms != 0 ? u[i].end_reason : NULL));
	free(u);
	api_reply(x, 200, json_pack("{s:o}", "runs", arr));
}

/* ---- tools ------------------------------------------------------------ */

struct api_tool_state {
	struct api_ctx			*x;
	const struct tool_entry		*te;
	const char			*lease;
	struct store_lease		 l;
	int				 ephemeral;
};

/*
 * The execution lease of a mutating call: the caller's, checked, or
 * without one a lease for this call only (a call without a lease drives
 * only a free bot).  The caller releases an ephemeral one when done.
 */
int
api_lease_take(struct api_ctx *x, const char *computer, const char *bot,
    const char *lease, struct store_lease *l, int *ephemeral)
{
	char	 holder[STORE_ID_MAX];
	int	 r;

	*ephemeral = 0;
	if (lease != NULL)
		return lease_check(x->s, lease, computer, bot, l);
	snprintf(holder, sizeof holder, "call-");
	if ((r = token_new(holder + 5, sizeof holder - 5)) == 0)
		r = lease_acquire(x->s, computer, bot, holder, API_CALL_TTL_MS,
		    0, l);
	*ephemeral = r == 0;
	return r;
}

/* tool_ctx.prepare: the lease, then a running computer (C-6). */
static int
api_tool_prepare(struct tool_ctx *t, char *err, size_t errlen)
{
	struct api_tool_state	*st = t->prepare_arg;
	struct api_ctx		*x = st->x;
	int			 r;

	if (st->te->flags & TOOL_LEASE) {
		r = api_lease_take(x, t->computer->id, t->bot, st->lease,
		    &st->l, &st->ephemeral);
		if (r != 0) {
			snprintf(err, errlen, "%s", err_message(r));
			return r;
		}
		t->fence = st->l.fence;
		t->holder = st->l.holder;
		if (!st->ephemeral)
			t->lease_expires_ms = st->l.expires_ms;
	}
	if ((r = api_ensure_running(x, t->computer)) != 0) {
		snprintf(err, errlen, "%s", x->err);
		return r;
	}
	(void)store_computer_touch(x->s, t->computer->id, store_now_ms());
	return 0;
}

/* A control capability handed out by screen_url or terminal_url. */
static int
api_control_grant(const struct tool_entry *te, json_t *res)
{
	const char	*pol;

	if (te != &tool_screen_url_entry && te != &tool_terminal_url_entry)
		return 0;
	pol = json_string_value(json_object_get(res, "policy"));
	return pol != NULL && strcmp(pol, "control") == 0;
}

static void
api_tool(struct api_ctx *x, const char *name)
{
	struct api_tool_state	 st;
	struct store_computer	 c;
	struct tool_ctx		 t;
	const char		*cid, *bot;
	char			 e[JSONX_ERRLEN];
	json_t			*res = NULL;
	int			 r;

	memset(&st, 0, sizeof st);
	st.x = x;
	if ((st.te = tool_find(name)) == NULL) {
		api_error(x, ERR_UNKNOWN_TOOL, NULL);
		return;
	}
	if (api_parse_body(x) != 0 || api_body_name(x, "computer", &cid) != 0 ||
	    api_body_name(x, "bot", &bot) != 0)
		return;
	if ((r = jsonx_str(x->body, "lease", STORE_ID_MAX - 1, &st.lease,
	    e)) != 0 && r != ERR_NOT_FOUND) {
		api_error(x, r, e);
		return;
	}
	if (api_computer_find(x, cid, &c) != 0)
		return;
	memset(&t, 0, sizeof t);
	t.store = x->s;
	t.prov = x->a->prov;
	t.computer = &c;
	t.bot = bot;
	t.args = x->body;
	t.prepare = api_tool_prepare;
	t.prepare_arg = &st;
	x->err[0] = '\0';
	r = st.te->fn(&t, &res, x->err, sizeof x->err);
	/* A run's control screen or terminal ends with its lease (G-4). */
	if (r == 0 && st.lease != NULL && api_control_grant(st.te, res) &&
	    (r = api_grant_remember(x, &st.l, res)) != 0) {
		json_decref(res);
		res = NULL;
		snprintf(x->err, sizeof x->err, "The control capability could "
		    "not be recorded.");
	}
	/* A call refused before reaching the computer did nothing. */
	if ((st.te->flags & TOOL_RECORD) && t.summary[0] != '\0' &&
	    (t.prepared || r == 0))
		(void)activity_command(x->s, cid, bot, st.te->name, r == 0,
		    "%s", t.summary);
	if (r != 0)
		api_error(x, r, x->err);
	else
		api_reply(x, 200, res != NULL ? res : json_object());
	if (st.ephemeral)
		(void)lease_release(x->s, st.l.id);
}

/* ---- leases and control --------------------------------------------- */

static int
api_body_ttl(struct api_ctx *x, int64_t *ttl)
{
	char	 e[JSONX_ERRLEN];
	int	 r;

	*ttl = LEASE_TTL_DEFAULT_MS;
	r = jsonx_int(x->body, "ttl_ms", 1000, LEASE_TTL_MAX_MS, ttl, e);
	if (r != 0 && r != ERR_NOT_FOUND) {
		api_error(x, r, e);
		return -1;
	}
	return 0;
}

static void
api_lease_acquire(struct api_ctx *x)
{
	struct store_computer	 c;
	struct store_lease	 l;
	const char		*cid, *bot, *holder;
	int64_t			 ttl;
	int			 r;

	if (api_parse_body(x) != 0 || api_body_name(x, "computer", &cid) != 0 ||
	    api_body_name(x, "bot", &bot) != 0 ||
	    api_body_name(x, "holder", &holder) != 0 ||
	    api_body_ttl(x, &ttl) != 0 || api_computer_find(x, cid, &c) != 0)
		return;
	if ((r = lease_acquire(x->s, cid, bot, holder, ttl, LEASE_F_RUN,
	    &l)) != 0) {
		api_error(x, r, NULL);
		return;
	}
	api_reply(x, 201, api_lease_json(&l));
}

static int	api_grant_renew(struct api_ctx *, const struct store_lease *);

static void
api_lease_heartbeat(struct api_ctx *x, const char *id)
{
	struct store_lease	 l;
	json_t			*j;
	int64_t			 ttl;
	int			 r, n;

	if (api_parse_body(x) != 0 || api_body_ttl(x, &ttl) != 0)
		return;
	if ((r = lease_heartbeat(x->s, id, ttl, &l)) != 0) {
		api_error(x, r, NULL);
		return;
	}
	n = api_grant_renew(x, &l);
	j = api_lease_json(&l);
	json_object_set_new(j, "renewed", json_integer(n));
	api_reply(x, 200, j);
}

/*
 * Revoke one stored capability at guestd and forget it.  A computer that is
 * gone or not running took its capabilities with it.  The fence is the
 * bot's latest: the lease that granted it may have been replaced.
 */
static int
api_cap_revoke(struct api *a, struct store *s, const struct store_cap *cap,
    const char *why)
{
	struct store_computer	 c;
	struct store_bot	 b;
	json_t			*res = NULL;
	char			 e[256];
	int			 r;

	r = store_computer_get(s, cap->computer, &c);
	if (r == 0 && provider_alive(a->prov, &c) == 1) {
		if ((r = store_bot_ensure(s, cap->computer, cap->bot, &b)) != 0)
			return r;
		/* By id; rows from before ids were kept hold the token. */
		r = provider_call(a->prov, &c, "capability.revoke",
		    json_pack("{s:s, s:s, s:I}", cap->cap_id[0] != '\0' ?
		    "id" : "token", cap->cap_id[0] != '\0' ? cap->cap_id :
		    cap->token, "bot", cap->bot, "fence", (json_int_t)b.fence),
		    NULL, 0, &res, NULL, NULL, e, sizeof e);
		json_decref(res);
		/* NOT_FOUND: it expired or its display closed already. */
		if (r != 0 && r != ERR_NOT_FOUND) {
			log_warn("control.revoke_failed", "computer=%s bot=%s "
			    "capability=%s code=%s", cap->computer, cap->bot,
			    cap->cap_id, err_name(r));
			return r;
		}
	} else if (r != 0 && r != ERR_NOT_FOUND)
		return r;
	log_info("control.revoked", "computer=%s bot=%s capability=%s "
	    "reason=%s", cap->computer, cap->bot, cap->cap_id, why);
	return store_cap_delete(s, cap->id);
}

static void
api_caps_free(struct store_cap *caps, size_t n)
{
	if (caps != NULL)
		token_wipe(caps, n * sizeof *caps);
	free(caps);
}

/* Revoke every capability granted under lease id (G-20: at once). */
static int
api_grant_revoke(struct api_ctx *x, const char *lease, const char *why,
    int *count)
{
	struct store_cap	*caps;
	size_t			 n, i;
	int			 r, r2;

	*count = 0;
	if ((r = store_cap_list_lease(x->s, lease, &caps, &n)) != 0)
		return r;
	for (i = 0; i < n; i++) {
		if ((r2 = api_cap_revoke(x->a, x->s, &caps[i], why)) == 0)
			(*count)++;
		else
			r = r2;	/* the row stays; the sweep retries */
	}
	api_caps_free(caps, n);
	return r;
}

/*
 * Move the capabilities granted under lease l to its new expiry at guestd.
 * They were granted with the lease's ttl and guestd ends them on its own
 * timer, so a controller that stops heartbeating, or is killed, leaves
 * no capability behind its lease.  One that cannot be renewed keeps its
 * old deadline: it ends early, never late.  Returns how many were renewed.
 */
static int
api_grant_renew(struct api_ctx *x, const struct store_lease *l)
{
	struct store_computer	 c;
	struct store_cap	*caps;
	json_t			*res;
	char			 e[256];
	size_t			 n, i;
	int64_t			 ttl;
	int			 r, renewed = 0;

	if (store_cap_list_lease(x->s, l->id, &caps, &n) != 0)
		return 0;
	if (n == 0 || store_computer_get(x->s, l->computer, &c) != 0 ||
	    provider_alive(x->a->prov, &c) != 1)
		goto out;
	ttl = (l->expires_ms - store_now_ms() + 999) / 1000;
	if (ttl < 1)
		ttl = 1;
	for (i = 0; i < n; i++) {
		if (caps[i].cap_id[0] == '\0')
			continue;	/* a row from before ids were kept */
		res = NULL;
		r = provider_call(x->a->prov, &c, "capability.renew",
		    json_pack("{s:s, s:I, s:s, s:I}", "id", caps[i].cap_id,
		    "ttl", (json_int_t)ttl, "bot", caps[i].bot, "fence",
		    (json_int_t)l->fence), NULL, 0, &res, NULL, NULL, e,
		    sizeof e);
		json_decref(res);
		if (r == 0)
			renewed++;
		else
			log_warn("control.renew_failed", "computer=%s bot=%s "
			    "capability=%s code=%s", caps[i].computer,
			    caps[i].bot, caps[i].cap_id, err_name(r));
	}
out:
	api_caps_free(caps, n);
	return renewed;
}

/*
 * Persist a capability granted under lease l (res is guestd's grant reply)
 * before anyone sees its token: one that cannot be stored could not be
 * revoked after a restart, so it is revoked now and the call fails.  Only
 * its public id is kept (guestd revokes by id); the token goes to the
 * caller and nowhere else.
 */
static int
api_grant_remember(struct api_ctx *x, const struct store_lease *l,
    json_t *res)
{
	struct store_cap	 cap;
	const char		*tok, *id;
	int			 r;

	tok = json_string_value(json_object_get(res, "token"));
	id = json_string_value(json_object_get(res, "id"));
	if (tok == NULL || id == NULL || *id == '\0' ||
	    strlen(id) >= sizeof cap.cap_id)
		return ERR_PROTOCOL;
	memset(&cap, 0, sizeof cap);
	snprintf(cap.lease, sizeof cap.lease, "%s", l->id);
	snprintf(cap.computer, sizeof cap.computer, "%s", l->computer);
	snprintf(cap.bot, sizeof cap.bot, "%s", l->bot);
	snprintf(cap.cap_id, sizeof cap.cap_id, "%s", id);
	cap.created_ms = store_now_ms();
	if ((r = store_cap_add(x->s, &cap)) != 0) {
		cap.id = -1;	/* no row: deleting it is a no-op */
		(void)api_cap_revoke(x->a, x->s, &cap, "unrecorded");
	} else if (x->a->cap_deadline != NULL)
		x->a->cap_deadline(l->expires_ms);
	return r;
}

int	screen_url_grant(struct tool_ctx *t, const char *policy,
	    int64_t ttl, json_t **result, char *err, size_t errlen);

static void
api_control_take(struct api_ctx *x, const char *id)
{
	struct store_computer	 c;
	struct store_lease	 l;
	struct tool_ctx		 t;
	const char		*bot, *holder = "user", *tok;
	json_t			*j, *screen = NULL;
	int64_t			 ttl;
	int			 r;

	if (api_parse_body(x) != 0 || api_body_name(x, "bot", &bot) != 0 ||
	    api_body_ttl(x, &ttl) != 0 || api_computer_find(x, id, &c) != 0)
		return;
	if (json_object_get(x->body, "holder") != NULL &&
	    api_body_name(x, "holder", &holder) != 0)
		return;
	if ((r = lease_acquire_control(x->s, id, bot, holder, ttl,
	    &l)) != 0) {
		api_error(x, r, NULL);
		return;
	}
	if ((r = api_ensure_running(x, &c)) != 0) {
		(void)lease_release(x->s, l.id);
		api_error(x, r, x->err);
		return;
	}
	memset(&t, 0, sizeof t);
	t.store = x->s;
	t.prov = x->a->prov;
	t.computer = &c;
	t.bot = bot;
	t.fence = l.fence;
	t.lease_expires_ms = l.expires_ms;
	j = api_lease_json(&l);
	if ((r = screen_url_grant(&t, "control", 0, &screen, x->err,
	    sizeof x->err)) != 0) {
		/* Without a screen there is no control to hand over. */
		(void)lease_release(x->s, l.id);
		json_decref(j);
		api_error(x, r, x->err);
		return;
	}
	if ((r = api_grant_remember(x, &l, screen)) != 0) {
		(void)lease_release(x->s, l.id);
		json_decref(screen);
		json_decref(j);
		api_error(x, r, "The control capability could not be recorded.");
		return;
	}
	if ((tok = json_string_value(json_object_get(screen, "token"))) !=
	    NULL)
		json_object_set_new(j, "terminal_path", json_sprintf("/term/%s",
		    tok));
	json_object_set_new(j, "screen", screen);
	api_reply(x, 201, j);
}

static void
api_lease_release(struct api_ctx *x, const char *id, const char *computer)
{
	struct store_lease	 l;
	int			 r, n, pending;

	if ((r = store_lease_get(x->s, id, &l)) != 0 ||
	    (computer != NULL && strcmp(l.computer, computer) != 0)) {
		api_error(x, r == 0 || r == ERR_NOT_FOUND ? ERR_LEASE_EXPIRED :
		    r, NULL);
		return;
	}
	/* A capability guestd did not confirm stays stored: the expiry
	 * sweep retries it once the lease row is gone. */
	pending = api_grant_revoke(x, l.id, "released", &n) != 0;
	if ((r = lease_release(x->s, id)) != 0) {
		api_error(x, r, NULL);
		return;
	}
	if (pending && x->a->cap_deadline != NULL)
		x->a->cap_deadline(store_now_ms());
	api_reply(x, 200, json_pack("{s:s, s:b, s:i, s:b}", "id", id,
	    "released", 1, "revoked", n, "revoke_pending", pending));
}

/*
 * G-4: a bot run (named by its execution lease) ends.  Every outcome
 * revokes the run's control capabilities and ends its lease; a successful
 * run keeps the bot's screen, browser and views for the next run, a failed
 * or cancelled one tears the screen down.
 */
static void
api_run_end(struct api_ctx *x, const char *id, const char *lease)
{
	static const char *const keys[] = { "outcome", NULL };
	struct store_computer	 c;
	struct store_lease	 l;
	struct store_bot	 b;
	const char		*outcome;
	char			 e[JSONX_ERRLEN];
	json_t			*res = NULL;
	int			 r, n = 0, closed = 0, keep;

	if (api_parse_body(x) != 0 || api_computer_find(x, id, &c) != 0)
		return;
	if ((r = jsonx_only_keys(x->body, keys, e)) != 0 ||
	    (r = jsonx_str(x->body, "outcome", 16, &outcome, e)) != 0) {
		if (r == ERR_NOT_FOUND)
			snprintf(e, sizeof e, "\"outcome\" is required");
		api_error(x, ERR_BAD_REQUEST, e);
		return;
	}
	keep = strcmp(outcome, "succeeded") == 0;
	if (!keep && strcmp(outcome, "failed") != 0 &&
	    strcmp(outcome, "cancelled") != 0) {
		api_error(x, ERR_BAD_REQUEST, "\"outcome\" is succeeded, "
		    "failed or cancelled");
		return;
	}
	/* A replaced lease row means another driver has the bot now. */
	if (!api_name_ok(lease) || store_lease_get(x->s, lease, &l) != 0 ||
	    strcmp(l.computer, id) != 0 || strcmp(l.kind, LEASE_EXEC) != 0) {
		api_error(x, ERR_LEASE_EXPIRED, "No such run on this computer.");
		return;
	}
	if ((r = api_grant_revoke(x, l.id, outcome, &n)) != 0) {
		api_error(x, r, "A capability of the run could not be revoked.");
		return;
	}
	if (!keep && provider_alive(x->a->prov, &c) == 1) {
		if ((r = store_bot_ensure(x->s, id, l.bot, &b)) != 0)
			goto fail;
		/*
		 * The browser first, through DevTools, so its profile is
		 * written whole; closing the display would kill it.
		 */
		r = provider_call(x->a->prov, &c, "browser.close",
		    json_pack("{s:s, s:I}", "bot", l.bot, "fence",
		    (json_int_t)b.fence), NULL, 0, &res, NULL, NULL, x->err,
		    sizeof x->err);
		json_decref(res);
		res = NULL;
		if (r != 0)
			log_warn("run_end.browser_close", "computer=%s bot=%s "
			    "code=%s", id, l.bot, err_name(r));
		r = provider_call(x->a->prov, &c, "display.close",
		    json_pack("{s:s, s:I}", "bot", l.bot, "fence",
		    (json_int_t)b.fence), NULL, 0, &res, NULL, NULL, x->err,
		    sizeof x->err);
		json_decref(res);
		/* The lease stays on failure: ending again retries. */
		if (r != 0 && r != ERR_NO_DISPLAY)
			goto fail;
		closed = r == 0;
	}
	if ((r = lease_release(x->s, l.id)) != 0)
		goto fail;
	(void)activity_command(x->s, id, l.bot, "run_end", 1, "run %s%s",
	    outcome, closed ? "; screen closed" : "");
	api_reply(x, 200, json_pack("{s:s, s:s, s:s, s:i, s:s}", "lease",
	    l.id, "bot", l.bot, "outcome", outcome, "revoked", n, "screen",
	    keep ? "kept" : "closed"));
	return;
fail:
	api_error(x, r, x->err);
}

/* ---- routing ---------------------------------------------------------- */

static void
api_health(struct api_ctx *x)
{
	const char	*iso = provider_isolation(x->a->prov);
	json_t		*j;
	int64_t		 v = 0;
	int		 r;

	r = store_schema_version(x->s, &v);
	j = json_pack("{s:s, s:s, s:{s:s, s:s, s:I}}", "sandbox",
	    provider_name(x->a->prov), "state", r == 0 ? "ok" : "degraded",
	    "store", "backend", store_backend(x->s), "state",
	    r == 0 ? "ok" : "failed", "schema", (json_int_t)v);
	/* How computers are kept apart: "uid", or "shared-user". */
	if (j != NULL && iso != NULL)
		json_object_set_new(j, "isolation", json_string(iso));
	api_reply(x, r == 0 ? 200 : 503, j);
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

static int
api_is(const struct api_req *q, const char *m)
{
	return strcmp(q->method, m) == 0;
}

static void
api_route(struct api_ctx *x, char **seg, size_t n)
{
	const struct api_req	*q = x->q;

	if (n == 2 && strcmp(seg[1], "tools") == 0 && api_is(q, "GET"))
		{ api_reply(x, 200, tool_list_json()); return; }
	if (n == 3 && strcmp(seg[1], "tools") == 0 && api_is(q, "POST"))
		{ api_tool(x, seg[2]); return; }
	if (n >= 2 && strcmp(seg[1], "computers") == 0) {
		if (n == 2 && api_is(q, "GET"))
			{ api_computer_list(x); return; }
		if (n == 2 && api_is(q, "POST"))
			{ api_computer_create(x); return; }
		if (n == 3 && api_is(q, "GET"))
			{ api_computer_show(x, seg[2]); return; }
		if (n == 3 && api_is(q, "DELETE")) {
			if (api_parse_body(x) != 0)
				return;
			{ api_computer_stop_delete(x, seg[2], 1); return; }
		}
		if (n == 4 && api_is(q, "POST") && strcmp(seg[3], "stop") == 0) {
			if (api_parse_body(x) != 0)
				return;
			{ api_computer_stop_delete(x, seg[2], 0); return; }
		}
		if (n == 4 && api_is(q, "POST") && strcmp(seg[3], "start") == 0)
			{ api_computer_start(x, seg[2]); return; }
		if (n == 4 && api_is(q, "GET") &&
		    strcmp(seg[3], "activity") == 0)
			{ api_activity(x, seg[2]); return; }
		if (n == 4 && api_is(q, "GET") && strcmp(seg[3], "runs") == 0)
			{ api_runs(x, seg[2]); return; }
		if (n == 4 && api_is(q, "POST") &&
		    strcmp(seg[3], "control") == 0)
			{ api_control_take(x, seg[2]); return; }
		if (n == 5 && api_is(q, "DELETE") &&
		    strcmp(seg[3], "control") == 0)
			{ api_lease_release(x, seg[4], seg[2]); return; }
		if (n == 6 && api_is(q, "POST") &&
		    strcmp(seg[3], "runs") == 0 && strcmp(seg[5], "end") == 0)
			{ api_run_end(x, seg[2], seg[4]); return; }
		if (n == 4 && api_is(q, "PUT") && strcmp(seg[3], "files") == 0)
			{ api_files_put(x, seg[2]); return; }
		if (n == 4 && api_is(q, "GET") && strcmp(seg[3], "files") == 0)
			{ api_files_get(x, seg[2]); return; }
	}
	if (n >= 2 && strcmp(seg[1], "leases") == 0) {
		if (n == 2 && api_is(q, "POST"))
			{ api_lease_acquire(x); return; }
		if (n == 4 && api_is(q, "POST") &&
		    strcmp(seg[3], "heartbeat") == 0)
			{ api_lease_heartbeat(x, seg[2]); return; }
		if (n == 3 && api_is(q, "DELETE"))
			{ api_lease_release(x, seg[2], NULL); return; }
	}
	api_error(x, ERR_NOT_FOUND, "No such API path.");
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

static int
api_store_get(struct api *a, struct store **s, char *err, size_t errlen)
{
	if (api_npool > 0) {
		*s = api_pool[--api_npool];
		return 0;
	}
	return store_open(s, a->store_url, err, errlen);
}

static void
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
	struct api_ctx	 x;
	char		*path, *seg[7];
	size_t		 n;
	int		 r;

	memset(&x, 0, sizeof x);
	memset(out, 0, sizeof *out);
	x.a = a;
	x.q = q;
	x.out = out;
	path = xstrdup(q->path);
	n = api_split(path, seg, 6);
	if ((r = api_store_get(a, &x.s, x.err, sizeof x.err)) != 0) {
		api_error(&x, ERR_STORE, x.err);
		goto out;
	}
	if (n == 2 && strcmp(seg[0], "internal") == 0 &&
	    strcmp(seg[1], "health") == 0 && api_is(q, "GET")) {
		api_health(&x);
		goto out;
	}
	if (!api_authorized(&x)) {
		api_error(&x, ERR_UNAUTHORIZED, NULL);
		goto out;
	}
	if (n < 2 || n > 6 || strcmp(seg[0], "v1") != 0) {
		api_error(&x, ERR_NOT_FOUND, "No such API path.");
		goto out;
	}
	api_route(&x, seg, n);
out:
	if (out->body == NULL && !out->stream)
		api_error(&x, ERR_INTERNAL, NULL);
	json_decref(x.body);
	api_store_put(x.s);
	free(path);
}

/* ---- periodic jobs ---------------------------------------------------- */

static int
api_alive_cb(const struct store_computer *c, void *arg)
{
	struct api	*a = arg;

	if (strcmp(c->provider, provider_name(a->prov)) != 0)
		return -1;	/* another provider's computer: leave it */
	return provider_alive(a->prov, c);
}

int
api_reconcile(struct api *a, int *changed)
{
	struct store	*s;
	char		 err[API_ERRLEN];
	int		 r;

	*changed = 0;
	if ((r = store_open(&s, a->store_url, err, sizeof err)) != 0)
		return r;
	r = run_reconcile(s, api_alive_cb, a, changed);
	store_free(s);
	return r;
}

int
api_idle_sweep(struct api *a, int *stopped)
{
	struct store_computer	*cs = NULL;
	struct api_ctx		 x;
	struct api_resp		 dummy;
	char			 err[API_ERRLEN];
	int64_t			 now, live;
	size_t			 n, i;
	int			 r;

	*stopped = 0;
	if (a->idle_ms <= 0)
		return 0;
	memset(&x, 0, sizeof x);
	memset(&dummy, 0, sizeof dummy);
	x.a = a;
	x.out = &dummy;
	if ((r = store_open(&x.s, a->store_url, err, sizeof err)) != 0)
		return r;
	if ((r = store_computer_list(x.s, &cs, &n)) != 0)
		goto out;
	now = store_now_ms();
	for (i = 0; i < n; i++) {
		if (strcmp(cs[i].state, "running") != 0 ||
		    strcmp(cs[i].provider, provider_name(a->prov)) != 0 ||
		    now - cs[i].last_used_ms < a->idle_ms)
			continue;
		/* Leases include a user's control of the screen. */
		if (store_lease_count_live(x.s, cs[i].id, now, &live) != 0 ||
		    live > 0)
			continue;
		if (api_computer_halt(&x, &cs[i], RUN_IDLE, 0) == 0) {
			(*stopped)++;
			log_info("computer.idle_stop", "computer=%s",
			    cs[i].id);
		}
	}
out:
	free(cs);
	store_free(x.s);
	return r;
}

int
api_cap_sweep(struct api *a, int *revoked, int64_t *next_ms)
{
	struct store_cap	*caps = NULL;
	struct store		*s;
	char			 err[API_ERRLEN];
	size_t			 n = 0, i;
	int			 r;

	*revoked = 0;
	*next_ms = 0;
	if ((r = store_open(&s, a->store_url, err, sizeof err)) != 0)
		return r;
	if ((r = store_cap_list_dead(s, store_now_ms(), &caps, &n)) != 0)
		goto out;
	for (i = 0; i < n; i++)
		if (api_cap_revoke(a, s, &caps[i], "expired") == 0)
			(*revoked)++;
	r = store_cap_next_expiry(s, next_ms);
	/* One that failed is retried at the next timer. */
	if (r == 0 && (size_t)*revoked < n)
		*next_ms = 0;
out:
	api_caps_free(caps, n);
	store_free(s);
	return r;
}

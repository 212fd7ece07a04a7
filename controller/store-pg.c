/* SPDX-License-Identifier: MIT */
/*
 * The PostgreSQL backend of the state store (doc/DESIGN.md C-2), for
 * controllers on several hosts sharing one database: "--store
 * postgres://..." or DATABASE_URL.  Same tables, same numbered migrations
 * (schema_migrations) and the same lease semantics as store-sqlite.c.
 *
 * Isolation.  SQLite's BEGIN IMMEDIATE takes the one write lock up front;
 * here store_begin() opens a READ COMMITTED transaction and takes one
 * transaction-scoped advisory lock (PG_LOCK_KEY) in the same round trip.
 * Every read-modify-write frame (lease grant, heartbeat, release, run
 * rows) therefore runs alone across every controller process on the
 * database, and each of
 * its statements reads a snapshot taken after the previous holder
 * committed: two processes can never both find a lease free and both
 * grant it.  SERIALIZABLE would give the same outcome but fail frames at
 * commit, and store.h's callers (lease.c, run-record.c) cannot replay a
 * frame; the lock never fails that way.  Its wait is bounded by
 * lock_timeout (PG_LOCK_MS, then ERR_BUSY, as SQLite's busy timeout).
 * Statements outside a frame are autocommit; a serialization failure or
 * deadlock there is retried up to PG_RETRIES times.  Unique conflicts use
 * ON CONFLICT DO NOTHING rather than failing, because in PostgreSQL a
 * failed statement aborts the whole frame, and callers treat ERR_EXISTS
 * as an answer, not an abort.
 *
 * Never blocking the loop.  Every exchange uses libpq's asynchronous API
 * (PQconnectStartParams/PQconnectPoll, PQsendPrepare, PQsendQueryPrepared,
 * PQflush, PQconsumeInput, PQisBusy, PQgetResult) on a non-blocking
 * socket; inside a task the wait for the socket is task_keep_wait(),
 * which hands the loop back, and only code outside tasks (start-up, unit
 * tests) waits in poll().  Each exchange has a deadline (PG_QUERY_MS): past it
 * the connection is dropped, so a wedged server costs a request, not the
 * process.
 *
 * A lost server.  A handle whose connection died reconnects on its next
 * use; a handle idle in the pool notices the server's goodbye on its
 * socket before sending, so the first request after a restart does not
 * fail for a connection that was already dead.  What fails while the
 * server is away fails with ERR_STORE_UNAVAILABLE.
 *
 * Statements are prepared once per connection and reused, keyed by the
 * SQL's address (a string literal of one call site), as in SQLite.
 *
 * One wait stays synchronous: libpq resolves a host name with
 * getaddrinfo() inside PQconnectPoll().  Give an address (or hostaddr=)
 * where a resolver may be slow.
 */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "err.h"
#include "log.h"
#include "store.h"
#include "store-backend.h"
#include "task.h"
#include "xmalloc.h"

#define PG_LOCK_MS	10000
#define PG_STATEMENT_MS	30000
#define PG_QUERY_MS	(PG_STATEMENT_MS + 5000)
#define PG_CONNECT_MS	10000
#define PG_RETRIES	3
#define PG_CACHE	64
#define PG_PARAMS	10
#define PG_READY_READS	8

/*
 * Whether the last connect failed: a server that is away is logged once
 * when it goes and once when it is back, not on every request between.
 */
static int	pg_unreachable;

struct pg_prep {
	const char	*sql;
	char		 name[16];
};

struct pg {
	PGconn		*conn;
	struct task_keep *keep;		/* conn's socket on the loop */
	int		 connecting;	/* the socket may still change */
	char		*url;
	int		 in_tx;
	int		 nprep;
	struct pg_prep	 prep[PG_CACHE];
};

/* Parameters as text, the way libpq takes them. */
struct pg_args {
	int		 n;
	const char	*val[PG_PARAMS];
	char		 num[PG_PARAMS][24];
};

/* ---- the connection and its waits ---------------------------------------- */

/* The first line of a libpq message (they end in newlines), for logs. */
static const char *
pg_line(const char *msg, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s", (int)strcspn(msg, "\n"), msg);
	return buf;
}

static void
pg_drop(struct pg *q)
{
	task_keep_free(q->keep);
	q->keep = NULL;
	if (q->conn != NULL)
		PQfinish(q->conn);
	q->conn = NULL;
	q->nprep = 0;
}

/*
 * Wait until the socket is readable (out: or writable) or deadline_ms
 * (store_now_ms() time) passes.  A task yields; anything else polls.
 */
static int
pg_wait(struct pg *q, int out, int64_t deadline_ms)
{
	struct pollfd	 pfd;
	int64_t		 left = deadline_ms - store_now_ms();
	int		 fd = PQsocket(q->conn), n;

	if (fd < 0)
		return ERR_STORE_UNAVAILABLE;
	if (left <= 0)
		return ERR_TIMEOUT;
	/*
	 * In a task: the socket stays adopted between waits (a request
	 * waits on it a dozen times).  Once connected the socket changes
	 * only with a new connection, and pg_drop() lets the old one go;
	 * while connecting libpq may close one and open another under the
	 * same number, so those waits adopt afresh each time.
	 */
	if (task_self() != NULL && q->keep == NULL && !q->connecting)
		q->keep = task_keep_new(fd);
	if (task_self() != NULL && q->keep != NULL)
		return task_keep_wait(q->keep, out, left);
	if (task_self() != NULL)
		return out ? task_wait_fd_out(fd, left) : task_wait_fd(fd, left);
	pfd.fd = fd;
	pfd.events = POLLIN | (out ? POLLOUT : 0);
	do
		n = poll(&pfd, 1, (int)(left > 60000 ? 60000 : left));
	while (n == -1 && errno == EINTR);
	if (n == -1)
		return err_from_errno(errno);
	return n == 0 ? ERR_TIMEOUT : 0;
}

/* The server's notices (a shutdown's goodbye) go to our log, not stderr. */
static void
pg_notice(void *arg, const char *msg)
{
	char	 line[256];

	(void)arg;
	log_info("store.pg_notice", "msg=\"%s\"", pg_line(msg, line,
	    sizeof line));
}

static int
pg_connect(struct pg *q, struct errmsg *err)
{
	static const char *const keys[] = {
		"dbname", "application_name", "options", NULL
	};
	const char		*vals[4];
	char			 opts[128];
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;
	int64_t			 deadline = store_now_ms() + PG_CONNECT_MS;
	char			 line[256];
	int			 r;

	pg_drop(q);
	/* Our timeouts after the URL's, so the bounds always hold. */
	snprintf(opts, sizeof opts, "-c lock_timeout=%d "
	    "-c statement_timeout=%d", PG_LOCK_MS, PG_STATEMENT_MS);
	vals[0] = q->url;
	vals[1] = "rakazoctl";
	vals[2] = opts;
	vals[3] = NULL;
	q->conn = PQconnectStartParams(keys, vals, 1);
	if (q->conn == NULL)
		return errmsg_set(err, ERR_NOMEM, "out of memory");
	if (PQstatus(q->conn) == CONNECTION_BAD)
		goto bad;
	PQsetNoticeProcessor(q->conn, pg_notice, NULL);
	q->connecting = 1;
	while (st != PGRES_POLLING_OK) {
		if (st == PGRES_POLLING_FAILED)
			goto bad;
		if ((r = pg_wait(q, st == PGRES_POLLING_WRITING, deadline)) != 0) {
			q->connecting = 0;
			pg_drop(q);
			return errmsg_set(err, ERR_STORE_UNAVAILABLE, "cannot "
			    "connect to the PostgreSQL state store: %s",
			    r == ERR_TIMEOUT ? "timed out" : err_message(r));
		}
		st = PQconnectPoll(q->conn);
	}
	q->connecting = 0;
	if (PQsetnonblocking(q->conn, 1) != 0)
		goto bad;
	return 0;
bad:
	q->connecting = 0;
	/* libpq's sentence names host and port, never the password. */
	errmsg_set(err, ERR_STORE_UNAVAILABLE, "cannot connect to the "
	    "PostgreSQL state store: %s", pg_line(PQerrorMessage(q->conn),
	    line, sizeof line));
	pg_drop(q);
	return ERR_STORE_UNAVAILABLE;
}

/*
 * Before sending on a connection that sat idle: if the server said
 * goodbye (restart, admin shutdown) its message and the hang-up are
 * already on the socket, so the statement can go to a new connection
 * instead of failing.  libpq sees the hang-up only on a read after the
 * one that took the message (which it hands to pg_notice() and calls
 * nothing more), so read until the socket has nothing left: one read
 * would leave a dead connection looking alive, and the first request
 * after a restart failed on it with 503.  Bounded (PG_READY_READS), so a
 * stream of NOTIFYs cannot hold a request.  In a frame the transaction
 * died with the connection: no retry.
 */
static int
pg_ready(struct pg *q)
{
	struct pollfd	 pfd;
	struct errmsg	 e;
	int		 i, ok;

	if (q->conn != NULL && PQstatus(q->conn) == CONNECTION_OK) {
		pfd.fd = PQsocket(q->conn);
		pfd.events = POLLIN;
		ok = 1;
		for (i = 0; ok && i < PG_READY_READS &&
		    poll(&pfd, 1, 0) == 1; i++) {
			ok = PQconsumeInput(q->conn) != 0 &&
			    PQstatus(q->conn) == CONNECTION_OK;
			if (ok)		/* nothing, or NOTIFY */
				PQclear(PQgetResult(q->conn));
		}
		if (ok)
			return 0;
	}
	pg_drop(q);
	if (q->in_tx)
		return ERR_STORE_UNAVAILABLE;
	memset(&e, 0, sizeof e);
	if (pg_connect(q, &e) != 0) {
		if (!pg_unreachable)
			log_warn("store.pg_unreachable", "msg=\"%s\"",
			    errmsg_str(&e));
		pg_unreachable = 1;
		return ERR_STORE_UNAVAILABLE;
	}
	if (pg_unreachable)
		log_info("store.pg_reachable", "after=unreachable");
	pg_unreachable = 0;
	return 0;
}

static int
pg_sqlstate(const PGresult *res)
{
	const char	*st = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	char		 line[256];

	if (st == NULL)
		return ERR_STORE;
	if (strncmp(st, "23", 2) == 0)		/* integrity constraint */
		return ERR_EXISTS;
	if (strcmp(st, "40001") == 0 || strcmp(st, "40P01") == 0 ||
	    strcmp(st, "55P03") == 0 || strcmp(st, "57014") == 0)
		return ERR_BUSY;		/* retry later */
	if (strncmp(st, "08", 2) == 0 || strncmp(st, "57P", 3) == 0)
		return ERR_STORE_UNAVAILABLE;	/* connection, shutdown */
	if (strcmp(st, "53100") == 0)
		return ERR_NO_SPACE;		/* disk_full */
	log_warn("store.pg", "sqlstate=%s msg=\"%s\"", st,
	    pg_line(PQresultErrorMessage(res), line, sizeof line));
	return ERR_STORE;
}

/*
 * Flush what was sent and collect every result of it; *out gets the first
 * (the caller clears it).  The code: 0, the first failing result's, or
 * ERR_STORE_UNAVAILABLE when the connection broke (it is then dropped).
 */
static int
pg_collect(struct pg *q, PGresult **out)
{
	int64_t		 deadline = store_now_ms() + PG_QUERY_MS;
	PGresult	*res;
	char		 line[256];
	int		 f, r = 0;

	*out = NULL;
	while ((f = PQflush(q->conn)) == 1) {
		if (pg_wait(q, 1, deadline) != 0)
			goto lost;
		if (PQconsumeInput(q->conn) == 0)
			goto lost;
	}
	if (f == -1)
		goto lost;
	for (;;) {
		while (PQisBusy(q->conn)) {
			if (pg_wait(q, 0, deadline) != 0)
				goto lost;
			if (PQconsumeInput(q->conn) == 0)
				goto lost;
		}
		if ((res = PQgetResult(q->conn)) == NULL)
			break;
		switch (PQresultStatus(res)) {
		case PGRES_COMMAND_OK:
		case PGRES_TUPLES_OK:
			break;
		default:
			if (r == 0)
				r = PQstatus(q->conn) == CONNECTION_OK ?
				    pg_sqlstate(res) : ERR_STORE_UNAVAILABLE;
			break;
		}
		if (*out == NULL)
			*out = res;
		else
			PQclear(res);
	}
	if (r == ERR_STORE_UNAVAILABLE)
		pg_drop(q);
	return r;
lost:
	/* Mid-exchange: the connection cannot be reused. */
	PQclear(*out);
	*out = NULL;
	log_warn("store.pg_lost", "msg=\"%s\"",
	    pg_line(PQerrorMessage(q->conn), line, sizeof line));
	pg_drop(q);
	return ERR_STORE_UNAVAILABLE;
}

/* The prepared name of sql on this connection, preparing it once. */
static int
pg_prepared(struct pg *q, const char *sql, int nparams, const char **name)
{
	struct pg_prep	*p;
	PGresult	*res;
	char		 tmp[16];
	int		 i, r;

	for (i = 0; i < q->nprep; i++)
		if (q->prep[i].sql == sql) {
			*name = q->prep[i].name;
			return 0;
		}
	snprintf(tmp, sizeof tmp, "rk%d", q->nprep);
	/* A full cache: the unnamed statement, parsed every time. */
	if (q->nprep == PG_CACHE)
		tmp[0] = '\0';
	if (PQsendPrepare(q->conn, tmp, sql, nparams, NULL) == 0) {
		pg_drop(q);
		return ERR_STORE_UNAVAILABLE;
	}
	r = pg_collect(q, &res);
	PQclear(res);
	if (r != 0)
		return r;
	if (q->nprep == PG_CACHE) {
		*name = "";
		return 0;
	}
	p = &q->prep[q->nprep++];
	p->sql = sql;
	snprintf(p->name, sizeof p->name, "%s", tmp);
	*name = p->name;
	return 0;
}

static int
pg_args_v(struct pg_args *a, const char *types, va_list ap)
{
	int	 i;

	memset(a, 0, sizeof *a);
	for (i = 0; types[i] != '\0'; i++) {
		if (i == PG_PARAMS)
			return ERR_INTERNAL;
		if (types[i] == 's')
			a->val[i] = va_arg(ap, const char *);
		else {
			snprintf(a->num[i], sizeof a->num[i], "%" PRId64,
			    va_arg(ap, int64_t));
			a->val[i] = a->num[i];
		}
	}
	a->n = i;
	return 0;
}

/* One statement with its arguments, once (no retry). */
static int
pg_once(struct pg *q, const char *sql, const struct pg_args *a,
    PGresult **out)
{
	const char	*name;
	int		 r;

	*out = NULL;
	if ((r = pg_ready(q)) != 0)
		return r;
	if ((r = pg_prepared(q, sql, a->n, &name)) != 0)
		return r;
	if (PQsendQueryPrepared(q->conn, name, a->n, a->val, NULL, NULL,
	    0) == 0) {
		pg_drop(q);
		return ERR_STORE_UNAVAILABLE;
	}
	return pg_collect(q, out);
}

/*
 * Run sql with arguments typed by types ('s' const char *, 'i' int64_t);
 * *out gets the result (clear it) when out is not NULL.  Outside a frame
 * a serialization failure or deadlock is tried again, up to PG_RETRIES.
 */
static int
pg_query(struct pg *q, PGresult **out, const char *sql, const char *types,
    ...)
{
	struct pg_args	 a;
	PGresult	*res = NULL;
	va_list		 ap;
	int		 r, tries = 0;

	if (out != NULL)
		*out = NULL;
	va_start(ap, types);
	r = pg_args_v(&a, types, ap);
	va_end(ap);
	if (r != 0)
		return r;
	for (;;) {
		r = pg_once(q, sql, &a, &res);
		if (r != ERR_BUSY || q->in_tx || ++tries >= PG_RETRIES)
			break;
		PQclear(res);
		res = NULL;
	}
	if (r == 0 && out != NULL) {
		*out = res;
		res = NULL;
	}
	PQclear(res);
	return r;
}

/* A command's row count: ERR_NOT_FOUND for none (UPDATE/DELETE misses). */
static int
pg_changed(struct pg *q, int zero, const char *sql, const char *types, ...)
{
	struct pg_args	 a;
	PGresult	*res = NULL;
	va_list		 ap;
	int		 r, tries = 0;

	va_start(ap, types);
	r = pg_args_v(&a, types, ap);
	va_end(ap);
	if (r != 0)
		return r;
	for (;;) {
		r = pg_once(q, sql, &a, &res);
		if (r != ERR_BUSY || q->in_tx || ++tries >= PG_RETRIES)
			break;
		PQclear(res);
		res = NULL;
	}
	if (r == 0 && res != NULL && strcmp(PQcmdTuples(res), "0") == 0)
		r = zero;
	PQclear(res);
	return r;
}

/* Several statements in the simple protocol (BEGIN+lock, migrations). */
static int
pg_simple(struct pg *q, const char *sql)
{
	PGresult	*res;
	int		 r;

	if ((r = pg_ready(q)) != 0)
		return r;
	if (PQsendQuery(q->conn, sql) == 0) {
		pg_drop(q);
		return ERR_STORE_UNAVAILABLE;
	}
	r = pg_collect(q, &res);
	PQclear(res);
	return r;
}

static int64_t
pg_int(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? 0 :
	    strtoll(PQgetvalue(res, row, col), NULL, 10);
}

static void
pg_text(const PGresult *res, int row, int col, char *dst, size_t len)
{
	snprintf(dst, len, "%s", PQgetisnull(res, row, col) ? "" :
	    PQgetvalue(res, row, col));
}

/* Rows of res into a malloc'd array of elemsize each. */
static int
pg_rows(PGresult *res, size_t elemsize,
    void (*row)(const PGresult *, int, void *), void **out, size_t *n)
{
	char	*arr = NULL;
	int	 i, cnt = PQntuples(res);

	if (cnt > 0) {
		arr = xcalloc((size_t)cnt, elemsize);
		for (i = 0; i < cnt; i++)
			row(res, i, arr + (size_t)i * elemsize);
	}
	PQclear(res);
	*out = arr;
	*n = (size_t)cnt;
	return 0;
}

/* ---- frames ------------------------------------------------------------ */

static int
pg_begin(void *impl)
{
	struct pg	*q = impl;
	int		 r;

	if (q->in_tx)
		return ERR_INTERNAL;
	/*
	 * One round trip: the transaction and the write lock together.  The
	 * key is "rakazo" in ASCII (0x72616b617a6f): one lock per database.
	 */
	if ((r = pg_simple(q, "BEGIN; SELECT pg_advisory_xact_lock("
	    "125762738944623)")) != 0) {
		if (q->conn != NULL)
			(void)pg_simple(q, "ROLLBACK");
		return r;
	}
	q->in_tx = 1;
	return 0;
}

static int
pg_commit(void *impl)
{
	struct pg	*q = impl;
	PGresult	*res;
	int		 r;

	if (!q->in_tx)
		return ERR_INTERNAL;
	if (q->conn == NULL)
		return ERR_STORE_UNAVAILABLE;
	if (PQsendQuery(q->conn, "COMMIT") == 0) {
		pg_drop(q);
		q->in_tx = 0;
		return ERR_STORE_UNAVAILABLE;
	}
	r = pg_collect(q, &res);
	/* A frame with a failed statement "commits" as a rollback. */
	if (r == 0 && (res == NULL ||
	    strcmp(PQcmdStatus(res), "COMMIT") != 0))
		r = ERR_STORE;
	PQclear(res);
	q->in_tx = 0;
	return r;
}

static void
pg_rollback(void *impl)
{
	struct pg	*q = impl;

	if (q->conn != NULL && PQstatus(q->conn) == CONNECTION_OK &&
	    PQtransactionStatus(q->conn) != PQTRANS_IDLE)
		(void)pg_simple(q, "ROLLBACK");
	q->in_tx = 0;
}

static int
pg_in_tx(void *impl)
{
	return ((struct pg *)impl)->in_tx;
}

/*
 * store_write_check(): a row no migration has (version 0) written and
 * deleted in the frame, so the commit writes WAL as any grant would.
 */
static int
pg_write_probe(void *impl)
{
	struct pg	*q = impl;
	int		 r;

	if ((r = pg_query(q, NULL, "INSERT INTO schema_migrations VALUES "
	    "(0, 0) ON CONFLICT DO NOTHING", "")) != 0)
		return r;
	return pg_query(q, NULL, "DELETE FROM schema_migrations WHERE "
	    "version = 0", "");
}

/* ---- open, migrations -------------------------------------------------- */

/*
 * Numbered schema steps, the same numbers as store-sqlite.c's so a
 * version means the same tables in both; append, never edit one.
 */
static const char *const pg_migrations[] = {
	/* 1: the tables of C-2. */
	"CREATE TABLE computers ("
	"  id TEXT PRIMARY KEY, provider TEXT NOT NULL, state TEXT NOT NULL,"
	"  ref TEXT NOT NULL DEFAULT '{}', created_ms BIGINT NOT NULL,"
	"  updated_ms BIGINT NOT NULL, last_used_ms BIGINT NOT NULL);"
	"CREATE TABLE bots ("
	"  computer TEXT NOT NULL, bot TEXT NOT NULL,"
	"  fence BIGINT NOT NULL DEFAULT 0,"
	"  run_state TEXT NOT NULL DEFAULT 'idle',"
	"  PRIMARY KEY (computer, bot));"
	"CREATE TABLE leases ("
	"  id TEXT PRIMARY KEY, computer TEXT NOT NULL, bot TEXT NOT NULL,"
	"  kind TEXT NOT NULL, holder TEXT NOT NULL, fence BIGINT NOT NULL,"
	"  acquired_ms BIGINT NOT NULL, expires_ms BIGINT NOT NULL,"
	"  UNIQUE (computer, bot, kind));"
	"CREATE TABLE computer_runs ("
	"  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
	"  computer TEXT NOT NULL, started_ms BIGINT NOT NULL,"
	"  ended_ms BIGINT NOT NULL DEFAULT 0,"
	"  end_reason TEXT NOT NULL DEFAULT '');"
	"CREATE INDEX computer_runs_open ON computer_runs (computer, ended_ms);"
	"CREATE TABLE activity_events ("
	"  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
	"  computer TEXT NOT NULL, bot TEXT NOT NULL, ts_ms BIGINT NOT NULL,"
	"  kind TEXT NOT NULL, tool TEXT NOT NULL, ok BIGINT NOT NULL,"
	"  text TEXT NOT NULL);"
	"CREATE INDEX activity_by_computer ON activity_events (computer, id);"
	"CREATE TABLE maintenance_ops ("
	"  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
	"  computer TEXT NOT NULL, kind TEXT NOT NULL, state TEXT NOT NULL,"
	"  phase TEXT, created_ms BIGINT NOT NULL, heartbeat_ms BIGINT);"
	"CREATE TABLE home_revisions ("
	"  computer TEXT NOT NULL, revision BIGINT NOT NULL,"
	"  created_ms BIGINT NOT NULL, bytes BIGINT,"
	"  PRIMARY KEY (computer, revision));",
	/* 2: capabilities granted under a lease. */
	"CREATE TABLE capabilities ("
	"  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
	"  lease TEXT NOT NULL, computer TEXT NOT NULL, bot TEXT NOT NULL,"
	"  cap_id TEXT NOT NULL, token TEXT NOT NULL,"
	"  created_ms BIGINT NOT NULL);"
	"CREATE INDEX capabilities_by_lease ON capabilities (lease);",
	/* 3: the local provider's users (store-sqlite.c); kept for the
	 * same version numbers, unused while those stay per host. */
	"CREATE TABLE local_uids ("
	"  uid BIGINT PRIMARY KEY, computer TEXT UNIQUE,"
	"  created_ms BIGINT NOT NULL, retired_ms BIGINT);",
	/* 4: what a home revision holds (C-9). */
	"ALTER TABLE home_revisions ADD COLUMN files BIGINT NOT NULL "
	"  DEFAULT 0;"
	"ALTER TABLE home_revisions ADD COLUMN sha256 TEXT NOT NULL "
	"  DEFAULT '';"
	"ALTER TABLE home_revisions ADD COLUMN cause TEXT NOT NULL "
	"  DEFAULT '';",
	/* 5: guestd's fingerprint of the exported tree (an unchanged
	 * checkpoint, checkpoint.c). */
	("ALTER TABLE home_revisions ADD COLUMN fingerprint TEXT NOT NULL "
	"  DEFAULT '';"),
	/* 6: the home's data key wrapped by the content key (C-10, the
	 * object home store; home-object.c), hex; '' until the first. */
	("ALTER TABLE computers ADD COLUMN home_key TEXT NOT NULL "
	"  DEFAULT '';"),
};

#define PG_NMIGRATIONS	(sizeof(pg_migrations) / sizeof(pg_migrations[0]))

static int
pg_version(struct pg *q, int64_t *v)
{
	PGresult	*res;
	int		 r;

	*v = 0;
	if ((r = pg_query(q, &res, "SELECT coalesce(max(version), 0) FROM "
	    "schema_migrations", "")) != 0)
		return r;
	if (PQntuples(res) == 1)
		*v = pg_int(res, 0, 0);
	else
		r = ERR_STORE;
	PQclear(res);
	return r;
}

/*
 * Up to date is the common case (every new handle): one read, no lock.
 * Otherwise every missing step, in order, in one frame under the write
 * lock, so two controllers starting at once apply each step once.
 */
static int
pg_migrate(struct pg *q, struct errmsg *err)
{
	PGresult	*res;
	int64_t		 have = 0;
	size_t		 i;
	int		 r, exists = 0;

	/* A new database has no table yet: ask, rather than fail a read. */
	if ((r = pg_query(q, &res, "SELECT to_regclass('schema_migrations') "
	    "IS NOT NULL", "")) != 0)
		goto fail;
	exists = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	if (exists && (r = pg_version(q, &have)) != 0)
		goto fail;
	if (have >= (int64_t)PG_NMIGRATIONS)
		return 0;
	if ((r = pg_begin(q)) != 0)
		goto fail;
	if ((r = pg_simple(q, "CREATE TABLE IF NOT EXISTS schema_migrations "
	    "(version BIGINT PRIMARY KEY, applied_ms BIGINT NOT NULL)")) != 0 ||
	    (r = pg_version(q, &have)) != 0)
		goto fail_tx;
	for (i = (size_t)have; i < PG_NMIGRATIONS; i++)
		if ((r = pg_simple(q, pg_migrations[i])) != 0 ||
		    (r = pg_query(q, NULL, "INSERT INTO schema_migrations "
		    "VALUES ($1, $2)", "ii", (int64_t)i + 1,
		    store_now_ms())) != 0)
			goto fail_tx;
	if ((r = pg_commit(q)) != 0)
		goto fail;
	return 0;
fail_tx:
	pg_rollback(q);
fail:
	return errmsg_set(err, r, "state store migration failed: %s",
	    err_message(r));
}

static int
pg_open(void **impl, const char *url, struct errmsg *err)
{
	PQconninfoOption	*opts;
	struct pg		*q;
	char			*perr = NULL;
	int			 r;

	*impl = NULL;
	/* A malformed URL is a setup error, not a server that is away.  Its
	 * parser's sentence may quote the URL: not repeated. */
	if ((opts = PQconninfoParse(url, &perr)) == NULL) {
		PQfreemem(perr);
		return errmsg_set(err, ERR_CONFIG, "the state store URL is not "
		    "a valid PostgreSQL URI");
	}
	PQconninfoFree(opts);
	q = xcalloc(1, sizeof *q);
	q->url = xstrdup(url);
	if ((r = pg_connect(q, err)) != 0 || (r = pg_migrate(q, err)) != 0) {
		pg_drop(q);
		free(q->url);
		free(q);
		return r;
	}
	*impl = q;
	return 0;
}

static void
pg_close(void *impl)
{
	struct pg	*q = impl;

	if (q == NULL)
		return;
	pg_drop(q);
	/* The URL may hold a password. */
	explicit_bzero(q->url, strlen(q->url));
	free(q->url);
	free(q);
}

static int
pg_schema_version(void *impl, int64_t *v)
{
	return pg_version(impl, v);
}

/* ---- computers --------------------------------------------------------- */

#define PG_COMPUTER_COLS \
	"id, provider, state, ref, created_ms, updated_ms, last_used_ms"

static void
pg_computer_row(const PGresult *res, int i, void *p)
{
	struct store_computer	*c = p;

	memset(c, 0, sizeof *c);
	pg_text(res, i, 0, c->id, sizeof c->id);
	pg_text(res, i, 1, c->provider, sizeof c->provider);
	pg_text(res, i, 2, c->state, sizeof c->state);
	pg_text(res, i, 3, c->ref, sizeof c->ref);
	c->created_ms = pg_int(res, i, 4);
	c->updated_ms = pg_int(res, i, 5);
	c->last_used_ms = pg_int(res, i, 6);
}

/* The first row of a SELECT into out, or ERR_NOT_FOUND. */
static int
pg_one(int r, PGresult *res, void (*row)(const PGresult *, int, void *),
    void *out)
{
	if (r == 0) {
		if (PQntuples(res) > 0)
			row(res, 0, out);
		else
			r = ERR_NOT_FOUND;
	}
	PQclear(res);
	return r;
}

static int
pg_computer_create(void *impl, const struct store_computer *c)
{
	return pg_changed(impl, ERR_EXISTS, "INSERT INTO computers ("
	    PG_COMPUTER_COLS ") VALUES ($1, $2, $3, $4, $5, $6, $7) "
	    "ON CONFLICT DO NOTHING", "ssssiii", c->id, c->provider, c->state,
	    c->ref, c->created_ms, c->updated_ms, c->last_used_ms);
}

static int
pg_computer_get(void *impl, const char *id, struct store_computer *out)
{
	PGresult	*res;
	int		 r;

	r = pg_query(impl, &res, "SELECT " PG_COMPUTER_COLS " FROM computers "
	    "WHERE id = $1", "s", id);
	return pg_one(r, res, pg_computer_row, out);
}

static int
pg_computer_update(void *impl, const struct store_computer *c)
{
	return pg_changed(impl, ERR_NOT_FOUND, "UPDATE computers SET "
	    "provider = $1, state = $2, ref = $3, updated_ms = $4, "
	    "last_used_ms = $5 WHERE id = $6", "sssiis", c->provider, c->state,
	    c->ref, c->updated_ms, c->last_used_ms, c->id);
}

static int
pg_computer_touch(void *impl, const char *id, int64_t now)
{
	return pg_changed(impl, ERR_NOT_FOUND, "UPDATE computers SET "
	    "last_used_ms = $1 WHERE id = $2", "is", now, id);
}

static void
pg_home_key_row(const PGresult *res, int i, void *p)
{
	char	**dst = p;

	pg_text(res, i, 0, dst[0], (size_t)(dst[1] - dst[0]));
}

static int
pg_computer_home_key_get(void *impl, const char *id, char *out, size_t len)
{
	PGresult	*res;
	char		*span[2] = { out, out + len };
	int		 r;

	r = pg_query(impl, &res, "SELECT home_key FROM computers WHERE "
	    "id = $1", "s", id);
	return pg_one(r, res, pg_home_key_row, span);
}

static int
pg_computer_home_key_set(void *impl, const char *id, const char *hex)
{
	return pg_changed(impl, ERR_NOT_FOUND, "UPDATE computers SET "
	    "home_key = $1 WHERE id = $2", "ss", hex, id);
}

static int
pg_computer_delete(void *impl, const char *id)
{
	/* One statement: its guestd, bots, leases and capabilities go too. */
	return pg_changed(impl, ERR_NOT_FOUND, "WITH "
	    "b AS (DELETE FROM bots WHERE computer = $1), "
	    "l AS (DELETE FROM leases WHERE computer = $1), "
	    "c AS (DELETE FROM capabilities WHERE computer = $1) "
	    "DELETE FROM computers WHERE id = $1", "s", id);
}

static int
pg_computer_list(void *impl, struct store_computer **out, size_t *n)
{
	PGresult	*res;
	int		 r;

	*out = NULL;
	*n = 0;
	if ((r = pg_query(impl, &res, "SELECT " PG_COMPUTER_COLS " FROM "
	    "computers ORDER BY created_ms, id", "")) != 0)
		return r;
	return pg_rows(res, sizeof **out, pg_computer_row, (void **)out, n);
}

/* ---- bots ------------------------------------------------------------- */

static int
pg_bot_ensure(void *impl, const char *computer, const char *bot,
    struct store_bot *out)
{
	PGresult	*res;
	int		 r;

	memset(out, 0, sizeof *out);
	/* One round trip: the CTE's row when new, the table's otherwise. */
	r = pg_query(impl, &res, "WITH ins AS (INSERT INTO bots (computer, "
	    "bot) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING fence, "
	    "run_state) SELECT fence, run_state FROM ins UNION ALL "
	    "SELECT fence, run_state FROM bots WHERE computer = $1 AND "
	    "bot = $2", "ss", computer, bot);
	if (r != 0)
		return r;
	if (PQntuples(res) > 0) {
		snprintf(out->computer, sizeof out->computer, "%s", computer);
		snprintf(out->bot, sizeof out->bot, "%s", bot);
		out->fence = pg_int(res, 0, 0);
		pg_text(res, 0, 1, out->run_state, sizeof out->run_state);
	} else
		r = ERR_NOT_FOUND;
	PQclear(res);
	return r;
}

static int
pg_bot_update(void *impl, const struct store_bot *b)
{
	return pg_changed(impl, ERR_NOT_FOUND, "UPDATE bots SET fence = $1, "
	    "run_state = $2 WHERE computer = $3 AND bot = $4", "isss",
	    b->fence, b->run_state, b->computer, b->bot);
}

/* ---- leases ----------------------------------------------------------- */

#define PG_LEASE_COLS \
	"id, computer, bot, kind, holder, fence, acquired_ms, expires_ms"

static void
pg_lease_row(const PGresult *res, int i, void *p)
{
	struct store_lease	*l = p;

	memset(l, 0, sizeof *l);
	pg_text(res, i, 0, l->id, sizeof l->id);
	pg_text(res, i, 1, l->computer, sizeof l->computer);
	pg_text(res, i, 2, l->bot, sizeof l->bot);
	pg_text(res, i, 3, l->kind, sizeof l->kind);
	pg_text(res, i, 4, l->holder, sizeof l->holder);
	l->fence = pg_int(res, i, 5);
	l->acquired_ms = pg_int(res, i, 6);
	l->expires_ms = pg_int(res, i, 7);
}

static int
pg_lease_find(void *impl, const char *computer, const char *bot,
    const char *kind, struct store_lease *out)
{
	PGresult	*res;
	int		 r;

	r = pg_query(impl, &res, "SELECT " PG_LEASE_COLS " FROM leases WHERE "
	    "computer = $1 AND bot = $2 AND kind = $3", "sss", computer, bot,
	    kind);
	return pg_one(r, res, pg_lease_row, out);
}

static int
pg_lease_get(void *impl, const char *id, struct store_lease *out)
{
	PGresult	*res;
	int		 r;

	r = pg_query(impl, &res, "SELECT " PG_LEASE_COLS " FROM leases WHERE "
	    "id = $1", "s", id);
	return pg_one(r, res, pg_lease_row, out);
}

static int
pg_lease_put(void *impl, const struct store_lease *l)
{
	/* SQLite's INSERT OR REPLACE on the (computer, bot, kind) row. */
	return pg_query(impl, NULL, "INSERT INTO leases (" PG_LEASE_COLS ") "
	    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
	    "ON CONFLICT (computer, bot, kind) DO UPDATE SET id = excluded.id, "
	    "holder = excluded.holder, fence = excluded.fence, "
	    "acquired_ms = excluded.acquired_ms, "
	    "expires_ms = excluded.expires_ms", "sssssiii", l->id,
	    l->computer, l->bot, l->kind, l->holder, l->fence, l->acquired_ms,
	    l->expires_ms);
}

static int
pg_lease_delete(void *impl, const char *id)
{
	return pg_changed(impl, ERR_NOT_FOUND, "DELETE FROM leases WHERE "
	    "id = $1", "s", id);
}

static int
pg_lease_delete_computer(void *impl, const char *computer)
{
	return pg_query(impl, NULL, "DELETE FROM leases WHERE computer = $1",
	    "s", computer);
}

static int
pg_lease_count_live(void *impl, const char *computer, int64_t now,
    int64_t *n)
{
	PGresult	*res;
	int		 r;

	*n = 0;
	if ((r = pg_query(impl, &res, "SELECT count(*) FROM leases WHERE "
	    "computer = $1 AND expires_ms > $2", "si", computer, now)) != 0)
		return r;
	*n = pg_int(res, 0, 0);
	PQclear(res);
	return 0;
}

/* ---- runs ------------------------------------------------------------- */

static void
pg_run_row(const PGresult *res, int i, void *p)
{
	struct store_run	*u = p;

	memset(u, 0, sizeof *u);
	u->id = pg_int(res, i, 0);
	pg_text(res, i, 1, u->computer, sizeof u->computer);
	u->started_ms = pg_int(res, i, 2);
	u->ended_ms = pg_int(res, i, 3);
	pg_text(res, i, 4, u->end_reason, sizeof u->end_reason);
}

/* An INSERT ... RETURNING id: the new id into *id (may be NULL). */
static int
pg_returning(int r, PGresult *res, int64_t *id)
{
	if (r == 0 && id != NULL)
		*id = PQntuples(res) == 1 ? pg_int(res, 0, 0) : 0;
	PQclear(res);
	return r;
}

static int
pg_run_open(void *impl, const char *computer, int64_t now, int64_t *id)
{
	PGresult	*res;
	int		 r;

	r = pg_query(impl, &res, "INSERT INTO computer_runs (computer, "
	    "started_ms) VALUES ($1, $2) RETURNING id", "si", computer, now);
	return pg_returning(r, res, id);
}

static int
pg_run_current(void *impl, const char *computer, struct store_run *out)
{
	PGresult	*res;
	int		 r;

	r = pg_query(impl, &res, "SELECT id, computer, started_ms, ended_ms, "
	    "end_reason FROM computer_runs WHERE computer = $1 AND "
	    "ended_ms = 0 ORDER BY id DESC LIMIT 1", "s", computer);
	return pg_one(r, res, pg_run_row, out);
}

static int
pg_run_close(void *impl, int64_t id, int64_t now, const char *reason)
{
	return pg_changed(impl, ERR_NOT_FOUND, "UPDATE computer_runs SET "
	    "ended_ms = $1, end_reason = $2 WHERE id = $3 AND ended_ms = 0",
	    "isi", now, reason, id);
}

static int
pg_run_list(void *impl, const char *computer, struct store_run **out,
    size_t *n)
{
	PGresult	*res;
	int		 r;

	*out = NULL;
	*n = 0;
	if ((r = pg_query(impl, &res, "SELECT id, computer, started_ms, "
	    "ended_ms, end_reason FROM computer_runs WHERE computer = $1 "
	    "ORDER BY id", "s", computer)) != 0)
		return r;
	return pg_rows(res, sizeof **out, pg_run_row, (void **)out, n);
}

/* ---- activity --------------------------------------------------------- */

static void
pg_event_row(const PGresult *res, int i, void *p)
{
	struct store_event	*e = p;

	memset(e, 0, sizeof *e);
	e->id = pg_int(res, i, 0);
	pg_text(res, i, 1, e->computer, sizeof e->computer);
	pg_text(res, i, 2, e->bot, sizeof e->bot);
	e->ts_ms = pg_int(res, i, 3);
	pg_text(res, i, 4, e->kind, sizeof e->kind);
	pg_text(res, i, 5, e->tool, sizeof e->tool);
	e->ok = (int)pg_int(res, i, 6);
	pg_text(res, i, 7, e->text, sizeof e->text);
}

static int
pg_event_add(void *impl, struct store_event *e)
{
	PGresult	*res;
	int		 r;

	/* The notice wakes other controllers' long polls (pg_watch()). */
	r = pg_query(impl, &res, "WITH ins AS (INSERT INTO activity_events "
	    "(computer, bot, ts_ms, kind, tool, ok, text) VALUES ($1, $2, $3, "
	    "$4, $5, $6, $7) RETURNING id) SELECT id, "
	    "pg_notify('rakazo_activity', '') FROM ins", "ssissis", e->computer, e->bot, e->ts_ms, e->kind,
	    e->tool, (int64_t)e->ok, e->text);
	return pg_returning(r, res, &e->id);
}

static int
pg_event_list(void *impl, const char *computer, int64_t after, size_t limit,
    struct store_event **out, size_t *n)
{
	PGresult	*res;
	int		 r;

	*out = NULL;
	*n = 0;
	if ((r = pg_query(impl, &res, "SELECT id, computer, bot, ts_ms, kind, "
	    "tool, ok, text FROM activity_events WHERE computer = $1 AND "
	    "id > $2 ORDER BY id LIMIT $3", "sii", computer, after,
	    (int64_t)limit)) != 0)
		return r;
	return pg_rows(res, sizeof **out, pg_event_row, (void **)out, n);
}

/* ---- capabilities ----------------------------------------------------- */

#define PG_CAP_COLS	"c.id, c.lease, c.computer, c.bot, c.cap_id, c.token, " \
			"c.created_ms"

static void
pg_cap_row(const PGresult *res, int i, void *p)
{
	struct store_cap	*c = p;

	memset(c, 0, sizeof *c);
	c->id = pg_int(res, i, 0);
	pg_text(res, i, 1, c->lease, sizeof c->lease);
	pg_text(res, i, 2, c->computer, sizeof c->computer);
	pg_text(res, i, 3, c->bot, sizeof c->bot);
	pg_text(res, i, 4, c->cap_id, sizeof c->cap_id);
	pg_text(res, i, 5, c->token, sizeof c->token);
	c->created_ms = pg_int(res, i, 6);
}

static int
pg_cap_add(void *impl, struct store_cap *c)
{
	PGresult	*res;
	int		 r;

	r = pg_query(impl, &res, "INSERT INTO capabilities (lease, computer, "
	    "bot, cap_id, token, created_ms) VALUES ($1, $2, $3, $4, $5, $6) "
	    "RETURNING id", "sssssi", c->lease, c->computer, c->bot,
	    c->cap_id, c->token, c->created_ms);
	return pg_returning(r, res, &c->id);
}

static int
pg_cap_list_lease(void *impl, const char *lease, struct store_cap **out,
    size_t *n)
{
	PGresult	*res;
	int		 r;

	*out = NULL;
	*n = 0;
	if ((r = pg_query(impl, &res, "SELECT " PG_CAP_COLS " FROM "
	    "capabilities c WHERE c.lease = $1 ORDER BY c.id", "s",
	    lease)) != 0)
		return r;
	return pg_rows(res, sizeof **out, pg_cap_row, (void **)out, n);
}

static int
pg_cap_list_dead(void *impl, int64_t now, struct store_cap **out, size_t *n)
{
	PGresult	*res;
	int		 r;

	*out = NULL;
	*n = 0;
	/* A replaced lease row is gone: its capabilities are dead too. */
	if ((r = pg_query(impl, &res, "SELECT " PG_CAP_COLS " FROM "
	    "capabilities c LEFT JOIN leases l ON l.id = c.lease "
	    "WHERE l.id IS NULL OR l.expires_ms <= $1 ORDER BY c.id", "i",
	    now)) != 0)
		return r;
	return pg_rows(res, sizeof **out, pg_cap_row, (void **)out, n);
}

static int
pg_cap_delete(void *impl, int64_t id)
{
	return pg_query(impl, NULL, "DELETE FROM capabilities WHERE id = $1",
	    "i", id);
}

static int
pg_cap_next_expiry(void *impl, int64_t *at)
{
	PGresult	*res;
	int		 r;

	*at = 0;
	if ((r = pg_query(impl, &res, "SELECT coalesce(min(l.expires_ms), 0) "
	    "FROM capabilities c JOIN leases l ON l.id = c.lease", "")) != 0)
		return r;
	*at = pg_int(res, 0, 0);
	PQclear(res);
	return 0;
}

/* ---- local uids -------------------------------------------------------- */

static int
pg_uid_get(void *impl, const char *computer, int64_t *uid)
{
	PGresult	*res;
	int		 r;

	*uid = -1;
	if ((r = pg_query(impl, &res, "SELECT uid FROM local_uids WHERE "
	    "computer = $1", "s", computer)) != 0)
		return r;
	if (PQntuples(res) > 0)
		*uid = pg_int(res, 0, 0);
	else
		r = ERR_NOT_FOUND;
	PQclear(res);
	return r;
}

static void
pg_uid_row(const PGresult *res, int i, void *p)
{
	*(int64_t *)p = pg_int(res, i, 0);
}

static int
pg_uid_list(void *impl, int64_t **out, size_t *n)
{
	PGresult	*res;
	int		 r;

	*out = NULL;
	*n = 0;
	if ((r = pg_query(impl, &res, "SELECT uid FROM local_uids ORDER BY "
	    "uid", "")) != 0)
		return r;
	return pg_rows(res, sizeof **out, pg_uid_row, (void **)out, n);
}

static int
pg_uid_add(void *impl, const char *computer, int64_t uid, int64_t now)
{
	return pg_changed(impl, ERR_EXISTS, "INSERT INTO local_uids (uid, "
	    "computer, created_ms) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
	    "isi", uid, computer, now);
}

static int
pg_uid_retire(void *impl, const char *computer, int64_t now)
{
	return pg_query(impl, NULL, "UPDATE local_uids SET computer = NULL, "
	    "retired_ms = $1 WHERE computer = $2", "is", now, computer);
}

/* ---- home revisions --------------------------------------------------- */

#define PG_HOME_COLS \
	"computer, revision, created_ms, bytes, files, sha256, cause, " \
	"fingerprint"

static void
pg_home_row(const PGresult *res, int i, void *p)
{
	struct store_home_rev	*h = p;

	memset(h, 0, sizeof *h);
	pg_text(res, i, 0, h->computer, sizeof h->computer);
	h->revision = pg_int(res, i, 1);
	h->created_ms = pg_int(res, i, 2);
	h->bytes = pg_int(res, i, 3);
	h->files = pg_int(res, i, 4);
	pg_text(res, i, 5, h->sha256, sizeof h->sha256);
	pg_text(res, i, 6, h->cause, sizeof h->cause);
	pg_text(res, i, 7, h->fingerprint, sizeof h->fingerprint);
}

static int
pg_home_rev_add(void *impl, const struct store_home_rev *h)
{
	return pg_changed(impl, ERR_EXISTS, "INSERT INTO home_revisions ("
	    PG_HOME_COLS ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
	    "ON CONFLICT DO NOTHING", "siiiisss", h->computer, h->revision,
	    h->created_ms, h->bytes, h->files, h->sha256, h->cause,
	    h->fingerprint);
}

static int
pg_home_rev_list(void *impl, const char *computer,
    struct store_home_rev **out, size_t *n)
{
	PGresult	*res;
	int		 r;

	*out = NULL;
	*n = 0;
	if ((r = pg_query(impl, &res, "SELECT " PG_HOME_COLS " FROM "
	    "home_revisions WHERE computer = $1 ORDER BY revision DESC", "s",
	    computer)) != 0)
		return r;
	return pg_rows(res, sizeof **out, pg_home_row, (void **)out, n);
}

static int
pg_home_rev_latest(void *impl, const char *computer,
    struct store_home_rev *out)
{
	PGresult	*res;
	int		 r;

	r = pg_query(impl, &res, "SELECT " PG_HOME_COLS " FROM home_revisions "
	    "WHERE computer = $1 ORDER BY revision DESC LIMIT 1", "s",
	    computer);
	return pg_one(r, res, pg_home_row, out);
}

static int
pg_home_rev_delete(void *impl, const char *computer, int64_t rev)
{
	return pg_query(impl, NULL, "DELETE FROM home_revisions WHERE "
	    "computer = $1 AND revision = $2", "si", computer, rev);
}

/* ---- change notices ---------------------------------------------------- */

static int
pg_watch(void *impl, int *fd)
{
	struct pg	*q = impl;
	int		 r;

	*fd = -1;
	if ((r = pg_simple(q, "LISTEN rakazo_activity")) != 0)
		return r;
	*fd = PQsocket(q->conn);
	return *fd >= 0 ? 0 : ERR_STORE_UNAVAILABLE;
}

/* On the loop, never waiting: what the socket has is read, no more. */
static int
pg_watch_read(void *impl)
{
	struct pg	*q = impl;
	PGnotify	*n;
	int		 got = 0;

	if (q->conn == NULL || PQconsumeInput(q->conn) == 0 ||
	    PQstatus(q->conn) != CONNECTION_OK)
		return ERR_STORE_UNAVAILABLE;
	while ((n = PQnotifies(q->conn)) != NULL) {
		got = 1;
		PQfreemem(n);
	}
	return got;
}

const struct store_ops store_pg_ops = {
	.name = "postgres",
	.open = pg_open,
	.close = pg_close,
	.schema_version = pg_schema_version,
	.begin = pg_begin,
	.commit = pg_commit,
	.rollback = pg_rollback,
	.in_tx = pg_in_tx,
	.write_probe = pg_write_probe,
	.computer_create = pg_computer_create,
	.computer_get = pg_computer_get,
	.computer_update = pg_computer_update,
	.computer_touch = pg_computer_touch,
	.computer_delete = pg_computer_delete,
	.computer_home_key_get = pg_computer_home_key_get,
	.computer_home_key_set = pg_computer_home_key_set,
	.computer_list = pg_computer_list,
	.bot_ensure = pg_bot_ensure,
	.bot_update = pg_bot_update,
	.lease_find = pg_lease_find,
	.lease_get = pg_lease_get,
	.lease_put = pg_lease_put,
	.lease_delete = pg_lease_delete,
	.lease_delete_computer = pg_lease_delete_computer,
	.lease_count_live = pg_lease_count_live,
	.run_open = pg_run_open,
	.run_current = pg_run_current,
	.run_close = pg_run_close,
	.run_list = pg_run_list,
	.event_add = pg_event_add,
	.event_list = pg_event_list,
	.cap_add = pg_cap_add,
	.cap_list_lease = pg_cap_list_lease,
	.cap_list_dead = pg_cap_list_dead,
	.cap_delete = pg_cap_delete,
	.cap_next_expiry = pg_cap_next_expiry,
	.uid_get = pg_uid_get,
	.uid_list = pg_uid_list,
	.uid_add = pg_uid_add,
	.uid_retire = pg_uid_retire,
	.home_rev_add = pg_home_rev_add,
	.home_rev_list = pg_home_rev_list,
	.home_rev_latest = pg_home_rev_latest,
	.home_rev_delete = pg_home_rev_delete,
	.watch = pg_watch,
	.watch_read = pg_watch_read,
};

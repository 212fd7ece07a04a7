/* SPDX-License-Identifier: MIT */
/*
 * The SQLite backend of the state store (doc/DESIGN.md C-2): one file under
 * DATA_DIR, WAL so readers never block the writer, a busy handler so
 * several rakazoctl processes on one host wait for each other instead of
 * failing (in a task it waits on a loop timer, so the loop keeps serving
 * while another process holds the write lock), and a schema_migrations table with numbered steps applied in
 * order, each in its own transaction.  Write transactions start with BEGIN
 * IMMEDIATE: the write lock is taken up front, so a lease grant's read and
 * write can never interleave with another process's grant.
 */
#include "autoconf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "err.h"
#include "log.h"
#include "store.h"
#include "store-backend.h"
#include "task.h"
#include "xmalloc.h"

#define SQ_BUSY_MS	10000

/*
 * Prepared statements are kept per connection and reused: parsing the SQL
 * was the largest single cost of a tool call (profiled: a third of
 * SQLite's time in its parser).  The key is the SQL's address, a string
 * literal of one call site; an entry in use is never handed out twice.
 */
#define SQ_CACHE	64

struct sq_cached {
	const char	*sql;
	sqlite3_stmt	*st;
	int		 in_use;
};

struct sq {
	sqlite3			*db;
	int64_t			 busy_ms;	/* waited in this busy spell */
	struct sq_cached	 cache[SQ_CACHE];
	int			 ncache;
};

/*
 * SQLite's busy handler: another connection holds the lock.  Back off 1,
 * 2, 4 ... 32 ms, SQ_BUSY_MS in all, then give up (SQLITE_BUSY becomes
 * STATE_STORE_ERROR).  Waiting yields the task; only code outside tasks
 * (unit tests, start-up) sleeps.
 */
static int
sq_busy(void *arg, int n)
{
	struct sq	*q = arg;
	int64_t		 ms = n < 5 ? (INT64_C(1) << n) : 32;
	struct timespec	 ts;

	if (n == 0)
		q->busy_ms = 0;
	if (q->busy_ms >= SQ_BUSY_MS)
		return 0;
	q->busy_ms += ms;
	if (task_self() != NULL)
		(void)task_sleep(ms);
	else {
		ts.tv_sec = 0;
		ts.tv_nsec = (long)ms * 1000000L;
		nanosleep(&ts, NULL);
	}
	return 1;
}

/* Numbered schema steps; append, never edit a published one. */
static const char *const sq_migrations[] = {
	/* 1: the tables of C-2. */
	"CREATE TABLE computers ("
	"  id TEXT PRIMARY KEY, provider TEXT NOT NULL, state TEXT NOT NULL,"
	"  ref TEXT NOT NULL DEFAULT '{}', created_ms INTEGER NOT NULL,"
	"  updated_ms INTEGER NOT NULL, last_used_ms INTEGER NOT NULL);"
	"CREATE TABLE bots ("
	"  computer TEXT NOT NULL, bot TEXT NOT NULL,"
	"  fence INTEGER NOT NULL DEFAULT 0,"
	"  run_state TEXT NOT NULL DEFAULT 'idle',"
	"  PRIMARY KEY (computer, bot));"
	"CREATE TABLE leases ("
	"  id TEXT PRIMARY KEY, computer TEXT NOT NULL, bot TEXT NOT NULL,"
	"  kind TEXT NOT NULL, holder TEXT NOT NULL, fence INTEGER NOT NULL,"
	"  acquired_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL,"
	"  UNIQUE (computer, bot, kind));"
	"CREATE TABLE computer_runs ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT, computer TEXT NOT NULL,"
	"  started_ms INTEGER NOT NULL, ended_ms INTEGER NOT NULL DEFAULT 0,"
	"  end_reason TEXT NOT NULL DEFAULT '');"
	"CREATE INDEX computer_runs_open ON computer_runs (computer, ended_ms);"
	"CREATE TABLE activity_events ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT, computer TEXT NOT NULL,"
	"  bot TEXT NOT NULL, ts_ms INTEGER NOT NULL, kind TEXT NOT NULL,"
	"  tool TEXT NOT NULL, ok INTEGER NOT NULL, text TEXT NOT NULL);"
	"CREATE INDEX activity_by_computer ON activity_events (computer, id);"
	"CREATE TABLE maintenance_ops ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT, computer TEXT NOT NULL,"
	"  kind TEXT NOT NULL, state TEXT NOT NULL, phase TEXT,"
	"  created_ms INTEGER NOT NULL, heartbeat_ms INTEGER);"
	"CREATE TABLE home_revisions ("
	"  computer TEXT NOT NULL, revision INTEGER NOT NULL,"
	"  created_ms INTEGER NOT NULL, bytes INTEGER,"
	"  PRIMARY KEY (computer, revision));",
	/* 2: capabilities granted under a lease (token: only rows
	 * written before guestd revoked by id; store.h). */
	"CREATE TABLE capabilities ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT, lease TEXT NOT NULL,"
	"  computer TEXT NOT NULL, bot TEXT NOT NULL, cap_id TEXT NOT NULL,"
	"  token TEXT NOT NULL, created_ms INTEGER NOT NULL);"
	"CREATE INDEX capabilities_by_lease ON capabilities (lease);",
	/* 3: the local provider's users, one per computer; a deleted
	 * computer's row stays (computer NULL) so its uid is never reused. */
	"CREATE TABLE local_uids ("
	"  uid INTEGER PRIMARY KEY, computer TEXT UNIQUE,"
	"  created_ms INTEGER NOT NULL, retired_ms INTEGER);",
	/* 4: what a home revision holds (C-9); portable ALTERs. */
	"ALTER TABLE home_revisions ADD COLUMN files INTEGER NOT NULL "
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

#define SQ_NMIGRATIONS	(sizeof(sq_migrations) / sizeof(sq_migrations[0]))

static int
sq_code(sqlite3 *db, int rc)
{
	switch (rc) {
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW:
		return 0;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return ERR_BUSY;
	case SQLITE_CONSTRAINT:
		return ERR_EXISTS;
	case SQLITE_NOMEM:
		return ERR_NOMEM;
	case SQLITE_FULL:
		/* The disk (or a quota) is full: the operator's to free. */
		return ERR_NO_SPACE;
	default:
		log_warn("store.sqlite", "rc=%d xrc=%d errno=%d msg=\"%s\"",
		    rc, sqlite3_extended_errcode(db), sqlite3_system_errno(db),
		    sqlite3_errmsg(db));
		return ERR_STORE;
	}
}

/*
 * Prepare sql and bind arguments described by types: 's' const char *,
 * 'i' int64_t.  Returns the statement or NULL (with *r set).
 */
static sqlite3_stmt *
sq_stmt(struct sq *q, const char *sql, int *rc)
{
	struct sq_cached	*c;
	sqlite3_stmt		*st = NULL;
	int			 i;

	for (i = 0; i < q->ncache; i++) {
		c = &q->cache[i];
		if (c->sql == sql && !c->in_use) {
			c->in_use = 1;
			*rc = SQLITE_OK;
			return c->st;
		}
	}
	*rc = sqlite3_prepare_v3(q->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
	    &st, NULL);
	if (*rc != SQLITE_OK)
		return NULL;
	if (q->ncache < SQ_CACHE) {
		c = &q->cache[q->ncache++];
		c->sql = sql;
		c->st = st;
		c->in_use = 1;
	}
	return st;
}

/* Done with st: back to the cache (reset, unbound) or finalized. */
static void
sq_release(struct sq *q, sqlite3_stmt *st)
{
	int	 i;

	if (st == NULL)
		return;
	for (i = 0; i < q->ncache; i++)
		if (q->cache[i].st == st) {
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			q->cache[i].in_use = 0;
			return;
		}
	sqlite3_finalize(st);
}

static void
sq_cache_free(struct sq *q)
{
	while (q->ncache > 0)
		sqlite3_finalize(q->cache[--q->ncache].st);
}

static sqlite3_stmt *
sq_prepare(struct sq *q, int *r, const char *sql, const char *types, ...)
{
	sqlite3		*db = q->db;
	sqlite3_stmt	*st = NULL;
	va_list		 ap;
	int		 i, rc;

	if ((st = sq_stmt(q, sql, &rc)) == NULL) {
		*r = sq_code(db, rc);
		return NULL;
	}
	va_start(ap, types);
	for (i = 0; types[i] != '\0'; i++) {
		if (types[i] == 's')
			rc = sqlite3_bind_text(st, i + 1,
			    va_arg(ap, const char *), -1, SQLITE_TRANSIENT);
		else
			rc = sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
		if (rc != SQLITE_OK)
			break;
	}
	va_end(ap);
	if (rc != SQLITE_OK) {
		*r = sq_code(db, rc);
		sq_release(q, st);
		return NULL;
	}
	*r = 0;
	return st;
}

/* Step a statement that returns no rows; releases it. */
static int
sq_done(struct sq *q, sqlite3_stmt *st, const int *r)
{
	int	 rc;

	/* r is read only here, after sq_prepare() (an argument) ran. */
	if (st == NULL)
		return *r;
	rc = sqlite3_step(st);
	/* The code before the reset: reset would repeat a failure's. */
	rc = rc == SQLITE_DONE ? 0 : sq_code(q->db, rc);
	sq_release(q, st);
	return rc;
}

static void
sq_text(sqlite3_stmt *st, int col, char *dst, size_t len)
{
	const unsigned char	*t = sqlite3_column_text(st, col);

	snprintf(dst, len, "%s", t != NULL ? (const char *)t : "");
}

static int
sq_exec(sqlite3 *db, const char *sql)
{
	int	 rc;

	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	return sq_code(db, rc);
}

static int
sq_begin(void *impl)
{
	return sq_exec(((struct sq *)impl)->db, "BEGIN IMMEDIATE");
}

static int
sq_commit(void *impl)
{
	return sq_exec(((struct sq *)impl)->db, "COMMIT");
}

static void
sq_rollback(void *impl)
{
	sqlite3	*db = ((struct sq *)impl)->db;

	/* A commit that failed for a full disk already rolled back. */
	if (!sqlite3_get_autocommit(db))
		sq_exec(db, "ROLLBACK");
}

/* store_end()'s twin for the migrations, which run before a store exists. */
static int
sq_end(struct sq *q, int r)
{
	if (r == 0)
		r = sq_commit(q);
	if (r != 0)
		sq_rollback(q);
	return r;
}

static int
sq_migrate(struct sq *q, struct errmsg *err)
{
	sqlite3_stmt	*st;
	int64_t		 have = 0;
	size_t		 i;
	int		 r;

	/*
	 * The common case, every request: up to date, no write lock.  A new
	 * file has no table yet: that failure is expected, not logged.
	 */
	if (sqlite3_prepare_v2(q->db, "SELECT coalesce(max(version), 0) FROM "
	    "schema_migrations", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			have = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		if (have >= (int64_t)SQ_NMIGRATIONS)
			return 0;
	}
	if ((r = sq_exec(q->db, "CREATE TABLE IF NOT EXISTS schema_migrations"
	    " (version INTEGER PRIMARY KEY, applied_ms INTEGER NOT NULL)")) != 0)
		goto fail;
	for (i = 0; i < SQ_NMIGRATIONS; i++) {
		/* Re-check inside the lock: another process may have won. */
		if ((r = sq_begin(q)) != 0)
			goto fail;
		st = sq_prepare(q, &r, "SELECT coalesce(max(version), 0) "
		    "FROM schema_migrations", "");
		if (st == NULL) {
			(void)sq_end(q, r);
			goto fail;
		}
		if (sqlite3_step(st) == SQLITE_ROW)
			have = sqlite3_column_int64(st, 0);
		sq_release(q, st);
		if ((int64_t)i < have) {
			(void)sq_end(q, 0);
			continue;
		}
		if ((r = sq_exec(q->db, sq_migrations[i])) == 0)
			r = sq_done(q, sq_prepare(q, &r, "INSERT INTO "
			    "schema_migrations VALUES (?, ?)", "ii",
			    (int64_t)i + 1, store_now_ms()), &r);
		if ((r = sq_end(q, r)) != 0)
			goto fail;
	}
	return 0;
fail:
	errmsg_set(err, r, "state store migration failed: %s",
	    sqlite3_errmsg(q->db));
	return r;
}

static int
sq_open(void **impl, const char *path, struct errmsg *err)
{
	struct sq	*q;
	int		 r = ERR_STORE, rc;

	*impl = NULL;
	q = xcalloc(1, sizeof *q);
	rc = sqlite3_open_v2(path, &q->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		errmsg_set(err, r, "cannot open the state store: %s",
		    q->db != NULL ? sqlite3_errmsg(q->db) : "out of memory");
		goto out;
	}
	sqlite3_busy_handler(q->db, sq_busy, q);
	if ((r = sq_exec(q->db, "PRAGMA journal_mode=WAL")) != 0 ||
	    (r = sq_exec(q->db, "PRAGMA synchronous=NORMAL")) != 0 ||
	    (r = sq_exec(q->db, "PRAGMA foreign_keys=ON")) != 0) {
		errmsg_set(err, r, "cannot set up the state store: %s",
		    sqlite3_errmsg(q->db));
		goto out;
	}
	if ((r = sq_migrate(q, err)) != 0)
		goto out;
	*impl = q;
	q = NULL;
	r = 0;
out:
	if (q != NULL) {
		sq_cache_free(q);
		sqlite3_close(q->db);
		free(q);
	}
	return r;
}

static void
sq_close(void *impl)
{
	struct sq	*q = impl;

	if (q == NULL)
		return;
	sq_cache_free(q);
	sqlite3_close(q->db);
	free(q);
}

static int
sq_schema_version(void *impl, int64_t *v)
{
	struct sq	*q = impl;
	sqlite3_stmt	*st;
	int		 r;

	*v = 0;
	st = sq_prepare(q, &r, "SELECT coalesce(max(version), 0) FROM "
	    "schema_migrations", "");
	if (st == NULL)
		return r;
	if (sqlite3_step(st) == SQLITE_ROW)
		*v = sqlite3_column_int64(st, 0);
	else
		r = ERR_STORE;
	sq_release(q, st);
	return r;
}

static int
sq_in_tx(void *impl)
{
	return !sqlite3_get_autocommit(((struct sq *)impl)->db);
}

/*
 * store_write_check(): a row no migration has (version 0) inserted and
 * deleted in the frame.  The page is dirty either way, so the commit
 * appends it to the WAL as a grant would, and fails as a grant would on
 * a full disk; a rolled-back or no-op write would never touch the file.
 */
static int
sq_write_probe(void *impl)
{
	struct sq	*q = impl;
	int		 r;

	if ((r = sq_done(q, sq_prepare(q, &r, "INSERT OR IGNORE INTO "
	    "schema_migrations VALUES (0, 0)", ""), &r)) != 0)
		return r;
	return sq_done(q, sq_prepare(q, &r, "DELETE FROM schema_migrations "
	    "WHERE version = 0", ""), &r);
}

/* ---- computers ----------------------------------------------------------- */

#define SQ_COMPUTER_COLS \
	"id, provider, state, ref, created_ms, updated_ms, last_used_ms"

static void
sq_computer_row(sqlite3_stmt *st, struct store_computer *c)
{
	memset(c, 0, sizeof *c);
	sq_text(st, 0, c->id, sizeof c->id);
	sq_text(st, 1, c->provider, sizeof c->provider);
	sq_text(st, 2, c->state, sizeof c->state);
	sq_text(st, 3, c->ref, sizeof c->ref);
	c->created_ms = sqlite3_column_int64(st, 4);
	c->updated_ms = sqlite3_column_int64(st, 5);
	c->last_used_ms = sqlite3_column_int64(st, 6);
}

static int
sq_computer_create(void *impl, const struct store_computer *c)
{
	struct sq	*q = impl;
	int		 r;

	return sq_done(q, sq_prepare(q, &r, "INSERT INTO computers ("
	    SQ_COMPUTER_COLS ") VALUES (?, ?, ?, ?, ?, ?, ?)", "ssssiii",
	    c->id, c->provider, c->state, c->ref, c->created_ms,
	    c->updated_ms, c->last_used_ms), &r);
}

static int
sq_computer_get(void *impl, const char *id, struct store_computer *out)
{
	struct sq	*q = impl;
	sqlite3_stmt	*st;
	int		 r, rc;

	st = sq_prepare(q, &r, "SELECT " SQ_COMPUTER_COLS " FROM computers "
	    "WHERE id = ?", "s", id);
	if (st == NULL)
		return r;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		sq_computer_row(st, out);
	else
		r = rc == SQLITE_DONE ? ERR_NOT_FOUND : sq_code(q->db, rc);
	sq_release(q, st);
	return r;
}

static int
sq_changed(sqlite3 *db, int r)
{
	if (r == 0 && sqlite3_changes(db) == 0)
		return ERR_NOT_FOUND;
	return r;
}

static int
sq_computer_update(void *impl, const struct store_computer *c)
{
	struct sq	*q = impl;
	int		 r;

	r = sq_done(q, sq_prepare(q, &r, "UPDATE computers SET "
	    "provider = ?, state = ?, ref = ?, updated_ms = ?, "
	    "last_used_ms = ? WHERE id = ?", "sssiis", c->provider, c->state,
	    c->ref, c->updated_ms, c->last_used_ms, c->id), &r);
	return sq_changed(q->db, r);
}

static int
sq_computer_touch(void *impl, const char *id, int64_t now)
{
	struct sq	*q = impl;
	int		 r;

	r = sq_done(q, sq_prepare(q, &r, "UPDATE computers SET "
	    "last_used_ms = ? WHERE id = ?", "is", now, id), &r);
	return sq_changed(q->db, r);
}

static int
sq_computer_home_key_get(void *impl, const char *id, char *out, size_t len)
{
	struct sq	*q = impl;
	sqlite3_stmt	*st;
	const unsigned char *v;
	int		 r, rc;

	st = sq_prepare(q, &r, "SELECT home_key FROM computers WHERE id = ?",
	    "s", id);
	if (st == NULL)
		return r;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = sqlite3_column_text(st, 0);
		snprintf(out, len, "%s", v != NULL ? (const char *)v : "");
	} else
		r = rc == SQLITE_DONE ? ERR_NOT_FOUND : sq_code(q->db, rc);
	sq_release(q, st);
	return r;
}

static int
sq_computer_home_key_set(void *impl, const char *id, const char *hex)
{
	struct sq	*q = impl;
	int		 r;

	r = sq_done(q, sq_prepare(q, &r, "UPDATE computers SET home_key = ? "
	    "WHERE id = ?", "ss", hex, id), &r);
	return sq_changed(q->db, r);
}

static int
sq_computer_delete(void *impl, const char *id)
{
	struct sq	*q = impl;
	int		 r;

	r = sq_done(q, sq_prepare(q, &r, "DELETE FROM bots WHERE "
	    "computer = ?", "s", id), &r);
	if (r == 0)
		r = sq_done(q, sq_prepare(q, &r, "DELETE FROM leases "
		    "WHERE computer = ?", "s", id), &r);
	/* Its guestd is gone with it, and so are the capabilities. */
	if (r == 0)
		r = sq_done(q, sq_prepare(q, &r, "DELETE FROM "
		    "capabilities WHERE computer = ?", "s", id), &r);
	if (r == 0) {
		r = sq_done(q, sq_prepare(q, &r, "DELETE FROM "
		    "computers WHERE id = ?", "s", id), &r);
		r = sq_changed(q->db, r);
	}
	return r;
}

/* Collect rows of st into a growing array of size elemsize. */
static int
sq_collect(struct sq *q, sqlite3_stmt *st, size_t elemsize,
    void (*row)(sqlite3_stmt *, void *), void **out, size_t *n)
{
	sqlite3	*db = q->db;
	char	*arr = NULL;
	size_t	 cnt = 0, cap = 0;
	int	 rc, r = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			arr = xrealloc(arr, cap * elemsize);
		}
		row(st, arr + cnt * elemsize);
		cnt++;
	}
	if (rc != SQLITE_DONE) {
		r = sq_code(db, rc);
		free(arr);
		arr = NULL;
		cnt = 0;
	}
	sq_release(q, st);
	*out = arr;
	*n = cnt;
	return r;
}

static void
sq_computer_row_v(sqlite3_stmt *st, void *p)
{
	sq_computer_row(st, p);
}

static int
sq_computer_list(void *impl, struct store_computer **out, size_t *n)
{
	struct sq	*q = impl;
	sqlite3_stmt	*st;
	int		 r;

	*out = NULL;
	*n = 0;
	st = sq_prepare(q, &r, "SELECT " SQ_COMPUTER_COLS " FROM computers "
	    "ORDER BY created_ms, id", "");
	if (st == NULL)
		return r;
	return sq_collect(q, st, sizeof **out, sq_computer_row_v,
	    (void **)out, n);
}

/* ---- bots ------------------------------------------------------------- */

static int
sq_bot_ensure(void *impl, const char *computer, const char *bot,
    struct store_bot *out)
{
	struct sq	*q = impl;
	sqlite3_stmt	*st;
	int		 r, rc;

	r = sq_done(q, sq_prepare(q, &r, "INSERT OR IGNORE INTO bots "
	    "(computer, bot) VALUES (?, ?)", "ss", computer, bot), &r);
	if (r != 0)
		return r;
	st = sq_prepare(q, &r, "SELECT fence, run_state FROM bots WHERE "
	    "computer = ? AND bot = ?", "ss", computer, bot);
	if (st == NULL)
		return r;
	memset(out, 0, sizeof *out);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		snprintf(out->computer, sizeof out->computer, "%s", computer);
		snprintf(out->bot, sizeof out->bot, "%s", bot);
		out->fence = sqlite3_column_int64(st, 0);
		sq_text(st, 1, out->run_state, sizeof out->run_state);
	} else
		r = rc == SQLITE_DONE ? ERR_NOT_FOUND : sq_code(q->db, rc);
	sq_release(q, st);
	return r;
}

static int
sq_bot_update(void *impl, const struct store_bot *b)
{
	struct sq	*q = impl;
	int		 r;

	r = sq_done(q, sq_prepare(q, &r, "UPDATE bots SET fence = ?, "
	    "run_state = ? WHERE computer = ? AND bot = ?", "isss", b->fence,
	    b->run_state, b->computer, b->bot), &r);
	return sq_changed(q->db, r);
}

/* ---- leases ----------------------------------------------------------- */

#define SQ_LEASE_COLS \
	"id, computer, bot, kind, holder, fence, acquired_ms, expires_ms"

static void
sq_lease_row(sqlite3_stmt *st, struct store_lease *l)
{
	memset(l, 0, sizeof *l);
	sq_text(st, 0, l->id, sizeof l->id);
	sq_text(st, 1, l->computer, sizeof l->computer);
	sq_text(st, 2, l->bot, sizeof l->bot);
	sq_text(st, 3, l->kind, sizeof l->kind);
	sq_text(st, 4, l->holder, sizeof l->holder);
	l->fence = sqlite3_column_int64(st, 5);
	l->acquired_ms = sqlite3_column_int64(st, 6);
	l->expires_ms = sqlite3_column_int64(st, 7);
}

static int
sq_lease_one(struct sq *q, sqlite3_stmt *st, int r, struct store_lease *out)
{
	int	 rc;

	if (st == NULL)
		return r;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		sq_lease_row(st, out);
	else
		r = rc == SQLITE_DONE ? ERR_NOT_FOUND : sq_code(q->db, rc);
	sq_release(q, st);
	return r;
}

static int
sq_lease_find(void *impl, const char *computer, const char *bot,
    const char *kind, struct store_lease *out)
{
	struct sq	*q = impl;
	int		 r;
	sqlite3_stmt	*st;

	st = sq_prepare(q, &r, "SELECT " SQ_LEASE_COLS " FROM leases WHERE "
	    "computer = ? AND bot = ? AND kind = ?", "sss", computer, bot, kind);
	return sq_lease_one(q, st, r, out);
}

static int
sq_lease_get(void *impl, const char *id, struct store_lease *out)
{
	struct sq	*q = impl;
	int		 r;
	sqlite3_stmt	*st;

	st = sq_prepare(q, &r, "SELECT " SQ_LEASE_COLS " FROM leases WHERE "
	    "id = ?", "s", id);
	return sq_lease_one(q, st, r, out);
}

static int
sq_lease_put(void *impl, const struct store_lease *l)
{
	struct sq	*q = impl;
	int		 r;

	return sq_done(q, sq_prepare(q, &r, "INSERT OR REPLACE INTO "
	    "leases (" SQ_LEASE_COLS ") VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
	    "sssssiii", l->id, l->computer, l->bot, l->kind, l->holder,
	    l->fence, l->acquired_ms, l->expires_ms), &r);
}

static int
sq_lease_delete(void *impl, const char *id)
{
	struct sq	*q = impl;
	int		 r;

	r = sq_done(q, sq_prepare(q, &r, "DELETE FROM leases WHERE "
	    "id = ?", "s", id), &r);
	return sq_changed(q->db, r);
}

static int
sq_lease_delete_computer(void *impl, const char *computer)
{
	struct sq	*q = impl;
	int		 r;

	return sq_done(q, sq_prepare(q, &r, "DELETE FROM leases WHERE "
	    "computer = ?", "s", computer), &r);
}

static int
sq_lease_count_live(void *impl, const char *computer, int64_t now,
    int64_t *n)
{
	struct sq	*q = impl;
	sqlite3_stmt	*st;
	int		 r;

	*n = 0;
	st = sq_prepare(q, &r, "SELECT count(*) FROM leases WHERE "
	    "computer = ? AND expires_ms > ?", "si", computer, now);
	if (st == NULL)
		return r;
	if (sqlite3_step(st) == SQLITE_ROW)
		*n = sqlite3_column_int64(st, 0);
	else
		r = ERR_STORE;
	sq_release(q, st);
	return r;
}

/* ---- runs ------------------------------------------------------------- */

static void
sq_run_row(sqlite3_stmt *st, void *p)
{
	struct store_run	*u = p;

	memset(u, 0, sizeof *u);
	u->id = sqlite3_column_int64(st, 0);
	sq_text(st, 1, u->computer, sizeof u->computer);
	u->started_ms = sqlite3_column_int64(st, 2);
	u->ended_ms = sqlite3_column_int64(st, 3);
	sq_text(st, 4, u->end_reason, sizeof u->end_reason);
}

static int
sq_run_open(void *impl, const char *computer, int64_t now, int64_t *id)
{
	struct sq	*q = impl;
	int		 r;

	r = sq_done(q, sq_prepare(q, &r, "INSERT INTO computer_runs "
	    "(computer, started_ms) VALUES (?, ?)", "si", computer, now), &r);
	if (r == 0 && id != NULL)
		*id = sqlite3_last_insert_rowid(q->db);
	return r;
}

static int
sq_run_current(void *impl, const char *computer, struct store_run *out)
{
	struct sq	*q = impl;
	sqlite3_stmt	*st;
	int		 r, rc;

	st = sq_prepare(q, &r, "SELECT id, computer, started_ms, ended_ms, "
	    "end_reason FROM computer_runs WHERE computer = ? AND "
	    "ended_ms = 0 ORDER BY id DESC LIMIT 1", "s", computer);
	if (st == NULL)
		return r;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		sq_run_row(st, out);
	else
		r = rc == SQLITE_DONE ? ERR_NOT_FOUND : sq_code(q->db, rc);
	sq_release(q, st);
	return r;
}

static int
sq_run_close(void *impl, int64_t id, int64_t now, const char *reason)
{
	struct sq	*q = impl;
	int		 r;

	r = sq_done(q, sq_prepare(q, &r, "UPDATE computer_runs SET "
	    "ended_ms = ?, end_reason = ? WHERE id = ? AND ended_ms = 0", "isi",
	    now, reason, id), &r);
	return sq_changed(q->db, r);
}

static int
sq_run_list(void *impl, const char *computer, struct store_run **out,
    size_t *n)
{
	struct sq	*q = impl;
	sqlite3_stmt	*st;
	int		 r;

	*out = NULL;
	*n = 0;
	st = sq_prepare(q, &r, "SELECT id, computer, started_ms, ended_ms, "
	    "end_reason FROM computer_runs WHERE computer = ? ORDER BY id", "s",
	    computer);
	if (st == NULL)
		return r;
	return sq_collect(q, st, sizeof **out, sq_run_row, (void **)out,
	    n);
}

/* ---- activity --------------------------------------------------------- */

static void
sq_event_row(sqlite3_stmt *st, void *p)
{
	struct store_event	*e = p;

	memset(e, 0, sizeof *e);
	e->id = sqlite3_column_int64(st, 0);
	sq_text(st, 1, e->computer, sizeof e->computer);
	sq_text(st, 2, e->bot, sizeof e->bot);
	e->ts_ms = sqlite3_column_int64(st, 3);
	sq_text(st, 4, e->kind, sizeof e->kind);
	sq_text(st, 5, e->tool, sizeof e->tool);
	e->ok = (int)sqlite3_column_int64(st, 6);
	sq_text(st, 7, e->text, sizeof e->text);
}

static int
sq_event_add(void *impl, struct store_event *e)
{
	struct sq	*q = impl;
	int		 r;

	r = sq_done(q, sq_prepare(q, &r, "INSERT INTO activity_events "
	    "(computer, bot, ts_ms, kind, tool, ok, text) VALUES "
	    "(?, ?, ?, ?, ?, ?, ?)", "ssissis", e->computer, e->bot, e->ts_ms,
	    e->kind, e->tool, (int64_t)e->ok, e->text), &r);
	if (r == 0)
		e->id = sqlite3_last_insert_rowid(q->db);
	return r;
}

static int
sq_event_list(void *impl, const char *computer, int64_t after, size_t limit,
    struct store_event **out, size_t *n)
{
	struct sq	*q = impl;
	sqlite3_stmt	*st;
	int		 r;

	*out = NULL;
	*n = 0;
	st = sq_prepare(q, &r, "SELECT id, computer, bot, ts_ms, kind, "
	    "tool, ok, text FROM activity_events WHERE computer = ? AND id > ? "
	    "ORDER BY id LIMIT ?", "sii", computer, after, (int64_t)limit);
	if (st == NULL)
		return r;
	return sq_collect(q, st, sizeof **out, sq_event_row, (void **)out,
	    n);
}

/* ---- capabilities ----------------------------------------------------- */

#define SQ_CAP_COLS	"c.id, c.lease, c.computer, c.bot, c.cap_id, c.token, " \
			"c.created_ms"

static void
sq_cap_row(sqlite3_stmt *st, void *p)
{
	struct store_cap	*c = p;

	memset(c, 0, sizeof *c);
	c->id = sqlite3_column_int64(st, 0);
	sq_text(st, 1, c->lease, sizeof c->lease);
	sq_text(st, 2, c->computer, sizeof c->computer);
	sq_text(st, 3, c->bot, sizeof c->bot);
	sq_text(st, 4, c->cap_id, sizeof c->cap_id);
	sq_text(st, 5, c->token, sizeof c->token);
	c->created_ms = sqlite3_column_int64(st, 6);
}

static int
sq_cap_add(void *impl, struct store_cap *c)
{
	struct sq	*q = impl;
	int		 r;

	r = sq_done(q, sq_prepare(q, &r, "INSERT INTO capabilities "
	    "(lease, computer, bot, cap_id, token, created_ms) VALUES "
	    "(?, ?, ?, ?, ?, ?)", "sssssi", c->lease, c->computer, c->bot,
	    c->cap_id, c->token, c->created_ms), &r);
	if (r == 0)
		c->id = sqlite3_last_insert_rowid(q->db);
	return r;
}

static int
sq_cap_list_lease(void *impl, const char *lease, struct store_cap **out,
    size_t *n)
{
	struct sq	*q = impl;
	sqlite3_stmt	*st;
	int		 r;

	*out = NULL;
	*n = 0;
	st = sq_prepare(q, &r, "SELECT " SQ_CAP_COLS " FROM capabilities c "
	    "WHERE c.lease = ? ORDER BY c.id", "s", lease);
	if (st == NULL)
		return r;
	return sq_collect(q, st, sizeof **out, sq_cap_row, (void **)out,
	    n);
}

static int
sq_cap_list_dead(void *impl, int64_t now, struct store_cap **out, size_t *n)
{
	struct sq	*q = impl;
	sqlite3_stmt	*st;
	int		 r;

	*out = NULL;
	*n = 0;
	/* A replaced lease row is gone: its capabilities are dead too. */
	st = sq_prepare(q, &r, "SELECT " SQ_CAP_COLS " FROM capabilities c "
	    "LEFT JOIN leases l ON l.id = c.lease "
	    "WHERE l.id IS NULL OR l.expires_ms <= ? ORDER BY c.id", "i", now);
	if (st == NULL)
		return r;
	return sq_collect(q, st, sizeof **out, sq_cap_row, (void **)out,
	    n);
}

static int
sq_cap_delete(void *impl, int64_t id)
{
	struct sq	*q = impl;
	int		 r;

	return sq_done(q, sq_prepare(q, &r, "DELETE FROM capabilities "
	    "WHERE id = ?", "i", id), &r);
}

static int
sq_cap_next_expiry(void *impl, int64_t *at)
{
	struct sq	*q = impl;
	sqlite3_stmt	*st;
	int		 r, rc;

	*at = 0;
	st = sq_prepare(q, &r, "SELECT coalesce(min(l.expires_ms), 0) "
	    "FROM capabilities c JOIN leases l ON l.id = c.lease", "");
	if (st == NULL)
		return r;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*at = sqlite3_column_int64(st, 0);
	sq_release(q, st);
	return rc == SQLITE_ROW ? 0 : sq_code(q->db, rc);
}

static int
sq_uid_get(void *impl, const char *computer, int64_t *uid)
{
	struct sq	*q = impl;
	sqlite3_stmt	*st;
	int		 r, rc;

	*uid = -1;
	st = sq_prepare(q, &r, "SELECT uid FROM local_uids WHERE computer = ?",
	    "s", computer);
	if (st == NULL)
		return r;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*uid = sqlite3_column_int64(st, 0);
	sq_release(q, st);
	if (rc == SQLITE_DONE)
		return ERR_NOT_FOUND;
	return rc == SQLITE_ROW ? 0 : sq_code(q->db, rc);
}

static void
sq_uid_row(sqlite3_stmt *st, void *p)
{
	*(int64_t *)p = sqlite3_column_int64(st, 0);
}

static int
sq_uid_list(void *impl, int64_t **out, size_t *n)
{
	struct sq	*q = impl;
	sqlite3_stmt	*st;
	int		 r;

	*out = NULL;
	*n = 0;
	st = sq_prepare(q, &r, "SELECT uid FROM local_uids ORDER BY uid", "");
	if (st == NULL)
		return r;
	return sq_collect(q, st, sizeof **out, sq_uid_row, (void **)out, n);
}

static int
sq_uid_add(void *impl, const char *computer, int64_t uid, int64_t now)
{
	struct sq	*q = impl;
	int		 r;

	return sq_done(q, sq_prepare(q, &r, "INSERT INTO local_uids "
	    "(uid, computer, created_ms) VALUES (?, ?, ?)", "isi", uid,
	    computer, now), &r);
}

static int
sq_uid_retire(void *impl, const char *computer, int64_t now)
{
	struct sq	*q = impl;
	int		 r;

	return sq_done(q, sq_prepare(q, &r, "UPDATE local_uids SET "
	    "computer = NULL, retired_ms = ? WHERE computer = ?", "is", now,
	    computer), &r);
}

/* ---- home revisions --------------------------------------------------- */

#define SQ_HOME_COLS \
	"computer, revision, created_ms, bytes, files, sha256, cause, " \
	"fingerprint"

static void
sq_home_row(sqlite3_stmt *st, void *p)
{
	struct store_home_rev	*h = p;

	memset(h, 0, sizeof *h);
	sq_text(st, 0, h->computer, sizeof h->computer);
	h->revision = sqlite3_column_int64(st, 1);
	h->created_ms = sqlite3_column_int64(st, 2);
	h->bytes = sqlite3_column_int64(st, 3);
	h->files = sqlite3_column_int64(st, 4);
	sq_text(st, 5, h->sha256, sizeof h->sha256);
	sq_text(st, 6, h->cause, sizeof h->cause);
	sq_text(st, 7, h->fingerprint, sizeof h->fingerprint);
}

static int
sq_home_rev_add(void *impl, const struct store_home_rev *h)
{
	struct sq	*q = impl;
	int		 r;

	return sq_done(q, sq_prepare(q, &r, "INSERT INTO home_revisions ("
	    SQ_HOME_COLS ") VALUES (?, ?, ?, ?, ?, ?, ?, ?)", "siiiisss",
	    h->computer, h->revision, h->created_ms, h->bytes, h->files,
	    h->sha256, h->cause, h->fingerprint), &r);
}

static int
sq_home_rev_list(void *impl, const char *computer,
    struct store_home_rev **out, size_t *n)
{
	struct sq	*q = impl;
	sqlite3_stmt	*st;
	int		 r;

	*out = NULL;
	*n = 0;
	st = sq_prepare(q, &r, "SELECT " SQ_HOME_COLS " FROM home_revisions "
	    "WHERE computer = ? ORDER BY revision DESC", "s", computer);
	if (st == NULL)
		return r;
	return sq_collect(q, st, sizeof **out, sq_home_row, (void **)out, n);
}

static int
sq_home_rev_latest(void *impl, const char *computer,
    struct store_home_rev *out)
{
	struct sq	*q = impl;
	sqlite3_stmt	*st;
	int		 r, rc;

	st = sq_prepare(q, &r, "SELECT " SQ_HOME_COLS " FROM home_revisions "
	    "WHERE computer = ? ORDER BY revision DESC LIMIT 1", "s",
	    computer);
	if (st == NULL)
		return r;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		sq_home_row(st, out);
	else
		r = rc == SQLITE_DONE ? ERR_NOT_FOUND : sq_code(q->db, rc);
	sq_release(q, st);
	return r;
}

static int
sq_home_rev_delete(void *impl, const char *computer, int64_t rev)
{
	struct sq	*q = impl;
	int		 r;

	return sq_done(q, sq_prepare(q, &r, "DELETE FROM home_revisions "
	    "WHERE computer = ? AND revision = ?", "si", computer, rev), &r);
}

const struct store_ops store_sqlite_ops = {
	.name = "sqlite",
	.open = sq_open,
	.close = sq_close,
	.schema_version = sq_schema_version,
	.begin = sq_begin,
	.commit = sq_commit,
	.rollback = sq_rollback,
	.in_tx = sq_in_tx,
	.write_probe = sq_write_probe,
	.computer_create = sq_computer_create,
	.computer_get = sq_computer_get,
	.computer_update = sq_computer_update,
	.computer_touch = sq_computer_touch,
	.computer_delete = sq_computer_delete,
	.computer_home_key_get = sq_computer_home_key_get,
	.computer_home_key_set = sq_computer_home_key_set,
	.computer_list = sq_computer_list,
	.bot_ensure = sq_bot_ensure,
	.bot_update = sq_bot_update,
	.lease_find = sq_lease_find,
	.lease_get = sq_lease_get,
	.lease_put = sq_lease_put,
	.lease_delete = sq_lease_delete,
	.lease_delete_computer = sq_lease_delete_computer,
	.lease_count_live = sq_lease_count_live,
	.run_open = sq_run_open,
	.run_current = sq_run_current,
	.run_close = sq_run_close,
	.run_list = sq_run_list,
	.event_add = sq_event_add,
	.event_list = sq_event_list,
	.cap_add = sq_cap_add,
	.cap_list_lease = sq_cap_list_lease,
	.cap_list_dead = sq_cap_list_dead,
	.cap_delete = sq_cap_delete,
	.cap_next_expiry = sq_cap_next_expiry,
	.uid_get = sq_uid_get,
	.uid_list = sq_uid_list,
	.uid_add = sq_uid_add,
	.uid_retire = sq_uid_retire,
	.home_rev_add = sq_home_rev_add,
	.home_rev_list = sq_home_rev_list,
	.home_rev_latest = sq_home_rev_latest,
	.home_rev_delete = sq_home_rev_delete,
};

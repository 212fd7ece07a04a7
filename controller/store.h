/* SPDX-License-Identifier: MIT */
/*
 * The controller's state store (doc/DESIGN.md C-2): computers, bots, leases,
 * runs, activity, maintenance operations and home revisions.  Callers see only
 * this interface; store.c dispatches to a backend (store-sqlite.c for one
 * host, store-pg.c for controllers sharing a PostgreSQL database) chosen
 * by store_open().
 * Rows are plain structs with fixed-size strings so callers never manage
 * backend memory.
 *
 * Read-modify-write sequences (lease grants) run between store_begin() and
 * store_commit(): the backend takes its write lock at begin (SQLite BEGIN
 * IMMEDIATE; a transaction-scoped advisory lock on PostgreSQL), so several
 * rakazoctl processes serialise through it.  Every function returns 0 or
 * an ERR_* code (ERR_NOT_FOUND for a missing row, ERR_STORE for the backend
 * failing, ERR_STORE_UNAVAILABLE when a database server cannot be reached,
 * ERR_BUSY when the lock could not be had within the busy timeout).
 */
#ifndef CONTROLLER_STORE_H
#define CONTROLLER_STORE_H

#include <stddef.h>
#include <stdint.h>

struct errmsg;

#define STORE_ID_MAX	64
#define STORE_REF_MAX	1024
#define STORE_TEXT_MAX	2048

struct store;

struct store_computer {
	char	 id[STORE_ID_MAX];
	char	 provider[32];
	char	 state[16];		/* stopped, running, deleted */
	char	 ref[STORE_REF_MAX];	/* provider's JSON (pid, port, secret) */
	int64_t	 created_ms;
	int64_t	 updated_ms;
	int64_t	 last_used_ms;		/* last tool call (idle stop, C-6) */
};

struct store_bot {
	char	 computer[STORE_ID_MAX];
	char	 bot[STORE_ID_MAX];
	int64_t	 fence;			/* highest fence granted */
	char	 run_state[24];		/* idle, running, waiting_takeover */
};

struct store_lease {
	char	 id[STORE_ID_MAX];
	char	 computer[STORE_ID_MAX];
	char	 bot[STORE_ID_MAX];
	char	 kind[16];		/* exec, control */
	char	 holder[STORE_ID_MAX];
	int64_t	 fence;
	int64_t	 acquired_ms;
	int64_t	 expires_ms;
};

struct store_run {
	int64_t	 id;
	char	 computer[STORE_ID_MAX];
	int64_t	 started_ms;
	int64_t	 ended_ms;		/* 0 while open */
	char	 end_reason[24];	/* C-7; "" while open */
};

struct store_event {
	int64_t	 id;
	char	 computer[STORE_ID_MAX];
	char	 bot[STORE_ID_MAX];
	int64_t	 ts_ms;
	char	 kind[32];		/* computer.command */
	char	 tool[32];
	int	 ok;
	char	 text[STORE_TEXT_MAX];	/* redacted one-line summary */
};

/*
 * Open the store named by url: "sqlite:PATH", "postgres://..." or
 * "postgresql://..." (a libpq URI), or a plain directory (then
 * DIR/state.db).  Creates and migrates the schema.  err gets a sentence.
 */
int	 store_open(struct store **out, const char *url, struct errmsg *err);
void	 store_free(struct store *s);
/* Backend name ("sqlite", "postgres") and schema version, for health. */
const char *store_backend(const struct store *s);
int	 store_schema_version(struct store *s, int64_t *version);
/* A trivial read; 0 when the store answers. */
int	 store_health(struct store *s);
/*
 * A write that reaches the disk and leaves nothing: 0 when the store
 * can commit now, else why not (NO_SPACE for a full disk, BUSY, ...).
 * A read alone says ok over a store that refuses every write.
 */
int	 store_write_check(struct store *s);

int	 store_begin(struct store *s);
int	 store_commit(struct store *s);
void	 store_rollback(struct store *s);
/*
 * End what store_begin() opened: commit when r is 0, roll back when r is
 * an error or the commit fails.  Returns the final code, so a
 * read-modify-write frame is "begin ... out: return store_end(s, r);".
 */
int	 store_end(struct store *s, int r);
/* 1 while a transaction is open (a handle must not be reused then). */
int	 store_in_tx(struct store *s);

/* Computers.  create fails with ERR_EXISTS. */
int	 store_computer_create(struct store *s, const struct store_computer *c);
int	 store_computer_get(struct store *s, const char *id,
	    struct store_computer *out);
int	 store_computer_update(struct store *s, const struct store_computer *c);
int	 store_computer_touch(struct store *s, const char *id, int64_t now_ms);
int	 store_computer_delete(struct store *s, const char *id);
/*
 * The home's wrapped data key (object home store, C-10), hex; "" when
 * none was made yet.  Setting "" forgets it: the home's objects are
 * unreadable from then on.
 */
int	 store_computer_home_key_get(struct store *s, const char *id,
	    char *out, size_t len);
int	 store_computer_home_key_set(struct store *s, const char *id,
	    const char *hex);
/* *out is malloc'd (free it); *n rows. */
int	 store_computer_list(struct store *s, struct store_computer **out,
	    size_t *n);

/* Bots: get creates nothing; ensure inserts {fence 0, idle} if absent. */
int	 store_bot_ensure(struct store *s, const char *computer,
	    const char *bot, struct store_bot *out);
int	 store_bot_update(struct store *s, const struct store_bot *b);

/* Leases: one row per (computer, bot, kind). */
int	 store_lease_find(struct store *s, const char *computer,
	    const char *bot, const char *kind, struct store_lease *out);
int	 store_lease_get(struct store *s, const char *id,
	    struct store_lease *out);
/* Insert or replace the (computer, bot, kind) row. */
int	 store_lease_put(struct store *s, const struct store_lease *l);
int	 store_lease_delete(struct store *s, const char *id);
/* Delete every lease of a computer (stop, delete). */
int	 store_lease_delete_computer(struct store *s, const char *computer);
/* Count leases not expired at now_ms on computer (idle stop). */
int	 store_lease_count_live(struct store *s, const char *computer,
	    int64_t now_ms, int64_t *n);

/* Runs (C-7). */
int	 store_run_open(struct store *s, const char *computer, int64_t now_ms,
	    int64_t *id);
/* The open run of computer, or ERR_NOT_FOUND. */
int	 store_run_current(struct store *s, const char *computer,
	    struct store_run *out);
int	 store_run_close(struct store *s, int64_t id, int64_t now_ms,
	    const char *reason);
int	 store_run_list(struct store *s, const char *computer,
	    struct store_run **out, size_t *n);

/* Activity (G-30).  ev->id is set on insert. */
int	 store_event_add(struct store *s, struct store_event *ev);
/* Events of computer with id > after, oldest first, at most limit. */
int	 store_event_list(struct store *s, const char *computer, int64_t after,
	    size_t limit, struct store_event **out, size_t *n);

/*
 * Capabilities (G-15, G-20) granted under a lease: a control lease's screen
 * and terminal, or a run's control screen.  Kept here so a restarted
 * controller can still revoke them when the lease is released, expires or
 * its run ends.  guestd revokes by the capability's public id, so only
 * the id is stored; token is empty for new rows and is read only for rows
 * written before (their guestd may predate revoke-by-id).  A token is
 * never logged or returned by the API.
 */
#define STORE_TOKEN_MAX	128

struct store_cap {
	int64_t	 id;			/* set on insert */
	char	 lease[STORE_ID_MAX];
	char	 computer[STORE_ID_MAX];
	char	 bot[STORE_ID_MAX];
	char	 cap_id[STORE_ID_MAX];	/* guestd's capability id */
	char	 token[STORE_TOKEN_MAX];	/* legacy rows only; "" */
	int64_t	 created_ms;
};

int	 store_cap_add(struct store *s, struct store_cap *c);
/* Capabilities granted under lease. *out malloc'd (wipe and free it). */
int	 store_cap_list_lease(struct store *s, const char *lease,
	    struct store_cap **out, size_t *n);
/* Capabilities whose lease is gone or expired at now_ms. */
int	 store_cap_list_dead(struct store *s, int64_t now_ms,
	    struct store_cap **out, size_t *n);
int	 store_cap_delete(struct store *s, int64_t id);
/* Earliest expiry of a lease holding capabilities; 0 when none. */
int	 store_cap_next_expiry(struct store *s, int64_t *at_ms);

/*
 * Users of the local provider's computers (as root, each computer runs as
 * a uid of its own from a configured range).  A uid stays recorded when
 * its computer is deleted (computer becomes NULL): it is never handed to
 * another computer, so whatever the old one left in world-writable places
 * (/tmp, /dev/shm) never passes to a new tenant.
 */
/* The uid of computer, or ERR_NOT_FOUND. */
int	 store_uid_get(struct store *s, const char *computer, int64_t *uid);
/* Every uid ever assigned, ascending.  *out malloc'd. */
int	 store_uid_list(struct store *s, int64_t **out, size_t *n);
/* Record uid for computer; ERR_EXISTS when either is taken. */
int	 store_uid_add(struct store *s, const char *computer, int64_t uid,
	    int64_t now_ms);
/* The computer is gone: keep its uid as used, by nobody. */
int	 store_uid_retire(struct store *s, const char *computer,
	    int64_t now_ms);

/*
 * Home revisions (C-9): one row per checkpoint of a computer's workspace
 * that reached the home store whole.  The row is the commit point: an
 * archive without its row is a leftover, never a current revision.
 */
#define STORE_SHA256_HEX	65
#define STORE_FP_MAX		128

struct store_home_rev {
	char	 computer[STORE_ID_MAX];
	int64_t	 revision;		/* 1, 2, ... per computer */
	int64_t	 created_ms;
	int64_t	 bytes;			/* archive size */
	int64_t	 files;			/* entries in the archive */
	char	 sha256[STORE_SHA256_HEX];	/* of the archive, hex */
	char	 cause[96];		/* run:<bot>/<outcome>, stopped, idle ... */
	/* guestd's fingerprint of the tree it exported, "" unknown. */
	char	 fingerprint[STORE_FP_MAX];
};

int	 store_home_rev_add(struct store *s, const struct store_home_rev *h);
/* Revisions of computer, newest first.  *out malloc'd. */
int	 store_home_rev_list(struct store *s, const char *computer,
	    struct store_home_rev **out, size_t *n);
/* The newest revision of computer, or ERR_NOT_FOUND. */
int	 store_home_rev_latest(struct store *s, const char *computer,
	    struct store_home_rev *out);
int	 store_home_rev_delete(struct store *s, const char *computer,
	    int64_t revision);

/*
 * Change notices between processes (G-30's long polls): a descriptor that
 * turns readable when some process may have added activity.  PostgreSQL
 * LISTENs on a connection of s's own (use s for nothing else then);
 * SQLite has none (ERR_UNKNOWN_OP: DATA_DIR's inotify does that job).
 * store_watch_read() drains the descriptor without waiting: 1 when a
 * notice came, 0 when none, an error when the watch broke (free s, open
 * another).
 */
int	 store_watch(struct store *s, int *fd);
int	 store_watch_read(struct store *s);

/* Milliseconds since the epoch (CLOCK_REALTIME): rows are shared between
 * processes, so a monotonic clock would not compare across them. */
int64_t	 store_now_ms(void);

#endif

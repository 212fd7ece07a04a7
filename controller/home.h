/* SPDX-License-Identifier: MIT */
/*
 * The home store (SPEC C-9, X-3): where the archives of computers'
 * workspaces live between runs, one per revision, keyed by a home key.
 * checkpoint.c decides when a revision is written or read and records
 * its metadata; a home store only keeps bytes.  Its interface is four
 * verbs, so an object store (C-10) can stand behind it as well as the
 * local directory (home-local.c):
 *
 *   put    a revision's archive as a stream: begin, write ..., then
 *          commit (whole and durable, now readable) or abort (gone);
 *   get    a revision's archive as a stream;
 *   list   the revisions held, whatever their state;
 *   prune  remove every revision not in a keep list, and any leftover
 *          of a put that never committed.
 *
 * A put never replaces a committed revision, and a committed revision is
 * never changed: a reader sees a revision whole or not at all.  Which
 * revision is current is not the store's business but the state store's
 * (home_revisions rows), so a crash between commit and that row leaves a
 * revision nobody reads, which the next prune removes.
 */
#ifndef CONTROLLER_HOME_H
#define CONTROLLER_HOME_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct home_store;
struct home_put;
struct home_get;

struct home_store_ops {
	const char	*name;
	int	(*put_begin)(struct home_store *, const char *key,
		    int64_t rev, struct home_put **out, struct errmsg *e);
	int	(*put_write)(struct home_put *, const void *p, size_t n,
		    struct errmsg *e);
	/* 1: put_write touches no loop state, so a put's writes may run on
	 * a thread of its own (home-writer.h). */
	int	  put_write_any_thread;
	/*
	 * Optional: from now on the put's writes come from a thread of its
	 * own, never the loop, so put_write may wait for the disk (the local
	 * store then keeps its dirty pages bounded, home-local.c).
	 */
	void	(*put_off_loop)(struct home_put *);
	/* From a task: the durable part waits off the loop.  Frees. */
	int	(*put_commit)(struct home_put *, struct errmsg *e);
	void	(*put_abort)(struct home_put *);
	int	(*get_open)(struct home_store *, const char *key, int64_t rev,
		    struct home_get **out, int64_t *size, struct errmsg *e);
	/* Bytes read, 0 at the end, < 0 on error (e set). */
	ssize_t	(*get_read)(struct home_get *, void *p, size_t max,
		    struct errmsg *e);
	void	(*get_close)(struct home_get *);
	/* Optional: pass over n bytes without reading them; n or < 0. */
	int64_t	(*get_skip)(struct home_get *, int64_t n, struct errmsg *e);
	/* Revisions held, ascending; *out malloc'd. */
	int	(*list)(struct home_store *, const char *key, int64_t **out,
		    size_t *n, struct errmsg *e);
	int	(*prune)(struct home_store *, const char *key,
		    const int64_t *keep, size_t nkeep, struct errmsg *e);
	/*
	 * Optional: revision rev holding the very bytes of revision from
	 * (committed), whole and durable on return, as a commit leaves it.
	 */
	int	(*put_same)(struct home_store *, const char *key,
		    int64_t from, int64_t rev, struct errmsg *e);
	/* Optional: point an operator's "latest" name at rev. */
	int	(*mark_latest)(struct home_store *, const char *key,
		    int64_t rev, struct errmsg *e);
	void	(*free)(struct home_store *);
};

struct home_store {
	const struct home_store_ops	*ops;
	void				*impl;
};

extern const struct home_store_ops	home_local_ops;

/* The local store under data_dir/homes (created when missing). */
int	home_store_open(struct home_store **out, const char *data_dir,
	    struct errmsg *e);
/*
 * The process's home store: the object store (home-object.h) when it is
 * on, its data keys on st's computer rows; the local store otherwise.
 */
struct store;
int	home_store_open_st(struct home_store **out, const char *data_dir,
	    struct store *st, struct errmsg *e);
void	home_store_free(struct home_store *hs);
/* A computer's home key: its id today (names are path-safe). */
const char *home_key(const char *computer);

int	home_put_begin(struct home_store *hs, const char *key, int64_t rev,
	    struct home_put **out, struct errmsg *e);
int	home_put_write(struct home_store *hs, struct home_put *p,
	    const void *buf, size_t n, struct errmsg *e);
/* Before the first write: p is written off the loop (home-writer.h). */
void	home_put_off_loop(struct home_store *hs, struct home_put *p);
int	home_put_commit(struct home_store *hs, struct home_put *p,
	    struct errmsg *e);
void	home_put_abort(struct home_store *hs, struct home_put *p);
/* Revision rev as a copy of committed revision from; ERR_UNKNOWN_OP
 * when the store cannot do it without the bytes passing through us. */
int	home_put_same(struct home_store *hs, const char *key, int64_t from,
	    int64_t rev, struct errmsg *e);
int	home_get_open(struct home_store *hs, const char *key, int64_t rev,
	    struct home_get **out, int64_t *size, struct errmsg *e);
ssize_t	home_get_read(struct home_store *hs, struct home_get *g, void *buf,
	    size_t max, struct errmsg *e);
void	home_get_close(struct home_store *hs, struct home_get *g);
/* Bytes passed over (0: the store cannot skip; read instead), < 0 error. */
int64_t	home_get_skip(struct home_store *hs, struct home_get *g, int64_t n,
	    struct errmsg *e);
int	home_list(struct home_store *hs, const char *key, int64_t **out,
	    size_t *n, struct errmsg *e);
int	home_prune(struct home_store *hs, const char *key,
	    const int64_t *keep, size_t nkeep, struct errmsg *e);
int	home_mark_latest(struct home_store *hs, const char *key, int64_t rev,
	    struct errmsg *e);

/*
 * fsync(fd) without blocking the loop: from a task it runs on a thread of
 * its own and the task waits for its answer; elsewhere it runs inline.
 * 0 or ERR_* (errno mapped).
 */
int	home_fsync(int fd);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The home store front (home.h): picks the implementation (the local
 * directory, or the object store with the directory as its cache, C-10)
 * and forwards each verb.
 * Also the one piece of blocking work every implementation needs made
 * durable off the loop: fsync, run on a short-lived thread of its own
 * while the task waits on a pipe for its answer.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "home.h"
#include "home-local.h"
#include "home-object.h"
#include "task.h"

int
home_store_open(struct home_store **out, const char *data_dir,
    struct errmsg *e)
{
	return home_store_open_st(out, data_dir, NULL, e);
}

int
home_store_open_st(struct home_store **out, const char *data_dir,
    struct store *st, struct errmsg *e)
{
	struct home_store	*hs;
	int			 r;

	*out = NULL;
	if ((hs = calloc(1, sizeof *hs)) == NULL)
		return errmsg_code(e, ERR_NOMEM);
	/* The object store when serve turned it on (C-10), else local. */
	if (home_object_enabled() && st != NULL) {
		hs->ops = &home_object_ops;
		r = home_object_init(hs, data_dir, st, e);
	} else {
		hs->ops = &home_local_ops;
		r = home_local_init(hs, data_dir, e);
	}
	if (r != 0) {
		free(hs);
		return r;
	}
	*out = hs;
	return 0;
}

void
home_store_free(struct home_store *hs)
{
	if (hs == NULL)
		return;
	hs->ops->free(hs);
	free(hs);
}

const char *
home_key(const char *computer)
{
	return computer;
}

int
home_put_begin(struct home_store *hs, const char *key, int64_t rev,
    struct home_put **out, struct errmsg *e)
{
	return hs->ops->put_begin(hs, key, rev, out, e);
}

int
home_put_write(struct home_store *hs, struct home_put *p, const void *buf,
    size_t n, struct errmsg *e)
{
	return hs->ops->put_write(p, buf, n, e);
}

void
home_put_off_loop(struct home_store *hs, struct home_put *p)
{
	if (hs->ops->put_off_loop != NULL)
		hs->ops->put_off_loop(p);
}

int
home_put_commit(struct home_store *hs, struct home_put *p, struct errmsg *e)
{
	return hs->ops->put_commit(p, e);
}

void
home_put_abort(struct home_store *hs, struct home_put *p)
{
	if (p != NULL)
		hs->ops->put_abort(p);
}

int
home_put_same(struct home_store *hs, const char *key, int64_t from,
    int64_t rev, struct errmsg *e)
{
	if (hs->ops->put_same == NULL)
		return errmsg_code(e, ERR_UNKNOWN_OP);
	return hs->ops->put_same(hs, key, from, rev, e);
}

int
home_get_open(struct home_store *hs, const char *key, int64_t rev,
    struct home_get **out, int64_t *size, struct errmsg *e)
{
	return hs->ops->get_open(hs, key, rev, out, size, e);
}

ssize_t
home_get_read(struct home_store *hs, struct home_get *g, void *buf,
    size_t max, struct errmsg *e)
{
	return hs->ops->get_read(g, buf, max, e);
}

void
home_get_close(struct home_store *hs, struct home_get *g)
{
	if (g != NULL)
		hs->ops->get_close(g);
}

int64_t
home_get_skip(struct home_store *hs, struct home_get *g, int64_t n,
    struct errmsg *e)
{
	if (hs->ops->get_skip == NULL)
		return 0;
	return hs->ops->get_skip(g, n, e);
}

int
home_list(struct home_store *hs, const char *key, int64_t **out, size_t *n,
    struct errmsg *e)
{
	return hs->ops->list(hs, key, out, n, e);
}

int
home_prune(struct home_store *hs, const char *key, const int64_t *keep,
    size_t nkeep, struct errmsg *e)
{
	return hs->ops->prune(hs, key, keep, nkeep, e);
}

int
home_mark_latest(struct home_store *hs, const char *key, int64_t rev,
    struct errmsg *e)
{
	if (hs->ops->mark_latest == NULL)
		return 0;
	return hs->ops->mark_latest(hs, key, rev, e);
}

/* ---- fsync off the loop ------------------------------------------------ */

struct home_sync {
	int	fd;
	int	wfd;		/* the answer: one int, then closed */
};

static void *
home_sync_main(void *arg)
{
	struct home_sync	*hy = arg;
	int			 rc = 0;

	if (fsync(hy->fd) == -1)
		rc = errno != 0 ? errno : EIO;
	if (write(hy->wfd, &rc, sizeof rc) != (ssize_t)sizeof rc)
		rc = EIO;	/* the reader sees a short answer */
	close(hy->wfd);
	free(hy);
	return NULL;
}

int
home_fsync(int fd)
{
	struct home_sync	*hy;
	pthread_t		 th;
	pthread_attr_t		 at;
	int			 pfd[2], rc = EIO;
	ssize_t			 n;

	if (task_self() == NULL)
		return fsync(fd) == 0 ? 0 : err_from_errno(errno);
	if (pipe2(pfd, O_CLOEXEC) == -1)
		return err_from_errno(errno);
	if ((hy = calloc(1, sizeof *hy)) == NULL) {
		close(pfd[0]);
		close(pfd[1]);
		return ERR_NOMEM;
	}
	hy->fd = fd;
	hy->wfd = pfd[1];
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &at, home_sync_main, hy) != 0) {
		pthread_attr_destroy(&at);
		free(hy);
		close(pfd[1]);
		/* No thread: pay the wait here rather than skip the sync. */
		close(pfd[0]);
		return fsync(fd) == 0 ? 0 : err_from_errno(errno);
	}
	pthread_attr_destroy(&at);
	/*
	 * The thread owns fd's use until it answers: should the wait fail,
	 * the read below blocks for the answer, or fd could be closed under
	 * the thread.
	 */
	(void)task_wait_fd(pfd[0], -1);
	n = read(pfd[0], &rc, sizeof rc);
	close(pfd[0]);
	if (n != (ssize_t)sizeof rc)
		return ERR_INTERNAL;
	return rc == 0 ? 0 : err_from_errno(rc);
}

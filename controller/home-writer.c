/* SPDX-License-Identifier: MIT */
/*
 * A put's bytes written and hashed off the loop (home-writer.h).
 *
 * The slots are a ring: the loop fills the slot after the queued ones
 * and queues it when full; the thread takes the oldest, writes and
 * hashes it and hands it back.  A failure is kept (the first one) and
 * the thread goes on taking slots without work, so the loop never waits
 * for a slot that will not come back.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "err.h"
#include "home-writer.h"
#include "task.h"
#include "xmalloc.h"

struct home_writer {
	struct home_store	*hs;
	struct home_put		*put;
	int			 threaded;	/* the store's writes, too */
	EVP_MD_CTX		*md;
	int64_t			 bytes;		/* loop side */

	pthread_t		 th;
	int			 started;
	int			 donefd[2];	/* the thread's last word */
	pthread_mutex_t		 mtx;
	pthread_cond_t		 cv;
	uint8_t			*slot[HOME_WRITER_SLOTS];
	size_t			 len[HOME_WRITER_SLOTS];
	size_t			 head, queued;	/* under mtx */
	int			 closing;	/* under mtx */
	int			 code;		/* under mtx: first failure */
	struct errmsg		 err;		/* with code */
};

/* Thread side: one slot's bytes into the store and the hash. */
static int
hw_work(struct home_writer *w, const uint8_t *p, size_t n, struct errmsg *e)
{
	int	 r;

	if (w->threaded &&
	    (r = home_put_write(w->hs, w->put, p, n, e)) != 0)
		return r;
	if (EVP_DigestUpdate(w->md, p, n) != 1)
		return errmsg_code(e, ERR_INTERNAL);
	return 0;
}

static void *
hw_main(void *arg)
{
	struct home_writer	*w = arg;
	struct errmsg		 e;
	size_t			 i;
	int			 r, failed, one = 1;

	pthread_mutex_lock(&w->mtx);
	for (;;) {
		while (w->queued == 0 && !w->closing)
			pthread_cond_wait(&w->cv, &w->mtx);
		if (w->queued == 0)
			break;
		i = w->head;
		failed = w->code != 0;
		pthread_mutex_unlock(&w->mtx);
		errmsg_clear(&e);
		r = failed ? 0 : hw_work(w, w->slot[i], w->len[i], &e);
		pthread_mutex_lock(&w->mtx);
		if (r != 0 && w->code == 0) {
			w->code = r;
			w->err = e;
		}
		w->len[i] = 0;
		w->head = (w->head + 1) % HOME_WRITER_SLOTS;
		w->queued--;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mtx);
	/* The task waiting in home_writer_finish wakes on this. */
	if (write(w->donefd[1], &one, sizeof one) != (ssize_t)sizeof one)
		(void)0;	/* it also wakes on the close below */
	close(w->donefd[1]);
	w->donefd[1] = -1;
	return NULL;
}

static int
hw_start(struct home_writer *w)
{
	sigset_t	 all, old;
	int		 e;

	if (pipe2(w->donefd, O_CLOEXEC) == -1)
		return err_from_errno(errno);
	/* The thread takes no signals: they are the loop's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	e = pthread_create(&w->th, NULL, hw_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0)
		return ERR_NOMEM;
	w->started = 1;
	return 0;
}

int
home_writer_new(struct home_store *hs, struct home_put *p,
    struct home_writer **out, struct errmsg *e)
{
	struct home_writer	*w;
	size_t			 i;
	int			 r;

	*out = NULL;
	w = xcalloc(1, sizeof *w);
	w->hs = hs;
	w->put = p;
	w->threaded = hs->ops->put_write_any_thread;
	if (w->threaded)
		home_put_off_loop(hs, p);
	w->donefd[0] = w->donefd[1] = -1;
	pthread_mutex_init(&w->mtx, NULL);
	pthread_cond_init(&w->cv, NULL);
	for (i = 0; i < HOME_WRITER_SLOTS; i++)
		w->slot[i] = xmalloc(HOME_WRITER_CHUNK);
	if ((w->md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(w->md, EVP_sha256(), NULL) != 1) {
		home_writer_free(w);
		return errmsg_code(e, ERR_NOMEM);
	}
	if ((r = hw_start(w)) != 0) {
		home_writer_free(w);
		return errmsg_set(e, r, "cannot start the archive's writer");
	}
	*out = w;
	return 0;
}

/* Queue the slot being filled; wait while every slot is queued. */
static int
hw_submit(struct home_writer *w)
{
	int	 r;

	pthread_mutex_lock(&w->mtx);
	w->queued++;
	pthread_cond_broadcast(&w->cv);
	while (w->queued == HOME_WRITER_SLOTS && w->code == 0)
		pthread_cond_wait(&w->cv, &w->mtx);
	r = w->code;
	pthread_mutex_unlock(&w->mtx);
	return r;
}

/* The slot the loop fills (not queued: the thread does not touch it). */
static size_t
hw_fill_slot(struct home_writer *w)
{
	size_t	 i;

	pthread_mutex_lock(&w->mtx);
	i = (w->head + w->queued) % HOME_WRITER_SLOTS;
	pthread_mutex_unlock(&w->mtx);
	return i;
}

int
home_writer_write(struct home_writer *w, const uint8_t *p, size_t n)
{
	struct errmsg	 e;
	size_t		 i, take;
	int		 r;

	/* The object store's writes stay on the loop (home-writer.h). */
	errmsg_clear(&e);
	if (!w->threaded && (r = home_put_write(w->hs, w->put, p, n,
	    &e)) != 0) {
		pthread_mutex_lock(&w->mtx);
		if (w->code == 0) {
			w->code = r;
			w->err = e;
		}
		pthread_mutex_unlock(&w->mtx);
		return r;
	}
	while (n > 0) {
		i = hw_fill_slot(w);
		take = HOME_WRITER_CHUNK - w->len[i];
		if (take > n)
			take = n;
		memcpy(w->slot[i] + w->len[i], p, take);
		w->len[i] += take;
		w->bytes += (int64_t)take;
		p += take;
		n -= take;
		if (w->len[i] == HOME_WRITER_CHUNK &&
		    (r = hw_submit(w)) != 0)
			return r;
	}
	return 0;
}

/* Tell the thread to end once the queue is empty; join it. */
static void
hw_stop(struct home_writer *w)
{
	if (!w->started)
		return;
	pthread_mutex_lock(&w->mtx);
	w->closing = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mtx);
	pthread_join(w->th, NULL);
	w->started = 0;
}

int
home_writer_finish(struct home_writer *w, char *sha, size_t shalen,
    int64_t *bytes, struct errmsg *e)
{
	static const char	 hex[] = "0123456789abcdef";
	unsigned char		 md[EVP_MAX_MD_SIZE];
	unsigned int		 n = 0, k;
	int			 r;

	*bytes = w->bytes;
	if (w->len[hw_fill_slot(w)] > 0 && (r = hw_submit(w)) != 0)
		goto failed;
	pthread_mutex_lock(&w->mtx);
	w->closing = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mtx);
	/* The loop goes on while the last chunks are written. */
	if (task_self() != NULL)
		(void)task_wait_fd(w->donefd[0], -1);
	hw_stop(w);
	if ((r = w->code) != 0)
		goto failed;
	if (EVP_DigestFinal_ex(w->md, md, &n) != 1 || 2 * n + 1 > shalen)
		return errmsg_code(e, ERR_INTERNAL);
	for (k = 0; k < n; k++) {
		sha[2 * k] = hex[md[k] >> 4];
		sha[2 * k + 1] = hex[md[k] & 15];
	}
	sha[2 * n] = '\0';
	return 0;
failed:
	hw_stop(w);
	*e = w->err;
	return e->code != 0 ? e->code : (e->code = w->code);
}

void
home_writer_free(struct home_writer *w)
{
	size_t	 i;

	if (w == NULL)
		return;
	hw_stop(w);
	if (w->donefd[0] != -1)
		close(w->donefd[0]);
	if (w->donefd[1] != -1)
		close(w->donefd[1]);
	for (i = 0; i < HOME_WRITER_SLOTS; i++)
		free(w->slot[i]);
	EVP_MD_CTX_free(w->md);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mtx);
	free(w);
}

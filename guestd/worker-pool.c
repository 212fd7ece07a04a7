/* SPDX-License-Identifier: MIT */
/*
 * Worker threads for CPU-bound jobs: they run on a small pool with a
 * bounded queue and their results come back to the loop.  The
 * queue is a fixed ring guarded by one mutex; workers sleep on a condition
 * variable, so an idle pool costs nothing.  Results go back through
 * loop_post(), the one thread-safe way into the loop.
 */
#include "autoconf.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "err.h"
#include "log.h"
#include "loop.h"
#include "worker-pool.h"

struct worker_pool_item {
	worker_pool_fn	 fn;
	worker_pool_fn	 done;
	void	*arg;
};

static pthread_mutex_t	 worker_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 worker_pool_cond = PTHREAD_COND_INITIALIZER;
static struct worker_pool_item	 worker_pool_ring[WORKER_POOL_QUEUE_MAX];
static unsigned		 worker_pool_head, worker_pool_count;
static unsigned		 worker_pool_running;	/* jobs on a worker now */
static int		 worker_pool_started;

static void *
worker_pool_main(void *unused)
{
	struct worker_pool_item	it;

	pthread_mutex_lock(&worker_pool_lock);
	for (;;) {
		while (worker_pool_count == 0)
			pthread_cond_wait(&worker_pool_cond, &worker_pool_lock);
		it = worker_pool_ring[worker_pool_head];
		worker_pool_head = (worker_pool_head + 1) % WORKER_POOL_QUEUE_MAX;
		worker_pool_count--;
		worker_pool_running++;
		pthread_mutex_unlock(&worker_pool_lock);
		it.fn(it.arg);
		if (it.done != NULL)
			loop_post(it.done, it.arg);
		pthread_mutex_lock(&worker_pool_lock);
		worker_pool_running--;
	}
	return NULL;
}

int
worker_pool_init(void)
{
	pthread_attr_t	attr;
	pthread_t	t;
	sigset_t	all, old;
	int		i, r = 0;

	if (worker_pool_started)
		return 0;
	/* Workers never take signals: the loop's signalfd does. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (i = 0; i < WORKER_POOL_THREADS; i++) {
		if (pthread_create(&t, &attr, worker_pool_main, NULL) != 0) {
			log_error("work.start_failed", "thread=%d", i);
			r = ERR_INTERNAL;
			break;
		}
	}
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r == 0 || i > 0)
		worker_pool_started = 1;
	return worker_pool_started ? 0 : r;
}

int
worker_pool_submit(worker_pool_fn fn, worker_pool_fn done, void *arg)
{
	if (!worker_pool_started && worker_pool_init() != 0)
		return ERR_INTERNAL;
	pthread_mutex_lock(&worker_pool_lock);
	if (worker_pool_count == WORKER_POOL_QUEUE_MAX) {
		pthread_mutex_unlock(&worker_pool_lock);
		return ERR_BUSY;
	}
	worker_pool_ring[(worker_pool_head + worker_pool_count) % WORKER_POOL_QUEUE_MAX] =
	    (struct worker_pool_item){ fn, done, arg };
	worker_pool_count++;
	pthread_cond_signal(&worker_pool_cond);
	pthread_mutex_unlock(&worker_pool_lock);
	return 0;
}

unsigned
worker_pool_idle(void)
{
	unsigned	busy;

	pthread_mutex_lock(&worker_pool_lock);
	busy = worker_pool_running + worker_pool_count;
	pthread_mutex_unlock(&worker_pool_lock);
	return busy < WORKER_POOL_THREADS ? WORKER_POOL_THREADS - busy : 0;
}

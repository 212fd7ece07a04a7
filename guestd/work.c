/*
 * Worker threads for CPU-bound jobs (STYLE: "CPU-heavy work runs on a small
 * worker pool with a bounded queue; results come back to the loop").  The
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
#include "work.h"

struct work_item {
	work_fn	 fn;
	work_fn	 done;
	void	*arg;
};

static pthread_mutex_t	 work_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 work_cond = PTHREAD_COND_INITIALIZER;
static struct work_item	 work_ring[WORK_QUEUE_MAX];
static unsigned		 work_head, work_count;
static int		 work_started;

static void *
work_main(void *unused)
{
	struct work_item	it;

	for (;;) {
		pthread_mutex_lock(&work_lock);
		while (work_count == 0)
			pthread_cond_wait(&work_cond, &work_lock);
		it = work_ring[work_head];
		work_head = (work_head + 1) % WORK_QUEUE_MAX;
		work_count--;
		pthread_mutex_unlock(&work_lock);
		it.fn(it.arg);
		loop_post(it.done, it.arg);
	}
	return NULL;
}

int
work_init(void)
{
	pthread_attr_t	attr;
	pthread_t	t;
	sigset_t	all, old;
	int		i, r = 0;

	if (work_started)
		return 0;
	/* Workers never take signals: the loop's signalfd does. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (i = 0; i < WORK_THREADS; i++) {
		if (pthread_create(&t, &attr, work_main, NULL) != 0) {
			log_error("work.start_failed", "thread=%d", i);
			r = ERR_INTERNAL;
			break;
		}
	}
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r == 0 || i > 0)
		work_started = 1;
	return work_started ? 0 : r;
}

int
work_submit(work_fn fn, work_fn done, void *arg)
{
	if (!work_started && work_init() != 0)
		return ERR_INTERNAL;
	pthread_mutex_lock(&work_lock);
	if (work_count == WORK_QUEUE_MAX) {
		pthread_mutex_unlock(&work_lock);
		return ERR_BUSY;
	}
	work_ring[(work_head + work_count) % WORK_QUEUE_MAX] =
	    (struct work_item){ fn, done, arg };
	work_count++;
	pthread_cond_signal(&work_cond);
	pthread_mutex_unlock(&work_lock);
	return 0;
}

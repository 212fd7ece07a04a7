/* SPDX-License-Identifier: MIT */
/*
 * A small pool of worker threads for CPU-bound work (image encoding) with a
 * bounded queue.  fn runs on a worker and must not touch loop state; done
 * runs afterwards on the loop (through loop_post).  A full queue refuses
 * new work with ERR_BUSY instead of growing.
 */
#ifndef GUESTD_WORKER_POOL_H
#define GUESTD_WORKER_POOL_H

#define WORKER_POOL_THREADS	2
#define WORKER_POOL_QUEUE_MAX	32

typedef void	(*worker_pool_fn)(void *arg);

/* Start the threads (once; later calls do nothing).  0 or ERR_*. */
int	worker_pool_init(void);
/* Queue fn(arg) on a worker, then done(arg) on the loop (none when NULL:
 * fn posts its own result).  0 or ERR_BUSY. */
int	worker_pool_submit(worker_pool_fn fn, worker_pool_fn done, void *arg);
/*
 * Workers that would start a job submitted now at once (none queued or
 * running on them): a picture is cut into that many bands, not more.
 */
unsigned	worker_pool_idle(void);

#endif

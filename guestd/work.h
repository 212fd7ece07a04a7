/*
 * A small pool of worker threads for CPU-bound work (image encoding) with a
 * bounded queue.  fn runs on a worker and must not touch loop state; done
 * runs afterwards on the loop (through loop_post).  A full queue refuses
 * new work with ERR_BUSY instead of growing.
 */
#ifndef GUESTD_WORK_H
#define GUESTD_WORK_H

#define WORK_THREADS	2
#define WORK_QUEUE_MAX	32

typedef void	(*work_fn)(void *arg);

/* Start the threads (once; later calls do nothing).  0 or ERR_*. */
int	work_init(void);
/* Queue fn(arg) on a worker, then done(arg) on the loop.  0 or ERR_BUSY. */
int	work_submit(work_fn fn, work_fn done, void *arg);

#endif

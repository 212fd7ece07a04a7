/* SPDX-License-Identifier: MIT */
/*
 * Tasks: cooperative coroutines on the controller's one event loop.
 *
 * rakazoctl serve handles every HTTP request, the reconciler, the idle
 * stop and the capability sweep as a task.  A task runs on its own stack
 * but on the loop's thread, and only one runs at a time: it keeps the
 * loop until it waits (for a guestd reply, a child's readiness, a timer,
 * an event), and the wait hands the loop back.  So a tool call reads as
 * straight-line code while the process has one thread and one poll, and
 * a command that runs for minutes on one bot never holds up another.
 *
 * Wake-ups are deferred: task_cond_broadcast() and the fd and timer
 * callbacks only queue the task, and the loop resumes queued tasks from
 * a zero-delay timer, never from inside another wsi's callback.
 *
 * Rules for code that runs in a task: never block the thread (use the
 * waits below); never hold a pthread mutex across a wait.
 */
#ifndef CONTROLLER_TASK_H
#define CONTROLLER_TASK_H

#include <stdint.h>

#include <libwebsockets.h>

#include "queue-compat.h"

#define TASK_MAX		96
#define TASK_FD_PROTOCOL	"rakazo-task-fd"

struct task;

struct task_waiter;
/* All zero is an empty condition. */
struct task_cond {
	LIST_HEAD(, task_waiter) waiters;
};

/* Add to the protocol list of the vhost given to task_init(). */
extern const struct lws_protocols	task_fd_protocol;

/* vh: where task_wait_fd() adopts descriptors (needs task_fd_protocol). */
void	task_init(struct lws_context *ctx, struct lws_vhost *vh);
/* Free idle stacks; no task may be alive. */
void	task_shutdown(void);

/* Run fn(arg) as a task from the loop, soon.  0 or ERR_BUSY (at max). */
int	task_spawn(void (*fn)(void *), void *arg);
/* The running task, or NULL on the loop itself. */
struct task *task_self(void);
/* Tasks alive (running or waiting). */
int	task_count(void);

/*
 * Waits; each returns 0, or ERR_TIMEOUT when timeout_ms (>= 0) passed
 * first, or ERR_INTERNAL when called outside a task.  A negative
 * timeout waits for ever.
 */
int	task_sleep(int64_t ms);
/* fd readable, at end of file, or hung up.  fd stays the caller's. */
int	task_wait_fd(int fd, int64_t timeout_ms);
/* fd writable, or readable (a peer's reply or hang-up ends it too). */
int	task_wait_fd_out(int fd, int64_t timeout_ms);
/*
 * A descriptor a task waits on again and again (a database connection):
 * adopted once and kept on the loop between waits instead of once per
 * wait.  Input that arrives while no task waits (a server's goodbye)
 * takes it off the loop, so a quiet descriptor never spins it; the next
 * wait puts it back.  NULL from task_keep_new() outside a loop: poll.
 */
struct task_keep;
struct task_keep *task_keep_new(int fd);
/* Readable (out: or writable), hung up, or ERR_TIMEOUT. */
int	task_keep_wait(struct task_keep *k, int out, int64_t timeout_ms);
void	task_keep_free(struct task_keep *k);
/* The first of n (<= 4) fds to become readable; its index in *which. */
int	task_wait_fds(const int *fds, int n, int64_t timeout_ms, int *which);
/* Until the process (not necessarily a child) exits. */
int	task_wait_pid(long pid, int64_t timeout_ms);
int	task_cond_wait(struct task_cond *cv, int64_t timeout_ms);
/* Wake every task waiting on cv (they run after the caller waits). */
void	task_cond_broadcast(struct task_cond *cv);

/* A lock between tasks (not threads), e.g. one start per computer. */
struct task_mutex {
	int			 held;
	struct task_cond	 cv;
};
int	task_mutex_lock(struct task_mutex *m, int64_t timeout_ms);
void	task_mutex_unlock(struct task_mutex *m);

#endif

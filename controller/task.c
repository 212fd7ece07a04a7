/* SPDX-License-Identifier: MIT */
/*
 * Tasks (task.h): ucontext coroutines scheduled by the lws loop.
 *
 * Why coroutines and not callbacks all the way down: a tool call is a
 * chain of waits (lease in SQLite, start the computer, one or two guestd
 * requests, record the event), and twelve tools, the control routes and
 * the sweeps share that chain.  Written as continuations it becomes a
 * state machine per tool; as tasks it stays the readable sequence it was
 * on worker threads, without the threads: the process keeps one thread,
 * one poll and one owner for every piece of state.
 *
 * A task's stack is an mmap'd region with a guard page below it, so an
 * overflow faults instead of corrupting a neighbour; stacks of finished
 * tasks are kept for reuse (up to TASK_STACK_CACHE) because a fresh
 * mapping costs page faults on every request.
 *
 * Under AddressSanitizer every switch is announced with the fiber
 * interface, or ASan would take the new stack for a stack overflow.
 */
#include "autoconf.h"

#include <sys/mman.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "err.h"
#include "task.h"
#include "xmalloc.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TASK_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TASK_ASAN 1
#endif
#ifdef TASK_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

/* SQLite, jansson's recursive parser and PATH_MAX buffers all fit. */
#define TASK_STACK_SIZE		(1024 * 1024)
#define TASK_STACK_CACHE	8
#define TASK_WAIT_FDS		4

enum task_state {
	TASK_NEW = 0,
	TASK_READY,
	TASK_RUNNING,
	TASK_WAITING,
	TASK_DONE
};

struct task {
	ucontext_t		 uc;
	void			*map;		/* guard page + stack */
	enum task_state		 state;
	void			(*fn)(void *);
	void			*arg;
	STAILQ_ENTRY(task)	 ready;		/* while TASK_READY */
	/* The current wait. */
	lws_sorted_usec_list_t	 timer;
	int			 timed_out;
	struct lws		*fdwsi[TASK_WAIT_FDS];
	int			 fd_ready;	/* index + 1 of the first */
#ifdef TASK_ASAN
	void			*fake_stack;
#endif
};

/* On the waiting task's stack; broadcast unlinks it, or a timeout. */
struct task_waiter {
	struct task		*t;
	int			 linked;
	LIST_ENTRY(task_waiter)	 entry;
};

static struct lws_context	*task_ctx;
static struct lws_vhost		*task_vh;
static ucontext_t		 task_loop_uc;
static struct task		*task_cur;
static STAILQ_HEAD(, task)	 task_ready_q =
				    STAILQ_HEAD_INITIALIZER(task_ready_q);
static lws_sorted_usec_list_t	 task_run_sul;
static int			 task_run_armed;
static int			 task_alive;
static void			*task_stacks[TASK_STACK_CACHE];
static int			 task_nstacks;
#ifdef TASK_ASAN
static const void		*task_loop_bottom;
static size_t			 task_loop_size;
#endif

static int	task_fd_cb(struct lws *, enum lws_callback_reasons, void *,
		    void *, size_t);

struct task_keep {
	int		 fd;		/* the caller's; we adopt a dup */
	struct lws	*wsi;		/* NULL while off the loop */
	struct task	*waiter;
	int		 fired;
};

/* The wsi user pointer that marks a kept descriptor's wsi. */
static char			 task_keep_tag;

const struct lws_protocols task_fd_protocol = {
	TASK_FD_PROTOCOL, task_fd_cb, 0, 0, 0, NULL, 0
};

static size_t
task_page(void)
{
	long	 n = sysconf(_SC_PAGESIZE);

	return n > 0 ? (size_t)n : 4096;
}

static void *
task_stack_get(void)
{
	size_t	 pg = task_page();
	void	*m;

	if (task_nstacks > 0)
		return task_stacks[--task_nstacks];
	m = mmap(NULL, pg + TASK_STACK_SIZE, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (mprotect(m, pg, PROT_NONE) != 0) {
		munmap(m, pg + TASK_STACK_SIZE);
		return NULL;
	}
	return m;
}

static void
task_stack_put(void *m)
{
	if (task_nstacks < TASK_STACK_CACHE) {
		task_stacks[task_nstacks++] = m;
		return;
	}
	munmap(m, task_page() + TASK_STACK_SIZE);
}

void
task_init(struct lws_context *ctx, struct lws_vhost *vh)
{
	task_ctx = ctx;
	task_vh = vh;
}

void
task_shutdown(void)
{
	while (task_nstacks > 0)
		munmap(task_stacks[--task_nstacks],
		    task_page() + TASK_STACK_SIZE);
	if (task_ctx != NULL && task_run_armed)
		lws_sul_cancel(&task_run_sul);
	task_run_armed = 0;
	task_ctx = NULL;
	task_vh = NULL;
}

struct task *
task_self(void)
{
	return task_cur;
}

int
task_count(void)
{
	return task_alive;
}

/* ---- scheduling ------------------------------------------------------ */

static void	task_run_ready(lws_sorted_usec_list_t *sul);

/* Queue t to run from the loop; the caller keeps running. */
static void
task_make_ready(struct task *t)
{
	/* After task_shutdown() the loop is going away: nothing resumes. */
	if (task_ctx == NULL ||
	    (t->state != TASK_WAITING && t->state != TASK_NEW))
		return;
	t->state = TASK_READY;
	STAILQ_INSERT_TAIL(&task_ready_q, t, ready);
	if (!task_run_armed) {
		task_run_armed = 1;
		lws_sul_schedule(task_ctx, 0, &task_run_sul, task_run_ready, 0);
	}
}

static void
task_entry(void)
{
	struct task	*t = task_cur;

#ifdef TASK_ASAN
	__sanitizer_finish_switch_fiber(NULL, &task_loop_bottom,
	    &task_loop_size);
#endif
	t->fn(t->arg);
	t->state = TASK_DONE;
#ifdef TASK_ASAN
	/* NULL: this fiber is finished and its fake stack can go. */
	__sanitizer_start_switch_fiber(NULL, task_loop_bottom,
	    task_loop_size);
#endif
	setcontext(&task_loop_uc);
}

/* Loop side: run t until it waits or ends. */
static void
task_resume(struct task *t)
{
#ifdef TASK_ASAN
	void	*fake = NULL;
#endif

	task_cur = t;
	t->state = TASK_RUNNING;
#ifdef TASK_ASAN
	__sanitizer_start_switch_fiber(&fake,
	    (char *)t->map + task_page(), TASK_STACK_SIZE);
#endif
	if (swapcontext(&task_loop_uc, &t->uc) != 0)
		fatal("swapcontext failed");
#ifdef TASK_ASAN
	__sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
	task_cur = NULL;
	if (t->state == TASK_DONE) {
		task_stack_put(t->map);
		free(t);
		task_alive--;
	}
}

static void
task_run_ready(lws_sorted_usec_list_t *sul)
{
	struct task	*t;

	(void)sul;
	task_run_armed = 0;
	while ((t = STAILQ_FIRST(&task_ready_q)) != NULL) {
		STAILQ_REMOVE_HEAD(&task_ready_q, ready);
		task_resume(t);
	}
}

/* Task side: give the loop back until task_make_ready(). */
static void
task_park(void)
{
	struct task	*t = task_cur;

	t->state = TASK_WAITING;
#ifdef TASK_ASAN
	__sanitizer_start_switch_fiber(&t->fake_stack, task_loop_bottom,
	    task_loop_size);
#endif
	if (swapcontext(&t->uc, &task_loop_uc) != 0)
		fatal("swapcontext failed");
#ifdef TASK_ASAN
	__sanitizer_finish_switch_fiber(t->fake_stack, &task_loop_bottom,
	    &task_loop_size);
#endif
}

int
task_spawn(void (*fn)(void *), void *arg)
{
	struct task	*t;

	if (task_ctx == NULL || task_alive >= TASK_MAX)
		return ERR_BUSY;
	t = xcalloc(1, sizeof *t);
	if ((t->map = task_stack_get()) == NULL) {
		free(t);
		return ERR_NOMEM;
	}
	if (getcontext(&t->uc) != 0)
		fatal("getcontext failed");
	t->uc.uc_stack.ss_sp = (char *)t->map + task_page();
	t->uc.uc_stack.ss_size = TASK_STACK_SIZE;
	t->uc.uc_link = NULL;
	makecontext(&t->uc, task_entry, 0);
	t->fn = fn;
	t->arg = arg;
	t->state = TASK_NEW;
	task_alive++;
	task_make_ready(t);
	return 0;
}

/* ---- timers ------------------------------------------------------------ */

static void
task_timer_cb(lws_sorted_usec_list_t *sul)
{
	struct task	*t = lws_container_of(sul, struct task, timer);

	t->timed_out = 1;
	task_make_ready(t);
}

static void
task_timer_arm(struct task *t, int64_t timeout_ms)
{
	t->timed_out = 0;
	if (timeout_ms >= 0)
		lws_sul_schedule(task_ctx, 0, &t->timer, task_timer_cb,
		    (lws_usec_t)timeout_ms * LWS_US_PER_MS);
}

static void
task_timer_disarm(struct task *t)
{
	lws_sul_cancel(&t->timer);
}

int
task_sleep(int64_t ms)
{
	struct task	*t = task_cur;

	if (t == NULL)
		return ERR_INTERNAL;
	task_timer_arm(t, ms < 0 ? 0 : ms);
	task_park();
	task_timer_disarm(t);
	return 0;
}

/* ---- conditions ------------------------------------------------------- */

int
task_cond_wait(struct task_cond *cv, int64_t timeout_ms)
{
	struct task		*t = task_cur;
	struct task_waiter	 w;

	if (t == NULL)
		return ERR_INTERNAL;
	w.t = t;
	w.linked = 1;
	LIST_INSERT_HEAD(&cv->waiters, &w, entry);
	task_timer_arm(t, timeout_ms);
	task_park();
	task_timer_disarm(t);
	if (w.linked)		/* still linked after a timeout */
		LIST_REMOVE(&w, entry);
	return t->timed_out ? ERR_TIMEOUT : 0;
}

void
task_cond_broadcast(struct task_cond *cv)
{
	struct task_waiter	*w;

	while ((w = LIST_FIRST(&cv->waiters)) != NULL) {
		LIST_REMOVE(w, entry);
		w->linked = 0;
		task_make_ready(w->t);
	}
}

int
task_mutex_lock(struct task_mutex *m, int64_t timeout_ms)
{
	while (m->held)
		if (task_cond_wait(&m->cv, timeout_ms) == ERR_TIMEOUT &&
		    m->held)
			return ERR_TIMEOUT;
	m->held = 1;
	return 0;
}

void
task_mutex_unlock(struct task_mutex *m)
{
	m->held = 0;
	task_cond_broadcast(&m->cv);
}

/* ---- descriptors ------------------------------------------------------- */

/*
 * The adopted descriptors are dups (lws closes what it adopts).  The first
 * readable event wakes the task and ends the wait: level-triggered poll
 * would otherwise report the unread bytes again and again.
 */
static void
task_fd_fire(struct task *t, struct lws *wsi)
{
	int	 i;

	for (i = 0; i < TASK_WAIT_FDS; i++)
		if (t->fdwsi[i] == wsi) {
			t->fdwsi[i] = NULL;
			if (t->fd_ready == 0)
				t->fd_ready = i + 1;
		}
	task_make_ready(t);
}

/* A kept descriptor's events (task_keep_*). */
static int
task_keep_cb(struct lws *wsi, enum lws_callback_reasons reason)
{
	struct task_keep	*k = lws_get_opaque_user_data(wsi);

	switch (reason) {
	case LWS_CALLBACK_RAW_RX_FILE:
	case LWS_CALLBACK_RAW_WRITEABLE_FILE:
		if (k == NULL)
			return -1;
		if (k->waiter != NULL) {
			k->fired = 1;
			task_make_ready(k->waiter);
			return 0;
		}
		/* Nobody waits: off the loop until the next wait. */
		lws_set_opaque_user_data(wsi, NULL);
		k->wsi = NULL;
		return -1;
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		if (k != NULL) {
			k->wsi = NULL;
			if (k->waiter != NULL) {
				k->fired = 1;
				task_make_ready(k->waiter);
			}
		}
		return 0;
	default:
		return 0;
	}
}

static int
task_fd_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	struct task	*t;

	(void)in;
	(void)len;
	if (user == &task_keep_tag)
		return task_keep_cb(wsi, reason);
	t = lws_get_opaque_user_data(wsi);
	switch (reason) {
	case LWS_CALLBACK_RAW_RX_FILE:
	case LWS_CALLBACK_RAW_WRITEABLE_FILE:	/* task_wait_fd_out() */
		if (t != NULL) {
			lws_set_opaque_user_data(wsi, NULL);
			task_fd_fire(t, wsi);
		}
		return -1;
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		if (t != NULL)
			task_fd_fire(t, wsi);	/* hung up: readable */
		return 0;
	default:
		return 0;
	}
}

/* Stop watching what did not fire; the callbacks see no task. */
static void
task_fds_drop(struct task *t)
{
	int	 i;

	for (i = 0; i < TASK_WAIT_FDS; i++) {
		if (t->fdwsi[i] == NULL)
			continue;
		lws_set_opaque_user_data(t->fdwsi[i], NULL);
		lws_set_timeout(t->fdwsi[i], PENDING_TIMEOUT_KILLED_BY_PARENT,
		    LWS_TO_KILL_ASYNC);
		t->fdwsi[i] = NULL;
	}
}

static int	task_wait_fds_how(const int *, int, int64_t, int *, int);

int
task_wait_fds(const int *fds, int n, int64_t timeout_ms, int *which)
{
	return task_wait_fds_how(fds, n, timeout_ms, which, 0);
}

/*
 * A client that must send before it can read (libpq's PQflush() returning
 * 1) waits for either direction: lws reports writable once asked to.
 */
int
task_wait_fd_out(int fd, int64_t timeout_ms)
{
	return task_wait_fds_how(&fd, 1, timeout_ms, NULL, 1);
}

static int
task_wait_fds_how(const int *fds, int n, int64_t timeout_ms, int *which,
    int out)
{
	struct task	*t = task_cur;
	lws_adopt_desc_t info;
	int		 d, i;

	if (which != NULL)
		*which = -1;
	if (t == NULL || task_vh == NULL || n < 1 || n > TASK_WAIT_FDS)
		return ERR_INTERNAL;
	t->fd_ready = 0;
	for (i = 0; i < n; i++) {
		if ((d = fcntl(fds[i], F_DUPFD_CLOEXEC, 0)) == -1) {
			task_fds_drop(t);
			return err_from_errno(errno);
		}
		memset(&info, 0, sizeof info);
		info.vh = task_vh;
		info.type = LWS_ADOPT_RAW_FILE_DESC;
		info.fd.filefd = d;
		info.vh_prot_name = TASK_FD_PROTOCOL;
		info.opaque = t;
		/* On failure lws closed d. */
		if ((t->fdwsi[i] = lws_adopt_descriptor_vhost_via_info(
		    &info)) == NULL) {
			task_fds_drop(t);
			return ERR_INTERNAL;
		}
		if (out)
			lws_callback_on_writable(t->fdwsi[i]);
	}
	task_timer_arm(t, timeout_ms);
	task_park();
	task_timer_disarm(t);
	task_fds_drop(t);
	if (t->fd_ready == 0)
		return ERR_TIMEOUT;
	if (which != NULL)
		*which = t->fd_ready - 1;
	return 0;
}

int
task_wait_fd(int fd, int64_t timeout_ms)
{
	return task_wait_fds(&fd, 1, timeout_ms, NULL);
}

struct task_keep *
task_keep_new(int fd)
{
	struct task_keep	*k;

	if (task_vh == NULL || fd < 0)
		return NULL;
	k = xcalloc(1, sizeof *k);
	k->fd = fd;
	return k;
}

static int
task_keep_adopt(struct task_keep *k)
{
	lws_adopt_desc_t	 info;
	int			 d;

	if ((d = fcntl(k->fd, F_DUPFD_CLOEXEC, 0)) == -1)
		return err_from_errno(errno);
	memset(&info, 0, sizeof info);
	info.vh = task_vh;
	info.type = LWS_ADOPT_RAW_FILE_DESC;
	info.fd.filefd = d;
	info.vh_prot_name = TASK_FD_PROTOCOL;
	info.opaque = k;
	/* On failure lws closed d. */
	if ((k->wsi = lws_adopt_descriptor_vhost_via_info(&info)) == NULL)
		return ERR_INTERNAL;
	lws_set_wsi_user(k->wsi, &task_keep_tag);
	return 0;
}

int
task_keep_wait(struct task_keep *k, int out, int64_t timeout_ms)
{
	struct task	*t = task_cur;
	int		 r;

	if (t == NULL || k == NULL || task_vh == NULL)
		return ERR_INTERNAL;
	if (k->wsi == NULL && (r = task_keep_adopt(k)) != 0)
		return r;
	k->waiter = t;
	k->fired = 0;
	if (out)
		lws_callback_on_writable(k->wsi);
	task_timer_arm(t, timeout_ms);
	task_park();
	task_timer_disarm(t);
	k->waiter = NULL;
	return k->fired ? 0 : ERR_TIMEOUT;
}

void
task_keep_free(struct task_keep *k)
{
	if (k == NULL)
		return;
	/* After task_shutdown() the context closes what is left. */
	if (k->wsi != NULL && task_ctx != NULL) {
		lws_set_opaque_user_data(k->wsi, NULL);
		lws_set_timeout(k->wsi, PENDING_TIMEOUT_KILLED_BY_PARENT,
		    LWS_TO_KILL_ASYNC);
	}
	free(k);
}

int
task_wait_pid(long pid, int64_t timeout_ms)
{
	int	 fd, r;

	if ((fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0)) == -1)
		return errno == ESRCH ? 0 : err_from_errno(errno);
	r = task_wait_fd(fd, timeout_ms);
	close(fd);
	return r;
}

/* SPDX-License-Identifier: MIT */
/*
 * The one event loop of guestd, on top of libwebsockets' own service loop.
 *
 * lws 4.1.6 in Debian has no external-poll hooks, so instead of lws joining
 * our loop, our descriptors join lws: every pipe, signalfd and worker wakeup
 * is adopted as a raw file descriptor and its events come back through
 * loop_raw_protocol.  Timers are lws "sul" entries, which lws folds into its
 * poll timeout, so an idle guestd sleeps in poll() with nothing to do.
 *
 * Child exits: SIGCHLD is blocked and read from a signalfd, then every
 * exited child is reaped with waitpid(WNOHANG) and handed to its watcher.
 * SIGTERM and SIGINT stop the loop the same way.
 */
#include "autoconf.h"

#include <sys/signalfd.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libwebsockets.h>

#include "err.h"
#include "log.h"
#include "loop.h"
#include "queue-compat.h"
#include "xmalloc.h"

struct loop_fd {
	struct lws		*wsi;
	int			 fd;
	loop_fd_cb		 cb;	/* NULL once the owner closed it */
	void			*arg;
	/*
	 * lws handles a raw fd's POLLOUT by calling back first and clearing
	 * POLLOUT after: a write wish made inside LOOP_WRITE would be lost,
	 * so it is made again from a zero-delay timer once lws is done.
	 */
	int			 in_write;
	lws_sorted_usec_list_t	 rearm;
};

struct loop_timer {
	lws_sorted_usec_list_t	 sul;	/* first: the sul pointer is ours */
	loop_timer_cb		 cb;
	void			*arg;
};

struct loop_child {
	pid_t			 pid;
	loop_child_cb		 cb;
	void			*arg;
	LIST_ENTRY(loop_child)	 entry;
};

struct loop_posted {
	void			(*fn)(void *);
	void			*arg;
	STAILQ_ENTRY(loop_posted) entry;
};

static struct lws_context	*loop_ctx;
static struct lws_vhost		*loop_vh;
static int			 loop_stop_flag;
static LIST_HEAD(, loop_child)	 loop_children =
    LIST_HEAD_INITIALIZER(loop_children);
static pthread_mutex_t		 loop_post_lock = PTHREAD_MUTEX_INITIALIZER;
static STAILQ_HEAD(, loop_posted) loop_posted_q =	/* under loop_post_lock */
    STAILQ_HEAD_INITIALIZER(loop_posted_q);
static struct loop_fd		*loop_sigfd;

struct loop_prepoll {
	void			(*fn)(void *);
	void			*arg;
	LIST_ENTRY(loop_prepoll) entry;
};
static LIST_HEAD(, loop_prepoll) loop_prepolls =
    LIST_HEAD_INITIALIZER(loop_prepolls);

static int	loop_raw_cb(struct lws *, enum lws_callback_reasons, void *,
		    void *, size_t);

const struct lws_protocols loop_raw_protocol = {
	"rakazo-raw", loop_raw_cb, 0, 0, 0, NULL, 0
};

uint64_t
loop_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
loop_reap(void)
{
	struct loop_child	*ch;
	pid_t			 pid;
	int			 status;

	for (;;) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid <= 0)
			break;
		LIST_FOREACH(ch, &loop_children, entry) {
			if (ch->pid == pid)
				break;
		}
		if (ch == NULL) {
			log_debug("child.reaped", "pid=%d watcher=none", (int)pid);
			continue;
		}
		LIST_REMOVE(ch, entry);
		ch->cb(pid, status, ch->arg);
		free(ch);
	}
}

static void
loop_signal_cb(struct loop_fd *lf, int events, void *arg)
{
	struct signalfd_siginfo	 si;
	ssize_t			 n;
	int			 reap = 0;

	if (events & LOOP_HUP) {
		loop_sigfd = NULL;
		return;
	}
	while ((n = read(lf->fd, &si, sizeof si)) == (ssize_t)sizeof si) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			reap = 1;
			break;
		case SIGTERM:
		case SIGINT:
			log_info("guestd.signal", "signal=%u action=stop",
			    si.ssi_signo);
			loop_stop();
			break;
		default:
			break;
		}
	}
	if (reap)
		loop_reap();
}

int
loop_listen_options(const char *host)
{
	return strchr(host, ':') == NULL ? LWS_SERVER_OPTION_DISABLE_IPV6 : 0;
}

struct lws_vhost *
loop_listen(struct lws_context *ctx, const char *name, const char *host,
    int port, const struct lws_protocols *protocols)
{
	struct lws_context_creation_info	info;

	memset(&info, 0, sizeof info);
	info.port = port;
	info.iface = host;
	info.protocols = protocols;
	info.vhost_name = name;
	info.gid = -1;
	info.uid = -1;
	info.options = loop_listen_options(host);
	return lws_create_vhost(ctx, &info);
}

void
loop_init(struct lws_context *ctx, struct lws_vhost *vh)
{
	sigset_t	set;
	int		fd;

	loop_ctx = ctx;
	loop_vh = vh;

	/* main.c blocked these before creating any thread. */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd == -1)
		fatal("signalfd: %s", strerror(errno));
	loop_sigfd = loop_fd_add(fd, loop_signal_cb, NULL);
	if (loop_sigfd == NULL)
		fatal("cannot adopt the signal descriptor");
}

void
loop_prepoll_add(void (*fn)(void *), void *arg)
{
	struct loop_prepoll	*p;

	p = xcalloc(1, sizeof *p);
	p->fn = fn;
	p->arg = arg;
	LIST_INSERT_HEAD(&loop_prepolls, p, entry);
}

void
loop_prepoll_remove(void (*fn)(void *), void *arg)
{
	struct loop_prepoll	*p;

	LIST_FOREACH(p, &loop_prepolls, entry) {
		if (p->fn == fn && p->arg == arg) {
			LIST_REMOVE(p, entry);
			free(p);
			return;
		}
	}
}

static void
loop_run_prepolls(void)
{
	struct loop_prepoll	*p, *next;

	/* fn may remove itself */
	LIST_FOREACH_SAFE(p, &loop_prepolls, entry, next)
		p->fn(p->arg);
}

int
loop_run(void)
{
	/* lws_service() waits once and services what arrived. */
	while (!loop_stop_flag) {
		loop_run_prepolls();
		if (lws_service(loop_ctx, 0) < 0)
			break;
	}
	return 0;
}

void
loop_stop(void)
{
	loop_stop_flag = 1;
	if (loop_ctx != NULL)
		lws_cancel_service(loop_ctx);
}

int
loop_stopping(void)
{
	return loop_stop_flag;
}

struct loop_fd *
loop_fd_add(int fd, loop_fd_cb cb, void *arg)
{
	struct loop_fd		*lf;
	lws_sock_file_fd_type	 u;
	int			 fl;

	fl = fcntl(fd, F_GETFL);
	if (fl == -1 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) == -1) {
		close(fd);
		return NULL;
	}
	lf = xcalloc(1, sizeof *lf);
	lf->fd = fd;
	lf->cb = cb;
	lf->arg = arg;
	memset(&u, 0, sizeof u);
	u.filefd = fd;
	/* On failure lws closes fd itself. */
	lf->wsi = lws_adopt_descriptor_vhost(loop_vh, LWS_ADOPT_RAW_FILE_DESC,
	    u, loop_raw_protocol.name, NULL);
	if (lf->wsi == NULL) {
		log_error("loop.adopt_failed", "fd=%d", fd);
		free(lf);
		return NULL;
	}
	lws_set_opaque_user_data(lf->wsi, lf);
	return lf;
}

int
loop_fd_get(struct loop_fd *lf)
{
	return lf->fd;
}

void
loop_fd_want_read(struct loop_fd *lf, int on)
{
	if (lf != NULL && lf->wsi != NULL)
		lws_rx_flow_control(lf->wsi, on ? 1 : 0);
}

static void
loop_fd_rearm(lws_sorted_usec_list_t *sul)
{
	struct loop_fd	*lf = lws_container_of(sul, struct loop_fd, rearm);

	if (lf->wsi != NULL)
		lws_callback_on_writable(lf->wsi);
}

void
loop_fd_want_write(struct loop_fd *lf)
{
	if (lf == NULL || lf->wsi == NULL)
		return;
	if (lf->in_write)
		lws_sul_schedule(loop_ctx, 0, &lf->rearm, loop_fd_rearm, 0);
	else
		lws_callback_on_writable(lf->wsi);
}

int
loop_fd_write_pending(struct loop_fd *lf, const void *p, size_t len,
    size_t *off)
{
	ssize_t	n;

	while (*off < len) {
		n = write(lf->fd, (const char *)p + *off, len - *off);
		if (n > 0) {
			*off += (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			loop_fd_want_write(lf);
			return 0;
		}
		return -1;
	}
	return 1;
}

void
loop_fd_close(struct loop_fd *lf)
{
	if (lf == NULL)
		return;
	/*
	 * The owner is done with it: no more callbacks.  lws closes the fd and
	 * we free lf in RAW_CLOSE_FILE on the next service turn, so this is
	 * safe from inside the descriptor's own callback.
	 */
	lf->cb = NULL;
	lf->arg = NULL;
	if (lf->wsi != NULL) {
		lws_rx_flow_control(lf->wsi, 0);
		lws_set_timeout(lf->wsi, PENDING_TIMEOUT_KILLED_BY_PARENT,
		    LWS_TO_KILL_ASYNC);
	}
}

static int
loop_raw_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	struct loop_fd	*lf;

	switch (reason) {
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		loop_run_posted();
		return 0;
	case LWS_CALLBACK_RAW_RX_FILE:
		lf = lws_get_opaque_user_data(wsi);
		if (lf != NULL && lf->cb != NULL)
			lf->cb(lf, LOOP_READ, lf->arg);
		return 0;
	case LWS_CALLBACK_RAW_WRITEABLE_FILE:
		lf = lws_get_opaque_user_data(wsi);
		if (lf != NULL && lf->cb != NULL) {
			lf->in_write = 1;
			lf->cb(lf, LOOP_WRITE, lf->arg);
			lf->in_write = 0;
		}
		return 0;
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		lf = lws_get_opaque_user_data(wsi);
		if (lf == NULL)
			return 0;
		lws_set_opaque_user_data(wsi, NULL);
		lf->wsi = NULL;
		/* Peer hung up: the fd is still open, the owner drains it. */
		if (lf->cb != NULL)
			lf->cb(lf, LOOP_HUP, lf->arg);
		lws_sul_cancel(&lf->rearm);
		free(lf);
		return 0;
	default:
		return 0;
	}
}

static void
loop_timer_fire(lws_sorted_usec_list_t *sul)
{
	struct loop_timer	*t = (struct loop_timer *)sul;
	loop_timer_cb		 cb = t->cb;
	void			*arg = t->arg;

	free(t);
	cb(arg);
}

struct loop_timer *
loop_timer_add(uint64_t ms, loop_timer_cb cb, void *arg)
{
	struct loop_timer	*t;

	t = xcalloc(1, sizeof *t);
	t->cb = cb;
	t->arg = arg;
	lws_sul_schedule(loop_ctx, 0, &t->sul, loop_timer_fire,
	    (lws_usec_t)ms * LWS_US_PER_MS);
	return t;
}

void
loop_timer_cancel(struct loop_timer *t)
{
	if (t == NULL)
		return;
	lws_sul_cancel(&t->sul);
	free(t);
}

int
loop_child_watch(pid_t pid, loop_child_cb cb, void *arg)
{
	struct loop_child	*ch;

	ch = xcalloc(1, sizeof *ch);
	ch->pid = pid;
	ch->cb = cb;
	ch->arg = arg;
	LIST_INSERT_HEAD(&loop_children, ch, entry);
	/*
	 * Register right after fork(): a child that already exited is still
	 * unreaped, and its pending SIGCHLD reaches the signalfd later.
	 */
	return 0;
}

void
loop_child_forget(pid_t pid)
{
	struct loop_child	*ch;

	LIST_FOREACH(ch, &loop_children, entry) {
		if (ch->pid == pid) {
			LIST_REMOVE(ch, entry);
			free(ch);
			return;
		}
	}
}

void
loop_post(void (*fn)(void *), void *arg)
{
	struct loop_posted	*p;

	p = xcalloc(1, sizeof *p);
	p->fn = fn;
	p->arg = arg;
	pthread_mutex_lock(&loop_post_lock);
	STAILQ_INSERT_TAIL(&loop_posted_q, p, entry);
	pthread_mutex_unlock(&loop_post_lock);
	/* The only lws call that is safe from another thread. */
	lws_cancel_service(loop_ctx);
}

void
loop_run_posted(void)
{
	STAILQ_HEAD(, loop_posted) run = STAILQ_HEAD_INITIALIZER(run);
	struct loop_posted	*p, *next;

	/* Take the whole queue: what fn posts runs on the next turn. */
	pthread_mutex_lock(&loop_post_lock);
	STAILQ_CONCAT(&run, &loop_posted_q);
	pthread_mutex_unlock(&loop_post_lock);
	STAILQ_FOREACH_SAFE(p, &run, entry, next) {
		p->fn(p->arg);
		free(p);
	}
}

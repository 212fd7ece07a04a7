/* SPDX-License-Identifier: MIT */
/*
 * The one event loop of guestd: libwebsockets' own service loop.  Every
 * file descriptor (pipes of commands, tar pipes, the signalfd) is adopted
 * into it as a raw lws descriptor; timers are lws sul timers; child exits
 * arrive through a signalfd (no polling); worker threads hand results back
 * with loop_post(), which wakes the loop with lws_cancel_service().
 */
#ifndef GUESTD_LOOP_H
#define GUESTD_LOOP_H

#include <stdint.h>
#include <sys/types.h>

struct lws_context;
struct lws_vhost;
struct lws_protocols;

#define LOOP_READ	0x01
#define LOOP_WRITE	0x02
#define LOOP_HUP	0x04	/* peer closed; fd still open, drain it now */

struct loop_fd;
/*
 * Called on the loop.  events is a mask of LOOP_*.  After LOOP_HUP the
 * loop_fd is gone when the callback returns: do not touch it again.
 */
typedef void	(*loop_fd_cb)(struct loop_fd *lf, int events, void *arg);

/* The protocol entry guestd's vhost must list for adopted descriptors. */
extern const struct lws_protocols loop_raw_protocol;

void	 loop_init(struct lws_context *ctx, struct lws_vhost *vh);

/*
 * The lws options that make a listener on host bind to exactly host: lws
 * 4.1 ignores an IPv4 iface while IPv6 is on and would answer on every
 * interface, so IPv6 goes off unless host is an IPv6 address.
 */
int	 loop_listen_options(const char *host);
/*
 * A vhost named name (NULL: lws's "default") listening on host:port
 * (port 0 picks one; lws_get_vhost_listen_port() tells which) and
 * serving protocols; NULL when it cannot listen.
 */
struct lws_vhost *loop_listen(struct lws_context *ctx, const char *name,
	    const char *host, int port, const struct lws_protocols *protocols);
/* Run until loop_stop(); returns 0. */
int	 loop_run(void);
void	 loop_stop(void);
int	 loop_stopping(void);
uint64_t loop_now_ms(void);	/* CLOCK_MONOTONIC */

/*
 * Adopt fd (made non-blocking and CLOEXEC here).  The loop owns fd from now
 * on and closes it.  Reading is wanted at first; writing is not.
 */
struct loop_fd	*loop_fd_add(int fd, loop_fd_cb cb, void *arg);
int		 loop_fd_get(struct loop_fd *lf);
void		 loop_fd_want_read(struct loop_fd *lf, int on);
void		 loop_fd_want_write(struct loop_fd *lf);	/* one shot */
/* Close now; no callback follows.  NULL is a no-op. */
void		 loop_fd_close(struct loop_fd *lf);
/*
 * Write what is pending, p[*off..len), advancing *off: 1 when all of it
 * went, 0 when lf would block (writability is asked for: call again from
 * the LOOP_WRITE callback), -1 when the peer is gone (errno says why).
 * The one write loop of every raw-fd writer.
 */
int		 loop_fd_write_pending(struct loop_fd *lf, const void *p,
		    size_t len, size_t *off);

struct loop_timer;
typedef void	(*loop_timer_cb)(void *arg);
/* One-shot timer; cancel with loop_timer_cancel (NULL is a no-op). */
struct loop_timer	*loop_timer_add(uint64_t ms, loop_timer_cb cb, void *arg);
void			 loop_timer_cancel(struct loop_timer *t);

/* Called on the loop when pid exits; status as from waitpid. */
typedef void	(*loop_child_cb)(pid_t pid, int status, void *arg);
int	 loop_child_watch(pid_t pid, loop_child_cb cb, void *arg);
void	 loop_child_forget(pid_t pid);

/*
 * Run fn(arg) on the loop before each wait for events.  For libraries that
 * read ahead into a queue of their own (Xlib): what sits in that queue
 * never makes the descriptor readable again, so it must be drained before
 * the loop sleeps.  Keep fn cheap: it runs on every loop turn.
 */
void	 loop_prepoll_add(void (*fn)(void *), void *arg);
void	 loop_prepoll_remove(void (*fn)(void *), void *arg);

/*
 * From any thread: run fn(arg) on the loop soon.  The queue is bounded by
 * its callers (each worker posts once per job).
 */
void	 loop_post(void (*fn)(void *), void *arg);
/* Internal: called by the lws protocol on LWS_CALLBACK_EVENT_WAIT_CANCELLED. */
void	 loop_run_posted(void);

#endif

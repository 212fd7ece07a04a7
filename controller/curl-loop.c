/* SPDX-License-Identifier: MIT */
/*
 * curl on the lws loop (curl-loop.h): libcurl's multi-socket API.
 *
 * lws 4.1.6 has no external-poll hooks, so each socket curl asks us to
 * watch is adopted into lws as a raw descriptor under curl_loop_protocol
 * -- a dup(), never curl's own fd, because lws close()s what it adopts --
 * reading enabled with rx flow control and writing asked with
 * lws_callback_on_writable; curl's timer is an lws sul, so curl's own
 * timeouts (connect, low speed, Expect: 100) fire on an idle loop.  Every
 * event goes to curl_multi_socket_action() and then
 * curl_multi_info_read() collects the finished transfers and wakes their
 * tasks.
 *
 * Two lws habits need care.  lws clears POLLOUT after a writeable
 * callback, so a socket that still wants to write is re-armed from a
 * zero-delay sul (as guestd's loop.c does).  And on a hang-up (refused,
 * reset, peer closed) lws closes its dup by itself: curl, which still
 * holds its own fd, must be told (CSELECT_IN|ERR) so it reads the end and
 * fails or finishes the transfer; if it still wants the socket after
 * that, a fresh dup is watched.  Skipping either step leaves the task
 * waiting for ever with lws asleep in poll.
 */
#include "autoconf.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "curl-loop.h"
#include "err.h"
#include "task.h"
#include "xmalloc.h"

struct curl_loop {
	CURLM			*multi;
	struct lws_context	*ctx;
	struct lws_vhost	*vh;
	lws_sorted_usec_list_t	 timer;
	int			 inflight;
	int			 aborting;	/* curl_loop_abort_all() */
	LIST_HEAD(, curl_loop_xfer) xfers;	/* added */
};

/* One socket of curl's, watched through lws. */
struct curl_loop_sock {
	struct curl_loop	*l;
	curl_socket_t		 fd;
	struct lws		*wsi;		/* on our dup of fd */
	int			 what;		/* CURL_POLL_* */
	int			 busy;		/* inside curl_loop_fd_cb */
	int			 dead;		/* removed while busy */
	lws_sorted_usec_list_t	 rearm;
};

static int	curl_loop_fd_cb(struct lws *, enum lws_callback_reasons,
		    void *, void *, size_t);

const struct lws_protocols curl_loop_protocol = {
	CURL_LOOP_PROTOCOL, curl_loop_fd_cb, 0, 0, 0, NULL, 0
};

static void
curl_loop_check_done(struct curl_loop *l)
{
	struct curl_loop_xfer	*x;
	CURLMsg			*msg;
	int			 left;

	while ((msg = curl_multi_info_read(l->multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		x = NULL;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE,
		    (char **)&x);
		curl_multi_remove_handle(l->multi, msg->easy_handle);
		if (x == NULL)
			continue;
		x->result = msg->data.result;
		x->done = 1;
		x->added = 0;
		LIST_REMOVE(x, entry);
		l->inflight--;
		task_cond_broadcast(&x->cv);
	}
}

static void
curl_loop_act(struct curl_loop *l, curl_socket_t fd, int ev)
{
	int	 running;

	curl_multi_socket_action(l->multi, fd, ev, &running);
	curl_loop_check_done(l);
}

static void
curl_loop_timer_cb(lws_sorted_usec_list_t *sul)
{
	struct curl_loop	*l = lws_container_of(sul, struct curl_loop,
				    timer);

	curl_loop_act(l, CURL_SOCKET_TIMEOUT, 0);
}

static int
curl_loop_curl_timer(CURLM *m, long timeout_ms, void *arg)
{
	struct curl_loop	*l = arg;

	(void)m;
	if (timeout_ms < 0)
		lws_sul_cancel(&l->timer);
	else
		lws_sul_schedule(l->ctx, 0, &l->timer, curl_loop_timer_cb,
		    (lws_usec_t)timeout_ms * LWS_US_PER_MS);
	return 0;
}

static void
curl_loop_sock_rearm(lws_sorted_usec_list_t *sul)
{
	struct curl_loop_sock	*k = lws_container_of(sul,
				    struct curl_loop_sock, rearm);

	if (k->wsi != NULL && (k->what & CURL_POLL_OUT))
		lws_callback_on_writable(k->wsi);
}

/* Watch k->fd as curl asked; adopt a dup when none is watched. */
static int
curl_loop_sock_watch(struct curl_loop_sock *k)
{
	lws_sock_file_fd_type	 u;
	int			 d;

	if (k->wsi == NULL) {
		if ((d = fcntl(k->fd, F_DUPFD_CLOEXEC, 0)) == -1)
			return -1;
		memset(&u, 0, sizeof(u));
		u.filefd = d;
		/* On failure lws closed d. */
		k->wsi = lws_adopt_descriptor_vhost(k->l->vh,
		    LWS_ADOPT_RAW_FILE_DESC, u, CURL_LOOP_PROTOCOL, NULL);
		if (k->wsi == NULL)
			return -1;
		lws_set_opaque_user_data(k->wsi, k);
	}
	lws_rx_flow_control(k->wsi, (k->what & CURL_POLL_IN) ? 1 : 0);
	if (k->what & CURL_POLL_OUT)
		lws_callback_on_writable(k->wsi);
	return 0;
}

static void
curl_loop_sock_drop(struct curl_loop_sock *k)
{
	lws_sul_cancel(&k->rearm);
	if (k->wsi != NULL) {
		lws_set_opaque_user_data(k->wsi, NULL);
		lws_set_timeout(k->wsi, PENDING_TIMEOUT_KILLED_BY_PARENT,
		    LWS_TO_KILL_ASYNC);
		k->wsi = NULL;
	}
	/* Removed from inside curl_loop_fd_cb: that frame frees it. */
	if (k->busy)
		k->dead = 1;
	else
		free(k);
}

static int
curl_loop_curl_socket(CURL *easy, curl_socket_t fd, int what, void *arg,
    void *sockp)
{
	struct curl_loop	*l = arg;
	struct curl_loop_sock	*k = sockp;

	(void)easy;
	if (what == CURL_POLL_REMOVE) {
		if (k != NULL) {
			curl_multi_assign(l->multi, fd, NULL);
			curl_loop_sock_drop(k);
		}
		return 0;
	}
	if (k == NULL) {
		k = xcalloc(1, sizeof(*k));
		k->l = l;
		k->fd = fd;
		curl_multi_assign(l->multi, fd, k);
	}
	k->what = what;
	if (curl_loop_sock_watch(k) != 0)
		return -1;	/* curl fails the transfer */
	return 0;
}

static int
curl_loop_fd_cb(struct lws *wsi, enum lws_callback_reasons reason,
    void *user, void *in, size_t len)
{
	struct curl_loop_sock	*k = lws_get_opaque_user_data(wsi);
	struct curl_loop	*l;

	(void)user;
	(void)in;
	(void)len;
	if (k == NULL)
		return 0;
	l = k->l;
	switch (reason) {
	case LWS_CALLBACK_RAW_RX_FILE:
		curl_loop_act(l, k->fd, CURL_CSELECT_IN);
		return 0;
	case LWS_CALLBACK_RAW_WRITEABLE_FILE:
		curl_loop_act(l, k->fd, CURL_CSELECT_OUT);
		/* k may be gone now: look it up again through wsi. */
		if ((k = lws_get_opaque_user_data(wsi)) != NULL &&
		    (k->what & CURL_POLL_OUT))
			lws_sul_schedule(l->ctx, 0, &k->rearm,
			    curl_loop_sock_rearm, 0);
		return 0;
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		/* lws closed our dup on a hang-up: see the top of the file. */
		lws_set_opaque_user_data(wsi, NULL);
		k->wsi = NULL;
		k->busy = 1;
		curl_loop_act(l, k->fd, CURL_CSELECT_IN | CURL_CSELECT_ERR);
		k->busy = 0;
		if (k->dead)
			free(k);
		else if (curl_loop_sock_watch(k) != 0)
			curl_loop_act(l, k->fd, CURL_CSELECT_ERR);
		return 0;
	default:
		return 0;
	}
}

int
curl_loop_new(struct curl_loop **out, struct lws_context *ctx,
    struct lws_vhost *vh, struct errmsg *e)
{
	static int		 inited;
	struct curl_loop	*l;

	*out = NULL;
	if (!inited) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return errmsg_set(e, ERR_INTERNAL, "libcurl did not "
			    "initialise");
		inited = 1;
	}
	l = xcalloc(1, sizeof(*l));
	LIST_INIT(&l->xfers);
	l->ctx = ctx;
	l->vh = vh;
	if ((l->multi = curl_multi_init()) == NULL) {
		free(l);
		return errmsg_set(e, ERR_INTERNAL, "libcurl multi handle");
	}
	curl_multi_setopt(l->multi, CURLMOPT_SOCKETFUNCTION,
	    curl_loop_curl_socket);
	curl_multi_setopt(l->multi, CURLMOPT_SOCKETDATA, l);
	curl_multi_setopt(l->multi, CURLMOPT_TIMERFUNCTION,
	    curl_loop_curl_timer);
	curl_multi_setopt(l->multi, CURLMOPT_TIMERDATA, l);
	*out = l;
	return 0;
}

void
curl_loop_free(struct curl_loop *l)
{
	if (l == NULL)
		return;
	/* Closes curl's cached connections: their socks are dropped. */
	curl_multi_cleanup(l->multi);
	lws_sul_cancel(&l->timer);
	free(l);
}

int
curl_loop_inflight(const struct curl_loop *l)
{
	return l->inflight;
}

void
curl_loop_start(struct curl_loop *l, struct curl_loop_xfer *x, CURL *easy)
{
	memset(x, 0, sizeof(*x));
	x->l = l;
	x->easy = easy;
	curl_easy_setopt(easy, CURLOPT_PRIVATE, x);
	if (l->aborting) {
		x->done = 1;
		x->result = CURLE_ABORTED_BY_CALLBACK;
		return;
	}
	/* curl's timer callback asks for the first turn at once. */
	if (curl_multi_add_handle(l->multi, easy) != CURLM_OK) {
		x->done = 1;
		x->result = CURLE_FAILED_INIT;
		return;
	}
	x->added = 1;
	l->inflight++;
	LIST_INSERT_HEAD(&l->xfers, x, entry);
}

int
curl_loop_wait(struct curl_loop_xfer *x, struct errmsg *e)
{
	while (!x->done)
		if (task_cond_wait(&x->cv, -1) != 0)
			return errmsg_set(e, ERR_INTERNAL, "an HTTP transfer "
			    "awaited outside a task");
	return 0;
}

int
curl_loop_wait_ms(struct curl_loop_xfer *x, int64_t timeout_ms,
    struct errmsg *e)
{
	int	 r;

	if (x->done)
		return 0;
	if ((r = task_cond_wait(&x->cv, timeout_ms)) == ERR_TIMEOUT)
		return ERR_TIMEOUT;
	if (r != 0)
		return errmsg_set(e, ERR_INTERNAL, "an HTTP transfer awaited "
		    "outside a task");
	return 0;
}

void
curl_loop_wake(struct curl_loop_xfer *x)
{
	task_cond_broadcast(&x->cv);
}

int
curl_loop_perform(struct curl_loop *l, CURL *easy, CURLcode *result,
    struct errmsg *e)
{
	struct curl_loop_xfer	 x;
	int			 r;

	curl_loop_start(l, &x, easy);
	if ((r = curl_loop_wait(&x, e)) != 0) {
		curl_loop_cancel(&x);
		return r;
	}
	*result = x.result;
	return 0;
}

void
curl_loop_cancel(struct curl_loop_xfer *x)
{
	if (x->l == NULL || !x->added)
		return;
	curl_multi_remove_handle(x->l->multi, x->easy);
	x->added = 0;
	LIST_REMOVE(x, entry);
	x->l->inflight--;
}

void
curl_loop_abort_all(struct curl_loop *l)
{
	struct curl_loop_xfer	*x;

	if (l == NULL)
		return;
	l->aborting = 1;
	while ((x = LIST_FIRST(&l->xfers)) != NULL) {
		curl_loop_cancel(x);
		x->result = CURLE_ABORTED_BY_CALLBACK;
		x->done = 1;
		/* The task runs when the loop turns, as after any ending. */
		task_cond_broadcast(&x->cv);
	}
}

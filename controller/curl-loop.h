/* SPDX-License-Identifier: MIT */
/*
 * libcurl on the controller's one lws loop: a curl multi handle whose
 * sockets and timer are driven by lws, so a task can run an HTTP
 * transfer as if it were a blocking call while the loop thread never
 * blocks.  Every HTTP client of the controller runs on it: the object
 * store's (s3.c), the Docker engine's (docker-http.c) and the Kubernetes
 * API's (k8s.c).
 *
 * Use: make a CURL easy handle with whatever options the protocol needs
 * (but not CURLOPT_PRIVATE, which is ours), then from a task either
 * curl_loop_perform() it, or curl_loop_start() it and curl_loop_wait()
 * later (a transfer that goes on while the task does other work, e.g.
 * the next part of an upload filling).  The easy handle stays the
 * caller's: curl_easy_cleanup() it after the wait, or after
 * curl_loop_cancel() when the task gives up on a transfer.
 *
 * The callbacks the easy handle was given (read, write, header) run on
 * the loop, inside curl_multi_socket_action(): they may not wait.
 */
#ifndef CONTROLLER_CURL_LOOP_H
#define CONTROLLER_CURL_LOOP_H

#include <curl/curl.h>
#include <libwebsockets.h>

#include "err.h"
#include "task.h"

#define CURL_LOOP_PROTOCOL	"rakazo-curl-fd"

/* Add to the protocol list of the vhost given to curl_loop_new(). */
extern const struct lws_protocols	curl_loop_protocol;

struct curl_loop;

/* One transfer in flight: the caller's storage, opaque but for result. */
struct curl_loop_xfer {
	struct curl_loop	*l;
	CURL			*easy;
	int			 added;
	int			 done;
	CURLcode		 result;	/* after the wait */
	struct task_cond	 cv;
	LIST_ENTRY(curl_loop_xfer) entry;	/* while added */
};

int	curl_loop_new(struct curl_loop **out, struct lws_context *ctx,
	    struct lws_vhost *vh, struct errmsg *e);
/* No transfer may be in flight. */
void	curl_loop_free(struct curl_loop *l);
int	curl_loop_inflight(const struct curl_loop *l);

/* Hands easy to the loop; curl starts at the loop's next turn. */
void	curl_loop_start(struct curl_loop *l, struct curl_loop_xfer *x,
	    CURL *easy);
/*
 * From a task: waits until the transfer ends, however it ends (curl's
 * own timeouts included: set CURLOPT_CONNECTTIMEOUT / LOW_SPEED_* on the
 * handle).  0 with curl's verdict in x->result, or ERR_INTERNAL when
 * called outside a task.
 */
int	curl_loop_wait(struct curl_loop_xfer *x, struct errmsg *e);
/*
 * From a task: waits until the transfer ends or curl_loop_wake(x), at
 * most timeout_ms (< 0: for ever).  0 (look at x->done), ERR_TIMEOUT, or
 * ERR_INTERNAL outside a task.  For a long response read as it comes (a
 * Kubernetes watch): the write callback wakes the task when it saw what
 * the task waits for.
 */
int	curl_loop_wait_ms(struct curl_loop_xfer *x, int64_t timeout_ms,
	    struct errmsg *e);
/* Wakes the task in curl_loop_wait_ms(x); from the loop (a callback). */
void	curl_loop_wake(struct curl_loop_xfer *x);
/* Start and wait: *result gets curl's verdict. */
int	curl_loop_perform(struct curl_loop *l, CURL *easy, CURLcode *result,
	    struct errmsg *e);
/* Takes a transfer that has not ended off the loop; idempotent. */
void	curl_loop_cancel(struct curl_loop_xfer *x);
/*
 * For shutdown: ends every transfer in flight with
 * CURLE_ABORTED_BY_CALLBACK and wakes its task, and fails those started
 * afterwards the same way at once, so that tasks waiting on the network
 * unwind (and free what they hold) instead of being dropped mid-wait.
 */
void	curl_loop_abort_all(struct curl_loop *l);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * A client of one guestd over its control channel (man/guestd-protocol.7).
 * Used by `rakazoctl guest ...` and by the controller (rakazoctl serve).
 *
 * The client lives on its owner's libwebsockets context and vhost, whose
 * protocol list holds gclient_protocol, and is used from tasks (task.h)
 * only: gclient_connect(), gclient_run() and gclient_call() wait by
 * handing the loop back, never by running it, and several tasks may have
 * requests in flight on one client.  rakazoctl serve's loop is such an
 * owner; a program with no loop of its own (the CLI, the benches) runs its
 * body with gclient_main(), which makes one and runs the body as a task.  Requests
 * are asynchronous (callbacks run from the loop); gclient_call() is the
 * waiting convenience for one JSON request/response.  Uploads are pulled
 * from a source callback only when the socket is writable, so a slow guestd
 * never makes the client buffer a whole file.
 */
#ifndef CONTROLLER_GUEST_CLIENT_H
#define CONTROLLER_GUEST_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include <libwebsockets.h>

struct errmsg;

struct gclient;

struct gclient_opts {
	const char	*url;		/* ws://127.0.0.1:7000 (path /control added) */
	const char	*secret;	/* bearer secret; copied, wiped on free */
	int		 timeout_ms;	/* connect + hello; 0 = 10000 */
	/*
	 * The owner's loop; vhost lists gclient_protocol.  NULL: the loop
	 * of gclient_main().
	 */
	struct lws_context *ctx;
	struct lws_vhost *vhost;
};

extern const struct lws_protocols	gclient_protocol;

/* A whole response {"id","ok","result"|"error"}; msg is borrowed. */
typedef void	(*gclient_reply_cb)(struct gclient *c, uint32_t id,
		    json_t *msg, void *arg);
/* A binary frame for id; return 0, or ERR_* to stop the client. */
typedef int	(*gclient_data_cb)(struct gclient *c, uint32_t id,
		    uint8_t channel, const uint8_t *p, size_t n, int end,
		    void *arg);
/* An event {"event", "id"?, ...}; borrowed. */
typedef void	(*gclient_event_cb)(struct gclient *c, json_t *ev, void *arg);
/*
 * Upload source: copy up to max bytes into p and return the count; set
 * *end on the last chunk (the count may be 0 then).  0 without *end
 * pauses the upload until gclient_upload_resume().  Negative ERR_* aborts
 * the whole connection (a request's own trouble should end its body
 * instead: guestd then refuses the request alone).
 */
typedef ssize_t	(*gclient_source_cb)(void *arg, uint8_t *p, size_t max,
		    int *end);

/* Connect, authenticate and exchange hello.  0 or ERR_* with err filled. */
int	 gclient_connect(struct gclient **out, const struct gclient_opts *o,
	    struct errmsg *err);
void	 gclient_free(struct gclient *c);
/* The hello result (borrowed). */
json_t	*gclient_hello(struct gclient *c);

void	 gclient_on_event(struct gclient *c, gclient_event_cb cb, void *arg);
/* Send a request; args is stolen.  Returns the id (> 0) or 0 on error. */
uint32_t gclient_request(struct gclient *c, const char *op, json_t *args,
	    gclient_reply_cb on_reply, gclient_data_cb on_data, void *arg);
/*
 * Drop request id: no callback runs for it any more (its caller gave up
 * and its arg may be gone).  A no-op for an unknown or answered id.
 */
void	 gclient_forget(struct gclient *c, uint32_t id);
/* Stream a body for request id from src (channel 0, END at the end). */
int	 gclient_upload(struct gclient *c, uint32_t id, gclient_source_cb src,
	    void *arg);
/* Un-pause request id's upload: its source has bytes (or its end) now. */
int	 gclient_upload_resume(struct gclient *c, uint32_t id);
/* Serve until *done becomes non-zero, the connection closes or timeout_ms
 * passes with nothing happening (0 = no limit).  0 or ERR_*. */
int	 gclient_run(struct gclient *c, const int *done, int timeout_ms);

/* A sentence on why the connection failed or closed (never a secret);
 * "" while all is well. */
const char *gclient_error(struct gclient *c);

/*
 * Blocking call: on success 0 and *result (owned by the caller).  On an
 * error reply returns its code (ERR_* from err_name) and puts
 * "CODE: message" in err.
 */
int	 gclient_call(struct gclient *c, const char *op, json_t *args,
	    json_t **result, struct errmsg *err);
/* Map a reply's error object to a code; ERR_INTERNAL for unknown names. */
int	 gclient_reply_error(json_t *msg, struct errmsg *err);

/*
 * Run fn(argc, argv) as a task on a loop made for it (gclient_protocol
 * and task_fd_protocol on its default vhost), and return what fn
 * returned once it has.  Clients connected with a NULL ctx use this loop.
 */
int	 gclient_main(int argc, char **argv, int (*fn)(int, char **));

#endif

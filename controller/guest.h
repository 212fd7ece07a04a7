/* SPDX-License-Identifier: MIT */
/*
 * Talking to a computer's guestd, the same for every provider (doc/DESIGN.md
 * P-1): the provider names the endpoint (provider.h), this module owns the
 * rest: one cached connection per computer shared by every task with a
 * request for it (guest-client.h), one retry when a cached connection died
 * with an old guestd, calls, streamed uploads and downloads, and the
 * gateway's address.  A long command on one bot never holds up another
 * bot's observe, and no provider is on a request's path.
 *
 * An endpoint may be served in this process (inproc://NAME/COMPUTER): a
 * stand-in registered with guest_inproc_register() answers the same calls
 * (the fake provider's, for tests of controller logic).  Its calls
 * buffer the body (64 MiB at most): it serves tests, never large files.
 *
 * Calls to a ws:// endpoint wait by handing the loop back, so they run in
 * a task (task.h) on the loop given to guest_init().
 */
#ifndef CONTROLLER_GUEST_H
#define CONTROLLER_GUEST_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "store.h"

struct errmsg;
struct provider;
struct lws_context;
struct lws_vhost;

/*
 * A request body streamed to guestd (guest_call_upload).  read() runs on
 * the loop and never waits: it copies up to max bytes and returns the
 * count, sets *end with the last bytes (the count may be 0 then), or
 * returns 0 when nothing is there yet.  After such a 0 the source's owner
 * calls ready(ready_arg), which this module sets while the call runs,
 * once bytes or the end arrived.  A source whose producer left ends the
 * body early: guestd refuses a body shorter than its announced size.
 */
struct guest_src {
	ssize_t	(*read)(void *arg, uint8_t *p, size_t max, int *end);
	void	*arg;
	void	(*ready)(void *ready_arg);
	void	*ready_arg;
};

/*
 * Channel 0 bytes of a call, handed over as they arrive (on the loop).
 * write() returns 0, or ERR_* to drop the rest of this call's bytes (the
 * call itself still runs to its reply).
 */
struct guest_sink {
	int	(*write)(void *arg, const uint8_t *p, size_t n);
	void	*arg;
};

/*
 * An in-process guestd stand-in.  call() answers one request for computer
 * at once: args borrowed, the body in in/inlen, channel 0 in *out
 * (malloc'd, when out != NULL).  An error returns its code with
 * "CODE: message" in err.
 */
struct guest_inproc {
	const char	*name;
	int	(*call)(const char *computer, const char *op, json_t *args,
		    const void *in, size_t inlen, json_t **result, void **out,
		    size_t *outlen, struct errmsg *err);
};

/* The loop connections live on; its vhost lists gclient_protocol. */
void	guest_init(struct lws_context *ctx, struct lws_vhost *vh);
/* Serve inproc://NAME/... from s (static; registering twice is a no-op). */
void	guest_inproc_register(const struct guest_inproc *s);
/* Computer id's endpoint changed or is gone: drop its connections. */
void	guest_forget(const char *id);

/*
 * One guestd request: args stolen; in/inlen uploaded as the body when
 * in != NULL; channel 0 bytes come back in *out (malloc'd, when out !=
 * NULL).  An error reply returns its code with "CODE: message" in err.
 */
int	guest_call(struct provider *p, const struct store_computer *c,
	    const char *op, json_t *args, const void *in, size_t inlen,
	    json_t **result, void **out, size_t *outlen, struct errmsg *err);
/* From a task: one request whose body comes from src; args stolen. */
int	guest_call_upload(struct provider *p, const struct store_computer *c,
	    const char *op, json_t *args, struct guest_src *src,
	    json_t **result, struct errmsg *err);
/* From a task: one request whose channel 0 goes to sink; args stolen. */
int	guest_call_download(struct provider *p,
	    const struct store_computer *c, const char *op, json_t *args,
	    const struct guest_sink *sink, json_t **result,
	    struct errmsg *err);
/* "HOST:PORT" of the computer's screen gateway (G-13), or ERR_*. */
int	guest_gateway(struct provider *p, const struct store_computer *c,
	    char *hostport, size_t len);

#endif

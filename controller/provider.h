/*
 * Providers (doc/DESIGN.md P-1, P-2).  Because guestd implements desktop, exec
 * and files the same way everywhere, a provider only supplies the lifecycle
 * (start or reconnect, stop, destroy, is it alive) and a way to reach its
 * guestd; provider_call() is that way, one control-channel request with an
 * optional upload and download.  SANDBOX_PROVIDER picks the table: local
 * (guestd as a child process), fake (in-process, for tests of controller
 * logic) and none (computers disabled).
 *
 * A computer's provider reference (pid, port, secret file) lives in the
 * computer row's ref as JSON: a restarted controller reads it back and
 * reconnects to a guestd that still runs (C-11: an acceleration path, not
 * durable data).
 */
#ifndef CONTROLLER_PROVIDER_H
#define CONTROLLER_PROVIDER_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "store.h"

struct errmsg;

struct lws_context;
struct lws_vhost;

struct provider_config {
	const char	*data_dir;	/* DATA_DIR */
	const char	*guestd;	/* guestd binary (local) */
	const char	*guest_user;	/* --user for guestd when root */
	/*
	 * Local, as root: "LO-HI", the uids computers get one each of
	 * (LOCAL_UID_RANGE); "" or "off" runs them all as guest_user.
	 */
	const char	*uid_range;
	/* Local, one shared user: accept more than one computer anyway. */
	int		 allow_shared_user;
	/* The serve loop guestd clients attach to (guest-client.h). */
	struct lws_context *ctx;
	struct lws_vhost *vhost;
};

struct provider;

/*
 * A request body streamed to guestd (provider_call_upload).  read() runs
 * on the loop and never waits: it copies up to max bytes and returns the
 * count, sets *end with the last bytes (the count may be 0 then), or
 * returns 0 when nothing is there yet.  After such a 0 the source's owner
 * calls ready(ready_arg), which the provider sets while the call runs,
 * once bytes or the end arrived.  A source whose producer left ends the
 * body early: guestd refuses a body shorter than its announced size.
 */
struct provider_src {
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
struct provider_sink {
	int	(*write)(void *arg, const uint8_t *p, size_t n);
	void	*arg;
};

struct provider_ops {
	const char	*name;
	/* Optional: check the configuration at start-up.  0 or ERR_*. */
	int	(*init)(struct provider *, struct errmsg *err);
	/*
	 * Optional: how computers are kept apart ("uid": a user each;
	 * "shared-user": one user for all), for /internal/health.
	 */
	const char *(*isolation)(struct provider *);
	/*
	 * Optional: may computer id (about to be created) exist beside the
	 * computers in s?  0, or ERR_* with a sentence in err.
	 */
	int	(*admit)(struct provider *, struct store *s, const char *id,
		    struct errmsg *err);
	/* Start c (stopped) or reconnect; fills c->ref.  0 or ERR_*. */
	int	(*start)(struct provider *, struct store_computer *c,
		    struct errmsg *err);
	/* 1 running, 0 not, < 0 cannot tell. */
	int	(*alive)(struct provider *, const struct store_computer *c);
	int	(*stop)(struct provider *, struct store_computer *c);
	/* Stop and remove the computer's workspace. */
	int	(*destroy)(struct provider *, struct store_computer *c);
	/*
	 * One guestd request: args stolen; in/inlen uploaded as the body
	 * when in != NULL; channel 0 bytes come back in *out (malloc'd,
	 * when out != NULL).  An error reply returns its code with
	 * "CODE: message" in err.
	 */
	int	(*call)(struct provider *, const struct store_computer *c,
	    const char *op, json_t *args, const void *in, size_t inlen,
	    json_t **result, void **out, size_t *outlen, struct errmsg *err);
	/*
	 * Optional streaming forms of call: the body pulled from src, or
	 * channel 0 handed to sink; memory stays bounded by the source and
	 * the sink.  Without them provider_call_upload()/_download() buffer
	 * the whole body (fake and none only: tests and refusals).
	 */
	int	(*call_upload)(struct provider *,
		    const struct store_computer *c, const char *op,
		    json_t *args, struct provider_src *src, json_t **result,
		    struct errmsg *err);
	int	(*call_download)(struct provider *,
		    const struct store_computer *c, const char *op,
		    json_t *args, const struct provider_sink *sink,
		    json_t **result, struct errmsg *err);
	void	(*free)(struct provider *);
	/* "HOST:PORT" of the computer's screen gateway (G-13), or ERR_*. */
	int	(*gateway)(struct provider *, const struct store_computer *c,
		    char *hostport, size_t len);
};

struct provider {
	const struct provider_ops	*ops;
	struct provider_config		 cfg;
	void				*impl;
};

extern const struct provider_ops	provider_local_ops;
extern const struct provider_ops	provider_fake_ops;
extern const struct provider_ops	provider_none_ops;

/* Provider by name; ERR_CONFIG with a sentence for an unknown one. */
int	provider_new(struct provider **out, const char *name,
	    const struct provider_config *cfg, struct errmsg *err);
void	provider_free(struct provider *p);
const char *provider_name(const struct provider *p);
/* "uid", "shared-user", or NULL when the provider does not say. */
const char *provider_isolation(struct provider *p);
/* May computer id be created beside those in s?  0 or ERR_* (err). */
int	provider_admit(struct provider *p, struct store *s, const char *id,
	    struct errmsg *err);

int	provider_start(struct provider *p, struct store_computer *c,
	    struct errmsg *err);
int	provider_alive(struct provider *p, const struct store_computer *c);
int	provider_stop(struct provider *p, struct store_computer *c);
int	provider_destroy(struct provider *p, struct store_computer *c);
int	provider_gateway(struct provider *p, const struct store_computer *c,
	    char *hostport, size_t len);
int	provider_call(struct provider *p, const struct store_computer *c,
	    const char *op, json_t *args, const void *in, size_t inlen,
	    json_t **result, void **out, size_t *outlen, struct errmsg *err);
/* From a task: one request whose body comes from src; args stolen. */
int	provider_call_upload(struct provider *p,
	    const struct store_computer *c, const char *op, json_t *args,
	    struct provider_src *src, json_t **result, struct errmsg *err);
/* From a task: one request whose channel 0 goes to sink; args stolen. */
int	provider_call_download(struct provider *p,
    const struct store_computer *c, const char *op, json_t *args,
    const struct provider_sink *sink, json_t **result, struct errmsg *err);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * A small Kubernetes REST client for the kubernetes provider: JSON
 * requests and watches over libcurl on the controller's loop
 * (curl-loop.h), so each call reads as a blocking call from a task while
 * the loop never blocks.  Credentials come from kubeconfig.h; the bearer
 * token goes to curl only (never into a log line, an error or a URL).
 *
 * Errors: a transfer that fails (refused, reset, TLS, timeout) is
 * ERR_K8S_UNAVAILABLE; an answer that is not 2xx is mapped from its
 * status and Status body by k8s_status_error() to a stable code whose
 * sentence quotes the API's own message.  401 and transport failures say
 * nothing about a pod: callers must treat them as "cannot tell" (C-13).
 */
#ifndef CONTROLLER_K8S_H
#define CONTROLLER_K8S_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "curl-loop.h"
#include "kubeconfig.h"

#define K8S_BODY_MAX	(4 * 1024 * 1024)
#define K8S_LINE_MAX	(1024 * 1024)

struct errmsg;
struct k8s;

/* Takes kc (it is zeroed). */
int	k8s_new(struct k8s **out, struct curl_loop *loop, struct kubeconfig *kc,
	    struct errmsg *e);
void	k8s_free(struct k8s *k);

/*
 * One request: path starts with "/" (query included, escaped).  0 with
 * the HTTP status and the JSON reply (NULL when the body is not JSON),
 * or ERR_K8S_UNAVAILABLE / ERR_* (e).
 */
int	k8s_request(struct k8s *k, const char *method, const char *path,
	    json_t *body, int64_t timeout_ms, long *status, json_t **reply,
	    struct errmsg *e);

/*
 * A non-2xx answer as a stable code: 401 UNAUTHORIZED, 403 FORBIDDEN,
 * 404 NOT_FOUND, 409 ALREADY_EXISTS (or a conflict), 422 INVALID, 429
 * TOO_MANY_REQUESTS, 5xx UNAVAILABLE, else ERROR; the sentence names
 * what was tried and quotes the Status message (bounded).
 */
int	k8s_status_error(long status, json_t *reply, const char *what,
	    struct errmsg *e);
/* The code alone (for callers and tests). */
int	k8s_status_code(long status, json_t *reply);

/*
 * A watch: GET path (with watch=1) whose body is one JSON event per
 * line.  Each event goes to fn(arg, type, object) on the loop; fn may
 * not wait, and returns 1 to wake the task in k8s_watch_wait().
 */
struct k8s_watch {
	struct k8s		*k;
	CURL			*easy;
	struct curl_slist	*hdrs;
	struct curl_loop_xfer	 x;
	char			*line;
	size_t			 len;
	int			 overflow;
	long			 status;	/* once the answer starts */
	json_t			*error;		/* a non-200 answer's body */
	int			 events;	/* received so far */
	int			(*fn)(void *, const char *, json_t *);
	void			*arg;
};

int	k8s_watch_start(struct k8s *k, struct k8s_watch *w, const char *path,
	    int (*fn)(void *, const char *, json_t *), void *arg,
	    struct errmsg *e);
/*
 * Until fn asks to wake, the watch ends (*ended = 1: the server closed
 * it or it failed) or timeout_ms passed (ERR_TIMEOUT).
 */
int	k8s_watch_wait(struct k8s_watch *w, int64_t timeout_ms, int *ended,
	    struct errmsg *e);
/* Ends (if still on) and frees the watch; idempotent. */
void	k8s_watch_stop(struct k8s_watch *w);

/* A label value from s: [A-Za-z0-9._-], alnum at both ends, <= 63. */
void	k8s_label_value(const char *s, char *out, size_t len);

#endif

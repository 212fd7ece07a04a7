/* SPDX-License-Identifier: MIT */
/*
 * Requests to the Docker Engine API over its Unix socket, for the docker
 * provider (provider-docker.c).  libcurl speaks HTTP on the serve loop
 * (curl-loop.h) from the calling task, so a slow engine holds up the
 * request that waits for it and nothing else on the loop.
 */
#ifndef CONTROLLER_DOCKER_HTTP_H
#define CONTROLLER_DOCKER_HTTP_H

#include <jansson.h>

struct curl_loop;
struct errmsg;

/* The largest reply body kept (inspect of a container is a few KiB). */
#define DOCKER_HTTP_REPLY_MAX	(4 * 1024 * 1024)

/*
 * One request from a task, on l: method and path ("/containers/create?name=x")
 * to the engine at socket, body (borrowed, or NULL) sent as JSON.  0 with
 * the HTTP status in *status and the JSON reply in *reply (NULL when the
 * body was empty or not JSON; reply may be NULL), or ERR_CONNECT when the
 * engine does not answer, ERR_TIMEOUT after timeout_ms, ERR_* (err).
 */
int	docker_http_request(struct curl_loop *l, const char *socket,
	    const char *method, const char *path, json_t *body,
	    int timeout_ms, long *status, json_t **reply,
	    struct errmsg *err);
/* The engine's message in an error reply ({"message": ...}), or "". */
const char *docker_http_message(json_t *reply);

#endif

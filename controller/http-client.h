/* SPDX-License-Identifier: MIT */
/*
 * A tiny blocking HTTP/1.1 client for the CLI's calls to rakazoctl serve.
 * JSON calls are read whole; file transfers stream (http_client_stream).
 * Why not libcurl: one more library for requests to a loopback JSON API
 * whose replies always carry Content-Length; why not an lws client: a
 * blocking request/response is all a CLI verb needs and lws would bring an
 * event loop for it.  One request per connection (Connection: close),
 * replies capped at HTTP_CLIENT_MAX bytes.
 */
#ifndef CONTROLLER_HTTP_CLIENT_H
#define CONTROLLER_HTTP_CLIENT_H

#include <sys/types.h>

#include <stddef.h>

struct errmsg;

#define HTTP_CLIENT_MAX	(256 * 1024 * 1024)

struct http_client_resp {
	int	 status;
	char	*body;		/* NUL-terminated, malloc'd */
	size_t	 len;
};

/*
 * base: "http://HOST:PORT"; token: bearer or NULL.  0 or ERR_CONNECT /
 * ERR_PROTOCOL / ERR_TOO_LARGE with a sentence in err.
 */
int	http_client_request(const char *base, const char *method,
	    const char *path, const char *token, const char *body,
	    size_t len, struct http_client_resp *out, struct errmsg *err);
void	http_client_resp_free(struct http_client_resp *r);

/*
 * Streams, for files of any size (rakazoctl put, get).  A body of len
 * bytes (len < 0: none) is pulled from src as the socket takes it; src
 * returns a count, 0 at an early end of its input or ERR_* (either aborts
 * the request by closing the connection, so the server never sees a
 * whole body).  A reply that comes before the body is sent stops the
 * sending (a refusal).  A 2xx reply's body goes to sink when sink is set
 * (its length checked against Content-Length: a cut transfer is
 * ERR_PROTOCOL); other replies land in out->body, capped.
 */
typedef ssize_t	(*http_client_src)(void *arg, char *p, size_t max);
typedef int	(*http_client_sink)(void *arg, const char *p, size_t n);
int	http_client_stream(const char *base, const char *method,
	    const char *path, const char *token, long long len,
	    http_client_src src, void *src_arg, http_client_sink sink,
	    void *sink_arg, struct http_client_resp *out, struct errmsg *err);

#endif

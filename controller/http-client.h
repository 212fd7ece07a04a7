/*
 * A tiny blocking HTTP/1.1 client for the CLI's calls to rakazoctl serve.
 * Why not libcurl: one more library for requests to a loopback JSON API
 * whose replies always carry Content-Length; why not an lws client: a
 * blocking request/response is all a CLI verb needs and lws would bring an
 * event loop for it.  One request per connection (Connection: close),
 * replies capped at HTTP_CLIENT_MAX bytes.
 */
#ifndef CONTROLLER_HTTP_CLIENT_H
#define CONTROLLER_HTTP_CLIENT_H

#include <stddef.h>

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
	    size_t len, struct http_client_resp *out, char *err,
	    size_t errlen);
void	http_client_resp_free(struct http_client_resp *r);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * What rakazoctl serve decides from a request's headers alone, before the
 * request takes one of the server's slots or a byte of its body is read
 * (serve.c): who may ask (the bearer token), how long the body says it
 * is, and the query string rebuilt from the arguments lws decoded.  No
 * socket and no lws here, so a fuzzer drives the same code
 * (tests/fuzz/fuzz_serve_request.c).
 */
#ifndef CONTROLLER_SERVE_REQ_H
#define CONTROLLER_SERVE_REQ_H

#include <stddef.h>
#include <stdint.h>

/* A Content-Length: 1..19 decimal digits, nothing else. */
#define SERVE_REQ_LENGTH_DIGITS	19

/*
 * Is an "Authorization" header value (hdr, hlen bytes, may hold NULs) the
 * bearer token?  "Bearer" in any case, one space, then exactly the token;
 * compared in constant time for a given length.
 */
int	serve_req_authorized(const char *hdr, size_t hlen, const char *token);
/* May this request come without a token (GET /internal/health)? */
int	serve_req_public(const char *method, const char *path);
/*
 * A Content-Length value: *out the length, or ERR_BAD_REQUEST for anything
 * but 1..SERVE_REQ_LENGTH_DIGITS digits that fit an int64_t.
 */
int	serve_req_length(const char *s, size_t n, int64_t *out);

/*
 * The query string, one decoded argument at a time.  Arguments are joined
 * with '&'; inside an argument '%', '&' and NUL are %-encoded again so the
 * string splits back the same way and no argument is cut short.
 */
struct serve_query {
	char	*s;		/* NUL-terminated; NULL until an argument */
	size_t	 len, cap;
	size_t	 nargs;
};

void	serve_req_query_add(struct serve_query *q, const char *arg,
	    size_t n);
/* The joined string (stolen; "" when there was none); q is reset. */
char	*serve_req_query_take(struct serve_query *q);

#endif

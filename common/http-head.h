/* SPDX-License-Identifier: MIT */
/*
 * The head of an HTTP/1.x response, as our own clients read it: guestd's
 * DevTools discovery requests (cdp.c), the websocket handshake's answer
 * (wsframe.c) and rakazoctl's requests to the controller (http-client.c).
 *
 * Also the one rule our servers (rakazoctl serve, guestd's gateway and
 * compat server) apply to a request's framing.
 *
 * The parsers take untrusted bytes, never read past n, and return a
 * stable ERR_* for anything they do not accept.
 */
#ifndef COMMON_HTTP_HEAD_H
#define COMMON_HTTP_HEAD_H

#include <stddef.h>
#include <stdint.h>

/*
 * The status line at the start of p[0..n) ("HTTP/1.1 200 OK"): 0 with the
 * code (100..599) in *status, else ERR_PROTOCOL and *status 0.
 */
int	 http_head_status(const char *p, size_t n, int *status);
/*
 * The whole head in p[0..n), through its empty line: returns the head's
 * length, 0 for more, ERR_TOO_LARGE past max bytes, ERR_PROTOCOL for a
 * bad status line or Content-Length, a second Content-Length or any
 * Transfer-Encoding (no caller decodes chunked replies).  *status gets the code, *clen the
 * Content-Length or -1.
 */
int	 http_head_parse(const char *p, size_t n, size_t max, int *status,
	    int64_t *clen);

/*
 * How a request's body is framed, from whether it came with Content-Length
 * and with Transfer-Encoding: 0 for a length or no body.  Both:
 * ERR_BAD_REQUEST (RFC 9112 6.3: the two disagree on where the request
 * ends, the way requests are smuggled past a proxy).  Transfer-Encoding
 * alone: ERR_LENGTH_REQUIRED, as lws reads no chunked request body and one
 * read as raw bytes would run its chunks as further requests.  Either
 * refusal must close the connection.
 */
int	 http_head_req_framing(int has_length, int has_te);

#endif

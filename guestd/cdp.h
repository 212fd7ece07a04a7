/* SPDX-License-Identifier: MIT */
/*
 * A Chrome DevTools Protocol client on guestd's one loop
 * (doc/DESIGN.md G-22, G-24).
 *
 * Transport: a loopback TCP socket adopted into the loop (loop.h), spoken
 * as HTTP/1.1 for discovery (GET /json/version, /json/list) and as a
 * WebSocket client (RFC 6455: masked frames out, unmasked in) for the
 * protocol itself.  Nothing blocks: connect, handshake, writes and reads
 * all continue from loop callbacks.
 *
 * Bounds: one inbound message (a reassembled WebSocket message or an HTTP
 * body) is at most CDP_MAX_MESSAGE bytes; a bigger one fails the
 * connection with ERR_TOO_LARGE rather than growing memory.  Every call
 * has a deadline.
 *
 * Calls use the browser-level connection with flattened sessions
 * (Target.attachToTarget {flatten:true}): a call names the session of the
 * page it is for, or NULL for the browser itself.
 */
#ifndef GUESTD_CDP_H
#define GUESTD_CDP_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define CDP_MAX_MESSAGE		(8 * 1024 * 1024)
#define CDP_MAX_HTTP_HEAD	(16 * 1024)
#define CDP_CALL_TIMEOUT_MS	30000

struct cdp;

/*
 * A call's answer.  code 0: result is the CDP "result" object (borrowed:
 * copy what you keep).  ERR_CDP: msg is the browser's error message.
 * Another ERR_*: the connection failed or the call timed out (msg says).
 */
typedef void	(*cdp_reply_fn)(void *arg, int code, json_t *result,
		    const char *msg);
/* An event: params and session borrowed (session NULL for the browser). */
typedef void	(*cdp_event_fn)(void *arg, const char *method, json_t *params,
		    const char *session);
/* The connection is ready (code 0) or failed/closed (code != 0). */
typedef void	(*cdp_state_fn)(void *arg, int code);

/*
 * Connect to ws://127.0.0.1:port<path> (path like
 * "/devtools/browser/<id>").  state() is called once with 0 when the
 * handshake is done, and once more (or only once) with an ERR_* when the
 * connection ends.  NULL on immediate failure.
 */
struct cdp	*cdp_open(int port, const char *path, cdp_state_fn state,
		    cdp_event_fn event, void *arg);
/*
 * Send method with params (stolen; NULL for {}).  reply() runs exactly
 * once, later, on the loop (never from inside cdp_call).  0 or ERR_*
 * (then reply never runs).
 */
int		 cdp_call(struct cdp *c, const char *session,
		    const char *method, json_t *params, uint64_t timeout_ms,
		    cdp_reply_fn reply, void *arg);
/* Forget the replies owed to arg (its owner is going away). */
void		 cdp_forget(struct cdp *c, void *arg);
/*
 * Close and free.  Calls still pending are answered with ERR_PEER_GONE
 * first; state() is not called.  Safe from inside any cdp callback.
 * NULL is a no-op.
 */
void		 cdp_free(struct cdp *c);

/*
 * GET http://127.0.0.1:port<path>; done(arg, 0, body, len) with a 200
 * body, or an ERR_*.  The body is valid during the call only.
 */
typedef void	(*cdp_http_fn)(void *arg, int code, const char *body,
		    size_t len);
int		 cdp_http_get(int port, const char *path, cdp_http_fn done,
		    void *arg);

/*
 * The WebSocket frame parser, exposed for tests and the fuzzer.  Parses
 * one server frame from p[0..n): returns bytes consumed (> 0), 0 when
 * more bytes are needed, ERR_PROTOCOL for a malformed frame or
 * ERR_TOO_LARGE for a payload above max.
 */
struct cdp_frame {
	int		 fin;
	int		 opcode;
	const uint8_t	*payload;
	size_t		 len;
};
int		 cdp_ws_parse(const uint8_t *p, size_t n, size_t max,
		    struct cdp_frame *f);
/*
 * The status line and head of an HTTP response in p[0..n): returns the
 * head length (through CRLFCRLF), 0 for more, ERR_PROTOCOL or
 * ERR_TOO_LARGE; *status gets the code, *clen the Content-Length or -1.
 */
int		 cdp_http_head(const char *p, size_t n, int *status,
		    int64_t *clen);

#endif

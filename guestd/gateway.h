/* SPDX-License-Identifier: MIT */
/*
 * The screen gateway (doc/DESIGN.md G-13, G-14, G-17, G-34, C-14): one HTTP
 * port (a second lws vhost in guestd's one context and loop) for every
 * desktop.
 *
 *   GET /screen/<token>              websocket (subprotocol "binary" or
 *   GET /?token=<token>              none) carrying RFB to and from the
 *   GET /websockify?token=<token>    capability's display
 *   GET /embed.html?token=<token>    the embed page (built in, unless
 *                                    the page directory has one)
 *   GET /novnc/<file>                noVNC, from a local directory
 *   GET /<file>                      a static file from the page
 *                                    directory, when one is configured
 *
 * A bad path or token is refused before the upgrade completes, so no RFB
 * byte is ever sent to it.  Every response carries Cache-Control:
 * no-transform.  Each viewer gets a connection to its capability's Unix
 * socket; at most one chunk per viewer is in flight towards the browser,
 * and nothing more is read from RFB until it is written, so a viewer that
 * stops reading costs a bounded amount of memory.
 *
 * Diagnostics (C-14), logged and sent to every controller, each with a
 * random connection_id and the policy, never a token or URL:
 * screen.proxy.target_rejected {reason: invalid_path|authority_rejected},
 * screen.proxy.websocket_upgraded, screen.proxy.websocket_handshake_failed,
 * screen.proxy.websocket_error {error}, screen.proxy.websocket_closed
 * {duration_ms, closed_by: client|upstream|revoked, upstream_handshake}.
 */
#ifndef GUESTD_GATEWAY_H
#define GUESTD_GATEWAY_H

#include <stddef.h>

struct capability;
struct lws_context;

/*
 * Listen on host:port (port 0 picks one) in ctx; page_dir (or NULL)
 * holds static files.  0 or ERR_*.
 */
int	 gateway_start(struct lws_context *ctx, const char *host, int port,
	    const char *page_dir);
/* Where /novnc/ comes from (default /usr/share/novnc, Debian's novnc). */
void	 gateway_set_novnc(const char *dir);
/*
 * Where the terminal page comes from (pty.h): DIR/term.html is served at
 * /term.html and DIR/xterm/<file> at /xterm/<file>.
 */
void	 gateway_set_term_assets(const char *dir);
/*
 * Offer every gateway callback to fn first (pty_gateway_cb: the /term/
 * websockets); PTY_PASS from it means "not mine".  main.c sets it.
 */
struct lws;
typedef int	(*gateway_term_fn)(struct lws *wsi, int reason, void *in,
		    size_t len);
void	 gateway_set_term(gateway_term_fn fn);
/*
 * Answer a websocket upgrade being refused with an HTTP status (403, 404,
 * else 503) and a one-line body, from a FILTER_PROTOCOL_CONNECTION
 * callback that then returns nonzero.
 */
void	 gateway_refuse(struct lws *wsi, int code, const char *body);
/* The bound port, 0 when the gateway is off. */
int	 gateway_port(void);
/* Close every websocket of cap now (closed_by revoked). */
void	 gateway_drop(const struct capability *cap);
unsigned gateway_count(void);

#endif

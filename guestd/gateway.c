/* SPDX-License-Identifier: MIT */
/*
 * The screen gateway: websockets to capabilities' Unix sockets.
 *
 * Per viewer (struct gateway_conn, lws's per-session data):
 *
 *   browser --ws--> [in: raw bytes] --framer--> whole RFB messages --> up
 *   browser <--ws-- [out: one chunk] <---------------------------------- up
 *
 * "up" is a connection to the capability's socket, adopted into the loop.
 * Right after connecting we send the client ProtocolVersion libvncserver
 * expects ("pre-feed", so it need not sniff 100 ms for a websocket) and
 * drop the browser's own copy when it arrives.  Downstream, one chunk at
 * most waits for the browser: we stop reading up until lws says the
 * websocket is writeable again.  Upstream, whole messages only (a half
 * message would make libvncserver block the loop), view viewers' input
 * messages are dropped here as well as in rfb.c, and nothing is forwarded
 * while the viewer's RFB output is backed up (it is not reading), so
 * libvncserver is never asked for an update it could not write at once.
 */
#include "autoconf.h"

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>
#include <libwebsockets.h>

#include "capability.h"
#include "conncap.h"
#include "conncap-lws.h"
#include "control.h"
#include "err.h"
#include "gateway.h"
#include "http-head.h"
#include "log.h"
#include "loop.h"
#include "pty.h"
#include "queue-compat.h"
#include "rfb.h"
#include "token.h"
#include "xmalloc.h"

#define GW_CHUNK	(64 * 1024)	/* lws's receive buffer */
/*
 * Read from upstream at once, and sent as one websocket message: a whole
 * 320x240 Raw update fits, so it costs one read, one write and two loop
 * turns instead of five of each.  Pages are touched only as used.
 */
#define GW_OUT_CHUNK	(512 * 1024)
#define GW_IN_MAX	(RFB_MSG_MAX + 64 * 1024)
#define GW_BACKLOG	(256 * 1024)	/* RFB bytes waiting for the viewer */
#define GW_UP_SNDBUF	(4 * 1024 * 1024)
#define GW_URI_MAX	512
/*
 * Connections (conncap.h): a peer address holds at most GW_PEER_CONNS;
 * connections that are not a websocket past its token (pages, a
 * handshake not yet done, idle keep-alives) at most GW_MAX_CONNS -
 * GW_RESERVE.  Past either a newcomer sheds the oldest of those, so a
 * flood pushes out only itself, never a viewer.  guestd's descriptors
 * must stay below FD_SETSIZE (libvncserver), hence the small numbers.
 */
#define GW_MAX_CONNS	256
#define GW_RESERVE	64
#define GW_PEER_CONNS	64

enum gw_closer { GW_BY_NONE, GW_BY_CLIENT, GW_BY_UPSTREAM, GW_BY_REVOKED };

struct gateway_conn {
	struct lws		*wsi;
	const struct capability	*cap;	/* NULL once revoked */
	char			 token[TOKEN_STRLEN + 1];	/* filter -> est. */
	char			 id[17];
	int			 control;
	int			 established;
	uint64_t		 start_ms;
	enum gw_closer		 closed_by;
	int			 up_seen;	/* upstream sent its first byte */
	size_t			 ver_out;	/* server version bytes sent on */

	struct loop_fd		*up;
	uint8_t			*out;		/* LWS_PRE + GW_OUT_CHUNK */
	size_t			 outlen;	/* 0: nothing in flight */

	struct rfb_framer	 fr;
	int			 version_seen;
	uint8_t			*in;		/* raw bytes from the browser */
	size_t			 inlen, incap;
	uint8_t			*pend;		/* framed, not yet written up */
	size_t			 pendlen, pendoff, pendcap;
	int			 rx_paused;
	int			 req_inflight;	/* an update request unanswered */
	uint8_t			 stash[10];	/* the request waiting for it */
	int			 stashed;

	LIST_ENTRY(gateway_conn) entry;	/* in gw_conns while established */
};

static struct lws_vhost		*gw_vh;
static int			 gw_port_bound;
static char			 gw_page_dir[PATH_MAX];
static char			 gw_novnc_dir[PATH_MAX] = "/usr/share/novnc";
static char			 gw_term_dir[PATH_MAX];
static gateway_term_fn		 gw_term_cb;
static LIST_HEAD(, gateway_conn) gw_conns = LIST_HEAD_INITIALIZER(gw_conns);
static unsigned			 gw_nconns;
static struct conncap		*gw_cap;
static unsigned			 gw_nwsi;	/* every connection, any state */

static int	gw_cb(struct lws *, enum lws_callback_reasons, void *, void *,
		    size_t);

static struct lws_protocols gw_protocols[] = {
	/* tx_packet_size: lws would cut a larger write to rx_buffer_size and
	 * copy the rest aside, to send on later loop turns (it allows for
	 * the frame header itself). */
	{ "binary", gw_cb, sizeof(struct gateway_conn), GW_CHUNK, 0, NULL,
	    GW_OUT_CHUNK },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

int
gateway_port(void)
{
	return gw_port_bound;
}

unsigned
gateway_count(void)
{
	return gw_nconns;
}

/* ---- diagnostics (C-14) -------------------------------------------------- */

static const char *
gw_policy(const struct gateway_conn *g)
{
	if (g == NULL || !g->established)
		return "unknown";
	return g->control ? "control" : "view";
}

/* Log and broadcast; steals body (extra fields). */
static void
gw_event(const char *name, const char *cid, const char *policy, json_t *body)
{
	char		 line[512], *s;

	if (body == NULL)
		body = json_object();
	json_object_set_new(body, "connection_id", json_string(cid));
	json_object_set_new(body, "policy", json_string(policy));
	s = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
	log_info(name, "detail=%s", log_quote(line, sizeof line,
	    s != NULL ? s : "{}"));
	free(s);
	control_broadcast(name, body);
}

static void
gw_reject(const char *reason)
{
	char	cid[17];

	(void)token_hex(cid, 8);
	gw_event("screen.proxy.target_rejected", cid, "unknown",
	    json_pack("{s:s}", "reason", reason));
}

/* ---- closing ------------------------------------------------------------- */

static void
gw_close(struct gateway_conn *g, enum gw_closer by)
{
	if (g->closed_by == GW_BY_NONE)
		g->closed_by = by;
	loop_fd_close(g->up);
	g->up = NULL;
	/* Closes on the next service turn, whatever the browser does. */
	lws_set_timeout(g->wsi, PENDING_TIMEOUT_KILLED_BY_PARENT,
	    LWS_TO_KILL_ASYNC);
}

static void
gw_error(struct gateway_conn *g, const char *why)
{
	gw_event("screen.proxy.websocket_error", g->id, gw_policy(g),
	    json_pack("{s:s}", "error", why));
	gw_close(g, GW_BY_CLIENT);
}

void
gateway_drop(const struct capability *cap)
{
	struct gateway_conn	*g;

	LIST_FOREACH(g, &gw_conns, entry) {
		if (g->cap == cap) {
			g->cap = NULL;
			gw_close(g, GW_BY_REVOKED);
		}
	}
}

/* ---- browser -> RFB ------------------------------------------------------ */

static size_t
gw_up_backlog(struct gateway_conn *g)
{
	int	n = 0;

	if (g->up == NULL || ioctl(loop_fd_get(g->up), FIONREAD, &n) == -1)
		return 0;
	return (size_t)n;
}

static void
gw_rx_pause(struct gateway_conn *g, int on)
{
	if (g->rx_paused == on)
		return;
	g->rx_paused = on;
	lws_rx_flow_control(g->wsi, on ? 0 : 1);
}

/* Write pending framed bytes up; 1 when all went. */
static int
gw_write_up(struct gateway_conn *g)
{
	int	r;

	r = loop_fd_write_pending(g->up, g->pend, g->pendlen, &g->pendoff);
	if (r < 0)
		gw_close(g, GW_BY_UPSTREAM);
	if (r <= 0)
		return 0;
	g->pendoff = g->pendlen = 0;
	return 1;
}

static void
gw_pend_add(struct gateway_conn *g, const uint8_t *p, size_t n)
{
	if (g->pendlen + n > g->pendcap) {
		g->pendcap = g->pendlen + n;
		g->pend = xrealloc(g->pend, g->pendcap);
	}
	memcpy(g->pend + g->pendlen, p, n);
	g->pendlen += n;
}

/*
 * Frame what the browser sent and hand whole messages up, unless the
 * viewer's output is backed up or a write is pending: then stop reading
 * the websocket until that clears.
 */
static void
gw_flush_in(struct gateway_conn *g)
{
	size_t	used = 0;
	ssize_t	len;
	int	type, held = 0;

	if (g->up == NULL)
		return;
	if (g->pendlen > 0 && !gw_write_up(g)) {
		gw_rx_pause(g, 1);
		return;
	}
	if (g->stashed && !g->req_inflight && gw_up_backlog(g) <= GW_BACKLOG) {
		g->stashed = 0;
		g->req_inflight = 1;
		gw_pend_add(g, g->stash, sizeof g->stash);
		if (!gw_write_up(g)) {
			gw_rx_pause(g, 1);
			return;
		}
	}
	while (used < g->inlen) {
		if (gw_up_backlog(g) > GW_BACKLOG) {
			held = 1;
			break;
		}
		len = rfb_frame_next(&g->fr, g->in + used, g->inlen - used,
		    &type);
		if (len == 0)
			break;
		if (len < 0) {
			gw_error(g, len == ERR_TOO_LARGE ? "message_too_large" :
			    "protocol_error");
			return;
		}
		if (type == 3 && g->req_inflight &&
		    len == (ssize_t)sizeof g->stash) {
			/*
			 * One update request at a time: one asked while
			 * another is unanswered waits aside until the answer
			 * starts (gw_up_cb), so a viewer asking for many
			 * frames without reading has one coming at most.
			 * Only the latest waits (a full one wins over an
			 * incremental one), and what follows it (input, the
			 * close) is not held behind it: the answer may only
			 * come when the screen changes.
			 */
			if (!g->stashed || g->stash[1] != 0)
				memcpy(g->stash, g->in + used, sizeof g->stash);
			g->stashed = 1;
			used += (size_t)len;
			continue;
		}
		if (type == 3)
			g->req_inflight = 1;
		if (!g->version_seen) {
			/* Pre-fed already; a viewer wanting another version
			 * cannot be served. */
			g->version_seen = 1;
			if (len != RFB_VERSION_LEN || memcmp(g->in + used,
			    RFB_CLIENT_VERSION, RFB_VERSION_LEN) != 0) {
				gw_event("screen.proxy.websocket_handshake_failed",
				    g->id, gw_policy(g), json_pack("{s:s}",
				    "error", "unsupported_rfb_version"));
				gw_close(g, GW_BY_CLIENT);
				return;
			}
			/* The security types may come now (gw_up_want). */
			if (g->outlen == 0)
				loop_fd_want_read(g->up, 1);
		} else if (!(g->control == 0 && rfb_msg_is_input(type)))
			gw_pend_add(g, g->in + used, (size_t)len);
		used += (size_t)len;
		if (g->pendlen > 0 && !gw_write_up(g)) {
			held = 1;
			break;
		}
	}
	if (used > 0) {
		memmove(g->in, g->in + used, g->inlen - used);
		g->inlen -= used;
	}
	if (g->up == NULL)
		return;
	gw_rx_pause(g, held);
}

static void
gw_on_receive(struct gateway_conn *g, const void *in, size_t len)
{
	if (g->up == NULL)
		return;
	if (len > GW_IN_MAX - g->inlen) {
		gw_error(g, "message_too_large");
		return;
	}
	if (g->inlen + len > g->incap) {
		g->incap = g->inlen + len < 4096 ? 4096 : g->inlen + len;
		g->in = xrealloc(g->in, g->incap);
	}
	memcpy(g->in + g->inlen, in, len);
	g->inlen += len;
	gw_flush_in(g);
}

/* ---- RFB -> browser ------------------------------------------------------ */

/*
 * How much of upstream to read now.  The browser's ProtocolVersion was
 * pre-fed, so libvncserver answers with its security types at once; a
 * viewer must not get them in the same websocket message as the server's
 * version (noVNC 1.3 handles one handshake step per message and would
 * wait forever), so after the server's version nothing more is read
 * until the browser's own version has come.
 */
static size_t
gw_up_want(const struct gateway_conn *g)
{
	if (g->version_seen)
		return GW_OUT_CHUNK;
	return g->ver_out < RFB_VERSION_LEN ? RFB_VERSION_LEN - g->ver_out : 0;
}

static void
gw_up_cb(struct loop_fd *lf, int events, void *arg)
{
	struct gateway_conn	*g = arg;
	ssize_t			 n;
	size_t			 want;

	if (events & LOOP_HUP) {
		g->up = NULL;	/* the loop frees it after this callback */
		gw_close(g, GW_BY_UPSTREAM);
		return;
	}
	if (events & LOOP_WRITE) {
		gw_flush_in(g);
		if (g->up == NULL)
			return;
	}
	if (!(events & LOOP_READ) || g->outlen > 0)
		return;
	if ((want = gw_up_want(g)) == 0) {
		loop_fd_want_read(lf, 0);
		return;
	}
	n = read(loop_fd_get(lf), g->out + LWS_PRE, want);
	if (n > 0) {
		g->up_seen = 1;
		if (!g->version_seen)
			g->ver_out += (size_t)n;
		g->outlen = (size_t)n;
		/* One chunk in flight: read again once it is written. */
		loop_fd_want_read(lf, 0);
		lws_callback_on_writable(g->wsi);
		/* The answer started: a waiting request may go up once
		 * the backlog allows (gw_flush_in, after this chunk). */
		g->req_inflight = 0;
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR))
		gw_close(g, GW_BY_UPSTREAM);
}

static int
gw_writeable(struct gateway_conn *g)
{
	if (g->outlen > 0) {
		if (lws_write(g->wsi, g->out + LWS_PRE, g->outlen,
		    LWS_WRITE_BINARY) < (int)g->outlen)
			return -1;
		g->outlen = 0;
	}
	if (g->up == NULL)
		return g->closed_by != GW_BY_NONE ? -1 : 0;
	loop_fd_want_read(g->up, gw_up_want(g) > 0);
	/* Room downstream may unblock held requests. */
	if (g->inlen > 0 || g->stashed)
		gw_flush_in(g);
	return 0;
}

/* ---- upgrade ------------------------------------------------------------- */

/*
 * Token from /screen/<t>, /?token=<t> or /websockify?token=<t> into
 * tok; 0, or the C-14 reason to refuse with.
 */
static const char *
gw_parse_target(struct lws *wsi, char *tok, size_t toklen)
{
	char	uri[GW_URI_MAX], arg[GW_URI_MAX];
	int	i, n, found = 0;

	tok[0] = '\0';
	if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) >= GW_URI_MAX ||
	    lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI) <= 0)
		return "invalid_path";
	if (strncmp(uri, "/screen/", 8) == 0) {
		if (strlen(uri + 8) >= toklen)
			return "invalid_path";
		snprintf(tok, toklen, "%s", uri + 8);
	} else if (strcmp(uri, "/") == 0 || strcmp(uri, "/websockify") == 0) {
		for (i = 0; i < 16; i++) {
			n = lws_hdr_copy_fragment(wsi, arg, sizeof arg,
			    WSI_TOKEN_HTTP_URI_ARGS, i);
			if (n < 0)
				break;
			if (strncmp(arg, "token=", 6) != 0)
				continue;
			if (found++ || strlen(arg + 6) >= toklen)
				return "invalid_path";
			snprintf(tok, toklen, "%s", arg + 6);
		}
		explicit_bzero(arg, sizeof arg);
		if (!found)
			return "invalid_path";
	} else
		return "invalid_path";
	explicit_bzero(uri, sizeof uri);
	if (!capability_token_wellformed(tok, strlen(tok)))
		return "invalid_path";
	return NULL;
}

/*
 * Refuse an upgrade with an HTTP status before closing, so a viewer can
 * say why (noVNC and curl saw only an empty reply).  Written here rather
 * than with lws_return_http_status(), which answers an upgrade request
 * "HTTP/1.0" (lws 4.1 records the request's version only for plain HTTP).
 * The reply is short and goes out at once; the caller's filter then
 * returns nonzero, which closes the connection.  It never echoes the path
 * (the token is in it).
 */
void
gateway_refuse(struct lws *wsi, int code, const char *body)
{
	unsigned char	 buf[LWS_PRE + 256];
	const char	*status = code == 403 ? "403 Forbidden" :
			    code == 404 ? "404 Not Found" :
			    "503 Service Unavailable";
	int		 n;

	n = snprintf((char *)buf + LWS_PRE, sizeof buf - LWS_PRE,
	    "HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
	    "Content-Length: %zu\r\nCache-Control: no-store\r\n"
	    "Connection: close\r\n\r\n%s\n", status, strlen(body) + 1, body);
	if (n > 0 && (size_t)n < sizeof buf - LWS_PRE)
		(void)lws_write(wsi, buf + LWS_PRE, (size_t)n,
		    LWS_WRITE_HTTP_HEADERS);
}

/*
 * 404 for a path that names no screen, 403 for a token that is unknown or
 * revoked, 503 when no connection state could be had.
 */
static int
gw_refuse(struct lws *wsi, const char *why)
{
	gw_reject(why);
	if (strcmp(why, "invalid_path") == 0)
		gateway_refuse(wsi, 404, "no screen at this path");
	else if (strcmp(why, "authority_rejected") == 0)
		gateway_refuse(wsi, 403,
		    "unknown, expired or revoked screen token");
	else
		gateway_refuse(wsi, 503,
		    "the screen gateway cannot take a viewer now");
	return -1;
}

static int
gw_filter(struct gateway_conn *g, struct lws *wsi)
{
	char		 tok[TOKEN_STRLEN + 2];
	const char	*why;

	why = gw_parse_target(wsi, tok, sizeof tok);
	if (why == NULL && capability_find(tok, strlen(tok)) == NULL)
		why = "authority_rejected";
	if (why != NULL || g == NULL) {
		explicit_bzero(tok, sizeof tok);
		return gw_refuse(wsi, why != NULL ? why :
		    "authority_unavailable");
	}
	snprintf(g->token, sizeof g->token, "%s", tok);
	explicit_bzero(tok, sizeof tok);
	return 0;
}

static int
gw_connect_up(struct gateway_conn *g, const struct capability *cap)
{
	struct sockaddr_un	 sun;
	int			 fd, sz = GW_UP_SNDBUF;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s",
	    capability_socket(cap));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1)
		return err_from_errno(errno);
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1 ||
	    write(fd, RFB_CLIENT_VERSION, RFB_VERSION_LEN) != RFB_VERSION_LEN) {
		close(fd);
		return ERR_CONNECT;
	}
	if ((g->up = loop_fd_add(fd, gw_up_cb, g)) == NULL)
		return ERR_INTERNAL;
	return 0;
}

/* On failure nothing stays linked or allocated: lws may not call CLOSED. */
static int
gw_established(struct gateway_conn *g, struct lws *wsi)
{
	const struct capability	*cap;

	g->wsi = wsi;
	g->start_ms = loop_now_ms();
	(void)token_hex(g->id, 8);
	cap = capability_find(g->token, strlen(g->token));
	explicit_bzero(g->token, sizeof g->token);
	if (cap == NULL) {
		/* Revoked between the filter and now. */
		gw_event("screen.proxy.websocket_handshake_failed", g->id,
		    "unknown", json_pack("{s:s}", "error", "revoked"));
		return -1;
	}
	g->cap = cap;
	g->control = capability_control(cap);
	g->out = xmalloc(LWS_PRE + GW_OUT_CHUNK);
	if (gw_connect_up(g, cap) != 0) {
		gw_event("screen.proxy.websocket_handshake_failed", g->id,
		    g->control ? "control" : "view", json_pack("{s:s}",
		    "error", "upstream_unreachable"));
		free(g->out);
		g->out = NULL;
		return -1;
	}
	g->established = 1;
	LIST_INSERT_HEAD(&gw_conns, g, entry);
	gw_nconns++;
	gw_event("screen.proxy.websocket_upgraded", g->id, gw_policy(g),
	    json_pack("{s:s}", "capability_id", capability_id(cap)));
	return 0;
}

static void
gw_closed(struct gateway_conn *g)
{
	static const char *const by[] = { "client", "client", "upstream",
	    "revoked" };

	if (!g->established)
		return;
	LIST_REMOVE(g, entry);
	gw_nconns--;
	loop_fd_close(g->up);
	g->up = NULL;
	gw_event("screen.proxy.websocket_closed", g->id, gw_policy(g),
	    json_pack("{s:I,s:s,s:b}", "duration_ms",
	    (json_int_t)(loop_now_ms() - g->start_ms), "closed_by",
	    by[g->closed_by], "upstream_handshake", g->up_seen));
	free(g->out);
	free(g->in);
	free(g->pend);
	g->out = g->in = g->pend = NULL;
	g->established = 0;
}

/* ---- plain HTTP: the embed page, noVNC, the page directory ------------- */

/*
 * The embed page (G-17), served from memory unless the page directory
 * has its own.  It reports its state to the parent page at once, removes
 * VideoDecoder before noVNC loads (old noVNC hangs on some Android
 * devices when it is there), loads noVNC from /novnc/ on this same port
 * (a local directory, never a CDN) and connects to /screen/<token>.
 * Query: token, view_only=1, scale=0 (no scaling to the frame).
 */
static const char gw_embed_html[] =
"<!doctype html>\n"
"<html><head><meta charset=\"utf-8\"><title>screen</title>\n"
"<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
"<style>html,body{margin:0;height:100%;background:#000;overflow:hidden}"
"#screen{width:100%;height:100%}</style>\n"
"<script>\n"
"'use strict';\n"
"try { delete window.VideoDecoder; } catch (e) {}\n"
"if ('VideoDecoder' in window) {\n"
"  try { window.VideoDecoder = undefined; } catch (e) {}\n"
"}\n"
"window.rakazoScreenPost = function (state, detail) {\n"
"  try {\n"
"    window.parent.postMessage({ source: 'rakazo-screen', state: state,\n"
"        detail: detail || null }, '*');\n"
"  } catch (e) {}\n"
"  document.documentElement.dataset.state = state;\n"
"};\n"
"window.rakazoScreenPost('loading');\n"
"</script>\n"
"</head><body><div id=\"screen\"></div>\n"
"<script type=\"module\">\n"
"const post = window.rakazoScreenPost;\n"
"const q = new URLSearchParams(location.search);\n"
"const token = q.get('token');\n"
"function start(RFB) {\n"
"  const ws = (location.protocol === 'https:' ? 'wss://' : 'ws://') +\n"
"      location.host + '/screen/' + encodeURIComponent(token);\n"
"  let up = false;\n"
"  post('connecting');\n"
"  const rfb = new RFB(document.getElementById('screen'), ws,\n"
"      { wsProtocols: ['binary'] });\n"
"  rfb.scaleViewport = q.get('scale') !== '0';\n"
"  rfb.viewOnly = q.get('view_only') === '1';\n"
"  rfb.addEventListener('connect', () => { up = true; post('connected'); });\n"
"  rfb.addEventListener('securityfailure',\n"
"      () => post('failed', 'security'));\n"
"  rfb.addEventListener('disconnect',\n"
"      () => post(up ? 'disconnected' : 'failed'));\n"
"  window.rakazoScreen = rfb;\n"
"}\n"
"if (!token) {\n"
"  post('failed', 'no token');\n"
"} else {\n"
"  import('./novnc/core/rfb.js')\n"
"      .then((m) => start(m.default))\n"
"      .catch((e) => post('failed', 'noVNC: ' + e));\n"
"}\n"
"</script>\n"
"</body></html>\n";

/*
 * /favicon.ico, unless the page directory has one: a browser asks for it
 * on every page load, and a 404 there is noise in every console.  A 16x16
 * PNG in an ICO container (a screen on its stand).
 */
static const unsigned char gw_favicon[] = {
	0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x10, 0x10, 0x00, 0x00, 0x01, 0x00,
	0x20, 0x00, 0x63, 0x00, 0x00, 0x00, 0x16, 0x00, 0x00, 0x00, 0x89, 0x50,
	0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48,
	0x44, 0x52, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x10, 0x08, 0x06,
	0x00, 0x00, 0x00, 0x1f, 0xf3, 0xff, 0x61, 0x00, 0x00, 0x00, 0x2a, 0x49,
	0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x60, 0x18, 0x3e, 0x40, 0x41, 0x41,
	0xe1, 0x3f, 0x29, 0x18, 0xab, 0x01, 0xd6, 0x4d, 0xdf, 0x88, 0xc2, 0xa3,
	0x06, 0x0c, 0x6a, 0x03, 0x28, 0x4a, 0x07, 0x84, 0x0c, 0xa4, 0x38, 0x65,
	0x0e, 0xde, 0x3c, 0x04, 0x00, 0x84, 0xd1, 0xfb, 0xbf, 0x67, 0x49, 0x3a,
	0x3f, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60,
	0x82,
};

void
gateway_set_novnc(const char *dir)
{
	snprintf(gw_novnc_dir, sizeof gw_novnc_dir, "%s", dir);
}

void
gateway_set_term_assets(const char *dir)
{
	snprintf(gw_term_dir, sizeof gw_term_dir, "%s", dir);
}

void
gateway_set_term(gateway_term_fn fn)
{
	gw_term_cb = fn;
}

static int
gw_serve_memory(struct lws *wsi, const char *body, size_t len,
    const char *mime)
{
	static const char	 v[] = "no-transform";
	unsigned char		 hdr[LWS_PRE + 1024], *p, *end;
	unsigned char		*b;
	int			 n;

	p = hdr + LWS_PRE;
	end = hdr + sizeof hdr - 1;
	if (lws_add_http_common_headers(wsi, HTTP_STATUS_OK, mime, len, &p,
	    end) || lws_add_http_header_by_name(wsi, (const unsigned char *)
	    "cache-control:", (const unsigned char *)v, (int)sizeof v - 1,
	    &p, end) || lws_finalize_write_http_header(wsi, hdr + LWS_PRE, &p,
	    end))
		return -1;
	b = xmalloc(LWS_PRE + len);
	memcpy(b + LWS_PRE, body, len);
	n = lws_write(wsi, b + LWS_PRE, len, LWS_WRITE_HTTP_FINAL);
	free(b);
	if (n < (int)len)
		return -1;
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

static const char *
gw_mime(const char *path)
{
	static const struct { const char *ext, *mime; } m[] = {
		{ ".html", "text/html; charset=utf-8" },
		{ ".js", "text/javascript" },
		{ ".mjs", "text/javascript" },
		{ ".css", "text/css" },
		{ ".json", "application/json" },
		{ ".svg", "image/svg+xml" },
		{ ".png", "image/png" },
		{ ".ico", "image/x-icon" },
		{ ".woff2", "font/woff2" },
		{ ".txt", "text/plain; charset=utf-8" },
	};
	const char	*dot = strrchr(path, '.');
	size_t		 i;

	for (i = 0; dot != NULL && i < sizeof m / sizeof m[0]; i++) {
		if (strcmp(dot, m[i].ext) == 0)
			return m[i].mime;
	}
	return "application/octet-stream";
}

/* Only plain relative names: no "..", no hidden files, a small alphabet. */
static int
gw_path_ok(const char *uri)
{
	const char	*p;

	if (uri[0] != '/' || uri[1] == '\0' || strlen(uri) > 200)
		return 0;
	for (p = uri; *p != '\0'; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '/' || *p == '.' ||
		    *p == '-' || *p == '_'))
			return 0;
		if (*p == '/' && (p[1] == '.' || p[1] == '/' || p[1] == '\0'))
			return 0;
	}
	return 1;
}

static int
gw_http_status(struct lws *wsi, unsigned int code)
{
	if (lws_return_http_status(wsi, code, NULL))
		return -1;
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

static int
gw_http(struct lws *wsi, const char *uri)
{
	static const char	 hdr[] = "Cache-Control: no-transform\r\n"
	    "X-Content-Type-Options: nosniff\r\n";
	char			 path[PATH_MAX];
	const char		*dir = gw_page_dir;
	struct stat		 st;
	int			 n;

	if (!gw_path_ok(uri))
		return gw_http_status(wsi, HTTP_STATUS_NOT_FOUND);
	if (strncmp(uri, "/novnc/", 7) == 0) {
		dir = gw_novnc_dir;
		uri += 6;
	} else if (strcmp(uri, "/term.html") == 0 ||
	    strncmp(uri, "/xterm/", 7) == 0)
		dir = gw_term_dir;	/* the terminal page (pty.h) */
	if (dir[0] == '\0' || snprintf(path, sizeof path, "%s%s", dir, uri) >=
	    (int)sizeof path || stat(path, &st) == -1 || !S_ISREG(st.st_mode)) {
		if (strcmp(uri, "/embed.html") == 0 && dir == gw_page_dir)
			return gw_serve_memory(wsi, gw_embed_html,
			    sizeof gw_embed_html - 1, "text/html; charset=utf-8");
		if (strcmp(uri, "/favicon.ico") == 0 && dir == gw_page_dir)
			return gw_serve_memory(wsi, (const char *)gw_favicon,
			    sizeof gw_favicon, "image/x-icon");
		return gw_http_status(wsi, HTTP_STATUS_NOT_FOUND);
	}
	n = lws_serve_http_file(wsi, path, gw_mime(path), hdr,
	    (int)sizeof hdr - 1);
	if (n < 0 || (n > 0 && lws_http_transaction_completed(wsi)))
		return -1;
	return 0;
}

static int
gw_add_headers(struct lws *wsi, void *in)
{
	struct lws_process_html_args	*a = in;
	static const char		 v[] = "no-transform";

	(void)wsi;
	if (lws_add_http_header_by_name(wsi, (const unsigned char *)
	    "cache-control:", (const unsigned char *)v, (int)sizeof v - 1,
	    (unsigned char **)&a->p, (unsigned char *)a->p + a->max_len))
		return -1;
	return 0;
}

static int
gw_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	struct gateway_conn	*g = user;
	int			 r;

	/* The connection itself, before the terminal or a viewer sees it. */
	switch (reason) {
	case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
		/* The fds' ceiling, with room for sheds still closing. */
		return gw_nwsi >= GW_MAX_CONNS + GW_MAX_CONNS / 4 ? -1 : 0;
	case LWS_CALLBACK_WSI_CREATE:
		gw_nwsi++;
		return 0;
	case LWS_CALLBACK_WSI_DESTROY:
		if (gw_nwsi > 0)
			gw_nwsi--;
		conncap_gone(gw_cap, wsi);
		break;
	case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
		if (conncap_lws_admit(gw_cap, wsi, "gateway.conn") != 0) {
			lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT,
			    LWS_TO_KILL_ASYNC);
			return -1;
		}
		break;
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
		/*
		 * Websockets only: lws would answer an h2c Upgrade 101
		 * before any token was looked at.
		 */
		if (in == NULL || strcasecmp((const char *)in, "websocket") != 0)
			return -1;
		break;
	case LWS_CALLBACK_ESTABLISHED:
		/*
		 * A screen or terminal websocket passed its token filter:
		 * never shed.  One shed meanwhile closes on its own.
		 */
		(void)conncap_trust(gw_cap, wsi);
		break;
	case LWS_CALLBACK_HTTP:
		/* Pages take no body; a chunked one would run as requests. */
		if ((r = http_head_req_framing(
		    lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0,
		    lws_hdr_total_length(wsi,
		    WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0)) != 0) {
			(void)lws_return_http_status(wsi,
			    r == ERR_LENGTH_REQUIRED ?
			    HTTP_STATUS_LENGTH_REQUIRED :
			    HTTP_STATUS_BAD_REQUEST, NULL);
			return -1;
		}
		break;
	default:
		break;
	}

	/* /term/<token> websockets belong to the terminal (pty.c). */
	if (gw_term_cb != NULL &&
	    (r = gw_term_cb(wsi, (int)reason, in, len)) != PTY_PASS)
		return r;
	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		return gw_filter(g, wsi);
	case LWS_CALLBACK_ADD_HEADERS:
		return gw_add_headers(wsi, in);
	case LWS_CALLBACK_ESTABLISHED:
		return gw_established(g, wsi);
	case LWS_CALLBACK_RECEIVE:
		gw_on_receive(g, in, len);
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return gw_writeable(g);
	case LWS_CALLBACK_CLOSED:
		gw_closed(g);
		return 0;
	case LWS_CALLBACK_HTTP:
		return gw_http(wsi, in != NULL ? (const char *)in : "");
	case LWS_CALLBACK_HTTP_FILE_COMPLETION:
		return lws_http_transaction_completed(wsi) ? -1 : 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

int
gateway_start(struct lws_context *ctx, const char *host, int port,
    const char *page_dir)
{
	if (page_dir != NULL && *page_dir != '\0') {
		if (realpath(page_dir, gw_page_dir) == NULL)
			return ERR_CONFIG;
	}
	if (gw_cap == NULL)
		gw_cap = conncap_new(GW_MAX_CONNS, GW_RESERVE, GW_PEER_CONNS);
	if ((gw_vh = loop_listen(ctx, "gateway", host, port,
	    gw_protocols)) == NULL)
		return ERR_CONNECT;
	gw_port_bound = lws_get_vhost_listen_port(gw_vh);
	log_info("gateway.listening", "addr=%s port=%d pages=%s", host,
	    gw_port_bound, gw_page_dir[0] != '\0' ? "yes" : "no");
	return 0;
}

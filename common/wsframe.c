/* SPDX-License-Identifier: MIT */
/*
 * WebSocket framing for our own clients (wsframe.h): guestd's DevTools
 * client and rakazoctl's guestd client.
 *
 * We frame ourselves rather than through lws's client because lws 4.1
 * parses what it receives one byte at a time; here a frame is one header
 * parse and then its payload moves in bulk.  The SHA-1 of the handshake
 * comes from lws (already linked) so no crypto library is added.
 */
#include "autoconf.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <libwebsockets.h>

#include "base64.h"
#include "buf.h"
#include "bytes.h"
#include "err.h"
#include "http-head.h"
#include "token.h"
#include "wsframe.h"

#define WSFRAME_GUID	"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

int
wsframe_header(const uint8_t *p, size_t n, size_t max, struct wsframe *f)
{
	struct cursor	c;
	uint64_t	len;
	uint16_t	len16;
	uint8_t		b0, b1;

	memset(f, 0, sizeof(*f));
	/* The total must fit the int we return. */
	if (max > (size_t)INT_MAX - WSFRAME_MAX_HDR)
		max = (size_t)INT_MAX - WSFRAME_MAX_HDR;
	cursor_init(&c, p, n);
	if (cursor_get_u8(&c, &b0) != 0 || cursor_get_u8(&c, &b1) != 0)
		return 0;
	/* No extensions were negotiated: RSV bits must be clear. */
	if (b0 & 0x70)
		return ERR_PROTOCOL;
	/* A server never masks (RFC 6455 5.1). */
	if (b1 & 0x80)
		return ERR_PROTOCOL;
	f->fin = (b0 & 0x80) != 0;
	f->opcode = b0 & 0x0f;
	len = b1 & 0x7f;
	if (len == 126) {
		if (cursor_get_u16be(&c, &len16) != 0)
			return 0;
		len = len16;
		/* Only the shortest encoding is valid (5.2). */
		if (len < 126)
			return ERR_PROTOCOL;
	} else if (len == 127) {
		if (cursor_get_u64be(&c, &len) != 0)
			return 0;
		if (len >> 63 || len < 65536)
			return ERR_PROTOCOL;
	}
	switch (f->opcode) {
	case WSFRAME_CONT:
	case WSFRAME_TEXT:
	case WSFRAME_BINARY:
		break;
	case WSFRAME_CLOSE:
	case WSFRAME_PING:
	case WSFRAME_PONG:
		if (!f->fin || len > 125)
			return ERR_PROTOCOL;
		break;
	default:
		return ERR_PROTOCOL;
	}
	if (len > max)
		return ERR_TOO_LARGE;
	f->hdrlen = c.off;
	f->len = (size_t)len;
	return (int)c.off;
}

int
wsframe_parse(const uint8_t *p, size_t n, size_t max, struct wsframe *f)
{
	int	r;

	if ((r = wsframe_header(p, n, max, f)) <= 0)
		return r;
	if (n - f->hdrlen < f->len)
		return 0;
	f->payload = p + f->hdrlen;
	return (int)(f->hdrlen + f->len);
}

size_t
wsframe_client_header(uint8_t *hdr, int opcode, size_t n,
    const uint8_t mask[4])
{
	size_t	h = 0;

	hdr[h++] = 0x80 | (uint8_t)(opcode & 0x0f);
	if (n < 126)
		hdr[h++] = 0x80 | (uint8_t)n;
	else if (n <= 0xffff) {
		hdr[h++] = 0x80 | 126;
		bytes_put_be16(hdr + h, (uint16_t)n);
		h += 2;
	} else {
		hdr[h++] = 0x80 | 127;
		bytes_put_be64(hdr + h, (uint64_t)n);
		h += 8;
	}
	memcpy(hdr + h, mask, 4);
	return h + 4;
}

/* Eight bytes at a time: uploads go through here at wire speed. */
void
wsframe_mask(uint8_t *p, size_t n, const uint8_t mask[4])
{
	uint64_t	m, w;
	size_t		i = 0;
	uint8_t		m8[8];

	memcpy(m8, mask, 4);
	memcpy(m8 + 4, mask, 4);
	memcpy(&m, m8, 8);
	for (; n - i >= 8; i += 8) {
		memcpy(&w, p + i, 8);
		w ^= m;
		memcpy(p + i, &w, 8);
	}
	for (; i < n; i++)
		p[i] ^= mask[i & 3];
}

size_t
wsframe_client_frame(uint8_t *out, int opcode, const void *p, size_t n)
{
	uint8_t	mask[4];
	size_t	h;

	if (token_random(mask, sizeof(mask)) != 0)
		return 0;
	h = wsframe_client_header(out, opcode, n, mask);
	if (n > 0) {
		memcpy(out + h, p, n);
		wsframe_mask(out + h, n, mask);
	}
	return h + n;
}

/* ---- the opening handshake ----------------------------------------------- */

int
wsframe_key(char *key)
{
	uint8_t	raw[16];

	if (token_random(raw, sizeof(raw)) != 0)
		return ERR_INTERNAL;
	if (base64_encode(raw, sizeof(raw), key) != WSFRAME_KEYLEN)
		return ERR_INTERNAL;
	return 0;
}

int
wsframe_accept(const char *key, char *out)
{
	char		buf[128];
	unsigned char	md[20];
	int		n;

	n = snprintf(buf, sizeof(buf), "%s%s", key, WSFRAME_GUID);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return ERR_INTERNAL;
	if (lws_SHA1((const unsigned char *)buf, (size_t)n, md) == NULL)
		return ERR_INTERNAL;
	if (base64_encode(md, sizeof(md), out) != WSFRAME_ACCEPTLEN)
		return ERR_INTERNAL;
	return 0;
}

int
wsframe_request(char *out, size_t outlen, const char *path, const char *host,
    const char *key, const char *protocol, const char *auth)
{
	int	n;

	n = snprintf(out, outlen, "GET %s HTTP/1.1\r\n"
	    "Host: %s\r\n"
	    "Upgrade: websocket\r\n"
	    "Connection: Upgrade\r\n"
	    "Sec-WebSocket-Key: %s\r\n"
	    "Sec-WebSocket-Version: 13\r\n"
	    "%s%s%s"
	    "%s%s%s"
	    "\r\n", path, host, key,
	    protocol != NULL ? "Sec-WebSocket-Protocol: " : "",
	    protocol != NULL ? protocol : "", protocol != NULL ? "\r\n" : "",
	    auth != NULL ? "Authorization: " : "",
	    auth != NULL ? auth : "", auth != NULL ? "\r\n" : "");
	if (n < 0 || (size_t)n >= outlen)
		return ERR_TOO_LARGE;
	return n;
}

/* The value of header name in line[0..len), trimmed; NULL if another. */
static const char *
wsframe_field(const char *line, size_t len, const char *name, size_t *vlen)
{
	size_t	nl = strlen(name), a, b;

	if (len <= nl || line[nl] != ':' || strncasecmp(line, name, nl) != 0)
		return NULL;
	for (a = nl + 1; a < len && (line[a] == ' ' || line[a] == '\t'); a++)
		;
	for (b = len; b > a && (line[b - 1] == ' ' || line[b - 1] == '\t');
	    b--)
		;
	*vlen = b - a;
	return line + a;
}

/* Does the comma-separated list v[0..n) hold token (any case)? */
static int
wsframe_has_token(const char *v, size_t n, const char *token)
{
	size_t	tl = strlen(token), a = 0, b, e;

	while (a < n) {
		for (b = a; b < n && v[b] != ','; b++)
			;
		for (; a < b && (v[a] == ' ' || v[a] == '\t'); a++)
			;
		for (e = b; e > a && (v[e - 1] == ' ' || v[e - 1] == '\t');
		    e--)
			;
		if (e - a == tl && strncasecmp(v + a, token, tl) == 0)
			return 1;
		a = b + 1;
	}
	return 0;
}

int
wsframe_response(const char *p, size_t n, const char *key, int *status)
{
	const char	*end, *line, *nl, *v;
	char		 want[WSFRAME_ACCEPTLEN + 1];
	size_t		 vlen, scan;
	int		 upgrade = 0, conn = 0, accept = 0;

	*status = 0;
	scan = n < WSFRAME_MAX_HEAD ? n : WSFRAME_MAX_HEAD;
	end = memmem(p, scan, "\r\n\r\n", 4);
	if (end == NULL)
		return n >= WSFRAME_MAX_HEAD ? ERR_TOO_LARGE : 0;
	if (http_head_status(p, (size_t)(end - p), status) != 0)
		return ERR_PROTOCOL;
	if (*status != 101)
		return ERR_CONNECT;
	if (wsframe_accept(key, want) != 0)
		return ERR_INTERNAL;
	/* Past the status line; end's own CRLF bounds every search. */
	nl = memmem(p, (size_t)(end + 2 - p), "\r\n", 2);
	for (line = nl + 2; line < end + 2; line = nl + 2) {
		nl = memmem(line, (size_t)(end + 2 - line), "\r\n", 2);
		if (nl == NULL)
			break;
		if ((v = wsframe_field(line, (size_t)(nl - line), "Upgrade",
		    &vlen)) != NULL)
			upgrade = vlen == 9 && strncasecmp(v, "websocket",
			    9) == 0;
		else if ((v = wsframe_field(line, (size_t)(nl - line),
		    "Connection", &vlen)) != NULL)
			conn = wsframe_has_token(v, vlen, "upgrade");
		else if ((v = wsframe_field(line, (size_t)(nl - line),
		    "Sec-WebSocket-Accept", &vlen)) != NULL)
			accept = vlen == WSFRAME_ACCEPTLEN &&
			    memcmp(v, want, WSFRAME_ACCEPTLEN) == 0;
	}
	if (!upgrade || !conn || !accept)
		return ERR_PROTOCOL;
	return (int)((size_t)(end - p) + 4);
}

/* SPDX-License-Identifier: MIT */
/*
 * WebSocket framing for our own clients (RFC 6455): the frame header of
 * what a server sends, the masked frames a client sends, and the opening
 * handshake's request and response.
 *
 * The parsers take untrusted bytes and return bytes consumed, 0 when more
 * bytes are needed, or a negative ERR_* to drop the peer.  They never read
 * past n and never accept a payload above the caller's cap.
 */
#ifndef COMMON_WSFRAME_H
#define COMMON_WSFRAME_H

#include <stddef.h>
#include <stdint.h>

#define WSFRAME_MAX_HDR		14	/* 2 + 8 length + 4 mask */
#define WSFRAME_MAX_HEAD	(16 * 1024)	/* handshake response head */
#define WSFRAME_KEYLEN		24	/* base64 of 16 bytes */
#define WSFRAME_ACCEPTLEN	28	/* base64 of a SHA-1 */

#define WSFRAME_CONT		0
#define WSFRAME_TEXT		1
#define WSFRAME_BINARY		2
#define WSFRAME_CLOSE		8
#define WSFRAME_PING		9
#define WSFRAME_PONG		10

struct wsframe {
	int		 fin;
	int		 opcode;
	size_t		 hdrlen;	/* bytes before the payload */
	size_t		 len;		/* payload bytes */
	const uint8_t	*payload;	/* wsframe_parse() only */
};

/*
 * The header of one unmasked (server) frame in p[0..n): returns its length
 * (f->len tells the payload that follows, not necessarily present yet),
 * 0 for more, ERR_PROTOCOL for a malformed header, ERR_TOO_LARGE for a
 * payload above max.
 */
int	 wsframe_header(const uint8_t *p, size_t n, size_t max,
	    struct wsframe *f);
/* A whole frame: its total length once the payload is in p, else 0. */
int	 wsframe_parse(const uint8_t *p, size_t n, size_t max,
	    struct wsframe *f);

/*
 * The header of a final client frame of n payload bytes masked with mask,
 * into hdr (WSFRAME_MAX_HDR bytes); returns its length.
 */
size_t	 wsframe_client_header(uint8_t *hdr, int opcode, size_t n,
	    const uint8_t mask[4]);
/* XOR p[0..n) in place with mask, as the frame's payload from offset 0. */
void	 wsframe_mask(uint8_t *p, size_t n, const uint8_t mask[4]);
/*
 * A whole masked frame of p[0..n) with a fresh random mask, into out
 * (n + WSFRAME_MAX_HDR bytes): its length, or 0 if randomness failed.
 */
size_t	 wsframe_client_frame(uint8_t *out, int opcode, const void *p,
	    size_t n);

/* A fresh Sec-WebSocket-Key into key (WSFRAME_KEYLEN + 1).  0 or ERR_*. */
int	 wsframe_key(char *key);
/* The Sec-WebSocket-Accept for key into out (WSFRAME_ACCEPTLEN + 1). */
int	 wsframe_accept(const char *key, char *out);
/*
 * The upgrade request: GET path, Host host, key, and the optional
 * subprotocol and Authorization value (the caller wipes out after use
 * when auth is a secret).  Returns the length or ERR_TOO_LARGE.
 */
int	 wsframe_request(char *out, size_t outlen, const char *path,
	    const char *host, const char *key, const char *protocol,
	    const char *auth);
/*
 * The response head in p[0..n) to a request with key: returns the head's
 * length when it is a valid 101 upgrade, 0 for more, ERR_TOO_LARGE for an
 * endless head, ERR_CONNECT for another status (in *status), ERR_PROTOCOL
 * for a 101 without the right Upgrade or Sec-WebSocket-Accept.
 */
int	 wsframe_response(const char *p, size_t n, const char *key,
	    int *status);

#endif

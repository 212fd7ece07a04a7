/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of common/wsframe.c: frame headers in every length encoding
 * and their bounds, the control-frame rules, masking against the RFC
 * 6455 samples, the handshake request and the checks on its response
 * (status, Upgrade, Connection, Sec-WebSocket-Accept, the head's cap).
 */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "err.h"
#include "wsframe.h"

/* RFC 6455 1.3. */
#define SAMPLE_KEY	"dGhlIHNhbXBsZSBub25jZQ=="
#define SAMPLE_ACCEPT	"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

static void
test_header_lengths(void **state)
{
	const uint8_t	 small[] = { 0x81, 0x02, 'h', 'i' };
	uint8_t		 f[16];
	struct wsframe	 w;

	assert_int_equal(wsframe_header(small, 1, 100, &w), 0);
	assert_int_equal(wsframe_header(small, 2, 100, &w), 2);
	assert_int_equal(w.len, 2);
	assert_true(w.fin);
	assert_int_equal(w.opcode, WSFRAME_TEXT);
	/* The whole frame needs its payload. */
	assert_int_equal(wsframe_parse(small, 3, 100, &w), 0);
	assert_int_equal(wsframe_parse(small, 4, 100, &w), 4);
	assert_ptr_equal(w.payload, small + 2);

	memset(f, 0, sizeof(f));
	f[0] = 0x02;		/* binary, not final */
	f[1] = 126;
	f[2] = 0x01;
	f[3] = 0x00;
	assert_int_equal(wsframe_header(f, 3, 1000, &w), 0);
	assert_int_equal(wsframe_header(f, 4, 1000, &w), 4);
	assert_int_equal(w.len, 256);
	assert_false(w.fin);
	/* The cap, exactly. */
	assert_int_equal(wsframe_header(f, 4, 256, &w), 4);
	assert_int_equal(wsframe_header(f, 4, 255, &w), ERR_TOO_LARGE);
	/* Not the shortest encoding. */
	f[2] = 0;
	f[3] = 125;
	assert_int_equal(wsframe_header(f, 4, 1000, &w), ERR_PROTOCOL);

	f[1] = 127;
	memset(f + 2, 0, 8);
	f[7] = 0x01;		/* 65536 */
	assert_int_equal(wsframe_header(f, 9, 1 << 20, &w), 0);
	assert_int_equal(wsframe_header(f, 10, 1 << 20, &w), 10);
	assert_int_equal(w.len, 65536);
	assert_int_equal(wsframe_header(f, 10, 65535, &w), ERR_TOO_LARGE);
	f[2] = 0x80;		/* the top bit is reserved */
	assert_int_equal(wsframe_header(f, 10, SIZE_MAX, &w), ERR_PROTOCOL);
	f[2] = 0x7f;		/* huge: above any cap, never an int */
	assert_int_equal(wsframe_header(f, 10, SIZE_MAX, &w), ERR_TOO_LARGE);
	f[2] = 0;
	f[7] = 0;
	f[8] = 0xff;		/* under 65536 in 8 bytes */
	assert_int_equal(wsframe_header(f, 10, 1 << 20, &w), ERR_PROTOCOL);
}

static void
test_header_rules(void **state)
{
	const uint8_t	 masked[] = { 0x81, 0x81, 1, 2, 3, 4, 'x' };
	const uint8_t	 rsv[] = { 0xc1, 0x00 };
	const uint8_t	 op3[] = { 0x83, 0x00 };
	const uint8_t	 ping_frag[] = { 0x09, 0x00 };
	const uint8_t	 big_ping[] = { 0x89, 126, 0, 126 };
	const uint8_t	 close[] = { 0x88, 0x02, 0x03, 0xe8 };
	struct wsframe	 w;

	assert_int_equal(wsframe_header(masked, sizeof(masked), 100, &w),
	    ERR_PROTOCOL);
	assert_int_equal(wsframe_header(rsv, sizeof(rsv), 100, &w),
	    ERR_PROTOCOL);
	assert_int_equal(wsframe_header(op3, sizeof(op3), 100, &w),
	    ERR_PROTOCOL);
	assert_int_equal(wsframe_header(ping_frag, sizeof(ping_frag), 100,
	    &w), ERR_PROTOCOL);
	assert_int_equal(wsframe_header(big_ping, sizeof(big_ping), 1000,
	    &w), ERR_PROTOCOL);
	assert_int_equal(wsframe_parse(close, sizeof(close), 100, &w), 4);
	assert_int_equal(w.opcode, WSFRAME_CLOSE);
	assert_int_equal(w.len, 2);
}

static void
test_mask(void **state)
{
	/* RFC 6455 5.7: a masked "Hello". */
	const uint8_t	 mask[4] = { 0x37, 0xfa, 0x21, 0x3d };
	const uint8_t	 want[] = { 0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d,
			    0x7f, 0x9f, 0x4d, 0x51, 0x58 };
	uint8_t		 f[64], big[70000], g[WSFRAME_MAX_HDR + 300];
	uint8_t		*copy;
	size_t		 h, i, n;

	h = wsframe_client_header(f, WSFRAME_TEXT, 5, mask);
	memcpy(f + h, "Hello", 5);
	wsframe_mask(f + h, 5, mask);
	assert_int_equal(h + 5, sizeof(want));
	assert_memory_equal(f, want, sizeof(want));

	/* Word-wise and byte-wise masking agree at every length. */
	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7);
	copy = malloc(sizeof(big));
	assert_non_null(copy);
	for (n = 0; n < 40; n++) {
		memcpy(copy, big, n);
		wsframe_mask(copy, n, mask);
		for (i = 0; i < n; i++)
			assert_int_equal(copy[i], big[i] ^ mask[i & 3]);
	}
	h = wsframe_client_header(f, WSFRAME_BINARY, sizeof(big), mask);
	assert_int_equal(h, 14);
	assert_int_equal(f[1], 0x80 | 127);
	memcpy(copy, big, sizeof(big));
	wsframe_mask(copy, sizeof(big), mask);
	wsframe_mask(copy, sizeof(big), mask);
	assert_memory_equal(copy, big, sizeof(big));
	free(copy);

	/* A random mask: unmasking with the one in the header gives p. */
	n = wsframe_client_frame(g, WSFRAME_BINARY, big, 300);
	assert_int_equal(n, 8 + 300);
	assert_int_equal(g[0], 0x82);
	assert_int_equal(g[1], 0x80 | 126);
	wsframe_mask(g + 8, 300, g + 4);
	assert_memory_equal(g + 8, big, 300);
}

static void
test_handshake_request(void **state)
{
	char	 key[WSFRAME_KEYLEN + 1], key2[WSFRAME_KEYLEN + 1];
	char	 acc[WSFRAME_ACCEPTLEN + 1], req[512];
	int	 n;

	assert_int_equal(wsframe_accept(SAMPLE_KEY, acc), 0);
	assert_string_equal(acc, SAMPLE_ACCEPT);
	assert_int_equal(wsframe_key(key), 0);
	assert_int_equal(wsframe_key(key2), 0);
	assert_int_equal(strlen(key), WSFRAME_KEYLEN);
	assert_string_not_equal(key, key2);

	n = wsframe_request(req, sizeof(req), "/control", "h:1", key,
	    "proto.v1", "Bearer s3cret");
	assert_true(n > 0 && (size_t)n == strlen(req));
	assert_non_null(strstr(req, "GET /control HTTP/1.1\r\nHost: h:1\r\n"));
	assert_non_null(strstr(req,
	    "\r\nSec-WebSocket-Protocol: proto.v1\r\n"));
	assert_non_null(strstr(req, "\r\nAuthorization: Bearer s3cret\r\n"));
	assert_non_null(strstr(req, key));
	assert_memory_equal(req + n - 4, "\r\n\r\n", 4);
	n = wsframe_request(req, sizeof(req), "/", "h", key, NULL, NULL);
	assert_null(strstr(req, "Authorization"));
	assert_null(strstr(req, "Protocol"));
	assert_int_equal(wsframe_request(req, 40, "/", "h", key, NULL, NULL),
	    ERR_TOO_LARGE);
}

static void
test_handshake_response(void **state)
{
	const char	*ok = "HTTP/1.1 101 Switching Protocols\r\n"
			    "upgrade: WebSocket\r\n"
			    "Connection: keep-alive, Upgrade\r\n"
			    "Sec-WebSocket-Protocol: x\r\n"
			    "Sec-WebSocket-Accept:  " SAMPLE_ACCEPT " \r\n"
			    "\r\n\x81";
	char		 buf[WSFRAME_MAX_HEAD + 64], *p;
	size_t		 n = strlen(ok);
	int		 st;

	assert_int_equal(wsframe_response(ok, n - 4, SAMPLE_KEY, &st), 0);
	assert_int_equal(wsframe_response(ok, n, SAMPLE_KEY, &st),
	    (int)n - 1);
	assert_int_equal(st, 101);
	/* Another key: another accept. */
	assert_int_equal(wsframe_response(ok, n, "AAAAAAAAAAAAAAAAAAAAAA==",
	    &st), ERR_PROTOCOL);

	snprintf(buf, sizeof(buf), "HTTP/1.1 401 Unauthorized\r\n\r\n");
	assert_int_equal(wsframe_response(buf, strlen(buf), SAMPLE_KEY, &st),
	    ERR_CONNECT);
	assert_int_equal(st, 401);
	snprintf(buf, sizeof(buf), "HTTP/1.1 101 OK\r\nUpgrade: websocket\r\n"
	    "Sec-WebSocket-Accept: " SAMPLE_ACCEPT "\r\n\r\n");
	assert_int_equal(wsframe_response(buf, strlen(buf), SAMPLE_KEY, &st),
	    ERR_PROTOCOL);	/* no Connection: upgrade */
	snprintf(buf, sizeof(buf), "HTTP/1.1 101 OK\r\n\r\n");
	assert_int_equal(wsframe_response(buf, strlen(buf), SAMPLE_KEY, &st),
	    ERR_PROTOCOL);
	snprintf(buf, sizeof(buf), "SSH-2.0-x\r\n\r\n");
	assert_int_equal(wsframe_response(buf, strlen(buf), SAMPLE_KEY, &st),
	    ERR_PROTOCOL);

	/* An endless head stops at the cap. */
	p = buf;
	memset(p, 'a', sizeof(buf));
	assert_int_equal(wsframe_response(p, WSFRAME_MAX_HEAD - 1, SAMPLE_KEY,
	    &st), 0);
	assert_int_equal(wsframe_response(p, WSFRAME_MAX_HEAD, SAMPLE_KEY,
	    &st), ERR_TOO_LARGE);
	assert_int_equal(wsframe_response(p, sizeof(buf), SAMPLE_KEY, &st),
	    ERR_TOO_LARGE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_lengths),
		cmocka_unit_test(test_header_rules),
		cmocka_unit_test(test_mask),
		cmocka_unit_test(test_handshake_request),
		cmocka_unit_test(test_handshake_response),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

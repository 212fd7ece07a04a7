/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the pure parts of the browser modules: the WebSocket
 * frame parser and HTTP head parser of guestd/cdp.c (bounds, lengths in
 * every encoding, control-frame rules), the URL rule of guestd/page.c
 * (G-36) and the upstream URL and port rules of guestd/proxy-relay.c (G-23).
 */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "err.h"
#include "cdp.h"
#include "guestd.h"
#include "page.h"
#include "proxy-relay.h"

/* page.c links browser.c, which reads the settings. */
struct guestd_settings guestd;

static void
test_ws_small(void **state)
{
	const uint8_t		 f[] = { 0x81, 0x02, 'h', 'i' };
	struct cdp_frame	 fr;

	(void)state;
	assert_int_equal(cdp_ws_parse(f, 1, 100, &fr), 0);
	assert_int_equal(cdp_ws_parse(f, 3, 100, &fr), 0);
	assert_int_equal(cdp_ws_parse(f, 4, 100, &fr), 4);
	assert_int_equal(fr.fin, 1);
	assert_int_equal(fr.opcode, 1);
	assert_int_equal(fr.len, 2);
	assert_memory_equal(fr.payload, "hi", 2);
}

static void
test_ws_lengths(void **state)
{
	uint8_t			 f[70000 + 10];
	struct cdp_frame	 fr;

	(void)state;
	memset(f, 'x', sizeof f);
	/* 16-bit length */
	f[0] = 0x82;
	f[1] = 126;
	f[2] = 0x01;
	f[3] = 0x00;
	assert_int_equal(cdp_ws_parse(f, 4 + 255, 1000, &fr), 0);
	assert_int_equal(cdp_ws_parse(f, 4 + 256, 1000, &fr), 4 + 256);
	assert_int_equal(fr.len, 256);
	/* The bound applies before the bytes arrive. */
	assert_int_equal(cdp_ws_parse(f, 4, 255, &fr), ERR_TOO_LARGE);
	/* A non-minimal 16-bit length is malformed. */
	f[2] = 0;
	f[3] = 5;
	assert_int_equal(cdp_ws_parse(f, 9, 1000, &fr), ERR_PROTOCOL);
	/* 64-bit length */
	memset(f + 2, 0, 8);
	f[1] = 127;
	f[6] = 0x01;	/* 1 << 24: 16 MiB */
	assert_int_equal(cdp_ws_parse(f, 10, CDP_MAX_MESSAGE, &fr),
	    ERR_TOO_LARGE);
	memset(f + 2, 0, 8);
	f[2] = 0x80;	/* top bit set */
	assert_int_equal(cdp_ws_parse(f, 10, CDP_MAX_MESSAGE, &fr),
	    ERR_PROTOCOL);
	memset(f + 2, 0, 8);
	f[9] = 10;	/* non-minimal */
	assert_int_equal(cdp_ws_parse(f, 20, CDP_MAX_MESSAGE, &fr),
	    ERR_PROTOCOL);
	memset(f + 2, 0, 8);
	f[7] = 0x01;
	f[8] = 0x11;
	f[9] = 0x70;	/* 70000 */
	assert_int_equal(cdp_ws_parse(f, 10 + 69999, CDP_MAX_MESSAGE, &fr), 0);
	assert_int_equal(cdp_ws_parse(f, 10 + 70000, CDP_MAX_MESSAGE, &fr),
	    10 + 70000);
}

static void
test_ws_rules(void **state)
{
	struct cdp_frame	fr;
	const uint8_t		masked[] = { 0x81, 0x81, 1, 2, 3, 4, 'a' };
	const uint8_t		rsv[] = { 0xc1, 0x00 };
	const uint8_t		op3[] = { 0x83, 0x00 };
	const uint8_t		ping_frag[] = { 0x09, 0x00 };
	uint8_t			big_ping[130] = { 0x89, 126, 0, 126 };

	(void)state;
	assert_int_equal(cdp_ws_parse(masked, sizeof masked, 100, &fr),
	    ERR_PROTOCOL);
	assert_int_equal(cdp_ws_parse(rsv, sizeof rsv, 100, &fr),
	    ERR_PROTOCOL);
	assert_int_equal(cdp_ws_parse(op3, sizeof op3, 100, &fr),
	    ERR_PROTOCOL);
	assert_int_equal(cdp_ws_parse(ping_frag, sizeof ping_frag, 100, &fr),
	    ERR_PROTOCOL);
	assert_int_equal(cdp_ws_parse(big_ping, sizeof big_ping, 1000, &fr),
	    ERR_PROTOCOL);
}

static void
test_http_head(void **state)
{
	const char	*ok = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nbody";
	const char	*up = "HTTP/1.1 101 Switching\r\nUpgrade: websocket\r\n"
	    "\r\n";
	int64_t		 clen;
	int		 status;

	(void)state;
	assert_int_equal(cdp_http_head(ok, 20, &status, &clen), 0);
	assert_int_equal(cdp_http_head(ok, strlen(ok), &status, &clen),
	    (int)strlen(ok) - 4);
	assert_int_equal(status, 200);
	assert_int_equal(clen, 12);
	assert_true(cdp_http_head(up, strlen(up), &status, &clen) > 0);
	assert_int_equal(status, 101);
	assert_int_equal(clen, -1);
	assert_int_equal(cdp_http_head("FTP/1.1 200\r\n\r\n", 15, &status,
	    &clen), ERR_PROTOCOL);
	assert_int_equal(cdp_http_head("HTTP/1.1 2x0 OK\r\n\r\n", 19, &status,
	    &clen), ERR_PROTOCOL);
	assert_int_equal(cdp_http_head("HTTP/1.1 200 OK\r\nContent-Length: "
	    "-1\r\n\r\n", 39, &status, &clen), ERR_PROTOCOL);
}

static void
test_http_head_bound(void **state)
{
	static char	big[CDP_MAX_HTTP_HEAD + 100];
	int64_t		clen;
	int		status;

	(void)state;
	memset(big, 'a', sizeof big);
	memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
	assert_int_equal(cdp_http_head(big, sizeof big, &status, &clen),
	    ERR_TOO_LARGE);
}

static void
test_url_rule(void **state)
{
	(void)state;
	assert_int_equal(page_url_check("http://example.com/"), 0);
	assert_int_equal(page_url_check("HTTPS://example.com/a?b=c@d"), 0);
	assert_int_equal(page_url_check("http://127.0.0.1:8080"), 0);
	assert_int_equal(page_url_check("javascript:alert(1)"),
	    ERR_URL_REFUSED);
	assert_int_equal(page_url_check("file:///etc/passwd"),
	    ERR_URL_REFUSED);
	assert_int_equal(page_url_check("data:text/html,x"), ERR_URL_REFUSED);
	assert_int_equal(page_url_check("http://u:p@example.com/"),
	    ERR_URL_REFUSED);
	assert_int_equal(page_url_check("http://u@example.com/"),
	    ERR_URL_REFUSED);
	/* A backslash ends the authority, as browsers read it. */
	assert_int_equal(page_url_check("http://x\\@example.com/"), 0);
	assert_int_equal(page_url_check("http://x@y\\z/"), ERR_URL_REFUSED);
	assert_int_equal(page_url_check("http:///path"), ERR_URL_REFUSED);
	assert_int_equal(page_url_check("http://a b/"), ERR_URL_REFUSED);
	assert_int_equal(page_url_check(""), ERR_URL_REFUSED);
}

static void
test_relay_rules(void **state)
{
	char	host[64];
	int	port, p1, p2;

	(void)state;
	assert_int_equal(proxy_relay_parse_url("http://proxy.example:3128", host,
	    sizeof host, &port), 0);
	assert_string_equal(host, "proxy.example");
	assert_int_equal(port, 3128);
	assert_int_equal(proxy_relay_parse_url("http://10.0.0.1:8080/", host,
	    sizeof host, &port), 0);
	assert_int_equal(proxy_relay_parse_url("http://u:p@proxy:1", host,
	    sizeof host, &port), ERR_BAD_REQUEST);
	assert_int_equal(proxy_relay_parse_url("https://proxy:1", host,
	    sizeof host, &port), ERR_BAD_REQUEST);
	assert_int_equal(proxy_relay_parse_url("http://proxy", host, sizeof host,
	    &port), ERR_BAD_REQUEST);
	assert_int_equal(proxy_relay_parse_url("http://proxy:0", host, sizeof host,
	    &port), ERR_BAD_REQUEST);
	assert_int_equal(proxy_relay_parse_url("http://proxy:1/x", host,
	    sizeof host, &port), ERR_BAD_REQUEST);
	p1 = proxy_relay_port_for("/home/u/rakazo-home/.browser-profiles/a");
	p2 = proxy_relay_port_for("/home/u/rakazo-home/.browser-profiles/b");
	assert_int_equal(p1, proxy_relay_port_for(
	    "/home/u/rakazo-home/.browser-profiles/a"));
	assert_true(p1 != p2);
	assert_true(p1 >= PROXY_RELAY_PORT_BASE &&
	    p1 < PROXY_RELAY_PORT_BASE + PROXY_RELAY_PORT_SPAN);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ws_small),
		cmocka_unit_test(test_ws_lengths),
		cmocka_unit_test(test_ws_rules),
		cmocka_unit_test(test_http_head),
		cmocka_unit_test(test_http_head_bound),
		cmocka_unit_test(test_url_rule),
		cmocka_unit_test(test_relay_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

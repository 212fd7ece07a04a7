/* SPDX-License-Identifier: MIT */
/*
 * http-head: the status line is exactly "HTTP/1.x NNN" with NNN in
 * 100..599, a Content-Length value is digits or the head is refused, the
 * cap holds with and without the empty line; a request with both
 * Content-Length and Transfer-Encoding, or Transfer-Encoding alone, is
 * refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "err.h"
#include "http-head.h"

static void
test_status(void **state)
{
	static const char *const bad[] = {
		"HTTP/1.1 099 x", "HTTP/1.1 600 x", "HTTP/1.1 2x0", "HTTP/1.1  200",
		"HTTP/2.0 200 OK", "http/1.1 200", "HTTP/1.1 20", "HTTP/1.1",
		"", NULL
	};
	int	 status = -1, i;

	assert_int_equal(http_head_status("HTTP/1.1 101 Switching", 22,
	    &status), 0);
	assert_int_equal(status, 101);
	assert_int_equal(http_head_status("HTTP/1.0 599", 12, &status), 0);
	assert_int_equal(status, 599);
	/* Only n bytes count: the code must be whole within them. */
	assert_int_equal(http_head_status("HTTP/1.1 200", 11, &status),
	    ERR_PROTOCOL);
	assert_int_equal(status, 0);
	for (i = 0; bad[i] != NULL; i++) {
		status = -1;
		assert_int_equal(http_head_status(bad[i], strlen(bad[i]),
		    &status), ERR_PROTOCOL);
		assert_int_equal(status, 0);
	}
}

static void
test_parse(void **state)
{
	const char	*ok = "HTTP/1.1 200 OK\r\ncontent-length:  42 \r\n"
			    "X: y\r\n\r\nbody";
	int64_t		 clen;
	int		 status;

	assert_int_equal(http_head_parse(ok, strlen(ok), 1024, &status,
	    &clen), (int)strlen(ok) - 4);
	assert_int_equal(status, 200);
	assert_int_equal(clen, 42);
	/* Not yet whole: more, then too large once past the cap. */
	assert_int_equal(http_head_parse(ok, 20, 1024, &status, &clen), 0);
	assert_int_equal(http_head_parse(ok, 20, 19, &status, &clen),
	    ERR_TOO_LARGE);
	assert_int_equal(http_head_parse(ok, strlen(ok), 30, &status, &clen),
	    ERR_TOO_LARGE);
	assert_int_equal(http_head_parse("HTTP/1.1 204 No\r\n\r\n", 19, 64,
	    &status, &clen), 19);
	assert_int_equal(clen, -1);
	assert_int_equal(http_head_parse("HTTP/1.1 200 OK\r\nContent-Length: "
	    "-1\r\n\r\n", 39, 64, &status, &clen), ERR_PROTOCOL);
	assert_int_equal(http_head_parse("HTTP/1.1 200 OK\r\nContent-Length: "
	    "1x\r\n\r\n", 39, 64, &status, &clen), ERR_PROTOCOL);
	/* A name with no value is not a Content-Length (as before). */
	assert_int_equal(http_head_parse("HTTP/1.1 200 OK\r\nContent-Length:"
	    "\r\n\r\n", 36, 64, &status, &clen), 36);
	assert_int_equal(clen, -1);
	assert_int_equal(http_head_parse("FTP/1.1 200\r\n\r\n", 15, 64,
	    &status, &clen), ERR_PROTOCOL);
	/* The body's end in doubt: two lengths, or a transfer coding. */
	ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
	    "Content-Length: 2\r\n\r\n";
	assert_int_equal(http_head_parse(ok, strlen(ok), 128, &status,
	    &clen), ERR_PROTOCOL);
	ok = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
	    "transfer-encoding: chunked\r\n\r\n";
	assert_int_equal(http_head_parse(ok, strlen(ok), 128, &status,
	    &clen), ERR_PROTOCOL);
	ok = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
	assert_int_equal(http_head_parse(ok, strlen(ok), 128, &status,
	    &clen), ERR_PROTOCOL);
}

/* A request's framing: a length, nothing, or refused (RFC 9112 6.3). */
static void
test_req_framing(void **state)
{
	assert_int_equal(http_head_req_framing(0, 0), 0);
	assert_int_equal(http_head_req_framing(1, 0), 0);
	assert_int_equal(http_head_req_framing(1, 1), ERR_BAD_REQUEST);
	assert_int_equal(http_head_req_framing(0, 1), ERR_LENGTH_REQUIRED);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_req_framing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

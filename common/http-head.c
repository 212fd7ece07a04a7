/* SPDX-License-Identifier: MIT */
/*
 * HTTP/1.x response heads (http-head.h).  The status line goes through
 * the cursor: a fixed "HTTP/1." prefix, one minor-version byte, a space
 * and exactly three digits, so "HTTP/1.1 2x0" or a short line is refused
 * rather than half read.
 */
#include "autoconf.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "err.h"
#include "http-head.h"

int
http_head_status(const char *p, size_t n, int *status)
{
	struct cursor	c;
	uint32_t	code;

	*status = 0;
	cursor_init(&c, p, n);
	if (cursor_expect(&c, "HTTP/1.", 7) != 0 || cursor_skip(&c, 1) != 0 ||
	    cursor_expect(&c, " ", 1) != 0 ||
	    cursor_get_digits(&c, 3, &code) != 0 || code < 100 || code > 599)
		return ERR_PROTOCOL;
	*status = (int)code;
	return 0;
}

/* A Content-Length value v[0..n): digits, blanks either side.  -1 if bad. */
static int64_t
http_head_clen(const char *v, size_t n)
{
	char		 num[24];
	char		*ep;
	long long	 x;

	if (n >= sizeof num)
		return -1;
	memcpy(num, v, n);
	num[n] = '\0';
	errno = 0;
	x = strtoll(num, &ep, 10);
	while (*ep == ' ' || *ep == '\t')
		ep++;
	if (errno != 0 || x < 0 || *ep != '\0' || ep == num)
		return -1;
	return x;
}

int
http_head_parse(const char *p, size_t n, size_t max, int *status,
    int64_t *clen)
{
	const char	*end, *line, *nl;
	size_t		 headlen;

	*status = 0;
	*clen = -1;
	/* The length must fit the int we return. */
	if (max > INT_MAX)
		max = INT_MAX;
	if ((end = memmem(p, n, "\r\n\r\n", 4)) == NULL)
		return n > max ? ERR_TOO_LARGE : 0;
	headlen = (size_t)(end - p) + 4;
	if (headlen > max)
		return ERR_TOO_LARGE;
	if (http_head_status(p, (size_t)(end - p), status) != 0)
		return ERR_PROTOCOL;
	/* end's own CRLF bounds every line. */
	for (line = p; line < end; line = nl + 2) {
		nl = memmem(line, (size_t)(end + 2 - line), "\r\n", 2);
		if (nl == NULL)
			break;
		/*
		 * Two lengths, or a transfer coding (none of our clients
		 * reads chunked replies): the body's end is in doubt, so
		 * the reply is refused rather than framed one way of two.
		 */
		if ((size_t)(nl - line) >= 18 &&
		    strncasecmp(line, "Transfer-Encoding:", 18) == 0)
			return ERR_PROTOCOL;
		if ((size_t)(nl - line) > 15 &&
		    strncasecmp(line, "Content-Length:", 15) == 0 &&
		    (*clen >= 0 || (*clen = http_head_clen(line + 15,
		    (size_t)(nl - line) - 15)) < 0))
			return ERR_PROTOCOL;
	}
	return (int)headlen;
}

int
http_head_req_framing(int has_length, int has_te)
{
	if (has_te && has_length)
		return ERR_BAD_REQUEST;
	if (has_te)
		return ERR_LENGTH_REQUIRED;
	return 0;
}

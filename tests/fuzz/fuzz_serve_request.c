/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: rakazoctl serve's request intake (serve-req.c), what
 * is decided from a request's headers before it takes a slot or has its
 * body read: the bearer token check, the Content-Length, the public
 * route, and the query string rebuilt from lws's decoded arguments.
 *
 * Input: byte 0 picks the check; the rest is the untrusted value.  Each
 * check is held to a property, not only to not crashing:
 *  - authorized: true exactly for "Bearer " (any case) + the token;
 *  - length: accepted exactly for 1..19 digits that fit an int64_t, and
 *    then the same number strtoll reads;
 *  - query: the arguments (split at NUL bytes of the input) joined, then
 *    split at '&' and %-decoded, give the same arguments back, and the
 *    joined string holds no NUL and no stray '%'.
 */
#include "autoconf.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve-req.h"

#define FUZZ_TOKEN	"fuzz-serve-token-0123456789"

static void
fuzz_auth(const char *d, size_t n)
{
	static const char	 tok[] = FUZZ_TOKEN;
	int			 want;

	want = n == 7 + sizeof tok - 1 && strncasecmp(d, "Bearer ", 7) == 0 &&
	    memcmp(d + 7, tok, sizeof tok - 1) == 0;
	if (serve_req_authorized(d, n, tok) != want)
		abort();
	/* An empty token never matches anything. */
	if (serve_req_authorized(d, n, ""))
		abort();
}

static void
fuzz_length(const char *d, size_t n)
{
	char	 buf[32];
	int64_t	 v;
	size_t	 i;
	int	 digits = n >= 1 && n <= SERVE_REQ_LENGTH_DIGITS, r;

	for (i = 0; i < n && digits; i++)
		if (d[i] < '0' || d[i] > '9')
			digits = 0;
	r = serve_req_length(d, n, &v);
	if (!digits) {
		if (r == 0 || v != -1)
			abort();
		return;
	}
	memcpy(buf, d, n);
	buf[n] = '\0';
	/* 19 digits may pass INT64_MAX: then refused, else strtoll's. */
	if (r == 0 && (v < 0 || v != strtoll(buf, NULL, 10)))
		abort();
	if (r != 0 && (n < SERVE_REQ_LENGTH_DIGITS ||
	    strcmp(buf, "9223372036854775807") <= 0))
		abort();
}

static int
fuzz_hex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void
fuzz_query(const char *d, size_t n)
{
	struct serve_query	 q;
	const char		*arg = d, *end = d + n, *z;
	char			*s, *p, *out;
	size_t			 nargs = 0, k, o;
	int			 h, l;

	memset(&q, 0, sizeof q);
	/* Arguments: the input split at every "\n" (NULs stay inside). */
	while (arg <= end) {
		z = memchr(arg, '\n', (size_t)(end - arg));
		if (z == NULL)
			z = end;
		serve_req_query_add(&q, arg, (size_t)(z - arg));
		nargs++;
		arg = z + 1;
	}
	k = q.len;
	s = serve_req_query_take(&q);
	if (strlen(s) != k)
		abort();	/* a NUL inside the joined string */
	/* Split and decode back, and compare with the input. */
	out = malloc(n + 1);
	if (out == NULL)
		abort();
	o = 0;
	for (p = s; ; p++) {
		if (*p == '&' || *p == '\0') {
			if (o > n)
				abort();
			out[o++] = '\n';
			if (*p == '\0')
				break;
			continue;
		}
		if (*p == '%') {
			if ((h = fuzz_hex((unsigned char)p[1])) < 0 ||
			    (l = fuzz_hex((unsigned char)p[2])) < 0)
				abort();
			if (o > n)
				abort();
			out[o++] = (char)(h << 4 | l);
			p += 2;
			continue;
		}
		if (o > n)
			abort();
		out[o++] = *p;
	}
	/* Joined then split: n bytes and a final separator. */
	if (o != n + 1 || memcmp(out, d, n) != 0 || nargs == 0)
		abort();
	free(out);
	free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*d = (const char *)data + 1;
	size_t		 n;

	if (size < 1 || size > 64 * 1024)
		return 0;
	n = size - 1;
	switch (data[0] % 4) {
	case 0:
		fuzz_auth(d, n);
		break;
	case 1:
		fuzz_length(d, n);
		break;
	case 2:
		fuzz_query(d, n);
		break;
	default:
		/* The public route: only GET /internal/health, NUL-ended. */
		{
			char	*s = strndup(d, n);

			if (s == NULL)
				abort();
			if (serve_req_public("GET", s) !=
			    (strcmp(s, "/internal/health") == 0) ||
			    serve_req_public("POST", s))
				abort();
			free(s);
		}
		break;
	}
	return 0;
}

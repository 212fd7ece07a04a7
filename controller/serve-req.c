/* SPDX-License-Identifier: MIT */
/*
 * Request intake of rakazoctl serve (serve-req.h): the checks made on a
 * request's headers before it may take a request slot or have its body
 * read.  Everything here reads bytes a network peer chose, so each input
 * comes with its length, and nothing trusts a NUL to end it.
 */
#include "autoconf.h"

#include <string.h>
#include <strings.h>

#include "err.h"
#include "token.h"
#include "serve-req.h"
#include "xmalloc.h"

int
serve_req_authorized(const char *hdr, size_t hlen, const char *token)
{
	static const char	 scheme[] = "Bearer ";
	const size_t		 sl = sizeof scheme - 1;

	if (hdr == NULL || token == NULL || *token == '\0' || hlen <= sl ||
	    strncasecmp(hdr, scheme, sl - 1) != 0 || hdr[sl - 1] != ' ')
		return 0;
	return token_equal(hdr + sl, hlen - sl, token, strlen(token));
}

int
serve_req_public(const char *method, const char *path)
{
	return method != NULL && path != NULL && strcmp(method, "GET") == 0 &&
	    strcmp(path, "/internal/health") == 0;
}

int
serve_req_length(const char *s, size_t n, int64_t *out)
{
	int64_t	 v = 0;
	size_t	 i;

	*out = -1;
	if (s == NULL || n == 0 || n > SERVE_REQ_LENGTH_DIGITS)
		return ERR_BAD_REQUEST;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return ERR_BAD_REQUEST;
		/* v * 10 + d <= INT64_MAX, as a subtraction. */
		if (v > (INT64_MAX - (s[i] - '0')) / 10)
			return ERR_BAD_REQUEST;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

void
serve_req_query_add(struct serve_query *q, const char *arg, size_t n)
{
	static const char	 hex[] = "0123456789ABCDEF";
	size_t			 i, need;
	unsigned char		 c;

	/* A separator, each byte as three at most, and the NUL. */
	if (n > (SIZE_MAX - q->len - 2) / 3)
		fatal("serve: a query argument of %zu bytes", n);
	need = q->len + 1 + n * 3 + 1;
	if (need > q->cap) {
		q->cap = need > q->cap * 2 ? need : q->cap * 2;
		q->s = xrealloc(q->s, q->cap);
	}
	if (q->nargs++ > 0)
		q->s[q->len++] = '&';
	for (i = 0; i < n; i++) {
		c = (unsigned char)arg[i];
		if (c == '%' || c == '&' || c == '\0') {
			q->s[q->len++] = '%';
			q->s[q->len++] = hex[c >> 4];
			q->s[q->len++] = hex[c & 15];
		} else
			q->s[q->len++] = (char)c;
	}
	q->s[q->len] = '\0';
}

char *
serve_req_query_take(struct serve_query *q)
{
	char	*s = q->s != NULL ? q->s : xstrdup("");

	q->s = NULL;
	q->len = q->cap = q->nargs = 0;
	return s;
}

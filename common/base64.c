/* SPDX-License-Identifier: MIT */
/*
 * base64 (base64.h).  One loop serves both alphabets: three bytes become
 * four characters, and a last one or two bytes become two or three, then
 * '=' up to four when the form is padded.
 */
#include <stdint.h>

#include "base64.h"
#include "xmalloc.h"

static const char base64_std[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char base64_url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static size_t
base64_run(const uint8_t *in, size_t n, char *out, const char *t, int pad)
{
	size_t		 i, o = 0;
	uint32_t	 v;

	for (i = 0; n - i >= 3; i += 3) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 |
		    in[i + 2];
		out[o++] = t[v >> 18];
		out[o++] = t[(v >> 12) & 63];
		out[o++] = t[(v >> 6) & 63];
		out[o++] = t[v & 63];
	}
	if (i < n) {
		v = (uint32_t)in[i] << 16;
		if (n - i == 2)
			v |= (uint32_t)in[i + 1] << 8;
		out[o++] = t[v >> 18];
		out[o++] = t[(v >> 12) & 63];
		if (n - i == 2)
			out[o++] = t[(v >> 6) & 63];
		else if (pad)
			out[o++] = '=';
		if (pad)
			out[o++] = '=';
	}
	out[o] = '\0';
	return o;
}

size_t
base64_encode(const void *in, size_t n, char *out)
{
	return base64_run(in, n, out, base64_std, 1);
}

size_t
base64_encode_url(const void *in, size_t n, char *out)
{
	return base64_run(in, n, out, base64_url, 0);
}

char *
base64_encode_new(const void *in, size_t n)
{
	char	*out;

	if (n >= SIZE_MAX / 2)
		fatal("base64: %zu bytes cannot be encoded", n);
	out = xmalloc(BASE64_SIZE(n));
	base64_encode(in, n, out);
	return out;
}

/* SPDX-License-Identifier: MIT */
/*
 * base64 (RFC 4648): the one encoder, in its two alphabets.
 *
 * The standard form (section 4, "+/" and "=" padding) carries bytes in
 * JSON replies and HTTP headers; the URL-safe form (section 5, "-_",
 * unpadded) is what tokens are made of, so they sit in URLs, headers
 * and command lines unescaped.
 */
#ifndef COMMON_BASE64_H
#define COMMON_BASE64_H

#include <stddef.h>

/* Bytes for the padded text of n bytes and its NUL (n < SIZE_MAX / 2). */
#define BASE64_SIZE(n)	(((n) + 2) / 3 * 4 + 1)

/*
 * The padded standard text of in[0..n) into out (BASE64_SIZE(n) bytes),
 * NUL-terminated; returns its length.
 */
size_t	 base64_encode(const void *in, size_t n, char *out);
/*
 * The unpadded URL-safe text of in[0..n) into out (BASE64_SIZE(n) is
 * enough), NUL-terminated; returns its length.
 */
size_t	 base64_encode_url(const void *in, size_t n, char *out);
/* base64_encode into a new string (xmalloc'd: fatal when out of memory). */
char	*base64_encode_new(const void *in, size_t n);

#endif

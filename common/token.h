/* SPDX-License-Identifier: MIT */
/*
 * Tokens and secrets.  Tokens carry >= 128 bits from getrandom(2), printed
 * as base64url without padding; comparisons run in constant time; buffers
 * that held secrets are wiped with explicit_bzero.
 */
#ifndef COMMON_TOKEN_H
#define COMMON_TOKEN_H

#include <stddef.h>

#define TOKEN_BYTES	24			/* 192 bits */
#define TOKEN_STRLEN	32			/* base64url of 24 bytes */
#define SECRET_MAX	512

/* Fill out (>= TOKEN_STRLEN + 1 bytes) with a fresh token. 0 or ERR_*. */
int	 token_new(char *out, size_t outlen);
/* Fill p with n random bytes from getrandom; 0 or ERR_INTERNAL. */
int	 token_random(void *p, size_t n);
/*
 * Fill out with 2 * nbytes lowercase hex digits of fresh randomness and a
 * NUL (out needs 2 * nbytes + 1 bytes): ids and refs that need not be
 * secret-strength strings but must not repeat.  0, or ERR_INTERNAL with
 * out all '0' digits.
 */
int	 token_hex(char *out, size_t nbytes);
/* 1 when equal; time depends only on the lengths, not on content. */
int	 token_equal(const char *a, size_t alen, const char *b, size_t blen);
/*
 * Read a secret from a file: trailing newline stripped; refused when empty,
 * longer than SECRET_MAX, containing NUL or whitespace, or (when
 * check_mode) readable by group or others.  out gets SECRET_MAX+1 bytes.
 */
int	 token_read_file(const char *path, char *out, size_t outlen,
	    int check_mode);
void	 token_wipe(void *p, size_t n);

#endif

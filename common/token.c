/* SPDX-License-Identifier: MIT */
/*
 * Tokens and secrets.  Randomness comes from getrandom(2) only (no
 * fallback that could quietly be weaker); tokens are base64url without
 * padding so they sit in URLs and headers unescaped; comparisons take the
 * same time wherever the first differing byte is, so a peer cannot guess
 * a token byte by byte; buffers that held secrets are wiped.
 */
#define _GNU_SOURCE
#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "base64.h"
#include "err.h"
#include "token.h"

int
token_random(void *p, size_t n)
{
	uint8_t	*q = p;
	ssize_t	 r;

	while (n > 0) {
		r = getrandom(q, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return ERR_INTERNAL;
		q += r;
		n -= (size_t)r;
	}
	return 0;
}

int
token_new(char *out, size_t outlen)
{
	uint8_t	 raw[TOKEN_BYTES];
	int	 r = ERR_INTERNAL;

	if (outlen > 0)
		out[0] = '\0';
	if (outlen < TOKEN_STRLEN + 1)
		return ERR_INTERNAL;
	/*
	 * A token that starts with '-' reads as an option on a command line
	 * (rakazoctl release-control TOKEN): draw again.  The first character
	 * then has 62 values instead of 64, which costs 0.05 of 192 bits.
	 */
	do {
		if ((r = token_random(raw, sizeof(raw))) != 0)
			goto out;
		(void)base64_encode_url(raw, sizeof(raw), out);
	} while (out[0] == '-');
	r = 0;
out:
	token_wipe(raw, sizeof(raw));
	return r;
}

int
token_hex(char *out, size_t nbytes)
{
	static const char	 digits[] = "0123456789abcdef";
	uint8_t			 b[32];
	size_t			 i, n, done = 0;

	while (done < nbytes) {
		n = nbytes - done < sizeof b ? nbytes - done : sizeof b;
		if (token_random(b, n) != 0) {
			memset(out, '0', 2 * nbytes);
			out[2 * nbytes] = '\0';
			return ERR_INTERNAL;
		}
		for (i = 0; i < n; i++) {
			out[2 * (done + i)] = digits[b[i] >> 4];
			out[2 * (done + i) + 1] = digits[b[i] & 15];
		}
		done += n;
	}
	out[2 * nbytes] = '\0';
	return 0;
}

int
token_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	volatile uint8_t diff = 0;
	size_t	 i;
	uint8_t	 y;

	/*
	 * Walk all of a whatever b holds; a length mismatch still costs
	 * the full comparison, so timing tells only the lengths.
	 */
	for (i = 0; i < alen; i++) {
		y = i < blen ? (uint8_t)b[i] : 0;
		diff |= (uint8_t)a[i] ^ y;
	}
	return (diff == 0) & (alen == blen);
}

void
token_wipe(void *p, size_t n)
{
	if (p != NULL && n > 0)
		explicit_bzero(p, n);
}

static int
token_isspace(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
	    c == '\v' || c == '\f';
}

int
token_read_file(const char *path, char *out, size_t outlen, int check_mode)
{
	char		 buf[SECRET_MAX + 3];
	struct stat	 st;
	size_t		 len = 0, i;
	ssize_t		 n;
	int		 fd = -1, r = ERR_INTERNAL;

	if (outlen > 0)
		out[0] = '\0';
	/* O_NONBLOCK: a FIFO (or a device) must not hang the open; only a
	 * regular file passes the fstat below. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK)) == -1) {
		r = err_from_errno(errno);
		goto out;
	}
	if (fstat(fd, &st) == -1) {
		r = err_from_errno(errno);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = ERR_NOT_REGULAR;
		goto out;
	}
	if (check_mode && (st.st_mode & (S_IRGRP | S_IROTH)) != 0) {
		r = ERR_PERMISSION;
		goto out;
	}
	/* Read one byte more than a secret plus "\r\n" to see overlong. */
	while (len < sizeof(buf)) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = err_from_errno(errno);
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len > 0 && buf[len - 1] == '\r')
		len--;
	if (len > SECRET_MAX) {
		r = ERR_TOO_LARGE;
		goto out;
	}
	if (len == 0) {
		r = ERR_CONFIG;
		goto out;
	}
	for (i = 0; i < len; i++) {
		if (buf[i] == '\0' || token_isspace((unsigned char)buf[i])) {
			r = ERR_CONFIG;
			goto out;
		}
	}
	if (outlen < len + 1) {
		r = ERR_TOO_LARGE;
		goto out;
	}
	memcpy(out, buf, len);
	out[len] = '\0';
	r = 0;
out:
	token_wipe(buf, sizeof(buf));
	if (fd != -1)
		close(fd);
	return r;
}

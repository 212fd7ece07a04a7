/* SPDX-License-Identifier: MIT */
/*
 * Content key file, data keys and their wrapping (seal-key.h).
 *
 * The key file is text (64 hex digits and a newline) so an operator can
 * make one with `openssl rand -hex 32` and back it up as any secret; it
 * is refused when group or others may read it, as ssh refuses a private
 * key, because whoever reads it reads every home.  A missing file is
 * made with O_EXCL so two controllers starting at once cannot each write
 * their own key and leave one set of homes sealed under a lost one.
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "err.h"
#include "seal-key.h"

#define SEAL_KEY_HEX	(SEAL_KEY_LEN * 2)

int
seal_key_generate(uint8_t key[SEAL_KEY_LEN], struct errmsg *e)
{
	if (RAND_priv_bytes(key, SEAL_KEY_LEN) != 1)
		return errmsg_set(e, ERR_INTERNAL, "no random bytes for a key");
	return 0;
}

static int
seal_key_kw(const uint8_t kek[SEAL_KEY_LEN], const uint8_t *in, int inlen,
    uint8_t *out, int enc)
{
	EVP_CIPHER_CTX	*ctx;
	int		 n = 0, m = 0, ok;

	if ((ctx = EVP_CIPHER_CTX_new()) == NULL)
		return -1;
	EVP_CIPHER_CTX_set_flags(ctx, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
	ok = EVP_CipherInit_ex(ctx, EVP_aes_256_wrap(), NULL, kek, NULL,
	    enc) == 1 && EVP_CipherUpdate(ctx, out, &n, in, inlen) == 1 &&
	    EVP_CipherFinal_ex(ctx, out + n, &m) == 1;
	EVP_CIPHER_CTX_free(ctx);
	return ok ? n + m : -1;
}

int
seal_key_wrap(const uint8_t content[SEAL_KEY_LEN],
    const uint8_t data[SEAL_KEY_LEN], uint8_t out[SEAL_KEY_WRAPPED_LEN],
    struct errmsg *e)
{
	if (seal_key_kw(content, data, SEAL_KEY_LEN, out, 1) !=
	    SEAL_KEY_WRAPPED_LEN)
		return errmsg_set(e, ERR_INTERNAL, "AES key wrap failed");
	return 0;
}

int
seal_key_unwrap(const uint8_t content[SEAL_KEY_LEN],
    const uint8_t in[SEAL_KEY_WRAPPED_LEN], uint8_t data[SEAL_KEY_LEN],
    struct errmsg *e)
{
	/* The unwrap writes up to the input's length before its check. */
	uint8_t	 tmp[SEAL_KEY_WRAPPED_LEN];
	int	 n;

	n = seal_key_kw(content, in, SEAL_KEY_WRAPPED_LEN, tmp, 0);
	if (n != SEAL_KEY_LEN) {
		explicit_bzero(tmp, sizeof(tmp));
		explicit_bzero(data, SEAL_KEY_LEN);
		return errmsg_set(e, ERR_KEY_INVALID, "the wrapped data key "
		    "does not unwrap under this content key");
	}
	memcpy(data, tmp, SEAL_KEY_LEN);
	explicit_bzero(tmp, sizeof(tmp));
	return 0;
}

static int
seal_key_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parse "64 hex digits" with an optional newline after them. */
static int
seal_key_parse(const char *buf, size_t n, uint8_t key[SEAL_KEY_LEN])
{
	size_t	 i;
	int	 hi, lo;

	if (n == SEAL_KEY_HEX + 1 && buf[SEAL_KEY_HEX] == '\n')
		n--;
	if (n != SEAL_KEY_HEX)
		return -1;
	for (i = 0; i < SEAL_KEY_LEN; i++) {
		hi = seal_key_hexval((unsigned char)buf[2 * i]);
		lo = seal_key_hexval((unsigned char)buf[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			explicit_bzero(key, SEAL_KEY_LEN);
			return -1;
		}
		key[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

static int
seal_key_create(const char *path, uint8_t key[SEAL_KEY_LEN],
    struct errmsg *e)
{
	static const char hex[] = "0123456789abcdef";
	char	 buf[SEAL_KEY_HEX + 1];
	size_t	 i;
	int	 fd, r;

	if ((r = seal_key_generate(key, e)) != 0)
		return r;
	for (i = 0; i < SEAL_KEY_LEN; i++) {
		buf[2 * i] = hex[key[i] >> 4];
		buf[2 * i + 1] = hex[key[i] & 15];
	}
	buf[SEAL_KEY_HEX] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd == -1) {
		r = errno;
		explicit_bzero(buf, sizeof(buf));
		explicit_bzero(key, SEAL_KEY_LEN);
		return errmsg_set(e, err_from_errno(r), "cannot create the "
		    "content key file %s: %s", path, strerror(r));
	}
	r = write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf) &&
	    fsync(fd) == 0 ? 0 : errno;
	explicit_bzero(buf, sizeof(buf));
	if (close(fd) != 0 && r == 0)
		r = errno;
	if (r != 0) {
		unlink(path);
		explicit_bzero(key, SEAL_KEY_LEN);
		return errmsg_set(e, err_from_errno(r), "cannot write the "
		    "content key file %s: %s", path, strerror(r));
	}
	return 0;
}

int
seal_key_load(const char *path, uint8_t key[SEAL_KEY_LEN], int *created,
    struct errmsg *e)
{
	struct stat	 st;
	char		 buf[SEAL_KEY_HEX + 2];
	ssize_t		 n;
	int		 fd, r, saved;

	*created = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd == -1 && errno == ENOENT) {
		if ((r = seal_key_create(path, key, e)) == 0) {
			*created = 1;
			return 0;
		}
		/* Another process made it first: read theirs. */
		if (r != ERR_EXISTS)
			return r;
		errmsg_clear(e);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	}
	if (fd == -1) {
		saved = errno;
		return errmsg_set(e, err_from_errno(saved), "cannot open the "
		    "content key file %s: %s", path, strerror(saved));
	}
	r = 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		r = errmsg_set(e, ERR_KEY_INVALID, "the content key file %s "
		    "is not a regular file", path);
	else if ((st.st_mode & 077) != 0)
		r = errmsg_set(e, ERR_PERMISSION, "the content key file %s "
		    "may be read by others (mode %03o): chmod 600 it", path,
		    (unsigned)(st.st_mode & 0777));
	else if (st.st_uid != geteuid())
		r = errmsg_set(e, ERR_PERMISSION, "the content key file %s "
		    "belongs to another user", path);
	if (r == 0) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 || seal_key_parse(buf, (size_t)n, key) != 0)
			r = errmsg_set(e, ERR_KEY_INVALID, "the content key "
			    "file %s does not hold 64 hex digits", path);
	}
	explicit_bzero(buf, sizeof(buf));
	close(fd);
	return r;
}

/* SPDX-License-Identifier: MIT */
/*
 * seal, seal-key: the sealed archive format of rakazo-home(5).
 *
 * Known answers first: the archives below were computed once by a
 * separate implementation of the format (Python's `cryptography`: HKDF
 * and AESGCM) from the man page's description, and RFC 3394 section 4.6
 * gives the key wrap's.  Then the properties the format promises: round
 * trips at every interesting size and chunking, and refusal, with its
 * stable code and no unauthenticated plaintext handed out, of every
 * single-byte flip, every truncation at a segment boundary, swapped
 * segments, a segment of another revision, a header of another home,
 * appended bytes and a wrong key.  Last the content key file.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/sha.h>

#include "unit-tmpdir.h"

#include "err.h"
#include "seal.h"
#include "seal-key.h"

/* A growing byte buffer: the sink of both directions. */
struct sbuf {
	uint8_t	*p;
	size_t	 n, cap;
};

static int
sbuf_sink(void *arg, const void *p, size_t n)
{
	struct sbuf	*b = arg;

	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
	return 0;
}

static uint8_t	 key[SEAL_KEY_LEN];
static uint8_t	 salt[SEAL_SALT_LEN];
static uint8_t	 prefix[SEAL_PREFIX_LEN];

static void
fixed_init(void)
{
	size_t	 i;

	for (i = 0; i < SEAL_KEY_LEN; i++)
		key[i] = (uint8_t)i;
	memset(salt, 0x11, sizeof(salt));
	memset(prefix, 0x22, sizeof(prefix));
}

static uint8_t *
pattern(size_t n)
{
	uint8_t	*p = malloc(n > 0 ? n : 1);
	size_t	 i;

	assert_non_null(p);
	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + 3);
	return p;
}

/* Seal pt in writes of chunk bytes (0: one write). */
static void
seal_buf(const char *id, uint64_t rev, int fixed, const uint8_t *pt,
    size_t n, size_t chunk, struct sbuf *out)
{
	struct seal	*s;
	struct errmsg	 e;
	size_t		 off, k;

	memset(out, 0, sizeof(*out));
	if (fixed)
		assert_int_equal(seal_new_fixed(&s, key, id, rev, salt, prefix,
		    sbuf_sink, out, &e), 0);
	else
		assert_int_equal(seal_new(&s, key, id, rev, sbuf_sink, out,
		    &e), 0);
	for (off = 0; off < n; off += k) {
		k = chunk == 0 ? n - off : chunk;
		if (k > n - off)
			k = n - off;
		assert_int_equal(seal_write(s, pt + off, k, &e), 0);
	}
	assert_int_equal(seal_finish(s, &e), 0);
	seal_free(s);
}

/* Open sealed bytes in writes of chunk bytes; the code, plaintext out. */
static int
open_buf(const char *id, uint64_t rev, const uint8_t *k, const uint8_t *sd,
    size_t n, size_t chunk, struct sbuf *out)
{
	struct seal_open *o;
	struct errmsg	 e;
	size_t		 off, c;
	int		 r;

	memset(out, 0, sizeof(*out));
	errmsg_clear(&e);
	assert_int_equal(seal_open_new(&o, k, id, rev, sbuf_sink, out, &e), 0);
	for (off = 0, r = 0; off < n && r == 0; off += c) {
		c = chunk == 0 ? n - off : chunk;
		if (c > n - off)
			c = n - off;
		r = seal_open_write(o, sd + off, c, &e);
	}
	if (r == 0)
		r = seal_open_finish(o, &e);
	if (r != 0) {
		assert_int_equal(e.code, r);
		assert_true(strlen(errmsg_str(&e)) > 0);
	}
	seal_open_free(o);
	return r;
}

static void
hex(const uint8_t *p, size_t n, char *out)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

static void
test_known_vectors(void **state)
{
	/* "hello, home\n", home-1, revision 7. */
	static const char want_small[] =
	    "524b5a4801011006000000000000000711111111111111111111111111111111"
	    "1111111111111111111111111111111122222222222222686f6d652d318b2796"
	    "ee83bef0778d916ef06a796593a94d8e8712b5cef0454bd75c";
	/* The empty archive: one empty final segment. */
	static const char want_empty[] =
	    "524b5a4801011006000000000000000711111111111111111111111111111111"
	    "1111111111111111111111111111111122222222222222686f6d652d31feb557"
	    "af06d40e8baeba7dc0b892046d";
	/* 150000 bytes of (i * 7 + 3) & 255: three segments. */
	static const char want_big_sha[] =
	    "807ef3daed167782ecb12b34c62b92e5a9ea47026031126fe58cbd116420de53";
	struct sbuf	 b, pt;
	char		 h[512];
	uint8_t		 md[SHA256_DIGEST_LENGTH], *big;

	(void)state;
	seal_buf("home-1", 7, 1, (const uint8_t *)"hello, home\n", 12, 0, &b);
	assert_int_equal(b.n, seal_sealed_size(12, 6));
	hex(b.p, b.n, h);
	assert_string_equal(h, want_small);
	assert_int_equal(open_buf("home-1", 7, key, b.p, b.n, 1, &pt), 0);
	assert_int_equal(pt.n, 12);
	assert_memory_equal(pt.p, "hello, home\n", 12);
	free(b.p);
	free(pt.p);

	seal_buf("home-1", 7, 1, NULL, 0, 0, &b);
	hex(b.p, b.n, h);
	assert_string_equal(h, want_empty);
	assert_int_equal(open_buf("home-1", 7, key, b.p, b.n, 0, &pt), 0);
	assert_int_equal(pt.n, 0);
	free(b.p);
	free(pt.p);

	big = pattern(150000);
	seal_buf("home-1", 7, 1, big, 150000, 4096, &b);
	assert_int_equal(b.n, 150109);
	SHA256(b.p, b.n, md);
	hex(md, sizeof(md), h);
	assert_string_equal(h, want_big_sha);
	free(b.p);
	free(big);
}

static void
test_keywrap_vector(void **state)
{
	/* RFC 3394 4.6: 256 bits of key data with a 256-bit KEK. */
	static const char want[] =
	    "28c9f404c4b810f4cbccb35cfb87f8263f5786e2d80ed326cbc7f0e71a99f43b"
	    "fb988b9b7a02dd21";
	static const uint8_t data[SEAL_KEY_LEN] = {
		0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
		0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
		0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
		0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f };
	uint8_t		 w[SEAL_KEY_WRAPPED_LEN], back[SEAL_KEY_LEN];
	uint8_t		 other[SEAL_KEY_LEN];
	struct errmsg	 e;
	char		 h[2 * SEAL_KEY_WRAPPED_LEN + 1];
	size_t		 i;

	(void)state;
	assert_int_equal(seal_key_wrap(key, data, w, &e), 0);
	hex(w, sizeof(w), h);
	assert_string_equal(h, want);
	assert_int_equal(seal_key_unwrap(key, w, back, &e), 0);
	assert_memory_equal(back, data, SEAL_KEY_LEN);

	/* Another content key, or any flipped byte: refused. */
	memcpy(other, key, sizeof(other));
	other[31] ^= 1;
	assert_int_equal(seal_key_unwrap(other, w, back, &e), ERR_KEY_INVALID);
	for (i = 0; i < SEAL_KEY_WRAPPED_LEN; i++) {
		w[i] ^= 0x40;
		assert_int_equal(seal_key_unwrap(key, w, back, &e),
		    ERR_KEY_INVALID);
		w[i] ^= 0x40;
	}
	/* Fresh data keys differ. */
	assert_int_equal(seal_key_generate(back, &e), 0);
	assert_int_equal(seal_key_generate(other, &e), 0);
	assert_memory_not_equal(back, other, SEAL_KEY_LEN);
}

static void
test_roundtrip_sizes(void **state)
{
	static const size_t sizes[] = { 0, 1, 15, 16, 17, 65535, 65536,
	    65537, 131071, 131072, 131073, 300001 };
	static const size_t chunks[] = { 0, 1, 7, 4096, 65536, 65553 };
	struct sbuf	 b, pt;
	uint8_t		*p;
	size_t		 i, j;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		p = pattern(sizes[i]);
		for (j = 0; j < sizeof(chunks) / sizeof(chunks[0]); j++) {
			if (chunks[j] == 1 && sizes[i] > 70000)
				continue;	/* slow, and says nothing new */
			seal_buf("h", 1ULL << 40, 0, p, sizes[i], chunks[j], &b);
			assert_int_equal(b.n, seal_sealed_size(sizes[i], 1));
			assert_int_equal(open_buf("h", 1ULL << 40, key, b.p,
			    b.n, chunks[(j + 1) % 6], &pt), 0);
			assert_int_equal(pt.n, sizes[i]);
			if (sizes[i] > 0)
				assert_memory_equal(pt.p, p, sizes[i]);
			free(b.p);
			free(pt.p);
		}
		free(p);
	}
}

/* The sealed offsets: header length, segment k starts at hl + k * SEG. */
#define SEG	(SEAL_SEGMENT + SEAL_TAG_LEN)

static void
test_every_flip(void **state)
{
	size_t		 n = SEAL_SEGMENT + 100, hl = SEAL_HEADER_FIXED + 6, i;
	struct sbuf	 b, pt;
	uint8_t		*p = pattern(n);
	int		 r;

	(void)state;
	seal_buf("home-1", 7, 0, p, n, 0, &b);
	assert_int_equal(b.n, hl + SEG + 100 + SEAL_TAG_LEN);
	for (i = 0; i < b.n; i++) {
		b.p[i] ^= 0x01;
		r = open_buf("home-1", 7, key, b.p, b.n, 0, &pt);
		b.p[i] ^= 0x01;
		if (i < 4 || (i >= 5 && i < 8))
			assert_true(r == ERR_SEAL_FORMAT ||
			    r == ERR_SEAL_WRONG_OBJECT);
		else if (i == 4)
			assert_int_equal(r, ERR_SEAL_VERSION);
		else if ((i >= 8 && i < 16) || i >= SEAL_HEADER_FIXED + 0U)
			assert_true(r == (i < hl ? ERR_SEAL_WRONG_OBJECT :
			    ERR_SEAL_AUTH));
		else
			assert_int_equal(r, ERR_SEAL_AUTH);	/* salt, prefix */
		/* Nothing of a refused segment came out. */
		assert_true(pt.n <= (i < hl + SEG ? 0 : SEAL_SEGMENT));
		if (pt.n > 0)
			assert_memory_equal(pt.p, p, pt.n);
		free(pt.p);
	}
	free(b.p);
	free(p);
}

static void
test_truncation(void **state)
{
	size_t		 n = 3 * SEAL_SEGMENT + 10, hl = SEAL_HEADER_FIXED + 6;
	size_t		 i, cut;
	struct sbuf	 b, pt;
	uint8_t		*p = pattern(n);

	(void)state;
	seal_buf("home-1", 7, 0, p, n, 0, &b);
	/* Every segment boundary, and the header's end. */
	for (i = 0; i <= 3; i++) {
		cut = hl + i * SEG;
		assert_int_equal(open_buf("home-1", 7, key, b.p, cut, 0, &pt),
		    ERR_SEAL_TRUNCATED);
		assert_true(pt.n <= (i > 0 ? (i - 1) * SEAL_SEGMENT : 0));
		free(pt.p);
	}
	/* Every byte inside the header. */
	for (cut = 0; cut < hl; cut++) {
		assert_int_equal(open_buf("home-1", 7, key, b.p, cut, 0, &pt),
		    ERR_SEAL_TRUNCATED);
		free(pt.p);
	}
	/* Inside a segment or its tag: refused too. */
	for (cut = hl + SEG + 1; cut < b.n; cut += 9973) {
		assert_true(open_buf("home-1", 7, key, b.p, cut, 0, &pt) < 0);
		free(pt.p);
	}
	for (cut = b.n - SEAL_TAG_LEN; cut < b.n; cut++) {
		assert_true(open_buf("home-1", 7, key, b.p, cut, 0, &pt) < 0);
		free(pt.p);
	}
	/* Bytes appended after the final segment. */
	sbuf_sink(&b, "x", 1);
	assert_int_equal(open_buf("home-1", 7, key, b.p, b.n, 0, &pt),
	    ERR_SEAL_AUTH);
	free(pt.p);
	free(b.p);
	free(p);
}

static void
test_splices(void **state)
{
	size_t		 n = 3 * SEAL_SEGMENT, hl = SEAL_HEADER_FIXED + 6;
	struct sbuf	 a, b, pt;
	uint8_t		*p = pattern(n), *tmp, wrong[SEAL_KEY_LEN];

	(void)state;
	/* Swapped segments 0 and 1. */
	seal_buf("home-1", 7, 1, p, n, 0, &a);
	tmp = malloc(SEG);
	memcpy(tmp, a.p + hl, SEG);
	memmove(a.p + hl, a.p + hl + SEG, SEG);
	memcpy(a.p + hl + SEG, tmp, SEG);
	assert_int_equal(open_buf("home-1", 7, key, a.p, a.n, 0, &pt),
	    ERR_SEAL_AUTH);
	assert_int_equal(pt.n, 0);
	free(pt.p);
	free(a.p);

	/*
	 * A segment of revision 8 in revision 7, even with the same salt and
	 * prefix (which real archives never share).
	 */
	seal_buf("home-1", 7, 1, p, n, 0, &a);
	seal_buf("home-1", 8, 1, p, n, 0, &b);
	memcpy(a.p + hl + SEG, b.p + hl + SEG, SEG);
	assert_int_equal(open_buf("home-1", 7, key, a.p, a.n, 0, &pt),
	    ERR_SEAL_AUTH);
	assert_int_equal(pt.n, SEAL_SEGMENT);	/* segment 0 was fine */
	free(pt.p);
	/* Revision 8 whole, where 7 is expected. */
	assert_int_equal(open_buf("home-1", 7, key, b.p, b.n, 0, &pt),
	    ERR_SEAL_WRONG_OBJECT);
	assert_int_equal(pt.n, 0);
	free(pt.p);
	/* Revision 8's header over revision 7's segments. */
	memcpy(b.p + hl, a.p + hl, a.n - hl);
	assert_int_equal(open_buf("home-1", 8, key, b.p, b.n, 0, &pt),
	    ERR_SEAL_AUTH);
	free(pt.p);
	free(a.p);
	free(b.p);

	/* Another home's archive, its header renamed to this one. */
	seal_buf("home-2", 7, 1, p, n, 0, &a);
	memcpy(a.p + SEAL_HEADER_FIXED, "home-1", 6);
	assert_int_equal(open_buf("home-1", 7, key, a.p, a.n, 0, &pt),
	    ERR_SEAL_AUTH);
	assert_int_equal(pt.n, 0);
	free(pt.p);
	free(a.p);

	/* The right archive under another data key. */
	seal_buf("home-1", 7, 0, p, n, 0, &a);
	memcpy(wrong, key, sizeof(wrong));
	wrong[0] ^= 0x80;
	assert_int_equal(open_buf("home-1", 7, wrong, a.p, a.n, 0, &pt),
	    ERR_SEAL_AUTH);
	free(pt.p);
	/* Two seals of the same data never look alike (fresh salt). */
	seal_buf("home-1", 7, 0, p, n, 0, &b);
	assert_int_equal(a.n, b.n);
	assert_memory_not_equal(a.p + hl, b.p + hl, 64);
	free(a.p);
	free(b.p);
	free(tmp);
	free(p);
}

static void
test_bad_input(void **state)
{
	struct seal	*s;
	struct seal_open *o;
	struct sbuf	 b, pt;
	struct errmsg	 e;
	char		 longid[SEAL_ID_MAX + 2];

	(void)state;
	memset(&b, 0, sizeof(b));
	memset(longid, 'a', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	assert_int_equal(seal_new(&s, key, longid, 1, sbuf_sink, &b, &e),
	    ERR_BAD_REQUEST);
	assert_null(s);
	assert_int_equal(seal_new(&s, key, "", 1, sbuf_sink, &b, &e),
	    ERR_BAD_REQUEST);
	assert_int_equal(seal_new(&s, key, "a b", 1, sbuf_sink, &b, &e),
	    ERR_BAD_REQUEST);
	assert_int_equal(seal_open_new(&o, key, "a\n", 1, sbuf_sink, &b, &e),
	    ERR_BAD_REQUEST);
	/* A longest id round-trips. */
	longid[SEAL_ID_MAX] = '\0';
	seal_buf(longid, 0, 0, (const uint8_t *)"x", 1, 0, &b);
	assert_int_equal(open_buf(longid, 0, key, b.p, b.n, 0, &pt), 0);
	free(pt.p);
	/* Not a sealed archive at all. */
	assert_int_equal(open_buf(longid, 0, key, (const uint8_t *)
	    "ustar\0\0\0\0\0", 10, 0, &pt), ERR_SEAL_FORMAT);
	free(pt.p);
	free(b.p);
}

static void
write_file(const char *path, const char *s, mode_t mode)
{
	int	 fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

static void
test_key_file(void **state)
{
	char		 path[128], path2[128];
	uint8_t		 k1[SEAL_KEY_LEN], k2[SEAL_KEY_LEN];
	struct stat	 st;
	struct errmsg	 e;
	int		 created;

	(void)state;
	snprintf(path, sizeof(path), "%s/content.key", unit_tmpdir);
	assert_int_equal(seal_key_load(path, k1, &created, &e), 0);
	assert_int_equal(created, 1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_size, 65);
	assert_int_equal(seal_key_load(path, k2, &created, &e), 0);
	assert_int_equal(created, 0);
	assert_memory_equal(k1, k2, SEAL_KEY_LEN);

	/* An operator's key, upper case and without a newline. */
	snprintf(path2, sizeof(path2), "%s/op.key", unit_tmpdir);
	write_file(path2, "000102030405060708090A0B0C0D0E0F"
	    "101112131415161718191a1b1c1d1e1f", 0600);
	assert_int_equal(seal_key_load(path2, k2, &created, &e), 0);
	assert_memory_equal(k2, key, SEAL_KEY_LEN);
	/* Readable by the group: refused, and the message says why. */
	assert_int_equal(chmod(path2, 0640), 0);
	assert_int_equal(seal_key_load(path2, k2, &created, &e),
	    ERR_PERMISSION);
	assert_non_null(strstr(errmsg_str(&e), "chmod 600"));
	/* Wrong contents. */
	write_file(path2, "00010203\n", 0600);
	assert_int_equal(seal_key_load(path2, k2, &created, &e),
	    ERR_KEY_INVALID);
	write_file(path2, "zz0102030405060708090a0b0c0d0e0f"
	    "101112131415161718191a1b1c1d1e1f\n", 0600);
	assert_int_equal(seal_key_load(path2, k2, &created, &e),
	    ERR_KEY_INVALID);
	write_file(path2, "000102030405060708090a0b0c0d0e0f"
	    "101112131415161718191a1b1c1d1e1f\n\n", 0600);
	assert_int_equal(seal_key_load(path2, k2, &created, &e),
	    ERR_KEY_INVALID);
	/* A directory is not a key file; a missing parent is an error. */
	assert_int_equal(seal_key_load(unit_tmpdir, k2, &created, &e),
	    ERR_KEY_INVALID);
	snprintf(path2, sizeof(path2), "%s/no/such.key", unit_tmpdir);
	assert_int_equal(seal_key_load(path2, k2, &created, &e),
	    ERR_NOT_FOUND);
	assert_int_equal(created, 0);
}

static int
setup(void **state)
{
	(void)state;
	fixed_init();
	return unit_tmpdir_new("test_seal");
}

static int
teardown(void **state)
{
	(void)state;
	return unit_tmpdir_remove();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_vectors),
		cmocka_unit_test(test_keywrap_vector),
		cmocka_unit_test(test_roundtrip_sizes),
		cmocka_unit_test(test_every_flip),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_splices),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test_setup_teardown(test_key_file, setup, teardown),
	};

	fixed_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}

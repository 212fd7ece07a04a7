/* SPDX-License-Identifier: MIT */
/*
 * Sealed archives (seal.h, rakazo-home(5)): the segment format, after the
 * STREAM construction (Hoang, Reyhanitabar, Rogaway, Vizár 2015) as Tink's
 * AES-GCM-HKDF streaming AEAD uses it.
 *
 * Why a key per archive: the data key lives as long as its home, and one
 * home is sealed again at every checkpoint, perhaps twice under the same
 * revision (an upload that failed and is retried).  Nonces counted from
 * (revision, index) would then repeat under one GCM key, which gives the
 * keystream and the authentication key away.  So each archive draws a
 * 256-bit salt and a 56-bit nonce prefix, and its segments are sealed
 * under HKDF-SHA256(data key, salt, header): a fresh key per archive, and
 * within it a nonce that is prefix || segment index || final flag, never
 * the same twice.
 *
 * Why the header is every segment's associated data and the final flag is
 * in the nonce: a segment authenticates only at its own index, only in
 * its own archive (the header holds storage id, revision and salt), and
 * only as final if it was sealed as the last one, so reordering, splicing
 * and truncation at a boundary all fail the tag.  The opener checks the
 * header's storage id and revision against the ones it was told to
 * expect first, so an object of another home reads as SEAL_WRONG_OBJECT
 * rather than as tampering.
 *
 * Plaintext never leaves the opener before its segment authenticated.
 * Both sides hold one segment and one lookahead rule: a full segment is
 * only known not to be the last when a byte after it arrived.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

#include "err.h"
#include "seal.h"
#include "xmalloc.h"

#define SEAL_MAGIC		"RKZH"
#define SEAL_ALG_GCM_HKDF	1
#define SEAL_SEGMENT_SHIFT	16
#define SEAL_NONCE_LEN		12
#define SEAL_SEALED_SEG		(SEAL_SEGMENT + SEAL_TAG_LEN)
#define SEAL_MAX_SEGMENTS	0xffffffffULL
#define SEAL_INFO		"rakazo-home seal v1"

struct seal {
	EVP_CIPHER_CTX	*ctx;
	uint8_t		 hdr[SEAL_HEADER_MAX];
	size_t		 hdrlen;
	uint8_t		 prefix[SEAL_PREFIX_LEN];
	uint64_t	 index;		/* of the next segment */
	uint8_t		*plain;		/* SEAL_SEGMENT */
	size_t		 have;
	uint8_t		*out;		/* SEAL_SEALED_SEG */
	int		 done;		/* finished or failed */
	seal_sink	 sink;
	void		*arg;
};

struct seal_open {
	EVP_CIPHER_CTX	*ctx;
	uint8_t		 key[SEAL_KEY_LEN];	/* until the header came */
	char		 want_id[SEAL_ID_MAX + 1];
	uint64_t	 want_rev;
	uint8_t		 hdr[SEAL_HEADER_MAX];
	size_t		 hdrhave, hdrlen;	/* hdrlen 0 until known */
	int		 keyed;
	uint8_t		 prefix[SEAL_PREFIX_LEN];
	uint64_t	 index;
	uint8_t		*in;			/* SEAL_SEALED_SEG */
	size_t		 have;
	uint8_t		*plain;			/* SEAL_SEGMENT */
	int		 failed;		/* ERR_* once refused */
	seal_sink	 sink;
	void		*arg;
};

static void
seal_be64(uint8_t *p, uint64_t v)
{
	int	 i;

	for (i = 7; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

static uint64_t
seal_get_be64(const uint8_t *p)
{
	uint64_t v = 0;
	int	 i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static int
seal_id_valid(const char *id)
{
	size_t	 i, n;

	if (id == NULL || (n = strlen(id)) == 0 || n > SEAL_ID_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)id[i] <= ' ' || (unsigned char)id[i] >= 0x7f)
			return 0;
	return 1;
}

uint64_t
seal_sealed_size(uint64_t n, size_t idlen)
{
	uint64_t segs = n == 0 ? 1 : (n + SEAL_SEGMENT - 1) / SEAL_SEGMENT;

	return SEAL_HEADER_FIXED + idlen + n + segs * SEAL_TAG_LEN;
}

/* The archive's segment key: HKDF-SHA256(data key, salt, info || hdr). */
static int
seal_derive(const uint8_t key[SEAL_KEY_LEN], const uint8_t *hdr,
    size_t hdrlen, uint8_t out[SEAL_KEY_LEN])
{
	EVP_KDF		*kdf;
	EVP_KDF_CTX	*kctx = NULL;
	OSSL_PARAM	 params[5], *p = params;
	uint8_t		 info[sizeof(SEAL_INFO) - 1 + SEAL_HEADER_MAX];
	int		 r = ERR_INTERNAL;

	memcpy(info, SEAL_INFO, sizeof(SEAL_INFO) - 1);
	memcpy(info + sizeof(SEAL_INFO) - 1, hdr, hdrlen);
	if ((kdf = EVP_KDF_fetch(NULL, "HKDF", NULL)) == NULL)
		goto out;
	if ((kctx = EVP_KDF_CTX_new(kdf)) == NULL)
		goto out;
	*p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST,
	    (char *)"SHA256", 0);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
	    (void *)key, SEAL_KEY_LEN);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT,
	    (void *)(hdr + 16), SEAL_SALT_LEN);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info,
	    sizeof(SEAL_INFO) - 1 + hdrlen);
	*p = OSSL_PARAM_construct_end();
	if (EVP_KDF_derive(kctx, out, SEAL_KEY_LEN, params) != 1)
		goto out;
	r = 0;
out:
	EVP_KDF_CTX_free(kctx);
	EVP_KDF_free(kdf);
	explicit_bzero(info, sizeof(info));
	return r;
}

static void
seal_nonce(uint8_t nonce[SEAL_NONCE_LEN], const uint8_t *prefix,
    uint64_t index, int final)
{
	memcpy(nonce, prefix, SEAL_PREFIX_LEN);
	nonce[7] = (uint8_t)(index >> 24);
	nonce[8] = (uint8_t)(index >> 16);
	nonce[9] = (uint8_t)(index >> 8);
	nonce[10] = (uint8_t)index;
	nonce[11] = final ? 1 : 0;
}

/* A GCM context keyed with the archive's segment key. */
static EVP_CIPHER_CTX *
seal_ctx(const uint8_t key[SEAL_KEY_LEN], const uint8_t *hdr, size_t hdrlen,
    int enc)
{
	EVP_CIPHER_CTX	*ctx;
	uint8_t		 sub[SEAL_KEY_LEN];

	if (seal_derive(key, hdr, hdrlen, sub) != 0)
		return NULL;
	if ((ctx = EVP_CIPHER_CTX_new()) == NULL ||
	    EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, sub, NULL,
	    enc) != 1) {
		EVP_CIPHER_CTX_free(ctx);
		ctx = NULL;
	}
	explicit_bzero(sub, sizeof(sub));
	return ctx;
}

/* ---- sealing ----------------------------------------------------------- */

static int
seal_segment(struct seal *s, int final, struct errmsg *e)
{
	uint8_t	 nonce[SEAL_NONCE_LEN];
	int	 n, m;

	if (s->index > SEAL_MAX_SEGMENTS)
		return errmsg_set(e, ERR_TOO_LARGE, "the archive is too large "
		    "to seal (more than 2^32 segments)");
	seal_nonce(nonce, s->prefix, s->index, final);
	if (EVP_EncryptInit_ex(s->ctx, NULL, NULL, NULL, nonce) != 1 ||
	    EVP_EncryptUpdate(s->ctx, NULL, &n, s->hdr, (int)s->hdrlen) != 1 ||
	    EVP_EncryptUpdate(s->ctx, s->out, &n, s->plain, (int)s->have) !=
	    1 || EVP_EncryptFinal_ex(s->ctx, s->out + n, &m) != 1 ||
	    EVP_CIPHER_CTX_ctrl(s->ctx, EVP_CTRL_GCM_GET_TAG, SEAL_TAG_LEN,
	    s->out + n + m) != 1)
		return errmsg_set(e, ERR_INTERNAL, "AES-GCM sealing failed");
	s->index++;
	n = (int)s->have;
	s->have = 0;
	return s->sink(s->arg, s->out, (size_t)n + SEAL_TAG_LEN);
}

int
seal_new_fixed(struct seal **out, const uint8_t key[SEAL_KEY_LEN],
    const char *storage_id, uint64_t revision,
    const uint8_t salt[SEAL_SALT_LEN], const uint8_t prefix[SEAL_PREFIX_LEN],
    seal_sink sink, void *arg, struct errmsg *e)
{
	struct seal	*s;
	size_t		 idlen;
	int		 r;

	*out = NULL;
	if (!seal_id_valid(storage_id))
		return errmsg_set(e, ERR_BAD_REQUEST, "a storage id is 1 to %d "
		    "printable bytes", SEAL_ID_MAX);
	idlen = strlen(storage_id);
	s = xcalloc(1, sizeof(*s));
	memcpy(s->hdr, SEAL_MAGIC, 4);
	s->hdr[4] = SEAL_VERSION;
	s->hdr[5] = SEAL_ALG_GCM_HKDF;
	s->hdr[6] = SEAL_SEGMENT_SHIFT;
	s->hdr[7] = (uint8_t)idlen;
	seal_be64(s->hdr + 8, revision);
	memcpy(s->hdr + 16, salt, SEAL_SALT_LEN);
	memcpy(s->hdr + 48, prefix, SEAL_PREFIX_LEN);
	memcpy(s->hdr + SEAL_HEADER_FIXED, storage_id, idlen);
	s->hdrlen = SEAL_HEADER_FIXED + idlen;
	memcpy(s->prefix, prefix, SEAL_PREFIX_LEN);
	s->sink = sink;
	s->arg = arg;
	if ((s->ctx = seal_ctx(key, s->hdr, s->hdrlen, 1)) == NULL) {
		seal_free(s);
		return errmsg_set(e, ERR_INTERNAL, "cannot set up AES-GCM");
	}
	s->plain = xmalloc(SEAL_SEGMENT);
	s->out = xmalloc(SEAL_SEALED_SEG);
	if ((r = sink(arg, s->hdr, s->hdrlen)) != 0) {
		seal_free(s);
		return r;
	}
	*out = s;
	return 0;
}

int
seal_new(struct seal **out, const uint8_t key[SEAL_KEY_LEN],
    const char *storage_id, uint64_t revision, seal_sink sink, void *arg,
    struct errmsg *e)
{
	uint8_t	 rnd[SEAL_SALT_LEN + SEAL_PREFIX_LEN];
	int	 r;

	*out = NULL;
	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		return errmsg_set(e, ERR_INTERNAL, "no random bytes");
	r = seal_new_fixed(out, key, storage_id, revision, rnd,
	    rnd + SEAL_SALT_LEN, sink, arg, e);
	explicit_bzero(rnd, sizeof(rnd));
	return r;
}

int
seal_write(struct seal *s, const void *p, size_t n, struct errmsg *e)
{
	const uint8_t	*b = p;
	size_t		 k;
	int		 r;

	if (s->done)
		return errmsg_set(e, ERR_INTERNAL, "the sealer is finished");
	while (n > 0) {
		/* A full segment is sealed only once a byte follows it. */
		if (s->have == SEAL_SEGMENT &&
		    (r = seal_segment(s, 0, e)) != 0) {
			s->done = 1;
			return r;
		}
		k = SEAL_SEGMENT - s->have;
		if (k > n)
			k = n;
		memcpy(s->plain + s->have, b, k);
		s->have += k;
		b += k;
		n -= k;
	}
	return 0;
}

int
seal_finish(struct seal *s, struct errmsg *e)
{
	if (s->done)
		return errmsg_set(e, ERR_INTERNAL, "the sealer is finished");
	s->done = 1;
	return seal_segment(s, 1, e);
}

void
seal_free(struct seal *s)
{
	if (s == NULL)
		return;
	EVP_CIPHER_CTX_free(s->ctx);	/* clears the key schedule */
	if (s->plain != NULL)
		explicit_bzero(s->plain, SEAL_SEGMENT);
	free(s->plain);
	free(s->out);
	explicit_bzero(s, sizeof(*s));
	free(s);
}

/* ---- opening ----------------------------------------------------------- */

int
seal_open_new(struct seal_open **out, const uint8_t key[SEAL_KEY_LEN],
    const char *storage_id, uint64_t revision, seal_sink sink, void *arg,
    struct errmsg *e)
{
	struct seal_open *o;

	*out = NULL;
	if (!seal_id_valid(storage_id))
		return errmsg_set(e, ERR_BAD_REQUEST, "a storage id is 1 to %d "
		    "printable bytes", SEAL_ID_MAX);
	o = xcalloc(1, sizeof(*o));
	memcpy(o->key, key, SEAL_KEY_LEN);
	snprintf(o->want_id, sizeof(o->want_id), "%s", storage_id);
	o->want_rev = revision;
	o->sink = sink;
	o->arg = arg;
	o->in = xmalloc(SEAL_SEALED_SEG);
	o->plain = xmalloc(SEAL_SEGMENT);
	*out = o;
	return 0;
}

static int
seal_open_fail(struct seal_open *o, struct errmsg *e, int code,
    const char *what)
{
	o->failed = code;
	return errmsg_set(e, code, "%s", what);
}

/* The header is whole: check it against what was expected, key up. */
static int
seal_open_header(struct seal_open *o, struct errmsg *e)
{
	const uint8_t	*h = o->hdr;
	size_t		 idlen = h[7];
	char		 rev[24];

	if (idlen != strlen(o->want_id) ||
	    memcmp(h + SEAL_HEADER_FIXED, o->want_id, idlen) != 0 ||
	    seal_get_be64(h + 8) != o->want_rev) {
		o->failed = ERR_SEAL_WRONG_OBJECT;
		snprintf(rev, sizeof(rev), "%llu",
		    (unsigned long long)seal_get_be64(h + 8));
		return errmsg_set(e, ERR_SEAL_WRONG_OBJECT, "the sealed "
		    "archive is revision %s of another object, not revision "
		    "%llu of %s", rev, (unsigned long long)o->want_rev,
		    o->want_id);
	}
	memcpy(o->prefix, h + 48, SEAL_PREFIX_LEN);
	o->ctx = seal_ctx(o->key, h, o->hdrlen, 0);
	explicit_bzero(o->key, sizeof(o->key));
	if (o->ctx == NULL)
		return seal_open_fail(o, e, ERR_INTERNAL,
		    "cannot set up AES-GCM");
	o->keyed = 1;
	return 0;
}

/* Take header bytes from *p; 0 while fine (maybe still incomplete). */
static int
seal_open_take_header(struct seal_open *o, const uint8_t **p, size_t *n,
    struct errmsg *e)
{
	size_t	 want, k;

	while (*n > 0 && !o->keyed) {
		want = o->hdrlen != 0 ? o->hdrlen : 8;
		k = want - o->hdrhave;
		if (k > *n)
			k = *n;
		memcpy(o->hdr + o->hdrhave, *p, k);
		o->hdrhave += k;
		*p += k;
		*n -= k;
		if (o->hdrhave < want)
			return 0;
		if (o->hdrlen != 0)
			return seal_open_header(o, e);
		/* The first 8 bytes say how long the header is. */
		if (memcmp(o->hdr, SEAL_MAGIC, 4) != 0)
			return seal_open_fail(o, e, ERR_SEAL_FORMAT,
			    "not a sealed archive (bad magic)");
		if (o->hdr[4] != SEAL_VERSION)
			return seal_open_fail(o, e, ERR_SEAL_VERSION,
			    "the sealed archive's format version is not 1");
		if (o->hdr[5] != SEAL_ALG_GCM_HKDF ||
		    o->hdr[6] != SEAL_SEGMENT_SHIFT || o->hdr[7] == 0 ||
		    o->hdr[7] > SEAL_ID_MAX)
			return seal_open_fail(o, e, ERR_SEAL_FORMAT,
			    "the sealed archive's header is malformed");
		o->hdrlen = SEAL_HEADER_FIXED + o->hdr[7];
	}
	return 0;
}

/* Authenticate the buffered segment as final or not; plaintext length. */
static int
seal_open_try(struct seal_open *o, int final, int *plen)
{
	uint8_t	 nonce[SEAL_NONCE_LEN];
	int	 n, m, len = (int)(o->have - SEAL_TAG_LEN);

	seal_nonce(nonce, o->prefix, o->index, final);
	if (EVP_DecryptInit_ex(o->ctx, NULL, NULL, NULL, nonce) != 1 ||
	    EVP_DecryptUpdate(o->ctx, NULL, &n, o->hdr, (int)o->hdrlen) != 1 ||
	    EVP_DecryptUpdate(o->ctx, o->plain, &n, o->in, len) != 1 ||
	    EVP_CIPHER_CTX_ctrl(o->ctx, EVP_CTRL_GCM_SET_TAG, SEAL_TAG_LEN,
	    o->in + len) != 1 ||
	    EVP_DecryptFinal_ex(o->ctx, o->plain + n, &m) != 1) {
		explicit_bzero(o->plain, (size_t)len);
		return ERR_SEAL_AUTH;
	}
	*plen = n + m;
	return 0;
}

static int
seal_open_segment(struct seal_open *o, int final, struct errmsg *e)
{
	char	 what[96];
	int	 len, r;

	if (o->index > SEAL_MAX_SEGMENTS)
		return seal_open_fail(o, e, ERR_SEAL_AUTH,
		    "the sealed archive has more than 2^32 segments");
	if (seal_open_try(o, final, &len) != 0) {
		/*
		 * A last segment that opens as a non-final one: the stream
		 * was cut at a segment boundary.
		 */
		if (final && seal_open_try(o, 0, &len) == 0) {
			explicit_bzero(o->plain, (size_t)len);
			return seal_open_fail(o, e, ERR_SEAL_TRUNCATED,
			    "the sealed archive was cut after a segment");
		}
		snprintf(what, sizeof(what), "segment %llu of the sealed "
		    "archive failed authentication",
		    (unsigned long long)o->index);
		return seal_open_fail(o, e, ERR_SEAL_AUTH, what);
	}
	o->index++;
	o->have = 0;
	if (len == 0)
		return 0;	/* the empty final segment of an empty archive */
	r = o->sink(o->arg, o->plain, (size_t)len);
	explicit_bzero(o->plain, (size_t)len);
	if (r != 0)
		o->failed = r;
	return r;
}

int
seal_open_write(struct seal_open *o, const void *p, size_t n,
    struct errmsg *e)
{
	const uint8_t	*b = p;
	size_t		 k;
	int		 r;

	if (o->failed != 0)
		return errmsg_set(e, o->failed, "the opener already refused "
		    "this archive");
	if ((r = seal_open_take_header(o, &b, &n, e)) != 0)
		return r;
	while (n > 0) {
		if (o->have == SEAL_SEALED_SEG &&
		    (r = seal_open_segment(o, 0, e)) != 0)
			return r;
		k = SEAL_SEALED_SEG - o->have;
		if (k > n)
			k = n;
		memcpy(o->in + o->have, b, k);
		o->have += k;
		b += k;
		n -= k;
	}
	return 0;
}

int
seal_open_finish(struct seal_open *o, struct errmsg *e)
{
	int	 r;

	if (o->failed != 0)
		return errmsg_set(e, o->failed, "the opener already refused "
		    "this archive");
	if (!o->keyed || o->have < SEAL_TAG_LEN)
		return seal_open_fail(o, e, ERR_SEAL_TRUNCATED,
		    !o->keyed ? "the sealed archive ends inside its header" :
		    "the sealed archive ends before its final segment");
	if ((r = seal_open_segment(o, 1, e)) != 0)
		return r;
	o->failed = ERR_INTERNAL;	/* nothing more may come */
	return 0;
}

void
seal_open_free(struct seal_open *o)
{
	if (o == NULL)
		return;
	EVP_CIPHER_CTX_free(o->ctx);
	if (o->plain != NULL)
		explicit_bzero(o->plain, SEAL_SEGMENT);
	free(o->plain);
	free(o->in);
	explicit_bzero(o, sizeof(*o));
	free(o);
}

/* SPDX-License-Identifier: MIT */
/*
 * The sealed archive format of the object home store (rakazo-home(5)):
 * a home's checkpoint archive cut into 64 KiB segments, each sealed with
 * AES-256-GCM under a key derived from the home's data key, so a bucket
 * that holds it learns nothing and can change nothing undetected.
 *
 * Both directions stream and hold one segment: the sealer takes
 * plaintext in pieces of any size and hands sealed bytes to a sink as
 * each segment is made; the opener takes sealed bytes in pieces of any
 * size and hands a segment's plaintext to its sink only after that
 * segment authenticated.  The opener's plaintext is still provisional
 * until seal_open_finish() returned 0: only then is it known that the
 * stream was not cut after a segment boundary.  Restore into a scratch
 * place and keep it only then.
 *
 * What each segment binds (the why is in seal.c): the storage id and the
 * revision (in the header, which is every segment's associated data and
 * part of the key derivation), the segment index and the final flag (in
 * the nonce).  So a flipped byte, a truncation, reordered segments and
 * segments spliced from another revision or home are all refused, each
 * with its own stable code (ERR_SEAL_*).
 *
 * Sinks run in the caller's context (a task may wait in one); a sink's
 * nonzero return stops the stream and is returned as it is.
 */
#ifndef CONTROLLER_SEAL_H
#define CONTROLLER_SEAL_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define SEAL_KEY_LEN		32		/* AES-256 */
#define SEAL_SEGMENT		65536		/* plaintext per segment */
#define SEAL_TAG_LEN		16
#define SEAL_SALT_LEN		32
#define SEAL_PREFIX_LEN		7
#define SEAL_ID_MAX		64		/* storage id bytes */
#define SEAL_HEADER_FIXED	55
#define SEAL_HEADER_MAX		(SEAL_HEADER_FIXED + SEAL_ID_MAX)
#define SEAL_VERSION		1

typedef int	(*seal_sink)(void *arg, const void *p, size_t n);

struct seal;		/* a sealer */
struct seal_open;	/* an opener */

/*
 * A sealer for one archive: key is the home's data key, storage_id
 * (1..SEAL_ID_MAX printable bytes) and revision name the object.  The
 * header goes to sink at once.  0 or ERR_BAD_REQUEST / ERR_INTERNAL.
 */
int	seal_new(struct seal **out, const uint8_t key[SEAL_KEY_LEN],
	    const char *storage_id, uint64_t revision, seal_sink sink,
	    void *arg, struct errmsg *e);
/*
 * For known-answer tests only: the salt and nonce prefix that seal_new
 * draws at random.  Never reuse them for real data.
 */
int	seal_new_fixed(struct seal **out, const uint8_t key[SEAL_KEY_LEN],
	    const char *storage_id, uint64_t revision,
	    const uint8_t salt[SEAL_SALT_LEN],
	    const uint8_t prefix[SEAL_PREFIX_LEN], seal_sink sink, void *arg,
	    struct errmsg *e);
/* Seal n more bytes of plaintext. */
int	seal_write(struct seal *s, const void *p, size_t n, struct errmsg *e);
/* Seal what is left as the final segment (possibly empty). */
int	seal_finish(struct seal *s, struct errmsg *e);
/* Forget the keys; NULL is a no-op. */
void	seal_free(struct seal *s);

/* Sealed size of n plaintext bytes for a storage id of idlen bytes. */
uint64_t seal_sealed_size(uint64_t n, size_t idlen);

/*
 * An opener expecting the object storage_id/revision: a header naming
 * another is ERR_SEAL_WRONG_OBJECT before any segment is tried.
 */
int	seal_open_new(struct seal_open **out, const uint8_t key[SEAL_KEY_LEN],
	    const char *storage_id, uint64_t revision, seal_sink sink,
	    void *arg, struct errmsg *e);
/*
 * n more sealed bytes.  ERR_SEAL_FORMAT / ERR_SEAL_VERSION (header),
 * ERR_SEAL_WRONG_OBJECT, ERR_SEAL_AUTH (a segment did not authenticate),
 * or the sink's code.  After an error the opener refuses everything.
 */
int	seal_open_write(struct seal_open *o, const void *p, size_t n,
	    struct errmsg *e);
/*
 * The sealed stream ended: authenticate the final segment.
 * ERR_SEAL_TRUNCATED when it ended on a segment boundary without one (or
 * inside the header or a tag), ERR_SEAL_AUTH when the last segment is
 * not a valid final one.  0 means the whole archive is authentic.
 */
int	seal_open_finish(struct seal_open *o, struct errmsg *e);
void	seal_open_free(struct seal_open *o);

#endif

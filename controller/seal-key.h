/* SPDX-License-Identifier: MIT */
/*
 * Keys of the object home store (rakazo-home(5)): the space's content
 * key, read from a key file the operator provides (or made on first
 * start), and the per-home data keys it wraps.  A wrapped data key is
 * what the computer's row stores; deleting it makes the home's objects
 * unreadable at once, whatever the bucket still holds.
 *
 * Wrapping is AES-256 key wrap (RFC 3394) through OpenSSL EVP: its
 * integrity check refuses a wrapped key altered, or one made under
 * another content key, with ERR_KEY_INVALID.
 */
#ifndef CONTROLLER_SEAL_KEY_H
#define CONTROLLER_SEAL_KEY_H

#include <stdint.h>

#include "err.h"
#include "seal.h"

#define SEAL_KEY_WRAPPED_LEN	40	/* RFC 3394 of 32 bytes */

/* A fresh random data key.  0 or ERR_INTERNAL. */
int	seal_key_generate(uint8_t key[SEAL_KEY_LEN], struct errmsg *e);
/* out = AES-KW(content, data). */
int	seal_key_wrap(const uint8_t content[SEAL_KEY_LEN],
	    const uint8_t data[SEAL_KEY_LEN],
	    uint8_t out[SEAL_KEY_WRAPPED_LEN], struct errmsg *e);
/* data = AES-KW⁻¹(content, in), or ERR_KEY_INVALID (data then zeroed). */
int	seal_key_unwrap(const uint8_t content[SEAL_KEY_LEN],
	    const uint8_t in[SEAL_KEY_WRAPPED_LEN],
	    uint8_t data[SEAL_KEY_LEN], struct errmsg *e);

/*
 * The content key from path: one line of 64 hex digits.  A missing file
 * is made (mode 0600, O_EXCL, with a fresh key) and *created set to 1, so
 * the caller can say so in its log; an existing file must be a regular
 * file, not readable or writable by group or others, owned by the
 * caller.  ERR_KEY_INVALID for bad contents, ERR_PERMISSION for a lax
 * mode, ERR_IO and the like for the file itself.
 */
int	seal_key_load(const char *path, uint8_t key[SEAL_KEY_LEN],
	    int *created, struct errmsg *e);

#endif

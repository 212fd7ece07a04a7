/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the sealed archive opener (controller/seal.c) on
 * arbitrary bytes.  The first input byte picks how the rest is fed (in
 * one piece or in pieces of 1..255 bytes), the rest is the archive, opened
 * with the known-answer key as home-1 revision 7 (the seed corpus holds
 * archives sealed so, whole and damaged).  Invariants: no crash or leak;
 * plaintext never exceeds the input; an archive that opens seals back to
 * the very same bytes under its own salt and prefix, so the opener
 * accepts nothing the sealer would not have made.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "seal.h"

struct fbuf {
	uint8_t	*p;
	size_t	 n, cap;
};

static int
fbuf_sink(void *arg, const void *p, size_t n)
{
	struct fbuf	*b = arg;

	if (n == 0)
		return 0;
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		if ((b->p = realloc(b->p, b->cap)) == NULL)
			abort();
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seal_open *o;
	struct seal	*s;
	struct errmsg	 e;
	struct fbuf	 pt = { NULL, 0, 0 }, re = { NULL, 0, 0 };
	uint8_t		 key[SEAL_KEY_LEN];
	size_t		 chunk, off, k, i;
	int		 r = 0;

	if (size < 1 || size > 4 * SEAL_SEGMENT)
		return 0;
	for (i = 0; i < SEAL_KEY_LEN; i++)
		key[i] = (uint8_t)i;
	chunk = data[0];
	data++;
	size--;
	if (seal_open_new(&o, key, "home-1", 7, fbuf_sink, &pt, &e) != 0)
		abort();
	for (off = 0; off < size && r == 0; off += k) {
		k = chunk == 0 ? size - off : chunk;
		if (k > size - off)
			k = size - off;
		r = seal_open_write(o, data + off, k, &e);
	}
	if (r == 0)
		r = seal_open_finish(o, &e);
	seal_open_free(o);
	if (pt.n > size)
		abort();
	if (r == 0) {
		/* Salt at 16, prefix at 48 (rakazo-home(5)). */
		if (seal_new_fixed(&s, key, "home-1", 7, data + 16, data + 48,
		    fbuf_sink, &re, &e) != 0 ||
		    seal_write(s, pt.p, pt.n, &e) != 0 ||
		    seal_finish(s, &e) != 0)
			abort();
		seal_free(s);
		if (re.n != size || memcmp(re.p, data, size) != 0)
			abort();
	} else if (r != ERR_SEAL_FORMAT && r != ERR_SEAL_VERSION &&
	    r != ERR_SEAL_AUTH && r != ERR_SEAL_TRUNCATED &&
	    r != ERR_SEAL_WRONG_OBJECT)
		abort();
	free(pt.p);
	free(re.p);
	return 0;
}

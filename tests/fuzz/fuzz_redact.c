/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: redact_text on arbitrary text with a large and a small
 * destination (ASan catches any write past dstlen), plus redact_dup.  The
 * small output must be a prefix of the large one, and the large one must
 * equal redact_dup's.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "redact.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*src, *big, *small, *dup;
	size_t	 n, m, smalllen, biglen;

	if (size > 64 * 1024)
		return 0;
	src = malloc(size + 1);
	memcpy(src, data, size);
	src[size] = '\0';
	/* Masks lengthen text at most 10x (one mask per input byte). */
	biglen = size * 11 + 1;
	big = malloc(biglen);
	n = redact_text(big, biglen, src);
	if (n >= biglen || strlen(big) != n)
		abort();

	smalllen = size > 0 ? data[0] % 17 : 0;
	small = malloc(smalllen > 0 ? smalllen : 1);
	m = redact_text(small, smalllen, src);
	if (smalllen == 0) {
		if (m != 0)
			abort();
	} else if (m >= smalllen || strlen(small) != m ||
	    memcmp(small, big, m) != 0)
		abort();

	dup = redact_dup(src);
	if (strcmp(dup, big) != 0)
		abort();
	redact_key_is_secret(src);
	free(dup);
	free(small);
	free(big);
	free(src);
	return 0;
}

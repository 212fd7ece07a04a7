/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for rfb_frame_next(), the framer of what viewers send
 * the gateway.  Invariants: every length it hands out is within the bytes
 * given and at most RFB_MSG_MAX; it returns 0 (need more), a length, or an
 * ERR_* code; walking a whole input consumes it or stops.
 */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "rfb.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rfb_framer	 f = { RFB_PHASE_VERSION };
	size_t			 used = 0;
	ssize_t			 n;
	int			 type;

	if (size > 0 && (data[0] & 1))
		f.phase = RFB_PHASE_NORMAL;
	while (used < size) {
		n = rfb_frame_next(&f, data + used, size - used, &type);
		if (n == 0)
			break;
		if (n < 0) {
			if (n != ERR_PROTOCOL && n != ERR_TOO_LARGE)
				abort();
			break;
		}
		if ((size_t)n > size - used || n > RFB_MSG_MAX)
			abort();
		used += (size_t)n;
	}
	return 0;
}

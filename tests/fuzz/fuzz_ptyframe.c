/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for pty_frame_next(), the framer of what terminal
 * clients send (G-35).  Invariants: it consumes at least one byte and no
 * more than given, or fails with ERR_PROTOCOL/ERR_TOO_LARGE and a
 * reason; stdin slices lie within the input; a frame never claims more
 * than 1 MiB; resize sizes fit in 16 bits.
 */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "guestd.h"
#include "pty.h"

/* pty.c reads the settings; main.c is not linked here. */
struct guestd_settings guestd;

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pty_framer	 f;
	struct pty_event	 ev;
	const char		*why;
	size_t			 used = 0;
	int			 n;

	pty_frame_init(&f);
	while (used < size) {
		n = pty_frame_next(&f, data + used, size - used, &ev, &why);
		if (n < 0) {
			if ((n != ERR_PROTOCOL && n != ERR_TOO_LARGE) ||
			    why == NULL)
				abort();
			break;
		}
		if (n == 0 || (size_t)n > size - used || f.left > PTY_FRAME_MAX)
			abort();
		if (ev.type == PTY_EV_STDIN && (ev.data != data + used ||
		    ev.n != (size_t)n))
			abort();
		if (ev.type == PTY_EV_RESIZE && (ev.cols > 65535 ||
		    ev.rows > 65535))
			abort();
		/* Give some stdin back now and then, as a blocked PTY does. */
		if (ev.type == PTY_EV_STDIN && ev.n > 1 && (data[used] & 1)) {
			pty_frame_unread(&f, ev.n / 2);
			n -= (int)(ev.n / 2);
		}
		used += (size_t)n;
	}
	return 0;
}

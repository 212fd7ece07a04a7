/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the WebSocket framing of our clients
 * (common/wsframe.c): the frame header parser and the handshake response
 * parser get arbitrary bytes.  Invariants: a header is never longer than
 * the input nor WSFRAME_MAX_HDR, its payload length never exceeds the
 * cap; a whole frame lies inside the input; a response head is never
 * longer than the input or WSFRAME_MAX_HEAD and is accepted only as a
 * 101.  The response is checked against the RFC's sample key, so the
 * seed "handshake" is a valid upgrade.
 */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "wsframe.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wsframe	 f;
	size_t		 off = 0, max = 4096;
	int		 r, status;

	while (off < size) {
		r = wsframe_header(data + off, size - off, max, &f);
		if (r > 0 && ((size_t)r > size - off || r > WSFRAME_MAX_HDR ||
		    (size_t)r != f.hdrlen || f.len > max))
			abort();
		r = wsframe_parse(data + off, size - off, max, &f);
		if (r <= 0)
			break;
		if ((size_t)r > size - off || f.len > max ||
		    f.payload != data + off + f.hdrlen ||
		    f.hdrlen + f.len != (size_t)r)
			abort();
		off += (size_t)r;
	}
	r = wsframe_response((const char *)data, size,
	    "dGhlIHNhbXBsZSBub25jZQ==", &status);
	if (r > 0 && ((size_t)r > size || r > WSFRAME_MAX_HEAD ||
	    status != 101))
		abort();
	return 0;
}

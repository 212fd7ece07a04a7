/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: proto_frame_parse and the cursor getters on arbitrary
 * bytes.  An accepted frame must satisfy every rule of the protocol, and
 * the cursor must never read past its input (ASan watches).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "buf.h"
#include "err.h"
#include "proto.h"

static void
fuzz_cursor(const uint8_t *data, size_t size)
{
	struct cursor	 c;
	const uint8_t	*p;
	uint8_t		 op, u8;
	uint16_t	 u16;
	uint32_t	 u32;
	size_t		 before;

	cursor_init(&c, data, size);
	while (cursor_get_u8(&c, &op) == 0) {
		before = cursor_left(&c);
		switch (op % 6) {
		case 0:
			if (cursor_get_u8(&c, &u8) != 0 &&
			    cursor_left(&c) != before)
				abort();
			break;
		case 1:
			if (cursor_get_u16be(&c, &u16) != 0 &&
			    cursor_left(&c) != before)
				abort();
			break;
		case 2:
			if (cursor_get_u32be(&c, &u32) != 0 &&
			    cursor_left(&c) != before)
				abort();
			break;
		case 3:
			cursor_peek_u32be(&c, &u32);
			if (cursor_left(&c) != before)
				abort();
			break;
		case 4:
			/* A length from the wire, checked by the cursor. */
			if (cursor_get_u32be(&c, &u32) == 0 &&
			    cursor_get_bytes(&c, u32, &p) == 0 && u32 > 0 &&
			    p[u32 - 1] == 0xff)
				before = 0;
			break;
		default:
			if (cursor_skip(&c, op) != 0 &&
			    cursor_left(&c) != before)
				abort();
			break;
		}
	}
	if (cursor_left(&c) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_frame	 f;
	uint8_t			 hdr[PROTO_FRAME_HDR];

	if (proto_frame_parse(data, size, &f) == 0) {
		if (f.id == 0 || f.channel > PROTO_CH_STDERR ||
		    (f.flags & ~PROTO_F_END) != 0 ||
		    f.len != size - PROTO_FRAME_HDR ||
		    f.payload != data + PROTO_FRAME_HDR)
			abort();
		proto_frame_header(hdr, f.id, f.channel, f.flags);
		for (size_t i = 0; i < PROTO_FRAME_HDR; i++)
			if (hdr[i] != data[i])
				abort();
	}
	fuzz_cursor(data, size);
	return 0;
}

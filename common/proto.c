/* SPDX-License-Identifier: MIT */
/*
 * Binary frames of the control channel (man/guestd-protocol.7):
 * [id u32be][channel u8][flags u8][payload...] in one websocket message.
 * The parser accepts exactly what the protocol defines and nothing else,
 * so a confused or hostile peer is dropped rather than half-understood.
 */
#include <string.h>

#include "buf.h"
#include "bytes.h"
#include "err.h"
#include "proto.h"

void
proto_frame_header(uint8_t hdr[PROTO_FRAME_HDR], uint32_t id, uint8_t channel,
    uint8_t flags)
{
	bytes_put_be32(hdr, id);
	hdr[4] = channel;
	hdr[5] = flags;
}

int
proto_frame_parse(const void *msg, size_t len, struct proto_frame *f)
{
	struct cursor	 c;
	uint32_t	 id;
	uint8_t		 channel, flags;

	memset(f, 0, sizeof(*f));
	if (msg == NULL || len < PROTO_FRAME_HDR || len > PROTO_MAX_BINARY)
		return ERR_PROTOCOL;
	cursor_init(&c, msg, len);
	if (cursor_get_u32be(&c, &id) != 0 ||
	    cursor_get_u8(&c, &channel) != 0 ||
	    cursor_get_u8(&c, &flags) != 0)
		return ERR_PROTOCOL;
	if (id == 0 || channel > PROTO_CH_STDERR || (flags & ~PROTO_F_END) != 0)
		return ERR_PROTOCOL;
	f->id = id;
	f->channel = channel;
	f->flags = flags;
	f->payload = c.p + c.off;
	f->len = cursor_left(&c);
	return 0;
}

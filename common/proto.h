/* SPDX-License-Identifier: MIT */
/*
 * The control-channel protocol shared by guestd and its clients
 * (man/guestd-protocol.7 is the reference; keep the two in step).
 *
 * One websocket at /control, subprotocol "rakazo-control.v1",
 * "Authorization: Bearer <secret>".  Text messages are JSON objects:
 *   request   {"id": 7, "op": "file.stat", "args": {...}}
 *   response  {"id": 7, "ok": true, "result": {...}}
 *             {"id": 7, "ok": false, "error": {"code": "...", "message": "..."}}
 *   event     {"event": "exec.started", "id": 7, ...}
 * Binary messages carry bulk bytes for request id:
 *   [id u32be][channel u8][flags u8][payload...]
 * channel 0 data (file bodies, tar streams), 1 stdout, 2 stderr;
 * flags bit 0 END (last frame of that stream; may carry payload).
 */
#ifndef COMMON_PROTO_H
#define COMMON_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define PROTO_VERSION		1
#define PROTO_SUBPROTOCOL	"rakazo-control.v1"
#define PROTO_PATH		"/control"

#define PROTO_MAX_JSON		(1024 * 1024)	/* one text request */
#define PROTO_MAX_REPLY		(16 * 1024 * 1024) /* one text reply/event */
#define PROTO_MAX_BINARY	(1024 * 1024)	/* one binary message */
#define PROTO_CHUNK		(64 * 1024)	/* payload per frame we send */
#define PROTO_FRAME_HDR		6

#define PROTO_CH_DATA		0
#define PROTO_CH_STDOUT		1
#define PROTO_CH_STDERR		2
#define PROTO_F_END		0x01

struct proto_frame {
	uint32_t	 id;
	uint8_t		 channel;
	uint8_t		 flags;
	const uint8_t	*payload;	/* borrowed from the message */
	size_t		 len;
};

/* Write the 6-byte header into hdr. */
void	proto_frame_header(uint8_t hdr[PROTO_FRAME_HDR], uint32_t id,
	    uint8_t channel, uint8_t flags);
/*
 * Parse one whole binary message.  0 or ERR_PROTOCOL (short, id 0, unknown
 * channel or flags, too large).
 */
int	proto_frame_parse(const void *msg, size_t len, struct proto_frame *f);

#endif

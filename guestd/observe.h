/* SPDX-License-Identifier: MIT */
/*
 * observe (doc/DESIGN.md G-7): a screenshot of a bot's desktop from the capture
 * framebuffer, as PNG or JPEG, optionally cropped to a region and scaled
 * down to fit a maximum size (aspect kept).
 *
 *  display.observe {bot, format?: "png"|"jpeg" (png), quality? 1..100 (80),
 *                   max_width?, max_height?, region?{x,y,width,height},
 *                   since_frame?}
 *    -> channel 0 frames with the image (END on the last), then
 *       {frame, format, width, height, scale, screen{width,height},
 *        region{x,y,width,height}, cursor{x,y}, captured_ms,
 *        damage{x,y,width,height}|null, bytes, unchanged:false}
 *    When since_frame equals the current frame: no frames, and
 *       {frame, unchanged:true, width, height, scale, screen, cursor,
 *        captured_ms}.
 *    damage is the screen box changed after since_frame (whole screen when
 *    since_frame is absent or too old).
 */
#ifndef GUESTD_OBSERVE_H
#define GUESTD_OBSERVE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct control_conn;

int	observe_op(struct control_conn *, uint32_t, json_t *, char *, size_t);

/*
 * Encoders over 32-bit BGRX pixels on the calling thread, in nbands bands
 * (0: as many as the pool has workers; encode.h), also used by the unit
 * test.  On success *out is malloc'd and owned by the caller.  0 or ERR_*.
 */
int	observe_encode_png(const uint8_t *px, int w, int h, size_t stride,
	    int nbands, uint8_t **out, size_t *outlen);
int	observe_encode_jpeg(const uint8_t *px, int w, int h, size_t stride,
	    int quality, int nbands, uint8_t **out, size_t *outlen);
/* Area-average px (w x h) into dst (dw x dh, stride dw * 4). */
void	observe_scale(const uint8_t *px, int w, int h, size_t stride,
	    uint8_t *dst, int dw, int dh);

#endif

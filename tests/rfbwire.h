/* SPDX-License-Identifier: MIT */
/*
 * RFB wire helpers shared by our raw RFB clients (tests/integration/
 * rfbprobe.c and bench/rfb-latency.c): big-endian fields and the client
 * messages both send the same way.  Header-only: each client is one file.
 */
#ifndef TESTS_RFBWIRE_H
#define TESTS_RFBWIRE_H

#include <stdint.h>
#include <string.h>

#define RFBWIRE_ENC_RAW			0
#define RFBWIRE_ENC_DESKTOP_SIZE	(-223)
#define RFBWIRE_ENC_RICH_CURSOR		(-239)

static inline uint32_t
rfbwire_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static inline unsigned
rfbwire_be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static inline void
rfbwire_put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
rfbwire_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* SetPixelFormat: 32 bpp, depth 24, little-endian true colour BGRX. */
static inline void
rfbwire_pixel_format(uint8_t m[20])
{
	memset(m, 0, 20);
	m[4] = 32;
	m[5] = 24;
	m[7] = 1;
	rfbwire_put16(m + 8, 255);
	rfbwire_put16(m + 10, 255);
	rfbwire_put16(m + 12, 255);
	m[14] = 16;
	m[15] = 8;
}

/* SetEncodings for n (<= 8) encodings into m; returns its length. */
static inline size_t
rfbwire_encodings(uint8_t m[4 + 8 * 4], const int32_t *enc, unsigned n)
{
	unsigned	 i;

	memset(m, 0, 4);
	m[0] = 2;
	rfbwire_put16(m + 2, n);
	for (i = 0; i < n; i++)
		rfbwire_put32(m + 4 + 4 * i, (uint32_t)enc[i]);
	return 4 + 4 * (size_t)n;
}

/* FramebufferUpdateRequest for the whole w x h screen. */
static inline void
rfbwire_update_request(uint8_t m[10], int incremental, int w, int h)
{
	m[0] = 3;
	m[1] = (uint8_t)incremental;
	rfbwire_put16(m + 2, 0);
	rfbwire_put16(m + 4, 0);
	rfbwire_put16(m + 6, (unsigned)w);
	rfbwire_put16(m + 8, (unsigned)h);
}

#endif

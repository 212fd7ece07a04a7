/* SPDX-License-Identifier: MIT */
/*
 * Bounded buffers and a read cursor for wire parsing.
 *
 * struct buf grows up to a hard cap given at init and refuses to grow
 * beyond it (ERR_TOO_LARGE), so a peer can never make us allocate without
 * limit.  struct cursor reads from bytes it does not own following
 * peek -> check -> consume: every getter checks the remaining length first
 * (as a subtraction) and returns ERR_NEED_MORE without moving when short.
 * Parsers of untrusted bytes read through a cursor and nothing else, so
 * the bounds checks live here once instead of in every framer.
 */
#ifndef COMMON_BUF_H
#define COMMON_BUF_H

#include <stddef.h>
#include <stdint.h>

struct buf {
	uint8_t	*data;
	size_t	 len;
	size_t	 cap;	/* allocated */
	size_t	 max;	/* hard limit on len */
};

void	 buf_init(struct buf *b, size_t max);
void	 buf_free(struct buf *b);		/* leaves b empty, reusable */
void	 buf_reset(struct buf *b);		/* len = 0, keeps memory */
int	 buf_append(struct buf *b, const void *p, size_t n);
int	 buf_reserve(struct buf *b, size_t n);	/* room for n more bytes */
int	 buf_put_u8(struct buf *b, uint8_t v);
int	 buf_put_u16be(struct buf *b, uint16_t v);
int	 buf_put_u32be(struct buf *b, uint32_t v);
/* Drop n bytes from the front. */
void	 buf_consume(struct buf *b, size_t n);
/* NUL-terminate without counting it in len (needs room; may grow). */
int	 buf_cstr(struct buf *b);

struct cursor {
	const uint8_t	*p;
	size_t		 len;
	size_t		 off;
};

void	 cursor_init(struct cursor *c, const void *p, size_t len);
size_t	 cursor_left(const struct cursor *c);
/* 0, or ERR_NEED_MORE (nothing read, nothing moved). */
int	 cursor_get_u8(struct cursor *c, uint8_t *v);
int	 cursor_get_u16be(struct cursor *c, uint16_t *v);
int	 cursor_get_u32be(struct cursor *c, uint32_t *v);
int	 cursor_get_u64be(struct cursor *c, uint64_t *v);
int	 cursor_peek_u8(const struct cursor *c, uint8_t *v);
int	 cursor_peek_u16be(const struct cursor *c, uint16_t *v);
int	 cursor_peek_u32be(const struct cursor *c, uint32_t *v);
/* Point *out at the next n bytes (no copy) and consume them. */
int	 cursor_get_bytes(struct cursor *c, size_t n, const uint8_t **out);
int	 cursor_skip(struct cursor *c, size_t n);
/*
 * Consume the n bytes of lit if they come next: 0, ERR_NEED_MORE when
 * fewer than n are left, ERR_PROTOCOL when they differ (not moved).
 */
int	 cursor_expect(struct cursor *c, const void *lit, size_t n);
/*
 * Exactly n ASCII decimal digits as a number: 0, ERR_NEED_MORE, or
 * ERR_PROTOCOL for anything else (not moved); n must be 1..9 so the
 * value fits (else ERR_INTERNAL).
 */
int	 cursor_get_digits(struct cursor *c, size_t n, uint32_t *v);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Bounded growable buffers and a read-only cursor for wire parsing.
 *
 * A struct buf never holds more than its max bytes: a peer that streams
 * without end gets ERR_TOO_LARGE instead of our memory.  One byte past max
 * may be allocated so buf_cstr() can always terminate a full buffer.
 * Every length check is written as a subtraction against what is left, so
 * it cannot overflow.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "bytes.h"
#include "err.h"

void
buf_init(struct buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

void
buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
}

/* Make cap >= need; need never exceeds max + 1. */
static int
buf_grow(struct buf *b, size_t need)
{
	size_t	 ncap, limit;
	uint8_t	*p;

	if (need <= b->cap)
		return 0;
	limit = b->max == SIZE_MAX ? SIZE_MAX : b->max + 1;
	ncap = b->cap != 0 ? b->cap : 64;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? SIZE_MAX : ncap * 2;
	if (ncap > limit)
		ncap = limit;
	if (ncap < need)
		return ERR_TOO_LARGE;
	if ((p = realloc(b->data, ncap)) == NULL)
		return ERR_NOMEM;
	b->data = p;
	b->cap = ncap;
	return 0;
}

int
buf_reserve(struct buf *b, size_t n)
{
	if (b->len > b->max || n > b->max - b->len)
		return ERR_TOO_LARGE;
	return buf_grow(b, b->len + n);
}

int
buf_append(struct buf *b, const void *p, size_t n)
{
	int	 r;

	if (n == 0)
		return 0;
	if ((r = buf_reserve(b, n)) != 0)
		return r;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int
buf_put_u8(struct buf *b, uint8_t v)
{
	return buf_append(b, &v, 1);
}

int
buf_put_u16be(struct buf *b, uint16_t v)
{
	uint8_t	 x[2];

	bytes_put_be16(x, v);
	return buf_append(b, x, sizeof(x));
}

int
buf_put_u32be(struct buf *b, uint32_t v)
{
	uint8_t	 x[4];

	bytes_put_be32(x, v);
	return buf_append(b, x, sizeof(x));
}

void
buf_consume(struct buf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
}

int
buf_cstr(struct buf *b)
{
	int	 r;

	if (b->len == SIZE_MAX)
		return ERR_TOO_LARGE;
	if ((r = buf_grow(b, b->len + 1)) != 0)
		return r;
	b->data[b->len] = '\0';
	return 0;
}

void
cursor_init(struct cursor *c, const void *p, size_t len)
{
	c->p = p;
	c->len = p != NULL ? len : 0;
	c->off = 0;
}

size_t
cursor_left(const struct cursor *c)
{
	return c->off <= c->len ? c->len - c->off : 0;
}

int
cursor_peek_u8(const struct cursor *c, uint8_t *v)
{
	if (cursor_left(c) < 1)
		return ERR_NEED_MORE;
	*v = c->p[c->off];
	return 0;
}

int
cursor_get_u8(struct cursor *c, uint8_t *v)
{
	int	 r;

	if ((r = cursor_peek_u8(c, v)) != 0)
		return r;
	c->off += 1;
	return 0;
}

int
cursor_peek_u16be(const struct cursor *c, uint16_t *v)
{
	if (cursor_left(c) < 2)
		return ERR_NEED_MORE;
	*v = bytes_be16(c->p + c->off);
	return 0;
}

int
cursor_get_u16be(struct cursor *c, uint16_t *v)
{
	int	 r;

	if ((r = cursor_peek_u16be(c, v)) != 0)
		return r;
	c->off += 2;
	return 0;
}

int
cursor_peek_u32be(const struct cursor *c, uint32_t *v)
{
	if (cursor_left(c) < 4)
		return ERR_NEED_MORE;
	*v = bytes_be32(c->p + c->off);
	return 0;
}

int
cursor_get_u32be(struct cursor *c, uint32_t *v)
{
	int	 r;

	if ((r = cursor_peek_u32be(c, v)) != 0)
		return r;
	c->off += 4;
	return 0;
}

int
cursor_get_u64be(struct cursor *c, uint64_t *v)
{
	if (cursor_left(c) < 8)
		return ERR_NEED_MORE;
	*v = bytes_be64(c->p + c->off);
	c->off += 8;
	return 0;
}

int
cursor_get_bytes(struct cursor *c, size_t n, const uint8_t **out)
{
	if (n > cursor_left(c))
		return ERR_NEED_MORE;
	*out = c->p + c->off;
	c->off += n;
	return 0;
}

int
cursor_skip(struct cursor *c, size_t n)
{
	if (n > cursor_left(c))
		return ERR_NEED_MORE;
	c->off += n;
	return 0;
}

int
cursor_expect(struct cursor *c, const void *lit, size_t n)
{
	if (n > cursor_left(c))
		return ERR_NEED_MORE;
	if (n > 0 && memcmp(c->p + c->off, lit, n) != 0)
		return ERR_PROTOCOL;
	c->off += n;
	return 0;
}

int
cursor_get_digits(struct cursor *c, size_t n, uint32_t *v)
{
	const uint8_t	*p;
	uint32_t	 x = 0;
	size_t		 i;

	/* Nine digits always fit; a caller asking for more is a bug. */
	if (n == 0 || n > 9)
		return ERR_INTERNAL;
	if (n > cursor_left(c))
		return ERR_NEED_MORE;
	p = c->p + c->off;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return ERR_PROTOCOL;
		x = x * 10 + (uint32_t)(p[i] - '0');
	}
	*v = x;
	c->off += n;
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Bounded byte pipes (bytepipe.h).  A ring buffer rather than a chunk list:
 * the HTTP side hands over a few KiB per callback and guestd frames take
 * up to 64 KiB, so a ring keeps one allocation per transfer whatever the
 * sizes on either side.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "bytepipe.h"
#include "xmalloc.h"

void
bytepipe_init(struct bytepipe *x, size_t high)
{
	memset(x, 0, sizeof *x);
	x->high = high;
	x->low = high / 2;
}

void
bytepipe_release(struct bytepipe *x)
{
	free(x->buf);
	x->buf = NULL;
	x->cap = x->head = x->len = 0;
}

size_t
bytepipe_len(const struct bytepipe *x)
{
	return x->len;
}

int
bytepipe_full(const struct bytepipe *x)
{
	return x->len >= x->high;
}

int
bytepipe_drained(const struct bytepipe *x)
{
	return x->len == 0 && (x->end || x->broken != 0);
}

static void
bytepipe_wake_data(struct bytepipe *x)
{
	task_cond_broadcast(&x->cv);
	if (x->on_data != NULL)
		x->on_data(x->on_data_arg);
}

static void
bytepipe_wake_room(struct bytepipe *x)
{
	task_cond_broadcast(&x->cv);
	if (x->on_room != NULL)
		x->on_room(x->on_room_arg);
}

/* Make room for need more bytes, keeping the ring's order. */
static void
bytepipe_grow(struct bytepipe *x, size_t need)
{
	uint8_t	*nb;
	size_t	 cap, first;

	cap = x->cap > 0 ? x->cap : x->high + 64 * 1024;
	while (cap - x->len < need)
		cap *= 2;
	if (cap == x->cap)
		return;
	nb = xmalloc(cap);
	first = x->cap - x->head < x->len ? x->cap - x->head : x->len;
	if (x->len > 0) {
		memcpy(nb, x->buf + x->head, first);
		memcpy(nb + first, x->buf, x->len - first);
	}
	free(x->buf);
	x->buf = nb;
	x->cap = cap;
	x->head = 0;
}

void
bytepipe_put(struct bytepipe *x, const void *p, size_t n)
{
	const uint8_t	*s = p;
	size_t		 tail, k;

	if (x->end || x->broken != 0 || n == 0)
		return;
	if (x->cap - x->len < n)
		bytepipe_grow(x, n);
	while (n > 0) {
		tail = (x->head + x->len) % x->cap;
		k = x->cap - tail < n ? x->cap - tail : n;
		memcpy(x->buf + tail, s, k);
		x->len += k;
		s += k;
		n -= k;
	}
	bytepipe_wake_data(x);
}

size_t
bytepipe_get(struct bytepipe *x, void *p, size_t max)
{
	uint8_t	*d = p;
	size_t	 got = 0, k;

	while (got < max && x->len > 0) {
		k = x->cap - x->head;
		if (k > x->len)
			k = x->len;
		if (k > max - got)
			k = max - got;
		memcpy(d + got, x->buf + x->head, k);
		x->head = (x->head + k) % x->cap;
		x->len -= k;
		got += k;
	}
	if (x->len == 0)
		x->head = 0;
	if (got > 0 && x->len < x->low)
		bytepipe_wake_room(x);
	return got;
}

void
bytepipe_end(struct bytepipe *x)
{
	if (x->end || x->broken != 0)
		return;
	x->end = 1;
	bytepipe_wake_data(x);
}

void
bytepipe_break(struct bytepipe *x, int code)
{
	if (x->broken != 0)
		return;
	x->broken = code != 0 ? code : ERR_PEER_GONE;
	bytepipe_wake_data(x);
	bytepipe_wake_room(x);
}

int
bytepipe_wait_room(struct bytepipe *x, int64_t timeout_ms)
{
	int	 r;

	while (x->broken == 0 && x->len >= x->low)
		if ((r = task_cond_wait(&x->cv, timeout_ms)) != 0)
			return r;
	return x->broken;
}

int
bytepipe_wait_data(struct bytepipe *x, int64_t timeout_ms)
{
	int	 r;

	while (x->len == 0 && !x->end && x->broken == 0)
		if ((r = task_cond_wait(&x->cv, timeout_ms)) != 0)
			return r;
	return x->len == 0 ? x->broken : 0;
}

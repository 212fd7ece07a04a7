/* SPDX-License-Identifier: MIT */
/*
 * Bounded byte pipes between the HTTP side of rakazoctl serve and a
 * request's task (task.h), for bodies too large to hold: an upload's
 * request body on its way to guestd, a download on its way to the HTTP
 * client.  Both sides run on the one loop, so a pipe needs no lock; what
 * it adds is the backpressure: the producer stops once the pipe holds its
 * high-water mark and is told (on_room) when it fell below low water, the
 * consumer is told (on_data) when bytes, the end or a break arrived.  A
 * task on either side may wait instead of using a hook.
 */
#ifndef CONTROLLER_BYTEPIPE_H
#define CONTROLLER_BYTEPIPE_H

#include <stddef.h>
#include <stdint.h>

#include "task.h"

struct bytepipe {
	uint8_t		*buf;		/* ring, allocated on first put */
	size_t		 cap, head, len;
	size_t		 high, low;
	int		 end;		/* the producer put its last byte */
	int		 broken;	/* ERR_*: a side left; 0 while well */
	struct task_cond cv;		/* tasks waiting for bytes or room */
	/* Hooks (may be NULL); they run on the loop and must not wait. */
	void		(*on_data)(void *arg);
	void		*on_data_arg;
	void		(*on_room)(void *arg);
	void		*on_room_arg;
};

/* An empty pipe; low water is half of high. */
void	bytepipe_init(struct bytepipe *x, size_t high);
/* Free the buffer; nobody may wait on x any more. */
void	bytepipe_release(struct bytepipe *x);
size_t	bytepipe_len(const struct bytepipe *x);
/* At or above high water: the producer should pause. */
int	bytepipe_full(const struct bytepipe *x);
/*
 * Append n bytes (the ring grows past high water when it must: the
 * producer may have bytes in hand when it learns the pipe is full).
 * Ignored once the pipe ended or broke.
 */
void	bytepipe_put(struct bytepipe *x, const void *p, size_t n);
/* Take up to max bytes; 0 when empty. */
size_t	bytepipe_get(struct bytepipe *x, void *p, size_t max);
void	bytepipe_end(struct bytepipe *x);
/* A side left: nothing more moves; waiters and hooks are told. */
void	bytepipe_break(struct bytepipe *x, int code);
/* Drained: empty and ended or broken. */
int	bytepipe_drained(const struct bytepipe *x);
/*
 * Task waits: until the pipe is below low water (room), or holds bytes
 * or is drained (data).  0, ERR_TIMEOUT, or the break's code.
 */
int	bytepipe_wait_room(struct bytepipe *x, int64_t timeout_ms);
int	bytepipe_wait_data(struct bytepipe *x, int64_t timeout_ms);

#endif

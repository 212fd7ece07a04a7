/* SPDX-License-Identifier: MIT */
/*
 * Fenced leases (lease.h).  Each operation is one store transaction taken
 * with the write lock up front, so "is it free?" and "grant it" cannot be
 * split by another process.  The fence lives on the bot row and only grows:
 * a lease row may be replaced or deleted, the bot's fence never goes back.
 */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "err.h"
#include "token.h"
#include "lease.h"

static int
lease_live(const struct store_lease *l, int64_t now)
{
	return l->expires_ms > now;
}

static int64_t
lease_ttl(int64_t ttl_ms)
{
	if (ttl_ms <= 0)
		return LEASE_TTL_DEFAULT_MS;
	if (ttl_ms > LEASE_TTL_MAX_MS)
		return LEASE_TTL_MAX_MS;
	return ttl_ms;
}

/* Inside a transaction: raise the fence and write the lease row. */
static int
lease_grant(struct store *s, struct store_bot *b, const char *kind,
    const char *holder, int64_t ttl_ms, int64_t now, struct store_lease *out)
{
	int	 r;

	memset(out, 0, sizeof *out);
	if ((r = token_new(out->id, sizeof out->id)) != 0)
		return r;
	b->fence++;
	if ((r = store_bot_update(s, b)) != 0)
		return r;
	snprintf(out->computer, sizeof out->computer, "%s", b->computer);
	snprintf(out->bot, sizeof out->bot, "%s", b->bot);
	snprintf(out->kind, sizeof out->kind, "%s", kind);
	snprintf(out->holder, sizeof out->holder, "%s", holder);
	out->fence = b->fence;
	out->acquired_ms = now;
	out->expires_ms = now + lease_ttl(ttl_ms);
	return store_lease_put(s, out);
}

/* 0 when no live lease of kind is held by someone other than holder. */
static int
lease_free_for(struct store *s, const char *computer, const char *bot,
    const char *kind, const char *holder, int64_t now)
{
	struct store_lease	 l;
	int			 r;

	r = store_lease_find(s, computer, bot, kind, &l);
	if (r == ERR_NOT_FOUND)
		return 0;
	if (r != 0)
		return r;
	if (lease_live(&l, now) && strcmp(l.holder, holder) != 0)
		return ERR_LEASE_HELD;
	return 0;
}

/* C-8: LEASE_HELD while the idle job's reservation of computer holds. */
static int
lease_reserved(struct store *s, const char *computer, int64_t now)
{
	return lease_free_for(s, computer, LEASE_RESERVE_BOT,
	    LEASE_RESERVE, "", now);
}

int
lease_acquire(struct store *s, const char *computer, const char *bot,
    const char *holder, int64_t ttl_ms, int flags, struct store_lease *out)
{
	struct store_bot	 b;
	int64_t			 now;
	int			 r = ERR_INTERNAL;

	memset(out, 0, sizeof *out);
	if ((r = store_begin(s)) != 0)
		return r;
	now = store_now_ms();
	if ((r = store_bot_ensure(s, computer, bot, &b)) != 0 ||
	    (r = lease_free_for(s, computer, bot, LEASE_EXEC, holder,
	    now)) != 0 ||
	    (r = lease_free_for(s, computer, bot, LEASE_CONTROL, "", now)) != 0 ||
	    (r = lease_reserved(s, computer, now)) != 0)
		goto out;
	if (flags & LEASE_F_RUN)
		snprintf(b.run_state, sizeof b.run_state, "running");
	if ((r = lease_grant(s, &b, LEASE_EXEC, holder, ttl_ms, now,
	    out)) != 0)
		goto out;
out:
	return store_end(s, r);
}

int
lease_acquire_control(struct store *s, const char *computer, const char *bot,
    const char *holder, int64_t ttl_ms, struct store_lease *out)
{
	struct store_bot	 b;
	struct store_lease	 l;
	int64_t			 now;
	int			 r = ERR_INTERNAL, waiting;

	memset(out, 0, sizeof *out);
	if ((r = store_begin(s)) != 0)
		return r;
	now = store_now_ms();
	if ((r = store_bot_ensure(s, computer, bot, &b)) != 0)
		goto out;
	waiting = strcmp(b.run_state, "waiting_takeover") == 0;
	/*
	 * A run is active while its execution lease lives: a run whose
	 * driver vanished without releasing must not block takeover forever.
	 */
	if (!waiting) {
		r = store_lease_find(s, computer, bot, LEASE_EXEC, &l);
		if (r == 0 && lease_live(&l, now)) {
			r = ERR_STOP_THE_BOT_FIRST;
			goto out;
		}
		if (r != 0 && r != ERR_NOT_FOUND)
			goto out;
	}
	if ((r = lease_reserved(s, computer, now)) != 0 ||
	    (r = lease_free_for(s, computer, bot, LEASE_CONTROL, holder,
	    now)) != 0 ||
	    (r = lease_grant(s, &b, LEASE_CONTROL, holder, ttl_ms, now,
	    out)) != 0)
		goto out;
out:
	return store_end(s, r);
}

/* Inside a transaction: the lease row of id, live and latest. */
static int
lease_current(struct store *s, const char *id, int64_t now,
    struct store_lease *l)
{
	struct store_bot	 b;
	int			 r;

	r = store_lease_get(s, id, l);
	if (r == ERR_NOT_FOUND)
		return ERR_LEASE_EXPIRED;
	if (r != 0)
		return r;
	if ((r = store_bot_ensure(s, l->computer, l->bot, &b)) != 0)
		return r;
	if (b.fence > l->fence)
		return ERR_STALE_FENCE;
	if (!lease_live(l, now))
		return ERR_LEASE_EXPIRED;
	return 0;
}

int
lease_heartbeat(struct store *s, const char *id, int64_t ttl_ms,
    struct store_lease *out)
{
	int64_t	 now;
	int	 r;

	memset(out, 0, sizeof *out);
	if ((r = store_begin(s)) != 0)
		return r;
	now = store_now_ms();
	if ((r = lease_current(s, id, now, out)) != 0)
		goto out;
	out->expires_ms = now + lease_ttl(ttl_ms);
	if ((r = store_lease_put(s, out)) != 0)
		goto out;
out:
	return store_end(s, r);
}

int
lease_check(struct store *s, const char *id, const char *computer,
    const char *bot, struct store_lease *out)
{
	struct store_lease	 l;
	int			 r;

	if ((r = store_begin(s)) != 0)
		return r;
	r = lease_current(s, id, store_now_ms(), &l);
	store_rollback(s);
	if (r != 0)
		return r;
	/* Another bot's lease must not pass for this one. */
	if (strcmp(l.computer, computer) != 0 || strcmp(l.bot, bot) != 0)
		return ERR_LEASE_EXPIRED;
	if (out != NULL)
		*out = l;
	return 0;
}

int
lease_release(struct store *s, const char *id)
{
	struct store_lease	 l;
	struct store_bot	 b;
	int			 r;

	if ((r = store_begin(s)) != 0)
		return r;
	r = store_lease_get(s, id, &l);
	if (r == ERR_NOT_FOUND)
		r = ERR_LEASE_EXPIRED;
	if (r != 0 || (r = store_lease_delete(s, id)) != 0)
		goto out;
	if (strcmp(l.kind, LEASE_EXEC) == 0) {
		if ((r = store_bot_ensure(s, l.computer, l.bot, &b)) != 0)
			goto out;
		snprintf(b.run_state, sizeof b.run_state, "idle");
		if ((r = store_bot_update(s, &b)) != 0)
			goto out;
	}
out:
	return store_end(s, r);
}

int
lease_request_takeover(struct store *s, const char *computer,
    const char *bot)
{
	struct store_bot	 b;
	int			 r;

	if ((r = store_begin(s)) != 0)
		return r;
	if ((r = store_bot_ensure(s, computer, bot, &b)) != 0)
		goto out;
	snprintf(b.run_state, sizeof b.run_state, "waiting_takeover");
	if ((r = store_bot_update(s, &b)) != 0)
		goto out;
out:
	return store_end(s, r);
}

/* SPDX-License-Identifier: MIT */
/*
 * Fenced leases (doc/DESIGN.md C-3).  A bot has at most one execution lease
 * (its driver) and at most one control lease (a user's "Take control") at a
 * time; different bots never contend.  Every grant raises the bot's fence
 * by one and the holder passes that fence to guestd on every mutating call
 * (G-32), so a holder whose lease expired and was granted to someone else
 * is refused by guestd too (STALE_FENCE), even after a partition.  Leases
 * expire without a heartbeat.  All state is in the store, so several
 * rakazoctl processes coordinate through it.
 */
#ifndef CONTROLLER_LEASE_H
#define CONTROLLER_LEASE_H

#include <stdint.h>

#include "store.h"

#define LEASE_EXEC		"exec"
#define LEASE_CONTROL		"control"
/*
 * The idle job's reservation of a whole computer (C-8): one row under a
 * bot name no bot can have; while it lives no lease is granted.
 */
#define LEASE_RESERVE		"reserve"
#define LEASE_RESERVE_BOT	"*"
#define LEASE_TTL_DEFAULT_MS	30000
#define LEASE_TTL_MAX_MS	(24 * 3600 * 1000)

/* Marks the bot's run active until release (an agent run's lease). */
#define LEASE_F_RUN		0x01

/*
 * Grant an execution lease of bot on computer to holder.  LEASE_HELD when
 * another holder's execution or control lease is live.  The fence in *out
 * is one above every fence granted for that bot before.
 */
int	lease_acquire(struct store *s, const char *computer, const char *bot,
	    const char *holder, int64_t ttl_ms, int flags,
	    struct store_lease *out);
/*
 * Grant a user's control lease.  STOP_THE_BOT_FIRST (HTTP 409) while the
 * bot has a live execution lease or an active run, unless that run is
 * waiting_takeover; LEASE_HELD when another user holds control.
 */
int	lease_acquire_control(struct store *s, const char *computer,
	    const char *bot, const char *holder, int64_t ttl_ms,
	    struct store_lease *out);
/* Extend; LEASE_EXPIRED when gone or expired, STALE_FENCE when a newer
 * grant exists for the bot. */
int	lease_heartbeat(struct store *s, const char *id, int64_t ttl_ms,
	    struct store_lease *out);
/* Check that lease id is live and is the bot's latest grant. */
int	lease_check(struct store *s, const char *id, const char *computer,
	    const char *bot, struct store_lease *out);
/* Drop the lease (an execution lease also ends the bot's run). */
int	lease_release(struct store *s, const char *id);
/* request_takeover: the bot's run waits for a user (C-3, C-6). */
int	lease_request_takeover(struct store *s, const char *computer,
	    const char *bot);

#endif

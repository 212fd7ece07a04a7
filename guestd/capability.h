/* SPDX-License-Identifier: MIT */
/*
 * Screen capabilities (doc/DESIGN.md G-15): separately revocable, unguessable
 * tokens (192 bits, compared in constant time) that let a viewer see
 * (view) or drive (control) one display.  Each capability owns its own
 * Unix socket, named at random in a private 0700 directory; connecting to
 * it reaches that display's RFB with that policy.  Revoking closes the
 * socket and disconnects every viewer at once; closing a display revokes
 * all of its capabilities first, so a recycled slot never answers an old
 * token.
 *
 *  capability.grant  {bot, policy:"view"|"control", ttl?}  (mutating)
 *                    -> {token, id, policy, bot, expires_ms|null,
 *                        path:"/screen/<token>"}
 *                    ttl in seconds (1 .. 30 days); none: until revoked
 *                    or the display closes.  DISPLAY_NOT_OPEN without a
 *                    ready display.
 *  capability.revoke {token | id}  (mutating) -> {id, revoked:true}
 *                    NOT_FOUND for an unknown (or expired) token.
 *  capability.renew  {token | id, ttl}  (mutating) -> {id, expires_ms}
 *                    the deadline becomes ttl seconds from now; the
 *                    controller renews a control capability with its
 *                    lease's heartbeat, so it dies on its own when the
 *                    controller is gone.  NOT_FOUND once expired.
 *
 * Events to every controller: screen.capability.revoked {id, policy,
 * reason: revoked|expired|display_closed}.  Tokens are never logged.
 */
#ifndef GUESTD_CAPABILITY_H
#define GUESTD_CAPABILITY_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct capability;
struct control_conn;
struct display;

int	capability_op_grant(struct control_conn *, uint32_t, json_t *, char *,
	    size_t);
int	capability_op_revoke(struct control_conn *, uint32_t, json_t *,
	    char *, size_t);
int	capability_op_renew(struct control_conn *, uint32_t, json_t *,
	    char *, size_t);

/* Register with display.c (main.c calls this once). */
void	capability_init(void);

/* The live capability of token t (length n), or NULL. */
struct capability	*capability_find(const char *t, size_t n);
struct capability *capability_find_id(const char *id);
int			 capability_control(const struct capability *cap);
const char		*capability_id(const struct capability *cap);
/* Path of its Unix socket. */
const char		*capability_socket(const struct capability *cap);
/* The bot whose display it reaches. */
const char		*capability_bot(const struct capability *cap);
/*
 * fn(cap) runs whenever a capability goes away (revoked, expired, display
 * closed), after its viewers are dropped: main.c hands it pty_drop.
 */
void			 capability_on_revoke(
			    void (*fn)(const struct capability *));

/* 1 when s (length n) has the shape of a token (length, alphabet). */
int	capability_token_wellformed(const char *s, size_t n);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Who may hold a server's connections (conncap.c).
 *
 * A fixed cap on connections alone is a lock-out: a peer that opens as
 * many connections as the cap allows and never finishes a request (or
 * sends one without a token) keeps every authenticated client out.  So a
 * connection counts as "untrusted" from its accept until the server has
 * seen its credential (conncap_trust), and:
 *
 *  - untrusted connections may hold at most max - reserve places: the
 *    reserve is kept for connections that authenticated;
 *  - one peer address holds at most per_peer connections;
 *  - a new connection that would pass either bound is still let in: the
 *    oldest untrusted connection (of its own address for per_peer, of
 *    any for the rest) is shed to make room.  Only when there is none to
 *    shed is the new one refused.
 *
 * A newcomer always gets its turn to send its request: a flood can only
 * push out the flood's own oldest connections.  And one whose whole
 * request had already arrived when it was accepted ("ready") is not shed
 * for CONNCAP_READY_MS: the server reads it on its next turn.  Without
 * that, a burst of connections from the flood's address, accepted in one
 * turn, would shed an honest client accepted among them before a byte of
 * its request was read.  The bookkeeping is
 * pure; conncap_peer() reads a socket's peer address, and the caller
 * closes what conncap_admit() hands back to shed.
 */
#ifndef COMMON_CONNCAP_H
#define COMMON_CONNCAP_H

#include <stddef.h>
#include <stdint.h>

/* A peer address as conncap compares it (an IPv6 address at most). */
#define CONNCAP_PEER_MAX	16
/* A ready connection is not shed this long after its accept. */
#define CONNCAP_READY_MS	1000

struct conncap;

/* reserve < max and per_peer >= 1, else fatal (a caller's bug). */
struct conncap	*conncap_new(unsigned max, unsigned reserve,
		    unsigned per_peer);
void		 conncap_free(struct conncap *);

/*
 * The peer address of a connected socket: 4 bytes for IPv4 (IPv4-mapped
 * IPv6 too), 16 for IPv6, 0 for a Unix socket or when it cannot be read
 * (all such peers then count as one).
 */
size_t		 conncap_peer(int fd, unsigned char peer[CONNCAP_PEER_MAX]);

/*
 * Has a connected socket's peer sent a whole request head already (its
 * blank line is in what can be read without waiting)?  A peek: nothing is
 * consumed.
 */
int		 conncap_ready(int fd);

/*
 * A new connection conn from peer (len bytes), accepted at now_ms (any
 * monotonic clock), ready as conncap_ready() says: 0 if admitted, with *shed
 * the connection that must now be closed to make room, or NULL;
 * ERR_BUSY if it must be refused (every place is held by trusted
 * connections).  A shed connection is forgotten at once.
 */
int		 conncap_admit(struct conncap *, void *conn,
		    const unsigned char *peer, size_t len, int ready,
		    int64_t now_ms, void **shed);
/*
 * conn showed its credential: it is never shed.  ERR_NOT_FOUND if conn
 * is unknown, i.e. it was shed meanwhile (the caller then drops it).
 */
int		 conncap_trust(struct conncap *, void *conn);
/* conn closed (a no-op for one shed or never admitted). */
void		 conncap_gone(struct conncap *, void *conn);
/* Connections held, and how many of them are untrusted. */
unsigned	 conncap_count(const struct conncap *, unsigned *untrusted);

#endif

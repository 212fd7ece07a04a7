/* SPDX-License-Identifier: MIT */
/*
 * Connection admission with shedding (conncap.h).
 *
 * The connections live in one list in accept order, so "the oldest
 * untrusted" is the first untrusted entry from the head.  Lookups are
 * linear: a server holds a few hundred connections at most, and a scan
 * of them costs less than the accept() that asks for it.
 */
#include "autoconf.h"

#include <sys/socket.h>

#include <netinet/in.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conncap.h"
#include "err.h"
#include "queue-compat.h"
#include "xmalloc.h"

struct conncap_ent {
	void			*conn;
	unsigned char		 peer[CONNCAP_PEER_MAX];
	size_t			 len;
	int			 trusted;
	int64_t			 hold_until;	/* ready: not shed before */
	TAILQ_ENTRY(conncap_ent) entry;
};

struct conncap {
	unsigned		 max, reserve, per_peer;
	unsigned		 n, untrusted;
	TAILQ_HEAD(, conncap_ent) ents;
};

struct conncap *
conncap_new(unsigned max, unsigned reserve, unsigned per_peer)
{
	struct conncap	*cc;

	if (max == 0 || reserve >= max || per_peer == 0)
		fatal("conncap: max %u reserve %u per_peer %u", max, reserve,
		    per_peer);
	cc = xcalloc(1, sizeof *cc);
	cc->max = max;
	cc->reserve = reserve;
	cc->per_peer = per_peer;
	TAILQ_INIT(&cc->ents);
	return cc;
}

void
conncap_free(struct conncap *cc)
{
	struct conncap_ent	*e, *te;

	if (cc == NULL)
		return;
	TAILQ_FOREACH_SAFE(e, &cc->ents, entry, te) {
		TAILQ_REMOVE(&cc->ents, e, entry);
		free(e);
	}
	free(cc);
}

size_t
conncap_peer(int fd, unsigned char peer[CONNCAP_PEER_MAX])
{
	struct sockaddr_storage	 ss;
	socklen_t		 sl = sizeof ss;
	const struct sockaddr_in *sin;
	const struct sockaddr_in6 *sin6;

	memset(peer, 0, CONNCAP_PEER_MAX);
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == -1)
		return 0;
	switch (ss.ss_family) {
	case AF_INET:
		sin = (const struct sockaddr_in *)&ss;
		memcpy(peer, &sin->sin_addr, 4);
		return 4;
	case AF_INET6:
		sin6 = (const struct sockaddr_in6 *)&ss;
		/* ::ffff:a.b.c.d is the IPv4 peer a.b.c.d. */
		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			memcpy(peer, &sin6->sin6_addr.s6_addr[12], 4);
			return 4;
		}
		memcpy(peer, &sin6->sin6_addr, 16);
		return 16;
	default:
		return 0;
	}
}

int
conncap_ready(int fd)
{
	char	 buf[4096];
	ssize_t	 n;

	n = recv(fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
	return n >= 4 && memmem(buf, (size_t)n, "\r\n\r\n", 4) != NULL;
}

static struct conncap_ent *
conncap_find(const struct conncap *cc, const void *conn)
{
	struct conncap_ent	*e;

	TAILQ_FOREACH(e, &cc->ents, entry) {
		if (e->conn == conn)
			return e;
	}
	return NULL;
}

static void
conncap_remove(struct conncap *cc, struct conncap_ent *e)
{
	TAILQ_REMOVE(&cc->ents, e, entry);
	cc->n--;
	if (!e->trusted)
		cc->untrusted--;
	free(e);
}

/* May e be shed now? */
static int
conncap_sheddable(const struct conncap_ent *e, int64_t now_ms)
{
	return !e->trusted && now_ms >= e->hold_until;
}

int
conncap_admit(struct conncap *cc, void *conn, const unsigned char *peer,
    size_t len, int ready, int64_t now_ms, void **shed)
{
	struct conncap_ent	*e, *oldest = NULL, *oldest_peer = NULL;
	unsigned		 from_peer = 0;

	*shed = NULL;
	if (len > CONNCAP_PEER_MAX)
		len = CONNCAP_PEER_MAX;
	TAILQ_FOREACH(e, &cc->ents, entry) {
		if (e->len != len || memcmp(e->peer, peer, len) != 0) {
			if (oldest == NULL && conncap_sheddable(e, now_ms))
				oldest = e;
			continue;
		}
		from_peer++;
		if (oldest_peer == NULL && conncap_sheddable(e, now_ms))
			oldest_peer = e;
		if (oldest == NULL && conncap_sheddable(e, now_ms))
			oldest = e;
	}
	if (from_peer >= cc->per_peer) {
		/* Its own oldest goes, never another peer's. */
		if ((e = oldest_peer) == NULL)
			return ERR_BUSY;
	} else if (cc->n >= cc->max || cc->untrusted >= cc->max - cc->reserve) {
		if ((e = oldest) == NULL)
			return ERR_BUSY;
	} else
		e = NULL;
	if (e != NULL) {
		*shed = e->conn;
		conncap_remove(cc, e);
	}
	e = xcalloc(1, sizeof *e);
	e->conn = conn;
	memcpy(e->peer, peer, len);
	e->len = len;
	e->hold_until = ready ? now_ms + CONNCAP_READY_MS : INT64_MIN;
	TAILQ_INSERT_TAIL(&cc->ents, e, entry);
	cc->n++;
	cc->untrusted++;
	return 0;
}

int
conncap_trust(struct conncap *cc, void *conn)
{
	struct conncap_ent	*e = conncap_find(cc, conn);

	if (e == NULL)
		return ERR_NOT_FOUND;
	if (!e->trusted) {
		e->trusted = 1;
		cc->untrusted--;
	}
	return 0;
}

void
conncap_gone(struct conncap *cc, void *conn)
{
	struct conncap_ent	*e = conncap_find(cc, conn);

	if (e != NULL)
		conncap_remove(cc, e);
}

unsigned
conncap_count(const struct conncap *cc, unsigned *untrusted)
{
	if (untrusted != NULL)
		*untrusted = cc->untrusted;
	return cc->n;
}

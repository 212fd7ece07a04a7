/* SPDX-License-Identifier: MIT */
/*
 * The per-bot proxy relay (doc/DESIGN.md G-23).  Chromium cannot carry proxy
 * credentials on its command line, so guestd listens on
 * 127.0.0.1:<port derived from the profile path> and Chromium is started
 * with --proxy-server=http://127.0.0.1:<port>; the relay forwards each
 * plain HTTP request and each CONNECT tunnel to the bot's upstream proxy,
 * adding "Proxy-Authorization: Basic ...".  It starts and stops with that
 * bot's browser and serves only it: a connection is accepted only from a
 * socket of guestd's uid that the browser's main process or one of its
 * descendants holds (found through /proc/net/tcp and /proc/PID/fd);
 * anything else gets 403 before a byte is read, since whoever gets
 * through has the bot's credentials added.
 *
 * Port: PROXY_RELAY_PORT_BASE + (FNV-1a 64 of the profile path) mod
 * PROXY_RELAY_PORT_SPAN; when that port is taken the next ones are tried (at
 * most PROXY_RELAY_PORT_TRIES).  Credentials live only in the relay's memory
 * (wiped on stop) and never appear in logs, events, errors or process
 * arguments.
 *
 * All sockets are on guestd's loop; each direction has a bounded buffer
 * and the reading side pauses while the other side's buffer is full.
 */
#ifndef GUESTD_PROXY_RELAY_H
#define GUESTD_PROXY_RELAY_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#define PROXY_RELAY_PORT_BASE		20000
#define PROXY_RELAY_PORT_SPAN		10000
#define PROXY_RELAY_PORT_TRIES	16
#define PROXY_RELAY_BUF		(64 * 1024)
#define PROXY_RELAY_MAX_HEAD		(16 * 1024)

struct proxy_relay;

/*
 * Check an upstream proxy URL "http://host:port" (no userinfo, no path
 * beyond "/"); host and port out.  0 or ERR_BAD_REQUEST.
 */
int		 proxy_relay_parse_url(const char *url, char *host, size_t hostlen,
		    int *port);
/* The derived port for a profile path (before collisions). */
int		 proxy_relay_port_for(const char *profile);
/*
 * Start a relay for profile to upstream url with user/pass (either may be
 * NULL: no Proxy-Authorization).  *port gets the bound port.  0 or ERR_*.
 */
int		 proxy_relay_start(const char *profile, const char *url,
		    const char *user, const char *pass, struct proxy_relay **out,
		    int *port);
/* Close the listener and every connection; wipe the credentials. */
void		 proxy_relay_stop(struct proxy_relay *r);
/*
 * The browser the relay serves (its main process; its descendants are
 * served too).  Until it is set every connection is refused.
 */
void		 proxy_relay_set_owner(struct proxy_relay *r, pid_t pid);
/* Connections refused so far (not the bot's browser). */
uint64_t	 proxy_relay_refused(const struct proxy_relay *r);
/* Requests forwarded so far (tests, list). */
uint64_t	 proxy_relay_requests(const struct proxy_relay *r);

#endif

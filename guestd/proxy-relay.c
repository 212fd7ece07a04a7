/* SPDX-License-Identifier: MIT */
/*
 * The per-bot proxy relay (doc/DESIGN.md G-23): Chromium speaks plain HTTP
 * proxy to 127.0.0.1:<port>, we forward each request or CONNECT tunnel to the
 * upstream proxy with "Proxy-Authorization: Basic ..." added.
 *
 * A connection reads the request head (at most PROXY_RELAY_MAX_HEAD bytes),
 * rewrites it (our Proxy-Authorization replaces any the client sent; hop
 * headers go; a plain request gets "Connection: close" so every request
 * starts a new upstream connection and carries the credentials), connects
 * upstream and from then on only copies bytes.  Each direction has one
 * PROXY_RELAY_BUF buffer; a side stops being read while the buffer towards the
 * other is full (backpressure), so memory per connection is fixed.
 *
 * The upstream host is resolved once, off the loop (getaddrinfo blocks),
 * by a short-lived thread that posts the result back with loop_post.
 * Connections that arrive before the answer wait for it.
 *
 * Who may use it: only the bot's own browser, since whoever connects has
 * the bot's proxy credentials added.  Loopback TCP has no SO_PEERCRED,
 * so at accept the peer's socket is looked up in /proc/net/tcp (its
 * owner uid and inode): another uid is refused at once; a process of
 * our own uid is accepted only when one of the browser's processes (its
 * main process or a descendant) holds that socket.  Everything else gets
 * 403 and is closed before a byte of it is read.
 */
#include "autoconf.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "base64.h"
#include "err.h"
#include "log.h"
#include "loop.h"
#include "proxy-relay.h"
#include "queue-compat.h"
#include "xmalloc.h"

#define PROXY_RELAY_MAX_CONNS	256

enum proxy_relay_cstate { RC_HEAD, RC_WAIT_DNS, RC_CONNECTING, RC_PIPE };

struct proxy_relay_buf {
	uint8_t	data[PROXY_RELAY_BUF];
	size_t	off, len;
};

struct proxy_relay_conn {
	struct proxy_relay		*r;
	enum proxy_relay_cstate	 state;
	struct loop_fd		*cl, *up;
	struct proxy_relay_buf	 to_up, to_cl;
	int			 cl_eof, up_eof;	/* read side ended */
	int			 cl_shut, up_shut;	/* we shut its write */
	LIST_ENTRY(proxy_relay_conn) entry;	/* in r's conns */
};

struct proxy_relay {
	struct loop_fd		*lf;
	int			 port;
	char			 host[256];
	int			 upport;
	struct sockaddr_in	 up;
	int			 resolved;	/* 1 ok, -1 failed, 0 not yet */
	int			 stopped;
	pid_t			 owner;		/* the browser; 0 not yet */
	pid_t			 holder;	/* held the last accepted peer */
	uint64_t		 refused;
	char			*auth;		/* whole header line, or NULL */
	LIST_HEAD(, proxy_relay_conn) conns;
	unsigned		 nconns;
	uint64_t		 requests;
};

static void	proxy_relay_cl_cb(struct loop_fd *, int, void *);
static void	proxy_relay_up_cb(struct loop_fd *, int, void *);
static void	proxy_relay_connect(struct proxy_relay_conn *);

/* ---- small pure helpers ---------------------------------------------------- */

int
proxy_relay_parse_url(const char *url, char *host, size_t hostlen, int *port)
{
	const char	*p, *colon, *end;
	char		*ep;
	long		 v;

	if (strncasecmp(url, "http://", 7) != 0)
		return ERR_BAD_REQUEST;
	p = url + 7;
	end = p + strcspn(p, "/");
	if (*end == '/' && end[1] != '\0')
		return ERR_BAD_REQUEST;
	if (memchr(p, '@', (size_t)(end - p)) != NULL)
		return ERR_BAD_REQUEST;
	colon = memchr(p, ':', (size_t)(end - p));
	if (colon == NULL || colon == p || (size_t)(colon - p) >= hostlen)
		return ERR_BAD_REQUEST;
	if (strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789.-") != (size_t)(colon - p))
		return ERR_BAD_REQUEST;
	v = strtol(colon + 1, &ep, 10);
	if (ep != end || v < 1 || v > 65535)
		return ERR_BAD_REQUEST;
	memcpy(host, p, (size_t)(colon - p));
	host[colon - p] = '\0';
	*port = (int)v;
	return 0;
}

int
proxy_relay_port_for(const char *profile)
{
	uint64_t	h = 0xcbf29ce484222325ULL;
	const char	*p;

	for (p = profile; *p != '\0'; p++) {
		h ^= (unsigned char)*p;
		h *= 0x100000001b3ULL;
	}
	return PROXY_RELAY_PORT_BASE + (int)(h % PROXY_RELAY_PORT_SPAN);
}

static char *
proxy_relay_basic(const char *user, const char *pass)
{
	static const char	 head[] = "Proxy-Authorization: Basic ";
	char			*raw, *out;
	size_t			 n, o;

	if (asprintf(&raw, "%s:%s", user != NULL ? user : "",
	    pass != NULL ? pass : "") == -1)
		fatal("out of memory");
	n = strlen(raw);
	out = xmalloc(sizeof(head) - 1 + BASE64_SIZE(n) + 2);
	memcpy(out, head, sizeof(head) - 1);
	o = sizeof(head) - 1 + base64_encode(raw, n, out + sizeof(head) - 1);
	memcpy(out + o, "\r\n", 3);
	explicit_bzero(raw, n);
	free(raw);
	return out;
}

/* ---- who is connecting ----------------------------------------------------- */

/*
 * The owner uid and inode of the loopback TCP socket whose local end is
 * peer and remote end is us (/proc/net/tcp; addresses as the kernel
 * prints them: the raw 32-bit value in hex, ports in host order).
 */
static int
proxy_relay_peer_socket(const struct sockaddr_in *peer, const struct sockaddr_in *us,
    uid_t *uid, unsigned long *inode)
{
	char		 line[512];
	unsigned int	 la, lp, ra, rp, u;
	unsigned long	 ino;
	FILE		*f;
	int		 found = 0;

	if ((f = fopen("/proc/net/tcp", "re")) == NULL)
		return 0;
	while (!found && fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, " %*u: %8x:%4x %8x:%4x %*x %*x:%*x %*x:%*x "
		    "%*x %u %*d %lu", &la, &lp, &ra, &rp, &u, &ino) != 6)
			continue;
		if (la == peer->sin_addr.s_addr &&
		    lp == ntohs(peer->sin_port) &&
		    ra == us->sin_addr.s_addr && rp == ntohs(us->sin_port)) {
			*uid = (uid_t)u;
			*inode = ino;
			found = 1;
		}
	}
	fclose(f);
	return found;
}

/* Does process pid hold the socket with this inode? */
static int
proxy_relay_pid_holds(pid_t pid, unsigned long inode)
{
	char		 path[64], want[64], link[64];
	struct dirent	*e;
	DIR		*d;
	ssize_t		 n;
	int		 dfd, hit = 0;

	snprintf(path, sizeof path, "/proc/%ld/fd", (long)pid);
	snprintf(want, sizeof want, "socket:[%lu]", inode);
	if ((d = opendir(path)) == NULL)
		return 0;
	dfd = dirfd(d);
	while (!hit && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		n = readlinkat(dfd, e->d_name, link, sizeof link - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		hit = strcmp(link, want) == 0;
	}
	closedir(d);
	return hit;
}

/* Parent of pid from /proc/pid/stat (after the command's ")"), or -1. */
static pid_t
proxy_relay_ppid(const char *pid)
{
	char	 path[300], buf[512], *p;
	ssize_t	 n;
	long	 pp;
	int	 fd;

	snprintf(path, sizeof path, "/proc/%s/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 1, " %*c %ld", &pp) != 1)
		return -1;
	return (pid_t)pp;
}

/* Is pid owner or a descendant of it (its parents, walked up)? */
static int
proxy_relay_descends(pid_t pid, pid_t owner)
{
	char	 s[24];
	int	 depth;

	for (depth = 0; depth < 64 && pid > 1; depth++) {
		if (pid == owner)
			return 1;
		snprintf(s, sizeof s, "%ld", (long)pid);
		pid = proxy_relay_ppid(s);
	}
	return 0;
}

/*
 * Is the socket inode held by owner or one of its descendants?  *holder
 * gets the process that holds it.  The processes of our uid are listed
 * with their parents, the owner's subtree marked (parents may come after
 * their children in /proc), and the marked ones searched.
 */
static int
proxy_relay_tree_holds(pid_t owner, unsigned long inode, pid_t *holder)
{
	struct proc { pid_t pid, ppid; int in; } *v = NULL;
	struct dirent	*e;
	struct stat	 st;
	size_t		 n = 0, cap = 0, i, j;
	DIR		*d;
	int		 grew, hit = 0;

	if ((d = opendir("/proc")) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9' ||
		    fstatat(dirfd(d), e->d_name, &st, 0) != 0 ||
		    st.st_uid != getuid())
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			v = xrealloc(v, cap * sizeof *v);
		}
		v[n].pid = (pid_t)atol(e->d_name);
		v[n].ppid = proxy_relay_ppid(e->d_name);
		v[n].in = v[n].pid == owner;
		n++;
	}
	closedir(d);
	do {
		grew = 0;
		for (i = 0; i < n; i++) {
			if (v[i].in)
				continue;
			for (j = 0; j < n; j++)
				if (v[j].in && v[j].pid == v[i].ppid) {
					v[i].in = grew = 1;
					break;
				}
		}
	} while (grew);
	for (i = 0; i < n && !hit; i++)
		if (v[i].in && (hit = proxy_relay_pid_holds(v[i].pid, inode)))
			*holder = v[i].pid;
	free(v);
	return hit;
}

/* May the peer of fd use the relay?  Only the bot's browser may. */
static int
proxy_relay_peer_ok(struct proxy_relay *r, int fd)
{
	struct sockaddr_in	 peer, us;
	socklen_t		 pl = sizeof peer, ul = sizeof us;
	struct timespec		 t0, t1;
	unsigned long		 inode = 0;
	uid_t			 uid = (uid_t)-1;

	if (r->owner <= 0 ||
	    getpeername(fd, (struct sockaddr *)&peer, &pl) != 0 ||
	    getsockname(fd, (struct sockaddr *)&us, &ul) != 0 ||
	    peer.sin_family != AF_INET ||
	    !proxy_relay_peer_socket(&peer, &us, &uid, &inode) || inode == 0)
		goto refuse;
	if (uid != getuid())
		goto refuse;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/*
	 * The browser's network process opens nearly every connection:
	 * look there first, its ancestry checked again since its pid may
	 * have gone to another process of our uid; else walk the tree.
	 */
	if (r->holder <= 0 || !proxy_relay_pid_holds(r->holder, inode) ||
	    !proxy_relay_descends(r->holder, r->owner)) {
		r->holder = 0;
		if (!proxy_relay_tree_holds(r->owner, inode, &r->holder))
			goto refuse;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* What the /proc walk costs each connection of the browser. */
	log_debug("relay.peer_ok", "port=%d us=%ld", r->port,
	    (long)((t1.tv_sec - t0.tv_sec) * 1000000 +
	    (t1.tv_nsec - t0.tv_nsec) / 1000));
	return 1;
refuse:
	r->refused++;
	log_warn("relay.refused", "port=%d peer_uid=%ld", r->port,
	    uid == (uid_t)-1 ? -1L : (long)uid);
	return 0;
}

/* ---- connections ----------------------------------------------------------- */

static void
proxy_relay_conn_free(struct proxy_relay_conn *rc)
{
	LIST_REMOVE(rc, entry);
	rc->r->nconns--;
	loop_fd_close(rc->cl);
	loop_fd_close(rc->up);
	/* It may hold a request head with the credentials. */
	explicit_bzero(&rc->to_up, sizeof rc->to_up);
	free(rc);
}

/* Answer the client with a short error and close after it. */
static void
proxy_relay_conn_error(struct proxy_relay_conn *rc, const char *status)
{
	int	n;

	if (rc->cl == NULL) {
		proxy_relay_conn_free(rc);
		return;
	}
	n = snprintf((char *)rc->to_cl.data, sizeof rc->to_cl.data,
	    "HTTP/1.1 %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
	    status);
	rc->to_cl.off = 0;
	rc->to_cl.len = (size_t)n;
	rc->up_eof = 1;
	rc->cl_eof = 1;	/* nothing more is read: close once it is sent */
	loop_fd_close(rc->up);
	rc->up = NULL;
	rc->to_up.len = rc->to_up.off = 0;
	rc->state = RC_PIPE;
	loop_fd_want_read(rc->cl, 0);
	loop_fd_want_write(rc->cl);
}

/* Write what b holds to lf; 0, or -1 on a dead peer. */
static int
proxy_relay_flush(struct proxy_relay_buf *b, struct loop_fd *lf)
{
	int	r;

	if ((r = loop_fd_write_pending(lf, b->data, b->len, &b->off)) < 0)
		return -1;
	if (r > 0)
		b->off = b->len = 0;
	return 0;
}

/* Read from lf into b while there is room; *eof when the peer closed. */
static int
proxy_relay_fill(struct proxy_relay_buf *b, struct loop_fd *lf, int *eof)
{
	ssize_t	n;

	if (b->off > 0 && b->off == b->len)
		b->off = b->len = 0;
	while (b->len < sizeof b->data) {
		n = read(loop_fd_get(lf), b->data + b->len,
		    sizeof b->data - b->len);
		if (n > 0) {
			b->len += (size_t)n;
			continue;
		}
		if (n == 0) {
			*eof = 1;
			return 0;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		return -1;
	}
	return 0;
}

/*
 * Pump both directions as far as buffers allow; close the connection
 * once both sides ended and everything was delivered.
 */
static void
proxy_relay_pump(struct proxy_relay_conn *rc)
{
	if (rc->state != RC_PIPE)
		return;
	if (rc->up != NULL && proxy_relay_flush(&rc->to_up, rc->up) != 0)
		goto dead;
	if (rc->cl != NULL && proxy_relay_flush(&rc->to_cl, rc->cl) != 0)
		goto dead;
	/* Resume reading a side whose target buffer has room again. */
	if (rc->cl != NULL && !rc->cl_eof)
		loop_fd_want_read(rc->cl, rc->to_up.len < sizeof rc->to_up.data);
	if (rc->up != NULL && !rc->up_eof)
		loop_fd_want_read(rc->up, rc->to_cl.len < sizeof rc->to_cl.data);
	if (rc->cl_eof && rc->to_up.len == 0 && rc->up != NULL &&
	    !rc->up_shut) {
		(void)shutdown(loop_fd_get(rc->up), SHUT_WR);
		rc->up_shut = 1;
	}
	if (rc->up_eof && rc->to_cl.len == 0 && rc->cl != NULL &&
	    !rc->cl_shut) {
		(void)shutdown(loop_fd_get(rc->cl), SHUT_WR);
		rc->cl_shut = 1;
	}
	if ((rc->cl_eof || rc->cl == NULL) && (rc->up_eof || rc->up == NULL) &&
	    rc->to_up.len == 0 && rc->to_cl.len == 0)
		goto dead;
	if (rc->cl == NULL && rc->to_cl.len > 0)
		goto dead;
	return;
dead:
	proxy_relay_conn_free(rc);
}

/* Header names that must not pass (ours or hop-by-hop). */
static int
proxy_relay_drop_header(const char *line, size_t n)
{
	static const char *const drop[] = { "proxy-authorization:",
	    "proxy-connection:", "connection:", "keep-alive:", NULL };
	size_t	i, k;

	for (i = 0; drop[i] != NULL; i++) {
		k = strlen(drop[i]);
		if (n >= k && strncasecmp(line, drop[i], k) == 0)
			return 1;
	}
	return 0;
}

/*
 * The head is complete in to_up.data[0..headlen): rewrite it in place
 * (into a scratch copy) and connect.  Bad requests get 400.
 */
static void
proxy_relay_head(struct proxy_relay_conn *rc, size_t headlen)
{
	struct proxy_relay	*r = rc->r;
	char		*head, *out, *line, *nl, *sp;
	size_t		 rest, o = 0, cap, n;
	int		 connect_req;

	head = xstrndup((const char *)rc->to_up.data, headlen);
	rest = rc->to_up.len - headlen;
	cap = headlen + 512 + (r->auth != NULL ? strlen(r->auth) : 0);
	out = xmalloc(cap);
	/* Request line: METHOD SP TARGET SP HTTP/1.x */
	nl = strstr(head, "\r\n");
	sp = strchr(head, ' ');
	if (nl == NULL || sp == NULL || sp > nl) {
		proxy_relay_conn_error(rc, "400 Bad Request");
		goto out;
	}
	connect_req = (size_t)(sp - head) == 7 && strncmp(head, "CONNECT", 7) ==
	    0;
	if (!connect_req && strncasecmp(sp + 1, "http://", 7) != 0) {
		proxy_relay_conn_error(rc, "400 Bad Request");
		goto out;
	}
	n = (size_t)(nl - head) + 2;
	memcpy(out, head, n);
	o = n;
	for (line = nl + 2; (nl = strstr(line, "\r\n")) != NULL &&
	    nl != line; line = nl + 2) {
		n = (size_t)(nl - line) + 2;
		if (proxy_relay_drop_header(line, n))
			continue;
		memcpy(out + o, line, n);
		o += n;
	}
	if (r->auth != NULL) {
		memcpy(out + o, r->auth, strlen(r->auth));
		o += strlen(r->auth);
	}
	if (!connect_req) {
		memcpy(out + o, "Connection: close\r\n", 19);
		o += 19;
	}
	memcpy(out + o, "\r\n", 2);
	o += 2;
	if (o + rest > sizeof rc->to_up.data) {
		proxy_relay_conn_error(rc, "431 Request Header Fields Too Large");
		goto out;
	}
	memmove(rc->to_up.data + o, rc->to_up.data + headlen, rest);
	memcpy(rc->to_up.data, out, o);
	rc->to_up.off = 0;
	rc->to_up.len = o + rest;
	r->requests++;
	/* No method or URL in the log: they may name what the bot visits. */
	log_debug("relay.request", "port=%d connect=%d", r->port, connect_req);
	loop_fd_want_read(rc->cl, 0);
	if (r->resolved == 0)
		rc->state = RC_WAIT_DNS;
	else
		proxy_relay_connect(rc);
out:
	explicit_bzero(out, cap);
	free(out);
	explicit_bzero(head, headlen);
	free(head);
}

static void
proxy_relay_connect(struct proxy_relay_conn *rc)
{
	int	fd, one = 1;

	if (rc->r->resolved < 0) {
		proxy_relay_conn_error(rc, "502 Bad Gateway");
		return;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		proxy_relay_conn_error(rc, "502 Bad Gateway");
		return;
	}
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, (struct sockaddr *)&rc->r->up, sizeof rc->r->up) ==
	    -1 && errno != EINPROGRESS) {
		close(fd);
		proxy_relay_conn_error(rc, "502 Bad Gateway");
		return;
	}
	rc->state = RC_CONNECTING;
	if ((rc->up = loop_fd_add(fd, proxy_relay_up_cb, rc)) == NULL) {
		proxy_relay_conn_error(rc, "502 Bad Gateway");
		return;
	}
	loop_fd_want_read(rc->up, 0);
	loop_fd_want_write(rc->up);
}

static void
proxy_relay_cl_cb(struct loop_fd *lf, int events, void *arg)
{
	struct proxy_relay_conn	*rc = arg;
	uint8_t			*end;
	int			 eof = 0;

	if (events & LOOP_HUP)
		rc->cl = lf;	/* still valid during this call */
	if (events & (LOOP_READ | LOOP_HUP)) {
		if (rc->state == RC_HEAD || rc->state == RC_PIPE) {
			if (proxy_relay_fill(&rc->to_up, lf, &eof) != 0)
				eof = 1;
		}
		if (eof)
			rc->cl_eof = 1;
	}
	if (rc->state == RC_HEAD) {
		end = memmem(rc->to_up.data, rc->to_up.len, "\r\n\r\n", 4);
		if (end != NULL && (size_t)(end - rc->to_up.data) + 4 <=
		    PROXY_RELAY_MAX_HEAD) {
			if (events & LOOP_HUP)
				rc->cl = NULL;
			proxy_relay_head(rc, (size_t)(end - rc->to_up.data) + 4);
			return;
		}
		if (rc->to_up.len >= PROXY_RELAY_MAX_HEAD || eof) {
			if (events & LOOP_HUP)
				rc->cl = NULL;
			if (eof) {
				proxy_relay_conn_free(rc);
				return;
			}
			proxy_relay_conn_error(rc,
			    "431 Request Header Fields Too Large");
			return;
		}
		if (events & LOOP_HUP) {
			rc->cl = NULL;
			proxy_relay_conn_free(rc);
		}
		return;
	}
	if (events & LOOP_HUP) {
		/* Flush what we can now; the fd goes after this call. */
		proxy_relay_flush(&rc->to_cl, lf);
		rc->cl = NULL;
		rc->cl_eof = 1;
		rc->to_cl.len = rc->to_cl.off = 0;
	}
	proxy_relay_pump(rc);
}

static void
proxy_relay_up_cb(struct loop_fd *lf, int events, void *arg)
{
	struct proxy_relay_conn	*rc = arg;
	socklen_t		 sl = sizeof(int);
	int			 eof = 0, soerr = 0;

	if (rc->state == RC_CONNECTING) {
		if (getsockopt(loop_fd_get(lf), SOL_SOCKET, SO_ERROR, &soerr,
		    &sl) == -1 || soerr != 0) {
			if (events & LOOP_HUP)
				rc->up = NULL;
			proxy_relay_conn_error(rc, "502 Bad Gateway");
			return;
		}
		rc->state = RC_PIPE;
		loop_fd_want_read(rc->up, 1);
		if (rc->cl != NULL && !rc->cl_eof)
			loop_fd_want_read(rc->cl, 1);
	}
	if (events & (LOOP_READ | LOOP_HUP)) {
		if (proxy_relay_fill(&rc->to_cl, lf, &eof) != 0)
			eof = 1;
		if (eof)
			rc->up_eof = 1;
	}
	if (events & LOOP_HUP) {
		proxy_relay_flush(&rc->to_up, lf);
		rc->up = NULL;
		rc->up_eof = 1;
		rc->to_up.len = rc->to_up.off = 0;
	}
	proxy_relay_pump(rc);
}

static void
proxy_relay_accept_cb(struct loop_fd *lf, int events, void *arg)
{
	struct proxy_relay		*r = arg;
	struct proxy_relay_conn	*rc;
	int			 fd;

	if (events & LOOP_HUP) {
		r->lf = NULL;
		return;
	}
	for (;;) {
		fd = accept4(loop_fd_get(lf), NULL, NULL,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1)
			return;
		if (r->nconns >= PROXY_RELAY_MAX_CONNS) {
			close(fd);
			continue;
		}
		if (!proxy_relay_peer_ok(r, fd)) {
			static const char no[] = "HTTP/1.1 403 Forbidden\r\n"
			    "Content-Length: 0\r\nConnection: close\r\n\r\n";

			(void)!write(fd, no, sizeof no - 1);
			close(fd);
			continue;
		}
		rc = xcalloc(1, sizeof *rc);
		rc->r = r;
		rc->state = RC_HEAD;
		if ((rc->cl = loop_fd_add(fd, proxy_relay_cl_cb, rc)) == NULL) {
			free(rc);
			continue;
		}
		LIST_INSERT_HEAD(&r->conns, rc, entry);
		r->nconns++;
	}
}

/* ---- resolving ------------------------------------------------------------- */

struct proxy_relay_dns {
	struct proxy_relay		*r;
	char			 host[256];
	int			 port;
	int			 ok;
	struct sockaddr_in	 sin;
};

static struct proxy_relay_dns	*proxy_relay_dns_pending[64];

static void
proxy_relay_dns_done(void *arg)
{
	struct proxy_relay_dns	*q = arg;
	struct proxy_relay		*r = q->r;
	struct proxy_relay_conn	*rc, *next;
	size_t			 i;

	for (i = 0; i < sizeof proxy_relay_dns_pending / sizeof
	    proxy_relay_dns_pending[0]; i++) {
		if (proxy_relay_dns_pending[i] == q)
			proxy_relay_dns_pending[i] = NULL;
	}
	if (r != NULL) {
		r->resolved = q->ok ? 1 : -1;
		if (q->ok)
			r->up = q->sin;
		else
			log_warn("relay.resolve_failed", "port=%d", r->port);
		LIST_FOREACH_SAFE(rc, &r->conns, entry, next) {
			if (rc->state == RC_WAIT_DNS)
				proxy_relay_connect(rc);
		}
	}
	free(q);
}

static void *
proxy_relay_dns_thread(void *arg)
{
	struct proxy_relay_dns	*q = arg;
	struct addrinfo		 hints, *res = NULL;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(q->host, NULL, &hints, &res) == 0 && res != NULL) {
		memcpy(&q->sin, res->ai_addr, sizeof q->sin);
		q->sin.sin_port = htons((uint16_t)q->port);
		q->ok = 1;
	}
	if (res != NULL)
		freeaddrinfo(res);
	loop_post(proxy_relay_dns_done, q);
	return NULL;
}

static void
proxy_relay_resolve(struct proxy_relay *r)
{
	struct proxy_relay_dns	*q;
	pthread_attr_t		 attr;
	pthread_t		 t;
	size_t			 i;

	memset(&r->up, 0, sizeof r->up);
	r->up.sin_family = AF_INET;
	r->up.sin_port = htons((uint16_t)r->upport);
	if (inet_pton(AF_INET, r->host, &r->up.sin_addr) == 1) {
		r->resolved = 1;
		return;
	}
	q = xcalloc(1, sizeof *q);
	q->r = r;
	q->port = r->upport;
	snprintf(q->host, sizeof q->host, "%s", r->host);
	for (i = 0; i < sizeof proxy_relay_dns_pending / sizeof
	    proxy_relay_dns_pending[0]; i++) {
		if (proxy_relay_dns_pending[i] == NULL) {
			proxy_relay_dns_pending[i] = q;
			break;
		}
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (i == sizeof proxy_relay_dns_pending / sizeof proxy_relay_dns_pending[0] ||
	    pthread_create(&t, &attr, proxy_relay_dns_thread, q) != 0) {
		if (i < sizeof proxy_relay_dns_pending / sizeof proxy_relay_dns_pending[0])
			proxy_relay_dns_pending[i] = NULL;
		free(q);
		r->resolved = -1;
	}
	pthread_attr_destroy(&attr);
}

/* ---- public ---------------------------------------------------------------- */

static int
proxy_relay_listen(int port)
{
	struct sockaddr_in	sin;
	int			fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof sin) == -1 ||
	    listen(fd, 64) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

int
proxy_relay_start(const char *profile, const char *url, const char *user,
    const char *pass, struct proxy_relay **out, int *port)
{
	struct proxy_relay	*r;
	int		 fd = -1, base, i;

	*out = NULL;
	*port = 0;
	r = xcalloc(1, sizeof *r);
	if (proxy_relay_parse_url(url, r->host, sizeof r->host, &r->upport) != 0) {
		free(r);
		return ERR_BAD_REQUEST;
	}
	base = proxy_relay_port_for(profile);
	for (i = 0; i < PROXY_RELAY_PORT_TRIES; i++) {
		r->port = PROXY_RELAY_PORT_BASE + (base - PROXY_RELAY_PORT_BASE + i) %
		    PROXY_RELAY_PORT_SPAN;
		if ((fd = proxy_relay_listen(r->port)) != -1)
			break;
	}
	if (fd == -1) {
		free(r);
		return ERR_BUSY;
	}
	if ((r->lf = loop_fd_add(fd, proxy_relay_accept_cb, r)) == NULL) {
		free(r);
		return ERR_INTERNAL;
	}
	if (user != NULL || pass != NULL)
		r->auth = proxy_relay_basic(user, pass);
	proxy_relay_resolve(r);
	/* Whether a login is added, never which: "auth=" would be masked. */
	log_info("relay.start", "port=%d upstream_port=%d with_login=%d",
	    r->port, r->upport, r->auth != NULL);
	*out = r;
	*port = r->port;
	return 0;
}

void
proxy_relay_stop(struct proxy_relay *r)
{
	size_t	i;

	if (r == NULL)
		return;
	while (!LIST_EMPTY(&r->conns))
		proxy_relay_conn_free(LIST_FIRST(&r->conns));
	loop_fd_close(r->lf);
	/* A resolver still running must not touch r when it answers. */
	for (i = 0; i < sizeof proxy_relay_dns_pending / sizeof
	    proxy_relay_dns_pending[0]; i++) {
		if (proxy_relay_dns_pending[i] != NULL &&
		    proxy_relay_dns_pending[i]->r == r)
			proxy_relay_dns_pending[i]->r = NULL;
	}
	if (r->auth != NULL) {
		explicit_bzero(r->auth, strlen(r->auth));
		free(r->auth);
	}
	log_info("relay.stop", "port=%d requests=%llu refused=%llu", r->port,
	    (unsigned long long)r->requests, (unsigned long long)r->refused);
	free(r);
}

void
proxy_relay_set_owner(struct proxy_relay *r, pid_t pid)
{
	if (r != NULL) {
		r->owner = pid;
		r->holder = 0;
	}
}

uint64_t
proxy_relay_refused(const struct proxy_relay *r)
{
	return r != NULL ? r->refused : 0;
}

uint64_t
proxy_relay_requests(const struct proxy_relay *r)
{
	return r != NULL ? r->requests : 0;
}

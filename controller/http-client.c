/* SPDX-License-Identifier: MIT */
/*
 * The CLI's HTTP/1.1 client (http-client.h).  Bounded reads, one request
 * per connection, Content-Length trusted only up to what arrived.  Streams
 * move one chunk at a time through a fixed buffer, so a file of any size
 * costs the same memory.
 */
#include "autoconf.h"

#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "http-client.h"
#include "http-head.h"
#include "xmalloc.h"

#define HTTP_CLIENT_HDR_MAX	(64 * 1024)
#define HTTP_CLIENT_ERR_MAX	(1024 * 1024)
#define HTTP_CLIENT_CHUNK	(256 * 1024)

static int
http_client_connect(const char *base, char *host, size_t hostlen, int *fdp,
    struct errmsg *err)
{
	struct addrinfo	 hints, *ai = NULL, *p;
	const char	*h, *colon;
	char		 port[8];
	int		 fd = -1;

	*fdp = -1;
	if (strncmp(base, "http://", 7) != 0)
		return errmsg_set(err, ERR_CONFIG, "the controller URL must "
		    "start with http://");
	h = base + 7;
	if ((colon = strrchr(h, ':')) == NULL || (size_t)(colon - h) >=
	    hostlen)
		return errmsg_set(err, ERR_CONFIG, "the controller URL needs "
		    "HOST:PORT");
	memcpy(host, h, (size_t)(colon - h));
	host[colon - h] = '\0';
	snprintf(port, sizeof port, "%.*s", (int)strcspn(colon + 1, "/"),
	    colon + 1);
	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &hints, &ai) != 0)
		return errmsg_set(err, ERR_CONNECT, "cannot resolve the "
		    "controller's host");
	for (p = ai; p != NULL; p = p->ai_next) {
		fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if (connect(fd, p->ai_addr, p->ai_addrlen) == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		return errmsg_set(err, ERR_CONNECT, "cannot connect to the "
		    "controller at %s: %s", base, strerror(errno));
	*fdp = fd;
	return 0;
}

static int
http_client_send(int fd, const char *p, size_t n)
{
	ssize_t	 w;

	while (n > 0) {
		w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return ERR_CONNECT;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

void
http_client_resp_free(struct http_client_resp *r)
{
	free(r->body);
	r->body = NULL;
}

int
http_client_request(const char *base, const char *method, const char *path,
    const char *token, const char *body, size_t len,
    struct http_client_resp *out, struct errmsg *err)
{
	char	 host[256], hdr[1024 + 600], *buf = NULL, *sep, *b;
	size_t	 n = 0, cap = 0, hl;
	ssize_t	 rd;
	int	 fd = -1, r;

	memset(out, 0, sizeof *out);
	if ((r = http_client_connect(base, host, sizeof host, &fd, err)) != 0)
		return r;
	hl = (size_t)snprintf(hdr, sizeof hdr, "%s %s HTTP/1.1\r\nHost: %s\r\n"
	    "Connection: close\r\nContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\n%s%s%s\r\n", method, path, host, len,
	    token != NULL ? "Authorization: Bearer " : "",
	    token != NULL ? token : "", token != NULL ? "\r\n" : "");
	explicit_bzero(hdr + hl, sizeof hdr - hl);
	if (hl >= sizeof hdr || (r = http_client_send(fd, hdr, hl)) != 0 ||
	    (len > 0 && (r = http_client_send(fd, body, len)) != 0)) {
		explicit_bzero(hdr, sizeof hdr);
		r = errmsg_set(err, ERR_CONNECT, "the controller closed the "
		    "connection");
		goto out;
	}
	explicit_bzero(hdr, sizeof hdr);
	for (;;) {
		if (n + 65536 + 1 > cap) {
			cap = (n + 65536 + 1) * 2;
			buf = xrealloc(buf, cap);
		}
		rd = recv(fd, buf + n, cap - n - 1, 0);
		if (rd < 0 && errno == EINTR)
			continue;
		if (rd < 0) {
			r = errmsg_set(err, ERR_CONNECT, "reading the reply: "
			    "%s", strerror(errno));
			goto out;
		}
		if (rd == 0)
			break;
		n += (size_t)rd;
		if (n > HTTP_CLIENT_MAX) {
			r = errmsg_set(err, ERR_TOO_LARGE, "the reply is too "
			    "large");
			goto out;
		}
	}
	if (buf == NULL || n < 12 || strncmp(buf, "HTTP/1.", 7) != 0) {
		r = errmsg_set(err, ERR_PROTOCOL, "the controller sent no HTTP "
		    "reply");
		goto out;
	}
	buf[n] = '\0';
	if ((sep = strstr(buf, "\r\n\r\n")) == NULL) {
		r = errmsg_set(err, ERR_PROTOCOL, "the controller's reply is "
		    "cut short");
		goto out;
	}
	if (http_head_status(buf, (size_t)(sep - buf), &out->status) != 0) {
		r = errmsg_set(err, ERR_PROTOCOL, "the controller sent no "
		    "HTTP reply");
		goto out;
	}
	b = sep + 4;
	out->len = n - (size_t)(b - buf);
	out->body = xmalloc(out->len + 1);
	memcpy(out->body, b, out->len);
	out->body[out->len] = '\0';
	r = 0;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return r;
}

/* ---- streams ---------------------------------------------------------- */

/*
 * Send len bytes from src as the socket takes them.  A readable socket
 * means the server answered (or left) before the end: stop and read that.
 */
static int
http_client_send_body(int fd, long long len, http_client_src src,
    void *arg, struct errmsg *err)
{
	struct pollfd	 pfd;
	char		*buf = xmalloc(HTTP_CLIENT_CHUNK);
	size_t		 have = 0, off = 0;
	long long	 left = len;
	ssize_t		 n, w;
	int		 r = 0;

	while (left > 0 || off < have) {
		pfd.fd = fd;
		pfd.events = POLLIN | POLLOUT;
		pfd.revents = 0;
		if (poll(&pfd, 1, -1) == -1) {
			if (errno == EINTR)
				continue;
			r = ERR_CONNECT;
			errmsg_set(err, r, "poll: %s", strerror(errno));
			break;
		}
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR))
			break;
		if (off == have) {
			n = src(arg, buf, left < HTTP_CLIENT_CHUNK ?
			    (size_t)left : HTTP_CLIENT_CHUNK);
			if (n <= 0) {
				r = n < 0 ? (int)n : ERR_IO;
				errmsg_set(err, r, "the input ended %lld "
				    "bytes before its announced size", left);
				break;
			}
			have = (size_t)n;
			off = 0;
			left -= n;
		}
		w = send(fd, buf + off, have - off, MSG_NOSIGNAL |
		    MSG_DONTWAIT);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (w < 0)
			break;	/* the server went: read what it said */
		off += (size_t)w;
	}
	free(buf);
	return r;
}

static int
http_client_recv(int fd, char *p, size_t max, size_t *got, struct errmsg *err)
{
	ssize_t	 rd;

	*got = 0;
	do
		rd = recv(fd, p, max, 0);
	while (rd < 0 && errno == EINTR);
	if (rd < 0)
		return errmsg_set(err, ERR_CONNECT, "reading the reply: %s",
		    strerror(errno));
	*got = (size_t)rd;
	return 0;
}

/* The status line and headers; buf keeps what was read past them. */
static int
http_client_head(int fd, char *buf, size_t *n, struct http_client_resp *out,
    long long *clen, size_t *hdrlen, struct errmsg *err)
{
	char	*sep = NULL;
	size_t	 k;
	int64_t	 len;
	int	 r, h;

	*n = 0;
	while (sep == NULL) {
		if (*n >= HTTP_CLIENT_HDR_MAX)
			return errmsg_set(err, ERR_PROTOCOL, "the reply's "
			    "headers are too large");
		if ((r = http_client_recv(fd, buf + *n, HTTP_CLIENT_HDR_MAX -
		    *n, &k, err)) != 0)
			return r;
		if (k == 0)
			break;
		*n += k;
		buf[*n] = '\0';
		sep = strstr(buf, "\r\n\r\n");
	}
	if (sep == NULL || (h = http_head_parse(buf, *n, HTTP_CLIENT_HDR_MAX,
	    &out->status, &len)) <= 0)
		return errmsg_set(err, ERR_PROTOCOL, "the controller sent no "
		    "HTTP reply");
	*clen = len;
	*hdrlen = (size_t)h;
	return 0;
}

/* A reply's body: to sink (2xx), else kept in out->body (capped). */
static int
http_client_body(int fd, char *buf, size_t have, long long clen,
    http_client_sink sink, void *arg, struct http_client_resp *out,
    struct errmsg *err)
{
	long long	 got = 0;
	size_t		 k, cap = 0;
	int		 r, keep = sink == NULL || out->status < 200 ||
			    out->status > 299;

	for (;;) {
		if (clen >= 0 && (long long)have > clen - got)
			have = (size_t)(clen - got);
		if (have > 0 && keep) {
			if (out->len + have > HTTP_CLIENT_ERR_MAX)
				return errmsg_set(err, ERR_TOO_LARGE, "the "
				    "reply is too large");
			if (out->len + have + 1 > cap) {
				cap = (out->len + have + 1) * 2;
				out->body = xrealloc(out->body, cap);
			}
			memcpy(out->body + out->len, buf, have);
			out->len += have;
			out->body[out->len] = '\0';
		} else if (have > 0 && sink(arg, buf, have) != 0) {
			return errmsg_set(err, ERR_IO, "cannot write the "
			    "output: %s", strerror(errno));
		}
		got += (long long)have;
		if (clen >= 0 && got == clen)
			break;
		if ((r = http_client_recv(fd, buf, HTTP_CLIENT_CHUNK, &k,
		    err)) != 0)
			return r;
		if (k == 0)
			break;
		have = k;
	}
	if (clen >= 0 && got < clen)
		return errmsg_set(err, ERR_PROTOCOL, "the transfer was cut "
		    "short after %lld of %lld bytes", got, clen);
	if (out->body == NULL)
		out->body = xstrdup("");
	return 0;
}

int
http_client_stream(const char *base, const char *method, const char *path,
    const char *token, long long len, http_client_src src, void *src_arg,
    http_client_sink sink, void *sink_arg, struct http_client_resp *out,
    struct errmsg *err)
{
	char		 host[256], cl[96], *hdr, *buf = NULL;
	size_t		 hl, hcap, n = 0, hdrlen = 0;
	long long	 clen = -1;
	int		 fd = -1, r;

	memset(out, 0, sizeof *out);
	if ((r = http_client_connect(base, host, sizeof host, &fd, err)) != 0)
		return r;
	cl[0] = '\0';
	if (len >= 0)
		snprintf(cl, sizeof cl, "Content-Type: application/octet-stream"
		    "\r\nContent-Length: %lld\r\n", len);
	/* The path carries a %-escaped file name: size for it. */
	hcap = strlen(path) + 1024 + 600;
	hdr = xmalloc(hcap);
	hl = (size_t)snprintf(hdr, hcap, "%s %s HTTP/1.1\r\nHost: %s\r\n"
	    "Connection: close\r\n%s%s%s%s\r\n", method, path, host, cl,
	    token != NULL ? "Authorization: Bearer " : "",
	    token != NULL ? token : "", token != NULL ? "\r\n" : "");
	r = hl >= hcap ? ERR_INTERNAL : http_client_send(fd, hdr, hl);
	explicit_bzero(hdr, hcap);
	free(hdr);
	if (r != 0) {
		r = errmsg_set(err, ERR_CONNECT, "the controller closed the "
		    "connection");
		goto out;
	}
	if (len > 0 && (r = http_client_send_body(fd, len, src, src_arg,
	    err)) != 0)
		goto out;
	buf = xmalloc(HTTP_CLIENT_HDR_MAX + HTTP_CLIENT_CHUNK + 1);
	if ((r = http_client_head(fd, buf, &n, out, &clen, &hdrlen, err)) != 0)
		goto out;
	memmove(buf, buf + hdrlen, n - hdrlen);
	r = http_client_body(fd, buf, n - hdrlen, clen, sink, sink_arg, out,
	    err);
out:
	if (r != 0)
		http_client_resp_free(out);
	free(buf);
	if (fd >= 0)
		close(fd);
	return r;
}

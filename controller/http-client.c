/*
 * The CLI's HTTP/1.1 client (http-client.h).  Bounded reads, one request
 * per connection, Content-Length trusted only up to what arrived.
 */
#include "autoconf.h"

#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "log.h"
#include "http-client.h"

static int
http_client_connect(const char *base, char *host, size_t hostlen, int *fdp,
    char *err, size_t errlen)
{
	struct addrinfo	 hints, *ai = NULL, *p;
	const char	*h, *colon;
	char		 port[8];
	int		 fd = -1;

	*fdp = -1;
	if (strncmp(base, "http://", 7) != 0) {
		snprintf(err, errlen, "the controller URL must start with "
		    "http://");
		return ERR_CONFIG;
	}
	h = base + 7;
	if ((colon = strrchr(h, ':')) == NULL || (size_t)(colon - h) >=
	    hostlen) {
		snprintf(err, errlen, "the controller URL needs HOST:PORT");
		return ERR_CONFIG;
	}
	memcpy(host, h, (size_t)(colon - h));
	host[colon - h] = '\0';
	snprintf(port, sizeof port, "%.*s", (int)strcspn(colon + 1, "/"),
	    colon + 1);
	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &hints, &ai) != 0) {
		snprintf(err, errlen, "cannot resolve the controller's host");
		return ERR_CONNECT;
	}
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
	if (fd < 0) {
		snprintf(err, errlen, "cannot connect to the controller at %s: "
		    "%s", base, strerror(errno));
		return ERR_CONNECT;
	}
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
    struct http_client_resp *out, char *err, size_t errlen)
{
	char	 host[256], hdr[1024 + 600], *buf = NULL, *sep, *b;
	size_t	 n = 0, cap = 0, hl;
	ssize_t	 rd;
	int	 fd = -1, r;

	memset(out, 0, sizeof *out);
	if ((r = http_client_connect(base, host, sizeof host, &fd, err,
	    errlen)) != 0)
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
		snprintf(err, errlen, "the controller closed the connection");
		r = ERR_CONNECT;
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
			snprintf(err, errlen, "reading the reply: %s",
			    strerror(errno));
			r = ERR_CONNECT;
			goto out;
		}
		if (rd == 0)
			break;
		n += (size_t)rd;
		if (n > HTTP_CLIENT_MAX) {
			snprintf(err, errlen, "the reply is too large");
			r = ERR_TOO_LARGE;
			goto out;
		}
	}
	if (buf == NULL || n < 12 || strncmp(buf, "HTTP/1.", 7) != 0) {
		snprintf(err, errlen, "the controller sent no HTTP reply");
		r = ERR_PROTOCOL;
		goto out;
	}
	buf[n] = '\0';
	if ((sep = strstr(buf, "\r\n\r\n")) == NULL) {
		snprintf(err, errlen, "the controller's reply is cut short");
		r = ERR_PROTOCOL;
		goto out;
	}
	out->status = atoi(buf + 9);
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

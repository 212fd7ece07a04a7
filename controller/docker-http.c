/*
 * Docker Engine API requests through libcurl (docker-http.h).
 *
 * Each request has an easy handle and a multi handle of its own; curl's
 * socket callback says which descriptor it waits on and for what, its
 * timer callback when it wants to be called anyway, and the task waits
 * for whichever comes first before handing the event back with
 * curl_multi_socket_action().  One request holds one descriptor, so the
 * wait is one fd and one timeout: no fd_set, no thread, no polling.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "docker-http.h"
#include "err.h"
#include "json.h"
#include "task.h"
#include "xmalloc.h"

struct docker_req {
	curl_socket_t	 fd;		/* CURL_SOCKET_BAD: none yet */
	int		 what;		/* CURL_POLL_* */
	long		 timer_ms;	/* -1: no timer */
	char		*buf;
	size_t		 len, cap;
	int		 too_large;
};

static int
docker_http_socket_cb(CURL *e, curl_socket_t s, int what, void *arg,
    void *sockp)
{
	struct docker_req	*q = arg;

	(void)e;
	(void)sockp;
	if (what == CURL_POLL_REMOVE) {
		if (q->fd == s) {
			q->fd = CURL_SOCKET_BAD;
			q->what = 0;
		}
	} else {
		q->fd = s;
		q->what = what;
	}
	return 0;
}

static int
docker_http_timer_cb(CURLM *m, long timeout_ms, void *arg)
{
	struct docker_req	*q = arg;

	(void)m;
	q->timer_ms = timeout_ms;
	return 0;
}

static size_t
docker_http_write_cb(char *p, size_t size, size_t n, void *arg)
{
	struct docker_req	*q = arg;
	size_t			 k = size * n;

	if (q->len + k > DOCKER_HTTP_REPLY_MAX) {
		q->too_large = 1;
		return 0;
	}
	if (q->len + k + 1 > q->cap) {
		q->cap = (q->len + k + 1) * 2;
		q->buf = xrealloc(q->buf, q->cap);
	}
	memcpy(q->buf + q->len, p, k);
	q->len += k;
	q->buf[q->len] = '\0';
	return k;
}

const char *
docker_http_message(json_t *reply)
{
	const char	*m = json_string_value(json_object_get(reply,
			    "message"));

	return m != NULL ? m : "";
}

/* Run m until its one transfer is done; 0 or ERR_TIMEOUT. */
static int
docker_http_drive(CURLM *m, struct docker_req *q, int64_t deadline_ms,
    CURLcode *result)
{
	CURLMsg		*msg;
	int		 running = 1, left, r, flags;
	int64_t		 now, wait;

	(void)curl_multi_socket_action(m, CURL_SOCKET_TIMEOUT, 0, &running);
	for (;;) {
		while ((msg = curl_multi_info_read(m, &left)) != NULL)
			if (msg->msg == CURLMSG_DONE) {
				*result = msg->data.result;
				return 0;
			}
		now = lws_now_usecs() / 1000;
		if (now >= deadline_ms)
			return ERR_TIMEOUT;
		wait = deadline_ms - now;
		if (q->timer_ms >= 0 && q->timer_ms < wait)
			wait = q->timer_ms;
		if (q->timer_ms == 0 || q->fd == CURL_SOCKET_BAD) {
			if (q->timer_ms != 0 && q->fd == CURL_SOCKET_BAD &&
			    (r = task_sleep(wait)) != 0 && r != ERR_TIMEOUT)
				return r;
			q->timer_ms = -1;
			(void)curl_multi_socket_action(m, CURL_SOCKET_TIMEOUT,
			    0, &running);
			continue;
		}
		if (q->what & CURL_POLL_OUT)
			r = task_wait_fd_out(q->fd, wait);
		else
			r = task_wait_fd(q->fd, wait);
		if (r == ERR_TIMEOUT) {
			q->timer_ms = -1;
			(void)curl_multi_socket_action(m, CURL_SOCKET_TIMEOUT,
			    0, &running);
			continue;
		}
		if (r != 0)
			return r;
		/* A wait for writable also ends on input: curl takes both. */
		flags = (q->what & CURL_POLL_OUT) ? CURL_CSELECT_OUT |
		    CURL_CSELECT_IN : CURL_CSELECT_IN;
		(void)curl_multi_socket_action(m, q->fd, flags, &running);
	}
}

int
docker_http_request(const char *socket, const char *method, const char *path,
    json_t *body, int timeout_ms, long *status, json_t **reply,
    struct errmsg *err)
{
	static int		 inited;
	struct docker_req	 q;
	struct curl_slist	*hdr = NULL;
	CURLM			*m = NULL;
	CURL			*e = NULL;
	CURLcode		 cr = CURLE_OK;
	char			 url[1024], *js = NULL;
	size_t			 jslen = 0;
	int			 r = ERR_INTERNAL;

	*status = 0;
	if (reply != NULL)
		*reply = NULL;
	if (!inited) {
		if (curl_global_init(CURL_GLOBAL_NOTHING) != 0)
			return errmsg_set(err, ERR_INTERNAL, "cannot start "
			    "libcurl");
		inited = 1;
	}
	memset(&q, 0, sizeof q);
	q.fd = CURL_SOCKET_BAD;
	q.timer_ms = -1;
	/* The host part is ignored on a Unix socket but must be valid. */
	if ((size_t)snprintf(url, sizeof url, "http://docker%s", path) >=
	    sizeof url)
		return errmsg_set(err, ERR_INTERNAL, "the engine request's "
		    "path is too long");
	if ((e = curl_easy_init()) == NULL || (m = curl_multi_init()) == NULL)
		goto fail;
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, socket);
	curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, docker_http_write_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, &q);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http");
	if (body != NULL) {
		if ((js = jsonx_dump(body, &jslen)) == NULL)
			goto fail;
		hdr = curl_slist_append(hdr, "Content-Type: application/json");
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, js);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)jslen);
	} else if (strcmp(method, "POST") == 0) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, 0L);
	}
	curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, docker_http_socket_cb);
	curl_multi_setopt(m, CURLMOPT_SOCKETDATA, &q);
	curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, docker_http_timer_cb);
	curl_multi_setopt(m, CURLMOPT_TIMERDATA, &q);
	if (curl_multi_add_handle(m, e) != CURLM_OK)
		goto fail;
	r = docker_http_drive(m, &q, lws_now_usecs() / 1000 + timeout_ms,
	    &cr);
	curl_multi_remove_handle(m, e);
	if (r == ERR_TIMEOUT) {
		errmsg_set(err, r, "the Docker engine did not answer %s %s "
		    "within %d ms", method, path, timeout_ms);
		goto out;
	}
	if (r != 0) {
		errmsg_set(err, r, "cannot wait for the Docker engine");
		goto out;
	}
	if (cr == CURLE_COULDNT_CONNECT || cr == CURLE_COULDNT_RESOLVE_HOST) {
		r = errmsg_set(err, ERR_CONNECT, "cannot reach the Docker "
		    "engine at %s: %s", socket, curl_easy_strerror(cr));
		goto out;
	}
	if (cr != CURLE_OK) {
		r = errmsg_set(err, q.too_large ? ERR_TOO_LARGE : ERR_PROVIDER,
		    "the Docker engine's answer to %s %s failed: %s", method,
		    path, curl_easy_strerror(cr));
		goto out;
	}
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, status);
	if (reply != NULL && q.len > 0)
		*reply = json_loadb(q.buf, q.len, 0, NULL);
	r = 0;
	goto out;
fail:
	r = errmsg_set(err, ERR_INTERNAL, "cannot set up a request to the "
	    "Docker engine");
out:
	if (m != NULL)
		curl_multi_cleanup(m);
	if (e != NULL)
		curl_easy_cleanup(e);
	curl_slist_free_all(hdr);
	free(js);
	free(q.buf);
	return r;
}

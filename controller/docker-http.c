/* SPDX-License-Identifier: MIT */
/*
 * Docker Engine API requests through libcurl (docker-http.h): an easy
 * handle per request, run on the serve loop by curl-loop.h like every
 * other HTTP client of the controller, with curl's own overall timeout.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "curl-loop.h"
#include "docker-http.h"
#include "err.h"
#include "json.h"
#include "task.h"
#include "xmalloc.h"

struct docker_req {
	char		*buf;
	size_t		 len, cap;
	int		 too_large;
};

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

int
docker_http_request(struct curl_loop *l, const char *socket,
    const char *method, const char *path, json_t *body, int timeout_ms,
    long *status, json_t **reply, struct errmsg *err)
{
	struct docker_req	 q;
	struct curl_slist	*hdr = NULL;
	CURL			*e = NULL;
	CURLcode		 cr = CURLE_OK;
	char			 url[1024], *js = NULL;
	size_t			 jslen = 0;
	int			 r = ERR_INTERNAL;

	*status = 0;
	if (reply != NULL)
		*reply = NULL;
	if (l == NULL)
		return errmsg_set(err, ERR_INTERNAL, "no HTTP client loop for "
		    "the Docker engine");
	memset(&q, 0, sizeof q);
	/* The host part is ignored on a Unix socket but must be valid. */
	if ((size_t)snprintf(url, sizeof url, "http://docker%s", path) >=
	    sizeof url)
		return errmsg_set(err, ERR_INTERNAL, "the engine request's "
		    "path is too long");
	if ((e = curl_easy_init()) == NULL)
		goto fail;
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, socket);
	curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
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
	if ((r = curl_loop_perform(l, e, &cr, err)) != 0)
		goto out;
	if (cr == CURLE_OPERATION_TIMEDOUT) {
		r = errmsg_set(err, ERR_TIMEOUT, "the Docker engine did not "
		    "answer %s %s within %d ms", method, path, timeout_ms);
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
	if (e != NULL)
		curl_easy_cleanup(e);
	curl_slist_free_all(hdr);
	free(js);
	free(q.buf);
	return r;
}

/* SPDX-License-Identifier: MIT */
/*
 * The Kubernetes REST client (k8s.h): one curl easy handle per request
 * or watch, performed on the loop through curl-loop.h.  TLS material
 * given inline in a kubeconfig goes to curl as blobs, never to a file;
 * the bearer token is read (again, for rotating service-account tokens)
 * just before each request, handed to curl and wiped.
 */
#include "autoconf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "k8s.h"
#include "token.h"
#include "xmalloc.h"

#define K8S_CONNECT_MS	10000

struct k8s {
	struct curl_loop	*loop;
	struct kubeconfig	 kc;
};

/* A reply body being read, capped. */
struct k8s_body {
	char	*buf;
	size_t	 len;
	int	 overflow;
};

int
k8s_new(struct k8s **out, struct curl_loop *loop, struct kubeconfig *kc,
    struct errmsg *e)
{
	struct k8s	*k;

	*out = NULL;
	if (loop == NULL || kc->server == NULL)
		return errmsg_set(e, ERR_INTERNAL, "no loop or no server");
	k = xcalloc(1, sizeof *k);
	k->loop = loop;
	k->kc = *kc;
	memset(kc, 0, sizeof *kc);
	*out = k;
	return 0;
}

void
k8s_free(struct k8s *k)
{
	if (k == NULL)
		return;
	kubeconfig_release(&k->kc);
	free(k);
}

static void
k8s_blob(CURL *c, CURLoption opt, const struct kubeconfig_pem *p)
{
	struct curl_blob	 b;

	b.data = p->data;
	b.len = p->len;
	/* curl copies it: ours is wiped with the kubeconfig. */
	b.flags = CURL_BLOB_COPY;
	curl_easy_setopt(c, opt, &b);
}

/* A handle for url with the cluster's TLS and the current token. */
static int
k8s_easy(struct k8s *k, const char *path, CURL **out, struct errmsg *e)
{
	const struct kubeconfig	*kc = &k->kc;
	char			*url, tok[16384];
	CURL			*c;
	int			 r;

	*out = NULL;
	if ((r = kubeconfig_token(kc, tok, sizeof tok)) != 0)
		return errmsg_set(e, ERR_K8S_UNAUTHORIZED, "cannot read the "
		    "service account token (%s)", err_name(r));
	if ((c = curl_easy_init()) == NULL)
		return errmsg_set(e, ERR_NOMEM, "curl_easy_init");
	if (asprintf(&url, "%s%s", kc->server, path) == -1)
		fatal("asprintf");
	curl_easy_setopt(c, CURLOPT_URL, url);
	free(url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)K8S_CONNECT_MS);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	if (kc->ca.data != NULL)
		k8s_blob(c, CURLOPT_CAINFO_BLOB, &kc->ca);
	else if (kc->ca.file != NULL)
		curl_easy_setopt(c, CURLOPT_CAINFO, kc->ca.file);
	if (kc->insecure) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (kc->cert.data != NULL)
		k8s_blob(c, CURLOPT_SSLCERT_BLOB, &kc->cert);
	else if (kc->cert.file != NULL)
		curl_easy_setopt(c, CURLOPT_SSLCERT, kc->cert.file);
	if (kc->key.data != NULL)
		k8s_blob(c, CURLOPT_SSLKEY_BLOB, &kc->key);
	else if (kc->key.file != NULL)
		curl_easy_setopt(c, CURLOPT_SSLKEY, kc->key.file);
	if (tok[0] != '\0') {
		curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
		curl_easy_setopt(c, CURLOPT_XOAUTH2_BEARER, tok);
	}
	token_wipe(tok, sizeof tok);
	*out = c;
	return 0;
}

static size_t
k8s_body_cb(char *p, size_t sz, size_t n, void *arg)
{
	struct k8s_body	*b = arg;
	size_t		 len = sz * n;

	if (b->overflow || len > K8S_BODY_MAX - b->len) {
		b->overflow = 1;
		return len;	/* read on, keep nothing more */
	}
	b->buf = xrealloc(b->buf, b->len + len + 1);
	memcpy(b->buf + b->len, p, len);
	b->len += len;
	b->buf[b->len] = '\0';
	return len;
}

static json_t *
k8s_json(const char *buf, size_t len)
{
	return buf == NULL ? NULL : json_loadb(buf, len,
	    JSON_REJECT_DUPLICATES, NULL);
}

int
k8s_request(struct k8s *k, const char *method, const char *path,
    json_t *body, int64_t timeout_ms, long *status, json_t **reply,
    struct errmsg *e)
{
	struct curl_slist	*h = NULL;
	struct k8s_body		 b;
	CURLcode		 cr;
	CURL			*c;
	char			*s = NULL;
	int			 r;

	*status = 0;
	if (reply != NULL)
		*reply = NULL;
	memset(&b, 0, sizeof b);
	if ((r = k8s_easy(k, path, &c, e)) != 0)
		return r;
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	h = curl_slist_append(h, "Accept: application/json");
	if (body != NULL) {
		if ((s = json_dumps(body, JSON_COMPACT)) == NULL)
			fatal("json_dumps");
		h = curl_slist_append(h, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(s));
		curl_easy_setopt(c, CURLOPT_COPYPOSTFIELDS, s);
		/* A pod's Secret is in some bodies. */
		explicit_bzero(s, strlen(s));
		free(s);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, k8s_body_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	if ((r = curl_loop_perform(k->loop, c, &cr, e)) != 0)
		goto out;
	if (cr != CURLE_OK) {
		r = errmsg_set(e, ERR_K8S_UNAVAILABLE, "the Kubernetes API at "
		    "%.200s did not answer: %s", k->kc.server,
		    curl_easy_strerror(cr));
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	if (reply != NULL && !b.overflow)
		*reply = k8s_json(b.buf, b.len);
	r = 0;
out:
	if (b.buf != NULL) {
		explicit_bzero(b.buf, b.len);
		free(b.buf);
	}
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	return r;
}

int
k8s_status_code(long status, json_t *reply)
{
	const char	*reason;

	reason = json_string_value(json_object_get(reply, "reason"));
	switch (status) {
	case 401:
		return ERR_K8S_UNAUTHORIZED;
	case 403:
		return ERR_K8S_FORBIDDEN;
	case 404:
		return ERR_K8S_NOT_FOUND;
	case 409:
		return ERR_K8S_CONFLICT;
	case 422:
		return ERR_K8S_INVALID;
	case 429:
		return ERR_K8S_THROTTLED;
	default:
		break;
	}
	if (status >= 500 && status <= 599)
		return ERR_K8S_UNAVAILABLE;
	if (reason != NULL && strcmp(reason, "AlreadyExists") == 0)
		return ERR_K8S_CONFLICT;
	return ERR_K8S;
}

/* s without control characters, for quoting a peer's words. */
static void
k8s_printable(const char *s, char *out, size_t len)
{
	size_t	 i;

	for (i = 0; s != NULL && s[i] != '\0' && i + 1 < len; i++)
		out[i] = (unsigned char)s[i] < 0x20 ? ' ' : s[i];
	out[i] = '\0';
}

int
k8s_status_error(long status, json_t *reply, const char *what,
    struct errmsg *e)
{
	char	 msg[320], reason[48];

	k8s_printable(json_string_value(json_object_get(reply, "message")),
	    msg, sizeof msg);
	k8s_printable(json_string_value(json_object_get(reply, "reason")),
	    reason, sizeof reason);
	return errmsg_set(e, k8s_status_code(status, reply), "Kubernetes "
	    "refused to %s (HTTP %ld%s%s): %s", what, status,
	    reason[0] != '\0' ? " " : "", reason,
	    msg[0] != '\0' ? msg : "no message");
}

/* One line of a watch: an event for fn. */
static void
k8s_watch_line(struct k8s_watch *w, const char *p, size_t n)
{
	json_t		*ev;
	const char	*type;

	if (n == 0)
		return;
	if ((ev = k8s_json(p, n)) == NULL)
		return;
	type = json_string_value(json_object_get(ev, "type"));
	w->events++;
	if (type != NULL && w->fn(w->arg, type, json_object_get(ev,
	    "object")))
		curl_loop_wake(&w->x);
	json_decref(ev);
}

static size_t
k8s_watch_cb(char *p, size_t sz, size_t n, void *arg)
{
	struct k8s_watch	*w = arg;
	size_t			 len = sz * n, i, start = 0;

	if (w->status == 0)
		curl_easy_getinfo(w->easy, CURLINFO_RESPONSE_CODE, &w->status);
	for (i = 0; i < len; i++) {
		if (p[i] != '\n' || w->status != 200)
			continue;
		if (!w->overflow && w->len + (i - start) <= K8S_LINE_MAX) {
			w->line = xrealloc(w->line, w->len + (i - start) + 1);
			memcpy(w->line + w->len, p + start, i - start);
			w->len += i - start;
			k8s_watch_line(w, w->line, w->len);
		}
		/* An event longer than the cap is skipped whole. */
		w->len = 0;
		w->overflow = 0;
		start = i + 1;
	}
	if (len - start > K8S_LINE_MAX - w->len) {
		w->overflow = 1;
		return len;
	}
	if (!w->overflow && len > start) {
		w->line = xrealloc(w->line, w->len + (len - start) + 1);
		memcpy(w->line + w->len, p + start, len - start);
		w->len += len - start;
	}
	return len;
}

int
k8s_watch_start(struct k8s *k, struct k8s_watch *w, const char *path,
    int (*fn)(void *, const char *, json_t *), void *arg, struct errmsg *e)
{
	int	 r;

	memset(w, 0, sizeof *w);
	w->k = k;
	w->fn = fn;
	w->arg = arg;
	if ((r = k8s_easy(k, path, &w->easy, e)) != 0)
		return r;
	w->hdrs = curl_slist_append(NULL, "Accept: application/json");
	curl_easy_setopt(w->easy, CURLOPT_HTTPHEADER, w->hdrs);
	curl_easy_setopt(w->easy, CURLOPT_WRITEFUNCTION, k8s_watch_cb);
	curl_easy_setopt(w->easy, CURLOPT_WRITEDATA, w);
	curl_loop_start(k->loop, &w->x, w->easy);
	return 0;
}

int
k8s_watch_wait(struct k8s_watch *w, int64_t timeout_ms, int *ended,
    struct errmsg *e)
{
	int	 r;

	*ended = 0;
	if (!w->x.done && (r = curl_loop_wait_ms(&w->x, timeout_ms, e)) != 0)
		return r;
	if (w->x.done) {
		*ended = 1;
		if (w->status == 0)
			curl_easy_getinfo(w->easy, CURLINFO_RESPONSE_CODE,
			    &w->status);
		if (w->status != 200 && w->error == NULL && !w->overflow)
			w->error = k8s_json(w->line, w->len);
	}
	return 0;
}

void
k8s_watch_stop(struct k8s_watch *w)
{
	if (w->easy == NULL)
		return;
	curl_loop_cancel(&w->x);
	curl_easy_cleanup(w->easy);
	curl_slist_free_all(w->hdrs);
	free(w->line);
	json_decref(w->error);
	w->easy = NULL;
	w->hdrs = NULL;
	w->line = NULL;
	w->error = NULL;
}

void
k8s_label_value(const char *s, char *out, size_t len)
{
	size_t	 i, n = 0;

	if (len > 64)
		len = 64;
	for (i = 0; s[i] != '\0' && n + 1 < len; i++)
		out[n++] = isalnum((unsigned char)s[i]) || s[i] == '.' ||
		    s[i] == '_' || s[i] == '-' ? s[i] : '_';
	while (n > 0 && !isalnum((unsigned char)out[n - 1]))
		n--;
	out[n] = '\0';
	/* And an alphanumeric first character. */
	for (i = 0; out[i] != '\0' && !isalnum((unsigned char)out[i]); i++)
		;
	memmove(out, out + i, n - i + 1);
}

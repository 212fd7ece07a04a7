/* SPDX-License-Identifier: MIT */
/*
 * The S3 client (s3.h): requests as libcurl easy handles run on the lws
 * loop by curl-loop.c, which owns the multi handle, the sockets and the
 * timer; a call here builds the request, awaits its transfer from the
 * task and reads the store's answer.
 *
 * Why curl's own SigV4 (CURLOPT_AWS_SIGV4): it is there in Debian's
 * 7.88, and signing is the part an S3 client gets subtly wrong.  What it
 * leaves to us (MACHINE-NOTES): the x-amz-content-sha256 header (the
 * body's SHA-256 when we have the body in hand, UNSIGNED-PAYLOAD for a
 * stream) and a query string already sorted and %-encoded, since curl
 * signs it as written.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/sha.h>

#include "config.h"
#include "curl-loop.h"
#include "err.h"
#include "s3-xml.h"
#include "s3.h"
#include "task.h"
#include "xmalloc.h"

#define S3_REPLY_MAX		(4 * 1024 * 1024)	/* lists, errors */
#define S3_CONNECT_MS		10000
#define S3_STALL_S		60	/* no byte for this long: give up */
#define S3_UNSIGNED		"UNSIGNED-PAYLOAD"

struct s3 {
	struct curl_loop	*loop;
	char			*base;		/* scheme://host[:port] */
	char			*bucket;
	int			 path_style;
	char			*sigv4;		/* "aws:amz:REGION:s3" */
	char			*userpwd;	/* "AK:SK" */
	char			*token;		/* session token or NULL */
	uint64_t		 part_size;
};

/* One request: an easy handle and what its task waits for. */
struct s3_req {
	struct s3		*s;
	CURL			*easy;
	struct curl_slist	*hdrs;
	char			 errbuf[CURL_ERROR_SIZE];
	/* body out */
	const uint8_t		*body;
	size_t			 bodylen, bodyoff;
	s3_src			 src;
	void			*src_arg;
	int			 src_err;
	/* body in */
	s3_sink			 sink;
	void			*sink_arg;
	int			 sink_err;
	char			*reply;		/* non-2xx or wanted whole */
	size_t			 replylen;
	int			 want_reply;
	uint64_t		 got;
	/* reply headers */
	long			 status;
	char			 etag[80];
	uint64_t		 clen;
	struct curl_loop_xfer	 x;
};

/* ---- configuration ----------------------------------------------------- */

static const char *
s3_env(const char *a, const char *b, const char *c)
{
	const char	*v;

	if ((v = getenv(a)) != NULL && *v != '\0')
		return v;
	if (b != NULL && (v = getenv(b)) != NULL && *v != '\0')
		return v;
	if (c != NULL && (v = getenv(c)) != NULL && *v != '\0')
		return v;
	return NULL;
}

void
s3_config_release(struct s3_config *c)
{
	free(c->bucket);
	free(c->endpoint);
	free(c->region);
	free(c->access_key);
	if (c->secret != NULL)
		explicit_bzero(c->secret, strlen(c->secret));
	free(c->secret);
	if (c->session_token != NULL)
		explicit_bzero(c->session_token, strlen(c->session_token));
	free(c->session_token);
	memset(c, 0, sizeof(*c));
}

int
s3_config_from_env(struct s3_config *c, int *enabled, struct errmsg *e)
{
	const char	*v, *ak, *sk, *ep, *addr;
	char		 buf[512];
	size_t		 n;

	memset(c, 0, sizeof(*c));
	*enabled = 0;
	if ((v = s3_env("OBJECT_STORAGE_BUCKET", NULL, NULL)) == NULL)
		return 0;
	if (strlen(v) > 63 || strspn(v, "abcdefghijklmnopqrstuvwxyz"
	    "0123456789.-") != strlen(v))
		return errmsg_set(e, ERR_CONFIG, "OBJECT_STORAGE_BUCKET is not "
		    "a bucket name (lower case letters, digits, '.', '-')");
	ak = s3_env("OBJECT_STORAGE_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID", NULL);
	sk = s3_env("OBJECT_STORAGE_SECRET_ACCESS_KEY",
	    "AWS_SECRET_ACCESS_KEY", NULL);
	if (ak == NULL || sk == NULL)
		return errmsg_set(e, ERR_CONFIG, "OBJECT_STORAGE_BUCKET is set "
		    "but OBJECT_STORAGE_ACCESS_KEY_ID or "
		    "OBJECT_STORAGE_SECRET_ACCESS_KEY is not");
	if (strchr(ak, ':') != NULL)
		return errmsg_set(e, ERR_CONFIG, "OBJECT_STORAGE_ACCESS_KEY_ID "
		    "may not contain ':'");
	c->bucket = xstrdup(v);
	c->access_key = xstrdup(ak);
	c->secret = xstrdup(sk);
	if ((v = s3_env("AWS_SESSION_TOKEN", NULL, NULL)) != NULL)
		c->session_token = xstrdup(v);
	v = s3_env("OBJECT_STORAGE_REGION", "AWS_REGION", "AWS_DEFAULT_REGION");
	c->region = xstrdup(v != NULL ? v : "us-east-1");
	if (strspn(c->region, "abcdefghijklmnopqrstuvwxyz0123456789-") !=
	    strlen(c->region)) {
		s3_config_release(c);
		return errmsg_set(e, ERR_CONFIG, "OBJECT_STORAGE_REGION is not "
		    "a region name");
	}
	ep = s3_env("OBJECT_STORAGE_ENDPOINT", "AWS_ENDPOINT_URL_S3",
	    "AWS_ENDPOINT_URL");
	addr = s3_env("OBJECT_STORAGE_ADDRESSING", NULL, NULL);
	if (ep != NULL) {
		if (strncmp(ep, "http://", 7) != 0 &&
		    strncmp(ep, "https://", 8) != 0) {
			s3_config_release(c);
			return errmsg_set(e, ERR_CONFIG, "OBJECT_STORAGE_ENDPOINT "
			    "must start with http:// or https://");
		}
		c->endpoint = xstrdup(ep);
		n = strlen(c->endpoint);
		while (n > 0 && c->endpoint[n - 1] == '/')
			c->endpoint[--n] = '\0';
		if (strchr(strchr(c->endpoint, ':') + 3, '/') != NULL) {
			s3_config_release(c);
			return errmsg_set(e, ERR_CONFIG, "OBJECT_STORAGE_ENDPOINT "
			    "is scheme://host[:port], without a path");
		}
		c->path_style = 1;
	} else {
		snprintf(buf, sizeof(buf), "https://s3.%s.amazonaws.com",
		    c->region);
		c->endpoint = xstrdup(buf);
		c->path_style = 0;
	}
	if (addr != NULL) {
		if (strcmp(addr, "path") == 0)
			c->path_style = 1;
		else if (strcmp(addr, "virtual") == 0)
			c->path_style = 0;
		else {
			s3_config_release(c);
			return errmsg_set(e, ERR_CONFIG, "OBJECT_STORAGE_ADDRESSING "
			    "is 'path' or 'virtual'");
		}
	}
	c->part_size = S3_PART_DEFAULT;
	if ((v = s3_env("OBJECT_STORAGE_PART_SIZE", NULL, NULL)) != NULL &&
	    (config_parse_size(v, &c->part_size) != 0 ||
	    c->part_size < S3_PART_MIN || c->part_size > S3_PART_MAX)) {
		s3_config_release(c);
		return errmsg_set(e, ERR_CONFIG, "OBJECT_STORAGE_PART_SIZE is a "
		    "size from 5M to 5G");
	}
	*enabled = 1;
	return 0;
}

/* ---- the client -------------------------------------------------------- */

int
s3_new(struct s3 **out, struct curl_loop *loop, const struct s3_config *c,
    struct errmsg *e)
{
	struct s3	*s;
	size_t		 n;

	(void)e;
	*out = NULL;
	s = xcalloc(1, sizeof(*s));
	s->loop = loop;
	s->base = xstrdup(c->endpoint);
	s->bucket = xstrdup(c->bucket);
	s->path_style = c->path_style;
	s->part_size = c->part_size != 0 ? c->part_size : S3_PART_DEFAULT;
	n = strlen(c->region) + 16;
	s->sigv4 = xmalloc(n);
	snprintf(s->sigv4, n, "aws:amz:%s:s3", c->region);
	n = strlen(c->access_key) + strlen(c->secret) + 2;
	s->userpwd = xmalloc(n);
	snprintf(s->userpwd, n, "%s:%s", c->access_key, c->secret);
	if (c->session_token != NULL)
		s->token = xstrdup(c->session_token);
	*out = s;
	return 0;
}

void
s3_free(struct s3 *s)
{
	if (s == NULL)
		return;
	free(s->base);
	free(s->bucket);
	free(s->sigv4);
	if (s->userpwd != NULL)
		explicit_bzero(s->userpwd, strlen(s->userpwd));
	free(s->userpwd);
	if (s->token != NULL)
		explicit_bzero(s->token, strlen(s->token));
	free(s->token);
	free(s);
}

uint64_t
s3_part_size(const struct s3 *s)
{
	return s->part_size;
}

struct buf_out {
	char	*p;
	size_t	 n, cap;
};

/* S3's URI encoding: unreserved bytes as they are, '/' kept in paths. */
static void
s3_encode(struct buf_out *o, const char *s, int keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t	 need;

	for (; *s != '\0'; s++) {
		need = o->n + 4;
		if (need > o->cap) {
			o->cap = need * 2;
			o->p = xrealloc(o->p, o->cap);
		}
		if ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		    (*s >= '0' && *s <= '9') || *s == '-' || *s == '.' ||
		    *s == '_' || *s == '~' || (keep_slash && *s == '/'))
			o->p[o->n++] = *s;
		else {
			o->p[o->n++] = '%';
			o->p[o->n++] = hex[(unsigned char)*s >> 4];
			o->p[o->n++] = hex[(unsigned char)*s & 15];
		}
		o->p[o->n] = '\0';
	}
}

static void
s3_append(struct buf_out *o, const char *s)
{
	size_t	 n = strlen(s);

	if (o->n + n + 1 > o->cap) {
		o->cap = (o->n + n + 1) * 2;
		o->p = xrealloc(o->p, o->cap);
	}
	memcpy(o->p + o->n, s, n + 1);
	o->n += n;
}

/*
 * The URL of key (NULL: the bucket) with query, a string of "k=v" pairs
 * already sorted, their values given raw and encoded here: qv[i] pairs
 * with qk[i].
 */
static char *
s3_url(struct s3 *s, const char *key, const char *const *qk,
    const char *const *qv, int nq)
{
	struct buf_out	 o = { NULL, 0, 0 };
	const char	*host;
	int		 i;

	if (s->path_style) {
		s3_append(&o, s->base);
		s3_append(&o, "/");
		s3_encode(&o, s->bucket, 0);
	} else {
		/* scheme://BUCKET.host[:port] */
		host = strstr(s->base, "://") + 3;
		s3_append(&o, s->base);
		o.n = (size_t)(host - s->base);
		o.p[o.n] = '\0';
		s3_encode(&o, s->bucket, 0);
		s3_append(&o, ".");
		s3_append(&o, host);
	}
	s3_append(&o, "/");
	if (key != NULL)
		s3_encode(&o, key, 1);
	for (i = 0; i < nq; i++) {
		s3_append(&o, i == 0 ? "?" : "&");
		s3_encode(&o, qk[i], 0);
		s3_append(&o, "=");
		if (qv[i] != NULL)
			s3_encode(&o, qv[i], 0);
	}
	return o.p;
}

static size_t
s3_read_cb(char *p, size_t size, size_t nmemb, void *arg)
{
	struct s3_req	*q = arg;
	size_t		 max = size * nmemb, k;
	ssize_t		 r;

	if (q->src != NULL) {
		if (q->bodyoff >= q->bodylen)
			return 0;
		k = q->bodylen - q->bodyoff;
		if (k > max)
			k = max;
		r = q->src(q->src_arg, p, k);
		if (r <= 0) {
			q->src_err = r < 0 ? (int)r : ERR_IO;
			return CURL_READFUNC_ABORT;
		}
		q->bodyoff += (size_t)r;
		return (size_t)r;
	}
	k = q->bodylen - q->bodyoff;
	if (k > max)
		k = max;
	memcpy(p, q->body + q->bodyoff, k);
	q->bodyoff += k;
	return k;
}

static size_t
s3_write_cb(char *p, size_t size, size_t nmemb, void *arg)
{
	struct s3_req	*q = arg;
	size_t		 n = size * nmemb, k;
	int		 r;

	if (q->status == 0)
		curl_easy_getinfo(q->easy, CURLINFO_RESPONSE_CODE, &q->status);
	if (q->sink != NULL && q->status >= 200 && q->status < 300) {
		if ((r = q->sink(q->sink_arg, p, n)) != 0) {
			q->sink_err = r;
			return 0;	/* CURLE_WRITE_ERROR */
		}
		q->got += n;
		return n;
	}
	/* Keep what fits under the cap; an error's gist is at its start. */
	k = q->replylen + n > S3_REPLY_MAX ? S3_REPLY_MAX - q->replylen : n;
	if (k > 0) {
		q->reply = xrealloc(q->reply, q->replylen + k + 1);
		memcpy(q->reply + q->replylen, p, k);
		q->replylen += k;
		q->reply[q->replylen] = '\0';
	}
	return n;
}

static size_t
s3_header_cb(char *p, size_t size, size_t nmemb, void *arg)
{
	struct s3_req	*q = arg;
	size_t		 n = size * nmemb, k;
	char		*end;

	if (n > 5 && strncasecmp(p, "ETag:", 5) == 0) {
		p += 5;
		k = n - 5;
		while (k > 0 && (*p == ' ' || *p == '\t')) {
			p++;
			k--;
		}
		while (k > 0 && (p[k - 1] == '\r' || p[k - 1] == '\n' ||
		    p[k - 1] == ' '))
			k--;
		if (k >= sizeof(q->etag))
			k = sizeof(q->etag) - 1;
		memcpy(q->etag, p, k);
		q->etag[k] = '\0';
	} else if (n > 15 && strncasecmp(p, "Content-Length:", 15) == 0) {
		q->clen = strtoull(p + 15, &end, 10);
	}
	return size * nmemb;
}

static void
s3_hexsha(const void *p, size_t n, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t		 md[SHA256_DIGEST_LENGTH];
	size_t		 i;

	SHA256(p, n, md);
	for (i = 0; i < sizeof(md); i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
}

static void
s3_req_init(struct s3 *s, struct s3_req *q, const char *method, char *url,
    const char *payload_hash)
{
	char	 h[128];

	memset(q, 0, sizeof(*q));
	q->s = s;
	q->easy = curl_easy_init();
	if (q->easy == NULL)
		fatal("out of memory (curl_easy_init)");
	curl_easy_setopt(q->easy, CURLOPT_URL, url);
	curl_easy_setopt(q->easy, CURLOPT_ERRORBUFFER, q->errbuf);
	curl_easy_setopt(q->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(q->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(q->easy, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)S3_CONNECT_MS);
	curl_easy_setopt(q->easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(q->easy, CURLOPT_LOW_SPEED_TIME, (long)S3_STALL_S);
	curl_easy_setopt(q->easy, CURLOPT_AWS_SIGV4, s->sigv4);
	curl_easy_setopt(q->easy, CURLOPT_USERPWD, s->userpwd);
	curl_easy_setopt(q->easy, CURLOPT_WRITEFUNCTION, s3_write_cb);
	curl_easy_setopt(q->easy, CURLOPT_WRITEDATA, q);
	curl_easy_setopt(q->easy, CURLOPT_HEADERFUNCTION, s3_header_cb);
	curl_easy_setopt(q->easy, CURLOPT_HEADERDATA, q);
	if (strcmp(method, "GET") != 0)
		curl_easy_setopt(q->easy, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(q->easy, CURLOPT_NOBODY, 1L);
	snprintf(h, sizeof(h), "x-amz-content-sha256: %s", payload_hash);
	q->hdrs = curl_slist_append(q->hdrs, h);
	/*
	 * No "Expect:" here to spare the 100-continue round trip: curl 7.88
	 * would sign the header it then leaves out, and S3 refuses that.
	 * A short wait for the 100 instead.
	 */
	curl_easy_setopt(q->easy, CURLOPT_EXPECT_100_TIMEOUT_MS, 200L);
	if (s->token != NULL) {
		size_t	 n = strlen(s->token) + 32;
		char	*t = xmalloc(n);

		snprintf(t, n, "x-amz-security-token: %s", s->token);
		q->hdrs = curl_slist_append(q->hdrs, t);
		explicit_bzero(t, strlen(t));
		free(t);
	}
}

/* A body of n bytes for a PUT or POST, from q->body or q->src. */
static void
s3_req_body(struct s3_req *q, const char *ctype)
{
	char	 h[96];

	curl_easy_setopt(q->easy, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(q->easy, CURLOPT_READFUNCTION, s3_read_cb);
	curl_easy_setopt(q->easy, CURLOPT_READDATA, q);
	curl_easy_setopt(q->easy, CURLOPT_INFILESIZE_LARGE,
	    (curl_off_t)q->bodylen);
	snprintf(h, sizeof(h), "Content-Type: %s", ctype);
	q->hdrs = curl_slist_append(q->hdrs, h);
}

static void
s3_req_start(struct s3_req *q)
{
	curl_easy_setopt(q->easy, CURLOPT_HTTPHEADER, q->hdrs);
	curl_loop_start(q->s->loop, &q->x, q->easy);
}

/* The store's refusal in a sentence and a code. */
static int
s3_req_refusal(struct s3_req *q, const char *what, struct errmsg *e)
{
	char	 code[64] = "", msg[256] = "";
	int	 r;

	if (q->reply != NULL) {
		s3_xml_text(q->reply, q->replylen, "Code", code, sizeof(code),
		    NULL);
		s3_xml_text(q->reply, q->replylen, "Message", msg, sizeof(msg),
		    NULL);
	}
	if (code[0] == '\0')
		snprintf(code, sizeof(code), "%s", q->status == 403 ?
		    "AccessDenied" : q->status == 404 ? "NotFound" : "Error");
	if (strcmp(code, "SignatureDoesNotMatch") == 0 ||
	    strcmp(code, "InvalidAccessKeyId") == 0 ||
	    strcmp(code, "AccessDenied") == 0 ||
	    strcmp(code, "ExpiredToken") == 0 ||
	    strcmp(code, "InvalidToken") == 0 || q->status == 401 ||
	    q->status == 403)
		r = ERR_S3_DENIED;
	else if (strcmp(code, "NoSuchBucket") == 0)
		r = ERR_S3_NO_BUCKET;
	else if (strcmp(code, "NoSuchKey") == 0 ||
	    strcmp(code, "NoSuchUpload") == 0 || strcmp(code, "NotFound") == 0)
		r = ERR_NOT_FOUND;
	else
		r = ERR_S3;
	/* No "Code: text": the redactor would take NoSuchKey for a key. */
	return errmsg_set(e, r, "object store refused %s in bucket %s with "
	    "%s (HTTP %ld)%s%s", what, q->s->bucket, code, q->status,
	    msg[0] != '\0' ? ". " : "", msg);
}

/* Wait for q; 0, or the code of what failed.  Frees nothing. */
static int
s3_req_wait(struct s3_req *q, const char *what, struct errmsg *e)
{
	if (curl_loop_wait(&q->x, e) != 0)
		return ERR_INTERNAL;
	curl_easy_getinfo(q->easy, CURLINFO_RESPONSE_CODE, &q->status);
	/* A stream's own failure, in its own words when it gave them. */
	if (q->sink_err != 0 || q->src_err != 0) {
		int	 c = q->sink_err != 0 ? q->sink_err : q->src_err;

		return e != NULL && e->code == c ? c : errmsg_code(e, c);
	}
	if (q->x.result != CURLE_OK)
		return errmsg_set(e, ERR_CONNECT, "object store at %s "
		    "unreachable during %s: %s", q->s->base, what,
		    q->errbuf[0] != '\0' ? q->errbuf :
		    curl_easy_strerror(q->x.result));
	if (q->status < 200 || q->status >= 300)
		return s3_req_refusal(q, what, e);
	return 0;
}

static void
s3_req_free(struct s3_req *q)
{
	if (q->easy != NULL) {
		curl_loop_cancel(&q->x);
		curl_easy_cleanup(q->easy);
	}
	curl_slist_free_all(q->hdrs);
	free(q->reply);
	memset(q, 0, sizeof(*q));
}

static int
s3_run(struct s3_req *q, const char *what, struct errmsg *e)
{
	s3_req_start(q);
	return s3_req_wait(q, what, e);
}

static int
s3_key_ok(const char *key, struct errmsg *e)
{
	if (key == NULL || *key == '\0' || strlen(key) > S3_KEY_MAX)
		return errmsg_set(e, ERR_BAD_REQUEST, "an object key is 1 to "
		    "%d bytes", S3_KEY_MAX);
	return 0;
}

/* ---- calls ------------------------------------------------------------- */

int
s3_put(struct s3 *s, const char *key, uint64_t len, s3_src src, void *arg,
    struct errmsg *e)
{
	struct s3_req	 q;
	char		*url;
	int		 r;

	if ((r = s3_key_ok(key, e)) != 0)
		return r;
	url = s3_url(s, key, NULL, NULL, 0);
	s3_req_init(s, &q, "PUT", url, S3_UNSIGNED);
	q.src = src;
	q.src_arg = arg;
	q.bodylen = (size_t)len;
	s3_req_body(&q, "application/octet-stream");
	r = s3_run(&q, "PUT", e);
	s3_req_free(&q);
	free(url);
	return r;
}

int
s3_put_buf(struct s3 *s, const char *key, const void *p, size_t n,
    struct errmsg *e)
{
	struct s3_req	 q;
	char		*url, sha[65];
	int		 r;

	if ((r = s3_key_ok(key, e)) != 0)
		return r;
	url = s3_url(s, key, NULL, NULL, 0);
	s3_hexsha(p, n, sha);
	s3_req_init(s, &q, "PUT", url, sha);
	q.body = p;
	q.bodylen = n;
	s3_req_body(&q, "application/octet-stream");
	r = s3_run(&q, "PUT", e);
	s3_req_free(&q);
	free(url);
	return r;
}

/* The SHA-256 of nothing: GET, HEAD, DELETE sign an empty payload. */
#define S3_EMPTY_SHA \
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

int
s3_get(struct s3 *s, const char *key, s3_sink sink, void *arg,
    uint64_t *size, struct errmsg *e)
{
	struct s3_req	 q;
	char		*url;
	int		 r;

	if (size != NULL)
		*size = 0;
	if ((r = s3_key_ok(key, e)) != 0)
		return r;
	url = s3_url(s, key, NULL, NULL, 0);
	s3_req_init(s, &q, "GET", url, S3_EMPTY_SHA);
	q.sink = sink;
	q.sink_arg = arg;
	r = s3_run(&q, "GET", e);
	if (r == 0 && q.clen != 0 && q.got != q.clen)
		r = errmsg_set(e, ERR_PROTOCOL, "object store: GET of %s ended "
		    "after %llu of %llu bytes", key,
		    (unsigned long long)q.got, (unsigned long long)q.clen);
	if (r == 0 && size != NULL)
		*size = q.got;
	s3_req_free(&q);
	free(url);
	return r;
}

int
s3_head(struct s3 *s, const char *key, struct s3_object *out,
    struct errmsg *e)
{
	struct s3_req	 q;
	char		*url;
	int		 r;

	memset(out, 0, sizeof(*out));
	if ((r = s3_key_ok(key, e)) != 0)
		return r;
	url = s3_url(s, key, NULL, NULL, 0);
	s3_req_init(s, &q, "HEAD", url, S3_EMPTY_SHA);
	r = s3_run(&q, "HEAD", e);
	if (r == 0) {
		out->size = q.clen;
		memcpy(out->etag, q.etag, sizeof(out->etag));
	}
	s3_req_free(&q);
	free(url);
	return r;
}

int
s3_delete(struct s3 *s, const char *key, struct errmsg *e)
{
	struct s3_req	 q;
	char		*url;
	int		 r;

	if ((r = s3_key_ok(key, e)) != 0)
		return r;
	url = s3_url(s, key, NULL, NULL, 0);
	s3_req_init(s, &q, "DELETE", url, S3_EMPTY_SHA);
	r = s3_run(&q, "DELETE", e);
	if (r == ERR_NOT_FOUND && q.status == 404 && q.reply != NULL &&
	    strstr(q.reply, "NoSuchKey") != NULL) {
		errmsg_clear(e);
		r = 0;
	}
	s3_req_free(&q);
	free(url);
	return r;
}

void
s3_list_release(struct s3_list *l)
{
	size_t	 i;

	for (i = 0; i < l->n; i++)
		free(l->items[i].key);
	free(l->items);
	free(l->next_token);
	memset(l, 0, sizeof(*l));
}

static int
s3_list_parse(const char *p, size_t n, struct s3_list *out)
{
	char		 key[S3_KEY_MAX + 1], num[32], tok[1024];
	size_t		 off, len, end, pos = 0;
	struct s3_object *o;

	while (pos < n && s3_xml_elem(p + pos, n - pos, "Contents", &off,
	    &len, &end)) {
		if (!s3_xml_text(p + pos + off, len, "Key", key, sizeof(key),
		    NULL))
			return -1;
		out->items = xrealloc(out->items, (out->n + 1) *
		    sizeof(*out->items));
		o = &out->items[out->n++];
		memset(o, 0, sizeof(*o));
		o->key = xstrdup(key);
		if (s3_xml_text(p + pos + off, len, "Size", num, sizeof(num),
		    NULL))
			o->size = strtoull(num, NULL, 10);
		s3_xml_text(p + pos + off, len, "ETag", o->etag,
		    sizeof(o->etag), NULL);
		pos += end;
	}
	if (s3_xml_text(p, n, "IsTruncated", num, sizeof(num), NULL))
		out->truncated = strcmp(num, "true") == 0;
	if (out->truncated && s3_xml_text(p, n, "NextContinuationToken", tok,
	    sizeof(tok), NULL) && tok[0] != '\0')
		out->next_token = xstrdup(tok);
	if (out->truncated && out->next_token == NULL)
		return -1;	/* a next page we could not ask for */
	return 0;
}

int
s3_list(struct s3 *s, const char *prefix, const char *token, int max_keys,
    struct s3_list *out, struct errmsg *e)
{
	/* Sorted by name: curl signs the query as written. */
	const char	*qk[4], *qv[4];
	char		 mk[16], *url;
	struct s3_req	 q;
	int		 nq = 0, r;

	memset(out, 0, sizeof(*out));
	if (max_keys < 1 || max_keys > 1000)
		max_keys = 1000;
	snprintf(mk, sizeof(mk), "%d", max_keys);
	if (token != NULL) {
		qk[nq] = "continuation-token";
		qv[nq++] = token;
	}
	qk[nq] = "list-type";
	qv[nq++] = "2";
	qk[nq] = "max-keys";
	qv[nq++] = mk;
	if (prefix != NULL) {
		qk[nq] = "prefix";
		qv[nq++] = prefix;
	}
	url = s3_url(s, NULL, qk, qv, nq);
	s3_req_init(s, &q, "GET", url, S3_EMPTY_SHA);
	r = s3_run(&q, "LIST", e);
	if (r == 0 && (q.reply == NULL || s3_list_parse(q.reply, q.replylen,
	    out) != 0)) {
		s3_list_release(out);
		r = errmsg_set(e, ERR_PROTOCOL, "object store: the list of %s "
		    "is not a ListBucketResult", s->bucket);
	}
	s3_req_free(&q);
	free(url);
	return r;
}

/* ---- multipart --------------------------------------------------------- */

int
s3_mpu_create(struct s3 *s, const char *key, char **upload_id,
    struct errmsg *e)
{
	static const char *const qk[] = { "uploads" };
	static const char *const qv[] = { NULL };
	struct s3_req	 q;
	char		*url, id[1024];
	int		 r;

	*upload_id = NULL;
	if ((r = s3_key_ok(key, e)) != 0)
		return r;
	url = s3_url(s, key, qk, qv, 1);
	s3_req_init(s, &q, "POST", url, S3_EMPTY_SHA);
	r = s3_run(&q, "CreateMultipartUpload", e);
	if (r == 0) {
		if (q.reply != NULL && s3_xml_text(q.reply, q.replylen,
		    "UploadId", id, sizeof(id), NULL) && id[0] != '\0')
			*upload_id = xstrdup(id);
		else
			r = errmsg_set(e, ERR_PROTOCOL, "object store: no "
			    "UploadId in the reply to CreateMultipartUpload");
	}
	s3_req_free(&q);
	free(url);
	return r;
}

static char *
s3_part_url(struct s3 *s, const char *key, const char *upload_id, int part)
{
	const char	*qk[2] = { "partNumber", "uploadId" };
	const char	*qv[2];
	char		 pn[16];

	snprintf(pn, sizeof(pn), "%d", part);
	qv[0] = pn;
	qv[1] = upload_id;
	return s3_url(s, key, qk, qv, 2);
}

/* Start a part's PUT; q is the caller's until s3_req_free. */
static void
s3_part_start(struct s3 *s, struct s3_req *q, char **url, const char *key,
    const char *upload_id, int part, const void *p, size_t n)
{
	*url = s3_part_url(s, key, upload_id, part);
	s3_req_init(s, q, "PUT", *url, S3_UNSIGNED);
	q->body = p;
	q->bodylen = n;
	s3_req_body(q, "application/octet-stream");
	s3_req_start(q);
}

static int
s3_part_end(struct s3_req *q, char etag[80], struct errmsg *e)
{
	int	 r;

	r = s3_req_wait(q, "UploadPart", e);
	if (r == 0 && q->etag[0] == '\0')
		r = errmsg_set(e, ERR_PROTOCOL, "object store: no ETag for "
		    "an uploaded part");
	if (r == 0)
		memcpy(etag, q->etag, 80);
	return r;
}

int
s3_mpu_part(struct s3 *s, const char *key, const char *upload_id, int part,
    const void *p, size_t n, char etag[80], struct errmsg *e)
{
	struct s3_req	 q;
	char		*url;
	int		 r;

	if (part < 1 || part > S3_PARTS_MAX)
		return errmsg_set(e, ERR_TOO_LARGE, "an upload has at most %d "
		    "parts", S3_PARTS_MAX);
	s3_part_start(s, &q, &url, key, upload_id, part, p, n);
	r = s3_part_end(&q, etag, e);
	s3_req_free(&q);
	free(url);
	return r;
}

int
s3_mpu_complete(struct s3 *s, const char *key, const char *upload_id,
    char (*etags)[80], int nparts, struct errmsg *e)
{
	static const char *qk[] = { "uploadId" };
	const char	*qv[1] = { upload_id };
	struct buf_out	 body = { NULL, 0, 0 };
	struct s3_req	 q;
	char		*url, sha[65], line[160];
	int		 i, r;

	s3_append(&body, "<CompleteMultipartUpload>");
	for (i = 0; i < nparts; i++) {
		/* ETags are "hex" (quotes and all): no markup in them. */
		if (strpbrk(etags[i], "<>&") != NULL) {
			free(body.p);
			return errmsg_set(e, ERR_PROTOCOL, "object store: a "
			    "part's ETag is not plain text");
		}
		snprintf(line, sizeof(line), "<Part><PartNumber>%d</PartNumber>"
		    "<ETag>%s</ETag></Part>", i + 1, etags[i]);
		s3_append(&body, line);
	}
	s3_append(&body, "</CompleteMultipartUpload>");
	url = s3_url(s, key, qk, qv, 1);
	s3_hexsha(body.p, body.n, sha);
	s3_req_init(s, &q, "POST", url, sha);
	q.body = (const uint8_t *)body.p;
	q.bodylen = body.n;
	s3_req_body(&q, "application/xml");
	r = s3_run(&q, "CompleteMultipartUpload", e);
	/* S3 may refuse with 200 and an <Error> body. */
	if (r == 0 && q.reply != NULL && strstr(q.reply, "<Error>") != NULL) {
		q.status = 500;
		r = s3_req_refusal(&q, "CompleteMultipartUpload", e);
	}
	s3_req_free(&q);
	free(url);
	free(body.p);
	return r;
}

int
s3_mpu_abort(struct s3 *s, const char *key, const char *upload_id,
    struct errmsg *e)
{
	static const char *qk[] = { "uploadId" };
	const char	*qv[1] = { upload_id };
	struct s3_req	 q;
	char		*url;
	int		 r;

	url = s3_url(s, key, qk, qv, 1);
	s3_req_init(s, &q, "DELETE", url, S3_EMPTY_SHA);
	r = s3_run(&q, "AbortMultipartUpload", e);
	s3_req_free(&q);
	free(url);
	return r;
}

/* ---- the upload writer ------------------------------------------------- */

struct s3_upload {
	struct s3	*s;
	char		*key;
	char		*upload_id;
	uint8_t		*buf[2];
	size_t		 fill;		/* bytes in buf[cur] */
	int		 cur;
	struct s3_req	 q;		/* the part on the wire, if any */
	char		*qurl;
	int		 busy;
	char		(*etags)[80];
	int		 nparts;
	uint64_t	 total;
	size_t		 since_yield;
};

int
s3_upload_begin(struct s3 *s, const char *key, struct s3_upload **out,
    struct errmsg *e)
{
	struct s3_upload *u;
	int		 r;

	*out = NULL;
	if ((r = s3_key_ok(key, e)) != 0)
		return r;
	u = xcalloc(1, sizeof(*u));
	u->s = s;
	u->key = xstrdup(key);
	u->buf[0] = xmalloc(s->part_size);
	*out = u;
	return 0;
}

/* The part on the wire finished: keep its ETag. */
static int
s3_upload_settle(struct s3_upload *u, struct errmsg *e)
{
	int	 r;

	if (!u->busy)
		return 0;
	r = s3_part_end(&u->q, u->etags[u->nparts - 1], e);
	s3_req_free(&u->q);
	free(u->qurl);
	u->qurl = NULL;
	u->busy = 0;
	return r;
}

/* Send buf[cur] as the next part and switch to the other buffer. */
static int
s3_upload_ship(struct s3_upload *u, struct errmsg *e)
{
	int	 r;

	if (u->upload_id == NULL &&
	    (r = s3_mpu_create(u->s, u->key, &u->upload_id, e)) != 0)
		return r;
	if ((r = s3_upload_settle(u, e)) != 0)
		return r;
	if (u->nparts >= S3_PARTS_MAX)
		return errmsg_set(e, ERR_TOO_LARGE, "the object needs more "
		    "than %d parts: raise OBJECT_STORAGE_PART_SIZE",
		    S3_PARTS_MAX);
	u->etags = xrealloc(u->etags, ((size_t)u->nparts + 1) *
	    sizeof(*u->etags));
	u->etags[u->nparts][0] = '\0';
	u->nparts++;
	s3_part_start(u->s, &u->q, &u->qurl, u->key, u->upload_id, u->nparts,
	    u->buf[u->cur], u->fill);
	u->busy = 1;
	u->cur ^= 1;
	if (u->buf[u->cur] == NULL)
		u->buf[u->cur] = xmalloc(u->s->part_size);
	u->fill = 0;
	return 0;
}

int
s3_upload_write(struct s3_upload *u, const void *p, size_t n,
    struct errmsg *e)
{
	const uint8_t	*b = p;
	size_t		 k;
	int		 r;

	while (n > 0) {
		if (u->fill == u->s->part_size &&
		    (r = s3_upload_ship(u, e)) != 0)
			return r;
		k = u->s->part_size - u->fill;
		if (k > n)
			k = n;
		memcpy(u->buf[u->cur] + u->fill, b, k);
		u->fill += k;
		u->total += k;
		b += k;
		n -= k;
		/*
		 * A part is on the wire while the caller fills the next:
		 * let the loop move it now and then, or it would only go
		 * out when the writer waits.
		 */
		if (u->busy && (u->since_yield += k) >= 1024 * 1024) {
			u->since_yield = 0;
			task_sleep(0);
		}
	}
	return 0;
}

int
s3_upload_finish(struct s3_upload *u, uint64_t *size, struct errmsg *e)
{
	int	 r;

	if (size != NULL)
		*size = 0;
	if (u->upload_id == NULL) {
		r = s3_put_buf(u->s, u->key, u->buf[u->cur], u->fill, e);
	} else if ((r = u->fill > 0 ? s3_upload_ship(u, e) : 0) == 0 &&
	    (r = s3_upload_settle(u, e)) == 0)
		r = s3_mpu_complete(u->s, u->key, u->upload_id, u->etags,
		    u->nparts, e);
	if (r == 0 && size != NULL)
		*size = u->total;
	if (r == 0) {
		free(u->upload_id);
		u->upload_id = NULL;
	}
	s3_upload_abort(u);
	return r;
}

void
s3_upload_abort(struct s3_upload *u)
{
	struct errmsg	 ignore;

	if (u == NULL)
		return;
	if (u->busy) {
		/* Let the part end (or fail) before its buffer goes. */
		s3_upload_settle(u, &ignore);
	}
	if (u->upload_id != NULL)
		s3_mpu_abort(u->s, u->key, u->upload_id, &ignore);
	free(u->upload_id);
	free(u->key);
	free(u->buf[0]);
	free(u->buf[1]);
	free(u->etags);
	free(u);
}

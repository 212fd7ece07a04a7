/* SPDX-License-Identifier: MIT */
/*
 * The controller's S3 client (SPEC C-10): objects in any S3-compatible
 * bucket, SigV4-signed by libcurl, on the controller's one lws loop.
 *
 * Every call is made from a task (task.h) and reads as a blocking call:
 * the request is an easy handle on one curl multi handle, driven by the
 * multi-socket API from the lws loop (curl-loop.h), and the task waits
 * until curl says the transfer is done.  So no call blocks the
 * loop thread, and many tasks may have requests in flight at once.
 *
 * Memory is bounded whatever an object's size: GET hands the body to a
 * sink chunk by chunk, a streamed PUT pulls it from a source, and the
 * upload writer (s3_upload_*) holds at most two parts (one filling, one
 * on the wire) before it waits.  Replies read whole (errors, lists) are
 * capped.
 *
 * Errors: ERR_CONNECT (unreachable, reset, timed out), ERR_S3_DENIED
 * (403: a wrong secret, SignatureDoesNotMatch, InvalidAccessKeyId,
 * AccessDenied), ERR_S3_NO_BUCKET, ERR_NOT_FOUND (NoSuchKey,
 * NoSuchUpload), ERR_S3 otherwise; the sentence carries the store's
 * Code and Message, never the secret.
 */
#ifndef CONTROLLER_S3_H
#define CONTROLLER_S3_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <libwebsockets.h>

#include "err.h"

#define S3_PART_DEFAULT		(16 * 1024 * 1024)
#define S3_PART_MIN		(5 * 1024 * 1024)	/* S3's own floor */
#define S3_PART_MAX		(5ULL * 1024 * 1024 * 1024)
#define S3_PARTS_MAX		10000
#define S3_KEY_MAX		1024

struct s3_config {
	char		*bucket;
	char		*endpoint;	/* "http://127.0.0.1:9000", no path */
	char		*region;
	char		*access_key;
	char		*secret;
	char		*session_token;	/* NULL unless temporary keys */
	int		 path_style;	/* 1: ENDPOINT/BUCKET/KEY */
	uint64_t	 part_size;
};

/*
 * From the environment: OBJECT_STORAGE_BUCKET (unset: *enabled = 0 and
 * nothing else is read), _ENDPOINT, _REGION, _ACCESS_KEY_ID,
 * _SECRET_ACCESS_KEY, _ADDRESSING (path | virtual), _PART_SIZE; each
 * falls back to its AWS_* name (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL,
 * AWS_REGION, AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN).  Defaults: region us-east-1,
 * the AWS endpoint of the region with virtual-host addressing, or
 * path-style addressing when an endpoint is given.  ERR_CONFIG with a
 * sentence naming the variable.
 */
int	s3_config_from_env(struct s3_config *c, int *enabled,
	    struct errmsg *e);
void	s3_config_release(struct s3_config *c);

struct s3;

/* A client whose requests run on loop (curl-loop.h), shared or not. */
struct curl_loop;
int	s3_new(struct s3 **out, struct curl_loop *loop,
	    const struct s3_config *c, struct errmsg *e);
/* No request may be in flight. */
void	s3_free(struct s3 *s);
uint64_t s3_part_size(const struct s3 *s);

/*
 * Streams.  A source fills p with up to max bytes and returns the count,
 * or ERR_* to abort; a sink takes n bytes or returns ERR_* to abort.
 * Both run on the loop (inside curl's callbacks) and must not wait.
 */
typedef ssize_t	(*s3_src)(void *arg, void *p, size_t max);
typedef int	(*s3_sink)(void *arg, const void *p, size_t n);

struct s3_object {
	char		*key;
	uint64_t	 size;
	char		 etag[80];
};

struct s3_list {
	struct s3_object *items;
	size_t		 n;
	int		 truncated;
	char		*next_token;	/* for the next page, or NULL */
};
void	s3_list_release(struct s3_list *l);

/* The rest are calls from a task. */

/* PUT of exactly len bytes pulled from src (payload unsigned). */
int	s3_put(struct s3 *s, const char *key, uint64_t len, s3_src src,
	    void *arg, struct errmsg *e);
/* PUT of a buffer (its SHA-256 signed). */
int	s3_put_buf(struct s3 *s, const char *key, const void *p, size_t n,
	    struct errmsg *e);
/* GET: the body goes to sink; *size (may be NULL) gets its length. */
int	s3_get(struct s3 *s, const char *key, s3_sink sink, void *arg,
	    uint64_t *size, struct errmsg *e);
/* HEAD: size and ETag in *out (out->key is left NULL). */
int	s3_head(struct s3 *s, const char *key, struct s3_object *out,
	    struct errmsg *e);
/* DELETE; an object already gone is no error (S3 says 204 too). */
int	s3_delete(struct s3 *s, const char *key, struct errmsg *e);
/*
 * ListObjectsV2 of keys starting with prefix: one page of up to max_keys
 * (1..1000) after token (NULL: the first page).
 */
int	s3_list(struct s3 *s, const char *prefix, const char *token,
	    int max_keys, struct s3_list *out, struct errmsg *e);

/* Multipart upload, step by step.  *upload_id is malloc'd. */
int	s3_mpu_create(struct s3 *s, const char *key, char **upload_id,
	    struct errmsg *e);
/* Part number 1..S3_PARTS_MAX from a buffer; its ETag in etag. */
int	s3_mpu_part(struct s3 *s, const char *key, const char *upload_id,
	    int part, const void *p, size_t n, char etag[80],
	    struct errmsg *e);
int	s3_mpu_complete(struct s3 *s, const char *key, const char *upload_id,
	    char (*etags)[80], int nparts, struct errmsg *e);
int	s3_mpu_abort(struct s3 *s, const char *key, const char *upload_id,
	    struct errmsg *e);

/*
 * An upload of unknown length written piece by piece: bytes collect in a
 * part buffer; a full part goes out while the next one fills, and the
 * writer waits only when both are busy.  An object that fits in one part
 * is a single PUT at finish, a larger one a multipart upload completed at
 * finish; any failure, or s3_upload_abort(), aborts the multipart upload
 * so no parts are left behind.  s3_upload_write suits a seal_sink.
 */
struct s3_upload;
int	s3_upload_begin(struct s3 *s, const char *key, struct s3_upload **out,
	    struct errmsg *e);
int	s3_upload_write(struct s3_upload *u, const void *p, size_t n,
	    struct errmsg *e);
/* Completes and frees u; *size (may be NULL) gets the object's length. */
int	s3_upload_finish(struct s3_upload *u, uint64_t *size,
	    struct errmsg *e);
/* Aborts what was started and frees u; NULL is a no-op. */
void	s3_upload_abort(struct s3_upload *u);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The object home store (home.h, home-object.h, SPEC C-10): the bucket
 * is the source of truth and DATA_DIR/homes (home-local.c) its cache.
 *
 *   put     writes the cache as the local store does, while an uploader
 *           task reads the growing file back, seals it (rakazo-home(5))
 *           under the home's data key and streams it to
 *           homes/<storage id>/<revision> (a multipart upload when
 *           larger than a part).  The commit waits for the upload to
 *           complete, then commits the cache, so checkpoint.c's row, the
 *           commit point, advances only after the upload; a failed
 *           upload fails the checkpoint and the previous revision stays
 *           current.
 *   get     reads the cache when it holds the revision; otherwise the
 *           object is fetched and opened while it streams into a cache
 *           put, which is committed only when the final segment
 *           authenticated, so a refused object leaves nothing behind.
 *   prune   prunes the cache, then deletes the home's objects but the
 *           newest kept revision (the current one): the previous
 *           revision once the row moved on, a failed upload's leftovers.
 *           Older revision rows stay restorable while the cache holds
 *           their archives.  Outside a task (serve's start-up
 *           clean-up) only the cache is pruned: S3 calls need a task.
 *
 * The data key is random per home, wrapped (RFC 3394) by the content key
 * and kept hex on the computer row (computers.home_key); the storage id
 * is the home key.  Deleting the computer clears the wrapped key before
 * anything else (checkpoint_forget), so its objects are unreadable at
 * once even if their deletes fail.
 *
 * Sealing runs on the loop thread, 64 KiB at a time in the uploader
 * task (which yields every MiB): AES-GCM with AES-NI is far faster than
 * the upload, so no worker thread; bench/homes-object.sh measures the
 * whole path.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "home.h"
#include "home-local.h"
#include "home-object.h"
#include "log.h"
#include "s3.h"
#include "seal-key.h"
#include "seal.h"
#include "store.h"
#include "task.h"
#include "xmalloc.h"

#define HO_CHUNK	(256 * 1024)
#define HO_KEY_HEX	(2 * SEAL_KEY_WRAPPED_LEN + 1)

/* Set once by serve (home_object_configure); NULL: the object store is off. */
static struct s3	*ho_s3;
static uint8_t		 ho_content[SEAL_KEY_LEN];

struct home_object {
	struct home_store	 cache;		/* the local store */
	struct store		*st;		/* for the data keys */
};

struct ho_put {
	struct home_store	*hs;
	struct home_put		*local;
	char			*key;
	int64_t			 rev;
	/* The uploader task, reading the cache's file while it grows. */
	uint8_t			 dk[SEAL_KEY_LEN];
	int			 fd;		/* the put's file, read only */
	int64_t			 written;	/* bytes the file holds */
	int			 ended;		/* 1 commit, -1 abort */
	struct s3_upload	*up;		/* the uploader's */
	int			 up_done;
	int			 up_rc;
	struct errmsg		 up_err;
	struct task_cond	 cv;		/* both ways */
};

void
home_object_configure(struct s3 *s3, const uint8_t content[SEAL_KEY_LEN])
{
	ho_s3 = s3;
	if (content != NULL)
		memcpy(ho_content, content, SEAL_KEY_LEN);
	else
		explicit_bzero(ho_content, sizeof ho_content);
}

static int	 ho_health_code = ERR_CONNECT;
static char	 ho_health_msg[256] = "not checked yet";

void
home_object_health_set(int code, const char *msg)
{
	ho_health_code = code;
	snprintf(ho_health_msg, sizeof ho_health_msg, "%s",
	    msg != NULL ? msg : "");
}

int
home_object_health(const char **msg)
{
	if (msg != NULL)
		*msg = ho_health_msg;
	return ho_health_code;
}

/* A LIST of homes/ proves the endpoint, the bucket and the signature. */
int
home_object_check(struct errmsg *e)
{
	struct s3_list	 l;
	int		 r;

	if (ho_s3 == NULL)
		return 0;
	memset(&l, 0, sizeof l);
	r = s3_list(ho_s3, "homes/", NULL, 1, &l, e);
	s3_list_release(&l);
	if (r != ho_health_code) {
		if (r == 0)
			log_info("home.object_store", "state=ok");
		else
			log_warn("home.object_store", "state=failed code=%s "
			    "msg=\"%s\"", err_name(r), errmsg_str(e));
	}
	home_object_health_set(r, r == 0 ? "" : errmsg_str(e));
	return r;
}

int
home_object_enabled(void)
{
	return ho_s3 != NULL;
}

struct s3 *
home_object_s3(void)
{
	return ho_s3;
}

static int
ho_objkey(const char *key, int64_t rev, char *dst, size_t len)
{
	if (rev < 0)
		return snprintf(dst, len, "homes/%s/", key) >= (int)len ?
		    ERR_NAME_TOO_LONG : 0;
	return snprintf(dst, len, "homes/%s/%" PRId64, key, rev) >= (int)len ?
	    ERR_NAME_TOO_LONG : 0;
}

static void
ho_hex(const uint8_t *p, size_t n, char *dst)
{
	static const char	 hex[] = "0123456789abcdef";
	size_t			 i;

	for (i = 0; i < n; i++) {
		dst[2 * i] = hex[p[i] >> 4];
		dst[2 * i + 1] = hex[p[i] & 15];
	}
	dst[2 * n] = '\0';
}

static int
ho_unhex(const char *s, uint8_t *p, size_t n)
{
	size_t	 i;
	int	 hi, lo;

	if (strlen(s) != 2 * n)
		return -1;
	for (i = 0; i < n; i++) {
		hi = s[2 * i] >= 'a' ? s[2 * i] - 'a' + 10 : s[2 * i] - '0';
		lo = s[2 * i + 1] >= 'a' ? s[2 * i + 1] - 'a' + 10 :
		    s[2 * i + 1] - '0';
		if (hi < 0 || hi > 15 || lo < 0 || lo > 15)
			return -1;
		p[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/*
 * The home's data key; made, wrapped and stored on the computer row the
 * first time when create is set (a checkpoint), else ERR_KEY_INVALID
 * (a read of a home whose key is gone: a deleted computer).
 */
static int
ho_data_key(struct home_object *ho, const char *key, int create,
    uint8_t out[SEAL_KEY_LEN], struct errmsg *e)
{
	uint8_t	 w[SEAL_KEY_WRAPPED_LEN];
	char	 hex[HO_KEY_HEX];
	int	 r;

	if (ho->st == NULL)
		return errmsg_set(e, ERR_INTERNAL, "the object home store "
		    "needs the state store");
	if ((r = store_computer_home_key_get(ho->st, key, hex,
	    sizeof hex)) != 0)
		return errmsg_set(e, r, "cannot read the home's data key");
	if (hex[0] != '\0') {
		if (ho_unhex(hex, w, sizeof w) != 0)
			return errmsg_set(e, ERR_KEY_INVALID, "the home's "
			    "wrapped data key is not valid");
		return seal_key_unwrap(ho_content, w, out, e);
	}
	if (!create)
		return errmsg_set(e, ERR_KEY_INVALID, "the home has no data "
		    "key (its computer was deleted)");
	if ((r = seal_key_generate(out, e)) != 0 ||
	    (r = seal_key_wrap(ho_content, out, w, e)) != 0)
		return r;
	ho_hex(w, sizeof w, hex);
	if ((r = store_computer_home_key_set(ho->st, key, hex)) != 0) {
		explicit_bzero(out, SEAL_KEY_LEN);
		return errmsg_set(e, r, "cannot store the home's data key");
	}
	log_info("home.data_key", "computer=%s msg=\"a data key was made "
	    "for the home\"", key);
	return 0;
}

int
home_object_forget_key(struct store *st, const char *key)
{
	if (ho_s3 == NULL)
		return 0;
	return store_computer_home_key_set(st, key, "");
}

/* ---- put ------------------------------------------------------------- */

/* The seal's sink: the upload's words are the put's (the seal has none). */
static int
ho_up_sink(void *arg, const void *b, size_t n)
{
	struct ho_put	*p = arg;

	return s3_upload_write(p->up, b, n, &p->up_err);
}

/*
 * A test hook, as checkpoint.c's: RAKAZO_TEST_CRASH_AT=object-uploading
 * kills serve (SIGKILL) once a MiB of the archive went into the upload.
 */
static void
ho_test_crash(const char *step)
{
	const char	*at = getenv("RAKAZO_TEST_CRASH_AT");

	if (at != NULL && strcmp(at, step) == 0)
		kill(getpid(), SIGKILL);
}

/*
 * The uploader: seals the cache file as it grows and streams it to the
 * bucket, so the upload runs beside the export instead of after it.  It
 * waits when it caught up with the writer; the writer (guestd's export,
 * on the loop) never waits for it: the file is the buffer.
 */
static void
ho_uploader(void *arg)
{
	struct ho_put	*p = arg;
	struct s3_upload *u = NULL;
	struct seal	*sl = NULL;
	uint8_t		*buf = xmalloc(HO_CHUNK);
	char		 ok[S3_KEY_MAX];
	int64_t		 off = 0;
	size_t		 want;
	ssize_t		 n;
	int		 r;

	if ((r = ho_objkey(p->key, p->rev, ok, sizeof ok)) != 0) {
		errmsg_code(&p->up_err, r);
		goto out;
	}
	if ((r = s3_upload_begin(ho_s3, ok, &u, &p->up_err)) != 0)
		goto out;
	p->up = u;
	if ((r = seal_new(&sl, p->dk, p->key, (uint64_t)p->rev, ho_up_sink, p,
	    &p->up_err)) != 0)
		goto out;
	for (;;) {
		if (p->ended < 0) {
			r = errmsg_set(&p->up_err, ERR_HOME_STORE, "aborted");
			goto out;
		}
		if (off < p->written) {
			want = HO_CHUNK;
			if ((int64_t)want > p->written - off)
				want = (size_t)(p->written - off);
			if ((n = pread(p->fd, buf, want, off)) <= 0) {
				r = errmsg_set(&p->up_err, ERR_IO, "cannot read "
				    "the cached revision back");
				goto out;
			}
			if ((r = seal_write(sl, buf, (size_t)n,
			    &p->up_err)) != 0)
				goto out;
			off += n;
			if (off >= 1024 * 1024)
				ho_test_crash("object-uploading");
			continue;
		}
		if (p->ended > 0)
			break;
		(void)task_cond_wait(&p->cv, -1);
	}
	if ((r = seal_finish(sl, &p->up_err)) != 0)
		goto out;
	r = s3_upload_finish(u, NULL, &p->up_err);
	u = NULL;
out:
	seal_free(sl);
	s3_upload_abort(u);
	p->up = NULL;
	free(buf);
	p->up_rc = r;
	p->up_done = 1;
	task_cond_broadcast(&p->cv);
}

static void
ho_put_free(struct ho_put *p)
{
	explicit_bzero(p->dk, sizeof p->dk);
	if (p->fd >= 0)
		close(p->fd);
	free(p->key);
	free(p);
}

/* The caller's task waits for the uploader to end. */
static void
ho_put_join(struct ho_put *p, int how)
{
	p->ended = how;
	task_cond_broadcast(&p->cv);
	while (!p->up_done)
		(void)task_cond_wait(&p->cv, -1);
}

static int
ho_put_begin(struct home_store *hs, const char *key, int64_t rev,
    struct home_put **out, struct errmsg *e)
{
	struct home_object	*ho = hs->impl;
	struct ho_put		*p;
	int			 r;

	*out = NULL;
	if (strlen(key) > SEAL_ID_MAX)
		return errmsg_set(e, ERR_NAME_TOO_LONG, "home key too long");
	if (task_self() == NULL)
		return errmsg_set(e, ERR_INTERNAL, "the object home store is "
		    "written from a task");
	p = xcalloc(1, sizeof *p);
	p->hs = hs;
	p->fd = -1;
	p->key = xstrdup(key);
	p->rev = rev;
	/* The key now, in the caller's task: the store is its to use. */
	if ((r = ho_data_key(ho, key, 1, p->dk, e)) != 0 ||
	    (r = home_put_begin(&ho->cache, key, rev, &p->local, e)) != 0)
		goto fail;
	if ((p->fd = open(home_local_put_path(p->local),
	    O_RDONLY | O_CLOEXEC)) == -1) {
		r = errmsg_set(e, err_from_errno(errno), "cannot read the "
		    "cached revision back: %s", strerror(errno));
		goto fail;
	}
	if ((r = task_spawn(ho_uploader, p)) != 0) {
		errmsg_set(e, r, "cannot start the upload");
		goto fail;
	}
	*out = (struct home_put *)p;
	return 0;
fail:
	home_put_abort(&ho->cache, p->local);
	ho_put_free(p);
	return r;
}

static int
ho_put_write(struct home_put *hp, const void *b, size_t n, struct errmsg *e)
{
	struct ho_put		*p = (struct ho_put *)hp;
	struct home_object	*ho = p->hs->impl;
	int			 r;

	if ((r = home_put_write(&ho->cache, p->local, b, n, e)) != 0)
		return r;
	p->written += (int64_t)n;
	task_cond_broadcast(&p->cv);
	return 0;
}

static int
ho_put_commit(struct home_put *hp, struct errmsg *e)
{
	struct ho_put		*p = (struct ho_put *)hp;
	struct home_object	*ho = p->hs->impl;
	int			 r;

	ho_put_join(p, 1);
	if ((r = p->up_rc) != 0) {
		/* Words or not, never the sentence of code 0 ("Success."). */
		if (p->up_err.code == 0)
			errmsg_code(&p->up_err, r);
		errmsg_set(e, r, "%s", errmsg_str(&p->up_err));
		home_put_abort(&ho->cache, p->local);
	} else
		r = home_put_commit(&ho->cache, p->local, e);
	/*
	 * Uploaded but not committed in the cache: the object has no row,
	 * and the reconciler removes it.
	 */
	p->local = NULL;
	ho_put_free(p);
	return r;
}

static void
ho_put_abort(struct home_put *hp)
{
	struct ho_put		*p = (struct ho_put *)hp;
	struct home_object	*ho = p->hs->impl;

	ho_put_join(p, -1);
	home_put_abort(&ho->cache, p->local);
	ho_put_free(p);
}

/* ---- get ------------------------------------------------------------- */

struct ho_fetch {
	struct home_object	*ho;
	struct home_put		*local;
	struct seal_open	*op;
	struct errmsg		 err;
	int			 code;
};

static int
ho_fetch_plain(void *arg, const void *p, size_t n)
{
	struct ho_fetch	*f = arg;

	return home_put_write(&f->ho->cache, f->local, p, n, &f->err);
}

static int
ho_fetch_sealed(void *arg, const void *p, size_t n)
{
	struct ho_fetch	*f = arg;
	int		 r;

	if ((r = seal_open_write(f->op, p, n, &f->err)) != 0)
		f->code = r;
	return r;
}

/* Bring the cache to revision rev of key, verifying while it streams. */
static int
ho_fetch(struct home_object *ho, const char *key, int64_t rev,
    struct errmsg *e)
{
	struct ho_fetch	 f;
	uint8_t		 dk[SEAL_KEY_LEN];
	char		 ok[S3_KEY_MAX];
	struct errmsg	 ge;
	int		 r;

	memset(&f, 0, sizeof f);
	memset(&ge, 0, sizeof ge);
	f.ho = ho;
	if ((r = ho_objkey(key, rev, ok, sizeof ok)) != 0)
		return errmsg_code(e, r);
	if ((r = ho_data_key(ho, key, 0, dk, e)) != 0)
		return r;
	if ((r = home_put_begin(&ho->cache, key, rev, &f.local, e)) != 0 ||
	    (r = seal_open_new(&f.op, dk, key, (uint64_t)rev, ho_fetch_plain,
	    &f, e)) != 0)
		goto out;
	r = s3_get(ho_s3, ok, ho_fetch_sealed, &f, NULL, &ge);
	if (f.code != 0 || (r == 0 && (r = seal_open_finish(f.op,
	    &f.err)) != 0)) {
		/* The seal's own words: tampering has a stable code. */
		r = f.code != 0 ? f.code : r;
		/* checkpoint.c reports RESTORE_FAILED: keep the why. */
		errmsg_set(e, r, "object %s refused (%s): %s", ok,
		    err_name(r), errmsg_str(&f.err));
		goto out;
	}
	if (r != 0) {
		errmsg_set(e, r, "%s", errmsg_str(&ge));
		goto out;
	}
	r = home_put_commit(&ho->cache, f.local, e);
	f.local = NULL;
	if (r == 0)
		log_info("home.fetched", "computer=%s revision=%" PRId64, key,
		    rev);
out:
	explicit_bzero(dk, sizeof dk);
	seal_open_free(f.op);
	home_put_abort(&ho->cache, f.local);
	return r;
}

static int
ho_get_open(struct home_store *hs, const char *key, int64_t rev,
    struct home_get **out, int64_t *size, struct errmsg *e)
{
	struct home_object	*ho = hs->impl;
	struct errmsg		 le;
	int			 r;

	memset(&le, 0, sizeof le);
	if (home_get_open(&ho->cache, key, rev, out, size, &le) == 0)
		return 0;
	if (task_self() == NULL)
		return errmsg_set(e, ERR_INTERNAL, "the object home store is "
		    "read from a task");
	if ((r = ho_fetch(ho, key, rev, e)) != 0)
		return r;
	return home_get_open(&ho->cache, key, rev, out, size, e);
}

/* The cache's own reader: home_get_open handed out its handles. */
static ssize_t
ho_get_read(struct home_get *g, void *p, size_t max, struct errmsg *e)
{
	return home_local_ops.get_read(g, p, max, e);
}

static void
ho_get_close(struct home_get *g)
{
	home_local_ops.get_close(g);
}

static int64_t
ho_get_skip(struct home_get *g, int64_t n, struct errmsg *e)
{
	if (home_local_ops.get_skip == NULL)
		return 0;
	return home_local_ops.get_skip(g, n, e);
}

/* ---- list, prune ------------------------------------------------------ */

static int
ho_list(struct home_store *hs, const char *key, int64_t **out, size_t *n,
    struct errmsg *e)
{
	struct home_object	*ho = hs->impl;

	return home_list(&ho->cache, key, out, n, e);
}

static int
ho_kept(int64_t rev, const int64_t *keep, size_t nkeep)
{
	size_t	 i;

	for (i = 0; i < nkeep; i++)
		if (keep[i] == rev)
			return 1;
	return 0;
}

/*
 * Delete the objects of key (every home's when key is NULL and owned()
 * says no) not in keep.  The names that are not a revision number are
 * left alone: not ours.
 */
int
home_object_prune(const char *key, const int64_t *keep, size_t nkeep,
    int (*owned)(void *, const char *, int64_t), void *arg, int *deleted,
    struct errmsg *e)
{
	struct s3_list	 l;
	char		 prefix[S3_KEY_MAX], home[SEAL_ID_MAX + 1];
	char		*token = NULL, *end;
	const char	*k, *slash;
	int64_t		 rev;
	size_t		 i;
	int		 r, gone;

	if (deleted != NULL)
		*deleted = 0;
	if (key != NULL) {
		if ((r = ho_objkey(key, -1, prefix, sizeof prefix)) != 0)
			return errmsg_code(e, r);
	} else
		snprintf(prefix, sizeof prefix, "homes/");
	do {
		if ((r = s3_list(ho_s3, prefix, token, 1000, &l, e)) != 0)
			break;
		for (i = 0; i < l.n && r == 0; i++) {
			k = l.items[i].key + 6;		/* after "homes/" */
			if ((slash = strchr(k, '/')) == NULL ||
			    (size_t)(slash - k) > SEAL_ID_MAX)
				continue;
			snprintf(home, sizeof home, "%.*s", (int)(slash - k),
			    k);
			rev = strtoll(slash + 1, &end, 10);
			if (*end != '\0' || end == slash + 1)
				continue;
			gone = key != NULL ? !ho_kept(rev, keep, nkeep) :
			    !owned(arg, home, rev);
			if (!gone)
				continue;
			if ((r = s3_delete(ho_s3, l.items[i].key, e)) == 0) {
				log_info("home.object_deleted", "object=%s",
				    l.items[i].key);
				if (deleted != NULL)
					(*deleted)++;
			}
		}
		free(token);
		token = l.next_token;
		l.next_token = NULL;
		s3_list_release(&l);
	} while (r == 0 && token != NULL);
	free(token);
	return r;
}

/* The newest of keep: the one revision the bucket holds. */
int64_t
home_object_current(const int64_t *keep, size_t nkeep)
{
	int64_t	 cur = -1;
	size_t	 i;

	for (i = 0; i < nkeep; i++)
		if (keep[i] > cur)
			cur = keep[i];
	return cur;
}

static int
ho_prune(struct home_store *hs, const char *key, const int64_t *keep,
    size_t nkeep, struct errmsg *e)
{
	struct home_object	*ho = hs->impl;
	int64_t			 cur;
	int			 r;

	if ((r = home_prune(&ho->cache, key, keep, nkeep, e)) != 0)
		return r;
	if (task_self() == NULL)
		return 0;	/* serve's start-up: the sweep does the bucket */
	/*
	 * The bucket keeps the current revision only: the previous object
	 * goes once the row moved on.  Older rows stay restorable from the
	 * cache while it holds them.
	 */
	cur = home_object_current(keep, nkeep);
	return home_object_prune(key, &cur, cur >= 0 ? 1 : 0, NULL, NULL,
	    NULL, e);
}

static int
ho_mark_latest(struct home_store *hs, const char *key, int64_t rev,
    struct errmsg *e)
{
	struct home_object	*ho = hs->impl;

	return home_mark_latest(&ho->cache, key, rev, e);
}

static void
ho_free(struct home_store *hs)
{
	struct home_object	*ho = hs->impl;

	if (ho == NULL)
		return;
	ho->cache.ops->free(&ho->cache);
	free(ho);
	hs->impl = NULL;
}

/* No put_same: an unchanged checkpoint is a new object, sealed anew. */
const struct home_store_ops home_object_ops = {
	.name = "object",
	.put_begin = ho_put_begin,
	.put_write = ho_put_write,
	.put_commit = ho_put_commit,
	.put_abort = ho_put_abort,
	.get_open = ho_get_open,
	.get_read = ho_get_read,
	.get_close = ho_get_close,
	.get_skip = ho_get_skip,
	.list = ho_list,
	.prune = ho_prune,
	.mark_latest = ho_mark_latest,
	.free = ho_free,
};

int
home_object_init(struct home_store *hs, const char *data_dir,
    struct store *st, struct errmsg *e)
{
	struct home_object	*ho;
	int			 r;

	ho = xcalloc(1, sizeof *ho);
	ho->st = st;
	ho->cache.ops = &home_local_ops;
	if ((r = home_local_init(&ho->cache, data_dir, e)) != 0) {
		free(ho);
		return r;
	}
	hs->impl = ho;
	return 0;
}

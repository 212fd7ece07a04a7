/* SPDX-License-Identifier: MIT */
/*
 * Reading a stored revision in place (home-browse.h, SPEC C-15): the tools
 * of a stopped computer list and read its files from the newest archive
 * in the home store, so looking at a computer never starts it.
 *
 * Each request is one pass of libarchive over the archive, taken through
 * the store's get stream (home.h), so any store that can hand out its
 * bytes serves it; the local store also skips file bodies with a seek,
 * so a listing reads headers only.  The pass runs on a thread of its own
 * while the calling task waits for its answer on a pipe (home_fsync's
 * pattern): the disk reads never hold up the loop.
 *
 * Trust: an archive came from a machine, and a machine is not the
 * controller's.  Its entry names pass the same checks as a client's path
 * (an absolute, "..", "." or empty-segment name is passed over, as is
 * guestd's own .rakazo-* top level), names are matched as strings and
 * nothing is ever extracted or resolved on the controller's disk: a
 * symbolic or hard link entry is listed as what it is and never followed,
 * so no path leads out of the tree.  Listings keep at most
 * HOME_BROWSE_LIST_MAX entries in memory (sorted, cut back when full, as
 * guestd lists a directory); reads return at most the caller's length.
 */
#include "autoconf.h"

#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "err.h"
#include "json.h"
#include "home.h"
#include "home-browse.h"
#include "task.h"
#include "xmalloc.h"

#define HB_CHUNK		(64 * 1024)
#define HB_RESERVED		".rakazo-"
/* JSON bytes of a listing: as guestd, well under one reply. */
#define HB_LIST_BUDGET		(768 * 1024)

/* ---- paths ------------------------------------------------------------ */

int
home_browse_path(const char *path, size_t len, char *dst, size_t dstlen,
    struct errmsg *e)
{
	size_t	 i, start, seg;
	int	 worst = 0;

	if (len == 0 || (len == 1 && path[0] == '.')) {
		dst[0] = '\0';
		return 0;
	}
	if (memchr(path, '\0', len) != NULL)
		return errmsg_set(e, ERR_PATH_INVALID, "The path holds a NUL.");
	if (path[0] == '/')
		return errmsg_set(e, ERR_PATH_OUTSIDE, "The path is absolute; "
		    "paths are relative to the workspace.");
	/* ".." anywhere wins, so an escape is always reported as one. */
	for (start = 0, i = 0; i <= len; i++) {
		if (i < len && path[i] != '/')
			continue;
		seg = i - start;
		if (seg == 2 && path[start] == '.' && path[start + 1] == '.')
			return errmsg_set(e, ERR_PATH_OUTSIDE, "The path "
			    "leads out of the workspace.");
		if (worst == 0 && seg == 0 && !(i == len && start > 0))
			worst = ERR_PATH_INVALID;	/* "a//b"; "a/" ok */
		if (worst == 0 && seg == 1 && path[start] == '.')
			worst = ERR_PATH_INVALID;
		if (worst == 0 && seg > NAME_MAX)
			worst = ERR_NAME_TOO_LONG;
		start = i + 1;
	}
	if (worst == 0 && len >= PATH_MAX)
		worst = ERR_NAME_TOO_LONG;
	if (worst != 0)
		return errmsg_set(e, worst, "The path is refused.");
	if (path[len - 1] == '/')
		len--;
	if (len >= dstlen)
		return errmsg_set(e, ERR_NAME_TOO_LONG, "The path is refused.");
	memcpy(dst, path, len);
	dst[len] = '\0';
	return 0;
}

/* An entry's name in normal form, or -1 when it is to be passed over. */
static int
hb_entry_name(struct archive_entry *ae, char *dst, size_t dstlen)
{
	struct errmsg	 ignore;
	const char	*name;

	memset(&ignore, 0, sizeof ignore);
	if ((name = archive_entry_pathname(ae)) == NULL &&
	    (name = archive_entry_pathname_utf8(ae)) == NULL)
		return -1;
	if (home_browse_path(name, strlen(name), dst, dstlen, &ignore) != 0 ||
	    dst[0] == '\0')
		return -1;
	if (strncmp(dst, HB_RESERVED, sizeof HB_RESERVED - 1) == 0)
		return -1;
	return 0;
}

/* ---- one pass over an archive ------------------------------------------ */

struct hb_src {
	struct home_store	*hs;
	struct home_get		*get;
	uint8_t			*buf;
	struct errmsg		 err;	/* the store's, when it failed */
};

static la_ssize_t
hb_read_cb(struct archive *a, void *arg, const void **p)
{
	struct hb_src	*s = arg;
	ssize_t		 n;

	if ((n = home_get_read(s->hs, s->get, s->buf, HB_CHUNK,
	    &s->err)) < 0) {
		archive_set_error(a, EIO, "the home store failed");
		return -1;
	}
	*p = s->buf;
	return n;
}

static la_int64_t
hb_skip_cb(struct archive *a, void *arg, la_int64_t n)
{
	struct hb_src	*s = arg;
	int64_t		 k;

	if ((k = home_get_skip(s->hs, s->get, n, &s->err)) < 0) {
		archive_set_error(a, EIO, "the home store failed");
		return ARCHIVE_FATAL;
	}
	return k;
}

static int
hb_open(struct hb_src *s, struct home_store *hs, const char *key,
    int64_t rev, struct archive **out, struct errmsg *e)
{
	struct archive	*a;
	int64_t		 size;
	int		 r;

	*out = NULL;
	memset(s, 0, sizeof *s);
	s->hs = hs;
	if ((r = home_get_open(hs, key, rev, &s->get, &size, e)) != 0)
		return r;
	s->buf = xmalloc(HB_CHUNK);
	if ((a = archive_read_new()) == NULL)
		return errmsg_code(e, ERR_NOMEM);
	/* A workspace archive is plain tar (pax): nothing else is tried. */
	if (archive_read_support_format_tar(a) != ARCHIVE_OK ||
	    archive_read_open2(a, s, NULL, hb_read_cb, hb_skip_cb, NULL) !=
	    ARCHIVE_OK) {
		r = errmsg_set(e, ERR_TAR_INVALID, "revision %lld cannot be "
		    "read: %s", (long long)rev, archive_error_string(a) ?
		    archive_error_string(a) : "not a tar archive");
		archive_read_free(a);
		return r;
	}
	*out = a;
	return 0;
}

static void
hb_close(struct hb_src *s, struct archive *a)
{
	if (a != NULL)
		archive_read_free(a);
	home_get_close(s->hs, s->get);
	free(s->buf);
}

/* A failed header or data read: the store's error, or the archive's. */
static int
hb_fail(struct hb_src *s, struct archive *a, struct errmsg *e)
{
	const char	*why = archive_error_string(a);

	if (s->err.code != 0) {
		*e = s->err;
		return errmsg_set(e, ERR_HOME_STORE, "the home store failed: "
		    "%s", errmsg_str(&s->err));
	}
	return errmsg_set(e, ERR_TAR_INVALID, "the stored revision is "
	    "damaged: %s", why != NULL ? why : "unreadable archive");
}

/* ---- listing ---------------------------------------------------------- */

struct hb_child {
	char		*name;
	int		 seen;		/* an entry of its own, not implied */
	unsigned	 type;
	int64_t		 size;
	int		 mode;
	int64_t		 mtime;
};

struct hb_list {
	struct hb_child	*v;
	size_t		 n, cap;
	int		 truncated;
};

static int
hb_child_cmp(const void *a, const void *b)
{
	const struct hb_child	*x = a, *y = b;
	int			 c = strcmp(x->name, y->name);

	/* Equal names: the one with an entry of its own first. */
	return c != 0 ? c : y->seen - x->seen;
}

/* Sort, fold duplicates into the first, keep the max smallest. */
static void
hb_list_compact(struct hb_list *l, size_t max)
{
	size_t	 i, k = 0;

	qsort(l->v, l->n, sizeof *l->v, hb_child_cmp);
	for (i = 0; i < l->n; i++) {
		if (k > 0 && strcmp(l->v[k - 1].name, l->v[i].name) == 0) {
			free(l->v[i].name);
			continue;
		}
		l->v[k++] = l->v[i];
	}
	l->n = k;
	if (l->n > max) {
		for (i = max; i < l->n; i++)
			free(l->v[i].name);
		l->n = max;
		l->truncated = 1;
	}
}

static void
hb_list_add(struct hb_list *l, const char *name, size_t len, int seen,
    struct archive_entry *ae)
{
	struct hb_child	*c;

	if (l->n == l->cap)
		hb_list_compact(l, HOME_BROWSE_LIST_MAX);
	c = &l->v[l->n++];
	memset(c, 0, sizeof *c);
	c->name = xmalloc(len + 1);
	memcpy(c->name, name, len);
	c->name[len] = '\0';
	if ((c->seen = seen)) {
		c->type = archive_entry_filetype(ae);
		if (archive_entry_hardlink(ae) != NULL)
			c->type = AE_IFLNK;	/* a link, whatever it names */
		c->size = c->type == AE_IFREG ? archive_entry_size(ae) : 0;
		c->mode = (int)(archive_entry_mode(ae) & 07777);
		c->mtime = archive_entry_mtime(ae);
	} else
		c->type = AE_IFDIR;
}

static const char *
hb_type(unsigned t)
{
	switch (t) {
	case AE_IFREG:
		return "file";
	case AE_IFDIR:
		return "dir";
	case AE_IFLNK:
		return "symlink";
	default:
		return "other";
	}
}

/* A name that is not UTF-8 is listed as guestd lists it: \xHH escapes. */
static json_t *
hb_name_json(const char *name)
{
	json_t	*j;

	if ((j = jsonx_name_string(name, strlen(name), NULL)) == NULL)
		fatal("out of memory");
	return j;
}

static json_t *
hb_list_json(struct hb_list *l, const char *dir)
{
	json_t	*arr = json_array(), *en;
	size_t	 i, budget = 0;

	for (i = 0; i < l->n; i++) {
		budget += 7 * strlen(l->v[i].name) + 128;
		if (budget > HB_LIST_BUDGET) {
			l->truncated = 1;
			break;
		}
		en = json_pack("{s:s, s:I, s:i, s:I}", "type",
		    hb_type(l->v[i].type), "size", (json_int_t)l->v[i].size,
		    "mode", l->v[i].mode, "mtime", (json_int_t)l->v[i].mtime);
		json_object_set_new(en, "name", hb_name_json(l->v[i].name));
		json_array_append_new(arr, en);
	}
	return json_pack("{s:s, s:o, s:b}", "path", dir, "entries", arr,
	    "truncated", l->truncated);
}

static int
hb_list_pass(struct archive *a, struct hb_src *s, const char *dir,
    struct hb_list *l, struct errmsg *e)
{
	struct archive_entry	*ae;
	char			 name[PATH_MAX];
	const char		*rest, *slash;
	size_t			 dlen = strlen(dir);
	int			 r, isdir = dlen == 0, isfile = 0;

	while ((r = archive_read_next_header(a, &ae)) != ARCHIVE_EOF) {
		if (r < ARCHIVE_WARN)
			return hb_fail(s, a, e);
		if (hb_entry_name(ae, name, sizeof name) != 0)
			continue;
		if (strcmp(name, dir) == 0) {
			if (archive_entry_filetype(ae) == AE_IFDIR &&
			    archive_entry_hardlink(ae) == NULL)
				isdir = 1;
			else
				isfile = 1;
			continue;
		}
		if (dlen > 0 && (strncmp(name, dir, dlen) != 0 ||
		    name[dlen] != '/'))
			continue;
		isdir = 1;	/* implied by an entry below it */
		rest = name + (dlen > 0 ? dlen + 1 : 0);
		if ((slash = strchr(rest, '/')) != NULL)
			hb_list_add(l, rest, (size_t)(slash - rest), 0, ae);
		else
			hb_list_add(l, rest, strlen(rest), 1, ae);
	}
	if (!isdir)
		return errmsg_set(e, isfile ? ERR_NOT_DIR : ERR_NOT_FOUND,
		    "Cannot list \"%.200s\": %s.", dir, isfile ? "not a "
		    "directory" : "no such directory in the stored workspace");
	return 0;
}

/* ---- reading ---------------------------------------------------------- */

/* Pass over n bytes of the current entry's data. */
static int
hb_data_skip(struct archive *a, struct hb_src *s, int64_t n,
    struct errmsg *e)
{
	uint8_t		*junk = xmalloc(HB_CHUNK);
	la_ssize_t	 k;
	int		 r = 0;

	while (n > 0) {
		k = archive_read_data(a, junk, n < HB_CHUNK ? (size_t)n :
		    HB_CHUNK);
		if (k <= 0) {
			r = k < 0 ? hb_fail(s, a, e) : errmsg_set(e,
			    ERR_TAR_INVALID, "the stored file is shorter than "
			    "its header");
			break;
		}
		n -= k;
	}
	free(junk);
	return r;
}

static int
hb_read_entry(struct archive *a, struct hb_src *s, struct archive_entry *ae,
    const char *path, int64_t off, int64_t len, void **data, size_t *n,
    int64_t *size, struct errmsg *e)
{
	uint8_t		*buf;
	la_ssize_t	 k;
	size_t		 got = 0;
	int		 r;

	if (archive_entry_filetype(ae) == AE_IFDIR &&
	    archive_entry_hardlink(ae) == NULL)
		return errmsg_set(e, ERR_NOT_REGULAR, "Cannot read "
		    "\"%.200s\": a directory.", path);
	if (archive_entry_filetype(ae) != AE_IFREG ||
	    archive_entry_hardlink(ae) != NULL)
		return errmsg_set(e, ERR_NOT_REGULAR, "Cannot read "
		    "\"%.200s\": not a regular file (links are not followed).",
		    path);
	*size = archive_entry_size(ae);
	if (*size < 0)
		return errmsg_set(e, ERR_TAR_INVALID, "the stored file has a "
		    "negative size");
	if (off > *size)
		return errmsg_set(e, ERR_RANGE, "The offset is past the end of "
		    "the file (size %lld).", (long long)*size);
	if (len > *size - off)
		len = *size - off;
	if ((r = hb_data_skip(a, s, off, e)) != 0)
		return r;
	buf = xmalloc((size_t)len + 1);
	while ((int64_t)got < len) {
		if ((k = archive_read_data(a, buf + got, (size_t)len - got)) <=
		    0) {
			free(buf);
			return k < 0 ? hb_fail(s, a, e) : errmsg_set(e,
			    ERR_TAR_INVALID, "the stored file is shorter than "
			    "its header");
		}
		got += (size_t)k;
	}
	*data = buf;
	*n = got;
	return 0;
}

static int
hb_read_pass(struct archive *a, struct hb_src *s, const char *path,
    int64_t off, int64_t len, void **data, size_t *n, int64_t *size,
    struct errmsg *e)
{
	struct archive_entry	*ae;
	char			 name[PATH_MAX];
	size_t			 plen = strlen(path);
	int			 r, below = plen == 0;

	while ((r = archive_read_next_header(a, &ae)) != ARCHIVE_EOF) {
		if (r < ARCHIVE_WARN)
			return hb_fail(s, a, e);
		if (hb_entry_name(ae, name, sizeof name) != 0)
			continue;
		/* The first entry of the name: export writes each once. */
		if (strcmp(name, path) == 0)
			return hb_read_entry(a, s, ae, path, off, len, data,
			    n, size, e);
		if (strncmp(name, path, plen) == 0 && name[plen] == '/')
			below = 1;
	}
	if (below)
		return errmsg_set(e, ERR_NOT_REGULAR, "Cannot read \"%.200s\": "
		    "a directory.", path);
	return errmsg_set(e, ERR_NOT_FOUND, "Cannot read \"%.200s\": no such "
	    "file in the stored workspace.", path);
}

/* ---- the thread ------------------------------------------------------- */

struct hb_job {
	int		(*fn)(struct hb_job *);
	struct home_store	*hs;
	const char	*key, *path;
	const char	*sha256;	/* verify: the row's */
	int64_t		 rev, off, len;
	json_t		*list;
	void		*data;
	size_t		 n;
	int64_t		 size;
	struct errmsg	 e;
	int		 r;
	int		 wfd;
};

static int
hb_job_list(struct hb_job *j)
{
	struct hb_src	 s;
	struct hb_list	 l;
	struct archive	*a = NULL;
	size_t		 i;
	int		 r;

	memset(&l, 0, sizeof l);
	if ((r = hb_open(&s, j->hs, j->key, j->rev, &a, &j->e)) != 0)
		goto out;
	l.cap = 2 * HOME_BROWSE_LIST_MAX;
	l.v = xcalloc(l.cap, sizeof *l.v);
	if ((r = hb_list_pass(a, &s, j->path, &l, &j->e)) != 0)
		goto out;
	hb_list_compact(&l, HOME_BROWSE_LIST_MAX);
	j->list = hb_list_json(&l, j->path);
out:
	for (i = 0; i < l.n; i++)
		free(l.v[i].name);
	free(l.v);
	hb_close(&s, a);
	return r;
}

static int
hb_job_read(struct hb_job *j)
{
	struct hb_src	 s;
	struct archive	*a = NULL;
	int		 r;

	if ((r = hb_open(&s, j->hs, j->key, j->rev, &a, &j->e)) == 0)
		r = hb_read_pass(a, &s, j->path, j->off, j->len, &j->data,
		    &j->n, &j->size, &j->e);
	hb_close(&s, a);
	return r;
}

/*
 * The whole archive read and hashed: a revision is served or linked only
 * while its bytes are still those its row recorded.  The archive is read
 * through the store's get stream, so a damaged disk block (EIO) fails as
 * a damaged archive does.
 */
static int
hb_job_verify(struct hb_job *j)
{
	static const char	 hex[] = "0123456789abcdef";
	struct home_get		*g = NULL;
	struct errmsg		 re;
	EVP_MD_CTX		*md = NULL;
	unsigned char		 out[EVP_MAX_MD_SIZE];
	char			 got[2 * EVP_MAX_MD_SIZE + 1];
	uint8_t			*buf = NULL;
	unsigned int		 n = 0, i;
	int64_t			 size = 0, seen = 0;
	ssize_t			 k;
	int			 r;

	memset(&re, 0, sizeof re);
	if ((r = home_get_open(j->hs, j->key, j->rev, &g, &size,
	    &j->e)) != 0)
		goto out;
	buf = xmalloc(HB_CHUNK);
	if ((md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		r = errmsg_code(&j->e, ERR_NOMEM);
		goto out;
	}
	while ((k = home_get_read(j->hs, g, buf, HB_CHUNK, &re)) > 0) {
		if (EVP_DigestUpdate(md, buf, (size_t)k) != 1) {
			r = errmsg_code(&j->e, ERR_INTERNAL);
			goto out;
		}
		seen += k;
	}
	if (k < 0) {
		r = errmsg_set(&j->e, ERR_HOME_STORE, "revision %lld cannot "
		    "be read whole: %s", (long long)j->rev, errmsg_str(&re));
		goto out;
	}
	if (EVP_DigestFinal_ex(md, out, &n) != 1) {
		r = errmsg_code(&j->e, ERR_INTERNAL);
		goto out;
	}
	for (i = 0; i < n; i++) {
		got[2 * i] = hex[out[i] >> 4];
		got[2 * i + 1] = hex[out[i] & 15];
	}
	got[2 * n] = '\0';
	if (seen != j->size || strlen(j->sha256) != 2 * n ||
	    CRYPTO_memcmp(got, j->sha256, 2 * n) != 0) {
		r = errmsg_set(&j->e, ERR_HOME_STORE, "revision %lld is "
		    "damaged: its archive (%lld bytes) no longer matches the "
		    "sha256 and size (%lld bytes) recorded when it was saved",
		    (long long)j->rev, (long long)seen, (long long)j->size);
		goto out;
	}
	r = 0;
out:
	EVP_MD_CTX_free(md);
	free(buf);
	home_get_close(j->hs, g);
	return r;
}

/*
 * The byte it writes hands the job back: the task may return at once and
 * its stack (where the job lives) be reused, so nothing of the job is
 * touched after it, not even the pipe's number (a stale one closed the
 * state store's descriptor).  The task closes both ends.
 */
static void *
hb_main(void *arg)
{
	struct hb_job	*j = arg;
	int		 wfd = j->wfd;
	char		 c = 1;

	j->r = j->fn(j);
	while (write(wfd, &c, 1) == -1 && errno == EINTR)
		;
	return NULL;
}

/* j->fn off the loop when called from a task; inline elsewhere. */
static int
hb_run(struct hb_job *j)
{
	pthread_t	 th;
	pthread_attr_t	 at;
	int		 pfd[2];
	char		 c;

	if (task_self() == NULL || pipe2(pfd, O_CLOEXEC) == -1)
		return j->fn(j);
	j->wfd = pfd[1];
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &at, hb_main, j) != 0) {
		pthread_attr_destroy(&at);
		close(pfd[0]);
		close(pfd[1]);
		return j->fn(j);
	}
	pthread_attr_destroy(&at);
	/* The job is the thread's until it answers: wait for that, always. */
	(void)task_wait_fd(pfd[0], -1);
	while (read(pfd[0], &c, 1) == -1 && errno == EINTR)
		;
	close(pfd[0]);
	close(pfd[1]);
	return j->r;
}

int
home_browse_list(struct home_store *hs, const char *key, int64_t rev,
    const char *dir, json_t **out, struct errmsg *e)
{
	struct hb_job	 j;
	int		 r;

	*out = NULL;
	memset(&j, 0, sizeof j);
	j.fn = hb_job_list;
	j.hs = hs;
	j.key = key;
	j.rev = rev;
	j.path = dir;
	if ((r = hb_run(&j)) != 0) {
		*e = j.e;
		return r;
	}
	*out = j.list;
	return 0;
}

int
home_browse_read(struct home_store *hs, const char *key, int64_t rev,
    const char *path, int64_t off, int64_t len, void **data, size_t *n,
    int64_t *size, struct errmsg *e)
{
	struct hb_job	 j;
	int		 r;

	*data = NULL;
	*n = 0;
	*size = 0;
	memset(&j, 0, sizeof j);
	j.fn = hb_job_read;
	j.hs = hs;
	j.key = key;
	j.rev = rev;
	j.path = path;
	j.off = off;
	j.len = len;
	if ((r = hb_run(&j)) != 0) {
		*e = j.e;
		return r;
	}
	*data = j.data;
	*n = j.n;
	*size = j.size;
	return 0;
}

int
home_browse_verify(struct home_store *hs, const char *key, int64_t rev,
    int64_t bytes, const char *sha256, struct errmsg *e)
{
	struct hb_job	 j;
	int		 r;

	memset(&j, 0, sizeof j);
	j.fn = hb_job_verify;
	j.hs = hs;
	j.key = key;
	j.rev = rev;
	j.size = bytes;
	j.sha256 = sha256;
	if ((r = hb_run(&j)) != 0)
		*e = j.e;
	return r;
}

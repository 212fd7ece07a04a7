/* SPDX-License-Identifier: MIT */
/*
 * The local home store (home.h, SPEC C-9): a directory per home key under
 * DATA_DIR/homes, each revision one archive in it:
 *
 *   homes/<key>/rev-<N>.tar          a committed revision, never changed
 *   homes/<key>/.put-<N>-<pid>.tmp   a put under way (or a crash's)
 *
 * Revisions never change, so one that holds the same bytes as an older
 * one (an unchanged checkpoint) is a hard link to it (hl_put_same).
 *   homes/<key>/latest               symlink to the newest revision, for
 *                                    operators; nothing here reads it
 *   homes/<key>/.gone-<pid>-<n>.tmp  a pruned revision whose blocks are
 *                                    being freed (hl_unlink_later)
 *
 * A put writes its temporary file beside the revisions, fsyncs it, renames
 * it to its revision's name and fsyncs the directory, so after a crash a
 * revision file is whole or absent.  Puts of one key never overlap
 * (checkpoint.c holds the key's lock), so prune may remove every
 * temporary file it finds.  The fsyncs run off the loop (home_fsync).
 *
 * The writes (on the put's writer thread, home-writer.h) go to the page
 * cache, and the archive goes to disk while it still streams in, so the
 * fsync at commit has only the last stretch left (hl_put_flush):
 *
 *   0 ......... done ............ started ............ written
 *   on disk, dropped   write-back started (waited     in the page
 *   from the cache     for once HL_FLUSH_BEHIND old)  cache, dirty
 *
 * Every HL_FLUSH_AHEAD bytes the kernel is asked to start writing the new
 * stretch out (sync_file_range, no wait).  A put written off the loop
 * (home_put_off_loop: a checkpoint's, on its writer thread) also waits
 * for the stretch more than HL_FLUSH_BEHIND back and then drops it from
 * the page cache (posix_fadvise DONTNEED): an archive is read again only
 * by a restore or a browse, and keeping its pages would evict the
 * workspaces' own (and make every stretch of it a page the kernel has to
 * find anew, where a dropped one is taken again for the next).  So at
 * most HL_FLUSH_BEHIND plus a stretch of such a put is ever cached.  The
 * loop's puts (a copy of a revision, the object store's cache, which its
 * uploader reads back as it grows) only start the write-back: the loop
 * never waits for the disk.  An error of the write-back (EIO, ENOSPC) is
 * the write's, reported at once: the kernel reports it to the waiter,
 * not again to the fsync.  The fsync still runs at commit: it also
 * writes the file's metadata and flushes the disk's cache, which
 * sync_file_range never does.  Where sync_file_range is missing (or the
 * file system refuses it) the fsync does all of it, as it would anyway.
 */
#include "autoconf.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "home.h"
#include "home-local.h"
#include "xmalloc.h"

/* Write-back started every HL_FLUSH_AHEAD bytes, waited for (and the
 * pages dropped) HL_FLUSH_BEHIND bytes later. */
#define HL_FLUSH_AHEAD	(4 * 1024 * 1024)
#define HL_FLUSH_BEHIND	(16 * 1024 * 1024)
/*
 * A revision is read on the loop (a restore streams it to guestd) and,
 * having been dropped from the cache when it was written, from the disk.
 * A get that has read its first HL_DIRECT_AFTER in order (a restore, a
 * copy; not a browse, which skips from header to header) reads the rest
 * with O_DIRECT, HL_DIRECT_BUF at a time into a buffer of its own: one
 * DMA into memory that is already ours, where a read through the page
 * cache first takes a new page for every 4 KiB (on a VM, one the host
 * may have to fault in: the cold read of a 256 MiB revision cost 0.37 s
 * of CPU that way, against 0.02 s direct) and then copies it, to keep a
 * revision nobody reads again in the cache.  Where the file system gives
 * no direct I/O alignment (statx STATX_DIOALIGN) or refuses a direct
 * read, the get reads through the page cache, asking for HL_READ_AHEAD
 * ahead (POSIX_FADV_WILLNEED) whenever less than half of it is left, as
 * the kernel's own read-ahead (128 KiB) would make each read wait.
 */
#define HL_READ_AHEAD	(8 * 1024 * 1024)
#define HL_DIRECT_AFTER	(1024 * 1024)
#define HL_DIRECT_BUF	(1024 * 1024)
#define HL_DIRECT_ALIGN	4096		/* the most statx may ask for */

struct home_local {
	char	 root[PATH_MAX];	/* DATA_DIR/homes */
};

struct home_put {
	int	 fd;
	off_t	 written;
	off_t	 started;	/* write-back started below (hl_put_flush) */
	off_t	 done;		/* on disk and dropped below */
	int	 off_loop;	/* written from a thread: may wait */
	int	 no_range;	/* the file system refused sync_file_range */
	char	 tmp[PATH_MAX];
	char	 final[PATH_MAX];
	char	 dir[PATH_MAX];
};

struct home_get {
	int	 fd;
	int64_t	 off;		/* where the next read starts */
	int64_t	 ahead;		/* read-ahead was asked up to here */
	int	 skips;		/* a browse: no read-ahead */
	int	 direct;	/* 0 not yet, 1 on, -1 never */
	uint8_t	*dbuf;		/* direct: HL_DIRECT_BUF, aligned */
	size_t	 dlen, dpos;	/* direct: bytes in dbuf, taken */
	int64_t	 dnext;		/* direct: the file offset to read next */
};

static int
hl_mkdir(const char *path, struct errmsg *e)
{
	if (mkdir(path, 0700) == -1 && errno != EEXIST)
		return errmsg_set(e, err_from_errno(errno), "cannot make the "
		    "home store directory: %s", strerror(errno));
	return 0;
}

int
home_local_init(struct home_store *hs, const char *data_dir,
    struct errmsg *e)
{
	struct home_local	*hl;
	int			 r;

	hl = xcalloc(1, sizeof *hl);
	if ((size_t)snprintf(hl->root, sizeof hl->root, "%s/homes",
	    data_dir) >= sizeof hl->root) {
		free(hl);
		return errmsg_set(e, ERR_NAME_TOO_LONG, "the data directory "
		    "path is too long");
	}
	if ((r = hl_mkdir(hl->root, e)) != 0) {
		free(hl);
		return r;
	}
	hs->impl = hl;
	return 0;
}

static void
hl_free(struct home_store *hs)
{
	free(hs->impl);
	hs->impl = NULL;
}

static int
hl_dir(struct home_store *hs, const char *key, char *dst, size_t len,
    struct errmsg *e)
{
	struct home_local	*hl = hs->impl;

	if (key[0] == '\0' || key[0] == '.' || strchr(key, '/') != NULL)
		return errmsg_set(e, ERR_BAD_REQUEST, "bad home key");
	if ((size_t)snprintf(dst, len, "%s/%s", hl->root, key) >= len)
		return errmsg_code(e, ERR_NAME_TOO_LONG);
	return 0;
}

static int
hl_rev_path(struct home_store *hs, const char *key, int64_t rev, char *dst,
    size_t len, struct errmsg *e)
{
	char	 dir[PATH_MAX];
	int	 r;

	if ((r = hl_dir(hs, key, dir, sizeof dir, e)) != 0)
		return r;
	if ((size_t)snprintf(dst, len, "%s/rev-%" PRId64 ".tar", dir, rev) >=
	    len)
		return errmsg_code(e, ERR_NAME_TOO_LONG);
	return 0;
}

/* fsync a directory so a rename in it survives a crash. */
static int
hl_sync_dir(const char *dir)
{
	int	 fd, r;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return err_from_errno(errno);
	r = home_fsync(fd);
	close(fd);
	return r;
}

static int
hl_put_begin(struct home_store *hs, const char *key, int64_t rev,
    struct home_put **out, struct errmsg *e)
{
	struct home_put	*p;
	int		 r;

	*out = NULL;
	p = xcalloc(1, sizeof *p);
	p->fd = -1;
	if ((r = hl_dir(hs, key, p->dir, sizeof p->dir, e)) != 0 ||
	    (r = hl_mkdir(p->dir, e)) != 0 ||
	    (r = hl_rev_path(hs, key, rev, p->final, sizeof p->final, e)) != 0)
		goto fail;
	if ((size_t)snprintf(p->tmp, sizeof p->tmp, "%s/.put-%" PRId64 "-%ld"
	    ".tmp", p->dir, rev, (long)getpid()) >= sizeof p->tmp) {
		r = errmsg_code(e, ERR_NAME_TOO_LONG);
		goto fail;
	}
	(void)unlink(p->tmp);
	if ((p->fd = open(p->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) == -1) {
		r = errmsg_set(e, err_from_errno(errno), "cannot create the "
		    "revision file: %s", strerror(errno));
		goto fail;
	}
	*out = p;
	return 0;
fail:
	free(p);
	return r;
}

#ifdef HAVE_SYNC_FILE_RANGE
/* 1 for a sync_file_range failure that says "not here", not "failed". */
static int
hl_range_refused(int err)
{
	return err == ENOSYS || err == EINVAL || err == EOPNOTSUPP ||
	    err == ESPIPE;
}

/*
 * The write-back of what was written (the header says how far behind).
 * A failure of the write-back itself is the put's: its pages are lost,
 * and the fsync would not say so again.
 */
static int
hl_put_flush(struct home_put *p, struct errmsg *e)
{
	unsigned int	 wait = SYNC_FILE_RANGE_WAIT_BEFORE |
			    SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
	off_t		 end;

	if (p->no_range || p->written - p->started < HL_FLUSH_AHEAD)
		return 0;
	if (sync_file_range(p->fd, p->started, p->written - p->started,
	    SYNC_FILE_RANGE_WRITE) == -1)
		goto failed;
	p->started = p->written;
	if (!p->off_loop || p->started - p->done <= HL_FLUSH_BEHIND)
		return 0;
	end = p->started - HL_FLUSH_BEHIND;
	if (sync_file_range(p->fd, p->done, end - p->done, wait) == -1)
		goto failed;
#ifdef HAVE_POSIX_FADVISE
	/* Advice: should it be ignored the pages stay, nothing else. */
	(void)posix_fadvise(p->fd, p->done, end - p->done,
	    POSIX_FADV_DONTNEED);
#endif
	p->done = end;
	return 0;
failed:
	if (hl_range_refused(errno)) {
		p->no_range = 1;	/* the fsync at commit does it all */
		return 0;
	}
	return errmsg_set(e, err_from_errno(errno), "cannot write the "
	    "revision file: %s", strerror(errno));
}
#else
static int
hl_put_flush(struct home_put *p, struct errmsg *e)
{
	(void)p;
	(void)e;
	return 0;
}
#endif

static int
hl_put_write(struct home_put *p, const void *buf, size_t n,
    struct errmsg *e)
{
	const char	*c = buf;
	ssize_t		 w;

	while (n > 0) {
		if ((w = write(p->fd, c, n)) == -1) {
			if (errno == EINTR)
				continue;
			return errmsg_set(e, err_from_errno(errno), "cannot "
			    "write the revision file: %s", strerror(errno));
		}
		c += w;
		n -= (size_t)w;
		p->written += w;
	}
	return hl_put_flush(p, e);
}

static void
hl_put_off_loop(struct home_put *p)
{
	p->off_loop = 1;
}

const char *
home_local_put_path(const struct home_put *p)
{
	return p->tmp;
}

static void
hl_put_abort(struct home_put *p)
{
	if (p->fd >= 0)
		close(p->fd);
	(void)unlink(p->tmp);
	free(p);
}

static int
hl_put_commit(struct home_put *p, struct errmsg *e)
{
	int	 r;

	if ((r = home_fsync(p->fd)) != 0) {
		errmsg_set(e, r, "cannot flush the revision file to disk");
		goto fail;
	}
	if (close(p->fd) == -1) {
		p->fd = -1;
		r = errmsg_set(e, err_from_errno(errno), "cannot close the "
		    "revision file: %s", strerror(errno));
		goto fail;
	}
	p->fd = -1;
	if (rename(p->tmp, p->final) == -1) {
		r = errmsg_set(e, err_from_errno(errno), "cannot rename the "
		    "revision into place: %s", strerror(errno));
		goto fail;
	}
	if ((r = hl_sync_dir(p->dir)) != 0) {
		/* Whole but maybe not durable: not a revision yet. */
		(void)unlink(p->final);
		errmsg_set(e, r, "cannot flush the home directory to disk");
		goto fail;
	}
	free(p);
	return 0;
fail:
	hl_put_abort(p);
	return r;
}

/* rev as a hard link to from: made under a temporary name, renamed. */
static int
hl_put_same(struct home_store *hs, const char *key, int64_t from,
    int64_t rev, struct errmsg *e)
{
	char	 dir[PATH_MAX], src[PATH_MAX], tmp[PATH_MAX], dst[PATH_MAX];
	int	 r;

	if ((r = hl_dir(hs, key, dir, sizeof dir, e)) != 0 ||
	    (r = hl_rev_path(hs, key, from, src, sizeof src, e)) != 0 ||
	    (r = hl_rev_path(hs, key, rev, dst, sizeof dst, e)) != 0)
		return r;
	if ((size_t)snprintf(tmp, sizeof tmp, "%s/.put-%" PRId64 "-%ld.tmp",
	    dir, rev, (long)getpid()) >= sizeof tmp)
		return errmsg_code(e, ERR_NAME_TOO_LONG);
	(void)unlink(tmp);
	if (link(src, tmp) == -1)
		return errmsg_set(e, errno == ENOENT ? ERR_NO_REVISION :
		    err_from_errno(errno), "cannot link revision %" PRId64
		    ": %s", from, strerror(errno));
	if (rename(tmp, dst) == -1) {
		r = errmsg_set(e, err_from_errno(errno), "cannot rename the "
		    "revision into place: %s", strerror(errno));
		(void)unlink(tmp);
		return r;
	}
	if ((r = hl_sync_dir(dir)) != 0) {
		(void)unlink(dst);
		return errmsg_set(e, r, "cannot flush the home directory to "
		    "disk");
	}
	return 0;
}

static int
hl_get_open(struct home_store *hs, const char *key, int64_t rev,
    struct home_get **out, int64_t *size, struct errmsg *e)
{
	struct home_get	*g;
	struct stat	 st;
	char		 path[PATH_MAX];
	int		 fd, r;

	*out = NULL;
	*size = 0;
	if ((r = hl_rev_path(hs, key, rev, path, sizeof path, e)) != 0)
		return r;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return errmsg_set(e, errno == ENOENT ? ERR_NO_REVISION :
		    err_from_errno(errno), "cannot open revision %" PRId64
		    ": %s", rev, strerror(errno));
	if (fstat(fd, &st) == -1) {
		r = errmsg_set(e, err_from_errno(errno), "cannot stat "
		    "revision %" PRId64, rev);
		close(fd);
		return r;
	}
	g = xcalloc(1, sizeof *g);
	g->fd = fd;
#ifdef HAVE_POSIX_FADVISE
	/* No kernel read-ahead (up to read_ahead_kb, often MiBs): a browse
	 * reads headers and skips, a restore goes direct after its first
	 * MiB; the read-ahead either wants is asked for (hl_get_ahead). */
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
#endif
	*size = st.st_size;
	*out = g;
	return 0;
}

static void
hl_get_ahead(struct home_get *g)
{
#ifdef HAVE_POSIX_FADVISE
	/* Not while a direct read may come (direct 0): its pages would
	 * be read for nothing. */
	if (g->skips || g->direct == 0 || g->off < HL_READ_AHEAD / 8 ||
	    g->ahead - g->off > HL_READ_AHEAD / 2)
		return;
	if (g->ahead < g->off)
		g->ahead = g->off;
	/* Advice: ignored, the reads only wait longer. */
	(void)posix_fadvise(g->fd, g->ahead, HL_READ_AHEAD,
	    POSIX_FADV_WILLNEED);
	g->ahead += HL_READ_AHEAD;
#else
	(void)g;
#endif
}

/* fd's O_DIRECT on or off; 0 or -1. */
static int
hl_set_direct(int fd, int on)
{
	int	fl;

	if ((fl = fcntl(fd, F_GETFL)) == -1)
		return -1;
	return fcntl(fd, F_SETFL, on ? fl | O_DIRECT : fl & ~O_DIRECT);
}

/* Reads from here on go direct, if the file system lets them. */
static void
hl_get_try_direct(struct home_get *g)
{
#if defined(HAVE_STATX) && HAVE_DECL_STATX_DIOALIGN
	struct statx	sx;

	g->direct = -1;
	if (statx(g->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) != 0 ||
	    (sx.stx_mask & STATX_DIOALIGN) == 0 ||
	    sx.stx_dio_mem_align == 0 ||
	    sx.stx_dio_mem_align > HL_DIRECT_ALIGN ||
	    sx.stx_dio_offset_align == 0 ||
	    sx.stx_dio_offset_align > HL_DIRECT_ALIGN ||
	    posix_memalign((void **)&g->dbuf, HL_DIRECT_ALIGN,
	    HL_DIRECT_BUF) != 0)
		return;
	if (hl_set_direct(g->fd, 1) == -1) {
		free(g->dbuf);
		g->dbuf = NULL;
		return;
	}
	g->direct = 1;
	g->dnext = g->off;
	g->dlen = g->dpos = 0;
#else
	g->direct = -1;
#endif
}

/* Back to reads through the cache, at g->off. */
static int
hl_get_end_direct(struct home_get *g)
{
	g->direct = -1;
	free(g->dbuf);
	g->dbuf = NULL;
	g->dlen = g->dpos = 0;
	if (hl_set_direct(g->fd, 0) == -1 ||
	    lseek(g->fd, (off_t)g->off, SEEK_SET) == (off_t)-1)
		return -1;
	return 0;
}

/* A direct get's next bytes: from dbuf, refilled when taken. */
static ssize_t
hl_get_read_direct(struct home_get *g, void *buf, size_t max,
    struct errmsg *e)
{
	ssize_t	 n;

	if (g->dpos == g->dlen) {
		do
			n = pread(g->fd, g->dbuf, HL_DIRECT_BUF,
			    (off_t)g->dnext);
		while (n == -1 && errno == EINTR);
		if (n == -1 && errno == EINVAL) {
			/* Refused after all: the cache, from here. */
			if (hl_get_end_direct(g) == 0)
				return 0;
		}
		if (n == -1) {
			errmsg_set(e, err_from_errno(errno), "cannot read "
			    "the revision: %s", strerror(errno));
			return -1;
		}
		g->dnext += n;
		g->dlen = (size_t)n;
		g->dpos = 0;
	}
	n = (ssize_t)(g->dlen - g->dpos);
	if ((size_t)n > max)
		n = (ssize_t)max;
	memcpy(buf, g->dbuf + g->dpos, (size_t)n);
	g->dpos += (size_t)n;
	g->off += n;
	return n;
}

static ssize_t
hl_get_read(struct home_get *g, void *buf, size_t max, struct errmsg *e)
{
	ssize_t	 n;

	if (g->direct == 0 && !g->skips && g->off >= HL_DIRECT_AFTER) {
		/* Direct reads start at an aligned offset: until there,
		 * through the cache. */
		if (g->off % HL_DIRECT_ALIGN == 0)
			hl_get_try_direct(g);
		else if (max > (size_t)(HL_DIRECT_ALIGN -
		    g->off % HL_DIRECT_ALIGN))
			max = (size_t)(HL_DIRECT_ALIGN -
			    g->off % HL_DIRECT_ALIGN);
	}
	if (g->direct == 1) {
		n = hl_get_read_direct(g, buf, max, e);
		if (n != 0 || g->direct == 1)
			return n;
	}
	hl_get_ahead(g);
	do
		n = read(g->fd, buf, max);
	while (n == -1 && errno == EINTR);
	if (n == -1)
		errmsg_set(e, err_from_errno(errno), "cannot read the "
		    "revision: %s", strerror(errno));
	else
		g->off += n;
	return n;
}

/* Skipped bytes are never read: listing a large home reads its headers. */
static int64_t
hl_get_skip(struct home_get *g, int64_t n, struct errmsg *e)
{
	off_t	at;

	if (g->direct == 1 && hl_get_end_direct(g) == -1)
		return errmsg_set(e, err_from_errno(errno), "cannot seek in "
		    "the revision: %s", strerror(errno));
	if ((at = lseek(g->fd, (off_t)n, SEEK_CUR)) == (off_t)-1)
		return errmsg_set(e, err_from_errno(errno), "cannot seek in "
		    "the revision: %s", strerror(errno));
	g->off = at;
	g->skips = 1;
	return n;
}

static void
hl_get_close(struct home_get *g)
{
	close(g->fd);
	free(g->dbuf);
	free(g);
}

/* rev of "rev-<N>.tar", or -1. */
static int64_t
hl_parse(const char *name)
{
	char		*end;
	long long	 v;

	if (strncmp(name, "rev-", 4) != 0 || name[4] < '0' || name[4] > '9')
		return -1;
	errno = 0;
	v = strtoll(name + 4, &end, 10);
	if (errno != 0 || strcmp(end, ".tar") != 0 || v <= 0)
		return -1;
	return v;
}

static int
hl_cmp(const void *a, const void *b)
{
	int64_t	 x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int
hl_list(struct home_store *hs, const char *key, int64_t **out, size_t *n,
    struct errmsg *e)
{
	char		 dir[PATH_MAX];
	DIR		*d;
	struct dirent	*de;
	int64_t		*v = NULL, rev;
	size_t		 cnt = 0, cap = 0;
	int		 r;

	*out = NULL;
	*n = 0;
	if ((r = hl_dir(hs, key, dir, sizeof dir, e)) != 0)
		return r;
	if ((d = opendir(dir)) == NULL)
		return errno == ENOENT ? 0 : errmsg_set(e,
		    err_from_errno(errno), "cannot read the home directory");
	while ((de = readdir(d)) != NULL) {
		if ((rev = hl_parse(de->d_name)) < 0)
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 8;
			v = xrealloc(v, cap * sizeof *v);
		}
		v[cnt++] = rev;
	}
	closedir(d);
	if (cnt > 0)
		qsort(v, cnt, sizeof *v, hl_cmp);
	*out = v;
	*n = cnt;
	return 0;
}

static int
hl_kept(int64_t rev, const int64_t *keep, size_t nkeep)
{
	size_t	 i;

	for (i = 0; i < nkeep; i++)
		if (keep[i] == rev)
			return 1;
	return 0;
}

static void *
hl_unlink_main(void *arg)
{
	char	*path = arg;

	(void)unlink(path);
	free(path);
	return NULL;
}

/*
 * Remove a pruned revision's name now and its bytes on a thread of their
 * own: unlinking a file's last name frees its page cache and extents,
 * which for a large home takes a good part of a second, and nobody waits
 * for it (an unchanged checkpoint would, as most of its cost).  The name
 * goes by a rename first, so the revision is gone when prune returns and
 * a later put of the same number is never the one unlinked; a crash
 * leaves a .gone- file, which the next prune removes.  0, or -1 when the
 * name could not be moved (the caller unlinks it here).
 */
static int
hl_unlink_later(const char *dir, const char *path)
{
	static unsigned	 n;
	pthread_attr_t	 at;
	pthread_t	 th;
	sigset_t	 all, old;
	char		*gone;
	int		 e;

	if (asprintf(&gone, "%s/.gone-%ld-%u.tmp", dir, (long)getpid(),
	    n++) == -1)
		return -1;
	if (rename(path, gone) == -1) {
		free(gone);
		return -1;
	}
	/* The thread takes no signals: they are the loop's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	e = pthread_create(&th, &at, hl_unlink_main, gone);
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		(void)unlink(gone);
		free(gone);
	}
	return 0;
}

/* 1 for another process's .gone- file: ours are our threads' to remove. */
static int
hl_gone_leftover(const char *name)
{
	char	 mine[64];

	if (strncmp(name, ".gone-", 6) != 0)
		return 0;
	snprintf(mine, sizeof mine, ".gone-%ld-", (long)getpid());
	return strncmp(name, mine, strlen(mine)) != 0;
}

static int
hl_prune(struct home_store *hs, const char *key, const int64_t *keep,
    size_t nkeep, struct errmsg *e)
{
	char		 dir[PATH_MAX], path[PATH_MAX];
	DIR		*d;
	struct dirent	*de;
	int64_t		 rev;
	int		 r, gone = 0;

	if ((r = hl_dir(hs, key, dir, sizeof dir, e)) != 0)
		return r;
	if ((d = opendir(dir)) == NULL)
		return errno == ENOENT ? 0 : errmsg_set(e,
		    err_from_errno(errno), "cannot read the home directory");
	while ((de = readdir(d)) != NULL) {
		rev = hl_parse(de->d_name);
		if (rev < 0 && strncmp(de->d_name, ".put-", 5) != 0 &&
		    !hl_gone_leftover(de->d_name) &&
		    strcmp(de->d_name, ".latest.tmp") != 0)
			continue;
		if (rev > 0 && hl_kept(rev, keep, nkeep))
			continue;
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir,
		    de->d_name) >= sizeof path)
			continue;
		if ((rev > 0 && hl_unlink_later(dir, path) == 0) ||
		    unlink(path) == 0)
			gone++;
	}
	closedir(d);
	return gone > 0 ? hl_sync_dir(dir) : 0;
}

static int
hl_mark_latest(struct home_store *hs, const char *key, int64_t rev,
    struct errmsg *e)
{
	char	 dir[PATH_MAX], tmp[PATH_MAX], link[PATH_MAX], name[64];
	int	 r;

	if ((r = hl_dir(hs, key, dir, sizeof dir, e)) != 0)
		return r;
	snprintf(name, sizeof name, "rev-%" PRId64 ".tar", rev);
	if ((size_t)snprintf(tmp, sizeof tmp, "%s/.latest.tmp", dir) >=
	    sizeof tmp || (size_t)snprintf(link, sizeof link, "%s/latest",
	    dir) >= sizeof link)
		return errmsg_code(e, ERR_NAME_TOO_LONG);
	(void)unlink(tmp);
	if (symlink(name, tmp) == -1 || rename(tmp, link) == -1) {
		r = errmsg_set(e, err_from_errno(errno), "cannot point "
		    "\"latest\" at revision %" PRId64 ": %s", rev,
		    strerror(errno));
		(void)unlink(tmp);
		return r;
	}
	return 0;
}

const struct home_store_ops home_local_ops = {
	.name = "local",
	.put_begin = hl_put_begin,
	.put_write = hl_put_write,
	.put_write_any_thread = 1,
	.put_off_loop = hl_put_off_loop,
	.put_commit = hl_put_commit,
	.put_abort = hl_put_abort,
	.put_same = hl_put_same,
	.get_open = hl_get_open,
	.get_read = hl_get_read,
	.get_close = hl_get_close,
	.get_skip = hl_get_skip,
	.list = hl_list,
	.prune = hl_prune,
	.mark_latest = hl_mark_latest,
	.free = hl_free,
};

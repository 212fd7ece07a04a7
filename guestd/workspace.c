/* SPDX-License-Identifier: MIT */
/*
 * Workspace export and import (doc/DESIGN.md G-28, X-3): the portable workspace
 * leaves and enters a computer as one tar stream.
 *
 * The archive work blocks (directory walks, libarchive, disk writes), so
 * each op runs it on one detached worker thread.  Export: the worker
 * writes the tar into a pipe and the loop forwards what it reads as binary
 * frames, pausing the pipe while the controller is slow.  Import: the loop
 * queues received frames' bytes for the worker (a bounded queue of chunks,
 * WS_QUEUE_BYTES) and stops reading the socket while it is full; the
 * worker validates and extracts every entry into a staging directory (its
 * small files finished on a second thread: ws_finisher) and swaps it in
 * only once the whole archive was good.  Workers never touch loop state:
 * they hand results back with loop_post().
 *
 * A job is shared by the loop side and its worker.  Both references are
 * dropped on the loop thread (the worker's travels with its last
 * loop_post), so the count needs no lock; the "cancelled" flag and the
 * import's queue, which both threads use, are under a mutex.
 */
#include "autoconf.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>

#include "control.h"
#include "err.h"
#include "files.h"
#include "guestd.h"
#include "log.h"
#include "token.h"
#include "browser.h"
#include "loop.h"
#include "proto.h"
#include "queue-compat.h"
#include "workspace.h"
#include "xmalloc.h"

#define WS_WHY_LEN	256
#define WS_SAFE_NAME	160	/* an entry name quoted in an error */
/*
 * The deepest and longest path a workspace export writes and an import
 * creates.  Walks go openat() by openat(), so PATH_MAX does not bind them;
 * these bound what a hostile archive can make us build and what an export
 * walk holds open (a descriptor per level).  Export and import share
 * them, so whatever a checkpoint holds restores; an export meeting a path
 * beyond them fails NAME_TOO_LONG naming it, never drops it.
 */
#define WS_MAX_DEPTH	512	/* directory levels we walk or create */
#define WS_PATH_MAX	65536	/* a path's bytes, its NUL included */
#define WS_REMOVE_DEPTH	1024	/* levels a tree removal descends */
#define WS_IO_CHUNK	(256 * 1024)	/* file reads: few syscalls per file */
#define WS_BLOCK	10240	/* tar record size */
#define WS_TAR_RECORD	512	/* tar block: the end marker is one or two */
/*
 * An export records a file's holes (SEEK_HOLE) as a sparse entry.  Holes
 * shorter than WS_HOLE_MIN are written as zeros, and a file with more
 * than WS_SPARSE_SEGS stretches of data keeps its holes only up to
 * there: the map stays small whatever the file's layout.
 */
#define WS_HOLE_MIN	(64 * 1024)
#define WS_SPARSE_SEGS	4096
/*
 * The export's tar leaves libarchive in large writes and crosses the pipe
 * and the socket in large frames: per 256 MiB that is ~1000 writes, reads
 * and frames instead of ~26000 (a 10 KiB tar record each), and as many
 * fewer wake-ups of the loop and of serve.  The archive's bytes are the
 * same: its last block is still padded to a tar record (WS_BLOCK), so the
 * end marker lies within the last record, which a restore holds back
 * until the archive's hash matched.  A frame fits the controller's read
 * buffer whole (guest-client.c), so it is handed on without a copy.
 */
#define WS_EXPORT_BLOCK	(256 * 1024)
#define WS_EXPORT_FRAME	(224 * 1024)
#define WS_PIPE_SIZE	(1024 * 1024)
/*
 * An import's tar bytes go from the loop to the worker through a queue of
 * chunks, not a pipe: one copy out of the channel's message instead of a
 * write and a read of a pipe (two copies, a syscall each and the pipe's
 * lock, contended between the two threads), and libarchive reads the
 * chunks in place.  The queue holds at most WS_QUEUE_BYTES of chunk
 * memory (counted by capacity, so tiny frames cannot pile up chunks);
 * past it the loop holds the frame and stops reading the socket until
 * the worker has drained to half.  Spare chunks are kept for reuse, a
 * few, so a chunk is not an mmap and its page faults per frame.
 */
#define WS_QCHUNK	(256 * 1024)
#define WS_QUEUE_BYTES	(8 * 1024 * 1024)
#define WS_QSPARE	4

/*
 * guestd's own transient names at the top of the workspace: an import's
 * staging directory, the old tree while it is swapped out, and the swap's
 * journal.  Every top-level name starting with WS_RESERVED_PREFIX is
 * guestd's: export leaves those out and import refuses them.
 */
#define WS_RESERVED_PREFIX	".rakazo-"
#define WS_IMPORT_PREFIX	".rakazo-import-"
#define WS_OLD_PREFIX		".rakazo-old-"
#define WS_JOURNAL		".rakazo-swap"
#define WS_JOURNAL_TMP		".rakazo-swap.tmp"
#define WS_JOURNAL_MAX		1024
/*
 * The import tag (workspace.import's "tag") of the tree in place: written
 * into the staged tree before its swap, so it moves with that tree, in
 * or back out, whatever the swap or its recovery did.  workspace.imported
 * reads it: a client whose import answered nothing (guestd died) learns
 * from it which tree the workspace holds.
 */
#define WS_IMPORTED		".rakazo-imported"
#define WS_TAG_MAX		65	/* 64 characters and the NUL */

/*
 * A test hook: GUESTD_TEST_CRASH_AT=<step> makes guestd kill itself
 * (SIGKILL, as an OOM kill or a power cut would stop it) when an import
 * reaches that step of its swap, so tests can prove start-up recovery.
 * Read once at start-up and removed from the environment; unset, as in
 * normal use, it does nothing.
 */
static char	ws_crash_at[32];

static void
ws_crash_point(const char *step)
{
	if (ws_crash_at[0] != '\0' && strcmp(ws_crash_at, step) == 0) {
		log_warn("workspace.test_crash", "step=%s", step);
		raise(SIGKILL);
	}
}

/* ---- export skip list ---------------------------------------------------- */

/*
 * Export leaves out only temporary cache and lock files of browser
 * profiles, i.e. paths below .browser-profiles/<bot>/ (at any depth):
 *
 *   files:        SingletonLock, SingletonSocket, SingletonCookie,
 *                 lockfile, *.tmp
 *   directories:  Cache, Code Cache, GPUCache, GrShaderCache, ShaderCache,
 *                 DawnCache, DawnGraphiteCache, DawnWebGPUCache,
 *                 component_crx_cache, Crashpad,
 *                 Service Worker/CacheStorage, Service Worker/ScriptCache
 *
 * The same names anywhere else (bots/a/Cache/, shared/x.tmp) are project
 * files and are exported.  Also left out: guestd's own top-level names,
 * .rakazo-* (an import's staging directory, the old tree during a swap,
 * the swap's journal).
 */
static const char *const ws_skip_files[] = {
	"SingletonLock", "SingletonSocket", "SingletonCookie", "lockfile",
};
static const char *const ws_skip_dirs[] = {
	"Cache", "Code Cache", "GPUCache", "GrShaderCache", "ShaderCache",
	"DawnCache", "DawnGraphiteCache", "DawnWebGPUCache",
	"component_crx_cache", "Crashpad",
};
static const char *const ws_skip_sw_dirs[] = {	/* below "Service Worker" */
	"CacheStorage", "ScriptCache",
};

static int
ws_name_in(const char *name, size_t len, const char *const *list, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (strlen(list[i]) == len && memcmp(list[i], name, len) == 0)
			return 1;
	}
	return 0;
}

#define WS_NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

int
workspace_export_skip(const char *relpath, int is_dir)
{
	static const char	 prof[] = ".browser-profiles/";
	const char		*p, *seg, *prev = NULL;
	size_t			 len, prevlen = 0;
	int			 last;

	if (strchr(relpath, '/') == NULL && workspace_reserved(relpath))
		return 1;
	if (strncmp(relpath, prof, sizeof prof - 1) != 0)
		return 0;
	/* Skip the bot's directory: only what is inside a profile counts. */
	if ((p = strchr(relpath + sizeof prof - 1, '/')) == NULL)
		return 0;
	for (seg = p + 1; *seg != '\0'; seg = p + 1) {
		p = strchr(seg, '/');
		len = p != NULL ? (size_t)(p - seg) : strlen(seg);
		/* A trailing "/" ends the path like the end of the string. */
		last = p == NULL || p[1] == '\0';
		if (!last || is_dir) {
			if (ws_name_in(seg, len, ws_skip_dirs,
			    WS_NITEMS(ws_skip_dirs)))
				return 1;
			if (prev != NULL && prevlen == strlen("Service Worker") &&
			    memcmp(prev, "Service Worker", prevlen) == 0 &&
			    ws_name_in(seg, len, ws_skip_sw_dirs,
			    WS_NITEMS(ws_skip_sw_dirs)))
				return 1;
		} else {
			if (ws_name_in(seg, len, ws_skip_files,
			    WS_NITEMS(ws_skip_files)))
				return 1;
			if (len > 4 && memcmp(seg + len - 4, ".tmp", 4) == 0)
				return 1;
		}
		if (last)
			break;
		prev = seg;
		prevlen = len;
	}
	return 0;
}

int
workspace_reserved(const char *topname)
{
	return strncmp(topname, WS_RESERVED_PREFIX,
	    strlen(WS_RESERVED_PREFIX)) == 0;
}

/* ---- entry validation ---------------------------------------------------- */

/* Copy name for an error sentence: control bytes become '?', long names
 * are cut with "...". */
static void
ws_sanitize(char *dst, size_t dstlen, const char *name)
{
	size_t	i, n, len;

	if (dstlen < 5)
		return;
	if (name == NULL)
		name = "";
	len = strlen(name);
	n = len < dstlen ? len : dstlen - 4;
	for (i = 0; i < n; i++)
		dst[i] = ((unsigned char)name[i] < 0x20 ||
		    name[i] == 0x7f) ? '?' : name[i];
	if (n < len) {
		memcpy(dst + n, "...", 3);
		n += 3;
	}
	dst[n] = '\0';
}

static int
ws_reject(char *why, size_t whylen, const char *name, const char *reason)
{
	char	safe[WS_SAFE_NAME];

	if (why != NULL && whylen > 0) {
		ws_sanitize(safe, sizeof safe, name);
		snprintf(why, whylen, "entry \"%s\" %s", safe, reason);
	}
	return ERR_TAR_ENTRY_REJECTED;
}

static const char *
ws_type_reason(unsigned type)
{
	switch (type) {
	case AE_IFLNK:
		return "is a symbolic link (only directories and regular "
		    "files are accepted)";
	case AE_IFCHR:
		return "is a character device (only directories and regular "
		    "files are accepted)";
	case AE_IFBLK:
		return "is a block device (only directories and regular "
		    "files are accepted)";
	case AE_IFIFO:
		return "is a FIFO (only directories and regular files are "
		    "accepted)";
	case AE_IFSOCK:
		return "is a socket (only directories and regular files are "
		    "accepted)";
	default:
		return "has an unsupported type (only directories and "
		    "regular files are accepted)";
	}
}

int
workspace_entry_check(const char *name, unsigned type, int has_link,
    char *why, size_t whylen)
{
	const char	*seg, *p;
	size_t		 len, seglen, depth = 0;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (name == NULL || *name == '\0')
		return ws_reject(why, whylen, "", "has an empty name");
	len = strlen(name);
	if (len >= WS_PATH_MAX)
		return ws_reject(why, whylen, name, "has a path that is too long");
	if (name[0] == '/')
		return ws_reject(why, whylen, name, "is an absolute path");
	/* Directories are often written "a/b/": one trailing slash is fine. */
	if (type == AE_IFDIR && len > 1 && name[len - 1] == '/')
		len--;
	if (name[len - 1] == '/')
		return ws_reject(why, whylen, name,
		    "has an empty path segment");
	for (seg = name; seg < name + len; seg = p + 1) {
		p = memchr(seg, '/', (size_t)(name + len - seg));
		if (p == NULL)
			p = name + len;
		seglen = (size_t)(p - seg);
		if (seglen == 0)
			return ws_reject(why, whylen, name,
			    "has an empty path segment");
		if (seglen == 1 && seg[0] == '.')
			return ws_reject(why, whylen, name,
			    "has a \".\" segment");
		if (seglen == 2 && seg[0] == '.' && seg[1] == '.')
			return ws_reject(why, whylen, name,
			    "has a \"..\" segment");
		if (seglen > NAME_MAX)
			return ws_reject(why, whylen, name,
			    "has a name that is too long");
		if (p == name + len)
			break;
		if (++depth > WS_MAX_DEPTH)
			return ws_reject(why, whylen, name,
			    "is more than 512 directories deep");
	}
	if (type != AE_IFDIR && type != AE_IFREG)
		return ws_reject(why, whylen, name, ws_type_reason(type));
	if (has_link)
		return ws_reject(why, whylen, name,
		    "is a hard link (only directories and regular files are "
		    "accepted)");
	return 0;
}

/* ---- small filesystem helpers -------------------------------------------- */

static int
ws_errno_code(int e)
{
	if (e == ENOSPC || e == EDQUOT)
		return ERR_NO_SPACE;
	return err_from_errno(e);
}

static int
ws_names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
ws_names_free(char **names, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The sorted names in directory dirfd (without "." and ".."); -errno. */
static int
ws_list(int dirfd, char ***out, size_t *nout)
{
	struct dirent	*de;
	DIR		*d;
	char		**names = NULL;
	size_t		 n = 0, cap = 0;
	int		 fd, r;

	*out = NULL;
	*nout = 0;
	/* A fresh open: its offset is our own, whatever dirfd is. */
	if ((fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1)
		return -errno;
	if ((d = fdopendir(fd)) == NULL) {
		r = -errno;
		close(fd);
		return r;
	}
	for (;;) {
		errno = 0;
		if ((de = readdir(d)) == NULL)
			break;
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			names = xrealloc(names, cap * sizeof *names);
		}
		names[n++] = xstrdup(de->d_name);
	}
	r = -errno;
	closedir(d);
	if (r != 0) {
		ws_names_free(names, n);
		return r;
	}
	if (n > 1)
		qsort(names, n, sizeof *names, ws_names_cmp);
	*out = names;
	*nout = n;
	return 0;
}

static int	ws_tree_remove(int dirfd, const char *name, int depth);

static int
ws_tree_empty_depth(int dirfd, int depth)
{
	struct stat	  st;
	char		**names;
	size_t		  n, i;
	int		  r, first = 0;

	if (depth > WS_REMOVE_DEPTH)
		return ERR_NAME_TOO_LONG;
	if ((r = ws_list(dirfd, &names, &n)) != 0)
		return ws_errno_code(-r);
	for (i = 0; i < n; i++) {
		if (fstatat(dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == -1) {
			if (errno != ENOENT && first == 0)
				first = ws_errno_code(errno);
			continue;
		}
		if (S_ISDIR(st.st_mode))
			r = ws_tree_remove(dirfd, names[i], depth + 1);
		else if (unlinkat(dirfd, names[i], 0) == -1 && errno != ENOENT)
			r = ws_errno_code(errno);
		else
			r = 0;
		if (r != 0 && first == 0)
			first = r;
	}
	ws_names_free(names, n);
	return first;
}

/* Remove directory name below dirfd with everything in it. */
static int
ws_tree_remove(int dirfd, const char *name, int depth)
{
	int	fd, r;

	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1)
		return errno == ENOENT ? 0 : ws_errno_code(errno);
	/* A tree from a tar may hold 0555 directories: make ours writable. */
	(void)fchmod(fd, 0700);
	r = ws_tree_empty_depth(fd, depth);
	close(fd);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) == -1 && errno != ENOENT &&
	    r == 0)
		r = ws_errno_code(errno);
	return r;
}

int
workspace_tree_empty(int dirfd)
{
	return ws_tree_empty_depth(dirfd, 0);
}

/* name = prefix + 16 random hex digits. */
static void
ws_random_name(char *dst, size_t dstlen, const char *prefix)
{
	char	hex[17];

	if (token_hex(hex, 8) != 0)
		fatal("no randomness");
	/* Our prefixes are short constants: a longer name is a bug. */
	if ((size_t)snprintf(dst, dstlen, "%s%s", prefix, hex) >= dstlen)
		fatal("staging name too long");
}

/* ---- export (worker side) ------------------------------------------------ */

/*
 * The tree's fingerprint (workspace.h): one sha256 over a record of every
 * entry the export writes, in the export's order: its path, type, mode,
 * size, inode, mtime and ctime, and for a "racy" file (its ctime not
 * older than the walk's start less WS_FP_RACY_NS) the sha256 of its bytes
 * too.  An unchanged record means an unchanged entry because the kernel
 * sets ctime on every change of a file's data or metadata and no call
 * sets it back; the margin covers the coarse clock those times come from
 * (a change in the same tick as our look keeps the time), and a racy
 * file is compared by content, as git does.  A write through a shared
 * writable mapping to a page that is dirty already sets no time at all,
 * so while any process guestd can see maps a file of the workspace's
 * filesystem shared and writable there is no fingerprint.
 */
#define WS_FP_VERSION	"fp1"
#define WS_FP_RACY_NS	(2LL * 1000000000LL)

struct ws_fp {
	EVP_MD_CTX	*md;		/* NULL: no fingerprint */
	EVP_MD_CTX	*content;	/* a racy file's bytes, in progress */
	int64_t		 racy_ns;	/* ctimes from here on are racy */
	int		 failed;	/* the fingerprint cannot be had */
};

/* ---- direct I/O ---------------------------------------------------------- */

/*
 * Files of WS_DIRECT_MIN and more move past the page cache where the file
 * system allows it.  An import writes them with O_DIRECT (ws_extract_direct)
 * and an export reads those that are not cached with O_DIRECT
 * (ws_export_read): either way one DMA to or from a buffer of ours, where
 * the cache would first take a new page for every 4 KiB (on a VM, one the
 * host may first have to fault in) and copy it.  An import must be on the
 * disk before its swap anyway (the syncfs), so a buffered write paid each
 * byte twice; and a tree read once for a checkpoint, or written once by a
 * restore, would otherwise push out of the cache what the bots use.  The
 * buffers and offsets must be aligned as statx (STATX_DIOALIGN) says;
 * where it says nothing (tmpfs, older kernels) or a direct read or write
 * is refused, the I/O goes through the cache as before.
 */
#define WS_DIRECT_MIN	(1024 * 1024)
#define WS_DIRECT_BUF	(1024 * 1024)
#define WS_DIRECT_ALIGN	4096		/* the most statx may ask for */

/* 1 when fd's file system takes direct I/O at WS_DIRECT_ALIGN. */
static int
ws_dio_ok(int fd)
{
#if defined(HAVE_STATX) && HAVE_DECL_STATX_DIOALIGN
	struct statx	sx;

	return statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
	    (sx.stx_mask & STATX_DIOALIGN) != 0 &&
	    sx.stx_dio_mem_align > 0 &&
	    sx.stx_dio_mem_align <= WS_DIRECT_ALIGN &&
	    sx.stx_dio_offset_align > 0 &&
	    sx.stx_dio_offset_align <= WS_DIRECT_ALIGN;
#else
	(void)fd;
	return 0;
#endif
}

/* fd's O_DIRECT on or off; errno on failure. */
static int
ws_direct_set(int fd, int on)
{
	int	fl;

	if ((fl = fcntl(fd, F_GETFL)) == -1)
		return errno;
	fl = on ? fl | O_DIRECT : fl & ~O_DIRECT;
	return fcntl(fd, F_SETFL, fl) == -1 ? errno : 0;
}

/* A buffer of n bytes aligned for direct I/O. */
static uint8_t *
ws_dio_alloc(size_t n)
{
	void	*p;

	if (posix_memalign(&p, WS_DIRECT_ALIGN, n) != 0)
		fatal("out of memory (%zu bytes, aligned)", n);
	return p;
}

/* A sparse file's holes, fed to libarchive, which writes none of them. */
static const uint8_t	ws_zeros[WS_IO_CHUNK];

struct ws_export {
	struct archive		*a;	/* NULL: the fingerprint only */
	struct archive_entry	*e;
	struct workspace_counts	*cnt;
	uint8_t			*buf;	/* WS_IO_CHUNK, aligned */
	int			 fd;	/* our dup of the output */
	struct ws_fp		*fp;	/* NULL: none wanted */
	int			 dio;	/* 0 unknown, 1 yes, -1 no */
	uint64_t		 max_bytes;	/* the home size cap; 0 none */
	uint64_t		 total;		/* file sizes so far */
	char			*why;
	size_t			 whylen;
	char			*path;	/* WS_PATH_MAX */
};

static int64_t
ws_ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

/* One entry's record (its content's digest follows for a racy file). */
static void
ws_fp_entry(struct ws_fp *fp, const char *path, const struct stat *st)
{
	int64_t	 rec[7];

	if (fp == NULL || fp->failed)
		return;
	rec[0] = (int64_t)st->st_mode;
	rec[1] = S_ISREG(st->st_mode) ? (int64_t)st->st_size : 0;
	rec[2] = (int64_t)st->st_ino;
	rec[3] = (int64_t)st->st_mtim.tv_sec;
	rec[4] = (int64_t)st->st_mtim.tv_nsec;
	rec[5] = (int64_t)st->st_ctim.tv_sec;
	rec[6] = (int64_t)st->st_ctim.tv_nsec;
	if (EVP_DigestUpdate(fp->md, path, strlen(path) + 1) != 1 ||
	    EVP_DigestUpdate(fp->md, rec, sizeof rec) != 1)
		fp->failed = 1;
}

static int
ws_fp_racy(const struct ws_fp *fp, const struct stat *st)
{
	return fp != NULL && !fp->failed && S_ISREG(st->st_mode) &&
	    ws_ts_ns(&st->st_ctim) >= fp->racy_ns;
}

static void
ws_fp_content_begin(struct ws_fp *fp)
{
	if (fp->content == NULL && (fp->content = EVP_MD_CTX_new()) == NULL)
		fp->failed = 1;
	else if (EVP_DigestInit_ex(fp->content, EVP_sha256(), NULL) != 1)
		fp->failed = 1;
}

static void
ws_fp_content(struct ws_fp *fp, const void *p, size_t n)
{
	if (!fp->failed && EVP_DigestUpdate(fp->content, p, n) != 1)
		fp->failed = 1;
}

static void
ws_fp_content_end(struct ws_fp *fp)
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 n = 0;

	if (fp->failed)
		return;
	if (EVP_DigestFinal_ex(fp->content, md, &n) != 1 ||
	    EVP_DigestUpdate(fp->md, md, n) != 1)
		fp->failed = 1;
}

/*
 * 1 when no process we can see maps a file of device dev shared and
 * writable ("rw-s" in /proc/PID/maps): see the comment above.
 */
static int
ws_fp_no_shared_writers(dev_t dev)
{
	char		 path[64], line[PATH_MAX + 128], perms[8];
	unsigned	 maj, min;
	DIR		*d;
	FILE		*f;
	struct dirent	*de;
	int		 ok = 1;

	if ((d = opendir("/proc")) == NULL)
		return 0;
	while (ok && (de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%.20s/maps", de->d_name);
		if ((f = fopen(path, "re")) == NULL)
			continue;	/* gone, or not ours to see */
		while (ok && fgets(line, sizeof line, f) != NULL) {
			if (sscanf(line, "%*s %7s %*s %x:%x", perms, &maj,
			    &min) != 3)
				continue;
			if (perms[1] == 'w' && perms[3] == 's' &&
			    makedev(maj, min) == dev)
				ok = 0;
		}
		fclose(f);
	}
	closedir(d);
	return ok;
}

static int
ws_fp_begin(struct ws_fp *fp, int rootfd, int64_t start_ns)
{
	struct stat	 st;

	memset(fp, 0, sizeof *fp);
	fp->racy_ns = start_ns - WS_FP_RACY_NS;
	if ((fp->md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(fp->md, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(fp->md, WS_FP_VERSION, sizeof WS_FP_VERSION) !=
	    1 || fstat(rootfd, &st) == -1 || !ws_fp_no_shared_writers(st.st_dev))
		fp->failed = 1;
	return 0;
}

/* "fp1:<start_ns>:<hex>" into dst, or "" when there is none. */
static void
ws_fp_end(struct ws_fp *fp, int64_t start_ns, char *dst, size_t len)
{
	static const char	 hex[] = "0123456789abcdef";
	unsigned char		 md[EVP_MAX_MD_SIZE];
	char			 h[2 * EVP_MAX_MD_SIZE + 1];
	unsigned int		 n = 0, i;

	if (len > 0)
		dst[0] = '\0';
	if (!fp->failed && EVP_DigestFinal_ex(fp->md, md, &n) == 1) {
		for (i = 0; i < n; i++) {
			h[2 * i] = hex[md[i] >> 4];
			h[2 * i + 1] = hex[md[i] & 15];
		}
		h[2 * n] = '\0';
		snprintf(dst, len, "%s:%lld:%s", WS_FP_VERSION,
		    (long long)start_ns, h);
	}
	EVP_MD_CTX_free(fp->md);
	EVP_MD_CTX_free(fp->content);
	fp->md = fp->content = NULL;
}

static int
ws_export_archive_error(struct ws_export *x)
{
	int	e = archive_errno(x->a);

	if (e == EPIPE)
		return ERR_CANCELLED;
	log_warn("workspace.export_failed", "errno=%d", e);
	return e > 0 ? ws_errno_code(e) : ERR_IO;
}

/*
 * fd's holes as x->e's sparse map (SEEK_DATA and SEEK_HOLE): a hole costs
 * the archive nothing, and the restore leaves it a hole, where a plain
 * entry would carry a `truncate -s 2G` as 2 GiB of zeros and write them
 * all back.  The entry stays plain when the file has no holes to keep or
 * the file system cannot say where they are.
 */
static void
ws_export_holes(struct ws_export *x, int fd, const struct stat *st)
{
	off_t	pos = 0, d, h, ds = -1, de = 0;
	size_t	nseg = 0;

	/* Every byte allocated: no holes (the common case, no lseeks). */
	if (st->st_size < WS_HOLE_MIN ||
	    (uint64_t)st->st_blocks * 512 >= (uint64_t)st->st_size)
		return;
	while (pos < st->st_size) {
		/* ENXIO: a hole to the end.  Other errors (a file system
		 * without SEEK_DATA answers as if all were data): what the
		 * map has so far, the rest as data. */
		if ((d = lseek(fd, pos, SEEK_DATA)) == -1 && errno != ENXIO)
			d = pos;
		if (d == -1 || d >= st->st_size)
			break;
		if ((h = lseek(fd, d, SEEK_HOLE)) == -1 || h > st->st_size ||
		    h <= d)
			h = st->st_size;
		if (ds != -1 && d - de < WS_HOLE_MIN) {
			de = h;		/* a short hole: written as zeros */
		} else {
			if (ds != -1)
				archive_entry_sparse_add_entry(x->e, ds,
				    de - ds);
			nseg++;
			ds = d;
			de = h;
		}
		/* The map's last stretch runs to the end of the file. */
		if (nseg == WS_SPARSE_SEGS)
			de = st->st_size;
		pos = de;
	}
	/* One stretch over the whole file: libarchive drops the map. */
	if (ds != -1)
		archive_entry_sparse_add_entry(x->e, ds, de - ds);
	else	/* holes only: an empty stretch at the end marks it sparse */
		archive_entry_sparse_add_entry(x->e, st->st_size, 0);
}

/* fd: the regular file's, for its holes; -1 for a directory. */
static int
ws_export_header(struct ws_export *x, const struct stat *st, int fd)
{
	archive_entry_clear(x->e);
	archive_entry_set_pathname(x->e, x->path);
	archive_entry_set_mode(x->e, st->st_mode);
	archive_entry_set_mtime(x->e, st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
	archive_entry_set_size(x->e, S_ISREG(st->st_mode) ? st->st_size : 0);
	if (fd != -1 && S_ISREG(st->st_mode))
		ws_export_holes(x, fd, st);
	/* WARN is a name that did not convert to UTF-8: still written. */
	if (archive_write_header(x->a, x->e) < ARCHIVE_WARN)
		return ws_export_archive_error(x);
	x->cnt->entries++;
	return 0;
}

/*
 * 1 when the pages of [off, off + len) of the file mapped at map are all
 * in the page cache.  mincore asks without reading anything: a read with
 * RWF_NOWAIT would answer too, but starts the read-ahead it refuses to
 * wait for.
 */
static int
ws_cached(const void *map, off_t off, size_t len)
{
	unsigned char	vec[WS_IO_CHUNK / 4096 + 2];
	long		pg = sysconf(_SC_PAGESIZE);
	size_t		skew, np, i;

	if (map == NULL || pg <= 0)
		return 1;
	skew = (size_t)(off % pg);
	np = (skew + len + (size_t)pg - 1) / (size_t)pg;
	if (np > sizeof vec ||
	    mincore((uint8_t *)map + off - skew, skew + len, vec) != 0)
		return 1;
	for (i = 0; i < np; i++)
		if ((vec[i] & 1) == 0)
			return 0;
	return 1;
}

/*
 * The next at most want bytes of fd at off into x->buf.  *mode: 0 for a
 * large file (mapped at map, to ask what is cached), 1 direct, -1 through
 * the cache.  A large file is read through the cache while its bytes are
 * in it; from the first stretch that is not, directly.  Bytes read, 0 at
 * the end, -1 (errno).
 */
static ssize_t
ws_export_read(struct ws_export *x, int fd, const void *map, int *mode,
    size_t want, off_t off)
{
	size_t	len;
	ssize_t	n;

	if (*mode == 0 && off % WS_DIRECT_ALIGN == 0 &&
	    !ws_cached(map, off, want)) {
		if (x->dio == 0)
			x->dio = ws_dio_ok(fd) ? 1 : -1;
		*mode = x->dio == 1 && ws_direct_set(fd, 1) == 0 ? 1 : -1;
	}
	if (*mode == 1) {
		/* Whole blocks: past the end, the read just ends. */
		len = (want + WS_DIRECT_ALIGN - 1) & ~(size_t)(WS_DIRECT_ALIGN -
		    1);
		do
			n = pread(fd, x->buf, len, off);
		while (n == -1 && errno == EINTR);
		if (n >= 0)
			return n > (ssize_t)want ? (ssize_t)want : n;
		if (errno != EINVAL || ws_direct_set(fd, 0) != 0)
			return -1;
		x->dio = -1;	/* refused: through the cache from now */
		*mode = -1;
	}
	do
		n = pread(fd, x->buf, want, off);
	while (n == -1 && errno == EINTR);
	return n;
}

/*
 * ws_export_read's *mode for fd, a file of size bytes: 0 (and *map the
 * file's mapping, for ws_cached) when it is large enough for direct reads
 * and the file system may take them, else -1.
 */
static int
ws_read_mode(struct ws_export *x, int fd, off_t size, void **map)
{
	void	*m;

	*map = NULL;
	if (size < WS_DIRECT_MIN || x->dio < 0 ||
	    (m = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0)) ==
	    MAP_FAILED)
		return -1;
	*map = m;
	return 0;
}

/* The mapping goes once the mode is decided, or at the end. */
static void
ws_read_unmap(void **map, off_t size)
{
	if (*map != NULL) {
		munmap(*map, (size_t)size);
		*map = NULL;
	}
}

/* A fingerprint walk's look at a racy file: the sha256 of its bytes. */
static void
ws_fp_read(struct ws_export *x, int dirfd, const char *name)
{
	struct stat	 st;
	void		*map = NULL;
	off_t		 off = 0;
	ssize_t		 n;
	int		 fd, mode;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	if (fd == -1 || fstat(fd, &st) == -1) {
		x->fp->failed = 1;
		if (fd != -1)
			close(fd);
		return;
	}
	mode = ws_read_mode(x, fd, st.st_size, &map);
	ws_fp_content_begin(x->fp);
	while (!x->fp->failed) {
		n = ws_export_read(x, fd, map, &mode, WS_IO_CHUNK, off);
		if (mode != 0)
			ws_read_unmap(&map, st.st_size);
		if (n <= 0) {
			if (n == -1)
				x->fp->failed = 1;
			break;
		}
		ws_fp_content(x->fp, x->buf, (size_t)n);
		off += n;
	}
	ws_fp_content_end(x->fp);
	ws_read_unmap(&map, st.st_size);
	close(fd);
}

/* lst: what the walk saw of the name (the fingerprint's record). */
static int
ws_export_file(struct ws_export *x, int dirfd, const char *name,
    const struct stat *lst)
{
	struct stat	 st;
	off_t		 remain, pos;
	la_int64_t	 soff, slen;	/* the sparse map's stretch */
	ssize_t		 n;
	size_t		 want;
	const uint8_t	*data;
	void		*map = NULL;
	int		 fd, mode, r = ERR_INTERNAL;
	int		 racy = ws_fp_racy(x->fp, lst);

	ws_fp_entry(x->fp, x->path, lst);
	if (x->a == NULL) {
		if (racy)
			ws_fp_read(x, dirfd, name);
		return 0;
	}
	/* O_NONBLOCK: a FIFO swapped in since the fstatat must not hang us. */
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	if (fd == -1) {
		if (errno != ENOENT) {
			log_warn("workspace.export_skip", "errno=%d", errno);
			x->cnt->skipped++;
		}
		/* Not in the archive: a later walk cannot match it. */
		if (x->fp != NULL)
			x->fp->failed = 1;
		return 0;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		x->cnt->skipped++;
		if (x->fp != NULL)
			x->fp->failed = 1;
		r = 0;
		goto out;
	}
	if ((r = ws_export_header(x, &st, fd)) != 0)
		goto out;
	if (racy)
		ws_fp_content_begin(x->fp);
	/*
	 * A file that shrinks meanwhile is padded with zeros by libarchive
	 * at finish_entry; one that grows is cut at the size in the header.
	 * A sparse entry takes the whole file too, holes as zeros, and
	 * libarchive writes only its map's stretches: the holes are fed
	 * from ws_zeros without reading (the racy digest hashes them, as
	 * ws_fp_read's read of the file would).
	 */
	if (archive_entry_sparse_reset(x->e) > 0) {
		mode = -1;
		if (archive_entry_sparse_next(x->e, &soff, &slen) !=
		    ARCHIVE_OK) {
			soff = st.st_size;
			slen = 0;
		}
	} else {
		mode = ws_read_mode(x, fd, st.st_size, &map);
		soff = 0;
		slen = st.st_size;
	}
	for (remain = st.st_size; remain > 0; remain -= n) {
		pos = st.st_size - remain;
		/* Past this stretch: on to the next (or a hole to the end). */
		while (pos >= soff + slen && soff < st.st_size) {
			if (archive_entry_sparse_next(x->e, &soff, &slen) !=
			    ARCHIVE_OK) {
				soff = st.st_size;
				slen = 0;
			}
		}
		want = remain < WS_IO_CHUNK ? (size_t)remain : WS_IO_CHUNK;
		if (pos < soff) {
			/* In a hole. */
			if ((off_t)want > soff - pos)
				want = (size_t)(soff - pos);
			n = (ssize_t)want;
			data = ws_zeros;
		} else {
			if ((off_t)want > soff + slen - pos)
				want = (size_t)(soff + slen - pos);
			n = ws_export_read(x, fd, map, &mode, want, pos);
			if (mode != 0)
				ws_read_unmap(&map, st.st_size);
			data = x->buf;
		}
		if (n == -1) {
			r = ws_errno_code(errno);
			goto out;
		}
		if (n == 0)
			break;
		if (racy)
			ws_fp_content(x->fp, data, (size_t)n);
		if (archive_write_data(x->a, data, (size_t)n) < 0) {
			r = ws_export_archive_error(x);
			goto out;
		}
	}
	if (racy)
		ws_fp_content_end(x->fp);
	if (archive_write_finish_entry(x->a) < ARCHIVE_WARN) {
		r = ws_export_archive_error(x);
		goto out;
	}
	r = 0;
out:
	ws_read_unmap(&map, st.st_size);
	close(fd);
	return r;
}

/* An export that cannot hold path fails, saying which path and why: a
 * checkpoint never leaves a file out unsaid. */
static int
ws_export_refuse(struct ws_export *x, const char *path, int code,
    const char *reason)
{
	char	safe[WS_SAFE_NAME];

	if (x->why != NULL && x->whylen > 0) {
		ws_sanitize(safe, sizeof safe, path);
		snprintf(x->why, x->whylen, "%s: \"%s\"", reason, safe);
	}
	log_warn("workspace.export_refused", "error=%s", err_name(code));
	return code;
}

static int
ws_export_dir(struct ws_export *x, int dirfd, size_t plen, int depth)
{
	struct stat	  st;
	char		**names = NULL;
	size_t		  n = 0, i, nlen;
	int		  fd, r = ERR_INTERNAL;

	if ((r = ws_list(dirfd, &names, &n)) != 0) {
		/* Unreadable directory (mode 0000...): its header is out
		 * already; its contents count as one skip. */
		log_warn("workspace.export_skip", "errno=%d", -r);
		x->cnt->skipped++;
		return 0;
	}
	for (i = 0; i < n; i++) {
		nlen = strlen(names[i]);
		if (plen + (plen ? 1 : 0) + nlen + 1 > WS_PATH_MAX) {
			x->path[plen] = '\0';
			r = ws_export_refuse(x, x->path, ERR_NAME_TOO_LONG,
			    "a path is longer than a checkpoint may hold "
			    "(65535 bytes)");
			goto out;
		}
		if (plen)
			x->path[plen] = '/';
		memcpy(x->path + plen + (plen ? 1 : 0), names[i], nlen + 1);
		if (fstatat(dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == -1) {
			if (errno != ENOENT)
				x->cnt->skipped++;
			continue;
		}
		if (S_ISREG(st.st_mode)) {
			/* A write in progress, or one a crash cut short. */
			if (workspace_export_skip(x->path, 0) ||
			    files_tmp_name(names[i])) {
				x->cnt->skipped++;
				continue;
			}
			/* Sizes, not blocks: a restore may have to write
			 * a sparse file's holes (a file system without
			 * them), and the import counts the same way. */
			x->total += (uint64_t)st.st_size;
			if (x->a != NULL && x->max_bytes != 0 &&
			    x->total > x->max_bytes) {
				r = ws_export_refuse(x, x->path,
				    ERR_TAR_TOO_LARGE, "the home's files, sparse "
				    "ones at their full size, pass the home size "
				    "cap (--home-max-bytes) at");
				goto out;
			}
			r = ws_export_file(x, dirfd, names[i], &st);
		} else if (S_ISDIR(st.st_mode)) {
			if (workspace_export_skip(x->path, 1)) {
				x->cnt->skipped++;
				continue;
			}
			if (depth >= WS_MAX_DEPTH) {
				r = ws_export_refuse(x, x->path,
				    ERR_NAME_TOO_LONG, "a directory is deeper "
				    "than a checkpoint may hold (512 levels)");
				goto out;
			}
			fd = openat(dirfd, names[i], O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
			if (fd == -1) {
				if (errno != ENOENT)
					x->cnt->skipped++;
				continue;
			}
			ws_fp_entry(x->fp, x->path, &st);
			if (fstat(fd, &st) == -1)
				r = ws_errno_code(errno);
			else if ((x->a == NULL ||
			    (r = ws_export_header(x, &st, -1)) == 0))
				r = ws_export_dir(x, fd,
				    plen + (plen ? 1 : 0) + nlen, depth + 1);
			close(fd);
		} else {
			/* Symlinks, sockets, FIFOs, devices. */
			x->cnt->skipped++;
			continue;
		}
		if (r != 0)
			goto out;
	}
	r = 0;
out:
	x->path[plen] = '\0';
	ws_names_free(names, n);
	return r;
}

/* Point fd at /dev/null (atomically: no other thread sees it closed). */
static int
ws_export_mute(int fd)
{
	int	nfd, r = 0;

	if ((nfd = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	if (dup3(nfd, fd, O_CLOEXEC) == -1)
		r = -1;
	close(nfd);
	return r;
}

static int64_t
ws_now_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ws_ts_ns(&ts);
}

int
workspace_fingerprint_fd(int rootfd, int64_t start_ns, char *fp,
    size_t fplen)
{
	struct workspace_counts	 cnt;
	struct ws_export	 x;
	struct ws_fp		 f;
	int			 r;

	memset(&cnt, 0, sizeof cnt);
	memset(&x, 0, sizeof x);
	x.fd = -1;
	x.cnt = &cnt;
	x.fp = &f;
	x.buf = ws_dio_alloc(WS_IO_CHUNK);
	x.path = xcalloc(1, WS_PATH_MAX);
	ws_fp_begin(&f, rootfd, start_ns);
	r = ws_export_dir(&x, rootfd, 0, 0);
	if (r != 0)
		f.failed = 1;
	ws_fp_end(&f, start_ns, fp, fplen);
	free(x.path);
	free(x.buf);
	return r;
}

int
workspace_export_fd(int rootfd, int outfd, struct workspace_counts *cnt)
{
	return workspace_export_fd_fp(rootfd, outfd, 0, cnt, NULL, 0, NULL, 0);
}

int
workspace_export_fd_fp(int rootfd, int outfd, uint64_t max_bytes,
    struct workspace_counts *cnt, char *fp, size_t fplen, char *why,
    size_t whylen)
{
	struct ws_export	x;
	struct ws_fp		f;
	int64_t			start_ns = ws_now_ns();
	int			r = ERR_INTERNAL;

	memset(cnt, 0, sizeof *cnt);
	memset(&x, 0, sizeof x);
	x.fd = -1;
	x.cnt = cnt;
	x.buf = ws_dio_alloc(WS_IO_CHUNK);
	x.path = xcalloc(1, WS_PATH_MAX);
	x.max_bytes = max_bytes;
	x.why = why;
	x.whylen = whylen;
	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (fp != NULL) {
		ws_fp_begin(&f, rootfd, start_ns);
		x.fp = &f;
	}
	if ((x.a = archive_write_new()) == NULL ||
	    (x.e = archive_entry_new()) == NULL) {
		r = ERR_NOMEM;
		goto out;
	}
	/* Our own descriptor of the output, see below. */
	if ((x.fd = fcntl(outfd, F_DUPFD_CLOEXEC, 0)) == -1) {
		r = ws_errno_code(errno);
		goto out;
	}
	if (archive_write_set_format_pax_restricted(x.a) != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(x.a, WS_EXPORT_BLOCK) !=
	    ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(x.a, WS_BLOCK) !=
	    ARCHIVE_OK ||
	    archive_write_open_fd(x.a, x.fd) != ARCHIVE_OK) {
		r = ws_export_archive_error(&x);
		goto out;
	}
	if ((r = ws_export_dir(&x, rootfd, 0, 0)) != 0)
		goto out;
	/* Only a complete walk ends with the end-of-archive marker. */
	if (archive_write_close(x.a) != ARCHIVE_OK) {
		r = ws_export_archive_error(&x);
		goto out;
	}
	r = 0;
out:
	if (x.e != NULL)
		archive_entry_free(x.e);
	/*
	 * A failed export must not look whole: free() closes the archive and
	 * writes the end marker, which after a partial tree would make it
	 * importable.  So our descriptor of the output becomes /dev/null
	 * first.  (archive_write_fail() would skip the marker too, but leaks
	 * the archive's block buffer.)
	 */
	if (x.a != NULL && r != 0 && x.fd != -1 && ws_export_mute(x.fd) != 0)
		archive_write_fail(x.a);
	if (x.a != NULL)
		archive_write_free(x.a);
	if (x.fd != -1)
		close(x.fd);
	if (fp != NULL) {
		if (r != 0)
			f.failed = 1;
		ws_fp_end(&f, start_ns, fp, fplen);
	}
	free(x.path);
	free(x.buf);
	return r;
}

/* ---- import extraction (worker side) ------------------------------------- */

struct ws_dirmeta {
	char		*path;
	mode_t		 mode;
	struct timespec	 mtime;
};

struct ws_extract {
	struct archive			*a;
	int				 stagefd;
	const struct workspace_limits	*lim;
	struct workspace_counts		*cnt;
	uint64_t			 declared;
	struct ws_dirmeta		*dirs;
	size_t				 ndirs, dirscap;
	char				*why;
	size_t				 whylen;
	/* The last entry's parent, open: entries come grouped by
	 * directory, so most need no walk from the staging root. */
	int				 pfd;
	size_t				 plen;
	char				 ppath[WS_PATH_MAX];
	struct ws_finisher		*fin;	/* NULL: files finish inline */
	uint8_t				*dbuf;	/* ws_direct's, aligned */
	int				 dio;	/* 0 unknown, 1 yes, -1 no */
};

static void
ws_why(struct ws_extract *x, const char *name, const char *reason)
{
	(void)ws_reject(x->why, x->whylen, name, reason);
}

static int
ws_extract_archive_error(struct ws_extract *x)
{
	const char	*msg = archive_error_string(x->a);
	char		 safe[WS_SAFE_NAME];

	if (msg == NULL)
		msg = "unreadable archive";
	ws_sanitize(safe, sizeof safe, msg);
	if (x->why != NULL && x->whylen > 0)
		snprintf(x->why, x->whylen, "%s", safe);
	/* libarchive says "Truncated tar archive", "Truncated input file",
	 * "Premature end of ..." when the stream ends early. */
	if (strstr(msg, "runcated") != NULL ||
	    strstr(msg, "Premature end") != NULL ||
	    strstr(msg, "premature end") != NULL)
		return ERR_TAR_TRUNCATED;
	if (archive_errno(x->a) == ENOSPC)
		return ERR_NO_SPACE;
	return ERR_TAR_INVALID;
}

/* A filesystem error on entry name: conflicts are the archive's fault. */
static int
ws_entry_fs_error(struct ws_extract *x, const char *name, int e)
{
	char	buf[64];

	switch (e) {
	case EEXIST:
	case ENOTDIR:
	case EISDIR:
	case ELOOP:
		ws_why(x, name, "conflicts with an earlier entry");
		return ERR_TAR_ENTRY_REJECTED;
	case ENOSPC:
	case EDQUOT:
		ws_why(x, name, "could not be written: no space left");
		return ERR_NO_SPACE;
	default:
		snprintf(buf, sizeof buf, "could not be written (errno %d)", e);
		ws_why(x, name, buf);
		return err_from_errno(e);
	}
}

/*
 * Open the parent directory of path (a mutable copy, no trailing '/')
 * beneath stagefd, one component at a time with O_NOFOLLOW, creating
 * missing ones when create.  *last points at the final component.  An fd
 * or -errno.
 */
static int
ws_open_parent(int stagefd, char *path, int create, const char **last)
{
	char	*seg, *slash;
	int	 fd, nfd, depth = 0;

	if ((fd = fcntl(stagefd, F_DUPFD_CLOEXEC, 0)) == -1)
		return -errno;
	for (seg = path; (slash = strchr(seg, '/')) != NULL; seg = slash + 1) {
		*slash = '\0';
		if (++depth > WS_MAX_DEPTH) {
			*slash = '/';
			close(fd);
			return -ENAMETOOLONG;
		}
		nfd = openat(fd, seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (nfd == -1 && errno == ENOENT && create) {
			if (mkdirat(fd, seg, 0755) == -1 && errno != EEXIST) {
				nfd = -1;
			} else {
				nfd = openat(fd, seg, O_RDONLY | O_DIRECTORY |
				    O_NOFOLLOW | O_CLOEXEC);
			}
		}
		*slash = '/';
		if (nfd == -1) {
			nfd = -errno;
			close(fd);
			return nfd;
		}
		close(fd);
		fd = nfd;
	}
	*last = seg;
	return fd;
}

/*
 * ws_open_parent() for an entry of the archive, through the cache of the
 * last parent.  The fd is borrowed: it stays x's.  Reusing it is safe
 * because an import only ever adds directories and files to the staging
 * tree, so the directory a path named stays the one it names.
 */
static int
ws_extract_parent(struct ws_extract *x, char *path, const char **last)
{
	const char	*slash = strrchr(path, '/');
	size_t		 plen = slash != NULL ? (size_t)(slash - path) : 0;
	int		 fd;

	if (x->pfd != -1 && plen == x->plen &&
	    memcmp(path, x->ppath, plen) == 0) {
		*last = slash != NULL ? slash + 1 : path;
		return x->pfd;
	}
	if ((fd = ws_open_parent(x->stagefd, path, 1, last)) < 0)
		return fd;
	if (x->pfd != -1)
		close(x->pfd);
	x->pfd = fd;
	x->plen = plen;
	memcpy(x->ppath, path, plen);
	return fd;
}

static int
ws_extract_dir(struct ws_extract *x, struct archive_entry *e, char *path)
{
	struct ws_dirmeta	*d;
	struct stat		 st;
	const char		*last;
	int			 pfd;

	if ((pfd = ws_extract_parent(x, path, &last)) < 0)
		return ws_entry_fs_error(x, path, -pfd);
	if (mkdirat(pfd, last, 0700) == -1) {
		if (errno != EEXIST ||
		    fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
		    !S_ISDIR(st.st_mode))
			return ws_entry_fs_error(x, path, errno);
	}
	/* Modes and times go on at the end: a 0555 directory would refuse
	 * its own contents, and each new child would touch its mtime. */
	if (x->ndirs == x->dirscap) {
		x->dirscap = x->dirscap ? x->dirscap * 2 : 64;
		x->dirs = xrealloc(x->dirs, x->dirscap * sizeof *x->dirs);
	}
	d = &x->dirs[x->ndirs++];
	d->path = xstrdup(path);
	d->mode = archive_entry_perm(e) & 0777;
	d->mtime.tv_sec = archive_entry_mtime(e);
	d->mtime.tv_nsec = archive_entry_mtime_nsec(e);
	return 0;
}

static int
ws_pwrite_all(int fd, const uint8_t *p, size_t n, off_t off)
{
	ssize_t	w;

	while (n > 0) {
		w = pwrite(fd, p, n, off);
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1)
			return errno;
		p += w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

/*
 * Small files are finished on a second thread.  Creating a file (the
 * openat that adds its name) stays on the extracting thread, in archive
 * order, so which entry conflicts with which is as it was; what follows
 * the name (the data's write, mode, times and close: over half of a
 * small file's cost, all of it on the file's own inode) runs beside the
 * next creations, on another core.  The queue is bounded in files and
 * bytes; the first failure is kept and fails the import at the next
 * entry or at the end, which waits for the queue to empty.
 */
#define WS_FIN_SMALL	(64 * 1024)	/* larger files finish inline */
#define WS_FIN_FILES	256
#define WS_FIN_BYTES	(4 * 1024 * 1024)

struct ws_fjob {
	TAILQ_ENTRY(ws_fjob)	 entry;
	int			 fd;
	mode_t			 mode;
	struct timespec		 mtime;
	size_t			 len;		/* the file's size */
	char			*path;		/* for an error: after data */
	uint8_t			 data[];
};

struct ws_finisher {
	pthread_t		 thread;
	pthread_mutex_t		 mtx;
	pthread_cond_t		 more;		/* for the finisher */
	pthread_cond_t		 room;		/* for the extractor */
	TAILQ_HEAD(, ws_fjob)	 q;
	size_t			 nfiles, nbytes;	/* queued or being finished */
	int			 stop;
	int			 err;		/* the first failure's errno */
	char			 errpath[PATH_MAX];
};

static int
ws_finish_one(struct ws_fjob *fj)
{
	struct timespec	ts[2];
	int		e = 0;

	if (fj->len > 0)
		e = ws_pwrite_all(fj->fd, fj->data, fj->len, 0);
	if (e == 0 && fchmod(fj->fd, fj->mode) == -1)
		e = errno;
	ts[0] = ts[1] = fj->mtime;
	(void)futimens(fj->fd, ts);
	if (close(fj->fd) == -1 && e == 0)
		e = errno;
	return e;
}

static void *
ws_finisher_main(void *arg)
{
	struct ws_finisher	*f = arg;
	struct ws_fjob		*fj;
	int			 e, failed;

	pthread_mutex_lock(&f->mtx);
	for (;;) {
		while ((fj = TAILQ_FIRST(&f->q)) == NULL && !f->stop)
			pthread_cond_wait(&f->more, &f->mtx);
		if (fj == NULL)
			break;
		TAILQ_REMOVE(&f->q, fj, entry);
		failed = f->err != 0;
		pthread_mutex_unlock(&f->mtx);
		/* After a failure the rest is only closed: it is discarded. */
		e = 0;
		if (!failed)
			e = ws_finish_one(fj);
		else
			close(fj->fd);
		pthread_mutex_lock(&f->mtx);
		if (e != 0 && f->err == 0) {
			f->err = e;
			snprintf(f->errpath, sizeof f->errpath, "%s", fj->path);
		}
		f->nfiles--;
		f->nbytes -= fj->len;
		free(fj);
		pthread_cond_broadcast(&f->room);
	}
	pthread_mutex_unlock(&f->mtx);
	return NULL;
}

/* NULL when no thread can be had: files then finish inline. */
static struct ws_finisher *
ws_finisher_start(void)
{
	struct ws_finisher	*f = xcalloc(1, sizeof *f);

	pthread_mutex_init(&f->mtx, NULL);
	pthread_cond_init(&f->more, NULL);
	pthread_cond_init(&f->room, NULL);
	TAILQ_INIT(&f->q);
	if (pthread_create(&f->thread, NULL, ws_finisher_main, f) != 0) {
		pthread_cond_destroy(&f->room);
		pthread_cond_destroy(&f->more);
		pthread_mutex_destroy(&f->mtx);
		free(f);
		return NULL;
	}
	return f;
}

/* The first failure so far, as the import's error; 0 if none. */
static int
ws_finisher_error(struct ws_extract *x)
{
	struct ws_finisher	*f = x->fin;
	char			 path[PATH_MAX];
	int			 e;

	if (f == NULL)
		return 0;
	pthread_mutex_lock(&f->mtx);
	e = f->err;
	if (e != 0)
		memcpy(path, f->errpath, sizeof path);
	pthread_mutex_unlock(&f->mtx);
	return e == 0 ? 0 : ws_entry_fs_error(x, path, e);
}

/* Wait until every queued file is finished; the first failure or 0. */
static int
ws_finisher_wait(struct ws_extract *x)
{
	struct ws_finisher	*f = x->fin;

	if (f == NULL)
		return 0;
	pthread_mutex_lock(&f->mtx);
	while (f->nfiles > 0)
		pthread_cond_wait(&f->room, &f->mtx);
	pthread_mutex_unlock(&f->mtx);
	return ws_finisher_error(x);
}

/* Stop and free: queued files are finished (or, after a failure,
 * closed) first, so no descriptor is left open. */
static void
ws_finisher_end(struct ws_finisher *f)
{
	if (f == NULL)
		return;
	pthread_mutex_lock(&f->mtx);
	f->stop = 1;
	pthread_cond_signal(&f->more);
	pthread_mutex_unlock(&f->mtx);
	pthread_join(f->thread, NULL);
	pthread_cond_destroy(&f->room);
	pthread_cond_destroy(&f->more);
	pthread_mutex_destroy(&f->mtx);
	free(f);
}

static void
ws_finisher_put(struct ws_finisher *f, struct ws_fjob *fj)
{
	pthread_mutex_lock(&f->mtx);
	while (f->nfiles >= WS_FIN_FILES ||
	    (f->nfiles > 0 && f->nbytes + fj->len > WS_FIN_BYTES))
		pthread_cond_wait(&f->room, &f->mtx);
	TAILQ_INSERT_TAIL(&f->q, fj, entry);
	f->nfiles++;
	f->nbytes += fj->len;
	pthread_cond_signal(&f->more);
	pthread_mutex_unlock(&f->mtx);
}

/*
 * A small file's data, gathered from the archive into a job for the
 * finisher.  0, with the job queued and fd its; or an error, fd still
 * the caller's.
 */
static int
ws_extract_small(struct ws_extract *x, struct archive_entry *e,
    const char *path, int64_t size, int fd)
{
	struct ws_fjob	*fj;
	const void	*buf;
	size_t		 n, plen = strlen(path);
	la_int64_t	 off;
	int		 ar;

	fj = xmalloc(sizeof *fj + (size_t)size + plen + 1);
	/* Holes (a sparse entry) read as zeros, as a hole would. */
	memset(fj->data, 0, (size_t)size);
	fj->path = (char *)fj->data + size;
	memcpy(fj->path, path, plen + 1);
	for (;;) {
		ar = archive_read_data_block(x->a, &buf, &n, &off);
		if (ar == ARCHIVE_EOF)
			break;
		if (ar < ARCHIVE_WARN) {
			free(fj);
			return ws_extract_archive_error(x);
		}
		if (off < 0 || (uint64_t)n > (uint64_t)size ||
		    off > size - (int64_t)n) {
			free(fj);
			ws_why(x, path, "has data beyond its size");
			return ERR_TAR_INVALID;
		}
		x->cnt->bytes += n;
		if (x->lim->max_bytes != 0 &&
		    x->cnt->bytes > x->lim->max_bytes) {
			free(fj);
			ws_why(x, path, "exceeds the home size cap");
			return ERR_TAR_TOO_LARGE;
		}
		memcpy(fj->data + off, buf, n);
	}
	fj->fd = fd;
	fj->len = (size_t)size;
	fj->mode = archive_entry_perm(e) & 0777;
	fj->mtime.tv_sec = archive_entry_mtime(e);
	fj->mtime.tv_nsec = archive_entry_mtime_nsec(e);
	ws_finisher_put(x->fin, fj);
	return 0;
}

/* 1 when fd can take direct writes from dbuf in WS_DIRECT_BUF steps. */
static int
ws_direct_probe(struct ws_extract *x, int fd)
{
	if (x->dio == 0) {
		x->dio = ws_dio_ok(fd) ? 1 : -1;
		if (x->dio == 1 && x->dbuf == NULL)
			x->dbuf = ws_dio_alloc(WS_DIRECT_BUF);
	}
	return x->dio == 1;
}

/*
 * Write n bytes of dbuf at off: the aligned part direct (unless *direct
 * is 0), the rest buffered.  A direct write the file system refuses
 * (EINVAL) turns direct writes off for the import and is written
 * buffered.  0 or an errno.
 */
static int
ws_direct_write(struct ws_extract *x, int fd, int *direct, size_t n,
    off_t off)
{
	size_t	aligned = *direct ? n & ~(size_t)(WS_DIRECT_ALIGN - 1) : 0;
	int	e;

	if (aligned > 0) {
		e = ws_pwrite_all(fd, x->dbuf, aligned, off);
		if (e == EINVAL) {
			x->dio = -1;
			aligned = 0;
		} else if (e != 0)
			return e;
	}
	if (aligned < n) {
		if (*direct) {
			if ((e = ws_direct_set(fd, 0)) != 0)
				return e;
			*direct = 0;
		}
		return ws_pwrite_all(fd, x->dbuf + aligned, n - aligned,
		    off + (off_t)aligned);
	}
	return 0;
}

/*
 * A large file's data, gathered into dbuf and written in WS_DIRECT_BUF
 * steps.  Its blocks must come in order (the entry is not sparse).
 */
static int
ws_extract_direct(struct ws_extract *x, const char *path, int64_t size,
    int fd)
{
	const void	*buf;
	size_t		 n, have = 0, take;
	la_int64_t	 off;
	int64_t		 pos = 0;	/* the file's bytes gathered so far */
	int		 direct = 1, ar, e;

	if ((e = ws_direct_set(fd, 1)) != 0) {
		x->dio = -1;
		direct = 0;
	}
	for (;;) {
		ar = archive_read_data_block(x->a, &buf, &n, &off);
		if (ar == ARCHIVE_EOF)
			break;
		if (ar < ARCHIVE_WARN)
			return ws_extract_archive_error(x);
		if (off != pos || (uint64_t)n > (uint64_t)(size - pos)) {
			ws_why(x, path, "has data beyond its size");
			return ERR_TAR_INVALID;
		}
		x->cnt->bytes += n;
		if (x->lim->max_bytes != 0 &&
		    x->cnt->bytes > x->lim->max_bytes) {
			ws_why(x, path, "exceeds the home size cap");
			return ERR_TAR_TOO_LARGE;
		}
		pos += (int64_t)n;
		while (n > 0) {
			take = WS_DIRECT_BUF - have;
			if (take > n)
				take = n;
			memcpy(x->dbuf + have, buf, take);
			buf = (const uint8_t *)buf + take;
			n -= take;
			if ((have += take) < WS_DIRECT_BUF)
				break;
			if ((e = ws_direct_write(x, fd, &direct, have,
			    (off_t)(pos - (int64_t)n - (int64_t)have))) != 0)
				return ws_entry_fs_error(x, path, e);
			have = 0;
		}
	}
	if (have > 0 && (e = ws_direct_write(x, fd, &direct, have,
	    (off_t)(pos - (int64_t)have))) != 0)
		return ws_entry_fs_error(x, path, e);
	/* A short entry reads as zeros to its size, as a buffered one. */
	if (pos != size && ftruncate(fd, size) == -1)
		return ws_entry_fs_error(x, path, errno);
	return 0;
}

static int
ws_extract_file(struct ws_extract *x, struct archive_entry *e,
    char *path, int64_t size)
{
	struct timespec	 ts[2];
	const void	*buf;
	const char	*last;
	size_t		 n;
	la_int64_t	 off;
	int64_t		 end = 0;
	int		 pfd, fd = -1, e2, ar, r = ERR_INTERNAL;

	if ((pfd = ws_extract_parent(x, path, &last)) < 0)
		return ws_entry_fs_error(x, path, -pfd);
	fd = openat(pfd, last, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd == -1) {
		r = ws_entry_fs_error(x, path, errno);
		goto out;
	}
	/* The import's byte limit was checked against the declared size,
	 * which bounds the data: see ws_extract_entry. */
	if (x->fin != NULL && size <= WS_FIN_SMALL) {
		if ((r = ws_extract_small(x, e, path, size, fd)) == 0)
			fd = -1;
		goto out;
	}
	if (size >= WS_DIRECT_MIN && x->dio >= 0 &&
	    archive_entry_sparse_reset(e) == 0 && ws_direct_probe(x, fd)) {
		if ((r = ws_extract_direct(x, path, size, fd)) != 0)
			goto out;
		end = size;
	} else for (;;) {
		ar = archive_read_data_block(x->a, &buf, &n, &off);
		if (ar == ARCHIVE_EOF)
			break;
		if (ar < ARCHIVE_WARN) {
			r = ws_extract_archive_error(x);
			goto out;
		}
		/* Sparse data must stay inside the declared size. */
		if (off < 0 || (uint64_t)n > (uint64_t)size ||
		    off > size - (int64_t)n) {
			ws_why(x, path, "has data beyond its size");
			r = ERR_TAR_INVALID;
			goto out;
		}
		x->cnt->bytes += n;
		if (x->lim->max_bytes != 0 &&
		    x->cnt->bytes > x->lim->max_bytes) {
			ws_why(x, path, "exceeds the home size cap");
			r = ERR_TAR_TOO_LARGE;
			goto out;
		}
		if ((e2 = ws_pwrite_all(fd, buf, n, off)) != 0) {
			r = ws_entry_fs_error(x, path, e2);
			goto out;
		}
		if (off + (int64_t)n > end)
			end = off + (int64_t)n;
	}
	/* A sparse file may end in a hole. */
	if ((end != size && ftruncate(fd, size) == -1) ||
	    fchmod(fd, archive_entry_perm(e) & 0777) == -1) {
		r = ws_entry_fs_error(x, path, errno);
		goto out;
	}
	ts[0].tv_sec = ts[1].tv_sec = archive_entry_mtime(e);
	ts[0].tv_nsec = ts[1].tv_nsec = archive_entry_mtime_nsec(e);
	(void)futimens(fd, ts);
	r = 0;
out:
	if (fd != -1 && close(fd) == -1 && r == 0)
		r = ws_entry_fs_error(x, path, errno);
	return r;
}

static int
ws_dirmeta_cmp(const void *a, const void *b)
{
	/* Descending: a directory's descendants sort before it. */
	return strcmp(((const struct ws_dirmeta *)b)->path,
	    ((const struct ws_dirmeta *)a)->path);
}

static int
ws_apply_dirmeta(struct ws_extract *x)
{
	struct timespec	 ts[2];
	const char	*last;
	size_t		 i;
	int		 pfd, fd;

	if (x->ndirs > 1)
		qsort(x->dirs, x->ndirs, sizeof *x->dirs, ws_dirmeta_cmp);
	for (i = 0; i < x->ndirs; i++) {
		if ((pfd = ws_open_parent(x->stagefd, x->dirs[i].path, 0,
		    &last)) < 0)
			return ws_entry_fs_error(x, x->dirs[i].path, -pfd);
		fd = openat(pfd, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		close(pfd);
		if (fd == -1)
			return ws_entry_fs_error(x, x->dirs[i].path, errno);
		ts[0] = ts[1] = x->dirs[i].mtime;
		(void)fchmod(fd, x->dirs[i].mode);
		(void)futimens(fd, ts);
		close(fd);
	}
	return 0;
}

static int
ws_extract_entry(struct ws_extract *x, struct archive_entry *e)
{
	char		 path[WS_PATH_MAX];
	const char	*name;
	unsigned	 type;
	int64_t		 size;
	size_t		 len;
	int		 has_link, r;

	x->cnt->entries++;
	if (x->lim->max_entries != 0 &&
	    x->cnt->entries > x->lim->max_entries) {
		if (x->why != NULL && x->whylen > 0)
			snprintf(x->why, x->whylen, "the archive has more than "
			    "%llu entries",
			    (unsigned long long)x->lim->max_entries);
		return ERR_TAR_TOO_MANY_ENTRIES;
	}
	if ((name = archive_entry_pathname(e)) == NULL)
		name = archive_entry_pathname_utf8(e);
	type = archive_entry_filetype(e);
	has_link = archive_entry_hardlink(e) != NULL ||
	    archive_entry_symlink(e) != NULL;
	if ((r = workspace_entry_check(name, type, has_link, x->why,
	    x->whylen)) != 0)
		return r;
	/* Export drops these: a tar that holds one did not come from us,
	 * and a staged journal or old tree would confuse a recovery. */
	if (workspace_reserved(name))
		return ws_reject(x->why, x->whylen, name, "uses a top-level "
		    "name reserved for guestd (.rakazo-*)");
	len = strlen(name);
	memcpy(path, name, len + 1);
	while (len > 1 && path[len - 1] == '/')
		path[--len] = '\0';
	if (type == AE_IFDIR)
		return ws_extract_dir(x, e, path);
	size = archive_entry_size(e);
	if (size < 0) {
		ws_why(x, path, "has a negative size");
		return ERR_TAR_INVALID;
	}
	/*
	 * The declared size, a sparse entry's holes included: a 10 KB tar
	 * can declare a 20 GiB file, and its holes stay holes here, but a
	 * later checkpoint, a file.read or a file system without holes
	 * pays for them all.  Counted before any byte is written, so an
	 * archive past the cap never fills the disk.
	 */
	x->declared += (uint64_t)size;
	if (x->lim->max_bytes != 0 && ((uint64_t)size > x->lim->max_bytes ||
	    x->declared > x->lim->max_bytes)) {
		if (x->why != NULL && x->whylen > 0)
			snprintf(x->why, x->whylen, "the files exceed the "
			    "home size cap of %llu bytes (sparse files "
			    "count their full size)",
			    (unsigned long long)x->lim->max_bytes);
		return ERR_TAR_TOO_LARGE;
	}
	return ws_extract_file(x, e, path, size);
}

/* Opens a new archive_read on the caller's source; ARCHIVE_OK or not. */
typedef int (*ws_open_fn)(struct archive *, void *);

static int
ws_extract(ws_open_fn open_fn, void *open_arg, int stagefd,
    const struct workspace_limits *lim, struct workspace_counts *cnt,
    char *why, size_t whylen)
{
	struct ws_extract	 x;
	struct archive_entry	*e;
	size_t			 i;
	la_int64_t		 before;
	int			 ar, r = ERR_INTERNAL;

	memset(cnt, 0, sizeof *cnt);
	memset(&x, 0, sizeof x);
	x.stagefd = stagefd;
	x.pfd = -1;
	x.lim = lim;
	x.cnt = cnt;
	x.why = why;
	x.whylen = whylen;
	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if ((x.a = archive_read_new()) == NULL)
		return ERR_NOMEM;
	/* Tar only (ustar, pax, GNU); no compression filters. */
	archive_read_support_format_tar(x.a);
	x.fin = ws_finisher_start();
	if (open_fn(x.a, open_arg) != ARCHIVE_OK) {
		r = ws_extract_archive_error(&x);
		goto out;
	}
	for (;;) {
		/*
		 * libarchive reports the end both at the end-of-archive
		 * marker (a zero block, consumed) and where the stream merely
		 * stops between entries.  Only the first is a whole archive:
		 * a tar cut at an entry boundary, or an export that died,
		 * lacks it.  Entries are skipped to their end first, so the
		 * position moves by the marker alone.
		 */
		before = archive_filter_bytes(x.a, 0);
		ar = archive_read_next_header(x.a, &e);
		if (ar == ARCHIVE_EOF) {
			if (archive_filter_bytes(x.a, 0) - before < WS_TAR_RECORD) {
				if (why != NULL && whylen > 0)
					snprintf(why, whylen, "the archive ends "
					    "without its end-of-archive marker");
				r = ERR_TAR_TRUNCATED;
				goto out;
			}
			break;
		}
		/* WARN: e.g. a name not convertible to the locale; the
		 * entry itself is whole. */
		if (ar < ARCHIVE_WARN) {
			r = ws_extract_archive_error(&x);
			goto out;
		}
		if ((r = ws_finisher_error(&x)) != 0 ||
		    (r = ws_extract_entry(&x, e)) != 0)
			goto out;
		if (archive_read_data_skip(x.a) < ARCHIVE_WARN) {
			r = ws_extract_archive_error(&x);
			goto out;
		}
	}
	if ((r = ws_finisher_wait(&x)) != 0 ||
	    (r = ws_apply_dirmeta(&x)) != 0)
		goto out;
	r = 0;
out:
	ws_finisher_end(x.fin);
	free(x.dbuf);
	if (x.pfd != -1)
		close(x.pfd);
	for (i = 0; i < x.ndirs; i++)
		free(x.dirs[i].path);
	free(x.dirs);
	archive_read_free(x.a);
	return r;
}

static int
ws_open_fd(struct archive *a, void *arg)
{
	/* Large reads: few reads and file writes per large file. */
	return archive_read_open_fd(a, *(int *)arg, WS_IO_CHUNK);
}

int
workspace_extract_fd(int tarfd, int stagefd,
    const struct workspace_limits *lim, struct workspace_counts *cnt,
    char *why, size_t whylen)
{
	return ws_extract(ws_open_fd, &tarfd, stagefd, lim, cnt, why, whylen);
}

/* ---- the import tag -------------------------------------------------------- */

/* A tag: 1 to 64 of [A-Za-z0-9._:-], so it is one line and one word. */
static int
ws_tag_ok(const char *tag)
{
	size_t	 i, n = strlen(tag);

	if (n == 0 || n >= WS_TAG_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!((tag[i] >= 'a' && tag[i] <= 'z') ||
		    (tag[i] >= 'A' && tag[i] <= 'Z') ||
		    (tag[i] >= '0' && tag[i] <= '9') || tag[i] == '.' ||
		    tag[i] == '_' || tag[i] == ':' || tag[i] == '-'))
			return 0;
	return 1;
}

/* The tag file at the top of the staged tree (synced with it). */
static int
ws_tag_write(int stagefd, const char *tag)
{
	char	 line[WS_TAG_MAX + 1];
	ssize_t	 w;
	int	 fd, n, r = 0;

	n = snprintf(line, sizeof line, "%s\n", tag);
	fd = openat(stagefd, WS_IMPORTED, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1)
		return ws_errno_code(errno);
	do {
		w = write(fd, line, (size_t)n);
	} while (w == -1 && errno == EINTR);
	if (w != n)
		r = w == -1 ? ws_errno_code(errno) : ERR_NO_SPACE;
	close(fd);
	return r;
}

/* The workspace's tag into dst ("" when it has none); 0 or ERR_*. */
static int
ws_tag_read(const char *workspace, char *dst, size_t len)
{
	char	 buf[WS_TAG_MAX + 1];
	ssize_t	 n;
	int	 wsfd, fd, e;

	dst[0] = '\0';
	wsfd = open(workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (wsfd == -1)
		return ws_errno_code(errno);
	fd = openat(wsfd, WS_IMPORTED, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	e = errno;
	close(wsfd);
	if (fd == -1)
		return e == ENOENT ? 0 : ws_errno_code(e);
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	/* Not one we wrote (a user's file of that name): no tag. */
	if (ws_tag_ok(buf) && strlen(buf) < len)
		memcpy(dst, buf, strlen(buf) + 1);
	return 0;
}

/* ---- staging and swap (worker side) -------------------------------------- */

struct ws_stage {
	int	 wsfd;		/* the workspace directory */
	int	 parentfd;	/* its parent; -1 when staging inside */
	int	 stagefd;
	int	 inside;	/* staging dir is inside the workspace */
	mode_t	 wsmode;
	char	 base[NAME_MAX + 1];	/* workspace's name in its parent */
	char	 name[NAME_MAX + 1];	/* staging dir's name */
};

static void
ws_stage_init(struct ws_stage *sg)
{
	memset(sg, 0, sizeof *sg);
	sg->wsfd = sg->parentfd = sg->stagefd = -1;
}

static void
ws_stage_close(struct ws_stage *sg)
{
	if (sg->stagefd != -1)
		close(sg->stagefd);
	if (sg->parentfd != -1)
		close(sg->parentfd);
	if (sg->wsfd != -1)
		close(sg->wsfd);
	ws_stage_init(sg);
}

/* Leftovers of an import that died with its guestd (one import runs at a
 * time, so any such sibling is stale). */
static void
ws_stage_remove_stale(int parentfd, const char *base)
{
	char	  prefix[NAME_MAX + 32];
	char	**names;
	size_t	  n, i;

	snprintf(prefix, sizeof prefix, ".%s.import-", base);
	if (ws_list(parentfd, &names, &n) != 0)
		return;
	for (i = 0; i < n; i++) {
		if (strncmp(names[i], prefix, strlen(prefix)) == 0 &&
		    ws_tree_remove(parentfd, names[i], 0) == 0)
			log_info("workspace.stale_staging_removed", "n=1");
	}
	ws_names_free(names, n);
}

/*
 * Make the staging directory: a sibling ".<base>.import-<random>" when the
 * parent is writable and on the same filesystem (then the swap is one
 * renameat2(RENAME_EXCHANGE)), else ".rakazo-import-<random>" inside the
 * workspace (a mount point, or a parent the workspace user cannot write).
 */
static int
ws_stage_make(struct ws_stage *sg, const char *workspace)
{
	struct stat	 wst, pst;
	char		 parent[PATH_MAX], prefix[NAME_MAX + 32];
	char		*slash;
	size_t		 len;
	int		 r = ERR_INTERNAL, e;

	len = strlen(workspace);
	if (len == 0 || len >= sizeof parent || workspace[0] != '/')
		return ERR_CONFIG;
	memcpy(parent, workspace, len + 1);
	while (len > 1 && parent[len - 1] == '/')
		parent[--len] = '\0';
	slash = strrchr(parent, '/');
	/* A name too long for ".<base>.import-<hex>" stages inside. */
	if (strlen(slash + 1) + 32 <= sizeof sg->base)
		snprintf(sg->base, sizeof sg->base, "%s", slash + 1);
	if (slash == parent)
		slash[1] = '\0';
	else
		*slash = '\0';

	sg->wsfd = open(workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (sg->wsfd == -1 || fstat(sg->wsfd, &wst) == -1)
		return ws_errno_code(errno);
	sg->wsmode = wst.st_mode & 07777;
	if (sg->base[0] != '\0' &&
	    (sg->parentfd = open(parent, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) != -1 &&
	    fstat(sg->parentfd, &pst) == 0 && pst.st_dev == wst.st_dev) {
		ws_stage_remove_stale(sg->parentfd, sg->base);
		snprintf(prefix, sizeof prefix, ".%s.import-", sg->base);
		ws_random_name(sg->name, sizeof sg->name, prefix);
		if (mkdirat(sg->parentfd, sg->name, 0700) == 0) {
			sg->stagefd = openat(sg->parentfd, sg->name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sg->stagefd == -1) {
				e = errno;
				(void)unlinkat(sg->parentfd, sg->name,
				    AT_REMOVEDIR);
				return ws_errno_code(e);
			}
			return 0;
		}
		if (errno != EACCES && errno != EPERM && errno != EROFS)
			return ws_errno_code(errno);
	}
	if (sg->parentfd != -1) {
		close(sg->parentfd);
		sg->parentfd = -1;
	}
	sg->inside = 1;
	ws_random_name(sg->name, sizeof sg->name, WS_IMPORT_PREFIX);
	if (mkdirat(sg->wsfd, sg->name, 0700) == -1)
		return ws_errno_code(errno);
	sg->stagefd = openat(sg->wsfd, sg->name, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	if (sg->stagefd == -1) {
		r = ws_errno_code(errno);
		(void)unlinkat(sg->wsfd, sg->name, AT_REMOVEDIR);
		return r;
	}
	return 0;
}

static int
ws_stage_dirfd(const struct ws_stage *sg)
{
	return sg->inside ? sg->wsfd : sg->parentfd;
}

static void
ws_stage_discard(struct ws_stage *sg)
{
	int	r;

	if (sg->stagefd == -1)
		return;
	if ((r = ws_tree_remove(ws_stage_dirfd(sg), sg->name, 0)) != 0)
		log_warn("workspace.staging_left", "error=%s", err_name(r));
}

/*
 * The swap's journal, ".rakazo-swap" at the top of the workspace, makes a
 * swap by moving recoverable: it is written (to a temp name, fsynced,
 * renamed, the directory fsynced) before each phase, so a guestd killed at
 * any point finds at start-up which way to finish (workspace_recover()):
 *
 *   phase out  the old entries are moving into .rakazo-old-*: roll back,
 *              moving them home; the workspace is exactly the old one.
 *   phase in   every old entry is out, the staged ones are moving in: roll
 *              forward, moving the rest in; exactly the new one.
 *
 * Each entry is moved by one rename(2), so it is always in exactly one of
 * the two places.  The journal goes last, after the old tree and the
 * staging directory are removed.
 */
struct ws_journal {
	char	phase[8];		/* "out" or "in" */
	char	old[NAME_MAX + 1];	/* in the workspace */
	char	stage[NAME_MAX + 1];
	int	stage_inside;		/* stage in the workspace, or beside */
};

static int
ws_fsync_dir(int dirfd)
{
	return fsync(dirfd) == -1 ? ws_errno_code(errno) : 0;
}

static int
ws_journal_write(int wsfd, const struct ws_journal *jn)
{
	char	buf[WS_JOURNAL_MAX];
	ssize_t	w;
	int	fd, n, r = ERR_INTERNAL;

	n = snprintf(buf, sizeof buf, "rakazo-swap 1\nphase %s\nold %s\n"
	    "stage %s %s\n", jn->phase, jn->old,
	    jn->stage_inside ? "inside" : "beside", jn->stage);
	if (n < 0 || (size_t)n >= sizeof buf)
		return ERR_INTERNAL;
	fd = openat(wsfd, WS_JOURNAL_TMP, O_WRONLY | O_CREAT | O_TRUNC |
	    O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1)
		return ws_errno_code(errno);
	do {
		w = write(fd, buf, (size_t)n);
	} while (w == -1 && errno == EINTR);
	if (w != n || fsync(fd) == -1) {
		r = w == -1 || w == n ? ws_errno_code(errno) : ERR_NO_SPACE;
		close(fd);
		(void)unlinkat(wsfd, WS_JOURNAL_TMP, 0);
		return r;
	}
	close(fd);
	if (renameat(wsfd, WS_JOURNAL_TMP, wsfd, WS_JOURNAL) == -1) {
		r = ws_errno_code(errno);
		(void)unlinkat(wsfd, WS_JOURNAL_TMP, 0);
		return r;
	}
	return ws_fsync_dir(wsfd);
}

/* A journal's name field: one of our prefixes, one path segment. */
static int
ws_journal_name_ok(const char *name, const char *prefix)
{
	return strncmp(name, prefix, strlen(prefix)) == 0 &&
	    strchr(name, '/') == NULL && strlen(name) > strlen(prefix);
}

/* The text after "key " on line p (up to the newline), or NULL. */
static char *
ws_journal_field(char **p, const char *key)
{
	char	*line = *p, *nl;
	size_t	 klen = strlen(key);

	if ((nl = strchr(line, '\n')) == NULL)
		return NULL;
	*nl = '\0';
	*p = nl + 1;
	if (strncmp(line, key, klen) != 0 || line[klen] != ' ')
		return NULL;
	return line + klen + 1;
}

/* 0, ERR_NOT_FOUND without a journal, ERR_CONFIG when unreadable. */
static int
ws_journal_read(int wsfd, struct ws_journal *jn)
{
	char	 buf[WS_JOURNAL_MAX], *p = buf, *phase, *old, *stage;
	ssize_t	 n;
	int	 fd;

	memset(jn, 0, sizeof *jn);
	fd = openat(wsfd, WS_JOURNAL, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	if (fd == -1)
		return errno == ENOENT ? ERR_NOT_FOUND : ws_errno_code(errno);
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return ERR_CONFIG;
	buf[n] = '\0';
	/* One field a line; a name is the rest of its line (spaces too). */
	if (ws_journal_field(&p, "rakazo-swap") == NULL ||
	    (phase = ws_journal_field(&p, "phase")) == NULL ||
	    (old = ws_journal_field(&p, "old")) == NULL ||
	    (stage = ws_journal_field(&p, "stage")) == NULL)
		return ERR_CONFIG;
	if (strncmp(stage, "inside ", 7) == 0)
		jn->stage_inside = 1;
	else if (strncmp(stage, "beside ", 7) != 0)
		return ERR_CONFIG;
	stage += 7;
	if ((strcmp(phase, "out") != 0 && strcmp(phase, "in") != 0) ||
	    strlen(old) > NAME_MAX || strlen(stage) > NAME_MAX ||
	    !ws_journal_name_ok(old, WS_OLD_PREFIX))
		return ERR_CONFIG;
	if (jn->stage_inside ? !ws_journal_name_ok(stage, WS_IMPORT_PREFIX) :
	    (stage[0] != '.' || strchr(stage, '/') != NULL ||
	    strstr(stage, ".import-") == NULL))
		return ERR_CONFIG;
	snprintf(jn->phase, sizeof jn->phase, "%s", phase);
	snprintf(jn->old, sizeof jn->old, "%s", old);
	snprintf(jn->stage, sizeof jn->stage, "%s", stage);
	return 0;
}

/* Is name one the swap must leave where it is? */
static int
ws_swap_keep(const char *name, const struct ws_journal *jn)
{
	return strcmp(name, jn->old) == 0 || strcmp(name, WS_JOURNAL) == 0 ||
	    strcmp(name, WS_JOURNAL_TMP) == 0 ||
	    (jn->stage_inside && strcmp(name, jn->stage) == 0);
}

/*
 * Move every entry of fromfd into tofd (the names not kept).  Stops at the
 * first failure; what moved stays moved (the journal says how to finish).
 */
static int
ws_move_all(int fromfd, int tofd, const struct ws_journal *jn,
    const char *crash_step)
{
	char	**names = NULL;
	size_t	  n = 0, i;
	int	  r;

	if ((r = ws_list(fromfd, &names, &n)) != 0)
		return ws_errno_code(-r);
	for (i = 0; i < n; i++) {
		if (ws_swap_keep(names[i], jn))
			continue;
		if (renameat(fromfd, names[i], tofd, names[i]) == -1) {
			r = ws_errno_code(errno);
			break;
		}
		if (crash_step != NULL)
			ws_crash_point(crash_step);
	}
	ws_names_free(names, n);
	if (r == 0 && (r = ws_fsync_dir(fromfd)) == 0)
		r = ws_fsync_dir(tofd);
	return r;
}

/*
 * Finish what a journal describes (after a crash, or to undo a swap that
 * failed half way): "out" moves the old entries home, "in" moves the
 * staged ones in; then the old tree, the staging directory and the
 * journal go.  parentfd is the workspace's parent (-1 if unknown).
 */
static int
ws_journal_finish(int wsfd, int parentfd, const struct ws_journal *jn)
{
	int	oldfd = -1, stagefd = -1, sdirfd, r = 0;

	sdirfd = jn->stage_inside ? wsfd : parentfd;
	/*
	 * The side to move from must be there or truly gone (all moved,
	 * removed): removing the other side while it cannot be read would
	 * lose both trees.
	 */
	if (sdirfd == -1)
		return ERR_PERMISSION;
	oldfd = openat(wsfd, jn->old, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (oldfd == -1 && errno != ENOENT)
		r = ws_errno_code(errno);
	stagefd = openat(sdirfd, jn->stage, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	if (stagefd == -1 && errno != ENOENT && r == 0)
		r = ws_errno_code(errno);
	if (r == 0 && strcmp(jn->phase, "out") == 0 && oldfd != -1)
		r = ws_move_all(oldfd, wsfd, jn, NULL);
	else if (r == 0 && strcmp(jn->phase, "in") == 0 && stagefd != -1)
		r = ws_move_all(stagefd, wsfd, jn, NULL);
	if (oldfd != -1)
		close(oldfd);
	if (stagefd != -1)
		close(stagefd);
	/* Not all moved: keep the journal, a later start tries again. */
	if (r != 0)
		return r;
	if ((r = ws_tree_remove(wsfd, jn->old, 0)) != 0 ||
	    (r = ws_tree_remove(sdirfd, jn->stage, 0)) != 0)
		return r;
	if (unlinkat(wsfd, WS_JOURNAL, 0) == -1 && errno != ENOENT)
		return ws_errno_code(errno);
	return ws_fsync_dir(wsfd);
}

/*
 * Swap by moving top-level entries (the workspace is a mount point, or the
 * staging dir is inside it): journal "out", the old entries go into
 * .rakazo-old-<random>; journal "in", the staged ones come in; then the
 * old tree, the staging directory and the journal are removed.  A failure
 * before "in" is rolled back; after it, the swap is finished.  A crash
 * anywhere is finished by workspace_recover() the same way.
 */
static int
ws_swap_by_moving(struct ws_stage *sg)
{
	struct ws_journal	 jn;
	int			 oldfd = -1, r = ERR_INTERNAL;

	memset(&jn, 0, sizeof jn);
	snprintf(jn.phase, sizeof jn.phase, "out");
	ws_random_name(jn.old, sizeof jn.old, WS_OLD_PREFIX);
	snprintf(jn.stage, sizeof jn.stage, "%s", sg->name);
	jn.stage_inside = sg->inside;
	/* The new tree is on disk before anything old moves. */
	if (syncfs(sg->stagefd) == -1)
		return ws_errno_code(errno);
	if ((r = ws_journal_write(sg->wsfd, &jn)) != 0)
		return r;
	ws_crash_point("journal");
	if (mkdirat(sg->wsfd, jn.old, 0700) == -1 ||
	    (oldfd = openat(sg->wsfd, jn.old, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1) {
		r = ws_errno_code(errno);
		goto undo;
	}
	if ((r = ws_move_all(sg->wsfd, oldfd, &jn, "moving-out")) != 0)
		goto undo;
	snprintf(jn.phase, sizeof jn.phase, "in");
	if ((r = ws_journal_write(sg->wsfd, &jn)) != 0)
		goto undo;
	ws_crash_point("moved-out");
	close(oldfd);
	oldfd = -1;
	if ((r = ws_move_all(sg->stagefd, sg->wsfd, &jn, "moving-in")) != 0) {
		/* Committed: the next start finishes it (journal "in"). */
		log_warn("workspace.swap_unfinished", "error=%s", err_name(r));
		return 0;
	}
	ws_crash_point("moved-in");
	close(sg->stagefd);
	sg->stagefd = -1;
	if ((r = ws_journal_finish(sg->wsfd, ws_stage_dirfd(sg), &jn)) != 0)
		log_warn("workspace.old_left", "error=%s", err_name(r));
	return 0;
undo:
	if (oldfd != -1)
		close(oldfd);
	/* Roll back, and say so first in case we die meanwhile. */
	snprintf(jn.phase, sizeof jn.phase, "out");
	(void)ws_journal_write(sg->wsfd, &jn);
	if (ws_journal_finish(sg->wsfd, ws_stage_dirfd(sg), &jn) != 0)
		log_warn("workspace.rollback_unfinished", "error=%s",
		    err_name(r));
	return r;
}

/* Put the staged tree in place of the workspace; the old tree is gone
 * afterwards and sg->stagefd is closed.  0 or ERR_* with nothing changed. */
static int
ws_swap(struct ws_stage *sg)
{
	int	r;

	if (!sg->inside) {
		(void)fchmod(sg->stagefd, sg->wsmode);
		if (syncfs(sg->stagefd) == -1) {
			r = ws_errno_code(errno);
			(void)fchmod(sg->stagefd, 0700);
			return r;
		}
		if (renameat2(sg->parentfd, sg->name, sg->parentfd, sg->base,
		    RENAME_EXCHANGE) == 0) {
			/* The old tree now sits at the staging name; a crash
			 * from here leaves it to workspace_recover(). */
			(void)ws_fsync_dir(sg->parentfd);
			ws_crash_point("exchanged");
			close(sg->stagefd);
			sg->stagefd = -1;
			if ((r = ws_tree_remove(sg->parentfd, sg->name, 0)) !=
			    0)
				log_warn("workspace.old_left", "error=%s",
				    err_name(r));
			return 0;
		}
		if (errno != EBUSY && errno != EXDEV && errno != EINVAL &&
		    errno != ENOSYS) {
			r = ws_errno_code(errno);
			(void)fchmod(sg->stagefd, 0700);
			return r;
		}
		(void)fchmod(sg->stagefd, 0700);
	}
	if ((r = ws_swap_by_moving(sg)) != 0)
		return r;
	if (sg->stagefd != -1) {
		close(sg->stagefd);
		sg->stagefd = -1;
	}
	return 0;
}

/*
 * At start-up, before anyone can use the workspace: finish a swap a crash
 * interrupted (its journal says which way), and remove what imports that
 * died before their swap left: staging directories inside the workspace
 * and beside it.
 */
int
workspace_recover(const char *workspace)
{
	struct ws_journal	 jn;
	struct ws_stage		 sg;
	const char		*env;
	char			 parent[PATH_MAX], *slash, **names = NULL;
	size_t			 n = 0, i;
	int			 r;

	if ((env = getenv("GUESTD_TEST_CRASH_AT")) != NULL) {
		snprintf(ws_crash_at, sizeof ws_crash_at, "%s", env);
		unsetenv("GUESTD_TEST_CRASH_AT");
	}
	ws_stage_init(&sg);
	snprintf(parent, sizeof parent, "%s", workspace);
	if ((slash = strrchr(parent, '/')) != NULL && slash[1] != '\0') {
		snprintf(sg.base, sizeof sg.base, "%s", slash + 1);
		if (slash == parent)
			slash[1] = '\0';
		else
			*slash = '\0';
		sg.parentfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	sg.wsfd = open(workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (sg.wsfd == -1) {
		r = ws_errno_code(errno);
		goto out;
	}
	r = ws_journal_read(sg.wsfd, &jn);
	if (r == 0) {
		r = ws_journal_finish(sg.wsfd, sg.parentfd, &jn);
		log_info("workspace.swap_recovered", "to=%s error=%s",
		    strcmp(jn.phase, "in") == 0 ? "new" : "old",
		    r == 0 ? "none" : err_name(r));
		if (r != 0)
			goto out;
	} else if (r != ERR_NOT_FOUND) {
		log_warn("workspace.journal_unreadable", "error=%s",
		    err_name(r));
		goto out;
	}
	/* No journal (any more): the rest are stale staging leftovers. */
	if ((r = ws_list(sg.wsfd, &names, &n)) != 0) {
		r = ws_errno_code(-r);
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (strncmp(names[i], WS_IMPORT_PREFIX,
		    strlen(WS_IMPORT_PREFIX)) == 0 &&
		    ws_tree_remove(sg.wsfd, names[i], 0) == 0)
			log_info("workspace.stale_staging_removed", "n=1");
		else if (strcmp(names[i], WS_JOURNAL_TMP) == 0)
			(void)unlinkat(sg.wsfd, names[i], 0);
		else if (strncmp(names[i], WS_OLD_PREFIX,
		    strlen(WS_OLD_PREFIX)) == 0)
			/* From a guestd before the journal: whose entries
			 * these are cannot be known, so they are kept. */
			log_warn("workspace.old_tree_kept", "name=%s",
			    names[i]);
	}
	if (sg.parentfd != -1 && sg.base[0] != '\0')
		ws_stage_remove_stale(sg.parentfd, sg.base);
	r = 0;
out:
	ws_names_free(names, n);
	ws_stage_close(&sg);
	return r;
}

/* ---- jobs shared by the loop and a worker -------------------------------- */

struct ws_chunk {
	TAILQ_ENTRY(ws_chunk)	 entry;
	size_t			 len, cap;
	uint8_t			 data[];
};

struct ws_job {
	struct control_stream	 st;		/* first: the stream is the job */
	struct control_conn	*conn;
	uint32_t		 id;
	int			 import;
	int			 fponly;	/* workspace.fingerprint */
	int			 refs;		/* loop thread only */
	int			 live;		/* the request awaits a reply */

	pthread_mutex_t		 mtx;
	int			 cancelled;	/* under mtx */

	struct loop_fd		*lf;		/* export: the loop's pipe end */
	int			 workerfd;	/* export: the worker's end */
	int			 worker_done;
	int			 eof;		/* export: pipe at EOF */
	int			 got_end;	/* import: END frame seen */
	int			 discard;	/* import: worker stopped reading */
	int			 busy;		/* import: a frame is held */
	uint64_t		 sent;		/* export: tar bytes forwarded */

	/* Written by the worker before its loop_post. */
	int			 rc;
	struct workspace_counts	 cnt;
	char			 why[WS_WHY_LEN];
	char			 fp[WS_FP_MAX];	/* export: the new one */
	int			 same;		/* fponly: fp still holds */
	char			 since[WS_FP_MAX];	/* fponly: asked */
	char			 tag[WS_TAG_MAX];	/* import: "" none */
	int64_t			 swapped_ns;	/* import: its swap ended */
	int64_t			 begun_ns;	/* import: the worker began */
	int64_t			 staged_ns;	/* import: all extracted */
	int64_t			 replaced_ns;	/* fponly: ws_replaced_ns */

	struct workspace_limits	 lim;
	struct control_out	*out;		/* export: the next frame */
	uint8_t			*buf;		/* its payload */

	/* import: the tar bytes' queue, all under mtx but qcur */
	pthread_cond_t		 qcond;		/* for the worker */
	TAILQ_HEAD(ws_chunks, ws_chunk)	 q;		/* filled, in order */
	struct ws_chunks	 qspare;
	size_t			 nspare;
	size_t			 qbytes;	/* capacity of q and qcur */
	int			 qeof;		/* the END frame arrived */
	int			 qclosed;	/* the worker reads no more */
	int			 qwaiting;	/* the loop holds a frame */
	struct ws_chunk		*qcur;		/* worker: libarchive's */
};

/* One import at a time: two would race for the swap. */
static int	ws_import_running;
/*
 * When this guestd's last import swapped a tree in (or tried to), on the
 * loop.  A fingerprint from a walk that began before it was taken of
 * another tree, whose inodes are gone: it cannot hold, and saying so
 * without a walk spares reading and hashing every file of a tree that
 * was just written (all of it "racy"), which is what the first
 * checkpoint after a restore would otherwise do before its export.
 */
static int64_t	ws_replaced_ns;

static void
ws_q_free_all(struct ws_job *j)
{
	struct ws_chunk	*ch;

	free(j->qcur);
	j->qcur = NULL;
	while ((ch = TAILQ_FIRST(&j->q)) != NULL) {
		TAILQ_REMOVE(&j->q, ch, entry);
		free(ch);
	}
	while ((ch = TAILQ_FIRST(&j->qspare)) != NULL) {
		TAILQ_REMOVE(&j->qspare, ch, entry);
		free(ch);
	}
	j->nspare = 0;
	j->qbytes = 0;
}

static void
ws_unref(struct ws_job *j)
{
	if (--j->refs > 0)
		return;
	loop_fd_close(j->lf);
	if (j->workerfd != -1)
		close(j->workerfd);
	ws_q_free_all(j);
	pthread_cond_destroy(&j->qcond);
	pthread_mutex_destroy(&j->mtx);
	control_data_free(j->out);
	free(j);
}

static int
ws_job_cancelled(struct ws_job *j)
{
	int	c;

	pthread_mutex_lock(&j->mtx);
	c = j->cancelled;
	pthread_mutex_unlock(&j->mtx);
	return c;
}

/* The request is answered (or its connection went away). */
static void
ws_job_end(struct ws_job *j)
{
	j->live = 0;
	loop_fd_close(j->lf);
	j->lf = NULL;
	control_stream_detach(&j->st);
	ws_unref(j);
}

static void
ws_job_reply(struct ws_job *j)
{
	json_t	*res;

	if (j->rc != 0) {
		control_reply_error(j->conn, j->id, j->rc,
		    j->why[0] != '\0' ? j->why : NULL);
	} else if (j->fponly) {
		control_reply(j->conn, j->id, json_pack("{s:b}", "unchanged",
		    j->same));
		log_info("workspace.fingerprint", "unchanged=%d", j->same);
	} else if (j->import) {
		res = json_pack("{s:I, s:I}",
		    "entries", (json_int_t)j->cnt.entries,
		    "bytes", (json_int_t)j->cnt.bytes);
		control_reply(j->conn, j->id, res);
		/* extract: from the first byte to the last entry written
		 * (mostly waiting for the stream); swap: the sync of the
		 * staged tree, the rename and the old tree's removal. */
		log_info("workspace.imported", "entries=%llu bytes=%llu "
		    "extract_ms=%lld swap_ms=%lld",
		    (unsigned long long)j->cnt.entries,
		    (unsigned long long)j->cnt.bytes,
		    (long long)((j->staged_ns - j->begun_ns) / 1000000),
		    (long long)((j->swapped_ns - j->staged_ns) / 1000000));
	} else {
		control_send_data(j->conn, j->id, PROTO_CH_DATA, "", 0, 1);
		res = json_pack("{s:I, s:I, s:I, s:s}",
		    "bytes", (json_int_t)j->sent,
		    "entries", (json_int_t)j->cnt.entries,
		    "skipped", (json_int_t)j->cnt.skipped,
		    "fingerprint", j->fp);
		control_reply(j->conn, j->id, res);
		log_info("workspace.exported", "bytes=%llu entries=%llu "
		    "skipped=%llu", (unsigned long long)j->sent,
		    (unsigned long long)j->cnt.entries,
		    (unsigned long long)j->cnt.skipped);
	}
	if (j->rc != 0)
		log_info(j->import ? "workspace.import_failed" :
		    "workspace.export_failed", "error=%s", err_name(j->rc));
	ws_job_end(j);
}

static void
ws_maybe_finish(struct ws_job *j)
{
	if (!j->live || !j->worker_done)
		return;
	if (j->fponly || (j->import ? j->got_end : j->eof))
		ws_job_reply(j);
}

/* On the loop: the worker's result arrived. */
static void
ws_worker_posted(void *arg)
{
	struct ws_job	*j = arg;

	j->worker_done = 1;
	/* Only now is the staging dir gone or swapped in. */
	if (j->import)
		ws_import_running = 0;
	if (j->swapped_ns > ws_replaced_ns)
		ws_replaced_ns = j->swapped_ns;
	ws_maybe_finish(j);
	ws_unref(j);
}

static void
ws_job_abort(struct control_stream *s)
{
	struct ws_job	*j = (struct ws_job *)s;

	/* Closing our pipe end makes an export's worker fail (EPIPE); an
	 * import's queue ends at once.  The flag keeps an import that saw a
	 * clean end from swapping. */
	pthread_mutex_lock(&j->mtx);
	j->cancelled = 1;
	pthread_cond_broadcast(&j->qcond);
	pthread_mutex_unlock(&j->mtx);
	ws_job_end(j);
}

static int
ws_thread_start(void *(*fn)(void *), struct ws_job *j)
{
	pthread_attr_t	attr;
	pthread_t	t;
	sigset_t	all, old;
	int		e;

	/* Workers take no signals: they belong to the loop's signalfd. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	e = pthread_create(&t, &attr, fn, j);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return e == 0 ? 0 : ERR_NOMEM;
}

static struct ws_job *
ws_job_new(struct control_conn *c, uint32_t id, int import)
{
	struct ws_job	*j;

	j = xcalloc(1, sizeof *j);
	j->conn = c;
	j->id = id;
	j->import = import;
	j->workerfd = -1;
	j->refs = 1;
	pthread_mutex_init(&j->mtx, NULL);
	pthread_cond_init(&j->qcond, NULL);
	TAILQ_INIT(&j->q);
	TAILQ_INIT(&j->qspare);
	return j;
}

/* pipe2 with a larger buffer when the kernel allows. */
static int
ws_pipe(int p[2])
{
	if (pipe2(p, O_CLOEXEC) == -1)
		return ws_errno_code(errno);
	(void)fcntl(p[1], F_SETPIPE_SZ, WS_PIPE_SIZE);
	return 0;
}

/* ---- workspace.export ---------------------------------------------------- */

static void *
ws_export_worker(void *arg)
{
	struct ws_job	*j = arg;
	int		 rootfd;

	/*
	 * The bots' browsers were closed before this job was queued
	 * (workspace_op_export, doc/DESIGN.md G-25): profiles copy whole.
	 */
	rootfd = open(guestd.workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (rootfd == -1)
		j->rc = ws_errno_code(errno);
	else {
		j->rc = workspace_export_fd_fp(rootfd, j->workerfd,
		    guestd.home_max_bytes, &j->cnt, j->fp, sizeof j->fp,
		    j->why, sizeof j->why);
		close(rootfd);
	}
	/* EOF for the loop side. */
	close(j->workerfd);
	j->workerfd = -1;
	loop_post(ws_worker_posted, j);
	return NULL;
}

/* Forward one chunk; on HUP the writer is done and the rest (at most a
 * pipe's worth) is drained now. */
static void
ws_export_readable(struct loop_fd *lf, int events, void *arg)
{
	struct ws_job	*j = arg;
	ssize_t		 n;
	int		 fd = loop_fd_get(lf);

	for (;;) {
		/* Read straight into the frame; one kept across EAGAIN. */
		if (j->out == NULL)
			j->out = control_data_new(WS_EXPORT_FRAME, &j->buf);
		n = read(fd, j->buf, WS_EXPORT_FRAME);
		if (n == -1 && errno == EINTR)
			continue;
		if (n > 0) {
			control_data_send(j->conn, j->out, j->id,
			    PROTO_CH_DATA, (size_t)n, 0);
			j->out = NULL;
			j->sent += (uint64_t)n;
			if (events & LOOP_HUP)
				continue;
			break;
		}
		if (n == -1 && errno == EAGAIN && !(events & LOOP_HUP))
			break;
		/* EOF (or a read error, which the worker's result explains). */
		j->eof = 1;
		if (!(events & LOOP_HUP))
			loop_fd_close(lf);
		j->lf = NULL;
		ws_maybe_finish(j);
		return;
	}
	if (control_out_full(j->conn)) {
		loop_fd_want_read(lf, 0);
		control_stream_pause(&j->st);
	}
}

static void
ws_export_resume(struct control_stream *s)
{
	struct ws_job	*j = (struct ws_job *)s;

	loop_fd_want_read(j->lf, 1);
}

static int
ws_export_data(struct control_stream *s, const uint8_t *p, size_t n, int end)
{
	/* The client has nothing to send for an export: ignore it. */
	return 0;
}

static const struct control_stream_ops ws_export_ops = {
	ws_export_resume, ws_export_data, ws_job_abort
};

/* Set while browser_quiesce_then() runs the export (no second quiesce). */
static int	ws_quiesced;

int
workspace_op_export(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen)
{
	struct ws_job	*j;
	int		 p[2], r;

	if (args != NULL && !json_is_object(args))
		return ERR_BAD_REQUEST;
	/* G-25: profiles copy consistently only with their browsers closed;
	 * this op runs again once they are. */
	if (!ws_quiesced) {
		ws_quiesced = 1;
		r = browser_quiesce_then(c, id, args, detail, detaillen,
		    workspace_op_export);
		ws_quiesced = 0;
		return r;
	}
	if ((r = ws_pipe(p)) != 0)
		return r;
	j = ws_job_new(c, id, 0);
	j->workerfd = p[1];
	if ((j->lf = loop_fd_add(p[0], ws_export_readable, j)) == NULL) {
		ws_unref(j);
		return ERR_INTERNAL;
	}
	j->refs++;	/* the worker's, released by ws_worker_posted() */
	if ((r = ws_thread_start(ws_export_worker, j)) != 0) {
		j->refs--;
		ws_unref(j);
		return r;
	}
	j->live = 1;
	control_stream_attach(c, &j->st, id, &ws_export_ops);
	return 0;
}

/* ---- workspace.import ---------------------------------------------------- */

/* On the loop: the worker made room, or stopped reading. */
static void
ws_import_space(void *arg)
{
	struct ws_job	*j = arg;

	/* data() is offered the held frame again. */
	if (j->live && j->busy)
		control_stream_rx_resume(&j->st);
}

/* Under mtx: chunk ch is done with. */
static void
ws_q_release(struct ws_job *j, struct ws_chunk *ch)
{
	j->qbytes -= ch->cap;
	if (ch->cap == WS_QCHUNK && j->nspare < WS_QSPARE && !j->qclosed) {
		TAILQ_INSERT_HEAD(&j->qspare, ch, entry);
		j->nspare++;
	} else
		free(ch);
	/* The worker's ref outlives the post: its own post comes last. */
	if (j->qwaiting && (j->qclosed || j->qbytes <= WS_QUEUE_BYTES / 2)) {
		j->qwaiting = 0;
		loop_post(ws_import_space, j);
	}
}

/*
 * libarchive's read callback, on the worker: the next chunk, in place
 * (valid until the next call), or 0 at the end of the stream.  A
 * cancelled import ends at once.
 */
static la_ssize_t
ws_q_read(struct archive *a, void *arg, const void **buf)
{
	struct ws_job	*j = arg;
	struct ws_chunk	*ch;

	(void)a;
	pthread_mutex_lock(&j->mtx);
	if (j->qcur != NULL) {
		ws_q_release(j, j->qcur);
		j->qcur = NULL;
	}
	while ((ch = TAILQ_FIRST(&j->q)) == NULL && !j->qeof &&
	    !j->cancelled)
		pthread_cond_wait(&j->qcond, &j->mtx);
	if (j->cancelled)
		ch = NULL;
	if (ch != NULL) {
		TAILQ_REMOVE(&j->q, ch, entry);
		j->qcur = ch;
	}
	pthread_mutex_unlock(&j->mtx);
	if (ch == NULL)
		return 0;
	*buf = ch->data;
	return (la_ssize_t)ch->len;
}

static int
ws_open_queue(struct archive *a, void *arg)
{
	return archive_read_open(a, arg, NULL, ws_q_read, NULL);
}

/* On the worker: it reads no more; what is queued goes. */
static void
ws_q_close(struct ws_job *j)
{
	struct ws_chunk	*ch;

	pthread_mutex_lock(&j->mtx);
	j->qclosed = 1;
	if (j->qcur != NULL) {
		ws_q_release(j, j->qcur);
		j->qcur = NULL;
	}
	while ((ch = TAILQ_FIRST(&j->q)) != NULL) {
		TAILQ_REMOVE(&j->q, ch, entry);
		ws_q_release(j, ch);
	}
	pthread_mutex_unlock(&j->mtx);
}

/*
 * On the loop: queue one frame's bytes.  0; ERR_BUSY when the queue is
 * full (the loop is resumed when it has drained); ERR_CANCELLED when the
 * worker reads no more.
 */
static int
ws_q_put(struct ws_job *j, const uint8_t *p, size_t n)
{
	struct ws_chunk	*ch, *tail;
	size_t		 cap = n > WS_QCHUNK ? n : WS_QCHUNK;

	pthread_mutex_lock(&j->mtx);
	if (j->qclosed) {
		pthread_mutex_unlock(&j->mtx);
		return ERR_CANCELLED;
	}
	/* Small frames fill the newest chunk the worker has not taken. */
	tail = TAILQ_LAST(&j->q, ws_chunks);
	if (tail != NULL && tail->cap - tail->len >= n) {
		memcpy(tail->data + tail->len, p, n);
		tail->len += n;
		pthread_mutex_unlock(&j->mtx);
		return 0;
	}
	if (j->qbytes > 0 && j->qbytes + cap > WS_QUEUE_BYTES) {
		j->qwaiting = 1;
		pthread_mutex_unlock(&j->mtx);
		return ERR_BUSY;
	}
	if (cap == WS_QCHUNK && (ch = TAILQ_FIRST(&j->qspare)) != NULL) {
		TAILQ_REMOVE(&j->qspare, ch, entry);
		j->nspare--;
	} else
		ch = NULL;
	j->qbytes += cap;
	pthread_mutex_unlock(&j->mtx);

	/* The copy runs unlocked: the chunk is in no list yet. */
	if (ch == NULL) {
		ch = xmalloc(sizeof *ch + cap);
		ch->cap = cap;
	}
	memcpy(ch->data, p, n);
	ch->len = n;

	pthread_mutex_lock(&j->mtx);
	TAILQ_INSERT_TAIL(&j->q, ch, entry);
	pthread_cond_signal(&j->qcond);
	pthread_mutex_unlock(&j->mtx);
	return 0;
}

/* On the worker: skip to the END frame (or a cancel). */
static void
ws_q_drain(struct ws_job *j)
{
	const void	*buf;

	while (ws_q_read(NULL, j, &buf) > 0)
		;
}

static void *
ws_import_worker(void *arg)
{
	struct ws_job	*j = arg;
	struct ws_stage	 sg;

	j->begun_ns = ws_now_ns();
	ws_stage_init(&sg);
	j->rc = ws_stage_make(&sg, guestd.workspace);
	if (j->rc == 0)
		j->rc = ws_extract(ws_open_queue, j, sg.stagefd, &j->lim,
		    &j->cnt, j->why, sizeof j->why);
	/* Swap only after the whole stream, END included, arrived. */
	if (j->rc == 0)
		ws_q_drain(j);
	/* On error this makes the loop drop the rest. */
	ws_q_close(j);
	if (j->rc == 0 && ws_job_cancelled(j))
		j->rc = ERR_CANCELLED;
	if (j->rc == 0 && j->tag[0] != '\0')
		j->rc = ws_tag_write(sg.stagefd, j->tag);
	if (j->rc == 0) {
		j->staged_ns = ws_now_ns();
		ws_crash_point("staged");
		j->rc = ws_swap(&sg);
		/* Even a failed swap may have moved part of the tree. */
		j->swapped_ns = ws_now_ns();
	}
	if (j->rc != 0)
		ws_stage_discard(&sg);
	ws_stage_close(&sg);
	loop_post(ws_worker_posted, j);
	return NULL;
}

/*
 * Inbound tar bytes.  Contract with control.c: when the queue is full we
 * return ERR_BUSY; control.c stops reading the socket and offers the very
 * same frame again after control_stream_rx_resume().  Once the worker has
 * stopped reading everything is dropped until END, and the reply comes
 * after END so the client's upload ends cleanly.
 */
static int
ws_import_data(struct control_stream *s, const uint8_t *p, size_t n, int end)
{
	struct ws_job	*j = (struct ws_job *)s;
	int		 r;

	j->busy = 0;
	if (!j->discard && n > 0) {
		r = ws_q_put(j, p, n);
		if (r == ERR_BUSY) {
			j->busy = 1;
			return ERR_BUSY;
		}
		/* The worker failed early and will say why. */
		if (r != 0)
			j->discard = 1;
	}
	if (end) {
		j->got_end = 1;
		/* The end of the stream for the worker. */
		pthread_mutex_lock(&j->mtx);
		j->qeof = 1;
		pthread_cond_signal(&j->qcond);
		pthread_mutex_unlock(&j->mtx);
		ws_maybe_finish(j);
	}
	return 0;
}

static const struct control_stream_ops ws_import_ops = {
	NULL, ws_import_data, ws_job_abort
};

int
workspace_op_import(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen)
{
	struct ws_job	*j;
	int		 r;

	const char	*tag = NULL;

	if (args != NULL && !json_is_object(args))
		return ERR_BAD_REQUEST;
	if (args != NULL && json_object_get(args, "tag") != NULL &&
	    ((tag = json_string_value(json_object_get(args, "tag"))) == NULL ||
	    !ws_tag_ok(tag))) {
		snprintf(detail, detaillen, "args.tag: 1 to %d of "
		    "[A-Za-z0-9._:-]", WS_TAG_MAX - 1);
		return ERR_BAD_REQUEST;
	}
	if (ws_import_running) {
		snprintf(detail, detaillen, "another import is running");
		return ERR_BUSY;
	}
	j = ws_job_new(c, id, 1);
	if (tag != NULL)
		snprintf(j->tag, sizeof j->tag, "%s", tag);
	j->lim.max_bytes = guestd.home_max_bytes;
	j->lim.max_entries = guestd.import_max_entries;
	j->refs++;	/* the worker's, released by ws_worker_posted() */
	if ((r = ws_thread_start(ws_import_worker, j)) != 0) {
		j->refs--;
		ws_unref(j);
		return r;
	}
	j->live = 1;
	ws_import_running = 1;
	control_stream_attach(c, &j->st, id, &ws_import_ops);
	return 0;
}

/* ---- workspace.imported -------------------------------------------------- */

int
workspace_op_imported(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen)
{
	char	 tag[WS_TAG_MAX];
	int	 r;

	if (args != NULL && !json_is_object(args))
		return ERR_BAD_REQUEST;
	/* Mid-swap the answer could be either tree's. */
	if (ws_import_running) {
		snprintf(detail, detaillen, "an import is running");
		return ERR_BUSY;
	}
	if ((r = ws_tag_read(guestd.workspace, tag, sizeof tag)) != 0)
		return r;
	return control_reply(c, id, json_pack("{s:s}", "tag", tag));
}

/* ---- workspace.fingerprint ----------------------------------------------- */

static void *
ws_fp_worker(void *arg)
{
	struct ws_job	*j = arg;
	char		 fp[WS_FP_MAX];
	long long	 start_ns = 0;
	int		 rootfd;

	j->same = 0;
	/* The clock went back since: the times prove nothing. */
	if (sscanf(j->since, WS_FP_VERSION ":%lld:", &start_ns) != 1 ||
	    start_ns <= 0 || ws_now_ns() < start_ns)
		goto out;
	/* Of a tree an import replaced since (ws_replaced_ns). */
	if (start_ns < j->replaced_ns)
		goto out;
	rootfd = open(guestd.workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (rootfd == -1) {
		j->rc = ws_errno_code(errno);
		goto out;
	}
	if (workspace_fingerprint_fd(rootfd, start_ns, fp, sizeof fp) == 0 &&
	    fp[0] != '\0' && strcmp(fp, j->since) == 0)
		j->same = 1;
	close(rootfd);
out:
	loop_post(ws_worker_posted, j);
	return NULL;
}

static int
ws_fp_data(struct control_stream *s, const uint8_t *p, size_t n, int end)
{
	return 0;
}

static const struct control_stream_ops ws_fp_ops = {
	NULL, ws_fp_data, ws_job_abort
};

int
workspace_op_fingerprint(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen)
{
	struct ws_job	*j;
	const char	*since = NULL;
	int		 r;

	if (json_unpack(args, "{s:s}", "since", &since) != 0 ||
	    strlen(since) >= WS_FP_MAX) {
		snprintf(detail, detaillen, "args.since: a fingerprint");
		return ERR_BAD_REQUEST;
	}
	/* Closing the browsers writes their profiles: as for an export,
	 * the tree is looked at as an export would see it (G-25). */
	if (!ws_quiesced) {
		ws_quiesced = 1;
		r = browser_quiesce_then(c, id, args, detail, detaillen,
		    workspace_op_fingerprint);
		ws_quiesced = 0;
		return r;
	}
	j = ws_job_new(c, id, 0);
	j->fponly = 1;
	snprintf(j->since, sizeof j->since, "%s", since);
	j->replaced_ns = ws_replaced_ns;
	j->refs++;	/* the worker's, released by ws_worker_posted() */
	if ((r = ws_thread_start(ws_fp_worker, j)) != 0) {
		j->refs--;
		ws_unref(j);
		return r;
	}
	j->live = 1;
	control_stream_attach(c, &j->st, id, &ws_fp_ops);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Confined paths (doc/DESIGN.md G-27).  Every path a client names is
 * checked twice: lexically here (no absolute paths, no "..", no empty or
 * "." segments, no NUL, bounded lengths), and again by the kernel when it is opened, with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) below the workspace root
 * fd, so a symlink planted in the workspace cannot lead out at any
 * component.  Kernels without openat2 get an equivalent walk that opens one
 * component at a time with O_NOFOLLOW and follows relative symlinks itself,
 * counting depth so ".." never climbs above the root.
 */
#include "autoconf.h"

#include <sys/stat.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "err.h"
#include "path.h"

/* As the kernel: at most 40 symlinks in one resolution. */
#define PATH_MAX_HOPS	40
/* openat2 may return EAGAIN when a rename races a ".." lookup. */
#define PATH_EAGAIN_TRIES	8

/* -1 unknown, 0 the kernel has no openat2 (ENOSYS seen), 1 it works. */
static int	path_have_openat2 = -1;

int
path_bot_valid(const char *bot)
{
	size_t	 i;

	if (bot == NULL || bot[0] == '\0' || bot[0] == '.')
		return ERR_INVALID_BOT;
	for (i = 0; bot[i] != '\0'; i++) {
		if (i >= 64)
			return ERR_INVALID_BOT;
		if ((bot[i] >= 'A' && bot[i] <= 'Z') ||
		    (bot[i] >= 'a' && bot[i] <= 'z') ||
		    (bot[i] >= '0' && bot[i] <= '9') ||
		    bot[i] == '_' || bot[i] == '-' || bot[i] == '.')
			continue;
		return ERR_INVALID_BOT;
	}
	return 0;
}

/* One segment [s, s + n) of a client path (n may be 0). */
static int
path_check_segment(const char *s, size_t n, int last)
{
	if (n == 0)
		return last ? 0 : ERR_PATH_INVALID;	/* "a//b"; "a/" ok */
	if (n == 2 && s[0] == '.' && s[1] == '.')
		return ERR_PATH_OUTSIDE;
	if (n == 1 && s[0] == '.')
		return ERR_PATH_INVALID;
	if (n > NAME_MAX)
		return ERR_NAME_TOO_LONG;
	return 0;
}

int
path_check(const char *path, size_t len)
{
	size_t	 i, start;
	int	 r, worst = 0;

	if (len == 0 || (len == 1 && path[0] == '.'))
		return 0;
	if (memchr(path, '\0', len) != NULL)
		return ERR_PATH_INVALID;
	if (path[0] == '/')
		return ERR_PATH_OUTSIDE;
	/*
	 * A ".." anywhere wins over other faults so that an escape attempt
	 * is always reported as one, whatever else is wrong with the path.
	 */
	start = 0;
	for (i = 0; i <= len; i++) {
		if (i < len && path[i] != '/')
			continue;
		/* A trailing "/" leaves an empty last segment: allowed. */
		r = path_check_segment(path + start, i - start,
		    i == len && start > 0);
		if (r == ERR_PATH_OUTSIDE)
			return r;
		if (r != 0 && worst == 0)
			worst = r;
		start = i + 1;
	}
	if (worst != 0)
		return worst;
	if (len >= PATH_MAX)
		return ERR_NAME_TOO_LONG;
	return 0;
}

int
path_root_open(const char *workspace)
{
	return open(workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* Errors of a confined open: an escape reads as PATH_OUTSIDE. */
static int
path_errno(int errnum)
{
	if (errnum == EXDEV || errnum == ELOOP)
		return ERR_PATH_OUTSIDE;
	return err_from_errno(errnum);
}

static int
path_openat2(int rootfd, const char *path, int flags, int mode)
{
	struct open_how	 how;
	int		 fd, tries;

	memset(&how, 0, sizeof(how));
	how.flags = (unsigned)flags | O_CLOEXEC;
	/* openat2 refuses a mode without O_CREAT/O_TMPFILE. */
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		how.mode = (unsigned)mode & 07777;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	for (tries = 0; tries < PATH_EAGAIN_TRIES; tries++) {
		fd = (int)syscall(SYS_openat2, rootfd, path, &how,
		    sizeof(how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	return fd;
}

/*
 * The walk used without openat2.  It keeps the unresolved rest of the path
 * in a buffer, takes one component at a time and never lets the kernel
 * follow a symlink: links are read and spliced into the rest, absolute
 * targets are refused and ".." is refused at depth 0.  Returns an fd or
 * -1 with errno set (EXDEV for an escape).
 */
struct path_walk {
	char	 rest[2 * PATH_MAX];
	size_t	 pos;		/* start of the unresolved rest */
	int	 cur;		/* current directory fd (owned) */
	int	 depth;		/* directories below the root */
	int	 hops;
	int	 dirslash;	/* the path ended in "/" */
};

/* Replace the component just taken with the link target at fd/name. */
static int
path_walk_splice(struct path_walk *w, int dirfd, const char *name)
{
	char	 target[PATH_MAX];
	ssize_t	 n;
	size_t	 restlen;

	if (++w->hops > PATH_MAX_HOPS) {
		errno = ELOOP;
		return -1;
	}
	n = readlinkat(dirfd, name, target, sizeof(target) - 1);
	if (n < 0)
		return -1;
	if (n == 0) {
		errno = ENOENT;
		return -1;
	}
	if (target[0] == '/') {
		errno = EXDEV;
		return -1;
	}
	restlen = strlen(w->rest + w->pos);
	if ((size_t)n + 1 + restlen + 1 > sizeof(w->rest)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* target "/" rest, built at the start of the buffer. */
	memmove(w->rest + n + 1, w->rest + w->pos, restlen + 1);
	memcpy(w->rest, target, (size_t)n);
	w->rest[n] = restlen > 0 ? '/' : '\0';
	w->pos = 0;
	return 0;
}

/* Step into ".."; refused at the root. */
static int
path_walk_up(struct path_walk *w)
{
	int	 fd;

	if (w->depth == 0) {
		errno = EXDEV;
		return -1;
	}
	fd = openat(w->cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	close(w->cur);
	w->cur = fd;
	w->depth--;
	return 0;
}

/* Step into directory component name (following links by splicing). */
static int
path_walk_down(struct path_walk *w, const char *name)
{
	struct stat	 st;
	int		 fd;

	fd = openat(w->cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == -1) {
		close(fd);
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		close(fd);
		return path_walk_splice(w, w->cur, name);
	}
	if (!S_ISDIR(st.st_mode)) {
		close(fd);
		errno = ENOTDIR;
		return -1;
	}
	close(w->cur);
	w->cur = fd;
	w->depth++;
	return 0;
}

/*
 * The last component: open it without following; a symlink is spliced and
 * the walk goes on (1 returned), unless the caller asked not to follow or
 * to create exclusively.
 */
static int
path_walk_final(struct path_walk *w, const char *name, int flags, int mode,
    int *fdp)
{
	struct stat	 st;
	int		 fd;

	if ((flags & O_NOFOLLOW) == 0 &&
	    (flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL) &&
	    fstatat(w->cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode)) {
		if (path_walk_splice(w, w->cur, name) == -1)
			return -1;
		return 1;
	}
	if (w->dirslash && (flags & O_CREAT) == 0)
		flags |= O_DIRECTORY;
	/* Raced into a symlink since the fstatat: ELOOP, read as escape. */
	fd = openat(w->cur, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -1;
	*fdp = fd;
	return 0;
}

static int
path_walk(int rootfd, const char *path, int flags, int mode)
{
	struct path_walk	*w;
	char			 name[NAME_MAX + 1];
	const char		*p, *slash;
	size_t			 n, len;
	int			 fd = -1, r, saved;

	len = strlen(path);
	if (len >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return -1;
	memcpy(w->rest, path, len + 1);
	w->dirslash = len > 0 && path[len - 1] == '/';
	if ((w->cur = openat(rootfd, ".", O_PATH | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		goto fail;
	for (;;) {
		p = w->rest + w->pos;
		while (*p == '/')
			p++;
		if (*p == '\0') {
			/* Resolved to a directory (the root or via "."). */
			fd = openat(w->cur, ".", flags | O_CLOEXEC, mode);
			break;
		}
		slash = strchr(p, '/');
		n = slash != NULL ? (size_t)(slash - p) : strlen(p);
		if (n > NAME_MAX) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		w->pos = (size_t)(p - w->rest) + n;
		/* Is anything but slashes left after this component? */
		while (w->rest[w->pos] == '/')
			w->pos++;
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			if (path_walk_up(w) == -1)
				goto fail;
			continue;
		}
		if (w->rest[w->pos] != '\0') {
			if (path_walk_down(w, name) == -1)
				goto fail;
			continue;
		}
		r = path_walk_final(w, name, flags, mode, &fd);
		if (r == -1)
			goto fail;
		if (r == 0)
			break;
	}
	saved = errno;
	close(w->cur);
	free(w);
	errno = saved;
	return fd;
fail:
	saved = errno;
	if (w->cur >= 0)
		close(w->cur);
	free(w);
	errno = saved;
	return -1;
}

int
path_open(int rootfd, const char *path, int flags, int mode)
{
	int	 fd = -1, r;

	if ((r = path_check(path, strlen(path))) != 0)
		return r;
	/* The root itself: openat2 wants a non-empty name. */
	if (path[0] == '\0')
		path = ".";
	if (path_have_openat2 != 0) {
		fd = path_openat2(rootfd, path, flags, mode);
		if (fd >= 0) {
			path_have_openat2 = 1;
			return fd;
		}
		if (errno != ENOSYS)
			return path_errno(errno);
		path_have_openat2 = 0;
	}
	fd = path_walk(rootfd, path, flags, mode);
	if (fd < 0)
		return path_errno(errno);
	return fd;
}

int
path_open_parent(int rootfd, const char *path, const char **name)
{
	char		 parent[PATH_MAX];
	const char	*slash;
	size_t		 len, n;
	int		 r;

	*name = NULL;
	len = strlen(path);
	if ((r = path_check(path, len)) != 0)
		return r;
	/* Ignore one trailing "/": the parent of "a/b/" is "a". */
	n = len;
	if (n > 0 && path[n - 1] == '/')
		n--;
	if (n == 0 || (n == 1 && path[0] == '.'))
		return ERR_PATH_INVALID;
	slash = memrchr(path, '/', n);
	if (slash == NULL) {
		*name = path;
		return path_open(rootfd, "", O_PATH | O_DIRECTORY, 0);
	}
	n = (size_t)(slash - path);
	memcpy(parent, path, n);
	parent[n] = '\0';
	if ((r = path_open(rootfd, parent, O_PATH | O_DIRECTORY, 0)) < 0)
		return r;
	*name = slash + 1;
	return r;
}

/* mkdirat beneath dirfd; an existing directory is fine. */
static int
path_mkdir_quiet(int dirfd, const char *name)
{
	struct stat	 st;

	if (mkdirat(dirfd, name, 0755) == 0)
		return 0;
	if (errno != EEXIST)
		return path_errno(errno);
	if (fstatat(dirfd, name, &st, 0) == -1)
		return path_errno(errno);
	return S_ISDIR(st.st_mode) ? 0 : ERR_NOT_DIR;
}

int
path_ensure_bot(int rootfd, const char *bot)
{
	int	 botsfd = -1, r;

	if ((r = path_bot_valid(bot)) != 0)
		return r;
	if ((r = path_mkdir_quiet(rootfd, "bots")) != 0 ||
	    (r = path_mkdir_quiet(rootfd, "shared")) != 0)
		goto out;
	/* bots/ might be a symlink planted by a bot: open it confined. */
	if ((botsfd = path_open(rootfd, "bots", O_PATH | O_DIRECTORY, 0)) < 0) {
		r = botsfd;
		botsfd = -1;
		goto out;
	}
	r = path_mkdir_quiet(botsfd, bot);
out:
	if (botsfd >= 0)
		close(botsfd);
	return r;
}

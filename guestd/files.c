/* SPDX-License-Identifier: MIT */
/*
 * File operations on the workspace (doc/DESIGN.md G-27).  Every op opens the
 * workspace root afresh (an import may have swapped the directory), checks
 * the client's path with path_check() and reaches it only through
 * path_open()/path_open_parent(), so nothing outside the root is ever
 * opened, listed, written or removed.  Reads stream the file as binary
 * frames under the control channel's backpressure; writes receive the body
 * into a temp file beside the target and rename it into place once it is
 * complete and on disk, so readers see the old file or the new one, never
 * a torn one.  Error details name the path, never file contents.
 */
#include "autoconf.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "json.h"
#include "proto.h"
#include "guestd.h"
#include "control.h"
#include "files.h"
#include "path.h"

#define FILES_LIST_MAX		10000
/* JSON bytes of a listing: stay well under one text message. */
#define FILES_LIST_BUDGET	(768 * 1024)
#define FILES_RM_DEPTH		512
#define FILES_TMP_TAG		".rakazo-tmp-"
#define FILES_LINK_HOPS		40

/* A request's common part: its normalised path and the root it is below. */
struct files_req {
	char	 path[PATH_MAX];	/* no trailing "/"; "" is the root */
	int	 rootfd;
};

struct files_read {
	struct control_stream	 s;
	int			 fd;
	uint64_t		 off;
	uint64_t		 left;
	uint64_t		 size;
	uint64_t		 start;
	uint64_t		 sent;
	uint8_t			 buf[PROTO_CHUNK];
};

struct files_write {
	struct control_stream	 s;
	int			 parentfd;
	int			 fd;
	mode_t			 mode;
	uint64_t		 size;
	int64_t			 want;		/* announced size; -1 none */
	char			 name[NAME_MAX + 1];
	char			 tmp[NAME_MAX + 1];	/* "" once renamed */
	char			 path[PATH_MAX];
};

static void	files_detail(char *, size_t, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

static void
files_detail(char *detail, size_t len, const char *fmt, ...)
{
	va_list	 ap;

	if (detail == NULL || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(detail, len, fmt, ap);
	va_end(ap);
}

/* "Cannot read "a/b"." with the path cut short. */
static int
files_fail(int r, char *detail, size_t len, const char *verb,
    const char *path)
{
	files_detail(detail, len, "Cannot %s \"%.200s\".", verb,
	    path[0] == '\0' ? "." : path);
	return r;
}

static void
files_req_end(struct files_req *q)
{
	if (q->rootfd >= 0)
		close(q->rootfd);
	q->rootfd = -1;
}

/*
 * Argument checks shared by every op: only known keys, a string path that
 * passes path_check() (its JSON length is used, so an embedded NUL is
 * caught), the root opened, and bots/<bot>/ made when a bot is named.
 */
static int
files_req_begin(struct files_req *q, json_t *args, const char *const *keys,
    char *detail, size_t dlen)
{
	char		 err[JSONX_ERRLEN];
	json_t		*jp;
	const char	*s, *bot;
	size_t		 len;
	int		 r;

	q->rootfd = -1;
	q->path[0] = '\0';
	if (!json_is_object(args)) {
		files_detail(detail, dlen, "The arguments must be an object.");
		return ERR_BAD_REQUEST;
	}
	if ((r = jsonx_only_keys(args, keys, err)) != 0) {
		files_detail(detail, dlen, "%s", err);
		return r;
	}
	jp = json_object_get(args, "path");
	if (jp == NULL || !json_is_string(jp)) {
		files_detail(detail, dlen, "The argument path must be a "
		    "string.");
		return ERR_BAD_REQUEST;
	}
	s = json_string_value(jp);
	len = json_string_length(jp);
	if ((r = path_check(s, len)) != 0) {
		files_detail(detail, dlen, "The path is refused.");
		return r;
	}
	if (len == 1 && s[0] == '.')
		len = 0;
	if (len > 0 && s[len - 1] == '/')
		len--;
	memcpy(q->path, s, len);
	q->path[len] = '\0';
	if ((q->rootfd = path_root_open(guestd.workspace)) < 0) {
		files_detail(detail, dlen, "The workspace cannot be opened.");
		return err_from_errno(errno);
	}
	r = jsonx_str(args, "bot", 64, &bot, err);
	if (r == 0)
		r = path_ensure_bot(q->rootfd, bot);
	else if (r == ERR_NOT_FOUND)
		r = 0;
	else
		files_detail(detail, dlen, "%s", err);
	if (r != 0)
		files_req_end(q);
	return r;
}

/* Optional integer/boolean arguments, with their defaults. */
static int
files_arg_int(json_t *args, const char *key, int64_t min, int64_t max,
    int64_t *out, char *detail, size_t dlen)
{
	char	 err[JSONX_ERRLEN];
	int	 r;

	r = jsonx_int(args, key, min, max, out, err);
	if (r == ERR_NOT_FOUND)
		return 0;
	if (r != 0)
		files_detail(detail, dlen, "%s", err);
	return r;
}

static int
files_arg_bool(json_t *args, const char *key, int *out, char *detail,
    size_t dlen)
{
	char	 err[JSONX_ERRLEN];
	int	 r;

	r = jsonx_bool(args, key, out, err);
	if (r == ERR_NOT_FOUND)
		return 0;
	if (r != 0)
		files_detail(detail, dlen, "%s", err);
	return r;
}

static const char *
files_type(mode_t m)
{
	if (S_ISREG(m))
		return "file";
	if (S_ISDIR(m))
		return "dir";
	if (S_ISLNK(m))
		return "symlink";
	return "other";
}

static json_t *
files_stat_json(const struct stat *st)
{
	return json_pack("{s:s, s:I, s:i, s:I}",
	    "type", files_type(st->st_mode),
	    "size", (json_int_t)st->st_size,
	    "mode", (int)(st->st_mode & 07777),
	    "mtime", (json_int_t)st->st_mtim.tv_sec);
}

/* ---- file.list ------------------------------------------------------- */

static int
files_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
files_names_free(char **names, size_t from, size_t n)
{
	size_t	 i;

	for (i = from; i < n; i++)
		free(names[i]);
}

/*
 * The FILES_LIST_MAX smallest names of d, sorted.  Memory stays bounded
 * however large the directory: whenever the array is full it is sorted
 * and cut back to the first FILES_LIST_MAX.
 */
static int
files_list_names(DIR *d, char ***namesp, size_t *np, int *truncated)
{
	struct dirent	 *de;
	char		**names;
	size_t		  n = 0, cap = 2 * FILES_LIST_MAX;

	*namesp = NULL;
	*np = 0;
	if ((names = calloc(cap, sizeof(*names))) == NULL)
		return ERR_NOMEM;
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			qsort(names, n, sizeof(*names), files_name_cmp);
			files_names_free(names, FILES_LIST_MAX, n);
			n = FILES_LIST_MAX;
			*truncated = 1;
		}
		if ((names[n] = strdup(de->d_name)) == NULL) {
			files_names_free(names, 0, n);
			free(names);
			return ERR_NOMEM;
		}
		n++;
		errno = 0;
	}
	if (errno != 0) {
		files_names_free(names, 0, n);
		free(names);
		return err_from_errno(errno);
	}
	qsort(names, n, sizeof(*names), files_name_cmp);
	if (n > FILES_LIST_MAX) {
		files_names_free(names, FILES_LIST_MAX, n);
		n = FILES_LIST_MAX;
		*truncated = 1;
	}
	*namesp = names;
	*np = n;
	return 0;
}

/*
 * A name that is not UTF-8 cannot be a JSON string as it is.  It is listed
 * all the same, never left out: "name" is the name with each byte that
 * starts no valid UTF-8 sequence written as \xHH, "name_escaped" is true,
 * and "name_hex" holds the raw bytes in hex.
 */
static int
files_name_set(json_t *e, const char *name)
{
	static const char	 hexd[] = "0123456789abcdef";
	const uint8_t		*p = (const uint8_t *)name;
	json_t			*j;
	char			*hex;
	size_t			 len, i;
	int			 escaped, r = ERR_NOMEM;

	len = strlen(name);
	if ((j = jsonx_name_string(name, len, &escaped)) == NULL)
		return ERR_NOMEM;
	if (json_object_set_new(e, "name", j) != 0)
		return ERR_NOMEM;
	if (!escaped)
		return 0;
	if ((hex = malloc(2 * len + 1)) == NULL)
		return ERR_NOMEM;
	for (i = 0; i < len; i++) {
		hex[2 * i] = hexd[p[i] >> 4];
		hex[2 * i + 1] = hexd[p[i] & 15];
	}
	hex[2 * len] = '\0';
	if (json_object_set_new(e, "name_escaped", json_true()) == 0 &&
	    json_object_set_new(e, "name_hex", json_string(hex)) == 0)
		r = 0;
	free(hex);
	return r;
}

/* Entries of the listing, every name in it (files_name_set()). */
static int
files_list_entries(int dfd, char **names, size_t n, json_t *entries,
    int *truncated)
{
	struct stat	 st;
	json_t		*e;
	size_t		 i, budget = 0;

	for (i = 0; i < n; i++) {
		/* Worst case: 6 JSON bytes per name byte, or 5 escaped plus
		 * 2 of hex for a name that is not UTF-8. */
		budget += 7 * strlen(names[i]) + 128;
		if (budget > FILES_LIST_BUDGET) {
			*truncated = 1;
			break;
		}
		if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == -1)
			continue;	/* removed meanwhile */
		if ((e = files_stat_json(&st)) == NULL)
			return ERR_NOMEM;
		if (files_name_set(e, names[i]) != 0 ||
		    json_array_append_new(entries, e) == -1) {
			json_decref(e);
			return ERR_NOMEM;
		}
	}
	return 0;
}

int
files_op_list(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t dlen)
{
	static const char *const keys[] = { "path", "bot", "fence", NULL };
	struct files_req	 q;
	DIR			*d = NULL;
	char			**names = NULL;
	size_t			 n = 0;
	json_t			*entries = NULL;
	int			 fd, truncated = 0, r;

	if ((r = files_req_begin(&q, args, keys, detail, dlen)) != 0)
		return r;
	if ((fd = path_open(q.rootfd, q.path, O_RDONLY | O_DIRECTORY, 0)) <
	    0) {
		r = files_fail(fd, detail, dlen, "list", q.path);
		goto out;
	}
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		r = err_from_errno(errno);
		goto out;
	}
	if ((r = files_list_names(d, &names, &n, &truncated)) != 0) {
		files_fail(r, detail, dlen, "list", q.path);
		goto out;
	}
	r = ERR_NOMEM;
	if ((entries = json_array()) == NULL)
		goto out;
	if ((r = files_list_entries(dirfd(d), names, n, entries,
	    &truncated)) != 0)
		goto out;
	r = control_reply(c, id, json_pack("{s:s, s:o, s:b}", "path", q.path,
	    "entries", entries, "truncated", truncated));
	entries = NULL;		/* stolen by json_pack's "o" */
out:
	json_decref(entries);
	files_names_free(names, 0, n);
	free(names);
	if (d != NULL)
		closedir(d);
	files_req_end(&q);
	return r;
}

/* ---- file.stat ------------------------------------------------------- */

int
files_op_stat(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t dlen)
{
	static const char *const keys[] = { "path", "bot", "fence", NULL };
	struct files_req	 q;
	struct stat		 st;
	const char		*name;
	json_t			*res;
	int			 pfd = -1, r;

	if ((r = files_req_begin(&q, args, keys, detail, dlen)) != 0)
		return r;
	if (q.path[0] == '\0') {
		if (fstat(q.rootfd, &st) == -1) {
			r = err_from_errno(errno);
			goto out;
		}
	} else {
		if ((pfd = path_open_parent(q.rootfd, q.path, &name)) < 0) {
			r = files_fail(pfd, detail, dlen, "stat", q.path);
			pfd = -1;
			goto out;
		}
		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
			r = files_fail(err_from_errno(errno), detail, dlen,
			    "stat", q.path);
			goto out;
		}
	}
	if ((res = files_stat_json(&st)) == NULL) {
		r = ERR_NOMEM;
		goto out;
	}
	r = control_reply(c, id, res);
out:
	if (pfd >= 0)
		close(pfd);
	files_req_end(&q);
	return r;
}

/* ---- file.read ------------------------------------------------------- */

static void
files_read_free(struct files_read *rd)
{
	if (rd->fd >= 0)
		close(rd->fd);
	free(rd);
}

/* Reply (result or error), leave the connection's stream list, free. */
static void
files_read_finish(struct files_read *rd, int code)
{
	struct control_conn	*c = rd->s.conn;
	uint32_t		 id = rd->s.id;

	control_stream_detach(&rd->s);
	if (code != 0)
		control_reply_error(c, id, code, "Reading the file failed.");
	else
		control_reply(c, id, json_pack("{s:I, s:I, s:I}",
		    "size", (json_int_t)rd->size,
		    "offset", (json_int_t)rd->start,
		    "length", (json_int_t)rd->sent));
	files_read_free(rd);
}

/* Send chunks until the range is done or the output queue is full. */
static void
files_read_pump(struct files_read *rd)
{
	size_t	 want;
	ssize_t	 n;
	int	 end, r;

	for (;;) {
		if (control_out_full(rd->s.conn)) {
			control_stream_pause(&rd->s);
			return;
		}
		want = rd->left < PROTO_CHUNK ? (size_t)rd->left : PROTO_CHUNK;
		n = 0;
		if (want > 0 &&
		    (n = pread(rd->fd, rd->buf, want, (off_t)rd->off)) < 0) {
			if (errno == EINTR)
				continue;
			r = err_from_errno(errno);
			/* Close the data stream so the client stops waiting. */
			control_send_data(rd->s.conn, rd->s.id, PROTO_CH_DATA,
			    NULL, 0, 1);
			files_read_finish(rd, r);
			return;
		}
		/* A file that shrank meanwhile ends early (n == 0). */
		end = n == 0 || (uint64_t)n == rd->left;
		r = control_send_data(rd->s.conn, rd->s.id, PROTO_CH_DATA,
		    rd->buf, (size_t)n, end);
		if (r != 0) {
			files_read_finish(rd, r);
			return;
		}
		rd->off += (uint64_t)n;
		rd->left -= (uint64_t)n;
		rd->sent += (uint64_t)n;
		if (end) {
			files_read_finish(rd, 0);
			return;
		}
	}
}

static void
files_read_resume(struct control_stream *s)
{
	files_read_pump((struct files_read *)s);
}

static int
files_read_data(struct control_stream *s, const uint8_t *p, size_t n,
    int end)
{
	/* A read takes no body; ignore stray frames. */
	return 0;
}

static void
files_read_abort(struct control_stream *s)
{
	files_read_free((struct files_read *)s);
}

static const struct control_stream_ops files_read_ops = {
	.resume = files_read_resume,
	.data = files_read_data,
	.abort = files_read_abort,
};

int
files_op_read(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t dlen)
{
	static const char *const keys[] = { "path", "offset", "length",
	    "bot", "fence", NULL };
	struct files_req	 q;
	struct files_read	*rd = NULL;
	struct stat		 st;
	int64_t			 offset = 0, length = -1;
	int			 fd = -1, r;

	if ((r = files_req_begin(&q, args, keys, detail, dlen)) != 0)
		return r;
	if ((r = files_arg_int(args, "offset", 0, INT64_MAX, &offset,
	    detail, dlen)) != 0 ||
	    (r = files_arg_int(args, "length", 0, INT64_MAX, &length,
	    detail, dlen)) != 0)
		goto out;
	/* O_NONBLOCK: opening a FIFO must not hang the loop. */
	if ((fd = path_open(q.rootfd, q.path, O_RDONLY | O_NONBLOCK |
	    O_NOCTTY, 0)) < 0) {
		r = files_fail(fd, detail, dlen, "read", q.path);
		fd = -1;
		goto out;
	}
	if (fstat(fd, &st) == -1) {
		r = err_from_errno(errno);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = files_fail(ERR_NOT_REGULAR, detail, dlen, "read", q.path);
		goto out;
	}
	if ((uint64_t)offset > (uint64_t)st.st_size) {
		files_detail(detail, dlen, "The offset is past the end of "
		    "the file (size %lld).", (long long)st.st_size);
		r = ERR_RANGE;
		goto out;
	}
	if (length < 0 || (uint64_t)length > (uint64_t)st.st_size -
	    (uint64_t)offset)
		length = (int64_t)((uint64_t)st.st_size - (uint64_t)offset);
	if ((rd = calloc(1, sizeof(*rd))) == NULL) {
		r = ERR_NOMEM;
		goto out;
	}
	rd->fd = fd;
	fd = -1;
	rd->size = (uint64_t)st.st_size;
	rd->start = rd->off = (uint64_t)offset;
	rd->left = (uint64_t)length;
	control_stream_attach(c, &rd->s, id, &files_read_ops);
	files_read_pump(rd);	/* replies, now or after resumes */
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	files_req_end(&q);
	return r;
}

/* ---- file.write ------------------------------------------------------ */

/*
 * Where a write to a symlink lands: the link's target, taken relative to
 * the link's directory and normalised lexically.  The result is a client
 * path again and goes through path_check()/path_open_parent(), so a
 * target that is absolute or climbs above the root is refused.
 */
static int
files_link_path(char path[PATH_MAX], const char *target)
{
	char	 out[PATH_MAX], tmp[2 * PATH_MAX];
	char	*dir, *seg, *save = NULL;
	size_t	 o = 0, l;
	int	 n;

	if (target[0] == '/')
		return ERR_PATH_OUTSIDE;
	dir = strrchr(path, '/');
	if (dir != NULL)
		*dir = '\0';
	n = snprintf(tmp, sizeof(tmp), "%s/%s", dir != NULL ? path : "",
	    target);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return ERR_NAME_TOO_LONG;
	out[0] = '\0';
	for (seg = strtok_r(tmp, "/", &save); seg != NULL;
	    seg = strtok_r(NULL, "/", &save)) {
		if (strcmp(seg, ".") == 0)
			continue;
		if (strcmp(seg, "..") == 0) {
			if (o == 0)
				return ERR_PATH_OUTSIDE;
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			out[o] = '\0';
			continue;
		}
		l = strlen(seg);
		if (o + (o > 0) + l >= sizeof(out))
			return ERR_NAME_TOO_LONG;
		if (o > 0)
			out[o++] = '/';
		memcpy(out + o, seg, l + 1);
		o += l;
	}
	if (o == 0)
		return ERR_IS_DIR;	/* the link names the root */
	memcpy(path, out, o + 1);
	return path_check(path, o);
}

/*
 * Open the directory the write lands in and name the entry, following a
 * final symlink (confined) so writing through a link updates its target.
 */
static int
files_write_target(int rootfd, char path[PATH_MAX], int *pfdp,
    const char **namep)
{
	char		 target[PATH_MAX];
	struct stat	 st;
	ssize_t		 n;
	int		 hops, pfd, r;

	*pfdp = -1;
	for (hops = 0; hops <= FILES_LINK_HOPS; hops++) {
		if ((pfd = path_open_parent(rootfd, path, namep)) < 0)
			return pfd;
		if (fstatat(pfd, *namep, &st, AT_SYMLINK_NOFOLLOW) == -1) {
			if (errno == ENOENT) {
				*pfdp = pfd;
				return 0;
			}
			r = err_from_errno(errno);
			close(pfd);
			return r;
		}
		if (S_ISDIR(st.st_mode)) {
			close(pfd);
			return ERR_IS_DIR;
		}
		if (!S_ISLNK(st.st_mode)) {
			*pfdp = pfd;
			return 0;
		}
		n = readlinkat(pfd, *namep, target, sizeof(target) - 1);
		r = err_from_errno(errno);
		close(pfd);
		if (n <= 0)
			return n == 0 ? ERR_NOT_FOUND : r;
		target[n] = '\0';
		if ((r = files_link_path(path, target)) != 0)
			return r;
	}
	return ERR_PATH_OUTSIDE;	/* ELOOP, as path_open reads it */
}

int
files_tmp_name(const char *name)
{
	const char	*t;
	size_t		 i;

	if (name[0] != '.' || (t = strstr(name + 1, FILES_TMP_TAG)) == NULL)
		return 0;
	/* The last tag: a name may hold the tag itself. */
	while (strstr(t + 1, FILES_TMP_TAG) != NULL)
		t = strstr(t + 1, FILES_TMP_TAG);
	t += strlen(FILES_TMP_TAG);
	for (i = 0; i < 16; i++) {
		if (!((t[i] >= '0' && t[i] <= '9') ||
		    (t[i] >= 'a' && t[i] <= 'f')))
			return 0;
	}
	return t[16] == '\0';
}

/* Remove the temp files below dirfd; never follows a symlink. */
static size_t
files_clean_dir(int dirfd, int depth)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	size_t		 n = 0;
	int		 fd;

	if (depth > FILES_RM_DEPTH)
		return 0;
	if ((fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		if (S_ISREG(st.st_mode) && files_tmp_name(de->d_name)) {
			if (unlinkat(fd, de->d_name, 0) == 0)
				n++;
		} else if (S_ISDIR(st.st_mode)) {
			int	cfd;

			cfd = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
			if (cfd != -1) {
				n += files_clean_dir(cfd, depth + 1);
				close(cfd);
			}
		}
	}
	closedir(d);
	return n;
}

size_t
files_clean_stale(const char *workspace)
{
	size_t	n;
	int	rootfd;

	if ((rootfd = path_root_open(workspace)) < 0)
		return 0;
	n = files_clean_dir(rootfd, 0);
	close(rootfd);
	return n;
}

/* ".<name>.rakazo-tmp-<16 hex>", the name cut to fit NAME_MAX. */
static int
files_tmp_open(int pfd, const char *name, char tmp[NAME_MAX + 1])
{
	uint8_t		 rnd[8];
	size_t		 keep;
	int		 tries, fd;

	keep = NAME_MAX - 1 - strlen(FILES_TMP_TAG) - 2 * sizeof(rnd);
	for (tries = 0; tries < 4; tries++) {
		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
			return ERR_INTERNAL;
		snprintf(tmp, NAME_MAX + 1, ".%.*s%s%02x%02x%02x%02x%02x%02x"
		    "%02x%02x", (int)keep, name, FILES_TMP_TAG, rnd[0],
		    rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
		fd = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return err_from_errno(errno);
	}
	return ERR_EXISTS;
}

static void
files_write_free(struct files_write *w)
{
	if (w->fd >= 0)
		close(w->fd);
	if (w->tmp[0] != '\0')
		unlinkat(w->parentfd, w->tmp, 0);
	if (w->parentfd >= 0)
		close(w->parentfd);
	free(w);
}

static int
files_write_all(int fd, const uint8_t *p, size_t n)
{
	ssize_t	 w;

	while (n > 0) {
		if ((w = write(fd, p, n)) < 0) {
			if (errno == EINTR)
				continue;
			return err_from_errno(errno);
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The body is complete: make it durable and put it in place. */
static int
files_write_commit(struct files_write *w)
{
	struct stat	 st;
	int		 dfd;

	if (fsync(w->fd) == -1 || fchmod(w->fd, w->mode) == -1)
		return err_from_errno(errno);
	close(w->fd);
	w->fd = -1;
	/* rename(2) would happily replace an empty directory. */
	if (fstatat(w->parentfd, w->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(st.st_mode))
		return ERR_IS_DIR;
	if (renameat(w->parentfd, w->tmp, w->parentfd, w->name) == -1)
		return err_from_errno(errno);
	w->tmp[0] = '\0';
	/* The rename itself is durable once the directory is synced. */
	if ((dfd = openat(w->parentfd, ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

static int
files_write_data(struct control_stream *s, const uint8_t *p, size_t n,
    int end)
{
	struct files_write	*w = (struct files_write *)s;
	struct control_conn	*c = s->conn;
	uint32_t		 id = s->id;
	char			 detail[256];
	int			 r;

	/*
	 * A body longer or shorter than announced is refused and the old
	 * file kept: a client whose own source broke off (an HTTP upload
	 * whose sender left) ends the body early instead of tearing down a
	 * connection other requests share.
	 */
	if (w->want >= 0 && n > (uint64_t)w->want - w->size) {
		r = ERR_SIZE_MISMATCH;
		goto fail;
	}
	if ((r = files_write_all(w->fd, p, n)) != 0)
		goto fail;
	w->size += n;
	if (!end)
		return 0;
	if (w->want >= 0 && w->size != (uint64_t)w->want) {
		r = ERR_SIZE_MISMATCH;
		goto fail;
	}
	if ((r = files_write_commit(w)) != 0)
		goto fail;
	control_stream_detach(s);
	control_reply(c, id, json_pack("{s:s, s:I}", "path", w->path,
	    "size", (json_int_t)w->size));
	files_write_free(w);
	return 0;
fail:
	if (r == ERR_SIZE_MISMATCH)
		files_detail(detail, sizeof(detail), "The body of \"%.200s\" "
		    "is not the %lld bytes announced; the file is unchanged.",
		    w->path, (long long)w->want);
	else
		files_fail(r, detail, sizeof(detail), "write", w->path);
	control_stream_detach(s);
	control_reply_error(c, id, r, detail);
	files_write_free(w);
	return r;
}

static void
files_write_resume(struct control_stream *s)
{
	/* Replies are small; nothing is waiting on output. */
}

static void
files_write_abort(struct control_stream *s)
{
	files_write_free((struct files_write *)s);
}

static const struct control_stream_ops files_write_ops = {
	.resume = files_write_resume,
	.data = files_write_data,
	.abort = files_write_abort,
};

static int	files_mkdirs(int rootfd, const char *path, mode_t mode,
		    int parents);

int
files_op_write(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t dlen)
{
	static const char *const keys[] = { "path", "mode", "parents",
	    "size", "bot", "fence", NULL };
	struct files_req	 q;
	struct files_write	*w = NULL;
	const char		*name;
	char			*slash;
	int64_t			 mode = 0644, want = -1;
	int			 parents = 0, pfd = -1, r;

	if ((r = files_req_begin(&q, args, keys, detail, dlen)) != 0)
		return r;
	if ((r = files_arg_int(args, "mode", 0, 07777, &mode, detail,
	    dlen)) != 0 ||
	    (r = files_arg_bool(args, "parents", &parents, detail,
	    dlen)) != 0 ||
	    (r = files_arg_int(args, "size", 0, INT64_MAX, &want, detail,
	    dlen)) != 0)
		goto out;
	if (q.path[0] == '\0') {
		r = files_fail(ERR_IS_DIR, detail, dlen, "write", q.path);
		goto out;
	}
	if (parents && (slash = strrchr(q.path, '/')) != NULL) {
		*slash = '\0';
		r = files_mkdirs(q.rootfd, q.path, 0755, 1);
		*slash = '/';
		if (r != 0) {
			files_fail(r, detail, dlen, "create the parents of",
			    q.path);
			goto out;
		}
	}
	r = ERR_NOMEM;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		goto out;
	w->fd = w->parentfd = -1;
	w->mode = (mode_t)mode & 0777;
	w->want = want;
	memcpy(w->path, q.path, sizeof(w->path));
	if ((r = files_write_target(q.rootfd, w->path, &pfd, &name)) != 0) {
		files_fail(r, detail, dlen, "write", q.path);
		goto out;
	}
	w->parentfd = pfd;
	snprintf(w->name, sizeof(w->name), "%s", name);
	if ((r = files_tmp_open(pfd, w->name, w->tmp)) < 0) {
		w->tmp[0] = '\0';
		files_fail(r, detail, dlen, "write", q.path);
		goto out;
	}
	w->fd = r;
	/* Reply with the path the client named, not the link's target. */
	memcpy(w->path, q.path, sizeof(w->path));
	control_stream_attach(c, &w->s, id, &files_write_ops);
	w = NULL;
	r = 0;
out:
	if (w != NULL)
		files_write_free(w);
	files_req_end(&q);
	return r;
}

/* ---- file.mkdir ------------------------------------------------------ */

/* One directory; with parents an existing directory is fine. */
static int
files_mkdir_one(int rootfd, const char *path, mode_t mode, int parents)
{
	const char	*name;
	int		 pfd, fd, r = 0;

	if ((pfd = path_open_parent(rootfd, path, &name)) < 0)
		return pfd;
	if (mkdirat(pfd, name, mode) == -1) {
		r = err_from_errno(errno);
		if (r == ERR_EXISTS && parents) {
			/* Must be a directory (a link to one, confined). */
			fd = path_open(rootfd, path, O_PATH | O_DIRECTORY, 0);
			r = fd >= 0 ? 0 : fd == ERR_NOT_DIR ? ERR_EXISTS : fd;
			if (fd >= 0)
				close(fd);
		}
	} else if ((fd = openat(pfd, name, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		/* The mode as asked, not as the umask left it. */
		if (fchmod(fd, mode) == -1)
			r = err_from_errno(errno);
		close(fd);
	}
	close(pfd);
	return r;
}

static int
files_mkdirs(int rootfd, const char *path, mode_t mode, int parents)
{
	char	 prefix[PATH_MAX];
	size_t	 i, len;
	int	 r;

	len = strlen(path);
	if (len == 0)
		return parents ? 0 : ERR_EXISTS;
	if (!parents)
		return files_mkdir_one(rootfd, path, mode, 0);
	for (i = 1; i <= len; i++) {
		if (i < len && path[i] != '/')
			continue;
		memcpy(prefix, path, i);
		prefix[i] = '\0';
		/* Intermediate directories get the usual 0755, as mkdir -p. */
		if ((r = files_mkdir_one(rootfd, prefix,
		    i == len ? mode : 0755, 1)) != 0)
			return r;
	}
	return 0;
}

int
files_op_mkdir(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t dlen)
{
	static const char *const keys[] = { "path", "parents", "mode",
	    "bot", "fence", NULL };
	struct files_req	 q;
	int64_t			 mode = 0755;
	int			 parents = 0, r;

	if ((r = files_req_begin(&q, args, keys, detail, dlen)) != 0)
		return r;
	if ((r = files_arg_int(args, "mode", 0, 07777, &mode, detail,
	    dlen)) != 0 ||
	    (r = files_arg_bool(args, "parents", &parents, detail,
	    dlen)) != 0)
		goto out;
	if ((r = files_mkdirs(q.rootfd, q.path, (mode_t)mode & 0777,
	    parents)) != 0) {
		files_fail(r, detail, dlen, "create directory", q.path);
		goto out;
	}
	r = control_reply(c, id, json_pack("{s:s}", "path", q.path));
out:
	files_req_end(&q);
	return r;
}

/* ---- file.remove ----------------------------------------------------- */

/*
 * Empty directory name below dirfd.  Entries are unlinked where they are;
 * only real directories are entered (O_NOFOLLOW | O_DIRECTORY), so a
 * symlink is removed, never followed.
 */
static int
files_rm_tree(int dirfd, const char *name, int depth)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd, r = 0;

	if (depth > FILES_RM_DEPTH)
		return ERR_NAME_TOO_LONG;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : err_from_errno(errno);
	if ((d = fdopendir(fd)) == NULL) {
		r = err_from_errno(errno);
		close(fd);
		return r;
	}
	while (r == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(fd, de->d_name, 0) == 0 || errno == ENOENT)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			r = err_from_errno(errno);
			break;
		}
		if ((r = files_rm_tree(fd, de->d_name, depth + 1)) != 0)
			break;
		if (unlinkat(fd, de->d_name, AT_REMOVEDIR) == -1 &&
		    errno != ENOENT)
			r = err_from_errno(errno);
	}
	closedir(d);
	return r;
}

static int
files_remove(int rootfd, const char *path, int recursive)
{
	struct stat	 st;
	const char	*name;
	int		 pfd, tries, r = 0;

	if ((pfd = path_open_parent(rootfd, path, &name)) < 0)
		return pfd;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		r = err_from_errno(errno);
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(pfd, name, 0) == -1)
			r = err_from_errno(errno);
		goto out;
	}
	/* Entries created while we delete: a few more passes. */
	for (tries = 0; tries < 4; tries++) {
		if (unlinkat(pfd, name, AT_REMOVEDIR) == 0) {
			r = 0;
			goto out;
		}
		if (errno != ENOTEMPTY && errno != EEXIST) {
			r = err_from_errno(errno);
			goto out;
		}
		r = ERR_NOT_EMPTY;
		if (!recursive)
			goto out;
		if ((r = files_rm_tree(pfd, name, 0)) != 0)
			goto out;
		r = ERR_NOT_EMPTY;
	}
out:
	close(pfd);
	return r;
}

int
files_op_remove(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t dlen)
{
	static const char *const keys[] = { "path", "recursive", "bot",
	    "fence", NULL };
	struct files_req	 q;
	int			 recursive = 0, r;

	if ((r = files_req_begin(&q, args, keys, detail, dlen)) != 0)
		return r;
	if ((r = files_arg_bool(args, "recursive", &recursive, detail,
	    dlen)) != 0)
		goto out;
	if (q.path[0] == '\0') {
		files_detail(detail, dlen, "The workspace root cannot be "
		    "removed.");
		r = ERR_PATH_INVALID;
		goto out;
	}
	if ((r = files_remove(q.rootfd, q.path, recursive)) != 0) {
		files_fail(r, detail, dlen, "remove", q.path);
		goto out;
	}
	r = control_reply(c, id, json_pack("{s:s}", "path", q.path));
out:
	files_req_end(&q);
	return r;
}

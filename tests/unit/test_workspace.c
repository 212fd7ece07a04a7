/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of guestd/workspace.c: the entry checks and export skip list
 * as tables, and the blocking halves of export and import (tar built with
 * libarchive into a memfd, extracted into a temp staging dir).
 */
#include "autoconf.h"

#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <cmocka.h>

#include "err.h"
#include "guestd.h"
#include "workspace.h"

/* main.c owns the settings in guestd; the library only reads them. */
struct guestd_settings	guestd;

/* ---- tables -------------------------------------------------------------- */

struct check_case {
	const char	*name;
	unsigned	 type;
	int		 has_link;
	int		 want;
};

static void
test_entry_check(void **state)
{
	static char	long_name[NAME_MAX + 2], long_path[65536 + 8];
	char		why[256];
	size_t		i;
	int		r;
	const struct check_case	cases[] = {
		{ "a", AE_IFREG, 0, 0 },
		{ "a/b/c.txt", AE_IFREG, 0, 0 },
		{ "a/b", AE_IFDIR, 0, 0 },
		{ "a/b/", AE_IFDIR, 0, 0 },
		{ ".hidden", AE_IFREG, 0, 0 },
		{ "..a", AE_IFREG, 0, 0 },
		{ "a..", AE_IFREG, 0, 0 },
		{ "a/...", AE_IFDIR, 0, 0 },
		{ "", AE_IFREG, 0, ERR_TAR_ENTRY_REJECTED },
		{ "/abs", AE_IFREG, 0, ERR_TAR_ENTRY_REJECTED },
		{ "/", AE_IFDIR, 0, ERR_TAR_ENTRY_REJECTED },
		{ "../evil", AE_IFREG, 0, ERR_TAR_ENTRY_REJECTED },
		{ "..", AE_IFDIR, 0, ERR_TAR_ENTRY_REJECTED },
		{ "a/../../b", AE_IFREG, 0, ERR_TAR_ENTRY_REJECTED },
		{ "a/..", AE_IFDIR, 0, ERR_TAR_ENTRY_REJECTED },
		{ "./a", AE_IFREG, 0, ERR_TAR_ENTRY_REJECTED },
		{ ".", AE_IFDIR, 0, ERR_TAR_ENTRY_REJECTED },
		{ "./", AE_IFDIR, 0, ERR_TAR_ENTRY_REJECTED },
		{ "a/./b", AE_IFREG, 0, ERR_TAR_ENTRY_REJECTED },
		{ "a//b", AE_IFREG, 0, ERR_TAR_ENTRY_REJECTED },
		{ "a/", AE_IFREG, 0, ERR_TAR_ENTRY_REJECTED },
		{ "a//", AE_IFDIR, 0, ERR_TAR_ENTRY_REJECTED },
		{ "link", AE_IFLNK, 1, ERR_TAR_ENTRY_REJECTED },
		{ "link", AE_IFLNK, 0, ERR_TAR_ENTRY_REJECTED },
		{ "hard", AE_IFREG, 1, ERR_TAR_ENTRY_REJECTED },
		{ "dev", AE_IFCHR, 0, ERR_TAR_ENTRY_REJECTED },
		{ "dev", AE_IFBLK, 0, ERR_TAR_ENTRY_REJECTED },
		{ "fifo", AE_IFIFO, 0, ERR_TAR_ENTRY_REJECTED },
		{ "sock", AE_IFSOCK, 0, ERR_TAR_ENTRY_REJECTED },
		{ "weird", 0, 0, ERR_TAR_ENTRY_REJECTED },
	};

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		r = workspace_entry_check(cases[i].name, cases[i].type,
		    cases[i].has_link, why, sizeof why);
		if (r != cases[i].want)
			fail_msg("case %zu \"%s\": got %d want %d (%s)", i,
			    cases[i].name, r, cases[i].want, why);
		if (r != 0 && strstr(why, "entry \"") != why)
			fail_msg("case %zu: no sentence: \"%s\"", i, why);
	}
	assert_int_equal(workspace_entry_check(NULL, AE_IFREG, 0, why,
	    sizeof why), ERR_TAR_ENTRY_REJECTED);

	/* NAME_MAX is fine, one more is not. */
	memset(long_name, 'n', NAME_MAX);
	assert_int_equal(workspace_entry_check(long_name, AE_IFREG, 0, why,
	    sizeof why), 0);
	long_name[NAME_MAX] = 'n';
	assert_int_equal(workspace_entry_check(long_name, AE_IFREG, 0, why,
	    sizeof why), ERR_TAR_ENTRY_REJECTED);
	/*
	 * Paths past PATH_MAX are fine (walks go openat by openat) up to
	 * 65535 bytes: 256 names of NAME_MAX bytes and their slashes.
	 */
	for (i = 0; i < 65536; i++)
		long_path[i] = i % (NAME_MAX + 1) == NAME_MAX ? '/' : 'n';
	long_path[65535] = '\0';
	assert_int_equal(workspace_entry_check(long_path, AE_IFREG, 0, why,
	    sizeof why), 0);
	long_path[65535] = 'n';
	long_path[65536] = '\0';
	assert_int_equal(workspace_entry_check(long_path, AE_IFREG, 0, why,
	    sizeof why), ERR_TAR_ENTRY_REJECTED);
	/* 512 directories deep is fine, 513 is not. */
	for (i = 0; i < 2 * 512; i++)
		long_path[i] = i % 2 ? '/' : 'd';
	memcpy(long_path + 2 * 512, "f", 2);
	assert_int_equal(workspace_entry_check(long_path, AE_IFREG, 0, why,
	    sizeof why), 0);
	memcpy(long_path + 2 * 512, "d/f", 4);
	assert_int_equal(workspace_entry_check(long_path, AE_IFREG, 0, why,
	    sizeof why), ERR_TAR_ENTRY_REJECTED);
	assert_non_null(strstr(why, "512 directories deep"));
}

static void
test_entry_check_sanitises(void **state)
{
	char	why[64];

	(void)state;
	assert_int_equal(workspace_entry_check("../a\x1b[31mred\n", AE_IFREG,
	    0, why, sizeof why), ERR_TAR_ENTRY_REJECTED);
	assert_null(strchr(why, '\x1b'));
	assert_null(strchr(why, '\n'));
	assert_non_null(strstr(why, "../a?[31mred?"));
	/* A short buffer is filled and terminated, never overrun. */
	assert_int_equal(workspace_entry_check("../x", AE_IFREG, 0, why, 4),
	    ERR_TAR_ENTRY_REJECTED);
	assert_int_equal(strlen(why), 3);
}

struct skip_case {
	const char	*path;
	int		 is_dir;
	int		 want;
};

static void
test_export_skip(void **state)
{
	size_t	i;
	const struct skip_case	cases[] = {
		{ ".browser-profiles/a/Default/Cache", 1, 1 },
		{ ".browser-profiles/a/Cache", 1, 1 },
		{ ".browser-profiles/a/Default/Code Cache", 1, 1 },
		{ ".browser-profiles/a/Default/GPUCache", 1, 1 },
		{ ".browser-profiles/a/GrShaderCache", 1, 1 },
		{ ".browser-profiles/a/ShaderCache", 1, 1 },
		{ ".browser-profiles/a/Default/DawnCache", 1, 1 },
		{ ".browser-profiles/a/Default/DawnGraphiteCache", 1, 1 },
		{ ".browser-profiles/a/Default/DawnWebGPUCache", 1, 1 },
		{ ".browser-profiles/a/component_crx_cache", 1, 1 },
		{ ".browser-profiles/a/Crashpad", 1, 1 },
		{ ".browser-profiles/a/Default/Service Worker/CacheStorage",
		    1, 1 },
		{ ".browser-profiles/a/Default/Service Worker/ScriptCache",
		    1, 1 },
		{ ".browser-profiles/a/Default/Cache/data_0", 0, 1 },
		{ ".browser-profiles/a/SingletonLock", 0, 1 },
		{ ".browser-profiles/a/SingletonSocket", 0, 1 },
		{ ".browser-profiles/a/SingletonCookie", 0, 1 },
		{ ".browser-profiles/a/Default/lockfile", 0, 1 },
		{ ".browser-profiles/a/Default/x.tmp", 0, 1 },
		{ ".rakazo-import-0123", 1, 1 },
		{ ".rakazo-old-0123", 1, 1 },
		/* Kept: profile data, and the same names elsewhere. */
		{ ".browser-profiles/a/Default/Cookies", 0, 0 },
		{ ".browser-profiles/a/Default/Login Data", 0, 0 },
		{ ".browser-profiles/a/Default/Service Worker", 1, 0 },
		{ ".browser-profiles/a/Default/Service Worker/Database", 1, 0 },
		{ ".browser-profiles/a/Default/CacheStorage", 1, 0 },
		{ ".browser-profiles/a/Default/Cache", 0, 0 },
		{ ".browser-profiles/a/Default/SingletonLock", 1, 0 },
		{ ".browser-profiles/a/Default/.tmp", 0, 0 },
		{ ".browser-profiles/a/Default/x.tmp", 1, 0 },
		{ ".browser-profiles/a", 1, 0 },
		{ ".browser-profiles/Cache", 1, 0 },
		{ ".browser-profiles/SingletonLock", 0, 0 },
		{ ".browser-profiles", 1, 0 },
		{ "bots/a/Cache", 1, 0 },
		{ "bots/a/Cache/x", 0, 0 },
		{ "bots/a/SingletonLock", 0, 0 },
		{ "shared/build.tmp", 0, 0 },
		{ "Cache", 1, 0 },
		{ "browser-profiles/a/Cache", 1, 0 },
		{ "x/.browser-profiles/a/Cache", 1, 0 },
		{ "bots/.rakazo-old-1", 1, 0 },
		/* Every top-level .rakazo-* is guestd's, files too (the
		 * swap's journal). */
		{ ".rakazo-old-1", 0, 1 },
		{ ".rakazo-swap", 0, 1 },
		{ ".rakazo-anything", 1, 1 },
		{ ".rakazo", 0, 0 },
	};

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (workspace_export_skip(cases[i].path, cases[i].is_dir) !=
		    cases[i].want)
			fail_msg("case %zu \"%s\" dir=%d: want %d", i,
			    cases[i].path, cases[i].is_dir, cases[i].want);
	}
}

/* ---- tar helpers --------------------------------------------------------- */

struct tent {
	const char	*name;
	unsigned	 type;
	unsigned	 perm;
	const char	*data;		/* regular files */
	int64_t		 size;		/* -1: strlen(data) */
	const char	*link;		/* symlink target / hardlink */
	int		 hard;
};

static int
mktar(const struct tent *t, size_t n)
{
	struct archive		*a;
	struct archive_entry	*e;
	size_t			 i, len;
	int			 fd;

	fd = memfd_create("tar", MFD_CLOEXEC);
	assert_true(fd >= 0);
	a = archive_write_new();
	assert_int_equal(archive_write_set_format_pax_restricted(a),
	    ARCHIVE_OK);
	assert_int_equal(archive_write_open_fd(a, fd), ARCHIVE_OK);
	for (i = 0; i < n; i++) {
		e = archive_entry_new();
		archive_entry_set_pathname(e, t[i].name);
		archive_entry_set_filetype(e, t[i].type);
		archive_entry_set_perm(e, t[i].perm);
		archive_entry_set_mtime(e, 1700000000 + (time_t)i, 0);
		len = t[i].data != NULL ? strlen(t[i].data) : 0;
		archive_entry_set_size(e, t[i].size >= 0 ? t[i].size :
		    (int64_t)len);
		if (t[i].link != NULL && t[i].hard)
			archive_entry_set_hardlink(e, t[i].link);
		else if (t[i].link != NULL)
			archive_entry_set_symlink(e, t[i].link);
		if (t[i].type == AE_IFCHR)
			archive_entry_set_rdev(e, makedev(1, 3));
		assert_true(archive_write_header(a, e) >= ARCHIVE_WARN);
		if (len > 0)
			assert_int_equal(archive_write_data(a, t[i].data, len),
			    (ssize_t)len);
		archive_entry_free(e);
	}
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* A fixture: tmp/ with stage/ inside; the tests look for escapes in tmp. */
struct fix {
	char	tmp[PATH_MAX];
	int	tmpfd;
	int	stagefd;
};

static int
fix_setup(void **state)
{
	struct fix	*f;
	const char	*base = getenv("TMPDIR");

	f = calloc(1, sizeof *f);
	snprintf(f->tmp, sizeof f->tmp, "%s/test_workspace.XXXXXX",
	    base != NULL ? base : "/tmp");
	if (mkdtemp(f->tmp) == NULL)
		return -1;
	f->tmpfd = open(f->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f->tmpfd == -1 || mkdirat(f->tmpfd, "stage", 0700) == -1)
		return -1;
	f->stagefd = openat(f->tmpfd, "stage", O_RDONLY | O_DIRECTORY);
	*state = f;
	return f->stagefd == -1 ? -1 : 0;
}

static int
fix_teardown(void **state)
{
	struct fix	*f = *state;

	close(f->stagefd);
	workspace_tree_empty(f->tmpfd);
	close(f->tmpfd);
	rmdir(f->tmp);
	free(f);
	return 0;
}

static int
extract(struct fix *f, int tarfd, uint64_t max_bytes, uint64_t max_entries,
    struct workspace_counts *cnt, char *why, size_t whylen)
{
	struct workspace_limits	lim = { max_bytes, max_entries };
	int			r;

	r = workspace_extract_fd(tarfd, f->stagefd, &lim, cnt, why, whylen);
	close(tarfd);
	return r;
}

static void
read_file_at(int dirfd, const char *path, char *buf, size_t len)
{
	ssize_t	n;
	int	fd;

	fd = openat(dirfd, path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, buf, len - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(fd);
}

/* Names in dirfd, sorted and joined with ' '. */
static void
ls(int dirfd, char *out, size_t outlen)
{
	char	cmd[PATH_MAX + 64];
	FILE	*p;
	size_t	n;

	snprintf(cmd, sizeof cmd, "cd /proc/%d/fd/%d && find . -mindepth 1 "
	    "| sort | tr '\\n' ' '", (int)getpid(), dirfd);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, outlen - 1, p);
	out[n] = '\0';
	pclose(p);
}

/* ---- extraction ---------------------------------------------------------- */

static void
test_extract_ok(void **state)
{
	struct fix		*f = *state;
	struct workspace_counts	 cnt;
	struct stat		 st;
	char			 why[256], buf[64], names[512];
	const struct tent	 t[] = {
		{ "d/", AE_IFDIR, 0755, NULL, -1, NULL, 0 },
		{ "d/x.txt", AE_IFREG, 0600, "hello", -1, NULL, 0 },
		{ "d/sub/deep/y", AE_IFREG, 04755, "yy", -1, NULL, 0 },
		{ "ro", AE_IFDIR, 0555, NULL, -1, NULL, 0 },
		{ "ro/inside", AE_IFREG, 0444, "", -1, NULL, 0 },
		{ "empty", AE_IFREG, 0644, NULL, -1, NULL, 0 },
	};

	assert_int_equal(extract(f, mktar(t, 6), 100, 10, &cnt, why,
	    sizeof why), 0);
	assert_int_equal(cnt.entries, 6);
	assert_int_equal(cnt.bytes, 7);
	ls(f->stagefd, names, sizeof names);
	assert_string_equal(names, "./d ./d/sub ./d/sub/deep ./d/sub/deep/y "
	    "./d/x.txt ./empty ./ro ./ro/inside ");
	read_file_at(f->stagefd, "d/x.txt", buf, sizeof buf);
	assert_string_equal(buf, "hello");
	assert_int_equal(fstatat(f->stagefd, "d/x.txt", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_mtime, 1700000001);
	/* setuid is dropped */
	assert_int_equal(fstatat(f->stagefd, "d/sub/deep/y", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	/* directory modes and times are applied last */
	assert_int_equal(fstatat(f->stagefd, "ro", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0555);
	assert_int_equal(st.st_mtime, 1700000003);
	assert_int_equal(fstatat(f->stagefd, "d", &st, 0), 0);
	assert_int_equal(st.st_mtime, 1700000000);
}

static void
test_extract_empty_archive(void **state)
{
	struct fix		*f = *state;
	struct workspace_counts	 cnt;
	char			 why[256], names[64];

	assert_int_equal(extract(f, mktar(NULL, 0), 100, 10, &cnt, why,
	    sizeof why), 0);
	assert_int_equal(cnt.entries, 0);
	ls(f->stagefd, names, sizeof names);
	assert_string_equal(names, "");
}

struct reject_case {
	struct tent	t[3];
	size_t		n;
	int		want;
};

static void
test_extract_rejects(void **state)
{
	struct fix		*f = *state;
	struct workspace_counts	 cnt;
	char			 why[256], names[512];
	size_t			 i;
	int			 r;
	const struct reject_case cases[] = {
		{ { { "../evil", AE_IFREG, 0644, "x", -1, NULL, 0 } }, 1,
		    ERR_TAR_ENTRY_REJECTED },
		{ { { "/abs", AE_IFREG, 0644, "x", -1, NULL, 0 } }, 1,
		    ERR_TAR_ENTRY_REJECTED },
		{ { { "a", AE_IFDIR, 0755, NULL, -1, NULL, 0 },
		    { "a/../../b", AE_IFREG, 0644, "x", -1, NULL, 0 } }, 2,
		    ERR_TAR_ENTRY_REJECTED },
		{ { { "s", AE_IFLNK, 0777, NULL, 0, "/etc", 0 } }, 1,
		    ERR_TAR_ENTRY_REJECTED },
		{ { { "f", AE_IFREG, 0644, "x", -1, NULL, 0 },
		    { "h", AE_IFREG, 0644, NULL, 0, "f", 1 } }, 2,
		    ERR_TAR_ENTRY_REJECTED },
		{ { { "null", AE_IFCHR, 0666, NULL, 0, NULL, 0 } }, 1,
		    ERR_TAR_ENTRY_REJECTED },
		{ { { "fifo", AE_IFIFO, 0666, NULL, 0, NULL, 0 } }, 1,
		    ERR_TAR_ENTRY_REJECTED },
		/* duplicates and type conflicts */
		{ { { "f", AE_IFREG, 0644, "x", -1, NULL, 0 },
		    { "f", AE_IFREG, 0644, "y", -1, NULL, 0 } }, 2,
		    ERR_TAR_ENTRY_REJECTED },
		{ { { "f", AE_IFREG, 0644, "x", -1, NULL, 0 },
		    { "f/g", AE_IFREG, 0644, "y", -1, NULL, 0 } }, 2,
		    ERR_TAR_ENTRY_REJECTED },
		{ { { "d", AE_IFDIR, 0755, NULL, -1, NULL, 0 },
		    { "d", AE_IFREG, 0644, "y", -1, NULL, 0 } }, 2,
		    ERR_TAR_ENTRY_REJECTED },
		/* limits: 10 bytes, 2 entries */
		{ { { "big", AE_IFREG, 0644, "0123456789a", -1, NULL, 0 } }, 1,
		    ERR_TAR_TOO_LARGE },
		{ { { "a", AE_IFREG, 0644, "012345", -1, NULL, 0 },
		    { "b", AE_IFREG, 0644, "012345", -1, NULL, 0 } }, 2,
		    ERR_TAR_TOO_LARGE },
		{ { { "a", AE_IFDIR, 0755, NULL, -1, NULL, 0 },
		    { "b", AE_IFDIR, 0755, NULL, -1, NULL, 0 },
		    { "c", AE_IFDIR, 0755, NULL, -1, NULL, 0 } }, 3,
		    ERR_TAR_TOO_MANY_ENTRIES },
	};

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		r = extract(f, mktar(cases[i].t, cases[i].n), 10, 2, &cnt,
		    why, sizeof why);
		if (r != cases[i].want)
			fail_msg("case %zu: got %s want %s (%s)", i,
			    err_name(r), err_name(cases[i].want), why);
		assert_true(why[0] != '\0');
		/* Nothing escaped the staging dir. */
		ls(f->tmpfd, names, sizeof names);
		if (strncmp(names, "./stage ", 8) != 0 ||
		    strstr(names, "evil") != NULL ||
		    strstr(names, "./b") != NULL)
			fail_msg("case %zu: tmp holds %s", i, names);
		assert_int_equal(workspace_tree_empty(f->stagefd), 0);
	}
}

/* The declared size alone trips the limit: no data is read. */
static void
test_extract_size_bomb(void **state)
{
	struct fix		*f = *state;
	struct workspace_counts	 cnt;
	char			 why[256];
	uint8_t			 hdr[512];
	unsigned		 sum = 0;
	size_t			 i;
	int			 fd;

	/* A bare ustar header declaring 8 GiB (octal 100000000000). */
	memset(hdr, 0, sizeof hdr);
	strcpy((char *)hdr, "bomb");
	memcpy(hdr + 100, "0000644", 8);
	memcpy(hdr + 108, "0000000", 8);
	memcpy(hdr + 116, "0000000", 8);
	memcpy(hdr + 124, "100000000000", 12);
	memcpy(hdr + 136, "00000000000", 12);
	hdr[156] = '0';
	memcpy(hdr + 257, "ustar", 6);
	memcpy(hdr + 263, "00", 2);
	memset(hdr + 148, ' ', 8);
	for (i = 0; i < sizeof hdr; i++)
		sum += hdr[i];
	snprintf((char *)hdr + 148, 8, "%06o", sum);
	fd = memfd_create("bomb", MFD_CLOEXEC);
	assert_int_equal(write(fd, hdr, sizeof hdr), (ssize_t)sizeof hdr);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(extract(f, fd, 1 << 20, 10, &cnt, why, sizeof why),
	    ERR_TAR_TOO_LARGE);
}

static void
test_extract_truncated_and_garbage(void **state)
{
	struct fix		*f = *state;
	struct workspace_counts	 cnt;
	struct stat		 st;
	char			 why[256], data[3000];
	const struct tent	 t[] = {
		{ "a", AE_IFREG, 0644, data, -1, NULL, 0 },
	};
	int			 fd, r;

	memset(data, 'z', sizeof data - 1);
	data[sizeof data - 1] = '\0';
	/* Cut in the middle of the file's data. */
	fd = mktar(t, 1);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(ftruncate(fd, 512 + 1500), 0);
	r = extract(f, fd, 1 << 20, 10, &cnt, why, sizeof why);
	if (r != ERR_TAR_TRUNCATED)
		fail_msg("truncated: got %s (%s)", err_name(r), why);
	assert_int_equal(workspace_tree_empty(f->stagefd), 0);

	/* Cut in the middle of a header. */
	fd = mktar(t, 1);
	assert_int_equal(ftruncate(fd, 300), 0);
	r = extract(f, fd, 1 << 20, 10, &cnt, why, sizeof why);
	if (r != ERR_TAR_TRUNCATED && r != ERR_TAR_INVALID)
		fail_msg("cut header: got %s (%s)", err_name(r), why);

	/* Not a tar at all. */
	fd = memfd_create("junk", MFD_CLOEXEC);
	memset(data, 'j', sizeof data);
	assert_int_equal(write(fd, data, sizeof data), (ssize_t)sizeof data);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	r = extract(f, fd, 1 << 20, 10, &cnt, why, sizeof why);
	if (r != ERR_TAR_INVALID)
		fail_msg("junk: got %s (%s)", err_name(r), why);
}

/* ---- export -------------------------------------------------------------- */

static void
put(int dirfd, const char *path, const char *data, mode_t mode)
{
	int	fd;

	fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, strlen(data)), (ssize_t)strlen(data));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void
test_export_roundtrip(void **state)
{
	struct fix		*f = *state;
	struct workspace_counts	 ecnt, icnt;
	struct stat		 st;
	char			 why[256], names[2048], buf[64];
	int			 srcfd, dstfd, tarfd;
	static const char	*dirs[] = {
		"src", "src/bots", "src/bots/a", "src/bots/a/Cache",
		"src/.browser-profiles", "src/.browser-profiles/a",
		"src/.browser-profiles/a/Default",
		"src/.browser-profiles/a/Default/Cache",
		"src/.browser-profiles/a/Default/Service Worker",
		"src/.browser-profiles/a/Default/Service Worker/CacheStorage",
		"src/shared", "dst",
	};
	size_t			 i;

	for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		assert_int_equal(mkdirat(f->tmpfd, dirs[i], 0755), 0);
	srcfd = openat(f->tmpfd, "src", O_RDONLY | O_DIRECTORY);
	dstfd = openat(f->tmpfd, "dst", O_RDONLY | O_DIRECTORY);
	put(srcfd, "bots/a/Cache/x", "keep me", 0600);
	put(srcfd, "bots/a/run.sh", "#!/bin/sh\n", 0755);
	put(srcfd, "shared/empty", "", 0644);
	put(srcfd, "shared/caf\xc3\xa9.txt", "utf8", 0644);
	put(srcfd, ".browser-profiles/a/SingletonLock", "l", 0644);
	put(srcfd, ".browser-profiles/a/Default/Cookies", "c", 0600);
	put(srcfd, ".browser-profiles/a/Default/Cache/data_0", "d", 0600);
	put(srcfd, ".browser-profiles/a/Default/Service Worker/"
	    "CacheStorage/k", "k", 0600);
	assert_int_equal(symlinkat("/etc/passwd", srcfd, "shared/link"), 0);
	assert_int_equal(mkfifoat(srcfd, "shared/fifo", 0644), 0);

	tarfd = memfd_create("export", MFD_CLOEXEC);
	assert_int_equal(workspace_export_fd(srcfd, tarfd, &ecnt), 0);
	/* link, fifo, SingletonLock, Cache, CacheStorage */
	assert_int_equal(ecnt.skipped, 5);
	assert_int_equal(ecnt.entries, 13);
	assert_int_equal(lseek(tarfd, 0, SEEK_SET), 0);

	close(f->stagefd);
	f->stagefd = dstfd;
	assert_int_equal(extract(f, tarfd, 1 << 20, 100, &icnt, why,
	    sizeof why), 0);
	assert_int_equal(icnt.entries, ecnt.entries);
	ls(dstfd, names, sizeof names);
	assert_string_equal(names,
	    "./.browser-profiles ./.browser-profiles/a "
	    "./.browser-profiles/a/Default "
	    "./.browser-profiles/a/Default/Cookies "
	    "./.browser-profiles/a/Default/Service Worker "
	    "./bots ./bots/a ./bots/a/Cache ./bots/a/Cache/x "
	    "./bots/a/run.sh ./shared ./shared/caf\xc3\xa9.txt "
	    "./shared/empty ");
	read_file_at(dstfd, "bots/a/Cache/x", buf, sizeof buf);
	assert_string_equal(buf, "keep me");
	assert_int_equal(fstatat(dstfd, "bots/a/run.sh", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(fstatat(dstfd, "bots/a/Cache/x", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	close(srcfd);
}

/*
 * Holes go out as a sparse entry and come back as holes: a 1 GiB hole
 * and a file of two stretches of data far apart make a small archive,
 * and the extracted files have their sizes, their data at its offsets
 * and few blocks.  With a cap below their sizes the export fails
 * TAR_TOO_LARGE naming the file.
 */
static void
test_export_sparse(void **state)
{
	struct fix		*f = *state;
	struct workspace_counts	 ecnt, icnt;
	struct stat		 st;
	char			 why[256], fp[WS_FP_MAX], buf[8];
	int			 srcfd, dstfd, tarfd, fd;

	assert_int_equal(mkdirat(f->tmpfd, "src", 0755), 0);
	assert_int_equal(mkdirat(f->tmpfd, "dst", 0755), 0);
	srcfd = openat(f->tmpfd, "src", O_RDONLY | O_DIRECTORY);
	dstfd = openat(f->tmpfd, "dst", O_RDONLY | O_DIRECTORY);
	fd = openat(srcfd, "holes", O_WRONLY | O_CREAT, 0644);
	assert_int_equal(ftruncate(fd, 1LL << 30), 0);
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);
	if (st.st_blocks > 8) {
		close(srcfd);
		close(dstfd);
		skip();		/* a file system without holes */
	}
	fd = openat(srcfd, "mixed", O_WRONLY | O_CREAT, 0644);
	assert_int_equal(pwrite(fd, "head", 4, 0), 4);
	assert_int_equal(pwrite(fd, "tail", 4, (8 << 20) - 4), 4);
	close(fd);

	tarfd = memfd_create("export", MFD_CLOEXEC);
	assert_int_equal(workspace_export_fd(srcfd, tarfd, &ecnt), 0);
	assert_int_equal(fstat(tarfd, &st), 0);
	assert_true(st.st_size < 256 * 1024);
	assert_int_equal(lseek(tarfd, 0, SEEK_SET), 0);
	close(f->stagefd);
	f->stagefd = dstfd;
	assert_int_equal(extract(f, tarfd, 2ULL << 30, 100, &icnt, why,
	    sizeof why), 0);
	assert_int_equal(fstatat(dstfd, "holes", &st, 0), 0);
	assert_int_equal(st.st_size, 1LL << 30);
	assert_true(st.st_blocks <= 8);
	assert_int_equal(fstatat(dstfd, "mixed", &st, 0), 0);
	assert_int_equal(st.st_size, 8 << 20);
	assert_true(st.st_blocks <= 1024);
	fd = openat(dstfd, "mixed", O_RDONLY);
	assert_int_equal(pread(fd, buf, 4, 0), 4);
	assert_memory_equal(buf, "head", 4);
	assert_int_equal(pread(fd, buf, 4, (8 << 20) - 4), 4);
	assert_memory_equal(buf, "tail", 4);
	assert_int_equal(pread(fd, buf, 4, 4 << 20), 4);
	assert_memory_equal(buf, "\0\0\0\0", 4);
	close(fd);

	/* 1 GiB + 8 MiB of sizes, a cap of 512 MiB. */
	tarfd = memfd_create("capped", MFD_CLOEXEC);
	assert_int_equal(workspace_export_fd_fp(srcfd, tarfd, 512 << 20, &ecnt,
	    fp, sizeof fp, why, sizeof why), ERR_TAR_TOO_LARGE);
	assert_non_null(strstr(why, "home size cap"));
	assert_non_null(strstr(why, "\"holes\""));
	close(tarfd);
	close(srcfd);
}

/* A reader that went away makes export stop with CANCELLED. */
static void
test_export_epipe(void **state)
{
	struct fix		*f = *state;
	struct workspace_counts	 cnt;
	char			 big[70000];
	int			 p[2];

	(void)signal(SIGPIPE, SIG_IGN);
	memset(big, 'b', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	put(f->tmpfd, "big", big, 0644);
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	assert_int_equal(workspace_export_fd(f->tmpfd, p[1], &cnt),
	    ERR_CANCELLED);
	close(p[1]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entry_check),
		cmocka_unit_test(test_entry_check_sanitises),
		cmocka_unit_test(test_export_skip),
		cmocka_unit_test_setup_teardown(test_extract_ok, fix_setup,
		    fix_teardown),
		cmocka_unit_test_setup_teardown(test_extract_empty_archive,
		    fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_extract_rejects,
		    fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_extract_size_bomb,
		    fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(
		    test_extract_truncated_and_garbage, fix_setup,
		    fix_teardown),
		cmocka_unit_test_setup_teardown(test_export_roundtrip,
		    fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_export_sparse, fix_setup,
		    fix_teardown),
		cmocka_unit_test_setup_teardown(test_export_epipe, fix_setup,
		    fix_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/*
 * home-browse: a stored revision read in place.  guestd's path rules on a
 * client's path; listings of explicit and implied directories, cut at
 * HOME_BROWSE_LIST_MAX; byte ranges; links listed and never followed;
 * an archive's climbing and absolute names passed over.  Archives are
 * written with libarchive into a real local home store.  Also the local
 * store's reader under them: a revision read in order (a restore) comes
 * back byte for byte in reads of any size, past the cache where the file
 * system takes direct reads; one that skips (a browse) reads the right
 * bytes after each skip.  And the check before a revision is served
 * or linked: its bytes against the size and sha256 of its row.
 */
#include "autoconf.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
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
#include <openssl/sha.h>

#include "unit-tmpdir.h"

#include "err.h"
#include "home.h"
#include "home-browse.h"

static int
setup(void **state)
{
	(void)state;
	return unit_tmpdir_new("test_home_browse");
}

static int
teardown(void **state)
{
	(void)state;
	return unit_tmpdir_remove();
}

static void
add(struct archive *a, const char *name, unsigned type, const char *data,
    const char *link)
{
	struct archive_entry	*e = archive_entry_new();
	size_t			 n = data != NULL ? strlen(data) : 0;

	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, type);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (la_int64_t)n);
	if (link != NULL)
		archive_entry_set_symlink(e, link);
	assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
	if (n > 0)
		assert_int_equal(archive_write_data(a, data, n), (la_ssize_t)n);
	archive_entry_free(e);
}

/* rev-1.tar of key "k": a small tree, a link, hostile names, a big dir. */
static struct home_store *
make_store(int many)
{
	struct home_store	*hs = NULL;
	struct archive		*a;
	struct errmsg		 e;
	char			 path[PATH_MAX], name[64];
	int			 i;

	memset(&e, 0, sizeof e);
	assert_int_equal(home_store_open(&hs, unit_tmpdir, &e), 0);
	snprintf(path, sizeof path, "%s/homes/k", unit_tmpdir);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/homes/k/rev-1.tar", unit_tmpdir);
	a = archive_write_new();
	assert_int_equal(archive_write_set_format_pax_restricted(a),
	    ARCHIVE_OK);
	assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
	add(a, "bots/", AE_IFDIR, NULL, NULL);
	add(a, "bots/alice/notes.txt", AE_IFREG, "hello, world", NULL);
	add(a, "bots/alice/out", AE_IFLNK, NULL, "/etc/passwd");
	add(a, "deep/a/b.txt", AE_IFREG, "implied", NULL);
	add(a, "../climb.txt", AE_IFREG, "no", NULL);
	add(a, "/abs.txt", AE_IFREG, "no", NULL);
	add(a, ".rakazo-swap", AE_IFREG, "guestd's", NULL);
	for (i = 0; i < many; i++) {
		snprintf(name, sizeof name, "many/f%05d", i);
		add(a, name, AE_IFREG, "x", NULL);
	}
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	return hs;
}

static int
check(const char *p)
{
	struct errmsg	 e;
	char		 dst[PATH_MAX];

	memset(&e, 0, sizeof e);
	return home_browse_path(p, strlen(p), dst, sizeof dst, &e);
}

static void
test_paths(void **state)
{
	struct errmsg	 e;
	char		 dst[PATH_MAX], longseg[NAME_MAX + 10];

	(void)state;
	memset(&e, 0, sizeof e);
	assert_int_equal(home_browse_path("bots/a/", 7, dst, sizeof dst, &e),
	    0);
	assert_string_equal(dst, "bots/a");
	assert_int_equal(home_browse_path(".", 1, dst, sizeof dst, &e), 0);
	assert_string_equal(dst, "");
	assert_int_equal(check("/etc/passwd"), ERR_PATH_OUTSIDE);
	assert_int_equal(check(".."), ERR_PATH_OUTSIDE);
	assert_int_equal(check("a/../b"), ERR_PATH_OUTSIDE);
	/* An escape wins over other faults. */
	assert_int_equal(check("a//../b"), ERR_PATH_OUTSIDE);
	assert_int_equal(check("a//b"), ERR_PATH_INVALID);
	assert_int_equal(check("a/./b"), ERR_PATH_INVALID);
	assert_int_equal(home_browse_path("a\0b", 3, dst, sizeof dst, &e),
	    ERR_PATH_INVALID);
	memset(longseg, 'x', sizeof longseg - 1);
	longseg[sizeof longseg - 1] = '\0';
	assert_int_equal(check(longseg), ERR_NAME_TOO_LONG);
}

/* The sha256 (hex) and size of revision 1 of home k. */
static int64_t
rev1_sha(char hex[2 * SHA256_DIGEST_LENGTH + 1])
{
	unsigned char	 md[SHA256_DIGEST_LENGTH];
	char		 path[PATH_MAX];
	struct stat	 st;
	uint8_t		*b;
	int		 fd, i;

	snprintf(path, sizeof path, "%s/homes/k/rev-1.tar", unit_tmpdir);
	assert_int_not_equal(fd = open(path, O_RDONLY), -1);
	assert_int_equal(fstat(fd, &st), 0);
	b = malloc((size_t)st.st_size);
	assert_non_null(b);
	assert_int_equal(read(fd, b, (size_t)st.st_size), st.st_size);
	close(fd);
	SHA256(b, (size_t)st.st_size, md);
	free(b);
	for (i = 0; i < SHA256_DIGEST_LENGTH; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return st.st_size;
}

static void
test_verify(void **state)
{
	struct home_store	*hs = make_store(0);
	struct errmsg		 e;
	char			 sha[2 * SHA256_DIGEST_LENGTH + 1];
	char			 path[PATH_MAX];
	int64_t			 size;
	int			 fd;

	(void)state;
	memset(&e, 0, sizeof e);
	size = rev1_sha(sha);
	assert_int_equal(home_browse_verify(hs, "k", 1, size, sha, &e), 0);
	/* Another size, another hash, no such revision. */
	assert_int_equal(home_browse_verify(hs, "k", 1, size + 1, sha, &e),
	    ERR_HOME_STORE);
	sha[0] = sha[0] == '0' ? '1' : '0';
	assert_int_equal(home_browse_verify(hs, "k", 1, size, sha, &e),
	    ERR_HOME_STORE);
	assert_non_null(strstr(errmsg_str(&e), "damaged"));
	sha[0] = sha[0] == '0' ? '1' : '0';
	assert_int_equal(home_browse_verify(hs, "k", 2, size, sha, &e),
	    ERR_NO_REVISION);
	/* One byte flipped in place, the size kept: damaged. */
	snprintf(path, sizeof path, "%s/homes/k/rev-1.tar", unit_tmpdir);
	assert_int_not_equal(fd = open(path, O_WRONLY), -1);
	assert_int_equal(pwrite(fd, "J", 1, 600), 1);
	close(fd);
	assert_int_equal(home_browse_verify(hs, "k", 1, size, sha, &e),
	    ERR_HOME_STORE);
	home_store_free(hs);
}

static const char *
entry_name(json_t *list, size_t i)
{
	return json_string_value(json_object_get(json_array_get(
	    json_object_get(list, "entries"), i), "name"));
}

static const char *
entry_type(json_t *list, size_t i)
{
	return json_string_value(json_object_get(json_array_get(
	    json_object_get(list, "entries"), i), "type"));
}

static void
test_list(void **state)
{
	struct home_store	*hs = make_store(0);
	struct errmsg		 e;
	json_t			*l = NULL;

	(void)state;
	memset(&e, 0, sizeof e);
	assert_int_equal(home_browse_list(hs, "k", 1, "", &l, &e), 0);
	/* Sorted; climbing, absolute and guestd's names passed over. */
	assert_int_equal(json_array_size(json_object_get(l, "entries")), 2);
	assert_string_equal(entry_name(l, 0), "bots");
	assert_string_equal(entry_name(l, 1), "deep");
	assert_string_equal(entry_type(l, 1), "dir");	/* implied */
	json_decref(l);
	assert_int_equal(home_browse_list(hs, "k", 1, "bots/alice", &l, &e),
	    0);
	assert_string_equal(entry_name(l, 0), "notes.txt");
	assert_string_equal(entry_type(l, 0), "file");
	assert_string_equal(entry_name(l, 1), "out");
	assert_string_equal(entry_type(l, 1), "symlink");
	json_decref(l);
	assert_int_equal(home_browse_list(hs, "k", 1, "deep/a", &l, &e), 0);
	assert_string_equal(entry_name(l, 0), "b.txt");
	json_decref(l);
	assert_int_equal(home_browse_list(hs, "k", 1, "bots/alice/notes.txt",
	    &l, &e), ERR_NOT_DIR);
	assert_int_equal(home_browse_list(hs, "k", 1, "nope", &l, &e),
	    ERR_NOT_FOUND);
	/* A path through a link finds nothing: links are not followed. */
	assert_int_equal(home_browse_list(hs, "k", 1, "bots/alice/out", &l,
	    &e), ERR_NOT_DIR);
	assert_int_equal(home_browse_list(hs, "k", 2, "", &l, &e),
	    ERR_NO_REVISION);
	assert_null(l);
	home_store_free(hs);
}

/*
 * More names than the listing keeps twice over, so it is cut back while
 * the pass goes on; what is left is the smallest names, sorted, within
 * the JSON budget guestd's listing has too.
 */
static void
test_list_cut(void **state)
{
	struct home_store	*hs = make_store(2 * HOME_BROWSE_LIST_MAX + 50);
	struct errmsg		 e;
	json_t			*l = NULL;
	size_t			 n, i;

	(void)state;
	memset(&e, 0, sizeof e);
	assert_int_equal(home_browse_list(hs, "k", 1, "many", &l, &e), 0);
	n = json_array_size(json_object_get(l, "entries"));
	assert_true(n > 1000 && n <= HOME_BROWSE_LIST_MAX);
	assert_true(json_is_true(json_object_get(l, "truncated")));
	assert_string_equal(entry_name(l, 0), "f00000");
	for (i = 1; i < n; i++)
		assert_true(strcmp(entry_name(l, i - 1), entry_name(l, i)) < 0);
	json_decref(l);
	home_store_free(hs);
}

static void
test_read(void **state)
{
	struct home_store	*hs = make_store(0);
	struct errmsg		 e;
	void			*d = NULL;
	size_t			 n = 0;
	int64_t			 size = 0;

	(void)state;
	memset(&e, 0, sizeof e);
	assert_int_equal(home_browse_read(hs, "k", 1, "bots/alice/notes.txt",
	    7, 100, &d, &n, &size, &e), 0);
	assert_int_equal(size, 12);
	assert_int_equal(n, 5);
	assert_memory_equal(d, "world", 5);
	free(d);
	assert_int_equal(home_browse_read(hs, "k", 1, "bots/alice/notes.txt",
	    0, 5, &d, &n, &size, &e), 0);
	assert_int_equal(n, 5);
	assert_memory_equal(d, "hello", 5);
	free(d);
	assert_int_equal(home_browse_read(hs, "k", 1, "bots/alice/notes.txt",
	    13, 1, &d, &n, &size, &e), ERR_RANGE);
	assert_int_equal(home_browse_read(hs, "k", 1, "bots/alice/out", 0, 10,
	    &d, &n, &size, &e), ERR_NOT_REGULAR);
	assert_int_equal(home_browse_read(hs, "k", 1, "bots/alice/out/x", 0,
	    10, &d, &n, &size, &e), ERR_NOT_FOUND);
	assert_int_equal(home_browse_read(hs, "k", 1, "deep", 0, 10, &d, &n,
	    &size, &e), ERR_NOT_REGULAR);
	assert_int_equal(home_browse_read(hs, "k", 1, "climb.txt", 0, 10, &d,
	    &n, &size, &e), ERR_NOT_FOUND);
	assert_int_equal(home_browse_read(hs, "k", 1, "abs.txt", 0, 10, &d,
	    &n, &size, &e), ERR_NOT_FOUND);
	assert_null(d);
	home_store_free(hs);
}

/* rev-2.tar of key "g": n pseudo-random bytes, written, synced, and
 * dropped from the page cache. */
static uint8_t *
make_rev2(size_t n)
{
	uint8_t		*b = malloc(n);
	char		 path[PATH_MAX];
	uint32_t	 x = 12345;
	size_t		 i;
	int		 fd;

	assert_non_null(b);
	for (i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		b[i] = (uint8_t)(x >> 16);
	}
	snprintf(path, sizeof path, "%s/homes/g", unit_tmpdir);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/homes/g/rev-2.tar", unit_tmpdir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, n), (ssize_t)n);
	assert_int_equal(fsync(fd), 0);
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	return b;
}

/* Pages of rev-2 in the page cache; -1 if it cannot be told. */
static long
cached_pages(size_t n)
{
	char		 path[PATH_MAX];
	unsigned char	*vec;
	long		 pg = sysconf(_SC_PAGESIZE), np, i, c = 0;
	void		*m;
	int		 fd;

	snprintf(path, sizeof path, "%s/homes/g/rev-2.tar", unit_tmpdir);
	if ((fd = open(path, O_RDONLY)) == -1)
		return -1;
	m = mmap(NULL, n, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	np = ((long)n + pg - 1) / pg;
	vec = malloc((size_t)np);
	if (vec == NULL || mincore(m, n, vec) != 0)
		c = -1;
	for (i = 0; c >= 0 && i < np; i++)
		c += vec[i] & 1;
	free(vec);
	munmap(m, n);
	return c;
}

/* 1 when the temp dir's file system takes direct reads. */
static int
direct_ok(void)
{
	char	 path[PATH_MAX];
	void	*b = NULL;
	int	 fd, ok;

	snprintf(path, sizeof path, "%s/homes/g/rev-2.tar", unit_tmpdir);
	if ((fd = open(path, O_RDONLY | O_DIRECT)) == -1)
		return 0;
	ok = posix_memalign(&b, 4096, 4096) == 0 && pread(fd, b, 4096, 0) ==
	    4096;
	free(b);
	close(fd);
	return ok;
}

static void
test_get_in_order(void **state)
{
	/* 9 MiB and an odd tail: the first MiB through the cache, then
	 * direct in 1 MiB steps, the last one short. */
	size_t			 n = 9 * 1024 * 1024 + 777, got = 0, want;
	struct home_store	*hs = NULL;
	struct home_get		*g = NULL;
	struct errmsg		 e;
	uint8_t			*b, *buf = malloc(300 * 1024);
	int64_t			 size;
	ssize_t			 r;
	long			 c;
	int			 i = 0;

	(void)state;
	memset(&e, 0, sizeof e);
	assert_non_null(buf);
	assert_int_equal(home_store_open(&hs, unit_tmpdir, &e), 0);
	b = make_rev2(n);
	assert_int_equal(home_get_open(hs, "g", 2, &g, &size, &e), 0);
	assert_int_equal(size, (int64_t)n);
	/* Reads of every size a caller asks for, as a restore's frames
	 * and the checkpoint's copy do. */
	for (;;) {
		want = (size_t[]){ 229376, 1000, 300 * 1024, 4096, 1 }[i++ % 5];
		r = home_get_read(hs, g, buf, want, &e);
		assert_true(r >= 0);
		if (r == 0)
			break;
		assert_true((size_t)r <= want);
		assert_true(got + (size_t)r <= n);
		assert_memory_equal(buf, b + got, (size_t)r);
		got += (size_t)r;
	}
	assert_int_equal(got, n);
	home_get_close(hs, g);
	/* Past the first MiB, none of it went through the cache. */
	c = cached_pages(n);
	if (direct_ok() && c >= 0)
		assert_true(c < (long)(2 * 1024 * 1024 / 4096));
	free(b);
	free(buf);
	home_store_free(hs);
}

static void
test_get_skips(void **state)
{
	size_t			 n = 5 * 1024 * 1024 + 3;
	struct home_store	*hs = NULL;
	struct home_get		*g = NULL;
	struct errmsg		 e;
	uint8_t			*b, buf[4096];
	int64_t			 size, at = 0;
	ssize_t			 r;

	(void)state;
	memset(&e, 0, sizeof e);
	assert_int_equal(home_store_open(&hs, unit_tmpdir, &e), 0);
	b = make_rev2(n);
	assert_int_equal(home_get_open(hs, "g", 2, &g, &size, &e), 0);
	/* In order past the first MiB (direct from there), then a skip
	 * (a browse after all), then reads and skips by turns. */
	while (at < 1536 * 1024) {
		r = home_get_read(hs, g, buf, sizeof buf, &e);
		assert_true(r > 0);
		assert_memory_equal(buf, b + at, (size_t)r);
		at += r;
	}
	while (at + 70000 + (int64_t)sizeof buf < (int64_t)n) {
		assert_int_equal(home_get_skip(hs, g, 70000, &e), 70000);
		at += 70000;
		r = home_get_read(hs, g, buf, 512, &e);
		assert_int_equal(r, 512);
		assert_memory_equal(buf, b + at, 512);
		at += r;
	}
	home_get_close(hs, g);
	free(b);
	home_store_free(hs);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test_setup_teardown(test_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_cut, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify, setup, teardown),
		cmocka_unit_test_setup_teardown(test_get_in_order, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_get_skips, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

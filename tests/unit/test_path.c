/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of guestd/path.c: the lexical rules, and confined opens below
 * a real temp root full of hostile symlinks.  The open tests run twice:
 * once with openat2, and once with openat2 made to fail with ENOSYS by a
 * seccomp filter, so the fallback walk is held to the same results.
 */
#include "autoconf.h"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <errno.h>
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

#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>

#include <cmocka.h>

#include "err.h"
#include "path.h"

static char	 top[1024];		/* temp dir holding root/ and outside/ */
static char	 rootdir[1100];
static char	 outside[1100];
static int	 rootfd = -1;

static void
mk(const char *fmt, const char *content)
{
	char	 p[PATH_MAX];
	FILE	*f;

	snprintf(p, sizeof(p), "%s/%s", top, fmt);
	if (content == NULL) {
		assert_int_equal(mkdir(p, 0755), 0);
		return;
	}
	assert_non_null(f = fopen(p, "w"));
	fputs(content, f);
	fclose(f);
}

static void
ln(const char *target, const char *name)
{
	char	 p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/root/%s", top, name);
	assert_int_equal(symlink(target, p), 0);
}

static int
setup_root(void **state)
{
	const char	*tmp = getenv("TMPDIR");

	snprintf(top, sizeof(top), "%s/test_path.XXXXXX", tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(top));
	snprintf(rootdir, sizeof(rootdir), "%s/root", top);
	snprintf(outside, sizeof(outside), "%s/outside", top);
	mk("root", NULL);
	mk("outside", NULL);
	mk("secret", "secret\n");
	mk("root/d", NULL);
	mk("root/d/f", "hello");
	ln("/etc", "out");
	ln("/etc/passwd", "abs");
	ln("../secret", "sib");
	ln("..", "up");
	ln("../outside", "outdir");
	ln("d/f", "in");
	ln("d", "indir");
	ln("d/../d/f", "dotdot");
	ln("../../secret", "d/up2");
	ln("loop2", "loop1");
	ln("loop1", "loop2");
	ln("nothing", "dangling");
	assert_true((rootfd = path_root_open(rootdir)) >= 0);
	return 0;
}

static int
teardown_root(void **state)
{
	char	 cmd[PATH_MAX + 16];

	if (rootfd >= 0)
		close(rootfd);
	rootfd = -1;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void
read_is(int fd, const char *want)
{
	char	 buf[64];
	ssize_t	 n;

	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	assert_string_equal(buf, want);
	close(fd);
}

/* ---- lexical --------------------------------------------------------- */

static void
test_bot_valid(void **state)
{
	char	 b[80];

	assert_int_equal(path_bot_valid("alice"), 0);
	assert_int_equal(path_bot_valid("a.b-c_D9"), 0);
	assert_int_equal(path_bot_valid("_x"), 0);
	assert_int_equal(path_bot_valid("-x"), 0);
	memset(b, 'a', 64);
	b[64] = '\0';
	assert_int_equal(path_bot_valid(b), 0);
	b[64] = 'a';
	b[65] = '\0';
	assert_int_equal(path_bot_valid(b), ERR_INVALID_BOT);
	assert_int_equal(path_bot_valid(""), ERR_INVALID_BOT);
	assert_int_equal(path_bot_valid(".x"), ERR_INVALID_BOT);
	assert_int_equal(path_bot_valid(".."), ERR_INVALID_BOT);
	assert_int_equal(path_bot_valid("a/b"), ERR_INVALID_BOT);
	assert_int_equal(path_bot_valid("a b"), ERR_INVALID_BOT);
	assert_int_equal(path_bot_valid("\xc3\xa9"), ERR_INVALID_BOT);
	assert_int_equal(path_bot_valid(NULL), ERR_INVALID_BOT);
}

#define CHECK(s, want) \
	assert_int_equal(path_check((s), sizeof(s) - 1), (want))

static void
test_check_table(void **state)
{
	CHECK("", 0);
	CHECK(".", 0);
	CHECK("a", 0);
	CHECK("a/b", 0);
	CHECK("a/", 0);
	CHECK("a/b/", 0);
	CHECK("..a", 0);
	CHECK("a..", 0);
	CHECK("...", 0);
	CHECK(".hidden", 0);
	CHECK("/", ERR_PATH_OUTSIDE);
	CHECK("/etc/passwd", ERR_PATH_OUTSIDE);
	CHECK("..", ERR_PATH_OUTSIDE);
	CHECK("../x", ERR_PATH_OUTSIDE);
	CHECK("a/..", ERR_PATH_OUTSIDE);
	CHECK("a/../../x", ERR_PATH_OUTSIDE);
	CHECK("a//../x", ERR_PATH_OUTSIDE);
	CHECK("a//b", ERR_PATH_INVALID);
	CHECK("a//", ERR_PATH_INVALID);
	CHECK("./a", ERR_PATH_INVALID);
	CHECK("a/./b", ERR_PATH_INVALID);
	CHECK("a/.", ERR_PATH_INVALID);
	CHECK("a\0b", ERR_PATH_INVALID);
	CHECK("\0", ERR_PATH_INVALID);
	CHECK("a\0", ERR_PATH_INVALID);
}

static void
test_check_lengths(void **state)
{
	char	*p;
	size_t	 i;

	p = malloc(2 * PATH_MAX);
	assert_non_null(p);
	memset(p, 'n', NAME_MAX);
	assert_int_equal(path_check(p, NAME_MAX), 0);
	memset(p, 'n', NAME_MAX + 1);
	assert_int_equal(path_check(p, NAME_MAX + 1), ERR_NAME_TOO_LONG);
	/* "x/x/x/..." of exactly PATH_MAX - 1 bytes is fine, PATH_MAX not. */
	for (i = 0; i < 2 * PATH_MAX; i++)
		p[i] = i % 2 ? '/' : 'x';
	assert_int_equal(path_check(p, PATH_MAX - 1), 0);
	assert_int_equal(path_check(p, PATH_MAX + 1), ERR_NAME_TOO_LONG);
	assert_int_equal(path_check(p, 5000), ERR_NAME_TOO_LONG);
	free(p);
}

/* ---- opens ----------------------------------------------------------- */

static void
test_open_inside(void **state)
{
	struct stat	 a, b;
	int		 fd;

	read_is(path_open(rootfd, "d/f", O_RDONLY, 0), "hello");
	read_is(path_open(rootfd, "in", O_RDONLY, 0), "hello");
	read_is(path_open(rootfd, "indir/f", O_RDONLY, 0), "hello");
	read_is(path_open(rootfd, "dotdot", O_RDONLY, 0), "hello");
	/* The root itself, by "" and ".". */
	assert_true((fd = path_open(rootfd, "", O_RDONLY | O_DIRECTORY,
	    0)) >= 0);
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(stat(rootdir, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	close(fd);
	assert_true((fd = path_open(rootfd, ".", O_RDONLY | O_DIRECTORY,
	    0)) >= 0);
	close(fd);
	assert_true((fd = path_open(rootfd, "d/", O_RDONLY, 0)) >= 0);
	close(fd);
	/* Every fd is close-on-exec. */
	assert_true((fd = path_open(rootfd, "d/f", O_RDONLY, 0)) >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
}

static void
test_open_escapes(void **state)
{
	assert_int_equal(path_open(rootfd, "out/passwd", O_RDONLY, 0),
	    ERR_PATH_OUTSIDE);
	assert_int_equal(path_open(rootfd, "out", O_RDONLY | O_DIRECTORY, 0),
	    ERR_PATH_OUTSIDE);
	assert_int_equal(path_open(rootfd, "abs", O_RDONLY, 0),
	    ERR_PATH_OUTSIDE);
	assert_int_equal(path_open(rootfd, "sib", O_RDONLY, 0),
	    ERR_PATH_OUTSIDE);
	assert_int_equal(path_open(rootfd, "up", O_PATH, 0),
	    ERR_PATH_OUTSIDE);
	assert_int_equal(path_open(rootfd, "up/secret", O_RDONLY, 0),
	    ERR_PATH_OUTSIDE);
	assert_int_equal(path_open(rootfd, "d/up2", O_RDONLY, 0),
	    ERR_PATH_OUTSIDE);
	assert_int_equal(path_open(rootfd, "loop1", O_RDONLY, 0),
	    ERR_PATH_OUTSIDE);
	/* Lexical refusals come before any lookup. */
	assert_int_equal(path_open(rootfd, "../secret", O_RDONLY, 0),
	    ERR_PATH_OUTSIDE);
	assert_int_equal(path_open(rootfd, "/etc/passwd", O_RDONLY, 0),
	    ERR_PATH_OUTSIDE);
	assert_int_equal(path_open(rootfd, "d//f", O_RDONLY, 0),
	    ERR_PATH_INVALID);
}

static void
test_open_create(void **state)
{
	char		 p[PATH_MAX];
	struct stat	 st;
	int		 fd;

	assert_true((fd = path_open(rootfd, "d/new", O_WRONLY | O_CREAT |
	    O_EXCL, 0600)) >= 0);
	close(fd);
	snprintf(p, sizeof(p), "%s/d/new", rootdir);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(unlink(p), 0);
	/* Creating through a link that leads out makes nothing outside. */
	assert_int_equal(path_open(rootfd, "outdir/x", O_WRONLY | O_CREAT,
	    0600), ERR_PATH_OUTSIDE);
	snprintf(p, sizeof(p), "%s/x", outside);
	assert_int_equal(lstat(p, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(path_open(rootfd, "up/created", O_WRONLY | O_CREAT,
	    0600), ERR_PATH_OUTSIDE);
	snprintf(p, sizeof(p), "%s/created", top);
	assert_int_equal(lstat(p, &st), -1);
}

static void
test_open_errors(void **state)
{
	assert_int_equal(path_open(rootfd, "missing", O_RDONLY, 0),
	    ERR_NOT_FOUND);
	assert_int_equal(path_open(rootfd, "d/f/x", O_RDONLY, 0),
	    ERR_NOT_DIR);
	assert_int_equal(path_open(rootfd, "dangling", O_RDONLY, 0),
	    ERR_NOT_FOUND);
	assert_int_equal(path_open(rootfd, "d/f", O_RDONLY | O_DIRECTORY, 0),
	    ERR_NOT_DIR);
}

static void
test_open_parent(void **state)
{
	struct stat	 st;
	const char	*name;
	int		 fd;

	assert_true((fd = path_open_parent(rootfd, "d/f", &name)) >= 0);
	assert_string_equal(name, "f");
	assert_int_equal(fstatat(fd, name, &st, 0), 0);
	assert_true(S_ISREG(st.st_mode));
	close(fd);
	assert_true((fd = path_open_parent(rootfd, "top", &name)) >= 0);
	assert_string_equal(name, "top");
	assert_int_equal(fstatat(fd, "d", &st, 0), 0);	/* fd is the root */
	close(fd);
	assert_true((fd = path_open_parent(rootfd, "indir/f", &name)) >= 0);
	assert_string_equal(name, "f");
	close(fd);
	assert_int_equal(path_open_parent(rootfd, "", &name),
	    ERR_PATH_INVALID);
	assert_null(name);
	assert_int_equal(path_open_parent(rootfd, ".", &name),
	    ERR_PATH_INVALID);
	assert_int_equal(path_open_parent(rootfd, "out/passwd", &name),
	    ERR_PATH_OUTSIDE);
	assert_int_equal(path_open_parent(rootfd, "up/x", &name),
	    ERR_PATH_OUTSIDE);
	assert_int_equal(path_open_parent(rootfd, "../x", &name),
	    ERR_PATH_OUTSIDE);
}

static void
test_ensure_bot(void **state)
{
	char		 p[PATH_MAX];
	struct stat	 st;
	int		 fd;

	assert_int_equal(path_ensure_bot(rootfd, "alice"), 0);
	assert_int_equal(path_ensure_bot(rootfd, "alice"), 0);
	assert_int_equal(path_ensure_bot(rootfd, "bob"), 0);
	snprintf(p, sizeof(p), "%s/bots/alice", rootdir);
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0700, 0700);
	snprintf(p, sizeof(p), "%s/shared", rootdir);
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(path_ensure_bot(rootfd, "../x"), ERR_INVALID_BOT);
	assert_int_equal(path_ensure_bot(rootfd, ""), ERR_INVALID_BOT);

	/* A root whose bots/ leads out: refused, nothing made outside. */
	snprintf(p, sizeof(p), "%s/root2", top);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/root2/bots", top);
	assert_int_equal(symlink("../outside", p), 0);
	snprintf(p, sizeof(p), "%s/root2", top);
	assert_true((fd = path_root_open(p)) >= 0);
	assert_int_equal(path_ensure_bot(fd, "eve"), ERR_PATH_OUTSIDE);
	close(fd);
	snprintf(p, sizeof(p), "%s/eve", outside);
	assert_int_equal(lstat(p, &st), -1);
}

/* ---- the fallback walk ----------------------------------------------- */

/* Make openat2 fail with ENOSYS for the rest of this process. */
static int
deny_openat2(void)
{
	struct sock_filter	 f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog	 prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == -1)
		return -1;
	return 0;
}

static int
setup_walk(void **state)
{
	struct open_how	 how;

	/* The filter must really be in force, or this group proves nothing. */
	memset(&how, 0, sizeof(how));
	if (syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof(how)) != -1 ||
	    errno != ENOSYS)
		return -1;
	return setup_root(state);
}

int
main(void)
{
	const struct CMUnitTest lexical[] = {
		cmocka_unit_test(test_bot_valid),
		cmocka_unit_test(test_check_table),
		cmocka_unit_test(test_check_lengths),
	};
	const struct CMUnitTest opens[] = {
		cmocka_unit_test(test_open_inside),
		cmocka_unit_test(test_open_escapes),
		cmocka_unit_test(test_open_create),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_open_parent),
		cmocka_unit_test(test_ensure_bot),
	};
	int	 r = 0;

	r |= cmocka_run_group_tests_name("lexical", lexical, NULL, NULL);
	r |= cmocka_run_group_tests_name("openat2", opens, setup_root,
	    teardown_root);
	if (deny_openat2() == 0)
		r |= cmocka_run_group_tests_name("walk", opens, setup_walk,
		    teardown_root);
	else
		printf("# seccomp unavailable: the walk was not tested\n");
	return r;
}

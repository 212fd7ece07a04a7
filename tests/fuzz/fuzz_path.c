/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for guestd/path.c.  Arbitrary bytes go through
 * path_check(); those without NUL are also opened with path_open() below a
 * temp root (made once) whose symlinks point up, out and in circles.  The
 * invariants: a NUL or a leading "/" never passes the check, path_open
 * agrees with path_check on refusals, only returns ERR_* codes, and never
 * yields an fd for anything outside the root.
 */
#include "autoconf.h"

#include <sys/stat.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "path.h"

#define FUZZ_OUTSIDE	5

static int		 fuzz_rootfd = -1;
static struct stat	 fuzz_out[FUZZ_OUTSIDE];	/* must never be opened */
static char		 fuzz_top[512];

static int
fuzz_rm(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	remove(p);
	return 0;
}

/* libFuzzer leaves through exit(): take the temp tree with us. */
static void
fuzz_cleanup(void)
{
	nftw(fuzz_top, fuzz_rm, 16, FTW_DEPTH | FTW_PHYS);
}

static void
fuzz_put(const char *top, const char *rel, const char *link)
{
	char	 p[PATH_MAX];
	int	 fd;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	if (link != NULL) {
		if (symlink(link, p) == -1)
			abort();
	} else if (rel[strlen(rel) - 1] == '/') {
		if (mkdir(p, 0755) == -1)
			abort();
	} else {
		if ((fd = open(p, O_WRONLY | O_CREAT, 0644)) == -1)
			abort();
		close(fd);
	}
}

static void
fuzz_init(void)
{
	static const char *const dirs[] = { "root/", "root/a/", "root/a/b/",
	    "outside/", "outside/canary" };
	static const char *const links[][2] = {
		{ "root/up", ".." }, { "root/upup", "../.." },
		{ "root/etc", "/etc" }, { "root/out", "../outside" },
		{ "root/a/b/back", "../../../outside/canary" },
		{ "root/in", "a/b" }, { "root/loop", "loop" },
		{ "root/a/self", "../a" }, { "root/dots", "a/../a/b/../.." },
	};
	const char	*tmp = getenv("TMPDIR");
	char		*top = fuzz_top, p[PATH_MAX];
	size_t		 i;

	snprintf(top, sizeof(fuzz_top), "%s/fuzz_path.XXXXXX",
	    tmp ? tmp : "/tmp");
	if (mkdtemp(top) == NULL)
		abort();
	atexit(fuzz_cleanup);
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		fuzz_put(top, dirs[i], NULL);
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		fuzz_put(top, links[i][0], links[i][1]);
	snprintf(p, sizeof(p), "%s/root", top);
	if ((fuzz_rootfd = path_root_open(p)) < 0)
		abort();
	if (stat("/", &fuzz_out[0]) == -1 || stat("/etc", &fuzz_out[1]) ||
	    stat(top, &fuzz_out[2]) == -1)
		abort();
	snprintf(p, sizeof(p), "%s/outside", top);
	if (stat(p, &fuzz_out[3]) == -1)
		abort();
	snprintf(p, sizeof(p), "%s/outside/canary", top);
	if (stat(p, &fuzz_out[4]) == -1)
		abort();
}

static void
fuzz_open(const char *p, int checked)
{
	struct stat	 st;
	size_t		 i;
	int		 fd;

	fd = path_open(fuzz_rootfd, p, O_PATH, 0);
	if (checked != 0 && fd != checked)
		abort();
	if (fd < 0) {
		if (fd <= ERR__LAST)
			abort();
		return;
	}
	if (fstat(fd, &st) == -1)
		abort();
	for (i = 0; i < FUZZ_OUTSIDE; i++)
		if (st.st_dev == fuzz_out[i].st_dev &&
		    st.st_ino == fuzz_out[i].st_ino)
			abort();
	close(fd);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*p;
	int	 r;

	if (fuzz_rootfd == -1)
		fuzz_init();
	if ((p = malloc(size + 1)) == NULL)
		return 0;
	memcpy(p, data, size);
	p[size] = '\0';
	r = path_check(p, size);
	if (r != 0 && r != ERR_PATH_OUTSIDE && r != ERR_PATH_INVALID &&
	    r != ERR_NAME_TOO_LONG)
		abort();
	if (r == 0 && size > 0 && (p[0] == '/' || memchr(p, '\0', size)))
		abort();
	if (memchr(p, '\0', size) == NULL && size < 2 * PATH_MAX)
		fuzz_open(p, r);
	free(p);
	return 0;
}

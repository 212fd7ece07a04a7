/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: arbitrary bytes as a workspace import.  The input goes
 * through the same validation and extraction as workspace.import
 * (workspace_extract_fd) into a staging directory made once per process
 * and emptied after each input.  Anything created beside the staging
 * directory is an escape and aborts the run.
 */
#include "autoconf.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guestd.h"
#include "workspace.h"

/* main.c owns the settings in guestd; the library only reads them. */
struct guestd_settings	guestd;

static char	fuzz_dir[PATH_MAX];
static int	fuzz_dirfd = -1;
static int	fuzz_stagefd = -1;

static void
fuzz_cleanup(void)
{
	if (fuzz_stagefd != -1)
		(void)workspace_tree_empty(fuzz_stagefd);
	if (fuzz_dirfd != -1)
		(void)unlinkat(fuzz_dirfd, "stage", AT_REMOVEDIR);
	(void)rmdir(fuzz_dir);
}

static void
fuzz_init(void)
{
	const char	*tmp = getenv("TMPDIR");

	snprintf(fuzz_dir, sizeof fuzz_dir, "%s/fuzz_tar.XXXXXX",
	    tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(fuzz_dir) == NULL ||
	    (fuzz_dirfd = open(fuzz_dir, O_RDONLY | O_DIRECTORY)) == -1 ||
	    mkdirat(fuzz_dirfd, "stage", 0700) == -1 ||
	    (fuzz_stagefd = openat(fuzz_dirfd, "stage",
	    O_RDONLY | O_DIRECTORY)) == -1)
		abort();
	atexit(fuzz_cleanup);
}

/* The staging dir's parent must hold nothing but "stage". */
static void
fuzz_check_no_escape(void)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd;

	if ((fd = openat(fuzz_dirfd, ".", O_RDONLY | O_DIRECTORY)) == -1 ||
	    (d = fdopendir(fd)) == NULL)
		abort();
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0 &&
		    strcmp(de->d_name, "stage") != 0) {
			fprintf(stderr, "escape: %s\n", de->d_name);
			abort();
		}
	}
	closedir(d);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct workspace_limits	lim = { 1 << 20, 256 };
	struct workspace_counts	cnt;
	char			why[256];
	size_t			off = 0;
	ssize_t			n;
	int			fd;

	if (fuzz_stagefd == -1)
		fuzz_init();
	if ((fd = memfd_create("fuzz_tar", MFD_CLOEXEC)) == -1)
		abort();
	while (off < size) {
		if ((n = write(fd, data + off, size - off)) <= 0)
			abort();
		off += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) != 0)
		abort();
	(void)workspace_extract_fd(fd, fuzz_stagefd, &lim, &cnt, why,
	    sizeof why);
	close(fd);
	if (strlen(why) >= sizeof why)
		abort();
	fuzz_check_no_escape();
	if (workspace_tree_empty(fuzz_stagefd) != 0)
		abort();
	return 0;
}

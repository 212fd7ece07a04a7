/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl put --bot B [--computer C] [--lease L] LOCAL|- REMOTE: upload a
 * file through PUT /v1/computers/{id}/files, streamed from disk in
 * constant memory whatever its size (up to the API's 8 GiB).  The body's
 * length goes first (the controller tells guestd what to expect, so a cut
 * upload never replaces the file): standard input that is not a regular
 * file is spooled to an unlinked temporary file to learn it.
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "cli.h"
#include "cli-api.h"
#include "xmalloc.h"

#define PUT_SPOOL_CHUNK	(256 * 1024)

static ssize_t
put_read(void *arg, char *p, size_t max)
{
	int	*fd = arg;
	ssize_t	 n;

	do
		n = read(*fd, p, max);
	while (n < 0 && errno == EINTR);
	return n < 0 ? ERR_IO : n;
}

/* Copy in (a pipe) into an unlinked file under TMPDIR; its fd in *out. */
static int
put_spool(int in, int *out)
{
	const char	*dir = getenv("TMPDIR");
	char		 path[4096], *buf;
	ssize_t		 n, w, off;
	int		 fd, r = 0;

	*out = -1;
	snprintf(path, sizeof path, "%s/rakazoctl-put-XXXXXX",
	    dir != NULL && *dir != '\0' ? dir : "/tmp");
	if ((fd = mkstemp(path)) == -1)
		return -1;
	(void)unlink(path);
	buf = xmalloc(PUT_SPOOL_CHUNK);
	while (r == 0 && (n = put_read(&in, buf, PUT_SPOOL_CHUNK)) != 0) {
		if (n < 0) {
			r = -1;
			break;
		}
		for (off = 0; off < n; off += w)
			if ((w = write(fd, buf + off, (size_t)(n - off))) < 0 &&
			    errno != EINTR) {
				r = -1;
				break;
			} else if (w < 0)
				w = 0;
	}
	free(buf);
	if (r != 0 || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	*out = fd;
	return 0;
}

/* The file to send and its length. */
static int
put_open(const char *local, int *fdp, long long *size)
{
	struct stat	 st;
	off_t		 at;
	int		 fd, sp;

	*fdp = -1;
	if (strcmp(local, "-") == 0)
		fd = dup(0);
	else
		fd = open(local, O_RDONLY | O_CLOEXEC);
	if (fd == -1 || fstat(fd, &st) == -1)
		goto fail;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		if (put_spool(fd, &sp) != 0)
			goto fail;
		close(fd);
		fd = sp;
		if (fstat(fd, &st) == -1)
			goto fail;
	}
	/* Standard input may be a file read partly already. */
	if ((at = lseek(fd, 0, SEEK_CUR)) == -1)
		at = 0;
	*size = (long long)(st.st_size - at);
	*fdp = fd;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

static int
put_main(int argc, char **argv)
{
	struct cliapi	 o;
	json_t		*j = NULL;
	char		*cid = NULL, *bot = NULL, *rpath = NULL, *lease = NULL;
	char		*url = NULL;
	long long	 size = 0;
	size_t		 ulen;
	int		 fd = -1, r;

	if ((r = cliapi_parse(&o, argc, argv)) != CLI_EXIT_OK)
		return r;
	if (o.npos != 2) {
		cliapi_free(&o);
		return cli_usage(&cli_put_entry);
	}
	if (o.bot == NULL) {
		cli_error("give --bot NAME (or RAKAZO_BOT)");
		r = CLI_EXIT_USAGE;
		goto out;
	}
	if (put_open(o.pos[0], &fd, &size) != 0) {
		cli_error("IO_ERROR: %s: %s", o.pos[0], strerror(errno));
		r = CLI_EXIT_ERROR;
		goto out;
	}
	cid = cliapi_escape(o.computer);
	bot = cliapi_escape(o.bot);
	rpath = cliapi_escape(o.pos[1]);
	lease = cliapi_escape(o.lease != NULL ? o.lease : "");
	ulen = strlen(cid) + strlen(bot) + strlen(rpath) + strlen(lease) + 64;
	url = xmalloc(ulen);
	snprintf(url, ulen, "/v1/computers/%s/files?bot=%s&path=%s&parents=1"
	    "%s%s", cid, bot, rpath, o.lease != NULL ? "&lease=" : "", lease);
	r = cliapi_stream(&o, "PUT", url, size, put_read, &fd, NULL, NULL, &j);
	if (r == CLI_EXIT_OK) {
		if (o.json)
			cliapi_print_json(j);
		else
			printf("%s: %lld bytes\n", o.pos[1], size);
	}
out:
	if (fd >= 0)
		close(fd);
	free(url);
	free(cid);
	free(bot);
	free(rpath);
	free(lease);
	json_decref(j);
	cliapi_free(&o);
	return r;
}

const struct cli_cmd cli_put_entry = {
	"put", "--bot B [--computer C] [--lease L] LOCAL|- REMOTE", put_main
};

/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl get --bot B [--computer C] REMOTE [LOCAL|-]: download a file
 * through GET /v1/computers/{id}/files, streamed in constant memory
 * whatever its size.  LOCAL is written as a temporary file beside it and
 * renamed into place once whole, so a cut transfer never leaves a partial
 * LOCAL; without LOCAL (or with -) the bytes go to standard output.
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "cli.h"
#include "cli-api.h"
#include "xmalloc.h"

static int
get_write(void *arg, const char *p, size_t n)
{
	int	*fd = arg;
	ssize_t	 w;

	while (n > 0) {
		if ((w = write(*fd, p, n)) < 0) {
			if (errno == EINTR)
				continue;
			return ERR_IO;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A temporary file beside local, with the mode a plain create gives. */
static int
get_tmp(const char *local, char *tmp, size_t len)
{
	mode_t	 um;
	int	 fd;

	if ((size_t)snprintf(tmp, len, "%s.rakazo-part-XXXXXX", local) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = mkstemp(tmp)) == -1)
		return -1;
	um = umask(0);
	umask(um);
	(void)fchmod(fd, 0666 & ~um);
	return fd;
}

static int
get_main(int argc, char **argv)
{
	struct cliapi	 o;
	char		 tmp[PATH_MAX + 32];
	char		*cid = NULL, *bot = NULL, *rpath = NULL, *url = NULL;
	size_t		 ulen;
	int		 fd = -1, r, to_file = 0;

	tmp[0] = '\0';
	if ((r = cliapi_parse(&o, argc, argv)) != CLI_EXIT_OK)
		return r;
	if (o.npos < 1 || o.npos > 2) {
		cliapi_free(&o);
		return cli_usage(&cli_get_entry);
	}
	if (o.bot == NULL) {
		cli_error("give --bot NAME (or RAKAZO_BOT)");
		r = CLI_EXIT_USAGE;
		goto out;
	}
	to_file = o.npos == 2 && strcmp(o.pos[1], "-") != 0;
	if (!to_file)
		fd = STDOUT_FILENO;
	else if ((fd = get_tmp(o.pos[1], tmp, sizeof tmp)) == -1) {
		cli_error("IO_ERROR: %s: %s", o.pos[1], strerror(errno));
		tmp[0] = '\0';
		r = CLI_EXIT_ERROR;
		goto out;
	}
	cid = cliapi_escape(o.computer);
	bot = cliapi_escape(o.bot);
	rpath = cliapi_escape(o.pos[0]);
	ulen = strlen(cid) + strlen(bot) + strlen(rpath) + 64;
	url = xmalloc(ulen);
	snprintf(url, ulen, "/v1/computers/%s/files?bot=%s&path=%s", cid, bot,
	    rpath);
	r = cliapi_stream(&o, "GET", url, -1, NULL, NULL, get_write, &fd,
	    NULL);
	if (r == CLI_EXIT_OK && to_file) {
		r = close(fd);
		fd = -1;
		if (r != 0 || rename(tmp, o.pos[1]) != 0) {
			cli_error("IO_ERROR: %s: %s", o.pos[1],
			    strerror(errno));
			r = CLI_EXIT_ERROR;
		} else {
			tmp[0] = '\0';
			r = CLI_EXIT_OK;
		}
	}
out:
	if (to_file && fd >= 0)
		close(fd);
	if (tmp[0] != '\0')
		(void)unlink(tmp);
	free(url);
	free(cid);
	free(bot);
	free(rpath);
	cliapi_free(&o);
	return r;
}

const struct cli_cmd cli_get_entry = {
	"get", "--bot B [--computer C] REMOTE [LOCAL|-]", get_main
};

/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest get REMOTE LOCAL|-: download a file (or a range of it)
 * with file.read.  LOCAL is replaced only by a whole download.
 */
#include "autoconf.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli-guest.h"
#include "cli.h"

static int
guest_get(struct cliguest *g, int argc, char **argv)
{
	static const char		*usage = "REMOTE LOCAL [--offset N] "
	    "[--length N]";
	static const struct option	 opts[] = {
		{ "offset", required_argument, NULL, 'o' },
		{ "length", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 }
	};
	json_t		*args, *res = NULL;
	char		*tmp = NULL;
	const char	*local;
	int64_t		 v;
	int		 ch, fd = -1, r;

	args = json_object();
	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
		case 'l':
			if (cliguest_parse_int(optarg, 0, INT64_MAX, 10,
			    &v) != 0)
				goto usage;
			json_object_set_new(args, ch == 'o' ? "offset" :
			    "length", json_integer(v));
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2)
		goto usage;
	json_object_set_new(args, "path", json_string(argv[optind]));
	local = argv[optind + 1];
	if ((r = cliguest_connect(g)) != 0) {
		json_decref(args);
		return r;
	}
	if (strcmp(local, "-") == 0) {
		r = cliguest_stream_run(g, "file.read", args, -1, STDOUT_FILENO,
		    &res);
		json_decref(res);
		return r;
	}
	if ((fd = cliguest_get_temp(local, &tmp)) < 0) {
		cli_error("IO_ERROR: cannot create a file beside %s: %s",
		    local, strerror(errno));
		json_decref(args);
		return CLI_EXIT_ERROR;
	}
	r = cliguest_stream_run(g, "file.read", args, -1, fd, &res);
	json_decref(res);
	if (r == 0)
		r = cliguest_commit_temp(fd, tmp, local);
	else {
		close(fd);
		unlink(tmp);
	}
	free(tmp);
	return r;
usage:
	json_decref(args);
	return cliguest_usage("get", usage);
}

const struct cliguest_cmd cli_guest_get_entry = {
	"get", "REMOTE LOCAL|- [--offset N] [--length N]", guest_get
};

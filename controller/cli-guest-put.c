/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest put LOCAL|- REMOTE: upload a file (or standard input)
 * with file.write, streamed as guestd takes it.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli-guest.h"
#include "cli.h"

static int
guest_put(struct cliguest *g, int argc, char **argv)
{
	static const char		*usage = "LOCAL REMOTE [--mode OCTAL] "
	    "[--parents]";
	static const struct option	 opts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "parents", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 }
	};
	json_t		*args, *res = NULL;
	int64_t		 mode;
	int		 ch, fd, r;

	args = json_object();
	optind = 0;
	while ((ch = getopt_long(argc, argv, "p", opts, NULL)) != -1) {
		switch (ch) {
		case 'm':
			if (cliguest_parse_int(optarg, 0, 07777, 8, &mode) != 0)
				goto usage;
			json_object_set_new(args, "mode", json_integer(mode));
			break;
		case 'p':
			json_object_set_new(args, "parents", json_true());
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2)
		goto usage;
	json_object_set_new(args, "path", json_string(argv[optind + 1]));
	if (strcmp(argv[optind], "-") == 0)
		fd = dup(STDIN_FILENO);
	else
		fd = open(argv[optind], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cli_error("IO_ERROR: cannot open %s: %s", argv[optind],
		    strerror(errno));
		json_decref(args);
		return CLI_EXIT_ERROR;
	}
	if ((r = cliguest_connect(g)) == 0)
		r = cliguest_stream_run(g, "file.write", args, fd, -1, &res);
	else
		json_decref(args);
	close(fd);
	json_decref(res);
	return r;
usage:
	json_decref(args);
	return cliguest_usage("put", usage);
}

const struct cliguest_cmd cli_guest_put_entry = {
	"put", "LOCAL|- REMOTE [--mode OCTAL] [--parents]", guest_put
};

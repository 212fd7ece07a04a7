/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest export > FILE.tar and import < FILE.tar: the workspace
 * as one tar stream on standard output or input (workspace.export,
 * workspace.import, with --tag T the import's tag, which
 * workspace.imported reads back).  Two directions of one verb, so one
 * file.
 */
#include "autoconf.h"

#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli-guest.h"
#include "cli.h"

static int
guest_export(struct cliguest *g, int argc, char **argv)
{
	json_t	*res = NULL;
	int	 r;

	if (argc != 1)
		return cliguest_usage("export", "> FILE.tar");
	if (isatty(STDOUT_FILENO)) {
		cli_error("refusing to write a tar archive to a terminal; "
		    "redirect standard output");
		return CLI_EXIT_USAGE;
	}
	if ((r = cliguest_connect(g)) != 0)
		return r;
	r = cliguest_stream_run(g, "workspace.export", NULL, -1, STDOUT_FILENO,
	    &res);
	json_decref(res);
	return r;
}

static int
guest_import(struct cliguest *g, int argc, char **argv)
{
	json_t	*res = NULL, *args = NULL;
	int	 r;

	if (argc == 3 && strcmp(argv[1], "--tag") == 0)
		args = json_pack("{s:s}", "tag", argv[2]);
	else if (argc != 1)
		return cliguest_usage("import", "[--tag T] < FILE.tar");
	if (isatty(STDIN_FILENO)) {
		cli_error("refusing to read a tar archive from a terminal; "
		    "redirect standard input");
		json_decref(args);
		return CLI_EXIT_USAGE;
	}
	if ((r = cliguest_connect(g)) != 0) {
		json_decref(args);
		return r;
	}
	r = cliguest_stream_run(g, "workspace.import", args, STDIN_FILENO, -1,
	    &res);
	json_decref(res);
	return r;
}

const struct cliguest_cmd cli_guest_export_entry = {
	"export", "> FILE.tar", guest_export
};

const struct cliguest_cmd cli_guest_import_entry = {
	"import", "[--tag T] < FILE.tar", guest_import
};

/*
 * rakazoctl guest export > FILE.tar and import < FILE.tar: the workspace
 * as one tar stream on standard output or input (workspace.export,
 * workspace.import).  Two directions of one verb, so one file.
 */
#include "autoconf.h"

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
	json_t	*res = NULL;
	int	 r;

	if (argc != 1)
		return cliguest_usage("import", "< FILE.tar");
	if (isatty(STDIN_FILENO)) {
		cli_error("refusing to read a tar archive from a terminal; "
		    "redirect standard input");
		return CLI_EXIT_USAGE;
	}
	if ((r = cliguest_connect(g)) != 0)
		return r;
	r = cliguest_stream_run(g, "workspace.import", NULL, STDIN_FILENO, -1,
	    &res);
	json_decref(res);
	return r;
}

const struct cliguest_cmd cli_guest_export_entry = {
	"export", "> FILE.tar", guest_export
};

const struct cliguest_cmd cli_guest_import_entry = {
	"import", "< FILE.tar", guest_import
};

/*
 * rakazoctl guest ls [--json] [PATH]: list a directory with file.list,
 * one "type mode size name" line per entry.
 */
#include "autoconf.h"

#include <getopt.h>
#include <stdio.h>

#include <jansson.h>

#include "controller/cli.h"
#include "controller/cli-guest.h"
#include "controller/guest-client.h"

static void
guest_ls_print(json_t *res)
{
	json_t		*ents, *e, *mode;
	const char	*type, *name;
	size_t		 i;

	ents = json_object_get(res, "entries");
	json_array_foreach(ents, i, e) {
		type = json_string_value(json_object_get(e, "type"));
		name = json_string_value(json_object_get(e, "name"));
		mode = json_object_get(e, "mode");
		printf("%s ", type != NULL ? type : "?");
		if (json_is_integer(mode))
			printf("%04o", (unsigned)(json_integer_value(mode) &
			    07777));
		else if (json_is_string(mode))
			printf("%s", json_string_value(mode));
		else
			printf("????");
		printf(" %" JSON_INTEGER_FORMAT " %s\n",
		    json_integer_value(json_object_get(e, "size")),
		    name != NULL ? name : "?");
	}
	fflush(stdout);
	if (json_is_true(json_object_get(res, "truncated")))
		cli_error("the listing was truncated");
}

static int
guest_ls(struct cliguest *g, int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	json_t	*res = NULL;
	char	 err[CLIGUEST_ERRLEN];
	int	 ch, as_json = 0, r;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch != 'j')
			return cliguest_usage("ls", "[--json] [PATH]");
		as_json = 1;
	}
	if (argc - optind > 1)
		return cliguest_usage("ls", "[--json] [PATH]");
	if ((r = cliguest_connect(g)) != 0)
		return r;
	r = gclient_call(g->c, "file.list", cliguest_args(g, json_pack("{s:s}",
	    "path", optind < argc ? argv[optind] : ".")), &res, err,
	    sizeof(err));
	if (r != 0) {
		cli_error("%s", err);
		return CLI_EXIT_ERROR;
	}
	if (as_json)
		cliguest_print_json(res);
	else
		guest_ls_print(res);
	json_decref(res);
	return CLI_EXIT_OK;
}

const struct cliguest_cmd cli_guest_ls_entry = {
	"ls", "[--json] [PATH]", guest_ls
};

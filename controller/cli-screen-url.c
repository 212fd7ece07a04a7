/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl screen-url --bot B [--control]: a capability path for a
 * viewer of the bot's screen.  It is a secret: printed, never logged.
 */
#include "autoconf.h"

#include <stdio.h>

#include "cli.h"
#include "cli-api.h"

static int
screen_url_main(int argc, char **argv)
{
	struct cliapi	 o;
	json_t		*j = NULL;
	int		 r;

	if ((r = cliapi_parse(&o, argc, argv)) != CLI_EXIT_OK)
		return r;
	r = cliapi_tool(&o, "screen_url", json_pack("{s:s}", "policy",
	    o.control ? "control" : "view"), &j);
	if (r == CLI_EXIT_OK) {
		if (o.json)
			cliapi_print_json(j);
		else
			printf("%s\n", json_string_value(json_object_get(j,
			    "embed_url")) ?: json_string_value(json_object_get(j,
			    "path")) ?: "");
	}
	json_decref(j);
	cliapi_free(&o);
	return r;
}

const struct cli_cmd cli_screen_url_entry = {
	"screen-url", "--bot B [--computer C] [--control] [--json]",
	screen_url_main
};

/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl take-control --bot B / release-control LEASE: a user's control
 * lease (C-3) with its control screen and terminal pages (links a person
 * opens, not the websockets behind them); release revokes them at once.  The two verbs are one concern, so they share this file.
 */
#include "autoconf.h"

#include <stdio.h>

#include "cli.h"
#include "cli-api.h"

static int
take_control_main(int argc, char **argv)
{
	struct cliapi	 o;
	json_t		*j = NULL;
	char		 path[160];
	int		 r;

	if ((r = cliapi_parse(&o, argc, argv)) != CLI_EXIT_OK)
		return r;
	if (o.bot == NULL) {
		cliapi_free(&o);
		return cli_usage(&cli_take_control_entry);
	}
	snprintf(path, sizeof path, "/v1/computers/%s/control", o.computer);
	r = cliapi_call(&o, "POST", path, json_pack("{s:s}", "bot", o.bot),
	    &j);
	if (r == CLI_EXIT_OK) {
		if (o.json)
			cliapi_print_json(j);
		else
			printf("lease %s\nscreen %s\nterminal %s\n",
			    json_string_value(json_object_get(j, "id")),
			    json_string_value(json_object_get(json_object_get(j,
			    "screen"), "embed_url")) ?:
			    json_string_value(json_object_get(json_object_get(j,
			    "screen"), "path")) ?: "",
			    json_string_value(json_object_get(json_object_get(j,
			    "screen"), "terminal_page_url")) ?:
			    json_string_value(json_object_get(j,
			    "terminal_page_path")) ?: "");
	}
	json_decref(j);
	cliapi_free(&o);
	return r;
}

static int
release_control_main(int argc, char **argv)
{
	struct cliapi	 o;
	json_t		*j = NULL;
	char		 path[200];
	int		 r;

	if ((r = cliapi_parse(&o, argc, argv)) != CLI_EXIT_OK)
		return r;
	if (o.npos != 1) {
		cliapi_free(&o);
		return cli_usage(&cli_release_control_entry);
	}
	snprintf(path, sizeof path, "/v1/computers/%s/control/%s", o.computer,
	    o.pos[0]);
	if ((r = cliapi_call(&o, "DELETE", path, NULL, &j)) == CLI_EXIT_OK &&
	    !o.json)
		printf("released\n");
	else if (r == CLI_EXIT_OK)
		cliapi_print_json(j);
	json_decref(j);
	cliapi_free(&o);
	return r;
}

const struct cli_cmd cli_take_control_entry = {
	"take-control", "--bot B [--computer C] [--json]", take_control_main
};

const struct cli_cmd cli_release_control_entry = {
	"release-control", "[--computer C] LEASE", release_control_main
};

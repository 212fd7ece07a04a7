/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl checkpoint COMPUTER (C-5, C-8): save a running computer's
 * workspace as a new home revision now.
 */
#include "autoconf.h"

#include <stdio.h>

#include "cli.h"
#include "cli-api.h"

static int
checkpoint_main(int argc, char **argv)
{
	struct cliapi	 o;
	json_t		*j = NULL;
	char		 path[160];
	int		 r;

	if ((r = cliapi_parse(&o, argc, argv)) != CLI_EXIT_OK)
		return r;
	if (o.npos != 1) {
		cliapi_free(&o);
		return cli_usage(&cli_checkpoint_entry);
	}
	snprintf(path, sizeof path, "/v1/computers/%s/checkpoint", o.pos[0]);
	r = cliapi_call(&o, "POST", path, json_object(), &j);
	if (r == CLI_EXIT_OK) {
		if (o.json)
			cliapi_print_json(j);
		else
			printf("%s revision %lld (%lld bytes, %lld files)\n",
			    o.pos[0], (long long)json_integer_value(
			    json_object_get(j, "revision")),
			    (long long)json_integer_value(json_object_get(j,
			    "bytes")), (long long)json_integer_value(
			    json_object_get(j, "files")));
	}
	json_decref(j);
	cliapi_free(&o);
	return r;
}

const struct cli_cmd cli_checkpoint_entry = {
	"checkpoint", "COMPUTER [--json]", checkpoint_main
};

/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl open BOT: start the bot's desktop (and its computer, created
 * when missing) and print a view URL path for it.
 */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli-api.h"

static int
open_main(int argc, char **argv)
{
	struct cliapi	 o;
	json_t		*j = NULL;
	char		 path[160];
	int		 r;

	if ((r = cliapi_parse(&o, argc, argv)) != CLI_EXIT_OK)
		return r;
	if (o.npos != 1) {
		cliapi_free(&o);
		return cli_usage(&cli_open_entry);
	}
	o.bot = o.pos[0];
	/* The computer may not exist yet: create it quietly if so. */
	snprintf(path, sizeof path, "/v1/computers/%s", o.computer);
	{
		struct cliapi	 q = o;

		q.quiet = 1;
		if (cliapi_call(&q, "GET", path, NULL, NULL) != CLI_EXIT_OK &&
		    (r = cliapi_call(&o, "POST", "/v1/computers",
		    json_pack("{s:s}", "id", o.computer), NULL)) != CLI_EXIT_OK)
			goto out;
		memcpy(o.token, q.token, sizeof o.token);
	}
	if ((r = cliapi_tool(&o, "computer_observe", json_pack("{s:i}",
	    "max_width", 64), &j)) != CLI_EXIT_OK)
		goto out;
	json_decref(j);
	j = NULL;
	if ((r = cliapi_tool(&o, "screen_url", json_pack("{s:s}", "policy",
	    "view"), &j)) != CLI_EXIT_OK)
		goto out;
	if (o.json)
		cliapi_print_json(j);
	else
		printf("%s\n", json_string_value(json_object_get(j,
		    "embed_url")) ?: json_string_value(json_object_get(j,
		    "path")) ?: "");
out:
	json_decref(j);
	cliapi_free(&o);
	return r;
}

const struct cli_cmd cli_open_entry = {
	"open", "[--computer C] [--json] BOT", open_main
};

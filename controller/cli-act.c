/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl act --bot B 'JSON': apply actions (an array, or one action
 * object) to the bot's desktop with computer_act.
 */
#include "autoconf.h"

#include <stdio.h>

#include "cli.h"
#include "cli-api.h"

static int
act_main(int argc, char **argv)
{
	struct cliapi	 o;
	json_t		*j = NULL, *acts;
	json_error_t	 e;
	int		 r;

	if ((r = cliapi_parse(&o, argc, argv)) != CLI_EXIT_OK)
		return r;
	if (o.npos != 1) {
		cliapi_free(&o);
		return cli_usage(&cli_act_entry);
	}
	if ((acts = json_loads(o.pos[0], JSON_DECODE_ANY, &e)) == NULL ||
	    (!json_is_array(acts) && !json_is_object(acts))) {
		json_decref(acts);
		cli_error("BAD_JSON: the actions are not a JSON array or "
		    "object");
		cliapi_free(&o);
		return CLI_EXIT_USAGE;
	}
	r = cliapi_tool(&o, "computer_act", json_pack("{s:o}",
	    json_is_array(acts) ? "actions" : "action", acts), &j);
	if (r == CLI_EXIT_OK) {
		if (o.json)
			cliapi_print_json(j);
		else
			printf("completed %lld\n", (long long)json_integer_value(
			    json_object_get(j, "completed")));
	}
	json_decref(j);
	cliapi_free(&o);
	return r;
}

const struct cli_cmd cli_act_entry = {
	"act", "--bot B [--computer C] 'ACTIONS-JSON'", act_main
};

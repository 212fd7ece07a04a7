/*
 * rakazoctl health: is the controller up, which provider, is the store ok.
 */
#include "autoconf.h"

#include <stdio.h>

#include "cli.h"
#include "cli-api.h"

static int
health_main(int argc, char **argv)
{
	struct cliapi	 o;
	json_t		*j = NULL;
	int		 r;

	if ((r = cliapi_parse(&o, argc, argv)) != CLI_EXIT_OK)
		return r;
	if ((r = cliapi_call(&o, "GET", "/internal/health", NULL, &j)) ==
	    CLI_EXIT_OK) {
		if (o.json)
			cliapi_print_json(j);
		else
			printf("state: %s\nsandbox: %s\n",
			    json_string_value(json_object_get(j, "state")),
			    json_string_value(json_object_get(j, "sandbox")));
	}
	json_decref(j);
	cliapi_free(&o);
	return r;
}

const struct cli_cmd cli_health_entry = {
	"health", "[--url URL] [--json]", health_main
};

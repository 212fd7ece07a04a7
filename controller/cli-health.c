/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl health: is the controller up, which provider, is the store ok.
 * A degraded controller answers 503 with the same report: printed too,
 * and the exit status says it.
 */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli-api.h"

static int
health_main(int argc, char **argv)
{
	struct cliapi	 o;
	json_t		*j = NULL, *st;
	const char	*code, *state;
	int		 r;

	if ((r = cliapi_parse(&o, argc, argv)) != CLI_EXIT_OK)
		return r;
	o.any_reply = 1;
	r = cliapi_call(&o, "GET", "/internal/health", NULL, &j);
	if (j != NULL && o.json)
		cliapi_print_json(j);
	else if (j != NULL) {
		printf("state: %s\nsandbox: %s\n",
		    json_string_value(json_object_get(j, "state")),
		    json_string_value(json_object_get(j, "sandbox")));
		/* The store only when it fails: what scripts read stays. */
		st = json_object_get(j, "store");
		state = json_string_value(json_object_get(st, "state"));
		code = json_string_value(json_object_get(st, "code"));
		if (state != NULL && strcmp(state, "ok") != 0)
			printf("store: %s (%s)\n", state, code != NULL ?
			    code : "?");
	}
	json_decref(j);
	cliapi_free(&o);
	return r;
}

const struct cli_cmd cli_health_entry = {
	"health", "[--url URL] [--json]", health_main
};

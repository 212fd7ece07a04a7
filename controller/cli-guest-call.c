/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest call OP [JSON-ARGS]: any protocol op, its result
 * printed as JSON; for tests and for ops no verb maps.
 */
#include "autoconf.h"

#include <jansson.h>

#include "cli-guest.h"
#include "cli.h"

static int
guest_call_verb(struct cliguest *g, int argc, char **argv)
{
	json_t		*args = NULL;
	json_error_t	 je;

	if (argc < 2 || argc > 3)
		return cliguest_usage("call", "OP [JSON-ARGS]");
	if (argc == 3) {
		args = json_loads(argv[2], JSON_REJECT_DUPLICATES, &je);
		if (!json_is_object(args)) {
			json_decref(args);
			cli_error("JSON-ARGS must be a JSON object");
			return cliguest_usage("call", "OP [JSON-ARGS]");
		}
	}
	return cliguest_simple(g, argv[1], args, 1);
}

const struct cliguest_cmd cli_guest_call_entry = {
	"call", "OP [JSON-ARGS]", guest_call_verb
};

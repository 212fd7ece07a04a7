/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest act BOT 'JSON-ACTIONS': one batch of input actions on
 * the bot's desktop (display.act).
 */
#include "autoconf.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>

#include <jansson.h>

#include "cli-guest.h"
#include "cli.h"

static int
guest_act(struct cliguest *g, int argc, char **argv)
{
	static const char		*usage = "BOT [--scale S] "
	    "'JSON-ACTIONS'";
	static const struct option	 opts[] = {
		{ "scale", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 }
	};
	json_t			*args, *actions;
	json_error_t		 je;
	char			*ep;
	double			 scale = 0;
	int			 ch, r;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch != 's')
			return cliguest_usage("act", usage);
		errno = 0;
		scale = strtod(optarg, &ep);
		if (*optarg == '\0' || *ep != '\0' || errno != 0 ||
		    !(scale > 0))
			return cliguest_usage("act", usage);
	}
	if (argc - optind != 2)
		return cliguest_usage("act", usage);
	actions = json_loads(argv[optind + 1], JSON_REJECT_DUPLICATES, &je);
	if (!json_is_array(actions)) {
		json_decref(actions);
		cli_error("JSON-ACTIONS must be a JSON array of actions");
		return cliguest_usage("act", usage);
	}
	g->bot = argv[optind];
	args = json_pack("{s:o}", "actions", actions);
	if (scale > 0)
		json_object_set_new(args, "scale", json_real(scale));
	if ((r = cliguest_connect(g)) != 0) {
		json_decref(args);
		return r;
	}
	return cliguest_run_batch(g, "display.act", args);
}

const struct cliguest_cmd cli_guest_act_entry = {
	"act", "BOT [--scale S] 'JSON-ACTIONS'", guest_act
};

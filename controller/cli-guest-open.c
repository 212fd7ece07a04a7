/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest open BOT [--geometry WxH]: start the bot's desktop
 * (display.open).  The verb's BOT wins over a global --bot.
 */
#include "autoconf.h"

#include <getopt.h>
#include <stdint.h>

#include <jansson.h>

#include "cli-guest.h"
#include "cli.h"

static int
guest_open(struct cliguest *g, int argc, char **argv)
{
	static const char		*usage = "BOT [--geometry WxH]";
	static const struct option	 opts[] = {
		{ "geometry", required_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 }
	};
	json_t		*args;
	int64_t		 w, h;
	int		 ch;

	args = json_object();
	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch != 'g' || cliguest_parse_size(optarg, 65535, &w,
		    &h) != 0) {
			json_decref(args);
			return cliguest_usage("open", usage);
		}
		json_object_set_new(args, "width", json_integer(w));
		json_object_set_new(args, "height", json_integer(h));
	}
	if (argc - optind != 1) {
		json_decref(args);
		return cliguest_usage("open", usage);
	}
	/* The verb's BOT wins over a global --bot. */
	g->bot = argv[optind];
	return cliguest_simple(g, "display.open", args, 1);
}

const struct cliguest_cmd cli_guest_open_entry = {
	"open", "BOT [--geometry WxH]", guest_open
};

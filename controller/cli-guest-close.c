/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest close BOT: stop the bot's desktop (display.close).
 */
#include "autoconf.h"

#include "cli-guest.h"
#include "cli.h"

static int
guest_close(struct cliguest *g, int argc, char **argv)
{
	if (argc != 2)
		return cliguest_usage("close", "BOT");
	g->bot = argv[1];
	return cliguest_simple(g, "display.close", NULL, 1);
}

const struct cliguest_cmd cli_guest_close_entry = {
	"close", "BOT", guest_close
};

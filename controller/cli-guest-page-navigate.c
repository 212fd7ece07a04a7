/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest page-navigate BOT URL: load URL in the bot's browser
 * page (page.navigate, doc/DESIGN.md G-24).
 */
#include "autoconf.h"

#include <jansson.h>

#include "cli-guest.h"
#include "cli.h"

static int
guest_page_navigate(struct cliguest *g, int argc, char **argv)
{
	if (argc != 3)
		return cliguest_usage("page-navigate", "BOT URL");
	g->bot = argv[1];
	return cliguest_simple(g, "page.navigate", json_pack("{s:s}", "url",
	    argv[2]), 1);
}

const struct cliguest_cmd cli_guest_page_navigate_entry = {
	"page-navigate", "BOT URL", guest_page_navigate
};

/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest browser BOT [URL]: the bot's browser (doc/DESIGN.md G-21).
 */
#include "autoconf.h"

#include <jansson.h>

#include "cli-guest.h"
#include "cli.h"

/* browser BOT [URL]: open (or focus) the bot's browser. */
static int
guest_browser(struct cliguest *g, int argc, char **argv)
{
	if (argc < 2 || argc > 3)
		return cliguest_usage("browser", "BOT [URL]");
	g->bot = argv[1];
	return cliguest_simple(g, "browser.open", argc == 3 ?
	    json_pack("{s:s}", "url", argv[2]) : NULL, 1);
}

const struct cliguest_cmd cli_guest_browser_entry = {
	"browser", "BOT [URL]", guest_browser
};

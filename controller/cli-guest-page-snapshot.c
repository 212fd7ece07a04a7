/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest page-snapshot BOT: what the bot's browser page shows,
 * as guestd's page.snapshot describes it (doc/DESIGN.md G-24).
 */
#include "autoconf.h"

#include "cli-guest.h"
#include "cli.h"

static int
guest_page_snapshot(struct cliguest *g, int argc, char **argv)
{
	if (argc != 2)
		return cliguest_usage("page-snapshot", "BOT");
	g->bot = argv[1];
	return cliguest_simple(g, "page.snapshot", NULL, 1);
}

const struct cliguest_cmd cli_guest_page_snapshot_entry = {
	"page-snapshot", "BOT", guest_page_snapshot
};

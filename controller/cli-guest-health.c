/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest health: is guestd up, and what it says about itself
 * (doc/DESIGN.md G-31).  health takes no arguments, not even --bot or --fence.
 */
#include "autoconf.h"

#include "cli-guest.h"
#include "cli.h"

static int
guest_health(struct cliguest *g, int argc, char **argv)
{
	if (argc != 1)
		return cliguest_usage("health", "");
	return cliguest_simple(g, "health", NULL, 1);
}

const struct cliguest_cmd cli_guest_health_entry = {
	"health", "", guest_health
};

/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest revoke TOKEN: end a capability (capability.revoke) and
 * the viewers and terminals connected with it.
 */
#include "autoconf.h"

#include <jansson.h>

#include "cli-guest.h"
#include "cli.h"

static int
guest_revoke(struct cliguest *g, int argc, char **argv)
{
	if (argc != 2)
		return cliguest_usage("revoke", "TOKEN");
	return cliguest_simple(g, "capability.revoke", json_pack("{s:s}",
	    "token", argv[1]), 1);
}

const struct cliguest_cmd cli_guest_revoke_entry = {
	"revoke", "TOKEN", guest_revoke
};

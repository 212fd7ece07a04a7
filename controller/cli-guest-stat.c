/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest stat PATH: file.stat, printed as JSON.
 */
#include "autoconf.h"

#include <jansson.h>

#include "cli-guest.h"
#include "cli.h"

static int
guest_stat(struct cliguest *g, int argc, char **argv)
{
	if (argc != 2)
		return cliguest_usage("stat", "PATH");
	return cliguest_simple(g, "file.stat", json_pack("{s:s}", "path",
	    argv[1]), 1);
}

const struct cliguest_cmd cli_guest_stat_entry = {
	"stat", "PATH", guest_stat
};

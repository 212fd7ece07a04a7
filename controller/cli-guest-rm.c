/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest rm [-r] PATH: file.remove.
 */
#include "autoconf.h"

#include "cli-guest.h"
#include "cli.h"

static int
guest_rm(struct cliguest *g, int argc, char **argv)
{
	return cliguest_path_flag(g, argc, argv, "file.remove", "r",
	    "recursive", "[-r] PATH");
}

const struct cliguest_cmd cli_guest_rm_entry = {
	"rm", "[-r] PATH", guest_rm
};

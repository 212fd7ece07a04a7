/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest mkdir [-p] PATH: file.mkdir.
 */
#include "autoconf.h"

#include "cli-guest.h"
#include "cli.h"

static int
guest_mkdir(struct cliguest *g, int argc, char **argv)
{
	return cliguest_path_flag(g, argc, argv, "file.mkdir", "p", "parents",
	    "[-p] PATH");
}

const struct cliguest_cmd cli_guest_mkdir_entry = {
	"mkdir", "[-p] PATH", guest_mkdir
};

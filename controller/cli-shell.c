/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl shell --bot B [--computer C] -- COMMAND...: run a command
 * through the shell tool; prints its output and exits with its status.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli-api.h"
#include "xmalloc.h"

static int
shell_main(int argc, char **argv)
{
	struct cliapi	 o;
	json_t		*j = NULL, *code;
	char		*cmd;
	size_t		 len = 0;
	int		 r, i;

	if ((r = cliapi_parse(&o, argc, argv)) != CLI_EXIT_OK)
		return r;
	if (o.npos < 1) {
		cliapi_free(&o);
		return cli_usage(&cli_shell_entry);
	}
	for (i = 0; i < o.npos; i++)
		len += strlen(o.pos[i]) + 1;
	cmd = xcalloc(1, len + 1);
	for (i = 0; i < o.npos; i++) {
		if (i > 0)
			strcat(cmd, " ");
		strcat(cmd, o.pos[i]);
	}
	r = cliapi_tool(&o, "shell", json_pack("{s:s}", "command", cmd), &j);
	free(cmd);
	if (r == CLI_EXIT_OK) {
		if (o.json)
			cliapi_print_json(j);
		else {
			fputs(json_string_value(json_object_get(j,
			    "stdout")) ?: "", stdout);
			fputs(json_string_value(json_object_get(j,
			    "stderr")) ?: "", stderr);
		}
		code = json_object_get(j, "exit_code");
		if (!o.json)
			r = code != NULL ? (int)(json_integer_value(code) &
			    255) : 128 + (int)(json_integer_value(
			    json_object_get(j, "signal")) & 127);
	}
	json_decref(j);
	cliapi_free(&o);
	return r;
}

const struct cli_cmd cli_shell_entry = {
	"shell", "--bot B [--computer C] [--json] -- COMMAND...", shell_main
};

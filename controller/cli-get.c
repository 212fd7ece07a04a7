/*
 * rakazoctl get --bot B REMOTE [LOCAL]: download a file with read_file
 * (to stdout without LOCAL).
 */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli-api.h"
#include "tool.h"

extern const struct cli_cmd	cli_get_entry;

static int
get_main(int argc, char **argv)
{
	struct cliapi	 o;
	json_t		*j = NULL, *c;
	FILE		*f;
	void		*data = NULL;
	size_t		 n = 0;
	int		 r;

	if ((r = cliapi_parse(&o, argc, argv)) != CLI_EXIT_OK)
		return r;
	if (o.npos < 1 || o.npos > 2) {
		cliapi_free(&o);
		return cli_usage(&cli_get_entry);
	}
	r = cliapi_tool(&o, "read_file", json_pack("{s:s}", "path", o.pos[0]),
	    &j);
	if (r != CLI_EXIT_OK)
		goto out;
	if ((c = json_object_get(j, "content")) != NULL) {
		n = json_string_length(c);
		data = malloc(n + 1);
		memcpy(data, json_string_value(c), n);
	} else if (tool_unbase64(json_string_value(json_object_get(j,
	    "content_base64")) ?: "", &data, &n) != 0) {
		cli_error("PROTOCOL_ERROR: the reply's content is not base64");
		r = CLI_EXIT_ERROR;
		goto out;
	}
	f = o.npos == 2 ? fopen(o.pos[1], "wb") : stdout;
	if (f == NULL || fwrite(data, 1, n, f) != n ||
	    (f != stdout && fclose(f) != 0)) {
		cli_error("IO_ERROR: cannot write the output: %s",
		    strerror(errno));
		r = CLI_EXIT_ERROR;
	}
	if (f == stdout)
		fflush(stdout);
out:
	free(data);
	json_decref(j);
	cliapi_free(&o);
	return r;
}

const struct cli_cmd cli_get_entry = {
	"get", "--bot B [--computer C] REMOTE [LOCAL]", get_main
};

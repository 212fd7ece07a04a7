/*
 * rakazoctl put --bot B LOCAL REMOTE: upload a file with write_file
 * (base64 in the JSON body, so at most ~760 KiB within the API's 1 MiB
 * body limit).
 */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli-api.h"
#include "log.h"
#include "tool.h"

extern const struct cli_cmd	cli_put_entry;

static int
put_main(int argc, char **argv)
{
	struct cliapi	 o;
	json_t		*j = NULL;
	FILE		*f;
	char		*data = NULL, *b64;
	size_t		 n = 0, cap = 0, rd;
	int		 r;

	if ((r = cliapi_parse(&o, argc, argv)) != CLI_EXIT_OK)
		return r;
	if (o.npos != 2) {
		cliapi_free(&o);
		return cli_usage(&cli_put_entry);
	}
	if ((f = strcmp(o.pos[0], "-") == 0 ? stdin :
	    fopen(o.pos[0], "rb")) == NULL) {
		cli_error("IO_ERROR: %s: %s", o.pos[0], strerror(errno));
		cliapi_free(&o);
		return CLI_EXIT_ERROR;
	}
	do {
		if (n + 65536 > cap)
			data = xrealloc(data, cap = (n + 65536) * 2);
		rd = fread(data + n, 1, cap - n, f);
		n += rd;
	} while (rd > 0);
	if (f != stdin)
		fclose(f);
	b64 = tool_base64(data, n);
	free(data);
	r = cliapi_tool(&o, "write_file", json_pack("{s:s, s:s}", "path",
	    o.pos[1], "content_base64", b64), &j);
	free(b64);
	if (r == CLI_EXIT_OK) {
		if (o.json)
			cliapi_print_json(j);
		else
			printf("%s: %zu bytes\n", o.pos[1], n);
	}
	json_decref(j);
	cliapi_free(&o);
	return r;
}

const struct cli_cmd cli_put_entry = {
	"put", "--bot B [--computer C] LOCAL|- REMOTE", put_main
};

/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl screenshot --bot B FILE: the bot's desktop (started on
 * demand) written to FILE, as JPEG when FILE ends in .jpg or .jpeg, else
 * as PNG: a viewer trusts the name more than the bytes.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "cli-api.h"
#include "tool.h"

/* "jpeg" for a name ending in .jpg or .jpeg (any case), else "png". */
static const char *
screenshot_format(const char *path)
{
	const char	*dot = strrchr(path, '.');

	if (dot != NULL && strchr(dot, '/') == NULL &&
	    (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0))
		return "jpeg";
	return "png";
}

static int
screenshot_main(int argc, char **argv)
{
	struct cliapi	 o;
	json_t		*j = NULL;
	void		*img = NULL;
	size_t		 n = 0;
	FILE		*f;
	int		 r;

	if ((r = cliapi_parse(&o, argc, argv)) != CLI_EXIT_OK)
		return r;
	if (o.npos != 1) {
		cliapi_free(&o);
		return cli_usage(&cli_screenshot_entry);
	}
	r = cliapi_tool(&o, "computer_observe", json_pack("{s:s}", "format",
	    screenshot_format(o.pos[0])), &j);
	if (r != CLI_EXIT_OK)
		goto out;
	if (tool_unbase64(json_string_value(json_object_get(j, "image")) ?:
	    "", &img, &n) != 0 || n == 0) {
		cli_error("PROTOCOL_ERROR: the reply carries no image");
		r = CLI_EXIT_ERROR;
		goto out;
	}
	if ((f = fopen(o.pos[0], "wb")) == NULL || fwrite(img, 1, n, f) != n ||
	    fclose(f) != 0) {
		cli_error("IO_ERROR: %s: %s", o.pos[0], strerror(errno));
		r = CLI_EXIT_ERROR;
		goto out;
	}
	if (o.json) {
		json_object_del(j, "image");
		cliapi_print_json(j);
	} else
		printf("%s: %lldx%lld, frame %lld\n", o.pos[0],
		    (long long)json_integer_value(json_object_get(j, "width")),
		    (long long)json_integer_value(json_object_get(j,
		    "height")),
		    (long long)json_integer_value(json_object_get(j, "frame")));
out:
	free(img);
	json_decref(j);
	cliapi_free(&o);
	return r;
}

const struct cli_cmd cli_screenshot_entry = {
	"screenshot", "--bot B [--computer C] FILE.png|FILE.jpg", screenshot_main
};

/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl homes COMPUTER (C-5, C-9): the computer's stored home
 * revisions, newest first: revision, time, size, files, cause.
 */
#include "autoconf.h"

#include <stdio.h>
#include <time.h>

#include "cli.h"
#include "cli-api.h"

static void
homes_line(json_t *h)
{
	char		 when[32];
	time_t		 t;
	struct tm	 tm;

	t = (time_t)(json_integer_value(json_object_get(h, "created_ms")) /
	    1000);
	if (gmtime_r(&t, &tm) == NULL || strftime(when, sizeof when,
	    "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(when, sizeof when, "-");
	printf("%-6lld %-20s %12lld %8lld  %s\n",
	    (long long)json_integer_value(json_object_get(h, "revision")),
	    when, (long long)json_integer_value(json_object_get(h, "bytes")),
	    (long long)json_integer_value(json_object_get(h, "files")),
	    json_string_value(json_object_get(h, "cause")));
}

static int
homes_main(int argc, char **argv)
{
	struct cliapi	 o;
	json_t		*j = NULL, *h;
	char		 path[160];
	size_t		 i;
	int		 r;

	if ((r = cliapi_parse(&o, argc, argv)) != CLI_EXIT_OK)
		return r;
	if (o.npos != 1) {
		cliapi_free(&o);
		return cli_usage(&cli_homes_entry);
	}
	snprintf(path, sizeof path, "/v1/computers/%s/homes", o.pos[0]);
	r = cliapi_call(&o, "GET", path, NULL, &j);
	if (r == CLI_EXIT_OK) {
		if (o.json)
			cliapi_print_json(j);
		else {
			printf("%-6s %-20s %12s %8s  %s\n", "REV", "TIME",
			    "BYTES", "FILES", "CAUSE");
			json_array_foreach(json_object_get(j, "revisions"), i,
			    h)
				homes_line(h);
		}
	}
	json_decref(j);
	cliapi_free(&o);
	return r;
}

const struct cli_cmd cli_homes_entry = {
	"homes", "COMPUTER [--json]", homes_main
};

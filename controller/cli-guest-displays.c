/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest displays [--json]: the open desktops (display.list),
 * one line each.
 */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli-guest.h"
#include "cli.h"
#include "err.h"
#include "guest-client.h"

/* One display as "bot display WxH since idle controlled". */
static void
guest_displays_line(json_t *d)
{
	const char	*bot, *dpy;
	char		 since[32] = "-";
	struct tm	 tm;
	json_int_t	 ms;
	time_t		 t;

	bot = json_string_value(json_object_get(d, "bot"));
	dpy = json_string_value(json_object_get(d, "display"));
	ms = json_integer_value(json_object_get(d, "since_ms"));
	t = (time_t)(ms / 1000);
	if (ms > 0 && gmtime_r(&t, &tm) != NULL)
		strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("%s %s %" JSON_INTEGER_FORMAT "x%" JSON_INTEGER_FORMAT
	    " %s %.1fs %s\n", bot != NULL ? bot : "?",
	    dpy != NULL ? dpy : "?",
	    json_integer_value(json_object_get(d, "width")),
	    json_integer_value(json_object_get(d, "height")), since,
	    (double)json_integer_value(json_object_get(d, "idle_ms")) / 1000,
	    json_is_true(json_object_get(d, "controlled")) ? "controlled" :
	    "free");
}

static int
guest_displays(struct cliguest *g, int argc, char **argv)
{
	json_t	*res = NULL, *d;
	struct errmsg	 err;
	size_t	 i;
	int	 as_json = 0, r;

	if (argc == 2 && strcmp(argv[1], "--json") == 0)
		as_json = 1;
	else if (argc != 1)
		return cliguest_usage("displays", "[--json]");
	if ((r = cliguest_connect(g)) != 0)
		return r;
	/* display.list takes no arguments: no bot, no fence. */
	r = gclient_call(g->c, "display.list", json_object(), &res, &err);
	if (r != 0) {
		cli_error("%s", err.msg);
		return CLI_EXIT_ERROR;
	}
	if (as_json)
		cliguest_print_json(res);
	else {
		json_array_foreach(json_object_get(res, "displays"), i, d)
			guest_displays_line(d);
		fflush(stdout);
	}
	json_decref(res);
	return CLI_EXIT_OK;
}

const struct cliguest_cmd cli_guest_displays_entry = {
	"displays", "[--json]", guest_displays
};

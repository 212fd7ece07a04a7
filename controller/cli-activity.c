/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl activity [--follow]: the computer's computer.command events
 * (G-30), oldest first.  --follow long-polls: each request names the last
 * event seen and a wait, and the server answers as soon as a newer event is
 * recorded (or the wait ends, then we ask again), so events show up at
 * once without a request a second.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli.h"
#include "cli-api.h"

/* Below any proxy's idle timeout; the server caps it at 60 s anyway. */
#define ACTIVITY_WAIT_MS	25000

static void
activity_print(json_t *e)
{
	time_t		 t = (time_t)(json_integer_value(json_object_get(e,
			    "ts_ms")) / 1000);
	struct tm	 tm;
	char		 ts[32];

	gmtime_r(&t, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("%s %-12s %-14s %s %s\n", ts,
	    json_string_value(json_object_get(e, "bot")),
	    json_string_value(json_object_get(e, "tool")),
	    json_is_true(json_object_get(e, "ok")) ? "ok  " : "FAIL",
	    json_string_value(json_object_get(e, "text")));
}

static int
activity_main(int argc, char **argv)
{
	struct cliapi	 o;
	json_t		*j, *e;
	char		 path[200];
	long long	 after = 0;
	size_t		 i;
	int		 r;

	if ((r = cliapi_parse(&o, argc, argv)) != CLI_EXIT_OK)
		return r;
	for (;;) {
		snprintf(path, sizeof path, "/v1/computers/%s/activity?"
		    "after=%lld&limit=1000&wait_ms=%d", o.computer, after,
		    o.follow ? ACTIVITY_WAIT_MS : 0);
		if ((r = cliapi_call(&o, "GET", path, NULL, &j)) !=
		    CLI_EXIT_OK)
			break;
		json_array_foreach(json_object_get(j, "events"), i, e) {
			if (o.json) {
				char *s = json_dumps(e, JSON_COMPACT);
				printf("%s\n", s);
				free(s);
			} else
				activity_print(e);
		}
		after = json_integer_value(json_object_get(j, "next"));
		fflush(stdout);
		json_decref(j);
		if (!o.follow)
			break;
	}
	cliapi_free(&o);
	return r;
}

const struct cli_cmd cli_activity_entry = {
	"activity", "[--computer C] [--follow] [--json]", activity_main
};

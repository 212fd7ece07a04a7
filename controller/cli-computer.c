/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl computer create|list|show|stop|delete (C-5).
 */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli-api.h"

static void
computer_line(json_t *c)
{
	printf("%-24s %-8s %-8s\n",
	    json_string_value(json_object_get(c, "id")),
	    json_string_value(json_object_get(c, "state")),
	    json_string_value(json_object_get(c, "provider")));
}

/* show: the newest stored revision (C-5), or that there is none. */
static void
home_line(json_t *h)
{
	char		 when[32];
	time_t		 t;
	struct tm	 tm;

	if (!json_is_object(h)) {
		printf("home: no revision stored\n");
		return;
	}
	t = (time_t)(json_integer_value(json_object_get(h, "created_ms")) /
	    1000);
	if (gmtime_r(&t, &tm) == NULL || strftime(when, sizeof when,
	    "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(when, sizeof when, "-");
	printf("home: revision %lld at %s, %lld bytes, %lld files\n",
	    (long long)json_integer_value(json_object_get(h, "revision")),
	    when, (long long)json_integer_value(json_object_get(h, "bytes")),
	    (long long)json_integer_value(json_object_get(h, "files")));
}

static int
computer_main(int argc, char **argv)
{
	struct cliapi	 o;
	json_t		*j = NULL, *c, *body;
	const char	*sub, *id;
	char		 path[160];
	size_t		 i;
	int		 r;

	if ((r = cliapi_parse(&o, argc, argv)) != CLI_EXIT_OK)
		return r;
	if (o.npos < 1) {
		cliapi_free(&o);
		return cli_usage(&cli_computer_entry);
	}
	sub = o.pos[0];
	id = o.npos > 1 ? o.pos[1] : NULL;
	if (strcmp(sub, "list") == 0)
		r = cliapi_call(&o, "GET", "/v1/computers", NULL, &j);
	else if (strcmp(sub, "create") == 0) {
		body = json_object();
		if (id != NULL)
			json_object_set_new(body, "id", json_string(id));
		if (o.start)
			json_object_set_new(body, "start", json_true());
		r = cliapi_call(&o, "POST", "/v1/computers", body, &j);
	} else if (id == NULL ||
	    (strcmp(sub, "show") != 0 && strcmp(sub, "stop") != 0 &&
	    strcmp(sub, "delete") != 0)) {
		cliapi_free(&o);
		return cli_usage(&cli_computer_entry);
	} else if (strcmp(sub, "show") == 0) {
		snprintf(path, sizeof path, "/v1/computers/%s", id);
		r = cliapi_call(&o, "GET", path, NULL, &j);
	} else {
		snprintf(path, sizeof path, "/v1/computers/%s%s", id,
		    strcmp(sub, "stop") == 0 ? "/stop" : "");
		body = json_object();
		if (o.force)
			json_object_set_new(body, "force", json_true());
		r = cliapi_call(&o, strcmp(sub, "stop") == 0 ? "POST" :
		    "DELETE", path, body, &j);
	}
	if (r == CLI_EXIT_OK) {
		if (o.json)
			cliapi_print_json(j);
		else if (strcmp(sub, "list") == 0) {
			json_array_foreach(json_object_get(j, "computers"), i,
			    c)
				computer_line(c);
		} else if (strcmp(sub, "delete") == 0)
			printf("deleted %s\n", id);
		else {
			computer_line(j);
			if (strcmp(sub, "show") == 0)
				home_line(json_object_get(j, "home"));
		}
	}
	json_decref(j);
	cliapi_free(&o);
	return r;
}

const struct cli_cmd cli_computer_entry = {
	"computer", "create [ID] [--start] | list | show ID | stop ID [--force]"
	    " | delete ID [--force]", computer_main
};

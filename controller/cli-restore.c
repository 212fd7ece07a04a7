/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl restore COMPUTER [--revision N] [--force] (C-5): bring a
 * stored revision (default the newest) back into the computer, starting
 * it if need be.  The restore is itself recorded as a new revision, so
 * the revisions after N stay in the store.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli-api.h"

static int
restore_main(int argc, char **argv)
{
	struct cliapi	 o;
	json_t		*j = NULL, *body;
	char		 path[160], **av, *end;
	long long	 rev = 0;
	int		 r, i, ac = 0;

	/* --revision is this verb's own: take it out before the rest. */
	av = calloc((size_t)argc + 1, sizeof *av);
	if (av == NULL)
		return CLI_EXIT_ERROR;
	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--revision") == 0 && i + 1 < argc) {
			rev = strtoll(argv[++i], &end, 10);
			if (*argv[i] == '\0' || *end != '\0' || rev < 1) {
				free(av);
				cli_error("--revision wants a positive number");
				return CLI_EXIT_USAGE;
			}
			continue;
		}
		av[ac++] = argv[i];
	}
	r = cliapi_parse(&o, ac, av);
	free(av);
	if (r != CLI_EXIT_OK)
		return r;
	if (o.npos != 1) {
		cliapi_free(&o);
		return cli_usage(&cli_restore_entry);
	}
	snprintf(path, sizeof path, "/v1/computers/%s/restore", o.pos[0]);
	body = json_object();
	if (rev > 0)
		json_object_set_new(body, "revision", json_integer(rev));
	if (o.force)
		json_object_set_new(body, "force", json_true());
	r = cliapi_call(&o, "POST", path, body, &j);
	if (r == CLI_EXIT_OK) {
		if (o.json)
			cliapi_print_json(j);
		else
			printf("%s restored; now revision %lld (%lld bytes)\n",
			    o.pos[0], (long long)json_integer_value(
			    json_object_get(j, "revision")),
			    (long long)json_integer_value(json_object_get(j,
			    "bytes")));
	}
	json_decref(j);
	cliapi_free(&o);
	return r;
}

const struct cli_cmd cli_restore_entry = {
	"restore", "COMPUTER [--revision N] [--force] [--json]", restore_main
};

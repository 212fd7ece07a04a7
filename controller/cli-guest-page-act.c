/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest page-act BOT 'JSON-STEPS': one batch of steps on the
 * bot's browser page (page.act, doc/DESIGN.md G-24).
 */
#include "autoconf.h"

#include <jansson.h>

#include "cli-guest.h"
#include "cli.h"

/* page-act BOT JSON: JSON is the steps array or {"steps": [...]}. */
static int
guest_page_act(struct cliguest *g, int argc, char **argv)
{
	json_error_t		 je;
	json_t			*j;
	int			 r;

	if (argc != 3)
		return cliguest_usage("page-act", "BOT 'JSON-STEPS'");
	j = json_loads(argv[2], JSON_REJECT_DUPLICATES, &je);
	if (json_is_array(j))
		j = json_pack("{s:o}", "steps", j);
	if (!json_is_object(j)) {
		json_decref(j);
		cli_error("JSON-STEPS must be an array of steps or "
		    "{\"steps\": [...]}");
		return cliguest_usage("page-act", "BOT 'JSON-STEPS'");
	}
	g->bot = argv[1];
	if ((r = cliguest_connect(g)) != 0) {
		json_decref(j);
		return r;
	}
	/* As act: a failure's progress (completed, uncertain, fallback)
	 * goes to standard output as JSON. */
	return cliguest_run_batch(g, "page.act", j);
}

const struct cliguest_cmd cli_guest_page_act_entry = {
	"page-act", "BOT 'JSON-STEPS'", guest_page_act
};

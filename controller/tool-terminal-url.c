/* SPDX-License-Identifier: MIT */
/*
 * terminal_url (G-18): a control capability whose /term/<token> path opens
 * interactive shells next to the bot's screen.
 */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "tool.h"
#include "tool-screen-url.h"

static int
terminal_url_run(struct tool_ctx *t, json_t **result, struct errmsg *err)
{
	static const char *const keys[] = { "ttl", NULL };
	const char	*tok;
	char		 path[128];
	int64_t		 ttl = 0;
	char		 e[JSONX_ERRLEN];
	int		 r;

	if ((r = tool_only_keys(t, keys, err)) != 0)
		return r;
	if ((r = jsonx_int(t->args, "ttl", 1, 30 * 86400, &ttl, e)) != 0 &&
	    r != ERR_NOT_FOUND) {
		errmsg_set(err, r, "%s", e);
		return r;
	}
	if ((r = screen_url_grant(t, "control", ttl, result, err)) != 0)
		return r;
	tok = json_string_value(json_object_get(*result, "token"));
	if (tok != NULL && strlen(tok) < 100) {
		snprintf(path, sizeof path, "/term/%s", tok);
		json_object_set_new(*result, "path", json_string(path));
	}
	return 0;
}

const struct tool_entry tool_terminal_url_entry = {
	.name = "terminal_url",
	.description = "A capability URL path for interactive shells of the "
	    "bot (control policy).",
	.schema = "{\"type\":\"object\",\"properties\":{"
	    "\"ttl\":{\"type\":\"integer\",\"minimum\":1}}}",
	.flags = TOOL_LEASE | TOOL_CONTROL,
	.fn = terminal_url_run,
};

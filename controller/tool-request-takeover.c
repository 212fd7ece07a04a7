/* SPDX-License-Identifier: MIT */
/*
 * request_takeover (C-3): the bot asks a person for protected input
 * (a password, a captcha).  Its run becomes waiting_takeover, which is the
 * one state in which a user may take control of a running bot.
 */
#include "autoconf.h"

#include <stdio.h>

#include "err.h"
#include "json.h"
#include "lease.h"
#include "tool.h"

static int
takeover_run(struct tool_ctx *t, json_t **result, struct errmsg *err)
{
	static const char *const keys[] = { "reason", NULL };
	const char	*why = "";
	char		 e[JSONX_ERRLEN];
	int		 r;

	if ((r = tool_only_keys(t, keys, err)) != 0)
		return r;
	if ((r = jsonx_str(t->args, "reason", 1024, &why, e)) != 0 &&
	    r != ERR_NOT_FOUND) {
		errmsg_set(err, r, "%s", e);
		return r;
	}
	if ((r = lease_request_takeover(t->store, t->computer->id,
	    t->bot)) != 0)
		return r;
	snprintf(t->summary, sizeof t->summary, "requested a takeover: %.512s",
	    why);
	*result = json_pack("{s:s}", "run_state", "waiting_takeover");
	return 0;
}

const struct tool_entry tool_request_takeover_entry = {
	.name = "request_takeover",
	.description = "Ask a person to take control of the bot's screen "
	    "(for protected input); the run waits for them.",
	.schema = "{\"type\":\"object\",\"properties\":{\"reason\":"
	    "{\"type\":\"string\"}}}",
	.flags = TOOL_RECORD | TOOL_NOSTART,
	.fn = takeover_run,
};

/* SPDX-License-Identifier: MIT */
/*
 * launch_app: start a program on the bot's desktop, detached (its own
 * session, output discarded) so the call returns at once.  Recorded.
 */
#include "autoconf.h"

#include <stdio.h>

#include "err.h"
#include "json.h"
#include "tool.h"
#include "tool-launch-app.h"
#include "tool-observe.h"

int
launch_app_detached(struct tool_ctx *t, const char *line, const char *var,
    json_t **result, struct errmsg *err)
{
	char	 cmd[256];
	int	 r;

	if ((r = observe_open_desktop(t, err)) != 0)
		return r;
	snprintf(cmd, sizeof cmd, "setsid -f sh -c '%s' >/dev/null 2>&1 "
	    "</dev/null", line);
	return tool_guest(t, "exec", json_pack("{s:s, s:{s:s}}", "command",
	    cmd, "env", "RAKAZO_ARG", var), 1, NULL, 0, result, NULL, NULL,
	    err);
}

static int
launch_app_run(struct tool_ctx *t, json_t **result, struct errmsg *err)
{
	static const char *const keys[] = { "command", NULL };
	const char	*cmd;
	char		 e[JSONX_ERRLEN];
	int		 r;

	if ((r = tool_only_keys(t, keys, err)) != 0)
		return r;
	if ((r = jsonx_str(t->args, "command", 4096, &cmd, e)) != 0)
		return errmsg_set(err, ERR_BAD_REQUEST, "%s", e);
	r = launch_app_detached(t, "eval \"$RAKAZO_ARG\"", cmd, result, err);
	snprintf(t->summary, sizeof t->summary, "launched %.512s%s%s", cmd,
	    r != 0 ? ": " : "", r != 0 ? errmsg_str(err) : "");
	return r;
}

const struct tool_entry tool_launch_app_entry = {
	.name = "launch_app",
	.description = "Start a program (a shell command line) on the bot's "
	    "desktop, detached.",
	.schema = "{\"type\":\"object\",\"required\":[\"command\"],"
	    "\"properties\":{\"command\":{\"type\":\"string\"}}}",
	.flags = TOOL_LEASE | TOOL_RECORD,
	.fn = launch_app_run,
};

/* SPDX-License-Identifier: MIT */
/*
 * open_path: open a workspace file or URL on the bot's desktop with
 * xdg-open.  guestd gives a bot's commands DISPLAY and XAUTHORITY once it
 * has a desktop, so the desktop is opened first.  The path travels in the
 * environment, never spliced into the shell line.  Recorded.
 */
#include "autoconf.h"

#include <stdio.h>

#include "err.h"
#include "json.h"
#include "tool.h"
#include "tool-launch-app.h"
#include "tool-observe.h"

static int
open_path_run(struct tool_ctx *t, json_t **result, struct errmsg *err)
{
	static const char *const keys[] = { "path", NULL };
	const char	*path;
	char		 e[JSONX_ERRLEN];
	int		 r;

	if ((r = tool_only_keys(t, keys, err)) != 0)
		return r;
	if ((r = jsonx_str(t->args, "path", 4096, &path, e)) != 0)
		return errmsg_set(err, ERR_BAD_REQUEST, "%s", e);
	r = launch_app_detached(t, "xdg-open \"$RAKAZO_ARG\"", path, result,
	    err);
	snprintf(t->summary, sizeof t->summary, "opened %.512s%s%s", path,
	    r != 0 ? ": " : "", r != 0 ? errmsg_str(err) : "");
	return r;
}

const struct tool_entry tool_open_path_entry = {
	.name = "open_path",
	.description = "Open a workspace path or URL on the bot's desktop "
	    "with its default application.",
	.schema = "{\"type\":\"object\",\"required\":[\"path\"],"
	    "\"properties\":{\"path\":{\"type\":\"string\"}}}",
	.flags = TOOL_LEASE | TOOL_RECORD,
	.fn = open_path_run,
};

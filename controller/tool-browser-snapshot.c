/* SPDX-License-Identifier: MIT */
/*
 * browser_snapshot (C-4, G-22): the text and interactive elements of the
 * bot's visible tab, each element with a fresh ref for browser_act.
 * Read-only: no lease, no activity (G-30).
 */
#include "autoconf.h"

#include "err.h"
#include "json.h"
#include "tool.h"

static int
browser_snapshot_run(struct tool_ctx *t, json_t **result, struct errmsg *err)
{
	static const char *const keys[] = { NULL };
	int	 r;

	if ((r = tool_only_keys(t, keys, err)) != 0)
		return r;
	return tool_guest(t, "page.snapshot", json_object(), 0, NULL, 0,
	    result, NULL, NULL, err);
}

const struct tool_entry tool_browser_snapshot_entry = {
	.name = "browser_snapshot",
	.description = "Read the bot's visible browser tab: URL, title, text "
	    "and up to 80 interactive elements, each with a ref for "
	    "browser_act.",
	.schema = "{\"type\":\"object\",\"properties\":{}}",
	.flags = 0,
	.fn = browser_snapshot_run,
};

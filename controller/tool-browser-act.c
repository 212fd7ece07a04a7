/* SPDX-License-Identifier: MIT */
/*
 * browser_act (C-4, G-22): 1 to 24 steps (click, type, select, press,
 * scroll, focus) on refs of the bot's latest browser_snapshot, checked
 * before the first runs; a ref of an older document is STALE_REF and is
 * never applied to another element.  Recorded without typed text.
 */
#include "autoconf.h"

#include <stdio.h>

#include "err.h"
#include "json.h"
#include "tool.h"

static int
browser_act_run(struct tool_ctx *t, json_t **result, struct errmsg *err)
{
	static const char *const keys[] = { "steps", NULL };
	json_t	*steps = json_object_get(t->args, "steps");
	int	 r;

	if ((r = tool_only_keys(t, keys, err)) != 0)
		return r;
	if (!json_is_array(steps) || json_array_size(steps) == 0)
		return errmsg_set(err, ERR_BAD_REQUEST, "give \"steps\", a "
		    "non-empty array");
	r = tool_guest(t, "page.act", json_pack("{s:O}", "steps", steps), 1,
	    NULL, 0, result, NULL, NULL, err);
	/* Typed text may be a password: the event names only the count. */
	snprintf(t->summary, sizeof t->summary, "browser: %zu step(s)%s%s",
	    json_array_size(steps), r != 0 ? " failed: " : "",
	    r != 0 ? errmsg_str(err) : "");
	return r;
}

const struct tool_entry tool_browser_act_entry = {
	.name = "browser_act",
	.description = "Run steps (click, type, select, press, scroll, focus) "
	    "on element refs from the bot's latest browser_snapshot.",
	.schema = "{\"type\":\"object\",\"required\":[\"steps\"],"
	    "\"properties\":{\"steps\":{\"type\":\"array\",\"minItems\":1,"
	    "\"maxItems\":24,\"items\":{\"type\":\"object\",\"required\":"
	    "[\"kind\",\"ref\"],\"properties\":{\"kind\":{\"enum\":[\"click\","
	    "\"type\",\"select\",\"press\",\"scroll\",\"focus\"]},\"ref\":"
	    "{\"type\":\"string\"},\"text\":{\"type\":\"string\"},\"clear\":"
	    "{\"type\":\"boolean\"},\"value\":{\"type\":\"string\"},\"key\":"
	    "{\"type\":\"string\"},\"dx\":{\"type\":\"number\"},\"dy\":"
	    "{\"type\":\"number\"}}}}}}",
	.flags = TOOL_LEASE | TOOL_RECORD,
	.fn = browser_act_run,
};

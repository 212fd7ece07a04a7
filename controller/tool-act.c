/* SPDX-License-Identifier: MIT */
/*
 * computer_act (G-9 ... G-12): an ordered batch of input actions on the
 * bot's desktop (guestd display.act).  Accepts "actions" (array) or one
 * "action" object in any of the vocabularies guestd understands, and the
 * "scale" computer_observe reported for a scaled screenshot, so points
 * read off that screenshot land where they were seen.
 */
#include "autoconf.h"

#include <stdio.h>

#include "err.h"
#include "json.h"
#include "tool.h"
#include "tool-observe.h"

static int
act_run(struct tool_ctx *t, json_t **result, struct errmsg *err)
{
	static const char *const keys[] = { "actions", "action", "scale",
	    NULL };
	json_t	*acts = json_object_get(t->args, "actions");
	json_t	*one = json_object_get(t->args, "action");
	json_t	*scale = json_object_get(t->args, "scale"), *args;
	int	 r;

	if ((r = tool_only_keys(t, keys, err)) != 0)
		return r;
	if ((acts == NULL) == (one == NULL) ||
	    (acts != NULL && (!json_is_array(acts) ||
	    json_array_size(acts) == 0)) || (one != NULL &&
	    !json_is_object(one)))
		return errmsg_set(err, ERR_BAD_REQUEST, "give \"actions\" (a "
		    "non-empty array) or one \"action\" object");
	/* guestd checks its range (0, 100]; a string would reach it too. */
	if (scale != NULL && !json_is_number(scale))
		return errmsg_set(err, ERR_BAD_REQUEST, "\"scale\" must be "
		    "a number (computer_observe's \"scale\")");
	if ((r = observe_open_desktop(t, err)) != 0)
		return r;
	acts = acts != NULL ? json_incref(acts) : json_pack("[O]", one);
	args = json_pack("{s:O}", "actions", acts);
	if (scale != NULL)
		json_object_set(args, "scale", scale);
	r = tool_guest(t, "display.act", args, 1, NULL, 0, result, NULL, NULL,
	    err);
	snprintf(t->summary, sizeof t->summary, "act: %zu action(s)%s%s",
	    json_array_size(acts), r != 0 ? " failed: " : "",
	    r != 0 ? errmsg_str(err) : "");
	json_decref(acts);
	return r;
}

const struct tool_entry tool_act_entry = {
	.name = "computer_act",
	.description = "Apply an ordered batch of mouse/keyboard actions to "
	    "the bot's desktop; reports how many completed.",
	.schema = "{\"type\":\"object\",\"properties\":{"
	    "\"actions\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"
	    "\"action\":{\"type\":\"object\"},"
	    "\"scale\":{\"type\":\"number\",\"exclusiveMinimum\":0,"
	    "\"maximum\":100}}}",
	.flags = TOOL_LEASE | TOOL_RECORD,
	.fn = act_run,
};

/* SPDX-License-Identifier: MIT */
/*
 * computer_observe (G-7): open the bot's desktop on first use (lazily,
 * G-1) and take a screenshot.  The image comes back base64 with its
 * metadata, or, when the caller's since_frame is still current, only the
 * metadata and the marker that the previous screenshot is still valid.
 * Not recorded as activity: it changes nothing the user would audit.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "err.h"
#include "json.h"
#include "tool.h"
#include "tool-observe.h"

int
observe_open_desktop(struct tool_ctx *t, struct errmsg *err)
{
	json_t	*res = NULL;
	int	 r;

	r = tool_guest(t, "display.open", json_object(), 1, NULL, 0, &res,
	    NULL, NULL, err);
	json_decref(res);
	return r;
}

static int
observe_run(struct tool_ctx *t, json_t **result, struct errmsg *err)
{
	static const char *const keys[] = { "format", "quality", "max_width",
	    "max_height", "since_frame", "region", NULL };
	static const char *const pass[] = { "format", "quality", "max_width",
	    "max_height", "since_frame", "region", NULL };
	json_t		*args, *v;
	void		*img = NULL;
	size_t		 n = 0, i;
	char		*b64;
	const char	*fmt;
	int		 r;

	if ((r = tool_only_keys(t, keys, err)) != 0)
		return r;
	if ((r = observe_open_desktop(t, err)) != 0)
		return r;
	args = json_object();
	for (i = 0; pass[i] != NULL; i++)
		if ((v = json_object_get(t->args, pass[i])) != NULL)
			json_object_set(args, pass[i], v);
	if ((r = tool_guest(t, "display.observe", args, 0, NULL, 0, result,
	    &img, &n, err)) != 0)
		return r;
	if (json_is_true(json_object_get(*result, "unchanged"))) {
		json_object_set_new(*result, "message", json_string(
		    "previous screenshot still valid"));
	} else {
		fmt = json_string_value(json_object_get(*result, "format"));
		b64 = base64_encode_new(img, n);
		json_object_set_new(*result, "image", json_string(b64));
		json_object_set_new(*result, "mimeType", json_string(
		    fmt != NULL && strcmp(fmt, "jpeg") == 0 ? "image/jpeg" :
		    "image/png"));
		free(b64);
	}
	free(img);
	return 0;
}

const struct tool_entry tool_observe_entry = {
	.name = "computer_observe",
	.description = "Screenshot of the bot's desktop (started on first "
	    "use). Pass since_frame to get only metadata when nothing changed.",
	.schema = "{\"type\":\"object\",\"properties\":{"
	    "\"format\":{\"enum\":[\"png\",\"jpeg\"]},"
	    "\"quality\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100},"
	    "\"max_width\":{\"type\":\"integer\"},"
	    "\"max_height\":{\"type\":\"integer\"},"
	    "\"since_frame\":{\"type\":\"integer\"},"
	    "\"region\":{\"type\":\"object\"}}}",
	.flags = TOOL_LEASE,
	.fn = observe_run,
};

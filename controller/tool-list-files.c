/* SPDX-License-Identifier: MIT */
/*
 * list_files: the entries of a workspace directory.  Read-only.  A
 * stopped computer is listed from its stored home (tool-stored.h, C-15).
 */
#include "autoconf.h"

#include <stdio.h>

#include "err.h"
#include "json.h"
#include "tool.h"
#include "tool-stored.h"

static int
list_files_run(struct tool_ctx *t, json_t **result, struct errmsg *err)
{
	static const char *const keys[] = { "path", NULL };
	const char	*path = ".";
	struct store_home_rev	 h;
	char		 e[JSONX_ERRLEN];
	int		 r;

	if ((r = tool_only_keys(t, keys, err)) != 0)
		return r;
	if ((r = jsonx_str(t->args, "path", 4096, &path, e)) != 0 &&
	    r != ERR_NOT_FOUND) {
		errmsg_set(err, r, "%s", e);
		return r;
	}
	if ((r = tool_stored_rev(t, &h, err)) != 0)
		return r < 0 ? r : tool_stored_list(t, &h,
		    json_object_get(t->args, "path"), result, err);
	return tool_guest(t, "file.list", json_pack("{s:s}", "path", path), 0,
	    NULL, 0, result, NULL, NULL, err);
}

const struct tool_entry tool_list_files_entry = {
	.name = "list_files",
	.description = "List a directory of the workspace (default: its "
	    "root).",
	.schema = "{\"type\":\"object\",\"properties\":{\"path\":"
	    "{\"type\":\"string\"}}}",
	.flags = 0,
	.fn = list_files_run,
};

/* SPDX-License-Identifier: MIT */
/*
 * attach_file (C-15): put a file into the bot's attachments folder,
 * bots/<bot>/attachments/<name>, capped in size.  Recorded.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "tool.h"
#include "tool-write-file.h"

/* The default of the attachment size limit (ATTACHMENT_MAX_BYTES). */
#define ATTACH_MAX	(INT64_C(25) * 1024 * 1024)

static int
attach_run(struct tool_ctx *t, json_t **result, struct errmsg *err)
{
	static const char *const keys[] = { "name", "content",
	    "content_base64", NULL };
	const char	*name;
	char		 e[JSONX_ERRLEN], path[512];
	void		*data = NULL;
	size_t		 n;
	int64_t		 max;
	int		 r;

	if ((r = tool_only_keys(t, keys, err)) != 0)
		return r;
	if ((r = jsonx_str(t->args, "name", 255, &name, e)) != 0)
		return errmsg_set(err, ERR_BAD_REQUEST, "%s", e);
	if (strchr(name, '/') != NULL || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0)
		return errmsg_set(err, ERR_PATH_INVALID, "\"name\" is a file "
		    "name, not a path");
	if ((r = write_file_content(t->args, &data, &n, err)) != 0)
		return r;
	max = t->attach_max > 0 ? t->attach_max : ATTACH_MAX;
	if ((int64_t)n > max) {
		free(data);
		return errmsg_set(err, ERR_TOO_LARGE, "attachments are at most "
		    "%lld bytes", (long long)max);
	}
	snprintf(path, sizeof path, "bots/%s/attachments/%s", t->bot, name);
	r = write_file_bytes(t, path, data, n, result, err);
	free(data);
	return r;
}

const struct tool_entry tool_attach_file_entry = {
	.name = "attach_file",
	.description = "Store a file in the bot's attachments folder "
	    "(bots/<bot>/attachments/).",
	.schema = "{\"type\":\"object\",\"required\":[\"name\"],"
	    "\"properties\":{\"name\":{\"type\":\"string\"},"
	    "\"content\":{\"type\":\"string\"},"
	    "\"content_base64\":{\"type\":\"string\"}}}",
	.flags = TOOL_LEASE | TOOL_RECORD,
	.fn = attach_run,
};

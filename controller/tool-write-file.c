/* SPDX-License-Identifier: MIT */
/*
 * write_file: write a workspace file atomically (guestd file.write), from
 * "content" (text) or "content_base64".  Recorded with path and size.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "tool.h"
#include "tool-write-file.h"
#include "xmalloc.h"

int
write_file_bytes(struct tool_ctx *t, const char *path, const void *data,
    size_t n, json_t **result, struct errmsg *err)
{
	int	 r;

	r = tool_guest(t, "file.write", json_pack("{s:s, s:b}", "path", path,
	    "parents", 1), 1, data != NULL ? data : "", n, result, NULL, NULL,
	    err);
	if (r == 0)
		snprintf(t->summary, sizeof t->summary, "wrote %.512s (%zu "
		    "bytes)", path, n);
	else
		snprintf(t->summary, sizeof t->summary, "write %.512s failed: "
		    "%s", path, errmsg_str(err));
	return r;
}

int
write_file_content(json_t *args, void **data, size_t *n, struct errmsg *err)
{
	json_t	*c = json_object_get(args, "content");
	json_t	*b = json_object_get(args, "content_base64");

	*data = NULL;
	*n = 0;
	if ((c == NULL) == (b == NULL) || (c != NULL && !json_is_string(c)) ||
	    (b != NULL && !json_is_string(b)))
		return errmsg_set(err, ERR_BAD_REQUEST, "give exactly one of "
		    "\"content\" (a string) or \"content_base64\"");
	if (c != NULL) {
		*n = json_string_length(c);
		*data = xmalloc(*n + 1);
		memcpy(*data, json_string_value(c), *n);
		return 0;
	}
	if (tool_unbase64(json_string_value(b), data, n) != 0)
		return errmsg_set(err, ERR_BAD_REQUEST, "\"content_base64\" is "
		    "not base64");
	return 0;
}

static int
write_file_run(struct tool_ctx *t, json_t **result, struct errmsg *err)
{
	static const char *const keys[] = { "path", "content",
	    "content_base64", NULL };
	const char	*path;
	char		 e[JSONX_ERRLEN];
	void		*data = NULL;
	size_t		 n;
	int		 r;

	if ((r = tool_only_keys(t, keys, err)) != 0)
		return r;
	if ((r = jsonx_str(t->args, "path", 4096, &path, e)) != 0)
		return errmsg_set(err, ERR_BAD_REQUEST, "%s", e);
	if ((r = write_file_content(t->args, &data, &n, err)) != 0)
		return r;
	r = write_file_bytes(t, path, data, n, result, err);
	free(data);
	return r;
}

const struct tool_entry tool_write_file_entry = {
	.name = "write_file",
	.description = "Write a file of the workspace atomically (parents "
	    "created), from text or base64.",
	.schema = "{\"type\":\"object\",\"required\":[\"path\"],"
	    "\"properties\":{\"path\":{\"type\":\"string\"},"
	    "\"content\":{\"type\":\"string\"},"
	    "\"content_base64\":{\"type\":\"string\"}}}",
	.flags = TOOL_LEASE | TOOL_RECORD,
	.fn = write_file_run,
};

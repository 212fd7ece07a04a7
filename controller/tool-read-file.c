/*
 * read_file: read (a range of) a workspace file.  Text comes back as
 * "content"; bytes that are not UTF-8 as "content_base64".  Read-only: no
 * lease, no activity (G-30).
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>

#include "base64.h"
#include "err.h"
#include "json.h"
#include "tool.h"

#define READ_MAX	(4 * 1024 * 1024)

static int
read_file_run(struct tool_ctx *t, json_t **result, struct errmsg *err)
{
	static const char *const keys[] = { "path", "offset", "length",
	    NULL };
	const char	*path;
	int64_t		 off = 0, len = READ_MAX;
	json_t		*args, *s;
	char		 e[JSONX_ERRLEN], *b64;
	void		*data = NULL;
	size_t		 n = 0;
	int		 r;

	if ((r = tool_only_keys(t, keys, err)) != 0)
		return r;
	if ((r = jsonx_str(t->args, "path", 4096, &path, e)) != 0 ||
	    ((r = jsonx_int(t->args, "offset", 0, INT64_MAX, &off, e)) != 0 &&
	    r != ERR_NOT_FOUND) ||
	    ((r = jsonx_int(t->args, "length", 0, READ_MAX, &len, e)) != 0 &&
	    r != ERR_NOT_FOUND)) {
		if (r == ERR_NOT_FOUND)
			r = ERR_BAD_REQUEST;
		return errmsg_set(err, r, "%s", e);
	}
	args = json_pack("{s:s, s:I, s:I}", "path", path, "offset",
	    (json_int_t)off, "length", (json_int_t)len);
	if ((r = tool_guest(t, "file.read", args, 0, NULL, 0, result, &data,
	    &n, err)) != 0)
		return r;
	json_object_set_new(*result, "path", json_string(path));
	if ((s = json_stringn(data != NULL ? data : "", n)) != NULL)
		json_object_set_new(*result, "content", s);
	else {
		b64 = base64_encode_new(data, n);
		json_object_set_new(*result, "content_base64",
		    json_string(b64));
		free(b64);
	}
	free(data);
	return 0;
}

const struct tool_entry tool_read_file_entry = {
	.name = "read_file",
	.description = "Read a file of the workspace (path relative to the "
	    "workspace), optionally a byte range.",
	.schema = "{\"type\":\"object\",\"required\":[\"path\"],"
	    "\"properties\":{\"path\":{\"type\":\"string\"},"
	    "\"offset\":{\"type\":\"integer\",\"minimum\":0},"
	    "\"length\":{\"type\":\"integer\",\"minimum\":0}}}",
	.flags = 0,
	.fn = read_file_run,
};

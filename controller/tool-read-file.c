/* SPDX-License-Identifier: MIT */
/*
 * read_file: read (a range of) a workspace file.  Text comes back as
 * "content"; bytes that are not UTF-8, or hold a NUL, as
 * "content_base64".  With "preview": true it is a text preview: at most
 * READ_PREVIEW bytes, cut
 * at a whole character, "truncated" when the file goes on, and no bytes
 * at all ("binary": true) for a file that is not text.  A stopped
 * computer is read from its stored home (tool-stored.h, C-15) without
 * starting it.  Read-only: no lease, no activity (G-30).
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "err.h"
#include "json.h"
#include "tool.h"
#include "tool-stored.h"

#define READ_MAX	(4 * 1024 * 1024)
#define READ_PREVIEW	(64 * 1024)

/* n cut back to the last whole UTF-8 character (a preview's end). */
static size_t
read_file_whole_chars(const unsigned char *p, size_t n)
{
	size_t	 i = n, k;

	/* A sequence is at most 4 bytes: look that far back for its lead. */
	for (k = 0; k < 4 && i > 0; k++) {
		i--;
		if ((p[i] & 0xc0) != 0x80)
			break;
	}
	if (i < n && jsonx_utf8_len(p + i, n - i, NULL) == 0)
		return i;
	return n;
}

static void
read_file_content(json_t *res, const void *data, size_t n, int preview)
{
	json_t	*s;
	char	*b64;
	size_t	 k = n;
	int64_t	 size = json_integer_value(json_object_get(res, "size"));
	int64_t	 off = json_integer_value(json_object_get(res, "offset"));

	if (preview)
		k = read_file_whole_chars(data, n);
	/*
	 * NUL is valid UTF-8 and json_stringn takes it, but a "content"
	 * holding \u0000 is refused by our own clients (strings are C
	 * strings to them): such a file is bytes, not text.
	 */
	if ((k == 0 || memchr(data, '\0', k) == NULL) &&
	    (s = json_stringn(data != NULL ? data : "", k)) != NULL) {
		json_object_set_new(res, "content", s);
		if (preview) {
			json_object_set_new(res, "length",
			    json_integer((json_int_t)k));
			json_object_set_new(res, "truncated",
			    json_boolean(off + (int64_t)k < size));
		}
		return;
	}
	if (preview) {
		/* Not text: a preview has nothing to show. */
		json_object_set_new(res, "length", json_integer(0));
		json_object_set_new(res, "binary", json_true());
		return;
	}
	b64 = base64_encode_new(data, n);
	json_object_set_new(res, "content_base64", json_string(b64));
	free(b64);
}

static int
read_file_run(struct tool_ctx *t, json_t **result, struct errmsg *err)
{
	static const char *const keys[] = { "path", "offset", "length",
	    "preview", NULL };
	struct store_home_rev	 h;
	const char	*path;
	int64_t		 off = 0, len = READ_MAX;
	json_t		*args;
	char		 e[JSONX_ERRLEN];
	void		*data = NULL;
	size_t		 n = 0;
	int		 r, preview = 0;

	if ((r = tool_only_keys(t, keys, err)) != 0)
		return r;
	if ((r = jsonx_str(t->args, "path", 4096, &path, e)) != 0 ||
	    ((r = jsonx_int(t->args, "offset", 0, INT64_MAX, &off, e)) != 0 &&
	    r != ERR_NOT_FOUND) ||
	    ((r = jsonx_int(t->args, "length", 0, READ_MAX, &len, e)) != 0 &&
	    r != ERR_NOT_FOUND) ||
	    ((r = jsonx_bool(t->args, "preview", &preview, e)) != 0 &&
	    r != ERR_NOT_FOUND)) {
		if (r == ERR_NOT_FOUND)
			r = ERR_BAD_REQUEST;
		return errmsg_set(err, r, "%s", e);
	}
	if (preview && len > READ_PREVIEW)
		len = READ_PREVIEW;
	if ((r = tool_stored_rev(t, &h, err)) < 0)
		return r;
	if (r == 1)
		r = tool_stored_read(t, &h, json_object_get(t->args, "path"),
		    off, len, result, &data, &n, err);
	else {
		args = json_pack("{s:s, s:I, s:I}", "path", path, "offset",
		    (json_int_t)off, "length", (json_int_t)len);
		r = tool_guest(t, "file.read", args, 0, NULL, 0, result,
		    &data, &n, err);
	}
	if (r != 0)
		return r;
	json_object_set_new(*result, "path", json_string(path));
	read_file_content(*result, data, n, preview);
	free(data);
	return 0;
}

const struct tool_entry tool_read_file_entry = {
	.name = "read_file",
	.description = "Read a file of the workspace (path relative to the "
	    "workspace), optionally a byte range; preview: a text preview "
	    "(at most 64 KiB).  A stopped computer is read from its stored "
	    "workspace without starting it.",
	.schema = "{\"type\":\"object\",\"required\":[\"path\"],"
	    "\"properties\":{\"path\":{\"type\":\"string\"},"
	    "\"offset\":{\"type\":\"integer\",\"minimum\":0},"
	    "\"length\":{\"type\":\"integer\",\"minimum\":0},"
	    "\"preview\":{\"type\":\"boolean\"}}}",
	.flags = 0,
	.fn = read_file_run,
};

/* SPDX-License-Identifier: MIT */
/*
 * The tool registry and the helpers every tool uses (tool.h).
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "guest.h"
#include "json.h"
#include "tool.h"
#include "xmalloc.h"

static const struct tool_entry *const tool_all[] = {
	&tool_observe_entry,
	&tool_act_entry,
	&tool_shell_entry,
	&tool_read_file_entry,
	&tool_write_file_entry,
	&tool_list_files_entry,
	&tool_attach_file_entry,
	&tool_open_path_entry,
	&tool_launch_app_entry,
	&tool_browser_navigate_entry,
	&tool_browser_snapshot_entry,
	&tool_browser_act_entry,
	&tool_request_takeover_entry,
	&tool_screen_url_entry,
	&tool_terminal_url_entry,
};

#define TOOL_N	(sizeof tool_all / sizeof tool_all[0])

const struct tool_entry *
tool_find(const char *name)
{
	size_t	 i;

	for (i = 0; i < TOOL_N; i++)
		if (strcmp(tool_all[i]->name, name) == 0)
			return tool_all[i];
	return NULL;
}

json_t *
tool_list_json(void)
{
	json_t	*arr = json_array(), *schema;
	size_t	 i;

	for (i = 0; i < TOOL_N; i++) {
		schema = json_loads(tool_all[i]->schema, 0, NULL);
		if (schema == NULL)
			fatal("tool %s: its schema is not JSON",
			    tool_all[i]->name);
		json_array_append_new(arr, json_pack("{s:s, s:s, s:o, s:b}",
		    "name", tool_all[i]->name, "description",
		    tool_all[i]->description, "input_schema", schema,
		    "mutating", (tool_all[i]->flags & TOOL_LEASE) != 0));
	}
	return json_pack("{s:o}", "tools", arr);
}

int
tool_guest(struct tool_ctx *t, const char *op, json_t *args, int fenced,
    const void *in, size_t inlen, json_t **result, void **out,
    size_t *outlen, struct errmsg *err)
{
	int	 r;

	if (!t->prepared && t->prepare != NULL) {
		if ((r = t->prepare(t, err)) != 0) {
			json_decref(args);
			return r;
		}
		t->prepared = 1;
	}
	json_object_set_new(args, "bot", json_string(t->bot));
	if (fenced)
		json_object_set_new(args, "fence", json_integer(t->fence));
	return guest_call(t->prov, t->computer, op, args, in, inlen,
	    result, out, outlen, err);
}

int
tool_only_keys(struct tool_ctx *t, const char *const *keys, struct errmsg *err)
{
	static const char *const common[] = { "computer", "bot", "lease",
	    "holder", NULL };
	const char	*k;
	json_t		*v;
	size_t		 i;
	int		 ok;

	json_object_foreach(t->args, k, v) {
		ok = 0;
		for (i = 0; common[i] != NULL && !ok; i++)
			ok = strcmp(k, common[i]) == 0;
		for (i = 0; keys[i] != NULL && !ok; i++)
			ok = strcmp(k, keys[i]) == 0;
		if (!ok)
			return errmsg_set(err, ERR_BAD_REQUEST, "unknown "
			    "argument \"%.64s\"", k);
	}
	return 0;
}

static const char	tool_b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int
tool_unbase64(const char *s, void **out, size_t *outlen)
{
	unsigned char	*o;
	const char	*c;
	size_t		 n = strlen(s), k = 0;
	unsigned	 v = 0;
	int		 bits = 0, pad = 0;

	*out = NULL;
	*outlen = 0;
	o = xmalloc(n / 4 * 3 + 3);
	for (; *s != '\0'; s++) {
		if (*s == '=') {
			pad++;
			continue;
		}
		if (pad > 0 || (c = strchr(tool_b64, *s)) == NULL) {
			free(o);
			return ERR_BAD_REQUEST;
		}
		v = v << 6 | (unsigned)(c - tool_b64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			o[k++] = (unsigned char)(v >> bits);
		}
	}
	if (pad > 2) {
		free(o);
		return ERR_BAD_REQUEST;
	}
	*out = o;
	*outlen = k;
	return 0;
}

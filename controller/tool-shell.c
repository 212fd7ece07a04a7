/* SPDX-License-Identifier: MIT */
/*
 * shell: run a bash command in the workspace as the workspace user
 * (guestd exec, G-26); the bot's directory is the default cwd.  Recorded
 * with the redacted command line and the tail of its output (G-30).
 */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "tool.h"

#define SHELL_TAIL	200

static const char *
shell_tail(json_t *res, const char *key)
{
	const char	*s = json_string_value(json_object_get(res, key));
	size_t		 n;

	if (s == NULL)
		return "";
	n = strlen(s);
	return n > SHELL_TAIL ? s + n - SHELL_TAIL : s;
}

static int
shell_run(struct tool_ctx *t, json_t **result, struct errmsg *err)
{
	static const char *const keys[] = { "command", "cwd", "timeout_ms",
	    "env", NULL };
	const char	*cmd, *cwd = NULL;
	int64_t		 timeout = 0;
	json_t		*args, *env = NULL, *code;
	char		 e[JSONX_ERRLEN];
	int		 r;

	if ((r = tool_only_keys(t, keys, err)) != 0)
		return r;
	if ((r = jsonx_str(t->args, "command", 65536, &cmd, e)) != 0 ||
	    ((r = jsonx_str(t->args, "cwd", 4096, &cwd, e)) != 0 &&
	    r != ERR_NOT_FOUND) ||
	    ((r = jsonx_int(t->args, "timeout_ms", 1, 3600000, &timeout,
	    e)) != 0 && r != ERR_NOT_FOUND) ||
	    ((r = jsonx_obj(t->args, "env", &env, e)) != 0 &&
	    r != ERR_NOT_FOUND)) {
		if (r == ERR_NOT_FOUND)
			r = ERR_BAD_REQUEST;
		return errmsg_set(err, r, "%s", e);
	}
	args = json_pack("{s:s}", "command", cmd);
	if (cwd != NULL)
		json_object_set_new(args, "cwd", json_string(cwd));
	if (timeout > 0)
		json_object_set_new(args, "timeout_ms", json_integer(timeout));
	if (env != NULL)
		json_object_set(args, "env", env);
	r = tool_guest(t, "exec", args, 1, NULL, 0, result, NULL, NULL, err);
	if (r != 0) {
		snprintf(t->summary, sizeof t->summary, "$ %.400s -> %s", cmd,
		    err->msg);
		return r;
	}
	code = json_object_get(*result, "exit_code");
	snprintf(t->summary, sizeof t->summary, "$ %.400s -> %s %lld; %s%s",
	    cmd, code != NULL ? "exit" : "signal", code != NULL ?
	    (long long)json_integer_value(code) :
	    (long long)json_integer_value(json_object_get(*result, "signal")),
	    shell_tail(*result, "stdout"), shell_tail(*result, "stderr"));
	return 0;
}

const struct tool_entry tool_shell_entry = {
	.name = "shell",
	.description = "Run a bash command in the computer's workspace as the "
	    "workspace user; returns exit code, stdout and stderr.",
	.schema = "{\"type\":\"object\",\"required\":[\"command\"],"
	    "\"properties\":{\"command\":{\"type\":\"string\"},"
	    "\"cwd\":{\"type\":\"string\"},"
	    "\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1},"
	    "\"env\":{\"type\":\"object\"}}}",
	.flags = TOOL_LEASE | TOOL_RECORD,
	.fn = shell_run,
};

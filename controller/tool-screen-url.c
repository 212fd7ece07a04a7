/* SPDX-License-Identifier: MIT */
/*
 * screen_url: a view or control capability for the bot's screen (G-15),
 * issued by guestd's capability.grant on the desktop opened on demand.
 * The token is the URL's only secret; it is returned to the caller and
 * never logged or recorded.
 */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "err.h"
#include "guest.h"
#include "json.h"
#include "tool.h"
#include "tool-observe.h"
#include "tool-screen-url.h"

/*
 * Where a viewer goes: the raw websocket for any noVNC-compatible viewer,
 * the embed page, and the terminal's websocket and page; when the
 * provider knows the gateway.
 */
static void
screen_url_add(struct tool_ctx *t, json_t *res)
{
	const char	*tok = json_string_value(json_object_get(res, "token"));
	char		 gw[300];

	if (tok == NULL || strlen(tok) > 128 ||
	    guest_gateway(t->prov, t->computer, gw, sizeof gw) != 0)
		return;
	json_object_set_new(res, "url", json_sprintf("ws://%s/screen/%s", gw,
	    tok));
	json_object_set_new(res, "embed_url", json_sprintf(
	    "http://%s/embed.html?token=%s", gw, tok));
	/* Shells need the control policy (G-18). */
	if (strcmp(json_string_value(json_object_get(res, "policy")) ?: "",
	    "control") == 0) {
		json_object_set_new(res, "terminal_url", json_sprintf(
		    "ws://%s/term/%s", gw, tok));
		/* What a person opens: the websocket is for programs. */
		json_object_set_new(res, "terminal_page_url", json_sprintf(
		    "http://%s/term.html?token=%s", gw, tok));
	}
}

int
screen_url_grant(struct tool_ctx *t, const char *policy, int64_t ttl,
    json_t **result, struct errmsg *err)
{
	json_t	*args;
	int64_t	 left;
	int	 r;

	if ((r = observe_open_desktop(t, err)) != 0)
		return r;
	/* Control under a lease: guestd ends it with the lease (G-4). */
	if (strcmp(policy, "control") == 0 && t->lease_expires_ms > 0) {
		left = (t->lease_expires_ms - store_now_ms() + 999) / 1000;
		if (left < 1)
			left = 1;
		if (ttl <= 0 || ttl > left)
			ttl = left;
	}
	args = json_pack("{s:s}", "policy", policy);
	if (ttl > 0)
		json_object_set_new(args, "ttl", json_integer(ttl));
	if ((r = tool_guest(t, "capability.grant", args, 1, NULL, 0, result,
	    NULL, NULL, err)) != 0)
		return r;
	screen_url_add(t, *result);
	return 0;
}

static int
screen_url_run(struct tool_ctx *t, json_t **result, struct errmsg *err)
{
	static const char *const keys[] = { "policy", "ttl", NULL };
	const char	*policy = "view";
	int64_t		 ttl = 0;
	char		 e[JSONX_ERRLEN];
	int		 r;

	if ((r = tool_only_keys(t, keys, err)) != 0)
		return r;
	if (((r = jsonx_str(t->args, "policy", 16, &policy, e)) != 0 &&
	    r != ERR_NOT_FOUND) ||
	    ((r = jsonx_int(t->args, "ttl", 1, 30 * 86400, &ttl, e)) != 0 &&
	    r != ERR_NOT_FOUND)) {
		errmsg_set(err, r, "%s", e);
		return r;
	}
	if (strcmp(policy, "view") != 0 && strcmp(policy, "control") != 0)
		return errmsg_set(err, ERR_BAD_REQUEST, "\"policy\" is view or "
		    "control");
	return screen_url_grant(t, policy, ttl, result, err);
}

const struct tool_entry tool_screen_url_entry = {
	.name = "screen_url",
	.description = "A capability URL path to watch (view) or drive "
	    "(control) the bot's screen with a noVNC-compatible viewer.",
	.schema = "{\"type\":\"object\",\"properties\":{"
	    "\"policy\":{\"enum\":[\"view\",\"control\"]},"
	    "\"ttl\":{\"type\":\"integer\",\"minimum\":1}}}",
	.flags = TOOL_LEASE | TOOL_CONTROL,
	.fn = screen_url_run,
};

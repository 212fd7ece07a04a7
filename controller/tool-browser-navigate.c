/* SPDX-License-Identifier: MIT */
/*
 * browser_navigate (C-4, G-21): open a URL in the bot's browser, starting
 * the browser (and the desktop under it) when it is not running, and
 * answer once the page has loaded, with its URL and title.  Only http(s)
 * URLs without credentials pass (guestd refuses the rest: URL_REFUSED).
 * Recorded; the URL goes through the activity redaction like every text.
 */
#include "autoconf.h"

#include <stdio.h>

#include "err.h"
#include "json.h"
#include "tool.h"

static int
browser_navigate_run(struct tool_ctx *t, json_t **result, struct errmsg *err)
{
	static const char *const keys[] = { "url", NULL };
	const char	*url;
	json_t		*res = NULL;
	char		 e[JSONX_ERRLEN];
	int		 r;

	if ((r = tool_only_keys(t, keys, err)) != 0)
		return r;
	if ((r = jsonx_str(t->args, "url", 8192, &url, e)) != 0)
		return errmsg_set(err, ERR_BAD_REQUEST, "%s", e);
	r = tool_guest(t, "page.navigate", json_pack("{s:s}", "url", url), 1,
	    NULL, 0, result, NULL, NULL, err);
	if (r == ERR_BROWSER_NOT_RUNNING) {
		/* Start it on the URL: browser.open answers once a tab exists,
		 * then navigate to wait for the load and learn the title. */
		r = tool_guest(t, "browser.open", json_object(), 1, NULL, 0,
		    &res, NULL, NULL, err);
		json_decref(res);
		if (r == 0)
			r = tool_guest(t, "page.navigate", json_pack("{s:s}",
			    "url", url), 1, NULL, 0, result, NULL, NULL, err);
	}
	snprintf(t->summary, sizeof t->summary, "navigate %.900s%s%s", url,
	    r != 0 ? ": " : "", r != 0 ? errmsg_str(err) : "");
	return r;
}

const struct tool_entry tool_browser_navigate_entry = {
	.name = "browser_navigate",
	.description = "Open an http(s) URL in the bot's own browser (started "
	    "on its desktop when needed); answers with the loaded page's URL "
	    "and title.",
	.schema = "{\"type\":\"object\",\"required\":[\"url\"],"
	    "\"properties\":{\"url\":{\"type\":\"string\"}}}",
	.flags = TOOL_LEASE | TOOL_RECORD,
	.fn = browser_navigate_run,
};

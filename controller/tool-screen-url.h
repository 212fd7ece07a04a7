/* SPDX-License-Identifier: MIT */
/*
 * screen_url's helper shared with terminal_url and the control API:
 * issue a screen capability on the bot's desktop.
 */
#ifndef CONTROLLER_TOOL_SCREEN_URL_H
#define CONTROLLER_TOOL_SCREEN_URL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct errmsg;

struct tool_ctx;

/*
 * Grant a "view" or "control" capability for ttl seconds (0: the
 * default) and put the token and its URLs in *result.
 */
int	screen_url_grant(struct tool_ctx *t, const char *policy,
	    int64_t ttl, json_t **result, struct errmsg *err);

#endif

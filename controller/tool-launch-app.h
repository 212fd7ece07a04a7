/* SPDX-License-Identifier: MIT */
/*
 * launch_app's helper shared with open_path: start a command line on the
 * bot's desktop, detached.
 */
#ifndef CONTROLLER_TOOL_LAUNCH_APP_H
#define CONTROLLER_TOOL_LAUNCH_APP_H

#include <stddef.h>

#include <jansson.h>

struct errmsg;

struct tool_ctx;

/*
 * Run line, a shell command line, in its own session on the desktop with
 * its output discarded; var reaches it as $RAKAZO_ARG, so the caller's
 * value is never spliced into the quoting.
 */
int	launch_app_detached(struct tool_ctx *t, const char *line,
	    const char *var, json_t **result, struct errmsg *err);

#endif

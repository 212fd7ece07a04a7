/* SPDX-License-Identifier: MIT */
/*
 * computer_observe's helper shared with the tools that need a desktop
 * before they act (act, launch_app, open_path, screen_url).
 */
#ifndef CONTROLLER_TOOL_OBSERVE_H
#define CONTROLLER_TOOL_OBSERVE_H

#include <stddef.h>

struct errmsg;

struct tool_ctx;

/* Open the bot's desktop (guestd display.open); idempotent. */
int	observe_open_desktop(struct tool_ctx *t, struct errmsg *err);

#endif

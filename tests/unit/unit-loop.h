/* SPDX-License-Identifier: MIT */
/*
 * An lws loop for unit tests of tasks (controller/task.c): a context that
 * listens nowhere, one vhost with the given protocols, tasks bound to it.
 * Header-only: each test binary is one file.
 */
#ifndef TESTS_UNIT_LOOP_H
#define TESTS_UNIT_LOOP_H

#include <string.h>

#include <libwebsockets.h>

#include "task.h"

/* The loop on protos (ended by a zeroed entry); 0 or -1 (cmocka's setup
 * contract).  unit_loop_end() undoes it. */
static inline int
unit_loop_new(const struct lws_protocols *protos, struct lws_context **ctx,
    struct lws_vhost **vh)
{
	struct lws_context_creation_info info;

	memset(&info, 0, sizeof info);
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = protos;
	info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
	info.gid = -1;
	info.uid = -1;
	lws_set_log_level(0, NULL);
	if ((*ctx = lws_create_context(&info)) == NULL)
		return -1;
	if ((*vh = lws_create_vhost(*ctx, &info)) == NULL)
		return -1;
	task_init(*ctx, *vh);
	return 0;
}

static inline void
unit_loop_end(struct lws_context *ctx)
{
	task_shutdown();
	lws_context_destroy(ctx);
}

#endif

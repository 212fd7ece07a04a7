/* SPDX-License-Identifier: MIT */
/*
 * write_file's helpers shared with attach_file.
 */
#ifndef CONTROLLER_TOOL_WRITE_FILE_H
#define CONTROLLER_TOOL_WRITE_FILE_H

#include <stddef.h>

#include <jansson.h>

struct errmsg;

struct tool_ctx;

/* Write n bytes to path in the workspace atomically, with parents. */
int	write_file_bytes(struct tool_ctx *t, const char *path,
	    const void *data, size_t n, json_t **result, struct errmsg *err);
/*
 * The bytes of args' "content" (text) or "content_base64", exactly one,
 * in *data (malloc'd, the caller frees) and *n.
 */
int	write_file_content(json_t *args, void **data, size_t *n,
    struct errmsg *err);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The file tools of a stopped computer (SPEC C-15): list_files and
 * read_file answered from the newest revision in the home store
 * (home-browse.h) instead of a machine, so looking at a computer never
 * starts it.  A computer that runs, or has nothing stored yet, is asked
 * as before.
 */
#ifndef CONTROLLER_TOOL_STORED_H
#define CONTROLLER_TOOL_STORED_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "store.h"
#include "tool.h"

/*
 * 1 when t's computer is stopped (its row says so and no machine of this
 * provider type is alive) and its home has a revision, *h the newest; 0
 * when its machine is to be asked (started if need be); < 0 a state
 * store error (err set).
 */
int	tool_stored_rev(struct tool_ctx *t, struct store_home_rev *h,
	    struct errmsg *err);
/* guestd's file.list result, and "stored":{revision, created_ms}. */
int	tool_stored_list(struct tool_ctx *t, const struct store_home_rev *h,
	    json_t *jpath, json_t **result, struct errmsg *err);
/*
 * guestd's file.read result ({size, offset, length}) and "stored", the
 * bytes in *data (malloc'd, *n of them).
 */
int	tool_stored_read(struct tool_ctx *t, const struct store_home_rev *h,
	    json_t *jpath, int64_t off, int64_t len, json_t **result,
	    void **data, size_t *n, struct errmsg *err);

#endif

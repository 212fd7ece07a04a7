/* SPDX-License-Identifier: MIT */
/*
 * A stored revision read in place (SPEC C-15): the listing of one of its
 * directories and a byte range of one of its files, straight from the
 * archive in the home store, with nothing extracted and no machine
 * started.  Paths are confined as guestd confines them (home_browse_path);
 * archive entries are matched by name only, so a symbolic link in a
 * revision is listed but never followed.
 */
#ifndef CONTROLLER_HOME_BROWSE_H
#define CONTROLLER_HOME_BROWSE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "home.h"

/* As guestd's file.list: at most this many entries, then "truncated". */
#define HOME_BROWSE_LIST_MAX	10000

/*
 * Check a client's path [path, path + len) with guestd's rules (no
 * absolute path, no "..", no empty or "." segment, no NUL, bounded
 * lengths) and write its normal form to dst ("" for the root, no
 * trailing "/").  PATH_OUTSIDE_WORKSPACE, PATH_INVALID or NAME_TOO_LONG.
 */
int	home_browse_path(const char *path, size_t len, char *dst,
	    size_t dstlen, struct errmsg *e);

/*
 * {"path", "entries":[{name, type, size, mode, mtime}], "truncated"} of
 * directory dir (a normal form) of revision rev, shaped as guestd's
 * file.list.  NOT_FOUND, NOT_A_DIRECTORY, TAR_INVALID.
 */
int	home_browse_list(struct home_store *hs, const char *key, int64_t rev,
	    const char *dir, json_t **out, struct errmsg *e);

/*
 * At most len bytes from off of file path (a normal form) of revision
 * rev: *data malloc'd (*n bytes), *size the file's.  NOT_FOUND,
 * NOT_A_REGULAR_FILE (also a link), RANGE_INVALID, TAR_INVALID.
 */
int	home_browse_read(struct home_store *hs, const char *key, int64_t rev,
	    const char *path, int64_t off, int64_t len, void **data,
	    size_t *n, int64_t *size, struct errmsg *e);

/*
 * 0 when revision rev's archive is still the bytes bytes long whose
 * sha256 (hex) its row recorded; ERR_HOME_STORE (or the store's code
 * when it cannot be opened) otherwise.  Reads it whole, off the loop.
 */
int	home_browse_verify(struct home_store *hs, const char *key,
	    int64_t rev, int64_t bytes, const char *sha256, struct errmsg *e);

#endif

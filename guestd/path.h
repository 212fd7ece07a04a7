/* SPDX-License-Identifier: MIT */
/*
 * Paths confined to the workspace (doc/DESIGN.md G-27).  A path from a client
 * is workspace-relative.  path_check() applies the lexical rules (no absolute
 * paths, no "." or ".." segments, no empty segments except a trailing "/",
 * no NUL, each name <= NAME_MAX, whole path <= PATH_MAX); path_open() then
 * resolves it with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) below
 * the workspace root, so a symlink that leads out is refused at whatever
 * component it appears.  When the kernel lacks openat2, an equivalent walk
 * opens one component at a time with O_NOFOLLOW and resolves symlinks
 * itself, refusing any that climb above the root.
 */
#ifndef GUESTD_PATH_H
#define GUESTD_PATH_H

#include <stddef.h>

/* Bot ids: [A-Za-z0-9_-][A-Za-z0-9._-]{0,63}.  0 or ERR_INVALID_BOT. */
int	 path_bot_valid(const char *bot);

/*
 * Lexical check of a client path of length len (len counts every byte, so
 * an embedded NUL is caught).  "" and "." mean the root.  0 or
 * ERR_PATH_OUTSIDE (absolute, ".."), ERR_PATH_INVALID (NUL, empty or "."
 * segment) or ERR_NAME_TOO_LONG.
 */
int	 path_check(const char *path, size_t len);

/* Open the workspace root as an O_PATH|O_DIRECTORY fd; -1 + errno. */
int	 path_root_open(const char *workspace);

/*
 * openat2-style open of a checked relative path beneath rootfd.  flags as
 * for openat (O_CREAT needs mode).  Returns an fd or ERR_* (symlink escape
 * -> ERR_PATH_OUTSIDE).
 */
int	 path_open(int rootfd, const char *path, int flags, int mode);

/*
 * Open the parent directory of path beneath rootfd and point *name at the
 * final component inside path.  For "a/b/c" opens "a/b" and *name = "c".
 * The root itself has no parent: ERR_PATH_INVALID.
 */
int	 path_open_parent(int rootfd, const char *path, const char **name);

/* Make bots/<bot>/ and shared/ if missing.  0 or ERR_*. */
int	 path_ensure_bot(int rootfd, const char *bot);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Workspace export and import (doc/DESIGN.md G-28) with libarchive.
 *
 * workspace.export streams a pax tar of directories and regular files as
 * binary frames, leaving out only the temporary cache and lock files inside
 * .browser-profiles (workspace_export_skip()).  A worker thread walks the
 * tree and writes the tar into a pipe; the loop forwards pipe chunks while
 * the controller reads, so a stalled reader stalls the walk, not memory.
 *
 * workspace.import takes a tar as binary frames into a pipe read by a
 * worker thread, which validates every entry (workspace_entry_check()) and
 * extracts into a staging directory beside the workspace; only when the
 * whole stream was good does it swap the staging directory in.  A swap by
 * moving entries is journalled, and workspace_recover() finishes one that
 * a crash cut short.
 */
#ifndef GUESTD_WORKSPACE_H
#define GUESTD_WORKSPACE_H

#include <stdint.h>
#include "control.h"

int	workspace_op_export(struct control_conn *, uint32_t, json_t *, char *,
	    size_t);
int	workspace_op_import(struct control_conn *, uint32_t, json_t *, char *,
	    size_t);
int	workspace_op_imported(struct control_conn *, uint32_t, json_t *,
	    char *, size_t);

/* 1 when a workspace-relative path is a temporary cache/lock file of a
 * browser profile that export leaves out. */
int	workspace_export_skip(const char *relpath, int is_dir);

/*
 * Validate one tar entry's name and type: relative, no "."/".." or empty
 * segments, names <= NAME_MAX, path < 65536 bytes (not PATH_MAX: walks
 * go openat by openat) and at most 512 directories deep, type directory or
 * regular file, no hardlink target.  type is the AE_IF* value.  0 or
 * ERR_TAR_ENTRY_REJECTED with a sentence in why.
 */
int	workspace_entry_check(const char *name, unsigned type, int has_link,
	    char *why, size_t whylen);

/*
 * The blocking halves of the ops, exposed for the unit tests and the fuzz
 * target; they run on worker threads and never touch the loop.
 */
struct workspace_limits {
	uint64_t	max_bytes;	/* declared and written file bytes; 0 = none */
	uint64_t	max_entries;	/* 0 = none */
};

struct workspace_counts {
	uint64_t	bytes;		/* file bytes written (import) */
	uint64_t	entries;	/* directories + regular files */
	uint64_t	skipped;	/* export: entries left out */
};

/*
 * Read a tar from tarfd (blocking) and extract it beneath the empty
 * directory stagefd, checking every entry and the limits.  Stops at the
 * end-of-archive marker without reading further; a stream that ends
 * without one (cut between entries or inside one) is ERR_TAR_TRUNCATED.
 * Refuses reserved top-level names (ERR_TAR_ENTRY_REJECTED) and files
 * whose sizes, a sparse entry's holes included, pass lim->max_bytes
 * (ERR_TAR_TOO_LARGE, before any of their data is written); a sparse
 * entry's holes stay holes.  0, or ERR_TAR_* /
 * ERR_NO_SPACE / ERR_* with a sentence naming the entry in why.  On error
 * stagefd may hold a partial tree: the caller removes it.
 */
int	workspace_extract_fd(int tarfd, int stagefd,
	    const struct workspace_limits *lim, struct workspace_counts *cnt,
	    char *why, size_t whylen);

/*
 * Write the tree below rootfd (a directory fd) as a pax tar to outfd
 * (blocking).  0, ERR_CANCELLED when the reader went away (EPIPE), or ERR_*.
 * Only a complete export ends with the end-of-archive marker.  A file
 * with holes is a sparse entry (pax GNU.sparse 1.0), its holes left out.
 * A path longer than 65535 bytes or 512 directories deep fails
 * ERR_NAME_TOO_LONG, never left out.
 */
int	workspace_export_fd(int rootfd, int outfd, struct workspace_counts *cnt);

/*
 * workspace_export_fd_fp: also fails ERR_TAR_TOO_LARGE when the files'
 * sizes (holes included) pass max_bytes (0: no cap), with a sentence
 * naming the path in why.
 *
 * The tree's fingerprint, "fp1:<start_ns>:<sha256 hex>" (workspace.c
 * says what it covers and why an equal one means an equal export), or ""
 * when the tree cannot have one.  WS_FP_MAX bytes hold it.
 *   workspace_export_fd_fp: the export, and the fingerprint of what it
 *     wrote (start_ns: when it began);
 *   workspace_fingerprint_fd: the same walk without the archive, with
 *     the start_ns of the fingerprint it is to be compared with.
 */
#define WS_FP_MAX	128
int	workspace_export_fd_fp(int rootfd, int outfd, uint64_t max_bytes,
	    struct workspace_counts *cnt, char *fp, size_t fplen, char *why,
	    size_t whylen);
int	workspace_fingerprint_fd(int rootfd, int64_t start_ns, char *fp,
	    size_t fplen);
/* workspace.fingerprint {"since": FP}: {"unchanged": true} when the tree
 * still has fingerprint FP, so its export would be the same archive. */
int	workspace_op_fingerprint(struct control_conn *, uint32_t, json_t *,
	    char *, size_t);

/* 1 when a top-level workspace name is guestd's own (".rakazo-*"): export
 * leaves it out and import refuses it. */
int	workspace_reserved(const char *topname);

/*
 * At start-up, before the workspace is served: finish an import's swap that
 * a crash interrupted (to exactly the old or exactly the new tree, as its
 * journal says) and remove staging leftovers.  0 or ERR_*.
 */
int	workspace_recover(const char *workspace);

/* Remove everything inside dirfd (never following symlinks).  0 or ERR_*. */
int	workspace_tree_empty(int dirfd);

#endif

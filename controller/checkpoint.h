/* SPDX-License-Identifier: MIT */
/*
 * Checkpoints and restores (SPEC C-8, C-9, C-11): when a computer's
 * workspace goes to the home store (home.h) and when it comes back.
 * The boundaries call in from the API: a run's end (deferred while any
 * other lease is live), a stop, an idle suspend, an operator's
 * checkpoint; a start of a new or replaced machine restores the newest
 * revision before the first tool call is answered.  Revision metadata is
 * in the state store (home_revisions) and mirrored as one JSON file per
 * revision under DATA_DIR/home-revisions/<home key>/.
 */
#ifndef CONTROLLER_CHECKPOINT_H
#define CONTROLLER_CHECKPOINT_H

#include <stdint.h>

#include "err.h"
#include "store.h"

struct api;
struct api_ctx;

#define CHECKPOINT_KEEP_DEFAULT	3
#define CHECKPOINT_LOCK_MS	600000
#define CHECKPOINT_EVENT	"computer.checkpoint"
#define RESTORE_EVENT		"computer.restore"

/*
 * Save running c's workspace as a new revision (cause: "stopped",
 * "idle", "run:<bot>/<outcome>", "operator").  A lease id is never a
 * cause: it authorises calls.  *out is the new row (revision 0 when the
 * provider has no workspace export: nothing to keep).  A failure leaves
 * the previous revision current and whole; CHECKPOINT_FAILED, NO_SPACE,
 * BUSY (the lock) or the provider's code, with a sentence in e.  Both
 * outcomes are recorded as a computer.checkpoint event.
 */
int	checkpoint_save(struct api_ctx *x, struct store_computer *c,
	    const char *cause, struct store_home_rev *out, struct errmsg *e);
/*
 * Import revision rev (0: the newest) into running c.  as_new records
 * it again as a new revision (an operator's restore), so nothing newer
 * is lost.  RESTORE_FAILED or NO_SUCH_REVISION on failure, with both
 * the machine's workspace and the store unchanged.
 */
int	checkpoint_restore(struct api_ctx *x, struct store_computer *c,
	    int64_t rev, int as_new, struct store_home_rev *out,
	    struct errmsg *e);
/*
 * Called by a start (C-8, C-11): restore the newest revision when the
 * machine is new or replaced (replaced set by the caller: its provider
 * type changed) or its workspace came up empty.  0 when there was
 * nothing to do.
 */
int	checkpoint_after_start(struct api_ctx *x, struct store_computer *c,
	    int replaced, struct errmsg *e);
/*
 * A run of c ended (its lease already released): save unless another
 * lease (another bot's run, a user's control) is live; that one's end,
 * or the idle job, saves instead.  1 saved, 0 deferred, < 0 failed.
 */
int	checkpoint_run_end(struct api_ctx *x, struct store_computer *c,
	    const char *cause, struct store_home_rev *out);
/*
 * The idle job's reservation of c (C-8): fails with LEASE_HELD when a
 * lease is live; while it holds, execution and control leases are
 * refused.  Release on every path.
 */
int	checkpoint_reserve(struct store *s, const char *computer,
	    struct store_lease *out);
void	checkpoint_unreserve(struct store *s, const struct store_lease *l);
/* A deleted computer: its revisions, rows and mirror go with it. */
int	checkpoint_forget(struct api_ctx *x, const char *computer);
/*
 * Start-up: remove what crashed checkpoints left (temporary archives,
 * archives and mirror files without a row) for every computer whose
 * lock is free.  *cleaned counts the computers tidied.
 */
/*
 * The object store's reconciler (C-10), from a task: checks the bucket
 * (its answer is what /internal/health reports), then deletes every
 * object no computer's revision row owns, skipping computers whose
 * checkpoint is under way.  *deleted counts the objects removed.
 */
int	checkpoint_sweep_objects(struct api *a, struct store *s,
	    int *deleted);
int	checkpoint_cleanup(struct api *a, struct store *s, int *cleaned);

#endif

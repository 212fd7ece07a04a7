/* SPDX-License-Identifier: MIT */
/*
 * computer_runs (doc/DESIGN.md C-7): one row per continuous provider run of a
 * computer, from ready to stop, closed with an endReason.  The reconciler
 * compares the rows with what the provider says is running.
 */
#ifndef CONTROLLER_RUN_RECORD_H
#define CONTROLLER_RUN_RECORD_H

#include "store.h"

#define RUN_STOPPED	"stopped"
#define RUN_IDLE	"idle"
#define RUN_ACTIVE_LIMIT "active_limit"
#define RUN_REPLACED	"replaced"
#define RUN_GONE	"gone"
#define RUN_DELETED	"deleted"
#define RUN_RECONCILED	"reconciled"

/* Open a row for computer unless one is open.  0 or ERR_*. */
int	run_record_started(struct store *s, const char *computer);
/* Close the open row (if any) with reason; 0 also when none was open. */
int	run_record_ended(struct store *s, const char *computer, const char *reason);
/* 1 if reason is one of C-7's endReasons. */
int	run_record_reason_valid(const char *reason);

/*
 * Reconcile: alive(computer row, arg) says whether it runs (1), does not
 * (0) or cannot tell (< 0, left alone).  Opens rows for running computers
 * without one, closes rows (reconciled) of computers that stopped, and
 * sets the computer's state to match.  *changed counts rows touched.
 */
int	run_record_reconcile(struct store *s,
	    int (*alive)(const struct store_computer *, void *), void *arg,
	    int *changed);

#endif

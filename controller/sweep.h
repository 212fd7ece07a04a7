/* SPDX-License-Identifier: MIT */
/*
 * The controller's periodic jobs, run by serve on its timers with the
 * API's settings (api.h): each returns 0 or an ERR_* code.
 */
#ifndef CONTROLLER_SWEEP_H
#define CONTROLLER_SWEEP_H

#include <stdint.h>

#include "api.h"

/*
 * Reconciler (C-7): the store's computers and runs corrected to what the
 * provider says is alive (run_record_reconcile()); *changed counts rows touched.
 */
int	sweep_reconcile(struct api *a, int *changed);
/* The object home store's reconciler and bucket check (checkpoint.c). */
int	sweep_objects(struct api *a, int *deleted);
/* Idle stop (C-6): *stopped counts computers stopped for idleness. */
int	sweep_idle(struct api *a, int *stopped);
/*
 * Revoke at guestd the capabilities whose lease expired or is gone (C-3,
 * G-20), also those a previous controller process granted.  *revoked
 * counts them; *next_ms is the next expiry of a lease holding
 * capabilities (0: none).
 */
int	sweep_caps(struct api *a, int *revoked, int64_t *next_ms);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Activity (doc/DESIGN.md G-30): one computer.command event per mutating tool
 * call, its text redacted before it is stored.  Read-only tools
 * (read_file, list_files, observe) record nothing.
 */
#ifndef CONTROLLER_ACTIVITY_H
#define CONTROLLER_ACTIVITY_H

#include <stdint.h>
#include <jansson.h>

#include "store.h"

#define ACTIVITY_COMMAND	"computer.command"

/* Record "fmt ..." (one line; redacted, newlines folded). */
int	activity_command(struct store *s, const char *computer,
	    const char *bot, const char *tool, int ok, const char *fmt, ...)
	    __attribute__((format(printf, 6, 7)));
/* An event of another kind (computer.checkpoint ...), redacted alike. */
int	activity_event(struct store *s, const char *kind, const char *computer,
	    const char *bot, const char *tool, int ok, const char *fmt, ...)
	    __attribute__((format(printf, 7, 8)));
/*
 * Long-poll support: every event recorded in this process, and every
 * change another process makes to the state store (serve watches it and
 * calls activity_notify()), bumps a counter and wakes the waiters.  Read
 * activity_seq() before listing; if the list is empty, activity_wait(seq,
 * deadline) lets the task wait until the counter moves after that read or
 * until deadline_ms (store_now_ms() clock).  0, or ERR_INTERNAL outside
 * a task, where nothing could wake it (the caller answers at once).
 */
uint64_t activity_seq(void);
int	 activity_wait(uint64_t seen, int64_t deadline_ms);
void	 activity_notify(void);

/* {id, computer, bot, ts_ms, kind, tool, ok, text} (new reference). */
json_t	*activity_json(const struct store_event *e);

#endif

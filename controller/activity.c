/* SPDX-License-Identifier: MIT */
/*
 * Activity events (activity.h).  Text is formatted, redacted and folded to
 * one line here, at the only door into the table, so no caller can store a
 * secret by forgetting to redact.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "json.h"
#include "redact.h"
#include "activity.h"
#include "task.h"

static struct task_cond	 activity_cv;
static uint64_t		 activity_counter;

uint64_t
activity_seq(void)
{
	return activity_counter;
}

int
activity_wait(uint64_t seen, int64_t deadline_ms)
{
	int64_t	 left;
	int	 r;

	while (activity_counter == seen) {
		left = deadline_ms - store_now_ms();
		if (left <= 0)
			break;
		/* Outside a task nothing can wake us: say so, never spin. */
		if ((r = task_cond_wait(&activity_cv, left)) == ERR_INTERNAL)
			return r;
		if (r != 0)
			break;
	}
	return 0;
}

void
activity_notify(void)
{
	activity_counter++;
	task_cond_broadcast(&activity_cv);
}

static int	activity_vrecord(struct store *, const char *, const char *,
		    const char *, const char *, int, const char *, va_list)
		    __attribute__((format(printf, 7, 0)));

static int
activity_vrecord(struct store *s, const char *kind, const char *computer,
    const char *bot, const char *tool, int ok, const char *fmt, va_list ap)
{
	struct store_event	 ev;
	char			 raw[STORE_TEXT_MAX];
	char			*p;
	int			 r;

	memset(&ev, 0, sizeof ev);
	vsnprintf(raw, sizeof raw, fmt, ap);
	redact_text(ev.text, sizeof ev.text, raw);
	/* A summary cut by a fixed buffer must still be a JSON string. */
	jsonx_utf8_fix(ev.text);
	for (p = ev.text; *p != '\0'; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	snprintf(ev.computer, sizeof ev.computer, "%s", computer);
	snprintf(ev.bot, sizeof ev.bot, "%s", bot);
	snprintf(ev.kind, sizeof ev.kind, "%s", kind);
	snprintf(ev.tool, sizeof ev.tool, "%s", tool);
	ev.ok = ok;
	ev.ts_ms = store_now_ms();
	if ((r = store_event_add(s, &ev)) == 0)
		activity_notify();
	return r;
}

int
activity_command(struct store *s, const char *computer, const char *bot,
    const char *tool, int ok, const char *fmt, ...)
{
	va_list	 ap;
	int	 r;

	va_start(ap, fmt);
	r = activity_vrecord(s, ACTIVITY_COMMAND, computer, bot, tool, ok,
	    fmt, ap);
	va_end(ap);
	return r;
}

int
activity_event(struct store *s, const char *kind, const char *computer,
    const char *bot, const char *tool, int ok, const char *fmt, ...)
{
	va_list	 ap;
	int	 r;

	va_start(ap, fmt);
	r = activity_vrecord(s, kind, computer, bot, tool, ok, fmt, ap);
	va_end(ap);
	return r;
}

json_t *
activity_json(const struct store_event *e)
{
	return json_pack("{s:I, s:s, s:s, s:I, s:s, s:s, s:b, s:s}",
	    "id", (json_int_t)e->id, "computer", e->computer, "bot", e->bot,
	    "ts_ms", (json_int_t)e->ts_ms, "kind", e->kind, "tool", e->tool,
	    "ok", e->ok, "text", e->text);
}

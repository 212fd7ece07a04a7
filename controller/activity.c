/*
 * Activity events (activity.h).  Text is formatted, redacted and folded to
 * one line here, at the only door into the table, so no caller can store a
 * secret by forgetting to redact.
 */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "redact.h"
#include "activity.h"

int
activity_command(struct store *s, const char *computer, const char *bot,
    const char *tool, int ok, const char *fmt, ...)
{
	struct store_event	 ev;
	char			 raw[STORE_TEXT_MAX];
	va_list			 ap;
	char			*p;

	memset(&ev, 0, sizeof ev);
	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	redact_text(ev.text, sizeof ev.text, raw);
	for (p = ev.text; *p != '\0'; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	snprintf(ev.computer, sizeof ev.computer, "%s", computer);
	snprintf(ev.bot, sizeof ev.bot, "%s", bot);
	snprintf(ev.kind, sizeof ev.kind, "%s", ACTIVITY_COMMAND);
	snprintf(ev.tool, sizeof ev.tool, "%s", tool);
	ev.ok = ok;
	ev.ts_ms = store_now_ms();
	return store_event_add(s, &ev);
}

json_t *
activity_json(const struct store_event *e)
{
	return json_pack("{s:I, s:s, s:s, s:I, s:s, s:s, s:b, s:s}",
	    "id", (json_int_t)e->id, "computer", e->computer, "bot", e->bot,
	    "ts_ms", (json_int_t)e->ts_ms, "kind", e->kind, "tool", e->tool,
	    "ok", e->ok, "text", e->text);
}

/*
 * Activity events (activity.h).  Text is formatted, redacted and folded to
 * one line here, at the only door into the table, so no caller can store a
 * secret by forgetting to redact.
 */
#include "autoconf.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "redact.h"
#include "activity.h"

static pthread_mutex_t	 activity_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 activity_cv = PTHREAD_COND_INITIALIZER;
static uint64_t		 activity_counter;

uint64_t
activity_seq(void)
{
	uint64_t	 v;

	pthread_mutex_lock(&activity_mu);
	v = activity_counter;
	pthread_mutex_unlock(&activity_mu);
	return v;
}

uint64_t
activity_wait(uint64_t seen, int64_t deadline_ms)
{
	struct timespec	 ts;
	uint64_t	 v;

	/* store_now_ms() is CLOCK_REALTIME, the condvar's default clock. */
	ts.tv_sec = deadline_ms / 1000;
	ts.tv_nsec = (deadline_ms % 1000) * 1000000;
	pthread_mutex_lock(&activity_mu);
	while (activity_counter == seen)
		if (pthread_cond_timedwait(&activity_cv, &activity_mu,
		    &ts) == ETIMEDOUT)
			break;
	v = activity_counter;
	pthread_mutex_unlock(&activity_mu);
	return v;
}

/* After the row is committed: wake the long polls (GET .../activity). */
static void
activity_notify(void)
{
	pthread_mutex_lock(&activity_mu);
	activity_counter++;
	pthread_cond_broadcast(&activity_cv);
	pthread_mutex_unlock(&activity_mu);
}

int
activity_command(struct store *s, const char *computer, const char *bot,
    const char *tool, int ok, const char *fmt, ...)
{
	struct store_event	 ev;
	char			 raw[STORE_TEXT_MAX];
	va_list			 ap;
	char			*p;
	int			 r;

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
	if ((r = store_event_add(s, &ev)) == 0)
		activity_notify();
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

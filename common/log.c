/* SPDX-License-Identifier: MIT */
/*
 * Logging: one key=value line per event, written with a single write(2)
 * so lines from forked children and threads never interleave.  The whole
 * line goes through redact_text() before it leaves the process (doc/DESIGN.md
 * callers should not log secrets, but a URL with credentials or a header
 * that slipped into a value is masked anyway.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "redact.h"
#include "xmalloc.h"

#define LOG_LINE_MAX	4096	/* before redaction */
#define LOG_OUT_MAX	8192	/* after: masks may lengthen a line */

static char		 log_ident[32];
static enum log_level	 log_level = LOG_LVL_INFO;
static int		 log_fd = 2;

static const char *const log_names[] = { "error", "warn", "info", "debug" };

/* fatal()'s line, once the log is set up: redacted like any other. */
static void
log_fatal(const char *msg)
{
	char	 q[1100];

	log_event(LOG_LVL_ERROR, "fatal", "msg=%s", log_quote(q, sizeof(q),
	    msg));
}

void
log_init(const char *ident, enum log_level level)
{
	snprintf(log_ident, sizeof(log_ident), "%s",
	    ident != NULL ? ident : program_invocation_short_name);
	log_set_level(level);
	fatal_set_sink(log_fatal);
}

void
log_set_level(enum log_level level)
{
	if ((int)level < LOG_LVL_ERROR)
		level = LOG_LVL_ERROR;
	if (level > LOG_LVL_DEBUG)
		level = LOG_LVL_DEBUG;
	log_level = level;
}

void
log_set_fd(int fd)
{
	log_fd = fd;
}

int
log_level_parse(const char *name)
{
	size_t	 i;

	if (name == NULL)
		return -1;
	for (i = 0; i < sizeof(log_names) / sizeof(log_names[0]); i++)
		if (strcasecmp(name, log_names[i]) == 0)
			return (int)i;
	if (strcasecmp(name, "warning") == 0)
		return LOG_LVL_WARN;
	return -1;
}

/* "2026-11-29T17:50:51.123Z" */
static void
log_timestamp(char *dst, size_t dstlen)
{
	struct timespec	 ts;
	struct tm	 tm;
	char		 s[24];
	int		 ms;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0 ||
	    gmtime_r(&ts.tv_sec, &tm) == NULL ||
	    strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm) == 0) {
		snprintf(dst, dstlen, "-");
		return;
	}
	ms = (int)(ts.tv_nsec / 1000000L) % 1000;
	snprintf(dst, dstlen, "%.23s.%03dZ", s, ms);
}

/* One write(2) for the whole line; retry only what a signal cut short. */
static void
log_write(const char *p, size_t n)
{
	ssize_t	 w;

	while (n > 0) {
		w = write(log_fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

void
log_eventv(enum log_level level, const char *event, const char *fmt,
    va_list ap)
{
	char	 line[LOG_LINE_MAX], out[LOG_OUT_MAX], ts[40];
	int	 n, saved = errno;
	size_t	 len;

	if (level > log_level)
		return;
	if ((int)level < LOG_LVL_ERROR)
		level = LOG_LVL_ERROR;
	if (log_ident[0] == '\0')
		snprintf(log_ident, sizeof(log_ident), "%s",
		    program_invocation_short_name);
	log_timestamp(ts, sizeof(ts));
	n = snprintf(line, sizeof(line), "ts=%s level=%s ident=%s event=%s",
	    ts, log_names[level], log_ident, event != NULL ? event : "-");
	if (n < 0)
		goto out;
	len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	if (fmt != NULL && fmt[0] != '\0' && len < sizeof(line) - 2) {
		line[len++] = ' ';
		/* "%s" of "" must not leave a trailing blank. */
		if (vsnprintf(line + len, sizeof(line) - len, fmt, ap) <= 0)
			line[len - 1] = '\0';
	}
	len = redact_text(out, sizeof(out) - 1, line);
	/* A value with an embedded newline must not forge a second line. */
	out[len] = '\0';
	for (n = 0; (size_t)n < len; n++)
		if (out[n] == '\n' || out[n] == '\r')
			out[n] = ' ';
	out[len++] = '\n';
	log_write(out, len);
	explicit_bzero(line, sizeof(line));
out:
	errno = saved;
}

void
log_event(enum log_level level, const char *event, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_eventv(level, event, fmt, ap);
	va_end(ap);
}

/* Bare values need no quotes; anything a k=v reader could split does. */
static int
log_needs_quote(const char *s)
{
	if (*s == '\0')
		return 1;
	for (; *s != '\0'; s++)
		if ((unsigned char)*s <= ' ' || *s == '"' || *s == '\\' ||
		    *s == '=' || *s == 0x7f)
			return 1;
	return 0;
}

char *
log_quote(char *dst, size_t dstlen, const char *value)
{
	char	 esc[8];
	size_t	 len = 0, n;
	unsigned char c;

	if (dstlen == 0)
		return dst;
	dst[0] = '\0';
	if (value == NULL)
		value = "";
	if (!log_needs_quote(value)) {
		snprintf(dst, dstlen, "%s", value);
		return dst;
	}
	if (dstlen < 3)
		return dst;
	dst[len++] = '"';
	for (; *value != '\0'; value++) {
		c = (unsigned char)*value;
		if (c == '"' || c == '\\')
			snprintf(esc, sizeof(esc), "\\%c", c);
		else if (c == '\n')
			snprintf(esc, sizeof(esc), "\\n");
		else if (c == '\r')
			snprintf(esc, sizeof(esc), "\\r");
		else if (c == '\t')
			snprintf(esc, sizeof(esc), "\\t");
		else if (c < ' ' || c == 0x7f)
			snprintf(esc, sizeof(esc), "\\x%02x", c);
		else {
			esc[0] = (char)c;
			esc[1] = '\0';
		}
		n = strlen(esc);
		/* Keep room for the closing quote and the NUL. */
		if (n > dstlen - 2 - len)
			break;
		memcpy(dst + len, esc, n);
		len += n;
	}
	dst[len++] = '"';
	dst[len] = '\0';
	return dst;
}

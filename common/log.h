/* SPDX-License-Identifier: MIT */
/*
 * Logging: one line per event, "ts=... level=info event=exec.start k=v ...".
 * Every line passes through redact_text() before it is written, so a value
 * that slipped through (a URL with credentials, a bearer token) is masked
 * anyway (doc/DESIGN.md X-5).  Logs go to stderr unless log_set_fd()
 * says otherwise.
 */
#ifndef COMMON_LOG_H
#define COMMON_LOG_H

#include <stdarg.h>
#include <stddef.h>

enum log_level {
	LOG_LVL_ERROR = 0,
	LOG_LVL_WARN,
	LOG_LVL_INFO,
	LOG_LVL_DEBUG
};

void	log_init(const char *ident, enum log_level level);
void	log_set_level(enum log_level level);
void	log_set_fd(int fd);
/* "error"/"warn"/"info"/"debug" -> level; -1 if unknown. */
int	log_level_parse(const char *name);

/*
 * fmt formats the key=value pairs that follow "event=<event>".  Values with
 * spaces should be quoted by the caller with log_quote().
 */
void	log_event(enum log_level level, const char *event, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
void	log_eventv(enum log_level level, const char *event, const char *fmt,
	    va_list ap) __attribute__((format(printf, 3, 0)));

#define log_error(ev, ...)	log_event(LOG_LVL_ERROR, ev, __VA_ARGS__)
#define log_warn(ev, ...)	log_event(LOG_LVL_WARN, ev, __VA_ARGS__)
#define log_info(ev, ...)	log_event(LOG_LVL_INFO, ev, __VA_ARGS__)
#define log_debug(ev, ...)	log_event(LOG_LVL_DEBUG, ev, __VA_ARGS__)

/*
 * Quote a value for a key=value line: wraps in "..." and escapes quotes,
 * backslashes and control characters when needed.  Writes at most dstlen
 * bytes including the NUL; returns dst.
 */
char	*log_quote(char *dst, size_t dstlen, const char *value);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Allocation that cannot fail, and fatal() for broken invariants: running
 * out of memory is a broken invariant for a daemon this size, so x*alloc
 * report and abort instead of returning NULL.
 *
 * This is the bottom of common/: it depends on nothing else here, so
 * redact.c can allocate without reaching back into log.c.  Logging hooks
 * in from above: log_init() makes fatal() write its line through the log
 * (fatal_set_sink()); before that it goes plainly to stderr.
 */
#ifndef COMMON_XMALLOC_H
#define COMMON_XMALLOC_H

#include <stddef.h>

/* Report msg and abort(). */
void	fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2),
	    noreturn));
/* Who reports fatal()'s message; NULL restores the plain stderr line. */
void	fatal_set_sink(void (*sink)(const char *msg));

void	*xmalloc(size_t n);
void	*xcalloc(size_t n, size_t m);
void	*xrealloc(void *p, size_t n);
char	*xstrdup(const char *s);
char	*xstrndup(const char *s, size_t n);

#endif

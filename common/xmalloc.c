/* SPDX-License-Identifier: MIT */
/*
 * Allocation that cannot fail and fatal(): see xmalloc.h for why they
 * sit below the log.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xmalloc.h"

static void	(*fatal_sink)(const char *);

void
fatal_set_sink(void (*sink)(const char *msg))
{
	fatal_sink = sink;
}

void
fatal(const char *fmt, ...)
{
	char	 msg[1024], line[1100];
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (fatal_sink != NULL)
		fatal_sink(msg);
	else {
		/* One write(2), as the log does, and no allocation. */
		n = snprintf(line, sizeof(line), "%s: fatal: %s\n",
		    program_invocation_short_name, msg);
		if (n > (int)sizeof(line) - 1)
			n = sizeof(line) - 1;
		if (n > 0)
			(void)!write(2, line, n);
	}
	abort();
}

void *
xmalloc(size_t n)
{
	void	*p;

	if ((p = malloc(n != 0 ? n : 1)) == NULL)
		fatal("out of memory allocating %zu bytes", n);
	return p;
}

void *
xcalloc(size_t n, size_t m)
{
	void	*p;

	if (n == 0 || m == 0)
		n = m = 1;
	if ((p = calloc(n, m)) == NULL)
		fatal("out of memory allocating %zu x %zu bytes", n, m);
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	void	*q;

	if ((q = realloc(p, n != 0 ? n : 1)) == NULL)
		fatal("out of memory reallocating %zu bytes", n);
	return q;
}

char *
xstrdup(const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		fatal("out of memory copying a string");
	return p;
}

char *
xstrndup(const char *s, size_t n)
{
	char	*p;

	if ((p = strndup(s, n)) == NULL)
		fatal("out of memory copying a string");
	return p;
}

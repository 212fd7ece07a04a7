/* SPDX-License-Identifier: MIT */
/*
 * Timing helpers shared by the bench timers (*-rtt.c): a monotonic clock in
 * microseconds and an ascending sort, so every timer reads its median
 * and p90 the same way.  Header-only: each timer is one file.
 */
#ifndef BENCH_TIMING_H
#define BENCH_TIMING_H

#include <stdlib.h>
#include <time.h>

static inline double
bench_now_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static inline int
bench_cmp_double(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sort n samples ascending: v[n / 2] is the median. */
static inline void
bench_sort(double *v, size_t n)
{
	qsort(v, n, sizeof *v, bench_cmp_double);
}

#endif

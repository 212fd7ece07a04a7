/* SPDX-License-Identifier: MIT */
/*
 * sys/queue.h, plus the _SAFE iterators glibc's copy lacks.
 *
 * Lists of loop objects (connections, waiters, children, calls) are
 * sys/queue.h lists, as in tmux and OpenSSH, not hand-written unlink
 * loops.  glibc ships the 4.4BSD header, which has no _FOREACH_SAFE
 * forms; the ones below are the BSDs' definitions, for loops whose body
 * may remove (and free) the element it is on.  Include this instead of
 * <sys/queue.h> directly.
 *
 * A LIST or TAILQ element must be linked before it is removed:
 * LIST_REMOVE on an element never inserted writes through NULL.  Objects
 * that can be freed before they are linked (a spawn that failed) keep a
 * flag saying whether they are, or are linked as soon as they exist.
 */
#ifndef COMMON_QUEUE_COMPAT_H
#define COMMON_QUEUE_COMPAT_H

#include <sys/queue.h>

#ifndef LIST_FOREACH_SAFE
#define LIST_FOREACH_SAFE(var, head, field, tvar)			\
	for ((var) = LIST_FIRST((head));				\
	    (var) && ((tvar) = LIST_NEXT((var), field), 1);		\
	    (var) = (tvar))
#endif

#ifndef SLIST_FOREACH_SAFE
#define SLIST_FOREACH_SAFE(var, head, field, tvar)			\
	for ((var) = SLIST_FIRST((head));				\
	    (var) && ((tvar) = SLIST_NEXT((var), field), 1);		\
	    (var) = (tvar))
#endif

#ifndef TAILQ_FOREACH_SAFE
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)			\
	for ((var) = TAILQ_FIRST((head));				\
	    (var) && ((tvar) = TAILQ_NEXT((var), field), 1);		\
	    (var) = (tvar))
#endif

#ifndef STAILQ_FOREACH_SAFE
#define STAILQ_FOREACH_SAFE(var, head, field, tvar)			\
	for ((var) = STAILQ_FIRST((head));				\
	    (var) && ((tvar) = STAILQ_NEXT((var), field), 1);		\
	    (var) = (tvar))
#endif

#endif /* COMMON_QUEUE_COMPAT_H */

/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: deskserver_xdotool_parse on an argv made of the input's
 * NUL-separated pieces, as a /v1/desktop step would bring it.  Checks the
 * translator's promises: on success every action has a role and a step
 * and waits are clamped; on failure there is no plan, a known code and a
 * terminated sentence.
 */
#include "autoconf.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "vocab.h"
#include "deskserver.h"
#include "guestd.h"

/* deskserver.c starts launches with exec.c, which reads the settings. */
struct guestd_settings guestd;

#define FUZZ_ARGV_MAX	(DESKSERVER_ARGV_MAX + 4)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char		*argv[FUZZ_ARGV_MAX];
	struct deskserver_plan	*p = NULL;
	struct vocab_error	 e;
	const struct action	*a;
	char			*buf;
	size_t			 n = 0, i, start = 0;
	int			 r;

	/* A NUL-terminated copy, split at NULs into at most FUZZ_ARGV_MAX. */
	if ((buf = malloc(size + 1)) == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (i = 0; i <= size && n < FUZZ_ARGV_MAX; i++) {
		if (buf[i] == '\0') {
			argv[n++] = buf + start;
			start = i + 1;
		}
	}
	r = deskserver_xdotool_parse(argv, n, &p, &e);
	if (r == 0) {
		if (p == NULL || p->nsteps != 1)
			abort();
		for (i = 0; p->b != NULL && i < p->b->n; i++) {
			a = &p->b->v[i];
			if (p->keyev[i] > DESKSERVER_LAUNCH || p->step[i] != 0)
				abort();
			if ((p->keyev[i] == DESKSERVER_KEY_DOWN ||
			    p->keyev[i] == DESKSERVER_KEY_UP) &&
			    (a->kind != ACTION_HOLD || a->nkeys == 0))
				abort();
			/* A launch: a wait 0 standing for its argv. */
			if ((p->keyev[i] == DESKSERVER_LAUNCH) !=
			    (p->launch[i] != NULL))
				abort();
			if (p->keyev[i] == DESKSERVER_LAUNCH &&
			    (a->kind != ACTION_WAIT || a->duration_ms != 0 ||
			    p->launch[i]->argv[0] == NULL))
				abort();
			if (a->kind == ACTION_WAIT &&
			    (a->duration_ms < 0 ||
			    a->duration_ms > DESKSERVER_WAIT_MAX_MS))
				abort();
			if (a->kind == ACTION_CLICK && (a->button < 1 ||
			    a->button > 9 || (a->button >= 4 &&
			    a->button <= 7)))
				abort();
		}
	} else if (p != NULL || r != e.code || r >= 0 || r <= ERR__LAST ||
	    memchr(e.msg, '\0', sizeof(e.msg)) == NULL)
		abort();
	deskserver_plan_free(p);
	free(buf);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * A private temporary directory per unit test (store, lease, token): made
 * under $TMPDIR (or /tmp) in setup, removed with everything in it in
 * teardown.  Header-only: each test binary is one file.
 */
#ifndef TESTS_UNIT_TMPDIR_H
#define TESTS_UNIT_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char	 unit_tmpdir[64];

/* Make unit_tmpdir as NAME.XXXXXX; 0 or -1 (cmocka's setup contract). */
static inline int
unit_tmpdir_new(const char *name)
{
	const char	*t = getenv("TMPDIR");

	snprintf(unit_tmpdir, sizeof(unit_tmpdir), "%s/%s.XXXXXX",
	    t != NULL && *t != '\0' && strlen(t) < 40 ? t : "/tmp", name);
	return mkdtemp(unit_tmpdir) == NULL ? -1 : 0;
}

static inline int
unit_tmpdir_remove(void)
{
	char	 cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", unit_tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

#endif

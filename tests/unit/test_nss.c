/* SPDX-License-Identifier: MIT */
/*
 * nss: the passwd/group pair for a uid without a passwd entry holds the
 * system's entries and ours (ours replacing a system entry of the same
 * name), a gid the system names keeps its name, nothing is written for a
 * uid with an entry, and the files go at nss_shutdown().
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nss.h"

static char	tmpdir[PATH_MAX];

/* A uid and gid the system does not name. */
static uid_t
free_id(void)
{
	uid_t	u;

	for (u = 3999000; getpwuid(u) != NULL || getgrgid(u) != NULL; u++)
		;
	return u;
}

static const char *
var(const char *name)
{
	const struct nss_var	*v;

	for (v = nss_vars(); v->name != NULL; v++)
		if (strcmp(v->name, name) == 0)
			return v->value;
	return NULL;
}

/* The file's contents (small), NUL-terminated; NULL when missing. */
static char *
slurp(const char *path)
{
	static char	 buf[1024 * 1024];
	FILE		*f;
	size_t		 n;

	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* The pair's files, from the directory nss_init() made under tmpdir. */
static void
files(char *pw, char *gr)
{
	char	cmd[PATH_MAX + 64];
	FILE	*p;

	snprintf(cmd, sizeof cmd, "ls -d %s/guestd-nss.*", tmpdir);
	assert_non_null(p = popen(cmd, "r"));
	assert_non_null(fgets(pw, PATH_MAX, p));
	pclose(p);
	pw[strcspn(pw, "\n")] = '\0';
	snprintf(gr, PATH_MAX, "%s/group", pw);
	strcat(pw, "/passwd");
}

static void
test_entry_needs_nothing(void **state)
{
	struct passwd	*pw;

	(void)state;
	assert_non_null(pw = getpwuid(getuid()));
	assert_int_equal(nss_init("rakazo", pw->pw_uid, pw->pw_gid, "/ws",
	    "/bin/bash"), 0);
	assert_false(nss_active());
	assert_null(nss_vars()[0].name);
	assert_int_equal(rmdir(tmpdir), 0);	/* nothing written */
	assert_non_null(mkdtemp(strcpy(tmpdir, "/tmp/test_nss.XXXXXX")));
	setenv("TMPDIR", tmpdir, 1);
}

static void
test_pair(void **state)
{
	char	 pw[PATH_MAX], gr[PATH_MAX], line[256], *s;
	uid_t	 u = free_id();

	(void)state;
	assert_int_equal(nss_init("rakazo", u, u, "/ws", "/bin/bash"), 0);
	files(pw, gr);
	s = slurp(pw);
	assert_non_null(s);
	assert_non_null(strstr(s, "root:x:0:0:"));	/* the system's */
	snprintf(line, sizeof line, "\nrakazo:x:%u:%u:rakazo:/ws:/bin/bash\n",
	    (unsigned)u, (unsigned)u);
	assert_non_null(strstr(s, line));
	s = slurp(gr);
	assert_non_null(s);
	assert_non_null(strstr(s, "root:x:0:"));
	snprintf(line, sizeof line, "\nrakazo:x:%u:\n", (unsigned)u);
	assert_non_null(strstr(s, line));
	if (nss_active()) {
		assert_string_equal(var("NSS_WRAPPER_PASSWD"), pw);
		assert_string_equal(var("NSS_WRAPPER_GROUP"), gr);
		assert_non_null(strstr(var("LD_PRELOAD"), "libnss_wrapper.so"));
	} else
		assert_null(var("LD_PRELOAD"));
	nss_shutdown();
	assert_false(nss_active());
	assert_null(slurp(pw));
	assert_null(slurp(gr));
	assert_int_equal(rmdir(tmpdir), 0);	/* the pair's dir went too */
	assert_non_null(mkdtemp(strcpy(tmpdir, "/tmp/test_nss.XXXXXX")));
	setenv("TMPDIR", tmpdir, 1);
}

/* Our name wins over the system's entry of that name; gid 0 stays root's. */
static void
test_name_taken(void **state)
{
	char	 pw[PATH_MAX], gr[PATH_MAX], line[256], *s;
	uid_t	 u = free_id();

	(void)state;
	assert_int_equal(nss_init("root", u, 0, "/ws", "/bin/sh"), 0);
	files(pw, gr);
	s = slurp(pw);
	assert_non_null(s);
	assert_null(strstr(s, "root:x:0:0:"));
	snprintf(line, sizeof line, "root:x:%u:0:root:/ws:/bin/sh\n",
	    (unsigned)u);
	assert_non_null(strstr(s, line));
	s = slurp(gr);
	assert_non_null(s);
	assert_non_null(strstr(s, "root:x:0:"));
	nss_shutdown();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entry_needs_nothing),
		cmocka_unit_test(test_pair),
		cmocka_unit_test(test_name_taken),
	};
	int	r;

	if (mkdtemp(strcpy(tmpdir, "/tmp/test_nss.XXXXXX")) == NULL)
		return 1;
	setenv("TMPDIR", tmpdir, 1);
	r = cmocka_run_group_tests(tests, NULL, NULL);
	(void)rmdir(tmpdir);
	return r;
}

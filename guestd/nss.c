/* SPDX-License-Identifier: MIT */
/*
 * One passwd/group pair per guestd for a uid without a passwd entry (see
 * nss.h).  The files live in a directory of ours under TMPDIR (the local
 * provider gives each computer a private one), mode 0700, and go at exit.
 *
 * They hold the system's own entries followed by ours, so `ls -l` still
 * names root and the system users while nss_wrapper is preloaded (it
 * answers from its files alone, without falling back to /etc/passwd).
 * An entry of the system's with our name is left out: ours must be the
 * one getpwnam() finds.  Our home is the workspace, our shell
 * guestd's.
 */
#include "autoconf.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "log.h"
#include "nss.h"

#define NSS_SYSTEM_MAX	(1024 * 1024)	/* bytes copied from /etc/passwd */

static char		 nss_dir[PATH_MAX / 2];	/* "" until written */
static char		 nss_lib[PATH_MAX];
static char		 nss_passwd[PATH_MAX];
static char		 nss_group[PATH_MAX];
static struct nss_var	 nss_env[4];	/* NULL name: none */

/* Where Debian (and others) put libnss_wrapper.so; 0 when found. */
static int
nss_find_lib(void)
{
	static const char *const dirs[] = {
		"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
		"/usr/lib/arm-linux-gnueabihf", "/usr/lib/i386-linux-gnu",
		"/usr/lib64", "/usr/lib", "/usr/local/lib",
	};
	size_t	i;

	for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(nss_lib, sizeof nss_lib, "%s/libnss_wrapper.so",
		    dirs[i]);
		if (access(nss_lib, R_OK) == 0)
			return 0;
	}
	nss_lib[0] = '\0';
	return -1;
}

/*
 * Write path: the system file's lines (at most NSS_SYSTEM_MAX bytes; a
 * missing system file is none), then ours when there is one, which then
 * replaces a system line of the same name.
 */
static int
nss_write(const char *path, const char *system, const char *user,
    const char *ours)
{
	FILE	*in = NULL, *out = NULL;
	char	*line = NULL;
	size_t	 cap = 0, nl = strlen(user), total = 0;
	ssize_t	 n;
	int	 fd, r = ERR_IO;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd == -1)
		return err_from_errno(errno);
	if ((out = fdopen(fd, "w")) == NULL) {
		r = err_from_errno(errno);
		close(fd);
		goto out;
	}
	if ((in = fopen(system, "re")) != NULL) {
		while ((n = getline(&line, &cap, in)) > 0) {
			if ((total += (size_t)n) > NSS_SYSTEM_MAX)
				break;
			if (*ours != '\0' && strncmp(line, user, nl) == 0 &&
			    line[nl] == ':')
				continue;
			if (fputs(line, out) == EOF ||
			    (line[n - 1] != '\n' && fputc('\n', out) == EOF))
				goto out;
		}
	}
	if (*ours != '\0' && fputs(ours, out) == EOF)
		goto out;
	r = 0;
out:
	free(line);
	if (in != NULL)
		fclose(in);
	if (out != NULL && fclose(out) == EOF && r == 0)
		r = ERR_IO;
	return r;
}

int
nss_init(const char *user, uid_t uid, gid_t gid, const char *home,
    const char *shell)
{
	const char	*tmp;
	char		 pw[PATH_MAX + 256], gr[256];
	int		 r;

	if (getpwuid(uid) != NULL)
		return 0;
	tmp = getenv("TMPDIR");
	if (tmp == NULL || *tmp != '/')
		tmp = "/tmp";
	if ((size_t)snprintf(nss_dir, sizeof nss_dir, "%s/guestd-nss.XXXXXX",
	    tmp) >= sizeof nss_dir) {
		nss_dir[0] = '\0';
		return ERR_TOO_LARGE;
	}
	if (mkdtemp(nss_dir) == NULL) {
		r = err_from_errno(errno);
		nss_dir[0] = '\0';
		return r;
	}
	snprintf(nss_passwd, sizeof nss_passwd, "%s/passwd", nss_dir);
	snprintf(nss_group, sizeof nss_group, "%s/group", nss_dir);
	snprintf(pw, sizeof pw, "%s:x:%u:%u:%s:%s:%s\n", user, (unsigned)uid,
	    (unsigned)gid, user, home, shell);
	/* A gid the system already names keeps its name. */
	gr[0] = '\0';
	if (getgrgid(gid) == NULL)
		snprintf(gr, sizeof gr, "%s:x:%u:\n", user, (unsigned)gid);
	if ((r = nss_write(nss_passwd, "/etc/passwd", user, pw)) != 0 ||
	    (r = nss_write(nss_group, "/etc/group", user, gr)) != 0) {
		nss_shutdown();
		return r;
	}
	atexit(nss_shutdown);
	if (nss_find_lib() != 0) {
		log_warn("nss.wrapper_missing", "uid=%u hint=\"install "
		    "libnss-wrapper\"", (unsigned)uid);
		return 0;
	}
	nss_env[0] = (struct nss_var){ "LD_PRELOAD", nss_lib };
	nss_env[1] = (struct nss_var){ "NSS_WRAPPER_PASSWD", nss_passwd };
	nss_env[2] = (struct nss_var){ "NSS_WRAPPER_GROUP", nss_group };
	nss_env[3] = (struct nss_var){ NULL, NULL };
	log_info("nss.files", "uid=%u user=%s", (unsigned)uid, user);
	return 0;
}

const struct nss_var *
nss_vars(void)
{
	return nss_env;
}

int
nss_active(void)
{
	return nss_env[0].name != NULL;
}

void
nss_shutdown(void)
{
	if (nss_dir[0] == '\0')
		return;
	(void)unlink(nss_passwd);
	(void)unlink(nss_group);
	(void)rmdir(nss_dir);
	nss_dir[0] = '\0';
	nss_env[0] = (struct nss_var){ NULL, NULL };
}

/* SPDX-License-Identifier: MIT */
/*
 * Names for a uid without a passwd entry (G-19): the local provider's
 * uids from --local-uid-range, a container run as an arbitrary uid.
 * nss_init() writes one passwd/group pair for the whole guestd, and
 * every child it starts for the workspace user (commands, terminal
 * shells, desktop programs, the window manager, the browser) gets
 * nss_wrapper preloaded on it through nss_vars(), so whoami, getent,
 * git, ssh and getpass name the workspace user and find its home.
 * /etc/passwd is never touched.
 */
#ifndef GUESTD_NSS_H
#define GUESTD_NSS_H

#include <sys/types.h>

struct nss_var {
	const char	*name;
	const char	*value;
};

/* Name uid user, its group gid user (unless the system names gid),
 * with home and shell; 0 or ERR_*.  Nothing to do (and 0) when the uid
 * has a passwd entry. */
int	nss_init(const char *user, uid_t uid, gid_t gid, const char *home,
	    const char *shell);

/* Variables to add to a child's environment, ended by a NULL name;
 * empty when the uid has an entry or nss_wrapper is not installed. */
const struct nss_var	*nss_vars(void);

/* The pair is in use: files written and nss_wrapper found. */
int	nss_active(void);

/* Remove the files (also at exit). */
void	nss_shutdown(void);

#endif

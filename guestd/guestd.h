/* SPDX-License-Identifier: MIT */
/*
 * Process-wide settings of guestd, filled once by main.c before the loop
 * starts and read-only afterwards.
 */
#ifndef GUESTD_GUESTD_H
#define GUESTD_GUESTD_H

#include <stdint.h>
#include <sys/types.h>

struct guestd_settings {
	const char	*workspace;	/* absolute path of the workspace root */
	const char	*user;		/* workspace user name */
	uid_t		 uid;
	gid_t		 gid;
	const char	*shell;		/* /bin/bash */
	uint64_t	 home_max_bytes;	/* the home's file sizes, holes
						   counted: export and import */
	uint64_t	 import_max_entries;
	uint64_t	 exec_max_output;	/* cap on output_limit */
	int64_t		 exec_max_timeout_ms;
	int64_t		 exec_max_running;	/* concurrent commands */
	uint64_t	 started_ms;		/* loop_now_ms() at start */
};

extern struct guestd_settings guestd;

#define GUESTD_VERSION_STRING	"guestd/" PACKAGE_VERSION

#endif

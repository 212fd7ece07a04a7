/* SPDX-License-Identifier: MIT */
/*
 * The local home store (SPEC C-9), one implementation of home.h: each
 * revision one archive file under DATA_DIR/homes/<home key>/.
 */
#ifndef CONTROLLER_HOME_LOCAL_H
#define CONTROLLER_HOME_LOCAL_H

#include "err.h"
#include "home.h"

/* Fill hs->impl for data_dir (its homes/ made when missing). */
int	home_local_init(struct home_store *hs, const char *data_dir,
	    struct errmsg *e);

/*
 * Where a put of the local store is being written (home-object.c reads
 * it back while it grows, to seal and upload it).
 */
const char	*home_local_put_path(const struct home_put *p);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The object home store (SPEC C-10), one implementation of home.h: sealed
 * revisions in an S3 bucket (homes/<storage id>/<revision>), with
 * DATA_DIR/homes as the cache.  home-object.c says how.
 */
#ifndef CONTROLLER_HOME_OBJECT_H
#define CONTROLLER_HOME_OBJECT_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "home.h"
#include "seal.h"

struct s3;
struct store;

extern const struct home_store_ops	home_object_ops;

/*
 * Turn the object store on for this process (serve, once the bucket
 * answered): home_store_open_st() then opens object stores.  NULL turns
 * it off.  content is the space's content key, copied.
 */
void	home_object_configure(struct s3 *s3,
	    const uint8_t content[SEAL_KEY_LEN]);
int	home_object_enabled(void);
/*
 * The bucket's health for /internal/health: 0, or the code of the last
 * failed check with its sentence in *msg.  home_object_check (from a
 * task) lists homes/ once and records the answer.
 */
int	home_object_health(const char **msg);
void	home_object_health_set(int code, const char *msg);
int	home_object_check(struct errmsg *e);
struct s3 *home_object_s3(void);
int	home_object_init(struct home_store *hs, const char *data_dir,
	    struct store *st, struct errmsg *e);
/* The newest revision of keep (-1: none), the one the bucket holds. */
int64_t	home_object_current(const int64_t *keep, size_t nkeep);
/* Forget key's wrapped data key (a deleted computer); 0 when off. */
int	home_object_forget_key(struct store *st, const char *key);
/*
 * From a task: delete key's objects not in keep, or (key NULL) every
 * object under homes/ for which owned(arg, home, revision) is 0.
 * *deleted (may be NULL) counts them.
 */
int	home_object_prune(const char *key, const int64_t *keep, size_t nkeep,
	    int (*owned)(void *, const char *, int64_t), void *arg,
	    int *deleted, struct errmsg *e);

#endif

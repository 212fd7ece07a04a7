/* SPDX-License-Identifier: MIT */
/*
 * The table a state-store backend fills in (store-sqlite.c, store-pg.c).
 * store.c owns the struct store and forwards every call here, so
 * callers of store.h never learn which backend runs.
 */
#ifndef CONTROLLER_STORE_BACKEND_H
#define CONTROLLER_STORE_BACKEND_H

#include "store.h"

struct errmsg;

struct store_ops {
	const char	*name;
	int	(*open)(void **impl, const char *where, struct errmsg *err);
	void	(*close)(void *impl);
	int	(*schema_version)(void *impl, int64_t *version);
	int	(*begin)(void *impl);
	int	(*commit)(void *impl);
	void	(*rollback)(void *impl);
	int	(*in_tx)(void *impl);
	/* Inside a frame: change a row and change it back (health). */
	int	(*write_probe)(void *impl);
	int	(*computer_create)(void *, const struct store_computer *);
	int	(*computer_get)(void *, const char *, struct store_computer *);
	int	(*computer_update)(void *, const struct store_computer *);
	int	(*computer_touch)(void *, const char *, int64_t);
	int	(*computer_delete)(void *, const char *);
	int	(*computer_home_key_get)(void *, const char *, char *, size_t);
	int	(*computer_home_key_set)(void *, const char *, const char *);
	int	(*computer_list)(void *, struct store_computer **, size_t *);
	int	(*bot_ensure)(void *, const char *, const char *,
		    struct store_bot *);
	int	(*bot_update)(void *, const struct store_bot *);
	int	(*lease_find)(void *, const char *, const char *, const char *,
		    struct store_lease *);
	int	(*lease_get)(void *, const char *, struct store_lease *);
	int	(*lease_put)(void *, const struct store_lease *);
	int	(*lease_delete)(void *, const char *);
	int	(*lease_delete_computer)(void *, const char *);
	int	(*lease_count_live)(void *, const char *, int64_t, int64_t *);
	int	(*run_open)(void *, const char *, int64_t, int64_t *);
	int	(*run_current)(void *, const char *, struct store_run *);
	int	(*run_close)(void *, int64_t, int64_t, const char *);
	int	(*run_list)(void *, const char *, struct store_run **,
		    size_t *);
	int	(*event_add)(void *, struct store_event *);
	int	(*event_list)(void *, const char *, int64_t, size_t,
		    struct store_event **, size_t *);
	int	(*cap_add)(void *, struct store_cap *);
	int	(*cap_list_lease)(void *, const char *, struct store_cap **,
		    size_t *);
	int	(*cap_list_dead)(void *, int64_t, struct store_cap **,
		    size_t *);
	int	(*cap_delete)(void *, int64_t);
	int	(*cap_next_expiry)(void *, int64_t *);
	int	(*uid_get)(void *, const char *, int64_t *);
	int	(*uid_list)(void *, int64_t **, size_t *);
	int	(*uid_add)(void *, const char *, int64_t, int64_t);
	int	(*uid_retire)(void *, const char *, int64_t);
	int	(*home_rev_add)(void *, const struct store_home_rev *);
	int	(*home_rev_list)(void *, const char *,
		    struct store_home_rev **, size_t *);
	int	(*home_rev_latest)(void *, const char *,
		    struct store_home_rev *);
	int	(*home_rev_delete)(void *, const char *, int64_t);
	/* Optional (NULL: the backend has no notices). */
	int	(*watch)(void *, int *);
	int	(*watch_read)(void *);
};

extern const struct store_ops	store_sqlite_ops;
extern const struct store_ops	store_pg_ops;

#endif

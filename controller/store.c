/* SPDX-License-Identifier: MIT */
/*
 * The state store front (store.h): picks a backend from the store URL and
 * forwards each call to it: "sqlite:" (or a directory) and "postgres://".
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdio.h>

#include "err.h"
#include "store.h"
#include "store-backend.h"
#include "xmalloc.h"

struct store {
	const struct store_ops	*ops;
	void			*impl;
};

int64_t
store_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
store_open(struct store **out, const char *url, struct errmsg *err)
{
	const struct store_ops *ops = &store_sqlite_ops;
	struct store	*s;
	const char	*where = url;
	char		 path[4096];
	int		 r;

	*out = NULL;
	if (strncmp(url, "sqlite:", 7) == 0)
		where = url + 7;
	else if (strncmp(url, "postgres://", 11) == 0 ||
	    strncmp(url, "postgresql://", 13) == 0)
		ops = &store_pg_ops;
	else if (strstr(url, "://") != NULL) {
		return errmsg_set(err, ERR_CONFIG, "unsupported state store "
		    "'%.*s'", (int)(strstr(url, "://") - url), url);
	} else {
		/* A directory: the embedded default under DATA_DIR. */
		if ((size_t)snprintf(path, sizeof path, "%s/state.db", url) >=
		    sizeof path)
			return errmsg_set(err, ERR_CONFIG, "the data directory "
			    "path is too long");
		where = path;
	}
	s = xcalloc(1, sizeof *s);
	s->ops = ops;
	if ((r = s->ops->open(&s->impl, where, err)) != 0) {
		free(s);
		return r;
	}
	*out = s;
	return 0;
}

void
store_free(struct store *s)
{
	if (s == NULL)
		return;
	s->ops->close(s->impl);
	free(s);
}

const char *
store_backend(const struct store *s)
{
	return s->ops->name;
}

int
store_schema_version(struct store *s, int64_t *v)
{
	return s->ops->schema_version(s->impl, v);
}

int
store_health(struct store *s)
{
	int64_t	 v;

	return s->ops->schema_version(s->impl, &v);
}

int
store_write_check(struct store *s)
{
	int	 r;

	if ((r = store_begin(s)) != 0)
		return r;
	return store_end(s, s->ops->write_probe(s->impl));
}

int store_begin(struct store *s) { return s->ops->begin(s->impl); }
int store_commit(struct store *s) { return s->ops->commit(s->impl); }
void store_rollback(struct store *s) { s->ops->rollback(s->impl); }
int store_in_tx(struct store *s) { return s->ops->in_tx(s->impl); }

int
store_end(struct store *s, int r)
{
	if (r == 0)
		r = store_commit(s);
	if (r != 0)
		store_rollback(s);
	return r;
}

int
store_computer_create(struct store *s, const struct store_computer *c)
{
	return s->ops->computer_create(s->impl, c);
}

int
store_computer_get(struct store *s, const char *id, struct store_computer *o)
{
	return s->ops->computer_get(s->impl, id, o);
}

int
store_computer_update(struct store *s, const struct store_computer *c)
{
	return s->ops->computer_update(s->impl, c);
}

int
store_computer_touch(struct store *s, const char *id, int64_t now)
{
	return s->ops->computer_touch(s->impl, id, now);
}

int
store_computer_home_key_get(struct store *s, const char *id, char *out,
    size_t len)
{
	return s->ops->computer_home_key_get(s->impl, id, out, len);
}

int
store_computer_home_key_set(struct store *s, const char *id,
    const char *hex)
{
	return s->ops->computer_home_key_set(s->impl, id, hex);
}

int
store_computer_delete(struct store *s, const char *id)
{
	return s->ops->computer_delete(s->impl, id);
}

int
store_computer_list(struct store *s, struct store_computer **o, size_t *n)
{
	return s->ops->computer_list(s->impl, o, n);
}

int
store_bot_ensure(struct store *s, const char *c, const char *b,
    struct store_bot *o)
{
	return s->ops->bot_ensure(s->impl, c, b, o);
}

int
store_bot_update(struct store *s, const struct store_bot *b)
{
	return s->ops->bot_update(s->impl, b);
}

int
store_lease_find(struct store *s, const char *c, const char *b,
    const char *kind, struct store_lease *o)
{
	return s->ops->lease_find(s->impl, c, b, kind, o);
}

int
store_lease_get(struct store *s, const char *id, struct store_lease *o)
{
	return s->ops->lease_get(s->impl, id, o);
}

int
store_lease_put(struct store *s, const struct store_lease *l)
{
	return s->ops->lease_put(s->impl, l);
}

int
store_lease_delete(struct store *s, const char *id)
{
	return s->ops->lease_delete(s->impl, id);
}

int
store_lease_delete_computer(struct store *s, const char *c)
{
	return s->ops->lease_delete_computer(s->impl, c);
}

int
store_lease_count_live(struct store *s, const char *c, int64_t now,
    int64_t *n)
{
	return s->ops->lease_count_live(s->impl, c, now, n);
}

int
store_run_open(struct store *s, const char *c, int64_t now, int64_t *id)
{
	return s->ops->run_open(s->impl, c, now, id);
}

int
store_run_current(struct store *s, const char *c, struct store_run *o)
{
	return s->ops->run_current(s->impl, c, o);
}

int
store_run_close(struct store *s, int64_t id, int64_t now, const char *why)
{
	return s->ops->run_close(s->impl, id, now, why);
}

int
store_run_list(struct store *s, const char *c, struct store_run **o,
    size_t *n)
{
	return s->ops->run_list(s->impl, c, o, n);
}

int
store_event_add(struct store *s, struct store_event *ev)
{
	return s->ops->event_add(s->impl, ev);
}

int
store_event_list(struct store *s, const char *c, int64_t after, size_t limit,
    struct store_event **o, size_t *n)
{
	return s->ops->event_list(s->impl, c, after, limit, o, n);
}

int
store_cap_add(struct store *s, struct store_cap *c)
{
	return s->ops->cap_add(s->impl, c);
}

int
store_cap_list_lease(struct store *s, const char *lease,
    struct store_cap **o, size_t *n)
{
	return s->ops->cap_list_lease(s->impl, lease, o, n);
}

int
store_cap_list_dead(struct store *s, int64_t now, struct store_cap **o,
    size_t *n)
{
	return s->ops->cap_list_dead(s->impl, now, o, n);
}

int
store_cap_delete(struct store *s, int64_t id)
{
	return s->ops->cap_delete(s->impl, id);
}

int
store_cap_next_expiry(struct store *s, int64_t *at)
{
	return s->ops->cap_next_expiry(s->impl, at);
}

int
store_uid_get(struct store *s, const char *computer, int64_t *uid)
{
	return s->ops->uid_get(s->impl, computer, uid);
}

int
store_uid_list(struct store *s, int64_t **out, size_t *n)
{
	return s->ops->uid_list(s->impl, out, n);
}

int
store_uid_add(struct store *s, const char *computer, int64_t uid,
    int64_t now_ms)
{
	return s->ops->uid_add(s->impl, computer, uid, now_ms);
}

int
store_uid_retire(struct store *s, const char *computer, int64_t now_ms)
{
	return s->ops->uid_retire(s->impl, computer, now_ms);
}

int
store_home_rev_add(struct store *s, const struct store_home_rev *h)
{
	return s->ops->home_rev_add(s->impl, h);
}

int
store_home_rev_list(struct store *s, const char *computer,
    struct store_home_rev **out, size_t *n)
{
	return s->ops->home_rev_list(s->impl, computer, out, n);
}

int
store_home_rev_latest(struct store *s, const char *computer,
    struct store_home_rev *out)
{
	return s->ops->home_rev_latest(s->impl, computer, out);
}

int
store_home_rev_delete(struct store *s, const char *computer, int64_t rev)
{
	return s->ops->home_rev_delete(s->impl, computer, rev);
}

int
store_watch(struct store *s, int *fd)
{
	*fd = -1;
	if (s->ops->watch == NULL)
		return ERR_UNKNOWN_OP;
	return s->ops->watch(s->impl, fd);
}

int
store_watch_read(struct store *s)
{
	if (s->ops->watch_read == NULL)
		return ERR_UNKNOWN_OP;
	return s->ops->watch_read(s->impl);
}

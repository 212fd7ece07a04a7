/* SPDX-License-Identifier: MIT */
/*
 * The file tools of a stopped computer (tool-stored.h, SPEC C-15).  The
 * client's path gets guestd's checks (home_browse_path) before the store
 * is opened, so an escape is refused with PATH_OUTSIDE_WORKSPACE here as
 * it is by a running machine; the answer names the revision it came
 * from, as a stored workspace may be older than the machine's last
 * state when its last checkpoint failed.  The revision's archive is
 * hashed before each answer: a damaged one is refused, as a restore
 * refuses it.
 */
#include "autoconf.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "home.h"
#include "home-browse.h"
#include "provider.h"
#include "store.h"
#include "tool.h"
#include "tool-stored.h"

int
tool_stored_rev(struct tool_ctx *t, struct store_home_rev *h,
    struct errmsg *err)
{
	struct store_computer	*c = t->computer;
	int			 r;

	memset(h, 0, sizeof *h);
	if (t->data_dir == NULL)
		return 0;
	/*
	 * Only a computer stopped on purpose (a stop, an idle suspend) is
	 * looked at in its store: one whose machine died is "running" still
	 * and its next call brings a machine back (C-11).
	 */
	if (strcmp(c->state, "stopped") != 0)
		return 0;
	if (strcmp(c->provider, provider_name(t->prov)) == 0 &&
	    provider_alive(t->prov, c) == 1)
		return 0;
	if ((r = store_home_rev_latest(t->store, c->id, h)) == ERR_NOT_FOUND)
		return 0;	/* nothing stored: the machine it is */
	if (r != 0) {
		return errmsg_set(err, r, "The home revisions cannot be read.");
	}
	return 1;
}

static json_t *
tool_stored_json(const struct store_home_rev *h)
{
	return json_pack("{s:I, s:I}", "revision", (json_int_t)h->revision,
	    "created_ms", (json_int_t)h->created_ms);
}

/*
 * A revision is served only while its archive is the one its row
 * recorded: a restore refuses a damaged archive, so its files are not
 * shown as the computer's either.
 */
static int
tool_stored_verify(struct tool_ctx *t, struct home_store *hs,
    const struct store_home_rev *h, struct errmsg *e)
{
	struct errmsg	 ve;
	int		 r;

	memset(&ve, 0, sizeof ve);
	if ((r = home_browse_verify(hs, home_key(t->computer->id),
	    h->revision, h->bytes, h->sha256, &ve)) != 0)
		return errmsg_set(e, r, "The stored workspace (revision %lld) "
		    "cannot be shown: %s", (long long)h->revision,
		    errmsg_str(&ve));
	return 0;
}

static int
tool_stored_open(struct tool_ctx *t, json_t *jpath, char *path,
    size_t pathlen, struct home_store **hs, struct errmsg *e)
{
	int	 r;

	*hs = NULL;
	if (jpath == NULL)
		path[0] = '\0';
	else if ((r = home_browse_path(json_string_value(jpath),
	    json_string_length(jpath), path, pathlen, e)) != 0)
		return r;
	return home_store_open_st(hs, t->data_dir, t->store, e);
}

int
tool_stored_list(struct tool_ctx *t, const struct store_home_rev *h,
    json_t *jpath, json_t **result, struct errmsg *err)
{
	struct home_store	*hs = NULL;
	struct errmsg		 e;
	char			 path[PATH_MAX];
	int			 r;

	*result = NULL;
	memset(&e, 0, sizeof e);
	if ((r = tool_stored_open(t, jpath, path, sizeof path, &hs, &e)) != 0 ||
	    (r = tool_stored_verify(t, hs, h, &e)) != 0 ||
	    (r = home_browse_list(hs, home_key(t->computer->id), h->revision,
	    path, result, &e)) != 0) {
		*err = e;
		goto out;
	}
	json_object_set_new(*result, "stored", tool_stored_json(h));
out:
	home_store_free(hs);
	return r;
}

int
tool_stored_read(struct tool_ctx *t, const struct store_home_rev *h,
    json_t *jpath, int64_t off, int64_t len, json_t **result, void **data,
    size_t *n, struct errmsg *err)
{
	struct home_store	*hs = NULL;
	struct errmsg		 e;
	char			 path[PATH_MAX];
	int64_t			 size = 0;
	int			 r;

	*result = NULL;
	memset(&e, 0, sizeof e);
	if ((r = tool_stored_open(t, jpath, path, sizeof path, &hs, &e)) != 0 ||
	    (r = tool_stored_verify(t, hs, h, &e)) != 0 ||
	    (r = home_browse_read(hs, home_key(t->computer->id), h->revision,
	    path, off, len, data, n, &size, &e)) != 0) {
		*err = e;
		goto out;
	}
	*result = json_pack("{s:I, s:I, s:I, s:o}", "size", (json_int_t)size,
	    "offset", (json_int_t)off, "length", (json_int_t)*n, "stored",
	    tool_stored_json(h));
out:
	home_store_free(hs);
	return r;
}

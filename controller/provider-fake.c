/* SPDX-License-Identifier: MIT */
/*
 * SANDBOX_PROVIDER=fake (P-2): computers without processes or X servers,
 * for tests of controller logic (leases, runs, activity, the API's error
 * paths).  The lifecycle marks a computer running or not; its endpoint is
 * inproc://fake/ID, a guestd stand-in this file serves in the process
 * (guest.h), so every call takes the path a real guestd's does up to the
 * transport.  The stand-in keeps files in memory, echoes exec commands,
 * hands out a 1x1 screenshot whose frame only changes after an act, and
 * enforces fences per bot exactly as guestd does (G-32).
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "guest.h"
#include "provider.h"
#include "queue-compat.h"
#include "xmalloc.h"

/*
 * Running computers, files and per-bot fences (loop thread only: no lock).
 * Files and fences are never forgotten: singly linked is enough.
 */
struct fake_file {
	char		 key[STORE_ID_MAX + 512];	/* computer/path */
	char		*data;
	size_t		 len;
	SLIST_ENTRY(fake_file) entry;
};

struct fake_fence {
	char		 key[2 * STORE_ID_MAX];		/* computer/bot */
	int64_t		 fence;
	SLIST_ENTRY(fake_fence) entry;
};

struct fake_run {
	char		 id[STORE_ID_MAX];
	int64_t		 frame;
	LIST_ENTRY(fake_run) entry;
};

static SLIST_HEAD(, fake_file)	 fake_files =
    SLIST_HEAD_INITIALIZER(fake_files);
static SLIST_HEAD(, fake_fence)	 fake_fences =
    SLIST_HEAD_INITIALIZER(fake_fences);
static LIST_HEAD(, fake_run)	 fake_runs = LIST_HEAD_INITIALIZER(fake_runs);

/* A 1x1 PNG. */
static const unsigned char fake_png[] = {
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d,
	0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53, 0xde, 0x00, 0x00, 0x00,
	0x0c, 0x49, 0x44, 0x41, 0x54, 0x08, 0xd7, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
	0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xdd, 0x8d, 0xb0, 0x00, 0x00, 0x00,
	0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82
};

static struct fake_run *
fake_run_find(const char *id)
{
	struct fake_run	*u;

	LIST_FOREACH(u, &fake_runs, entry)
		if (strcmp(u->id, id) == 0)
			return u;
	return NULL;
}

static int
fake_start(struct provider *p, struct store_computer *c, struct errmsg *err)
{
	struct fake_run	*u;

	if (fake_run_find(c->id) == NULL) {
		u = xcalloc(1, sizeof *u);
		snprintf(u->id, sizeof u->id, "%s", c->id);
		u->frame = 1;
		LIST_INSERT_HEAD(&fake_runs, u, entry);
	}
	snprintf(c->ref, sizeof c->ref, "{\"fake\":true}");
	return 0;
}

static int
fake_alive(struct provider *p, const struct store_computer *c)
{
	return fake_run_find(c->id) != NULL;
}

static int
fake_stop(struct provider *p, struct store_computer *c)
{
	struct fake_run	*u;

	if ((u = fake_run_find(c->id)) != NULL) {
		LIST_REMOVE(u, entry);
		free(u);
	}
	return 0;
}

/* G-32 as guestd does it. */
static int
fake_fence_check(const char *computer, json_t *args, struct errmsg *err)
{
	struct fake_fence	*f;
	const char		*bot = json_string_value(json_object_get(args,
				    "bot"));
	json_t			*jf = json_object_get(args, "fence");
	char			 key[2 * STORE_ID_MAX];
	int64_t			 fence;

	if (jf == NULL)
		return 0;
	if (bot == NULL || !json_is_integer(jf))
		return ERR_BAD_REQUEST;
	fence = json_integer_value(jf);
	snprintf(key, sizeof key, "%s/%s", computer, bot);
	SLIST_FOREACH(f, &fake_fences, entry)
		if (strcmp(f->key, key) == 0)
			break;
	if (f == NULL) {
		f = xcalloc(1, sizeof *f);
		snprintf(f->key, sizeof f->key, "%s", key);
		SLIST_INSERT_HEAD(&fake_fences, f, entry);
	}
	if (fence < f->fence)
		return errmsg_set(err, ERR_STALE_FENCE, "STALE_FENCE: %s",
		    err_message(ERR_STALE_FENCE));
	f->fence = fence;
	return 0;
}

static struct fake_file *
fake_file_find(const char *key)
{
	struct fake_file	*f;

	SLIST_FOREACH(f, &fake_files, entry)
		if (strcmp(f->key, key) == 0)
			return f;
	return NULL;
}

static int
fake_files_op(const char *computer, const char *op, json_t *args,
    const void *in, size_t inlen, json_t **result, void **out,
    size_t *outlen)
{
	struct fake_file	*f;
	const char		*path = json_string_value(json_object_get(args,
				    "path"));
	char			 key[sizeof f->key];
	json_t			*entries;
	size_t			 plen;

	if (path == NULL)
		return ERR_BAD_REQUEST;
	snprintf(key, sizeof key, "%s/%s", computer, path);
	if (strcmp(op, "file.write") == 0) {
		if ((f = fake_file_find(key)) == NULL) {
			f = xcalloc(1, sizeof *f);
			snprintf(f->key, sizeof f->key, "%s", key);
			SLIST_INSERT_HEAD(&fake_files, f, entry);
		}
		free(f->data);
		f->data = xmalloc(inlen + 1);
		memcpy(f->data, in, inlen);
		f->len = inlen;
		*result = json_pack("{s:s, s:I}", "path", path, "size",
		    (json_int_t)inlen);
		return 0;
	}
	if (strcmp(op, "file.read") == 0) {
		if ((f = fake_file_find(key)) == NULL)
			return ERR_NOT_FOUND;
		if (out != NULL) {
			*out = xmalloc(f->len + 1);
			memcpy(*out, f->data, f->len);
			*outlen = f->len;
		}
		*result = json_pack("{s:I, s:i, s:I}", "size",
		    (json_int_t)f->len, "offset", 0, "length",
		    (json_int_t)f->len);
		return 0;
	}
	/* file.list: every file whose key starts with "computer/path/". */
	entries = json_array();
	snprintf(key, sizeof key, "%s/%s%s", computer, path,
	    path[0] != '\0' && path[strlen(path) - 1] != '/' ? "/" : "");
	plen = strlen(key);
	SLIST_FOREACH(f, &fake_files, entry)
		if (strncmp(f->key, key, plen) == 0)
			json_array_append_new(entries, json_pack("{s:s, s:s, "
			    "s:I}", "name", f->key + plen, "type", "file",
			    "size", (json_int_t)f->len));
	*result = json_pack("{s:s, s:o, s:b}", "path", path, "entries",
	    entries, "truncated", 0);
	return 0;
}

static int
fake_dispatch(struct fake_run *u, const char *op, json_t *args,
    const void *in, size_t inlen, json_t **result, void **out,
    size_t *outlen)
{
	const char	*cmd;
	json_t		*since, *acts;

	if (strcmp(op, "exec") == 0) {
		cmd = json_string_value(json_object_get(args, "command"));
		*result = json_pack("{s:i, s:b, s:s, s:s}", "exit_code", 0,
		    "timed_out", 0, "stdout", cmd != NULL ? cmd : "",
		    "stderr", "");
		return 0;
	}
	if (strncmp(op, "file.", 5) == 0)
		return fake_files_op(u->id, op, args, in, inlen, result, out,
		    outlen);
	if (strcmp(op, "display.open") == 0) {
		*result = json_pack("{s:s, s:i, s:i}", "display", ":1",
		    "width", 1, "height", 1);
		return 0;
	}
	if (strcmp(op, "display.observe") == 0) {
		since = json_object_get(args, "since_frame");
		if (json_is_integer(since) &&
		    json_integer_value(since) == u->frame) {
			*result = json_pack("{s:I, s:b, s:i, s:i}", "frame",
			    (json_int_t)u->frame, "unchanged", 1, "width", 1,
			    "height", 1);
			return 0;
		}
		if (out != NULL) {
			*out = xmalloc(sizeof fake_png);
			memcpy(*out, fake_png, sizeof fake_png);
			*outlen = sizeof fake_png;
		}
		*result = json_pack("{s:I, s:s, s:b, s:i, s:i}", "frame",
		    (json_int_t)u->frame, "format", "png", "unchanged", 0,
		    "width", 1, "height", 1);
		return 0;
	}
	if (strcmp(op, "display.act") == 0) {
		acts = json_object_get(args, "actions");
		u->frame++;
		*result = json_pack("{s:I}", "completed",
		    (json_int_t)json_array_size(acts));
		return 0;
	}
	return ERR_UNKNOWN_OP;
}

/* The stand-in's one entry: c is running (its endpoint said so). */
static int
fake_guestd_call(const char *computer, const char *op, json_t *args,
    const void *in, size_t inlen, json_t **result, void **out,
    size_t *outlen, struct errmsg *err)
{
	struct fake_run	*u;
	int		 r;

	if ((u = fake_run_find(computer)) == NULL) {
		r = ERR_CONNECT;
		errmsg_set(err, r, "CONNECT_FAILED: the computer is not "
		    "running");
	} else if ((r = fake_fence_check(computer, args, err)) == 0)
		r = fake_dispatch(u, op, args, in, inlen, result, out, outlen);
	if (r != 0 && err->msg[0] == '\0')
		errmsg_set(err, r, "%s: %s", err_name(r), err_message(r));
	return r;
}

static const struct guest_inproc fake_guestd = {
	.name = "fake",
	.call = fake_guestd_call,
};

static int
fake_init(struct provider *p, struct errmsg *err)
{
	guest_inproc_register(&fake_guestd);
	return 0;
}

static int
fake_endpoint(struct provider *p, const struct store_computer *c,
    struct provider_endpoint *ep, struct errmsg *err)
{
	if (fake_run_find(c->id) == NULL)
		return errmsg_set(err, ERR_CONNECT, "CONNECT_FAILED: the "
		    "computer is not running");
	snprintf(ep->control_url, sizeof ep->control_url, "inproc://fake/%s",
	    c->id);
	snprintf(ep->secret, sizeof ep->secret, "fake");
	snprintf(ep->workspace, sizeof ep->workspace, "/");
	return 0;
}

static int
fake_destroy(struct provider *p, struct store_computer *c)
{
	return fake_stop(p, c);
}

const struct provider_ops provider_fake_ops = {
	.name = "fake",
	.init = fake_init,
	.start = fake_start,
	.alive = fake_alive,
	.stop = fake_stop,
	.destroy = fake_destroy,
	.endpoint = fake_endpoint,
};

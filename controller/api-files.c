/* SPDX-License-Identifier: MIT */
/*
 * PUT and GET /v1/computers/{id}/files (api.h): whole files of any size
 * between an HTTP client and a computer's workspace, never held whole in
 * memory.  `rakazoctl put` and `get` use them.
 *
 * PUT: the body arrives through api_req.in, a bounded pipe serve.c fills
 * while it pauses the HTTP connection at high water, and leaves as the
 * body of guestd's file.write, pulled by the guestd client only when its
 * socket is writable.  So guestd's pace (its disk, its own bounded sink)
 * reaches back to the HTTP client through two pauses.  guestd is told the
 * size to expect (the Content-Length): a client that leaves mid-upload
 * ends a short body, which guestd refuses, keeping the old file, and the
 * guestd connection other bots share stays up.  A mutating call, like
 * write_file: the bot's execution lease (the caller's, or one for this
 * call), its fence sent to guestd, one computer.command event.
 *
 * GET: guestd's flow control is per connection, and a computer's
 * connection carries every bot's requests, so a slow HTTP client must not
 * stop it.  The file is read in ranges (file.read offset/length) of
 * FILES_PIECE bytes, the next asked for only once the reply pipe drained
 * below its low water: about two pieces in memory per download, whatever
 * the client's pace.  The first range's result gives the size, sent as
 * Content-Length; a file whose size changes meanwhile ends the reply short
 * (the connection closes), so the client sees a truncated transfer instead
 * of a mix.  Read-only: no lease, no event (G-30).
 */
#include "autoconf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "guest.h"
#include "json.h"
#include "log.h"
#include "activity.h"
#include "api.h"
#include "api-int.h"
#include "lease.h"
#include "provider.h"
#include "store.h"
#include "bytepipe.h"
#include "xmalloc.h"

#define FILES_PIECE		(1024 * 1024)
#define FILES_PATH_MAX		4096

struct api_files_args {
	char		*buf;		/* the decoded query */
	const char	*bot, *path, *lease;
	int64_t		 mode;
	int		 parents;
};

/* The body of a PUT as a guest call's source. */
struct api_files_src {
	struct guest_src	 ps;
	struct bytepipe		*in;
	int64_t			 got;
};

/* A GET's ranges into the reply pipe. */
struct api_files_sink {
	struct bytepipe		*out;
	int64_t			 n;
};

int
api_files_streams_body(const char *method, const char *path)
{
	const char	*p = path, *s;

	if (strcmp(method, "PUT") != 0 || strncmp(p, "/v1/computers/",
	    14) != 0)
		return 0;
	p += 14;
	if ((s = strchr(p, '/')) == NULL || s == p)
		return 0;
	return strcmp(s, "/files") == 0;
}

static int
api_files_hex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * Percent-decode s in place.  serve.c hands the query with '%' and '&'
 * inside values encoded (lws decoded the rest already).
 */
static int
api_files_unescape(char *s)
{
	char	*o = s;
	int	 h, l;

	for (; *s != '\0'; s++) {
		if (*s != '%') {
			*o++ = *s;
			continue;
		}
		if ((h = api_files_hex((unsigned char)s[1])) < 0 ||
		    (l = api_files_hex((unsigned char)s[2])) < 0 ||
		    (h == 0 && l == 0))
			return -1;
		*o++ = (char)(h << 4 | l);
		s += 2;
	}
	*o = '\0';
	return 0;
}

static int
api_files_bool(const char *v, int *out)
{
	if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0)
		*out = 1;
	else if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0)
		*out = 0;
	else
		return -1;
	return 0;
}

/* One key=value of the query. */
static int
api_files_arg(struct api_files_args *fa, int put, char *k, char *v, char *e,
    size_t elen)
{
	const char	**slot = NULL;
	char		 *end;

	if (strcmp(k, "bot") == 0)
		slot = &fa->bot;
	else if (strcmp(k, "path") == 0)
		slot = &fa->path;
	else if (put && strcmp(k, "lease") == 0)
		slot = &fa->lease;
	else if (put && strcmp(k, "mode") == 0) {
		fa->mode = strtol(v, &end, 8);
		if (*v == '\0' || *end != '\0' || fa->mode < 0 ||
		    fa->mode > 07777) {
			snprintf(e, elen, "\"mode\" is octal, 0 to 7777");
			return ERR_BAD_REQUEST;
		}
		return 0;
	} else if (put && strcmp(k, "parents") == 0) {
		if (api_files_bool(v, &fa->parents) != 0) {
			snprintf(e, elen, "\"parents\" is 1 or 0");
			return ERR_BAD_REQUEST;
		}
		return 0;
	} else {
		snprintf(e, elen, "unknown argument \"%.64s\"", k);
		return ERR_BAD_REQUEST;
	}
	if (*slot != NULL) {
		snprintf(e, elen, "\"%s\" is given twice", k);
		return ERR_BAD_REQUEST;
	}
	*slot = v;
	return 0;
}

/* Parse and check the query; on failure the reply is made. */
static int
api_files_query(struct api_ctx *x, int put, struct api_files_args *fa)
{
	char	 e[256], *p, *k, *v;
	int	 r = 0;

	memset(fa, 0, sizeof *fa);
	fa->mode = 0644;
	fa->buf = xstrdup(x->q->query != NULL ? x->q->query : "");
	for (p = fa->buf; r == 0 && p != NULL && *p != '\0'; ) {
		k = p;
		if ((p = strchr(p, '&')) != NULL)
			*p++ = '\0';
		if (*k == '\0')
			continue;
		if ((v = strchr(k, '=')) == NULL) {
			snprintf(e, sizeof e, "argument \"%.64s\" has no value",
			    k);
			r = ERR_BAD_REQUEST;
			break;
		}
		*v++ = '\0';
		if (api_files_unescape(k) != 0 || api_files_unescape(v) != 0) {
			snprintf(e, sizeof e, "bad %%-escape in the query");
			r = ERR_BAD_REQUEST;
			break;
		}
		r = api_files_arg(fa, put, k, v, e, sizeof e);
	}
	if (r == 0 && fa->bot == NULL) {
		snprintf(e, sizeof e, "\"bot\" is required");
		r = ERR_BAD_REQUEST;
	} else if (r == 0 && !api_name_ok(fa->bot)) {
		snprintf(e, sizeof e, "\"bot\" must be 1..63 of A-Z a-z 0-9 "
		    ". _ -");
		r = ERR_INVALID_BOT;
	} else if (r == 0 && (fa->path == NULL || fa->path[0] == '\0')) {
		snprintf(e, sizeof e, "\"path\" is required");
		r = ERR_BAD_REQUEST;
	} else if (r == 0 && strlen(fa->path) > FILES_PATH_MAX) {
		snprintf(e, sizeof e, "\"path\" is over %d bytes",
		    FILES_PATH_MAX);
		r = ERR_BAD_REQUEST;
	} else if (r == 0 && fa->lease != NULL &&
	    strlen(fa->lease) >= STORE_ID_MAX) {
		r = ERR_LEASE_EXPIRED;
		snprintf(e, sizeof e, "%s", err_message(r));
	}
	if (r == 0)
		return 0;
	api_error(x, r, e);
	return -1;
}

/* ---- PUT -------------------------------------------------------------- */

static ssize_t
api_files_src_read(void *arg, uint8_t *p, size_t max, int *end)
{
	struct api_files_src	*fs = arg;
	size_t			 n;

	n = bytepipe_get(fs->in, p, max);
	fs->got += (int64_t)n;
	/* A break (the client left) ends the body short: guestd refuses. */
	if (bytepipe_drained(fs->in))
		*end = 1;
	return (ssize_t)n;
}

/* in->on_data: tell the guest call its paused upload can go on. */
static void
api_files_src_data(void *arg)
{
	struct api_files_src	*fs = arg;

	if (fs->ps.ready != NULL)
		fs->ps.ready(fs->ps.ready_arg);
}

static int
api_files_put_checks(struct api_ctx *x)
{
	if (x->q->in == NULL) {
		api_error(x, ERR_INTERNAL, "This server cannot stream bodies.");
		return -1;
	}
	if (x->q->length < 0) {
		api_error(x, ERR_LENGTH_REQUIRED, "PUT .../files needs a "
		    "Content-Length (chunked bodies are not accepted).");
		return -1;
	}
	if (x->q->length > API_MAX_UPLOAD) {
		api_error(x, ERR_TOO_LARGE, "The body is over 8 GiB.");
		return -1;
	}
	return 0;
}

/* Stream the body to guestd's file.write under lease l. */
static int
api_files_upload(struct api_ctx *x, struct store_computer *c,
    const struct api_files_args *fa, const struct store_lease *l,
    json_t **res)
{
	struct api_files_src	 fs;
	json_t			*args;
	int			 r;

	memset(&fs, 0, sizeof fs);
	fs.in = x->q->in;
	fs.ps.read = api_files_src_read;
	fs.ps.arg = &fs;
	fs.in->on_data = api_files_src_data;
	fs.in->on_data_arg = &fs;
	args = json_pack("{s:s, s:I, s:b, s:I, s:s, s:I}", "path", fa->path,
	    "mode", (json_int_t)fa->mode, "parents", fa->parents, "size",
	    (json_int_t)x->q->length, "bot", fa->bot, "fence",
	    (json_int_t)l->fence);
	r = guest_call_upload(x->a->prov, c, "file.write", args, &fs.ps,
	    res, &x->err);
	fs.in->on_data = NULL;
	fs.in->on_data_arg = NULL;
	/* The client left: guestd's SIZE_MISMATCH says less than this. */
	if (r != 0 && fs.in->broken != 0 && fs.got < x->q->length) {
		r = ERR_PEER_GONE;
		errmsg_set(&x->err, r, "The client left after %lld "
		    "of %lld bytes; the file is unchanged.",
		    (long long)fs.got, (long long)x->q->length);
	}
	return r;
}

void
api_files_put(struct api_ctx *x, const char **arg)
{
	const char		*id = arg[0];
	struct store_computer	 c;
	struct store_lease	 l;
	struct api_files_args	 fa;
	json_t			*res = NULL;
	int			 r, ephemeral = 0;

	if (api_files_query(x, 1, &fa) != 0)
		goto done;
	if (api_computers_find(x, id, &c) != 0 || api_files_put_checks(x) != 0)
		goto done;
	if ((r = api_leases_take(x, id, fa.bot, fa.lease, &l,
	    &ephemeral)) != 0) {
		api_error(x, r, NULL);
		goto done;
	}
	if ((r = api_computers_ensure_running(x, &c)) != 0) {
		api_error(x, r, x->err.msg);
		goto done;
	}
	(void)store_computer_touch(x->s, id, store_now_ms());
	errmsg_clear(&x->err);
	r = api_files_upload(x, &c, &fa, &l, &res);
	if (r == 0)
		(void)activity_command(x->s, id, fa.bot, "put", 1, "put %.512s "
		    "(%lld bytes)", fa.path, (long long)x->q->length);
	else
		(void)activity_command(x->s, id, fa.bot, "put", 0, "put %.512s "
		    "failed: %s", fa.path, x->err.msg[0] != '\0' ? x->err.msg :
		    err_name(r));
	if (r != 0)
		api_error(x, r, x->err.msg);
	else
		api_reply(x, 200, res);
	res = NULL;
done:
	json_decref(res);
	if (ephemeral)
		api_leases_end_call(x, &l);
	free(fa.buf);
}

/* ---- GET -------------------------------------------------------------- */

static int
api_files_sink_write(void *arg, const uint8_t *p, size_t n)
{
	struct api_files_sink	*fk = arg;

	if (fk->out->broken != 0)
		return fk->out->broken;
	bytepipe_put(fk->out, p, n);
	fk->n += (int64_t)n;
	return 0;
}

/* One range into the pipe; *size is the file's, *len what came. */
static int
api_files_range(struct api_ctx *x, struct store_computer *c,
    const struct api_files_args *fa, int64_t off, int64_t *size, int64_t *len)
{
	struct guest_sink	 sink;
	struct api_files_sink	 fk;
	json_t			*res = NULL;
	json_int_t		 sz = -1, ln = -1;
	int			 r;

	fk.out = x->q->out;
	fk.n = 0;
	sink.write = api_files_sink_write;
	sink.arg = &fk;
	r = guest_call_download(x->a->prov, c, "file.read",
	    json_pack("{s:s, s:I, s:i, s:s}", "path", fa->path, "offset",
	    (json_int_t)off, "length", FILES_PIECE, "bot", fa->bot), &sink,
	    &res, &x->err);
	if (r == 0 && json_unpack(res, "{s:I, s:I}", "size", &sz, "length",
	    &ln) != 0)
		r = ERR_PROTOCOL;
	json_decref(res);
	if (r != 0)
		return r;
	if (x->q->out->broken != 0)
		return x->q->out->broken;
	if (ln != fk.n || ln < 0 || sz < off + ln)
		return errmsg_set(&x->err, ERR_PROTOCOL, "guestd sent %lld "
		    "bytes for a range of %lld", (long long)fk.n,
		    (long long)ln);
	*size = sz;
	*len = ln;
	return 0;
}

/* The rest of the file, once the reply started; ERR_* breaks it off. */
static int
api_files_stream(struct api_ctx *x, struct store_computer *c,
    const struct api_files_args *fa, int64_t off, int64_t size)
{
	int64_t	 sz, len;
	int	 r;

	while (off < size) {
		if ((r = bytepipe_wait_room(x->q->out, -1)) != 0)
			return r;
		if ((r = api_files_range(x, c, fa, off, &sz, &len)) != 0)
			return r;
		if (sz != size || len == 0)
			return errmsg_set(&x->err, ERR_RANGE, "the file "
			    "changed during the download");
		off += len;
	}
	return 0;
}

void
api_files_get(struct api_ctx *x, const char **arg)
{
	const char		*id = arg[0];
	struct store_computer	 c;
	struct api_files_args	 fa;
	int64_t			 size = 0, len = 0;
	int			 r;

	if (api_files_query(x, 0, &fa) != 0 ||
	    api_computers_find(x, id, &c) != 0)
		goto done;
	if (x->q->out == NULL || x->q->respond == NULL) {
		api_error(x, ERR_INTERNAL, "This server cannot stream "
		    "replies.");
		goto done;
	}
	if ((r = api_computers_ensure_running(x, &c)) != 0) {
		api_error(x, r, x->err.msg);
		goto done;
	}
	(void)store_computer_touch(x->s, id, store_now_ms());
	/* Errors of the first range are still a JSON reply. */
	if ((r = api_files_range(x, &c, &fa, 0, &size, &len)) != 0) {
		api_error(x, r, x->err.msg);
		goto done;
	}
	x->out->status = 200;
	x->out->stream = 1;
	x->out->stream_len = size;
	x->q->respond(x->q->respond_arg);
	if ((r = api_files_stream(x, &c, &fa, len, size)) != 0) {
		if (x->q->out->broken == 0)
			log_warn("files.get_failed", "computer=%s bot=%s "
			    "code=%s", id, fa.bot, err_name(r));
		bytepipe_break(x->q->out, r);
	} else
		bytepipe_end(x->q->out);
done:
	free(fa.buf);
}

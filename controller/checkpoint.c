/* SPDX-License-Identifier: MIT */
/*
 * Checkpoints and restores of computers' workspaces (checkpoint.h, SPEC
 * C-8, C-9, C-11).
 *
 * A checkpoint streams guestd's workspace.export (which quiesces the
 * bots' browsers first, so their profiles are copied whole) into a put
 * of the home store, hashing and counting as the bytes pass, commits the
 * put (fsynced and renamed into place), writes the metadata mirror and
 * only then inserts the home_revisions row: the row is the commit point,
 * so a crash anywhere before it leaves the previous revision current and
 * whole, and what the crash left is removed by the next prune.  Old
 * revisions beyond the keep count go after the row is in.
 *
 * A restore streams a revision into guestd's workspace.import, which
 * stages the tree and swaps it in only when the whole archive was good.
 * The archive's last record (which holds the tar end marker) is held
 * back until its sha256 matched the row's, so a damaged archive reaches
 * guestd truncated and is refused, leaving the machine's workspace as
 * it was.  Each import carries a random tag, which guestd writes into
 * the staged tree: when guestd dies before it answers, its next start
 * finishes or undoes the swap, and an operator's restore asks it
 * (workspace.imported) whether the tree in place is this import's, and
 * records the revision only then (ckpt_settle): the answer, the rows and
 * the workspace agree.
 *
 * A checkpoint when nothing changed moves no bytes: the newest revision
 * keeps guestd's fingerprint of the tree it was exported from (its
 * entries' inodes, sizes, times and change times; guestd's workspace.c
 * says why an equal fingerprint means an equal export), and when guestd
 * says the tree still has it, the new revision is the same archive again
 * (a hard link in the local store) with its own row.  The newest
 * archive is read and hashed first: only one whose bytes still match its
 * row's sha256 is linked, or one damaged archive would become every
 * later revision.  Anything short of a clear "unchanged" (an old guestd,
 * no fingerprint, a store that cannot link, a damaged archive) is a full
 * export.
 *
 * Checkpoints and restores of one computer are serialised, also across
 * rakazoctl processes sharing the data directory, by an flock on
 * DATA_DIR/locks/home-<id>, the start lock's pattern (api-computers.c).
 */
#include "autoconf.h"

#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "err.h"
#include "guest.h"
#include "log.h"
#include "activity.h"
#include "api.h"
#include "api-int.h"
#include "checkpoint.h"
#include "home.h"
#include "home-browse.h"
#include "home-object.h"
#include "home-writer.h"
#include "lease.h"
#include "provider.h"
#include "store.h"
#include "task.h"
#include "token.h"
#include "xmalloc.h"

#define CKPT_LOCK_POLL_MS	25
/* Held back from guestd until the archive's hash matched: a tar record. */
#define CKPT_HOLD		10240
#define CKPT_CHUNK		(64 * 1024)

/*
 * A test hook: RAKAZO_TEST_CRASH_AT=<step> makes serve kill itself
 * (SIGKILL, as a power cut would stop it) at that step of a checkpoint,
 * so tests can prove that no half revision is ever current.  Unset, as
 * in normal use, it does nothing.
 */
static void
ckpt_test_crash(const char *step)
{
	const char	*at = getenv("RAKAZO_TEST_CRASH_AT");

	if (at != NULL && strcmp(at, step) == 0)
		kill(getpid(), SIGKILL);
}

/* ---- the per-computer lock ---------------------------------------------- */

static int
ckpt_lock(struct api *a, const char *id, int wait, int *fdp)
{
	char	 path[PATH_MAX];
	int64_t	 waited = 0;
	int	 fd;

	*fdp = -1;
	if (a->lock_dir == NULL)
		return 0;
	snprintf(path, sizeof path, "%s/locks", a->lock_dir);
	if (mkdir(path, 0700) == -1 && errno != EEXIST)
		return err_from_errno(errno);
	if ((size_t)snprintf(path, sizeof path, "%s/locks/home-%s",
	    a->lock_dir, id) >= sizeof path)
		return ERR_NAME_TOO_LONG;
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1)
		return err_from_errno(errno);
	while (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if ((errno != EWOULDBLOCK && errno != EINTR) || !wait ||
		    waited >= CHECKPOINT_LOCK_MS ||
		    task_sleep(CKPT_LOCK_POLL_MS) != 0) {
			close(fd);
			return ERR_BUSY;
		}
		waited += CKPT_LOCK_POLL_MS;
	}
	*fdp = fd;
	return 0;
}

static void
ckpt_unlock(int fd)
{
	if (fd >= 0)
		close(fd);	/* releases the flock */
}

/* ---- sha256 ---------------------------------------------------------- */

static void
ckpt_hex(const unsigned char *md, unsigned int n, char *dst, size_t len)
{
	static const char	 hex[] = "0123456789abcdef";
	unsigned int		 i;

	for (i = 0; i < n && 2 * i + 2 < len; i++) {
		dst[2 * i] = hex[md[i] >> 4];
		dst[2 * i + 1] = hex[md[i] & 15];
	}
	dst[2 * i] = '\0';
}

static int
ckpt_digest_end(EVP_MD_CTX *md, char *dst, size_t len)
{
	unsigned char	 out[EVP_MAX_MD_SIZE];
	unsigned int	 n = 0;

	if (EVP_DigestFinal_ex(md, out, &n) != 1)
		return ERR_INTERNAL;
	ckpt_hex(out, n, dst, len);
	return 0;
}

/* ---- the metadata mirror (DATA_DIR/home-revisions/<key>/) ------------ */

static int
ckpt_mirror_dir(struct api *a, const char *key, char *dst, size_t len)
{
	if ((size_t)snprintf(dst, len, "%s/home-revisions", a->data_dir) >=
	    len)
		return ERR_NAME_TOO_LONG;
	if (mkdir(dst, 0700) == -1 && errno != EEXIST)
		return err_from_errno(errno);
	if ((size_t)snprintf(dst, len, "%s/home-revisions/%s", a->data_dir,
	    key) >= len)
		return ERR_NAME_TOO_LONG;
	if (mkdir(dst, 0700) == -1 && errno != EEXIST)
		return err_from_errno(errno);
	return 0;
}

static int
ckpt_mirror_write(struct api *a, const struct store_home_rev *h,
    struct errmsg *e)
{
	char	 dir[PATH_MAX], tmp[PATH_MAX], path[PATH_MAX];
	json_t	*j;
	char	*s = NULL;
	FILE	*f = NULL;
	int	 r, fd;

	if ((r = ckpt_mirror_dir(a, home_key(h->computer), dir,
	    sizeof dir)) != 0)
		return errmsg_set(e, r, "cannot make the revision metadata "
		    "directory");
	if ((size_t)snprintf(tmp, sizeof tmp, "%s/.rev-%" PRId64 ".json.tmp",
	    dir, h->revision) >= sizeof tmp ||
	    (size_t)snprintf(path, sizeof path, "%s/rev-%" PRId64 ".json",
	    dir, h->revision) >= sizeof path)
		return errmsg_code(e, ERR_NAME_TOO_LONG);
	j = json_pack("{s:s, s:I, s:I, s:I, s:I, s:s, s:s}", "computer",
	    h->computer, "revision", (json_int_t)h->revision, "created_ms",
	    (json_int_t)h->created_ms, "bytes", (json_int_t)h->bytes, "files",
	    (json_int_t)h->files, "sha256", h->sha256, "cause", h->cause);
	s = json_dumps(j, JSON_SORT_KEYS);
	json_decref(j);
	if (s == NULL)
		return errmsg_code(e, ERR_NOMEM);
	if ((f = fopen(tmp, "we")) == NULL || fputs(s, f) == EOF ||
	    fputc('\n', f) == EOF || fflush(f) == EOF) {
		r = errmsg_set(e, err_from_errno(errno), "cannot write the "
		    "revision metadata: %s", strerror(errno));
		goto out;
	}
	fd = fileno(f);
	if ((r = home_fsync(fd)) != 0) {
		errmsg_set(e, r, "cannot flush the revision metadata");
		goto out;
	}
	if (fclose(f) == EOF) {
		f = NULL;
		r = errmsg_set(e, err_from_errno(errno), "cannot write the "
		    "revision metadata");
		goto out;
	}
	f = NULL;
	if (rename(tmp, path) == -1)
		r = errmsg_set(e, err_from_errno(errno), "cannot rename the "
		    "revision metadata");
out:
	if (f != NULL)
		fclose(f);
	if (r != 0)
		(void)unlink(tmp);
	free(s);
	return r;
}

/* Remove mirror files whose revision is not in keep. */
static void
ckpt_mirror_prune(struct api *a, const char *key, const int64_t *keep,
    size_t nkeep)
{
	char		 dir[PATH_MAX], path[PATH_MAX], name[64];
	size_t		 i;
	DIR		*d;
	struct dirent	*de;
	int		 kept;

	if (ckpt_mirror_dir(a, key, dir, sizeof dir) != 0 ||
	    (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] != '.' && strncmp(de->d_name, "rev-", 4) != 0)
			continue;
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		kept = 0;
		for (i = 0; i < nkeep && !kept; i++) {
			snprintf(name, sizeof name, "rev-%" PRId64 ".json",
			    keep[i]);
			kept = strcmp(name, de->d_name) == 0;
		}
		if (kept)
			continue;
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir,
		    de->d_name) < sizeof path)
			(void)unlink(path);
	}
	closedir(d);
}

/*
 * Keep the newest a->home_keep rows (and their archives and mirror
 * files); remove the rest and any leftover.  Under the computer's lock.
 */
static int
ckpt_prune(struct api_ctx *x, struct home_store *hs, const char *computer,
    struct errmsg *e)
{
	struct store_home_rev	*rows = NULL;
	int64_t			*keep = NULL;
	size_t			 n = 0, i, nkeep = 0;
	int64_t			 max = x->a->home_keep > 0 ? x->a->home_keep :
				    CHECKPOINT_KEEP_DEFAULT;
	int			 r;

	if ((r = store_home_rev_list(x->s, computer, &rows, &n)) != 0)
		return errmsg_set(e, r, "cannot list the home revisions");
	keep = xcalloc(n + 1, sizeof *keep);
	for (i = 0; i < n; i++) {
		if ((int64_t)i < max) {
			keep[nkeep++] = rows[i].revision;
			continue;
		}
		if ((r = store_home_rev_delete(x->s, computer,
		    rows[i].revision)) != 0) {
			errmsg_set(e, r, "cannot forget revision %" PRId64,
			    rows[i].revision);
			goto out;
		}
	}
	r = home_prune(hs, home_key(computer), keep, nkeep, e);
	ckpt_mirror_prune(x->a, home_key(computer), keep, nkeep);
out:
	free(keep);
	free(rows);
	return r;
}

/* ---- checkpoint ---------------------------------------------------------- */

struct ckpt_sink {
	struct home_writer	*w;
	int			 code;		/* first write failure */
};

/* On the loop: the bytes go to the writer's thread (home-writer.h). */
static int
ckpt_sink_write(void *arg, const uint8_t *p, size_t n)
{
	struct ckpt_sink	*k = arg;

	if (k->code != 0)
		return k->code;
	return k->code = home_writer_write(k->w, p, n);
}

/*
 * A failure summed up as CHECKPOINT_FAILED or RESTORE_FAILED keeps the
 * stable code that caused it (SEAL_AUTH_FAILED, KEY_INVALID,
 * CONNECT_FAILED ...: rakazo-home(5)) as its cause, for the API's error
 * and the event; the summary codes themselves and INTERNAL say nothing
 * more and are no cause.
 */
static void
ckpt_cause(struct errmsg *e, int r)
{
	if (r != ERR_CHECKPOINT_FAILED && r != ERR_RESTORE_FAILED &&
	    r != ERR_INTERNAL && r < 0)
		e->cause = r;
}

static void
ckpt_event(struct api_ctx *x, const char *kind, const char *computer,
    int ok, int64_t rev, int64_t bytes, int64_t ms, const char *cause,
    int code, const struct errmsg *e)
{
	if (ok)
		(void)activity_event(x->s, kind, computer, "", kind + 9, 1,
		    "revision %" PRId64 ", %" PRId64 " bytes, %" PRId64 " ms, "
		    "ok (%s)", rev, bytes, ms, cause);
	else if (e->cause != 0 && e->cause != code)
		(void)activity_event(x->s, kind, computer, "", kind + 9, 0,
		    "revision %" PRId64 ", %" PRId64 " bytes, %" PRId64 " ms, "
		    "failed (%s): %s (%s): %s", rev, bytes, ms, cause,
		    err_name(code), err_name(e->cause), errmsg_str(e));
	else
		(void)activity_event(x->s, kind, computer, "", kind + 9, 0,
		    "revision %" PRId64 ", %" PRId64 " bytes, %" PRId64 " ms, "
		    "failed (%s): %s: %s", rev, bytes, ms, cause,
		    err_name(code), errmsg_str(e));
}

/* The export into a put of rev; fills h on success.  Under the lock. */
static int
ckpt_export(struct api_ctx *x, struct home_store *hs,
    struct store_computer *c, int64_t rev, struct store_home_rev *h,
    struct errmsg *e)
{
	struct guest_sink	 sink;
	struct ckpt_sink	 k;
	struct home_put		*put = NULL;
	json_t			*res = NULL;
	json_int_t		 bytes = -1, entries = -1;
	const char		*fp = NULL;
	char			 sha[STORE_SHA256_HEX];
	int64_t			 got = 0;
	struct errmsg		 pe;
	int			 r;

	memset(&k, 0, sizeof k);
	if ((r = home_put_begin(hs, home_key(c->id), rev, &put, e)) != 0 ||
	    (r = home_writer_new(hs, put, &k.w, e)) != 0)
		goto out;
	sink.write = ckpt_sink_write;
	sink.arg = &k;
	errmsg_clear(&pe);
	r = guest_call_download(x->a->prov, c, "workspace.export",
	    json_object(), &sink, &res, &pe);
	/* Every byte written (or the first failure) before anything else. */
	if (home_writer_finish(k.w, sha, sizeof sha, &got, e) != 0) {
		r = e->code;
		goto out;
	}
	if (r != 0) {
		errmsg_set(e, r, "%s", errmsg_str(&pe));
		goto out;
	}
	if (json_unpack(res, "{s:I, s:I, s?:s}", "bytes", &bytes, "entries",
	    &entries, "fingerprint", &fp) != 0 || bytes != got) {
		r = errmsg_set(e, ERR_PROTOCOL, "guestd's export sent %" PRId64
		    " bytes, its reply says %lld", got, (long long)bytes);
		goto out;
	}
	home_writer_free(k.w);
	k.w = NULL;
	r = home_put_commit(hs, put, e);
	put = NULL;	/* commit frees, also on failure */
	if (r != 0)
		goto out;
	memset(h, 0, sizeof *h);
	snprintf(h->computer, sizeof h->computer, "%s", c->id);
	h->revision = rev;
	h->created_ms = store_now_ms();
	h->bytes = got;
	h->files = entries;
	if (fp != NULL && strlen(fp) < sizeof h->fingerprint)
		snprintf(h->fingerprint, sizeof h->fingerprint, "%s", fp);
	snprintf(h->sha256, sizeof h->sha256, "%s", sha);
out:
	/* The writer's thread is gone before its put. */
	home_writer_free(k.w);
	home_put_abort(hs, put);
	json_decref(res);
	return r;
}

/* A new revision from rows already committed: mirror, row, latest. */
static int
ckpt_record(struct api_ctx *x, struct home_store *hs,
    const struct store_home_rev *h, struct errmsg *e)
{
	struct errmsg	 ignore;
	int		 r;

	if ((r = ckpt_mirror_write(x->a, h, e)) != 0)
		return r;
	if ((r = store_home_rev_add(x->s, h)) != 0)
		return errmsg_set(e, r, "cannot record the revision");
	memset(&ignore, 0, sizeof ignore);
	/* Only for operators: a stale "latest" is fixed by the next one. */
	if (home_mark_latest(hs, home_key(h->computer), h->revision,
	    &ignore) != 0)
		log_warn("checkpoint.latest", "computer=%s msg=\"%s\"",
		    h->computer, errmsg_str(&ignore));
	return 0;
}

/* The next revision number; *last the newest row (revision 0: none). */
static int64_t
ckpt_next_rev(struct api_ctx *x, const char *computer,
    struct store_home_rev *last, int *r)
{
	memset(last, 0, sizeof *last);
	*r = store_home_rev_latest(x->s, computer, last);
	if (*r == ERR_NOT_FOUND) {
		memset(last, 0, sizeof *last);
		*r = 0;
		return 1;
	}
	return *r == 0 ? last->revision + 1 : 0;
}

/*
 * 1 when guestd says the tree still has last's fingerprint: revision rev
 * is then last's archive again, committed, and h its row (less its
 * cause).  0: export.  Under the lock.
 */
static int
ckpt_same(struct api_ctx *x, struct home_store *hs,
    struct store_computer *c, const struct store_home_rev *last,
    int64_t rev, struct store_home_rev *h)
{
	json_t		*res = NULL;
	struct errmsg	 pe;
	int		 same = 0;

	if (last->revision == 0 || last->fingerprint[0] == '\0')
		return 0;
	if (guest_call(x->a->prov, c, "workspace.fingerprint",
	    json_pack("{s:s}", "since", last->fingerprint), NULL, 0, &res,
	    NULL, NULL, &pe) != 0 ||
	    !json_is_true(json_object_get(res, "unchanged")))
		goto out;
	/* A store that cannot link exports: nothing to verify. */
	if (hs->ops->put_same == NULL)
		goto out;
	memset(&pe, 0, sizeof pe);
	/*
	 * The link is the same bytes again: a damaged archive linked would
	 * become every later revision too.  Only an archive still whole is
	 * linked; a damaged one is left to its row (a restore of it is
	 * refused) and this revision is a full export.
	 */
	if (home_browse_verify(hs, home_key(c->id), last->revision,
	    last->bytes, last->sha256, &pe) != 0) {
		log_warn("checkpoint.unchanged_damaged", "computer=%s "
		    "revision=%" PRId64 " msg=\"%s\"", c->id, last->revision,
		    errmsg_str(&pe));
		goto out;
	}
	memset(&pe, 0, sizeof pe);
	if (home_put_same(hs, home_key(c->id), last->revision, rev,
	    &pe) != 0) {
		log_info("checkpoint.unchanged_copy", "computer=%s msg=\"%s\"",
		    c->id, errmsg_str(&pe));
		goto out;
	}
	*h = *last;
	h->revision = rev;
	h->created_ms = store_now_ms();
	same = 1;
out:
	json_decref(res);
	return same;
}

int
checkpoint_save(struct api_ctx *x, struct store_computer *c,
    const char *cause, struct store_home_rev *out, struct errmsg *e)
{
	struct home_store	*hs = NULL;
	struct store_home_rev	 last;
	struct errmsg		 pe;
	int64_t			 t0 = store_now_ms(), rev = 0;
	int			 r, lk = -1, same = 0;

	memset(out, 0, sizeof *out);
	memset(&pe, 0, sizeof pe);
	if ((r = ckpt_lock(x->a, c->id, 1, &lk)) != 0) {
		errmsg_set(e, r, "another checkpoint of the computer did not "
		    "finish");
		goto out;
	}
	if ((r = home_store_open_st(&hs, x->a->data_dir, x->s, e)) != 0)
		goto out;
	if ((rev = ckpt_next_rev(x, c->id, &last, &r)) == 0) {
		errmsg_set(e, r, "cannot read the home revisions");
		goto out;
	}
	if ((same = ckpt_same(x, hs, c, &last, rev, out)) != 0)
		r = 0;
	else
		r = ckpt_export(x, hs, c, rev, out, e);
	if (r == ERR_UNKNOWN_OP) {
		/* A guestd stand-in without exports keeps no home. */
		memset(out, 0, sizeof *out);
		r = 0;
		goto out;
	}
	if (r == 0) {
		ckpt_test_crash("checkpoint-committed");
		snprintf(out->cause, sizeof out->cause, "%s", cause);
		r = ckpt_record(x, hs, out, e);
	}
	if (r == 0)
		ckpt_test_crash("checkpoint-recorded");
	if (r == 0 && ckpt_prune(x, hs, c->id, &pe) != 0)
		log_warn("checkpoint.prune", "computer=%s msg=\"%s\"", c->id,
		    errmsg_str(&pe));
	if (r != 0) {
		/* What the failed put left goes now, the rows stay. */
		(void)ckpt_prune(x, hs, c->id, &pe);
		if (r != ERR_NO_SPACE && r != ERR_BUSY) {
			ckpt_cause(e, r);
			r = ERR_CHECKPOINT_FAILED;
		}
		e->code = r;
	}
	ckpt_event(x, CHECKPOINT_EVENT, c->id, r == 0, rev, out->bytes,
	    store_now_ms() - t0, cause, r, e);
	if (r == 0)
		log_info("computer.checkpoint", "computer=%s revision=%" PRId64
		    " bytes=%" PRId64 " files=%" PRId64 " ms=%" PRId64
		    " cause=%s unchanged=%d", c->id, rev, out->bytes,
		    out->files, store_now_ms() - t0, cause, same);
	else
		log_warn("computer.checkpoint_failed", "computer=%s revision="
		    "%" PRId64 " code=%s cause=%s msg=\"%s\"", c->id, rev,
		    err_name(r), e->cause != 0 ? err_name(e->cause) : "none",
		    errmsg_str(e));
out:
	home_store_free(hs);
	ckpt_unlock(lk);
	return r;
}

/* ---- restore --------------------------------------------------------- */

struct ckpt_src {
	struct guest_src	 ps;
	struct home_store	*hs;
	struct home_get		*get;
	EVP_MD_CTX		*md;
	const char		*want;		/* the row's sha256 */
	int64_t			 size, off;
	uint8_t			*hold;		/* the last record, verified */
	size_t			 holdlen, holdoff;
	int			 verified;
	int			 code;
	struct errmsg		 err;
};

/* Read the held-back tail, hash it and compare. */
static int
ckpt_src_verify(struct ckpt_src *k)
{
	char		 got[STORE_SHA256_HEX];
	ssize_t		 n;

	k->hold = xmalloc(CKPT_HOLD);
	while (k->off < k->size) {
		n = home_get_read(k->hs, k->get, k->hold + k->holdlen,
		    (size_t)(k->size - k->off), &k->err);
		if (n <= 0)
			return errmsg_set(&k->err, ERR_RESTORE_FAILED, "the "
			    "stored archive is shorter than its record");
		if (EVP_DigestUpdate(k->md, k->hold + k->holdlen,
		    (size_t)n) != 1)
			return errmsg_code(&k->err, ERR_INTERNAL);
		k->holdlen += (size_t)n;
		k->off += n;
	}
	if (ckpt_digest_end(k->md, got, sizeof got) != 0)
		return errmsg_code(&k->err, ERR_INTERNAL);
	if (strcmp(got, k->want) != 0)
		return errmsg_set(&k->err, ERR_RESTORE_FAILED, "the stored "
		    "archive does not match its sha256 (damaged)");
	k->verified = 1;
	return 0;
}

static ssize_t
ckpt_src_read(void *arg, uint8_t *p, size_t max, int *end)
{
	struct ckpt_src	*k = arg;
	int64_t		 body = k->size > CKPT_HOLD ? k->size - CKPT_HOLD : 0;
	size_t		 want;
	ssize_t		 n;

	if (k->code != 0) {
		*end = 1;	/* short: guestd refuses, nothing changes */
		return 0;
	}
	if (k->off < body) {
		want = max;
		if ((int64_t)want > body - k->off)
			want = (size_t)(body - k->off);
		n = home_get_read(k->hs, k->get, p, want, &k->err);
		if (n <= 0) {
			k->code = errmsg_set(&k->err, ERR_RESTORE_FAILED,
			    "the stored archive is shorter than its record");
			*end = 1;
			return 0;
		}
		if (EVP_DigestUpdate(k->md, p, (size_t)n) != 1) {
			k->code = errmsg_code(&k->err, ERR_INTERNAL);
			*end = 1;
			return 0;
		}
		k->off += n;
		return n;
	}
	if (!k->verified && (k->code = ckpt_src_verify(k)) != 0) {
		*end = 1;
		return 0;
	}
	want = k->holdlen - k->holdoff;
	if (want > max)
		want = max;
	memcpy(p, k->hold + k->holdoff, want);
	k->holdoff += want;
	if (k->holdoff == k->holdlen)
		*end = 1;
	return (ssize_t)want;
}

/*
 * Stream revision h into guestd's workspace.import, tagged tag.  *ask is
 * set when the import failed with the archive whole and no answer from
 * guestd (the connection was lost: it may have died after its swap), so
 * only workspace.imported can tell what happened.  An error guestd
 * answered (TAR_*, NO_SPACE ...) left its workspace as it was.
 */
static int
ckpt_import(struct api_ctx *x, struct home_store *hs,
    struct store_computer *c, const struct store_home_rev *h,
    const char *tag, int *ask, struct errmsg *e)
{
	struct ckpt_src	 k;
	json_t		*res = NULL;
	struct errmsg		 pe;
	int		 r;

	memset(&k, 0, sizeof k);
	k.hs = hs;
	k.want = h->sha256;
	k.ps.read = ckpt_src_read;
	k.ps.arg = &k;
	if ((k.md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(k.md, EVP_sha256(), NULL) != 1) {
		r = errmsg_code(e, ERR_NOMEM);
		goto out;
	}
	if ((r = home_get_open(hs, home_key(c->id), h->revision, &k.get,
	    &k.size, e)) != 0)
		goto out;
	if (k.size != h->bytes) {
		r = errmsg_set(e, ERR_RESTORE_FAILED, "revision %" PRId64
		    " holds %" PRId64 " bytes, its record says %" PRId64,
		    h->revision, k.size, h->bytes);
		goto out;
	}
	errmsg_clear(&pe);
	r = guest_call_upload(x->a->prov, c, "workspace.import",
	    json_pack("{s:s}", "tag", tag), &k.ps, &res, &pe);
	if (k.code != 0) {
		r = k.code;
		*e = k.err;
	} else if (r != 0) {
		errmsg_set(e, r, "%s", errmsg_str(&pe));
		*ask = r == ERR_PEER_GONE || r == ERR_CONNECT ||
		    r == ERR_TIMEOUT || r == ERR_PROTOCOL;
	}
out:
	home_get_close(hs, k.get);
	EVP_MD_CTX_free(k.md);
	free(k.hold);
	json_decref(res);
	return r;
}

/* Copy revision h's archive into a new revision (an operator's restore). */
static int
ckpt_copy(struct api_ctx *x, struct home_store *hs,
    const struct store_home_rev *h, int64_t rev, struct store_home_rev *out,
    struct errmsg *e)
{
	struct home_get	*g = NULL;
	struct home_put	*p = NULL;
	uint8_t		*buf = xmalloc(CKPT_CHUNK);
	int64_t		 size;
	ssize_t		 n;
	int		 r;

	if ((r = home_get_open(hs, home_key(h->computer), h->revision, &g,
	    &size, e)) != 0 ||
	    (r = home_put_begin(hs, home_key(h->computer), rev, &p, e)) != 0)
		goto out;
	while ((n = home_get_read(hs, g, buf, CKPT_CHUNK, e)) > 0)
		if ((r = home_put_write(hs, p, buf, (size_t)n, e)) != 0)
			goto out;
	if (n < 0) {
		r = e->code != 0 ? e->code : ERR_HOME_STORE;
		goto out;
	}
	r = home_put_commit(hs, p, e);
	p = NULL;
	if (r != 0)
		goto out;
	*out = *h;
	out->revision = rev;
	out->created_ms = store_now_ms();
	snprintf(out->cause, sizeof out->cause, "restore:%" PRId64,
	    h->revision);
	r = ckpt_record(x, hs, out, e);
out:
	home_put_abort(hs, p);
	home_get_close(hs, g);
	free(buf);
	return r;
}

/* Revision rev's row (0: the newest) into h. */
static int
ckpt_find_rev(struct api_ctx *x, const char *computer, int64_t rev,
    struct store_home_rev *h, struct errmsg *e)
{
	struct store_home_rev	*rows = NULL;
	size_t			 n = 0, i;
	int			 r;

	memset(h, 0, sizeof *h);
	if ((r = store_home_rev_list(x->s, computer, &rows, &n)) != 0)
		return errmsg_set(e, r, "cannot list the home revisions");
	for (i = 0; i < n; i++)
		if (rev == 0 || rows[i].revision == rev) {
			*h = rows[i];
			break;
		}
	free(rows);
	if (i < n)
		return 0;
	if (rev == 0)
		return errmsg_set(e, ERR_NO_REVISION, "the home store holds no "
		    "revision of this computer");
	return errmsg_set(e, ERR_NO_REVISION, "the home store holds no "
	    "revision %" PRId64 " of this computer", rev);
}

/*
 * After an import that answered nothing: which tree does the workspace
 * hold?  guestd is started again when it died (its start-up finishes or
 * undoes the swap, workspace(8)'s journal), then workspace.imported says
 * whether the tree in place carries this import's tag.  *held 1: it does,
 * the import happened; 0: the workspace is the tree from before.  An
 * import still under way (BUSY) is waited for.  Not under the lock: a
 * start may restore, which takes it.
 */
static int
ckpt_settle(struct api_ctx *x, struct store_computer *c, const char *tag,
    int *held, struct errmsg *e)
{
	json_t		*res = NULL;
	const char	*got;
	struct errmsg	 pe;
	int64_t		 waited = 0;
	int		 r;

	*held = 0;
	if (provider_alive(x->a->prov, c) != 1 &&
	    (r = api_computers_ensure_running(x, c)) != 0)
		return errmsg_set(e, r, "guestd died during the import and "
		    "did not start again: %s", x->err.msg);
	for (;;) {
		errmsg_clear(&pe);
		json_decref(res);
		res = NULL;
		r = guest_call(x->a->prov, c, "workspace.imported",
		    json_object(), NULL, 0, &res, NULL, NULL, &pe);
		if (r != ERR_BUSY || waited >= CHECKPOINT_LOCK_MS ||
		    task_sleep(CKPT_LOCK_POLL_MS) != 0)
			break;
		waited += CKPT_LOCK_POLL_MS;
	}
	if (r != 0) {
		errmsg_set(e, r, "guestd cannot say which workspace it "
		    "holds: %s", errmsg_str(&pe));
		goto out;
	}
	if ((got = json_string_value(json_object_get(res, "tag"))) == NULL) {
		r = errmsg_set(e, ERR_PROTOCOL, "guestd's workspace.imported "
		    "answered no tag");
		goto out;
	}
	*held = strcmp(got, tag) == 0;
out:
	json_decref(res);
	return r;
}

int
checkpoint_restore(struct api_ctx *x, struct store_computer *c, int64_t rev,
    int as_new, struct store_home_rev *out, struct errmsg *e)
{
	struct home_store	*hs = NULL;
	struct store_home_rev	 h, last;
	struct errmsg		 pe, se;
	uint8_t			 rnd[8];
	char			 tag[64];
	int64_t			 t0 = store_now_ms(), next;
	int			 r, lk = -1, ask = 0, held = 0, sr;
	size_t			 i, k;

	memset(out, 0, sizeof *out);
	memset(&pe, 0, sizeof pe);
	memset(&se, 0, sizeof se);
	if ((r = ckpt_lock(x->a, c->id, 1, &lk)) != 0) {
		errmsg_set(e, r, "a checkpoint of the computer did not finish");
		goto out;
	}
	if ((r = home_store_open_st(&hs, x->a->data_dir, x->s, e)) != 0)
		goto out;
	if ((r = ckpt_find_rev(x, c->id, rev, &h, e)) != 0)
		goto done;
	*out = h;
	/* This import's own name: no other import can carry it. */
	if (token_random(rnd, sizeof rnd) != 0) {
		r = errmsg_code(e, ERR_INTERNAL);
		goto done;
	}
	i = (size_t)snprintf(tag, sizeof tag, "rev-%" PRId64 "-", h.revision);
	for (k = 0; k < sizeof rnd && i + 2 < sizeof tag; k++, i += 2)
		snprintf(tag + i, sizeof tag - i, "%02x", rnd[k]);
	r = ckpt_import(x, hs, c, &h, tag, &ask, e);
	/*
	 * An operator's restore is recorded as a new revision only when the
	 * workspace holds it.  When guestd died without answering, its swap
	 * may have gone either way (its next start finishes a swap past the
	 * point of no return, or undoes one before it): ask which, so the
	 * answer, the revisions and the workspace agree.
	 */
	if (r != 0 && ask && as_new) {
		ckpt_unlock(lk);
		lk = -1;
		sr = ckpt_settle(x, c, tag, &held, &se);
		if (ckpt_lock(x->a, c->id, 1, &lk) != 0)
			sr = errmsg_set(&se, ERR_BUSY, "a checkpoint of the "
			    "computer did not finish");
		if (sr != 0) {
			log_warn("checkpoint.restore_unsettled", "computer=%s "
			    "revision=%" PRId64 " msg=\"%s\"", c->id,
			    h.revision, errmsg_str(&se));
			pe = *e;
			errmsg_set(e, r, "%s; whether the workspace holds "
			    "revision %" PRId64 " is not known yet (%s)",
			    errmsg_str(&pe), h.revision, errmsg_str(&se));
			memset(&pe, 0, sizeof pe);
		} else if (held) {
			log_warn("checkpoint.restore_settled", "computer=%s "
			    "revision=%" PRId64 " held=1 msg=\"guestd died "
			    "after its swap; the workspace holds the revision\"",
			    c->id, h.revision);
			errmsg_clear(e);
			r = 0;
		} else
			log_info("checkpoint.restore_settled", "computer=%s "
			    "revision=%" PRId64 " held=0", c->id, h.revision);
	}
	if (r == 0 && as_new) {
		/* The newest now: a checkpoint may have come in meanwhile. */
		if ((next = ckpt_next_rev(x, c->id, &last, &r)) == 0)
			errmsg_set(e, r, "cannot read the home revisions");
		else
			r = ckpt_copy(x, hs, &h, next, out, e);
	}
	if (r == 0 && as_new)
		(void)ckpt_prune(x, hs, c->id, &pe);
done:
	if (r != 0 && r != ERR_NO_REVISION) {
		ckpt_cause(e, r);
		r = ERR_RESTORE_FAILED;
		e->code = r;
	}
	ckpt_event(x, RESTORE_EVENT, c->id, r == 0, out->revision, out->bytes,
	    store_now_ms() - t0, as_new ? "operator" : "start", r, e);
	if (r == 0)
		log_info("computer.restore", "computer=%s revision=%" PRId64
		    " bytes=%" PRId64 " ms=%" PRId64, c->id, out->revision,
		    out->bytes, store_now_ms() - t0);
	else
		log_warn("computer.restore_failed", "computer=%s code=%s "
		    "cause=%s msg=\"%s\"", c->id, err_name(r),
		    e->cause != 0 ? err_name(e->cause) : "none",
		    errmsg_str(e));
out:
	home_store_free(hs);
	ckpt_unlock(lk);
	return r;
}

/* 1 when the running machine's workspace holds nothing of ours. */
static int
ckpt_workspace_empty(struct api_ctx *x, struct store_computer *c)
{
	json_t		*res = NULL, *ents, *en;
	const char	*name;
	struct errmsg		 pe;
	size_t		 i;
	int		 r, empty = 1;

	r = guest_call(x->a->prov, c, "file.list", json_pack("{s:s}",
	    "path", "."), NULL, 0, &res, NULL, NULL, &pe);
	if (r != 0) {
		json_decref(res);
		return 0;	/* cannot tell: never overwrite */
	}
	ents = json_object_get(res, "entries");
	json_array_foreach(ents, i, en) {
		name = json_string_value(json_object_get(en, "name"));
		/* guestd's own transient names are not the user's. */
		if (name != NULL && strncmp(name, ".rakazo-", 8) != 0)
			empty = 0;
	}
	json_decref(res);
	return empty;
}

int
checkpoint_after_start(struct api_ctx *x, struct store_computer *c,
    int replaced, struct errmsg *e)
{
	struct store_home_rev	 h, got;
	int			 r;

	if ((r = store_home_rev_latest(x->s, c->id, &h)) == ERR_NOT_FOUND)
		return 0;	/* a new computer: nothing stored yet */
	if (r != 0)
		return errmsg_set(e, ERR_RESTORE_FAILED, "cannot read the "
		    "home revisions");
	if (!replaced && !ckpt_workspace_empty(x, c))
		return 0;
	return checkpoint_restore(x, c, 0, 0, &got, e);
}

int
checkpoint_run_end(struct api_ctx *x, struct store_computer *c,
    const char *cause, struct store_home_rev *out)
{
	struct errmsg	 e;
	int64_t		 live;
	int		 r;

	memset(out, 0, sizeof *out);
	memset(&e, 0, sizeof e);
	if (provider_alive(x->a->prov, c) != 1)
		return 0;
	if ((r = store_lease_count_live(x->s, c->id, store_now_ms(),
	    &live)) != 0)
		return r;
	if (live > 0) {
		log_info("checkpoint.deferred", "computer=%s cause=%s "
		    "live=%lld", c->id, cause, (long long)live);
		return 0;
	}
	if ((r = checkpoint_save(x, c, cause, out, &e)) != 0)
		return r;
	return 1;
}

int
checkpoint_reserve(struct store *s, const char *computer,
    struct store_lease *out)
{
	int64_t	 now, live;
	char	 id[STORE_ID_MAX];
	int	 r;

	memset(out, 0, sizeof *out);
	if ((r = store_begin(s)) != 0)
		return r;
	now = store_now_ms();
	if ((r = store_lease_count_live(s, computer, now, &live)) != 0)
		goto out;
	if (live > 0) {
		r = ERR_LEASE_HELD;
		goto out;
	}
	snprintf(id, sizeof id, "reserve-%.40s", computer);
	snprintf(out->id, sizeof out->id, "%s", id);
	snprintf(out->computer, sizeof out->computer, "%s", computer);
	snprintf(out->bot, sizeof out->bot, "%s", LEASE_RESERVE_BOT);
	snprintf(out->kind, sizeof out->kind, "%s", LEASE_RESERVE);
	snprintf(out->holder, sizeof out->holder, "idle");
	out->acquired_ms = now;
	/* A crashed holder's reservation lapses on its own. */
	out->expires_ms = now + CHECKPOINT_LOCK_MS;
	if ((r = store_lease_put(s, out)) != 0)
		goto out;
	r = store_commit(s);
out:
	if (r != 0)
		store_rollback(s);
	return r;
}

void
checkpoint_unreserve(struct store *s, const struct store_lease *l)
{
	if (l->id[0] != '\0')
		(void)store_lease_delete(s, l->id);
}

int
checkpoint_forget(struct api_ctx *x, const char *computer)
{
	struct store_home_rev	*rows = NULL;
	struct home_store	*hs = NULL;
	struct errmsg		 e;
	size_t			 n = 0, i;
	int			 r, lk = -1;

	memset(&e, 0, sizeof e);
	if ((r = ckpt_lock(x->a, computer, 1, &lk)) != 0)
		return r;
	/* The wrapped data key first: its objects are unreadable now. */
	if ((r = home_object_forget_key(x->s, computer)) != 0)
		goto out;
	if ((r = store_home_rev_list(x->s, computer, &rows, &n)) != 0)
		goto out;
	for (i = 0; i < n; i++)
		if ((r = store_home_rev_delete(x->s, computer,
		    rows[i].revision)) != 0)
			goto out;
	if ((r = home_store_open_st(&hs, x->a->data_dir, x->s, &e)) != 0 ||
	    (r = home_prune(hs, home_key(computer), NULL, 0, &e)) != 0)
		goto out;
	ckpt_mirror_prune(x->a, home_key(computer), NULL, 0);
out:
	home_store_free(hs);
	free(rows);
	ckpt_unlock(lk);
	return r;
}

struct ckpt_owned {
	struct store	*s;
};

/* Objects of a home whose computer still exists are its own pass's. */
static int
ckpt_owned(void *arg, const char *home, int64_t rev)
{
	struct ckpt_owned	*o = arg;
	struct store_computer	 c;

	(void)rev;
	/* Cannot tell (the store failed): keep. */
	return store_computer_get(o->s, home, &c) != ERR_NOT_FOUND;
}

int
checkpoint_sweep_objects(struct api *a, struct store *s, int *deleted)
{
	struct store_computer	*cs = NULL;
	struct store_home_rev	*rows = NULL;
	struct ckpt_owned	 o;
	struct errmsg		 e;
	int64_t			*keep;
	size_t			 n = 0, nr, i, j;
	int			 r, lk, k;

	*deleted = 0;
	memset(&e, 0, sizeof e);
	if (!home_object_enabled())
		return 0;
	if ((r = home_object_check(&e)) != 0)
		return r;
	if ((r = store_computer_list(s, &cs, &n)) != 0)
		return r;
	for (i = 0; i < n; i++) {
		/*
		 * Held: a checkpoint is under way, and its new object has
		 * no row yet; never delete what may become current.
		 */
		if (ckpt_lock(a, cs[i].id, 0, &lk) != 0)
			continue;
		if (store_home_rev_list(s, cs[i].id, &rows, &nr) == 0) {
			keep = xcalloc(nr + 1, sizeof *keep);
			for (j = 0; j < nr; j++)
				keep[j] = rows[j].revision;
			/* The bucket holds the current revision only. */
			keep[0] = home_object_current(keep, nr);
			if (home_object_prune(home_key(cs[i].id), keep,
			    nr > 0 ? 1 : 0, NULL, NULL, &k, &e) == 0)
				*deleted += k;
			free(keep);
			free(rows);
			rows = NULL;
		}
		ckpt_unlock(lk);
	}
	free(cs);
	/* Homes of computers that are gone. */
	o.s = s;
	if ((r = home_object_prune(NULL, NULL, 0, ckpt_owned, &o, &k,
	    &e)) == 0)
		*deleted += k;
	return r;
}

int
checkpoint_cleanup(struct api *a, struct store *s, int *cleaned)
{
	struct store_computer	*cs = NULL;
	struct store_home_rev	*rows = NULL;
	struct home_store	*hs = NULL;
	struct errmsg		 e;
	int64_t			*keep;
	size_t			 n = 0, nr, i, j;
	int			 r, lk;

	*cleaned = 0;
	memset(&e, 0, sizeof e);
	if ((r = home_store_open_st(&hs, a->data_dir, s, &e)) != 0)
		return r;
	if ((r = store_computer_list(s, &cs, &n)) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		/* Held: another process is checkpointing; it cleans up. */
		if (ckpt_lock(a, cs[i].id, 0, &lk) != 0)
			continue;
		if (store_home_rev_list(s, cs[i].id, &rows, &nr) == 0) {
			keep = xcalloc(nr + 1, sizeof *keep);
			for (j = 0; j < nr; j++)
				keep[j] = rows[j].revision;
			if (home_prune(hs, home_key(cs[i].id), keep, nr,
			    &e) == 0)
				(*cleaned)++;
			ckpt_mirror_prune(a, home_key(cs[i].id), keep, nr);
			free(keep);
			free(rows);
			rows = NULL;
		}
		ckpt_unlock(lk);
	}
out:
	free(cs);
	home_store_free(hs);
	return r;
}

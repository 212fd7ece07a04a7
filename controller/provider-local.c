/* SPDX-License-Identifier: MIT */
/*
 * SANDBOX_PROVIDER=local (P-2): each computer is a guestd child process on
 * this host, its workspace under DATA_DIR/computers/<id>/home, a fresh
 * control secret (mode 0600) per start, and a loopback port guestd picks
 * itself (--listen 127.0.0.1:0) and reports through --ready-file.
 *
 * Users.  As root, every computer runs as a uid and gid of its own, taken
 * from LOCAL_UID_RANGE on its first start and recorded in the store
 * (local_uids), so one computer's commands can neither read nor change
 * another's files nor signal its processes.  The uid needs no passwd entry
 * (guestd names it "rakazo" for all it starts, through nss_wrapper):
 * we drop to it in the child before exec, so guestd never runs as root
 * here and the control secret, which its user must not read, reaches it
 * in GUESTD_SECRET (guestd wipes it at once, before any command of that
 * user can exist: every process of the uid is killed before guestd
 * starts and after it stops).  The home, a private TMPDIR (guestd's
 * runtime dirs, X cookies and sockets) and the ready FIFO belong to the
 * uid, mode 0700.  With the range "off" (or when serve is not root) every
 * computer runs as one user (RAKAZO_GUEST_USER, default nobody, as root;
 * serve's own user otherwise): /internal/health says "shared-user" and a
 * second computer is refused (SHARED_USER) unless --allow-shared-user.
 *
 * guestd is started in its own session so it outlives a controller restart;
 * the computer row's ref keeps {pid, port, secret_file, home} and a new
 * controller reconnects to it.  The endpoint is ws://127.0.0.1:PORT with
 * the secret file's line; guest.h does the talking.  All waits (guestd's
 * readiness, a stop) hand the loop back instead of blocking it.
 */
#include "autoconf.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "log.h"
#include "token.h"
#include "provider.h"
#include "task.h"
#include "xmalloc.h"

#define LOCAL_READY_MS		30000
#define LOCAL_STOP_MS		5000
#define LOCAL_SWEEP_TRIES	200

/* The provider's own state (p->impl). */
struct local_cfg {
	int	 isolated;		/* a uid per computer */
	int	 private_proc;		/* /proc of its own, hidepid */
	uid_t	 lo, hi;		/* the range, inclusive */
};

/* guestd's environment (local_env_new), and what of it we allocated. */
struct local_env {
	char	**v;
	size_t	  n;
	char	 *own[3];		/* TMPDIR=, GUESTD_SECRET=,
					   GUESTD_HOME_MAX_BYTES= */
};

struct local_ref {
	long	 pid;
	int	 port;
	long	 uid;			/* -1: the shared user */
	char	 secret_file[PATH_MAX];
	char	 home[PATH_MAX];
};

static int
local_ref_parse(const struct store_computer *c, struct local_ref *ref)
{
	json_t		*j;
	json_int_t	 pid = 0, port = 0, uid = -1;
	const char	*sf = "", *home = "";
	int		 r = ERR_NOT_FOUND;

	memset(ref, 0, sizeof *ref);
	ref->uid = -1;
	if ((j = json_loads(c->ref, 0, NULL)) == NULL)
		return ERR_NOT_FOUND;
	if (json_unpack(j, "{s:I, s:I, s:s, s?s, s?I}", "pid", &pid, "port",
	    &port, "secret_file", &sf, "home", &home, "uid", &uid) == 0 &&
	    pid > 1 && port > 0 && port < 65536) {
		ref->pid = (long)pid;
		ref->port = (int)port;
		ref->uid = uid > 0 && uid < INT32_MAX ? (long)uid : -1;
		snprintf(ref->secret_file, sizeof ref->secret_file, "%s", sf);
		snprintf(ref->home, sizeof ref->home, "%s", home);
		r = 0;
	}
	json_decref(j);
	return r;
}

/*
 * Is pid our guestd?  Reap it first if it is our child (a zombie would
 * answer kill 0), then make sure the pid was not reused by something else.
 */
static int
local_pid_alive(long pid)
{
	char	 path[64], exe[PATH_MAX];
	ssize_t	 n;

	if (pid <= 1)
		return 0;
	(void)waitpid((pid_t)pid, NULL, WNOHANG);
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return 0;
	snprintf(path, sizeof path, "/proc/%ld/exe", pid);
	if ((n = readlink(path, exe, sizeof exe - 1)) < 0)
		return errno == ENOENT ? 0 : 1;
	exe[n] = '\0';
	return strstr(exe, "guestd") != NULL;
}

static int
local_alive(struct provider *p, const struct store_computer *c)
{
	struct local_ref	 ref;

	if (local_ref_parse(c, &ref) != 0)
		return 0;
	return local_pid_alive(ref.pid);
}

static int
local_mkdirs(const char *path, mode_t mode)
{
	char	 tmp[PATH_MAX], *s;

	snprintf(tmp, sizeof tmp, "%s", path);
	for (s = tmp + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(tmp, 0755) == -1 && errno != EEXIST)
			return err_from_errno(errno);
		*s = '/';
	}
	if (mkdir(tmp, mode) == -1 && errno != EEXIST)
		return err_from_errno(errno);
	return 0;
}

static int
local_write_secret(const char *path, char *secret, size_t len)
{
	int	 fd, r = ERR_IO;
	size_t	 n;

	if ((r = token_new(secret, len)) != 0)
		return r;
	(void)unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd == -1)
		return err_from_errno(errno);
	n = strlen(secret);
	r = write(fd, secret, n) == (ssize_t)n ? 0 : ERR_IO;
	if (close(fd) != 0)
		r = ERR_IO;
	return r;
}

/* ---- users ------------------------------------------------------------ */

/*
 * Give the calling process (root, about to become a computer's uid) a
 * mount namespace of its own with a fresh procfs on /proc mounted
 * hidepid=invisible: the computer's processes then see only their own
 * uid's in /proc, so ps shows them no other computer's command lines
 * (passwords in arguments) and no other computer exists for them at all.
 * No PID namespace: pids stay the host's, which serve's ref, its
 * liveness checks and the uid sweep read from its own /proc.
 * "invisible" is known only to kernels whose procfs mounts are instances
 * of their own (5.8 and later); an older kernel refuses the mount rather
 * than apply hidepid to the host's /proc, which shares its superblock.
 * Async-signal-safe: runs in a forked child.
 */
static int
local_proc_private(void)
{
	if (unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    "hidepid=invisible") != 0)
		return -1;
	return 0;
}

/*
 * Can computers get a private /proc here?  Not in a container without
 * CAP_SYS_ADMIN, nor on an old kernel: then they start as before and
 * serve says so once (local.proc_shared).  Once, at start-up.
 */
static int
local_proc_probe(void)
{
	pid_t	 pid;
	int	 status;

	if ((pid = fork()) == -1)
		return 0;
	if (pid == 0)
		_exit(local_proc_private() == 0 ? 0 : 1);
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int
local_init(struct provider *p, struct errmsg *err)
{
	struct local_cfg	*lc;
	const char		*s = p->cfg.uid_range;
	unsigned long		 lo, hi;
	int			 n = 0;

	lc = xcalloc(1, sizeof *lc);
	p->impl = lc;
	if (geteuid() != 0 || s == NULL || *s == '\0' ||
	    strcmp(s, "off") == 0)
		return 0;
	/* Below 1000 are the system's; 65534 and up are nobody's and -1. */
	if (sscanf(s, "%lu-%lu%n", &lo, &hi, &n) != 2 || s[n] != '\0' ||
	    lo < 1000 || hi < lo || hi >= 0x7fffffffUL ||
	    (lo <= 65535 && hi >= 65534))
		return errmsg_set(err, ERR_CONFIG, "--local-uid-range wants "
		    "LO-HI with 1000 <= LO <= HI < 2147483647 and without "
		    "65534-65535, or off");
	lc->isolated = 1;
	lc->lo = (uid_t)lo;
	lc->hi = (uid_t)hi;
	if ((lc->private_proc = local_proc_probe()) == 0)
		log_warn("local.proc_shared", "reason=\"no private /proc with "
		    "hidepid here: each computer can list the others' "
		    "processes and read their command lines\"");
	return 0;
}

static void
local_free(struct provider *p)
{
	free(p->impl);
	p->impl = NULL;
}

static int
local_isolated(struct provider *p)
{
	const struct local_cfg	*lc = p->impl;

	return lc != NULL && lc->isolated;
}

static const char *
local_isolation(struct provider *p)
{
	return local_isolated(p) ? "uid" : "shared-user";
}

/*
 * One shared user: a second computer could read and change the first's
 * workspace, so it exists only when the operator said so.  Computers
 * that are gone (deleted rows) do not count; of those that exist, the
 * oldest is the one that may run.
 */
static int
local_admit(struct provider *p, struct store *s, const char *id,
    struct errmsg *err)
{
	struct store_computer	*cs = NULL, *me = NULL;
	size_t			 n = 0, i, others = 0;
	int			 r;

	if (local_isolated(p) || p->cfg.allow_shared_user)
		return 0;
	if ((r = store_computer_list(s, &cs, &n)) != 0)
		return r;
	for (i = 0; i < n; i++)
		if (strcmp(cs[i].id, id) == 0)
			me = &cs[i];
	for (i = 0; i < n; i++) {
		if (&cs[i] == me || strcmp(cs[i].provider, "local") != 0 ||
		    strcmp(cs[i].state, "deleted") == 0)
			continue;
		if (me != NULL && (cs[i].created_ms > me->created_ms ||
		    (cs[i].created_ms == me->created_ms &&
		    strcmp(cs[i].id, me->id) > 0)))
			continue;	/* younger than this one */
		others++;
	}
	free(cs);
	if (others == 0)
		return 0;
	return errmsg_set(err, ERR_SHARED_USER, "every local computer of this "
	    "controller runs as one user (%s), so a second one could read and "
	    "change the first's files: run serve as root with a "
	    "--local-uid-range, or accept this with --allow-shared-user",
	    geteuid() == 0 ? "--local-uid-range off" : "serve is not root");
}

/* Is uid within one of the ranges of /etc/subuid-style file path? */
static int
local_in_subids(const char *path, unsigned long uid)
{
	char		 line[512], *a, *b;
	unsigned long	 start, count;
	FILE		*f;
	int		 hit = 0;

	if ((f = fopen(path, "re")) == NULL)
		return 0;
	while (!hit && fgets(line, sizeof line, f) != NULL) {
		/* name:start:count */
		if ((a = strchr(line, ':')) == NULL ||
		    (b = strchr(a + 1, ':')) == NULL)
			continue;
		start = strtoul(a + 1, NULL, 10);
		count = strtoul(b + 1, NULL, 10);
		if (uid >= start && uid - start < count)
			hit = 1;
	}
	fclose(f);
	return hit;
}

static int
local_cmp_uid(const void *a, const void *b)
{
	uid_t	x = *(const uid_t *)a, y = *(const uid_t *)b;

	return x < y ? -1 : x > y;
}

/* The uids that own a process now, sorted (*n of them; malloc'd). */
static uid_t *
local_proc_uids(size_t *n)
{
	DIR		*d;
	struct dirent	*e;
	struct stat	 st;
	uid_t		*v = NULL;
	size_t		 cap = 0;

	*n = 0;
	if ((d = opendir("/proc")) == NULL)
		return NULL;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9' ||
		    fstatat(dirfd(d), e->d_name, &st, 0) != 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			v = xrealloc(v, cap * sizeof *v);
		}
		v[(*n)++] = st.st_uid;
	}
	closedir(d);
	if (*n > 0)
		qsort(v, *n, sizeof *v, local_cmp_uid);
	return v;
}

/*
 * Is candidate u free for a new computer: no passwd or group entry, not
 * handed to a user's containers (/etc/subuid, /etc/subgid), no process
 * running as it, and never given to a computer before?
 */
static int
local_uid_free(uid_t u, const int64_t *used, size_t nused,
    const uid_t *procs, size_t nprocs)
{
	size_t	i;

	for (i = 0; i < nused; i++)
		if (used[i] == (int64_t)u)
			return 0;
	if (bsearch(&u, procs, nprocs, sizeof *procs, local_cmp_uid) != NULL)
		return 0;
	if (getpwuid(u) != NULL || getgrgid((gid_t)u) != NULL)
		return 0;
	if (local_in_subids("/etc/subuid", u) ||
	    local_in_subids("/etc/subgid", u))
		return 0;
	return 1;
}

/*
 * Computer id's uid: the recorded one, else the lowest free uid of the
 * range, recorded now (in one transaction: two controllers on one data
 * directory never hand out the same uid).
 */
static int
local_uid_for(struct provider *p, const char *id, uid_t *out,
    struct errmsg *err)
{
	const struct local_cfg	*lc = p->impl;
	struct store		*s = NULL;
	int64_t			 uid = -1, *used = NULL;
	uid_t			*procs = NULL, u;
	size_t			 nused = 0, nprocs = 0;
	int			 r, tx = 0;

	if ((r = store_open(&s, p->cfg.data_dir, err)) != 0)
		goto out;
	if ((r = store_uid_get(s, id, &uid)) == 0)
		goto out;
	if (r != ERR_NOT_FOUND)
		goto fail;
	if ((r = store_begin(s)) != 0)
		goto fail;
	tx = 1;
	if ((r = store_uid_get(s, id, &uid)) == 0)
		goto out;
	if (r != ERR_NOT_FOUND || (r = store_uid_list(s, &used, &nused)) != 0)
		goto fail;
	procs = local_proc_uids(&nprocs);
	r = ERR_PROVIDER;
	for (u = lc->lo; ; u++) {
		if (local_uid_free(u, used, nused, procs, nprocs)) {
			uid = u;
			r = 0;
			break;
		}
		if (u == lc->hi)
			break;
	}
	if (r != 0) {
		errmsg_set(err, r, "no free uid left in --local-uid-range "
		    "%s", p->cfg.uid_range);
		goto out;
	}
	r = store_end(s, store_uid_add(s, id, uid, store_now_ms()));
	tx = 0;
	if (r != 0)
		goto fail;
	log_info("local.uid_assigned", "computer=%s uid=%lld", id,
	    (long long)uid);
	goto out;
fail:
	errmsg_set(err, r, "cannot record the computer's user in the "
	    "state store");
out:
	if (s != NULL && tx && store_in_tx(s))
		store_rollback(s);
	store_free(s);
	free(used);
	free(procs);
	if (r == 0)
		*out = (uid_t)uid;
	return r;
}

/* The computer is gone: its uid stays taken, by nobody. */
static void
local_uid_retire(struct provider *p, const char *id)
{
	struct store	*s = NULL;
	struct errmsg	 err;

	if (store_open(&s, p->cfg.data_dir, &err) != 0 ||
	    store_uid_retire(s, id, store_now_ms()) != 0)
		log_warn("local.uid_retire", "computer=%s", id);
	store_free(s);
}

/* A decimal at *p, moved past it; -1 if none. */
static long
local_num(const char **p)
{
	long	v = -1;

	while (**p == ' ' || **p == '\t')
		(*p)++;
	for (; **p >= '0' && **p <= '9'; (*p)++)
		v = (v < 0 ? 0 : v * 10) + (**p - '0');
	return v;
}

/*
 * 1 when /proc/<name>/status is a live process (not a zombie) whose real
 * or saved uid is uid: one that a kill(-1) sent as uid reaches.  Called
 * in a forked child, so only async-signal-safe calls, no allocation.
 */
static int
local_proc_of(const char *name, uid_t uid)
{
	char		 path[64], buf[1024];
	const char	*st, *u;
	ssize_t		 n;
	long		 ruid, euid, suid;
	int		 fd;

	if ((size_t)snprintf(path, sizeof path, "/proc/%s/status", name) >=
	    sizeof path ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if ((st = strstr(buf, "\nState:")) == NULL ||
	    (u = strstr(buf, "\nUid:")) == NULL)
		return 0;
	st += strlen("\nState:");
	while (*st == ' ' || *st == '\t')
		st++;
	if (*st == 'Z' || *st == 'X')
		return 0;
	u += strlen("\nUid:");
	ruid = local_num(&u);
	euid = local_num(&u);
	suid = local_num(&u);
	(void)euid;
	return ruid == (long)uid || suid == (long)uid;
}

/* 1 while a process other than this one is of uid (local_proc_of). */
static int
local_uid_live(uid_t uid)
{
	char		 buf[4096], self[24];
	const char	*name;
	long		 n, off;
	int		 fd, live = 0;
	unsigned short	 reclen;

	if ((fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return 1;	/* cannot tell: keep killing */
	snprintf(self, sizeof self, "%ld", (long)getpid());
	while (!live && (n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
		for (off = 0; off < n && !live; off += reclen) {
			/* struct linux_dirent64: ino, off, reclen, type, name */
			memcpy(&reclen, buf + off + 16, sizeof reclen);
			name = buf + off + 19;
			if (*name >= '1' && *name <= '9' &&
			    strcmp(name, self) != 0)
				live = local_proc_of(name, uid);
		}
	close(fd);
	return live;
}

/*
 * Kill every process of uid: what the computer's commands left running
 * (daemons, setsid, nohup) must not outlive its stop, nor meet the next
 * guestd.  A child becomes uid and sends kill(-1), which reaches exactly
 * the processes that uid may signal, until none of them is alive.  That
 * is read from /proc: kill(-1) fails with ESRCH only when no other process
 * exists at all, and succeeds even when it could signal none of them, so
 * its result alone kept every start and stop here for the whole
 * LOCAL_SWEEP_TRIES x 10 ms (2 s).
 */
static void
local_uid_sweep(uid_t uid)
{
	pid_t	 pid;
	int	 i, status;

	if ((pid = fork()) == -1)
		return;
	if (pid == 0) {
		if (setgroups(0, NULL) != 0 ||
		    setresgid(uid, uid, uid) != 0 ||
		    setresuid(uid, uid, uid) != 0 || getuid() != uid)
			_exit(1);
		for (i = 0; i < LOCAL_SWEEP_TRIES; i++) {
			if ((kill(-1, SIGKILL) == -1 && errno == ESRCH) ||
			    !local_uid_live(uid))
				_exit(0);
			(void)usleep(10000);
		}
		_exit(2);
	}
	(void)task_wait_pid(pid, -1);
	if (waitpid(pid, &status, 0) == pid &&
	    (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
		log_warn("local.sweep_incomplete", "uid=%ld status=%d",
		    (long)uid, status);
}

/*
 * Make path (a directory) the computer's user's: owned by uid:gid, with
 * mode.  A home written under another user before (the shared user of
 * an older release, or the range switched on or off) changes owner
 * whole, without following its symlinks.
 */
static int
local_own_dir(const char *path, uid_t uid, gid_t gid, mode_t mode,
    int recursive)
{
	char		 ids[64];
	char *const	 argv[] = { "chown", "-R", "-P", "-h", "--", ids,
			    (char *)path, NULL };
	struct stat	 st;

	if (mkdir(path, mode) == -1 && errno != EEXIST)
		return err_from_errno(errno);
	if (lstat(path, &st) != 0)
		return err_from_errno(errno);
	if (!S_ISDIR(st.st_mode))
		return ERR_NOT_DIR;
	if (st.st_uid != uid || st.st_gid != gid) {
		snprintf(ids, sizeof ids, "%lu:%lu", (unsigned long)uid,
		    (unsigned long)gid);
		if (recursive && provider_run(argv) != 0)
			return ERR_IO;
		if (lchown(path, uid, gid) != 0)
			return err_from_errno(errno);
	}
	if (chmod(path, mode) != 0)
		return err_from_errno(errno);
	return 0;
}

/*
 * guestd's environment, built rather than inherited.  serve's own holds
 * what the computer must never see: the state store's password
 * (DATABASE_URL, PGPASSWORD), the object store's keys
 * (OBJECT_STORAGE_SECRET_ACCESS_KEY, AWS_*), the API token; and any
 * command of the computer reads its guestd's /proc/PID/environ.  So only
 * names on this list pass: PATH, HOME, LANG, LANGUAGE, LC_*, TZ, TMPDIR,
 * guestd's settings (GUESTD_*, man/guestd.8) and the sanitizers' options
 * of a checked build.  Of GUESTD_*, the secret and the user are ours
 * alone: serve's would override them.
 */
static int
local_env_keep(const char *kv)
{
	static const char *const names[] = { "PATH", "HOME", "LANG",
	    "LANGUAGE", "TZ", "TMPDIR", "ASAN_OPTIONS", "LSAN_OPTIONS",
	    "UBSAN_OPTIONS", NULL };
	static const char *const ours[] = { "GUESTD_SECRET",
	    "GUESTD_SECRET_FILE", "GUESTD_USER", NULL };
	const char	*eq;
	size_t		 n, i;

	if ((eq = strchr(kv, '=')) == NULL)
		return 0;
	n = (size_t)(eq - kv);
	for (i = 0; ours[i] != NULL; i++)
		if (strlen(ours[i]) == n && strncmp(kv, ours[i], n) == 0)
			return 0;
	for (i = 0; names[i] != NULL; i++)
		if (strlen(names[i]) == n && strncmp(kv, names[i], n) == 0)
			return 1;
	return strncmp(kv, "LC_", 3) == 0 || strncmp(kv, "GUESTD_", 7) == 0;
}

/* "name=value", allocated. */
static char *
local_kv(const char *name, const char *value)
{
	size_t	 a = strlen(name), b = strlen(value);
	char	*s = xmalloc(a + b + 2);

	memcpy(s, name, a);
	s[a] = '=';
	memcpy(s + a + 1, value, b + 1);
	return s;
}

/*
 * tmp, secret: NULL to leave out (the shared user's guestd).  homemax:
 * the home size cap (HOME_MAX_BYTES), 0 for guestd's own default; when
 * set it replaces a GUESTD_HOME_MAX_BYTES of serve's, however guestd runs.
 */
static void
local_env_new(struct local_env *env, const char *tmp, const char *secret,
    uint64_t homemax)
{
	extern char	**environ;
	char		  num[24];
	size_t		  i, cap = 4;

	memset(env, 0, sizeof *env);
	for (i = 0; environ[i] != NULL; i++)
		cap++;
	env->v = xcalloc(cap, sizeof *env->v);
	for (i = 0; environ[i] != NULL; i++)
		if (local_env_keep(environ[i]) && (tmp == NULL ||
		    strncmp(environ[i], "TMPDIR=", 7) != 0) &&
		    (homemax == 0 || strncmp(environ[i],
		    "GUESTD_HOME_MAX_BYTES=", 22) != 0))
			env->v[env->n++] = environ[i];
	if (homemax != 0) {
		snprintf(num, sizeof num, "%llu", (unsigned long long)homemax);
		env->own[2] = local_kv("GUESTD_HOME_MAX_BYTES", num);
		env->v[env->n++] = env->own[2];
	}
	if (tmp != NULL) {
		env->own[0] = local_kv("TMPDIR", tmp);
		env->v[env->n++] = env->own[0];
	}
	if (secret != NULL) {
		env->own[1] = local_kv("GUESTD_SECRET", secret);
		env->v[env->n++] = env->own[1];
	}
	env->v[env->n] = NULL;
}

static void
local_env_free(struct local_env *env)
{
	if (env->own[1] != NULL)
		token_wipe(env->own[1], strlen(env->own[1]));
	free(env->own[0]);
	free(env->own[1]);
	free(env->own[2]);
	free(env->v);
	memset(env, 0, sizeof *env);
}

/*
 * The child: own session, logs to a file, exec guestd with env (never
 * serve's own environment, local_env_keep).  uid >= 0: become it here
 * (guestd then starts unprivileged), in a mount namespace with a /proc
 * of its own where the provider can (local_proc_private); env then holds
 * the secret and the private TMPDIR.
 */
static void
local_exec_guestd(struct provider *p, const char *dir, const char *home,
    const char *secretp, const char *ready, long uid, char **env)
{
	const struct local_cfg	*lc = p->impl;
	char			 logp[PATH_MAX];
	int			 fd;

	(void)setsid();
	if ((size_t)snprintf(logp, sizeof logp, "%s/guestd.log", dir) >=
	    sizeof logp)
		_exit(126);
	fd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0)
		dup2(fd, 0);
	signal(SIGPIPE, SIG_DFL);
	if (uid >= 0) {
		char	*argv[] = { (char *)p->cfg.guestd, "--listen",
		    "127.0.0.1:0", "--workspace", (char *)home,
		    "--ready-file", (char *)ready, "--gateway", "127.0.0.1:0",
		    NULL };
		int	 exe = -1;

		/* Opened while still root: a build tree in a private home
		 * (/root is mode 0700) is out of the computer's uid's reach
		 * by path, and the binary needs no more than its own mode's
		 * execute bit when run from the descriptor. */
		if (strchr(p->cfg.guestd, '/') != NULL)
			exe = open(p->cfg.guestd, O_RDONLY | O_CLOEXEC);
		/* It worked at start-up (local_proc_probe): a failure now
		 * would start a computer that sees the others. */
		if (lc->private_proc && local_proc_private() != 0) {
			fprintf(stderr, "rakazoctl: cannot give the computer "
			    "a private /proc: %s\n", strerror(errno));
			_exit(126);
		}
		if (setgroups(0, NULL) != 0 ||
		    setresgid((gid_t)uid, (gid_t)uid, (gid_t)uid) != 0 ||
		    setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) != 0 ||
		    setuid(0) == 0 || geteuid() != (uid_t)uid) {
			fprintf(stderr, "rakazoctl: cannot become uid %ld\n",
			    uid);
			_exit(126);
		}
		/* A script (no ELF) cannot run from a close-on-exec
		 * descriptor: then by path, as before. */
		if (exe >= 0)
			fexecve(exe, argv, env);
		execvpe(p->cfg.guestd, argv, env);
		fprintf(stderr, "rakazoctl: cannot run %s as uid %ld: %s\n",
		    p->cfg.guestd, uid, strerror(errno));
		_exit(127);
	} else {
		char	*argv[] = { (char *)p->cfg.guestd, "--listen",
		    "127.0.0.1:0", "--secret-file", (char *)secretp,
		    "--workspace", (char *)home, "--ready-file", (char *)ready,
		    "--gateway", "127.0.0.1:0", NULL, NULL, NULL };

		if (geteuid() == 0) {
			argv[11] = "--user";
			argv[12] = (char *)p->cfg.guest_user;
		}
		execvpe(p->cfg.guestd, argv, env);
	}
	_exit(127);
}

/* Read the port guestd writes into the FIFO, or notice it died. */
static int
local_wait_port(int fd, pid_t pid, int *port, struct errmsg *err)
{
	char	 line[32];
	ssize_t	 n;
	int	 fds[2], pfd, which = -1, r;

	*port = 0;
	/* A pidfd turns "guestd died first" into one more readable fd. */
	if ((pfd = (int)syscall(SYS_pidfd_open, pid, 0)) == -1) {
		r = err_from_errno(errno);
		errmsg_set(err, r, "cannot watch guestd: %s",
		    strerror(errno));
		goto fail;
	}
	fds[0] = fd;
	fds[1] = pfd;
	r = task_wait_fds(fds, 2, LOCAL_READY_MS, &which);
	close(pfd);
	if (r == 0 && which == 0) {
		n = read(fd, line, sizeof line - 1);
		if (n > 0) {
			line[n] = '\0';
			*port = atoi(line);
			if (*port > 0 && *port < 65536)
				return 0;
		}
		errmsg_set(err, ERR_PROVIDER, "guestd reported no port");
	} else if (r == 0) {
		int	 st = 0;

		/* How it ended tells a refusal (its log says why) from a
		 * kill, which leaves the log empty. */
		if (waitpid(pid, &st, 0) == pid && WIFSIGNALED(st))
			return errmsg_set(err, ERR_PROVIDER, "guestd was "
			    "killed by signal %d during start-up (see "
			    "guestd.log in the computer's directory)",
			    WTERMSIG(st));
		return errmsg_set(err, ERR_PROVIDER, "guestd exited during "
		    "start-up with status %d (see guestd.log in the "
		    "computer's directory)", WIFEXITED(st) ?
		    WEXITSTATUS(st) : -1);
	} else
		errmsg_set(err, ERR_PROVIDER,
		    "guestd did not report its port in time");
fail:
	kill(pid, SIGKILL);
	(void)task_wait_pid(pid, -1);
	(void)waitpid(pid, NULL, 0);
	return ERR_PROVIDER;
}

/* Shared user: the second computer is refused at its start as well. */
static int
local_admit_start(struct provider *p, const char *id, struct errmsg *err)
{
	struct store	*s = NULL;
	int		 r;

	if (local_isolated(p) || p->cfg.allow_shared_user)
		return 0;
	if ((r = store_open(&s, p->cfg.data_dir, err)) != 0)
		return r;
	r = local_admit(p, s, id, err);
	store_free(s);
	return r;
}

static int
local_start(struct provider *p, struct store_computer *c, struct errmsg *err)
{
	char		 dir[PATH_MAX], home[PATH_MAX], secretp[PATH_MAX];
	char		 ready[PATH_MAX], secret[TOKEN_STRLEN + 1];
	char		 tmp[PATH_MAX], tmpdir[PATH_MAX];
	struct passwd	*pw = NULL;
	struct local_env env = { NULL, 0, { NULL, NULL, NULL } };
	json_t		*ref = NULL;
	char		*s = NULL;
	pid_t		 pid;
	uid_t		 uid = 0;
	long		 luid = -1;
	int		 fd = -1, port = 0, r = ERR_INTERNAL;

	ready[0] = '\0';
	secret[0] = '\0';
	if (local_alive(p, c) == 1)
		return 0;	/* reconnect: it still runs */
	if ((r = local_admit_start(p, c->id, err)) != 0)
		goto out;
	if ((size_t)snprintf(dir, sizeof dir, "%s/computers/%s",
	    p->cfg.data_dir, c->id) >= sizeof dir - 16) {
		r = errmsg_set(err, ERR_NAME_TOO_LONG, "the data directory "
		    "path is too long");
		goto out;
	}
	if ((size_t)snprintf(home, sizeof home, "%s/home", dir) >= sizeof home ||
	    (size_t)snprintf(secretp, sizeof secretp, "%s/secret", dir) >=
	    sizeof secretp ||
	    (size_t)snprintf(ready, sizeof ready, "%s/ready", dir) >=
	    sizeof ready ||
	    (size_t)snprintf(tmpdir, sizeof tmpdir, "%s/tmp", dir) >=
	    sizeof tmpdir) {
		r = ERR_NAME_TOO_LONG;
		goto out;
	}
	if ((r = local_mkdirs(dir, 0700)) != 0 ||
	    (r = local_mkdirs(home, 0700)) != 0) {
		errmsg_set(err, r, "cannot create the computer's directory");
		goto out;
	}
	if (geteuid() == 0) {
		/*
		 * The guest user must reach its home: every directory above
		 * it is made traversable (not readable); state.db and the
		 * secrets stay 0600 (serve runs with umask 077).
		 */
		snprintf(tmp, sizeof tmp, "%s/computers", p->cfg.data_dir);
		if (chmod(p->cfg.data_dir, 0711) != 0 ||
		    chmod(tmp, 0711) != 0 || chmod(dir, 0711) != 0) {
			r = err_from_errno(errno);
			errmsg_set(err, r, "cannot open the data directory "
			    "to the computer's user");
			goto out;
		}
	}
	if (local_isolated(p)) {
		if ((r = local_uid_for(p, c->id, &uid, err)) != 0)
			goto out;
		luid = (long)uid;
		/* Nothing of this uid may meet the new guestd. */
		local_uid_sweep(uid);
		(void)provider_rmtree(tmpdir);
		if ((r = local_own_dir(home, uid, (gid_t)uid, 0700, 1)) != 0 ||
		    (r = local_own_dir(tmpdir, uid, (gid_t)uid, 0700,
		    0)) != 0) {
			errmsg_set(err, r, "cannot hand the computer's "
			    "directories to its user");
			goto out;
		}
	} else if (geteuid() == 0) {
		if ((pw = getpwnam(p->cfg.guest_user)) == NULL ||
		    pw->pw_uid == 0) {
			r = errmsg_set(err, ERR_CONFIG, "RAKAZO_GUEST_USER "
			    "'%s' is not an unprivileged user",
			    p->cfg.guest_user);
			goto out;
		}
		if ((r = local_own_dir(home, pw->pw_uid, pw->pw_gid, 0700,
		    1)) != 0) {
			errmsg_set(err, r, "cannot hand the home to %s",
			    p->cfg.guest_user);
			goto out;
		}
	}
	if ((r = local_write_secret(secretp, secret, sizeof secret)) != 0) {
		errmsg_set(err, r, "cannot write the control secret");
		goto out;
	}
	(void)unlink(ready);
	if (mkfifo(ready, 0600) != 0 ||
	    (luid >= 0 && chown(ready, uid, (gid_t)uid) != 0) ||
	    (fd = open(ready, O_RDWR | O_CLOEXEC | O_NONBLOCK)) == -1) {
		r = err_from_errno(errno);
		errmsg_set(err, r, "cannot create the ready FIFO");
		goto out;
	}
	local_env_new(&env, luid >= 0 ? tmpdir : NULL,
	    luid >= 0 ? secret : NULL, p->cfg.home_max_bytes);
	if ((pid = fork()) == -1) {
		r = err_from_errno(errno);
		errmsg_set(err, r, "cannot fork guestd");
		goto out;
	}
	if (pid == 0)
		local_exec_guestd(p, dir, home, secretp, ready, luid, env.v);
	local_env_free(&env);
	token_wipe(secret, sizeof secret);
	if ((r = local_wait_port(fd, pid, &port, err)) != 0)
		goto out;
	ref = json_pack("{s:I, s:i, s:s, s:s}", "pid", (json_int_t)pid,
	    "port", port, "secret_file", secretp, "home", home);
	if (ref != NULL && luid >= 0)
		json_object_set_new(ref, "uid", json_integer(luid));
	if (ref == NULL || (s = json_dumps(ref, JSON_COMPACT)) == NULL ||
	    strlen(s) >= sizeof c->ref) {
		r = ERR_INTERNAL;
		goto out;
	}
	snprintf(c->ref, sizeof c->ref, "%s", s);
	log_info("local.started", "computer=%s pid=%ld port=%d uid=%ld",
	    c->id, (long)pid, port, luid);
	r = 0;
out:
	local_env_free(&env);
	token_wipe(secret, sizeof secret);
	if (fd >= 0)
		close(fd);
	if (ready[0] != '\0')
		(void)unlink(ready);
	free(s);
	json_decref(ref);
	return r;
}

static int
local_stop(struct provider *p, struct store_computer *c)
{
	struct local_ref	 ref;

	if (local_ref_parse(c, &ref) != 0)
		return 0;
	if (local_pid_alive(ref.pid)) {
		kill((pid_t)ref.pid, SIGTERM);
		/* A pidfd also watches a guestd that is not our child. */
		if (task_wait_pid(ref.pid, LOCAL_STOP_MS) == ERR_TIMEOUT) {
			kill((pid_t)ref.pid, SIGKILL);
			(void)task_wait_pid(ref.pid, -1);
		}
		(void)waitpid((pid_t)ref.pid, NULL, WNOHANG);
	}
	/* What its commands left running stops with the computer. */
	if (ref.uid > 0)
		local_uid_sweep((uid_t)ref.uid);
	return 0;
}

static int
local_destroy(struct provider *p, struct store_computer *c)
{
	char	 dir[PATH_MAX];
	int	 r;

	local_stop(p, c);
	snprintf(dir, sizeof dir, "%s/computers/%s", p->cfg.data_dir, c->id);
	r = provider_rmtree(dir);
	if (local_isolated(p))
		local_uid_retire(p, c->id);
	return r;
}

/* ---- the endpoint ------------------------------------------------------ */

static int
local_endpoint(struct provider *p, const struct store_computer *c,
    struct provider_endpoint *ep, struct errmsg *err)
{
	struct local_ref	 ref;
	int			 r;

	if (local_ref_parse(c, &ref) != 0)
		return errmsg_set(err, ERR_CONNECT, "the computer is not "
		    "running");
	if ((r = token_read_file(ref.secret_file, ep->secret,
	    sizeof ep->secret, 1)) != 0)
		return errmsg_set(err, r, "cannot read the computer's secret");
	snprintf(ep->control_url, sizeof ep->control_url,
	    "ws://127.0.0.1:%d", ref.port);
	/* The gateway: the port guestd's hello names, on loopback. */
	ep->gateway[0] = '\0';
	snprintf(ep->workspace, sizeof ep->workspace, "%s", ref.home);
	return 0;
}

const struct provider_ops provider_local_ops = {
	.name = "local",
	.init = local_init,
	.free = local_free,
	.isolation = local_isolation,
	.admit = local_admit,
	.start = local_start,
	.alive = local_alive,
	.stop = local_stop,
	.destroy = local_destroy,
	.endpoint = local_endpoint,
};

/* SPDX-License-Identifier: MIT */
/*
 * Desktops: one Xvfb per active bot (doc/DESIGN.md G-1 ... G-5).
 *
 * A display goes STARTING -> READY -> CLOSING -> gone.  Readiness needs no
 * polling: Xvfb gets "-displayfd 3" and writes its display number to our
 * pipe once it accepts connections; an early death shows up as EOF on that
 * pipe and as SIGCHLD through the loop's signalfd.  A slot stays reserved
 * until its X server has been reaped, so a slot is never handed out while
 * old clients could still reach the old server (G-5).
 *
 * Each display has its own cookie file (the Xauthority format, one
 * FamilyWild entry, written here: no xauth binary), passed to Xvfb with
 * -auth and to clients through XAUTHORITY.  The cookie never leaves the
 * file and our own memory.
 *
 * Requests that wait (an open while Xvfb starts, a close until it exits)
 * are control streams, so a connection that goes away takes its waiters
 * with it.  Events go to a per-connection subscription that is likewise a
 * stream (request id 0, which no request can use).
 */
#include "autoconf.h"

#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <linux/close_range.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytes.h"
#include "capture.h"
#include "control.h"
#include "display.h"
#include "err.h"
#include "json.h"
#include "log.h"
#include "loop.h"
#include "nss.h"
#include "path.h"
#include "queue-compat.h"
#include "xmalloc.h"

#define DISPLAY_COOKIE_LEN	16
#define DISPLAY_MAX_SLOTS	1000	/* slots tried above the first */
#define DISPLAY_KILL_MS		3000	/* SIGTERM, then SIGKILL after this */
#define DISPLAY_STOP_WAIT_MS	2000	/* at exit, for all X servers together */
#define DISPLAY_MIN_SIDE	16
#define DISPLAY_MAX_SIDE	8192
#define DISPLAY_START_TRIES	12	/* slots tried when a start fails */

enum display_state { DISPLAY_STARTING, DISPLAY_READY, DISPLAY_CLOSING };

/*
 * What guestd keeps of a window manager's stderr: its last bytes, where a
 * program that exits at once says why.  Older bytes are dropped.
 */
#define DISPLAY_WM_ERR_MAX	768

struct display_waiter {
	struct control_stream	 s;	/* first: we get it back from ops */
	struct display		*d;
	int			 closing;	/* a close, not an open */
	display_open_cb		 cb;	/* an internal opener (browser.c) */
	void			*cbarg;
	LIST_ENTRY(display_waiter) entry;	/* in its display's waiters */
};

struct display {
	char			 bot[65];
	int			 slot;
	int			 width, height, depth;
	enum display_state	 state;
	pid_t			 pid;
	pid_t			 wm_pid;	/* its window manager, 0 */
	struct loop_fd		*wm_errfd;	/* the read end of its stderr */
	char			 wm_err[DISPLAY_WM_ERR_MAX];	/* its tail */
	size_t			 wm_errlen;
	struct loop_fd		*readyfd;
	char			 readybuf[16];
	size_t			 readylen;
	unsigned char		 cookie[DISPLAY_COOKIE_LEN];
	char			 authfile[PATH_MAX];
	struct capture		*cap;
	struct loop_timer	*kill_timer;
	uint64_t		 since_ms;	/* wall clock */
	uint64_t		 used_ms;	/* monotonic */
	int			 controlled;
	int			 crashed;	/* died while not closing */
	int			 tries;		/* starts so far */
	LIST_HEAD(, display_waiter) waiters;
	int			 hooked;	/* ready hook ran, closing not */
	uint64_t		 gen;		/* unique for guestd's life */
	const void		*input_owner;	/* display_input_claim */
	LIST_ENTRY(display)	 entry;		/* linked once it has a slot */
};

struct display_sub {
	struct control_stream	 s;
	LIST_ENTRY(display_sub)	 entry;
};

static LIST_HEAD(, display)	 display_list =
    LIST_HEAD_INITIALIZER(display_list);
static uint64_t			 display_gen_next;
static LIST_HEAD(, display_sub)	 display_subs =
    LIST_HEAD_INITIALIZER(display_subs);
static int			 display_inited;
static char			 display_rundir[PATH_MAX];
static int64_t			 display_first = 1;
static int64_t			 display_def_w = 1280, display_def_h = 800;
static int64_t			 display_def_depth = 24;
static int64_t			 display_limit;
static int64_t			 display_idle_ms;
static const char		*display_xvfb = "Xvfb";
static char			 display_wm[PATH_MAX];	/* "": none */
static display_hook		 display_ready_hook, display_closing_hook;

/* ---- settings ------------------------------------------------------------- */

static int64_t
display_env_int(const char *name, int64_t def, int64_t min, int64_t max)
{
	const char	*s = getenv(name);
	char		*ep;
	long long	 v;

	if (s == NULL || *s == '\0')
		return def;
	errno = 0;
	v = strtoll(s, &ep, 10);
	if (*ep != '\0' || errno != 0 || v < min || v > max) {
		log_warn("display.config", "var=%s value=invalid using=%lld",
		    name, (long long)def);
		return def;
	}
	return v;
}

/* name as an executable path: itself with a slash, else found on PATH. */
static int
display_which(const char *name, char *out, size_t outlen)
{
	const char	*path = getenv("PATH"), *p, *e;
	int		 n;

	if (strchr(name, '/') != NULL) {
		n = snprintf(out, outlen, "%s", name);
		return n >= 0 && (size_t)n < outlen && access(out, X_OK) == 0;
	}
	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p != '\0'; p = *e != '\0' ? e + 1 : e) {
		e = strchrnul(p, ':');
		n = snprintf(out, outlen, "%.*s/%s", (int)(e - p), p, name);
		if (e > p && n >= 0 && (size_t)n < outlen &&
		    access(out, X_OK) == 0)
			return 1;
	}
	out[0] = '\0';
	return 0;
}

/*
 * The window manager started on each new display: GUESTD_WM ("none": no
 * window manager), else the first light one installed.  Dialogs and
 * multi-window applications behave better with one, but it is optional:
 * none installed is fine and silent.
 */
static void
display_wm_find(void)
{
	static const char *const wms[] = { "openbox", "xfwm4", "fluxbox",
	    "twm", NULL };
	const char	*s = getenv("GUESTD_WM");
	int		 i;

	display_wm[0] = '\0';
	if (s != NULL && *s != '\0') {
		if (strcmp(s, "none") != 0 &&
		    !display_which(s, display_wm, sizeof display_wm))
			log_warn("display.config", "var=GUESTD_WM "
			    "value=not_found using=none");
		return;
	}
	for (i = 0; wms[i] != NULL; i++)
		if (display_which(wms[i], display_wm, sizeof display_wm))
			return;
}

static void
display_init(void)
{
	const char	*s, *tmp;

	if (display_inited)
		return;
	display_inited = 1;
	display_first = display_env_int("GUESTD_DISPLAY_FIRST", 1, 0, 30000);
	display_limit = display_env_int("SANDBOX_TEAM_SCREEN_LIMIT", 0, 0,
	    100000);
	display_idle_ms = display_env_int("GUESTD_SCREEN_IDLE_MS", 0, 0,
	    INT64_MAX / 2);
	if ((s = getenv("GUESTD_XVFB")) != NULL && *s != '\0')
		display_xvfb = s;
	if ((s = getenv("GUESTD_DISPLAY_GEOMETRY")) != NULL && *s != '\0') {
		int	w, h, dp, n = 0;

		if (sscanf(s, "%dx%dx%d%n", &w, &h, &dp, &n) == 3 &&
		    s[n] == '\0' && w >= DISPLAY_MIN_SIDE &&
		    w <= DISPLAY_MAX_SIDE && h >= DISPLAY_MIN_SIDE &&
		    h <= DISPLAY_MAX_SIDE && dp == 24) {
			display_def_w = w;
			display_def_h = h;
			display_def_depth = dp;
		} else
			log_warn("display.config", "var=GUESTD_DISPLAY_GEOMETRY "
			    "value=invalid using=1280x800x24");
	}
	display_wm_find();
	tmp = getenv("TMPDIR");
	if (tmp == NULL || *tmp != '/')
		tmp = "/tmp";
	snprintf(display_rundir, sizeof display_rundir, "%s/guestd-x.XXXXXX",
	    tmp);
	if (mkdtemp(display_rundir) == NULL) {
		log_error("display.rundir", "error=\"%s\"", strerror(errno));
		display_rundir[0] = '\0';
	}
	atexit(display_shutdown);
}

/* ---- events and waiters ---------------------------------------------------- */

static void
display_sub_abort(struct control_stream *s)
{
	struct display_sub	*sub;

	LIST_FOREACH(sub, &display_subs, entry) {
		if (&sub->s == s) {
			LIST_REMOVE(sub, entry);
			free(sub);
			return;
		}
	}
}

static const struct control_stream_ops display_sub_ops = {
	NULL, NULL, display_sub_abort
};

static void
display_subscribe(struct control_conn *c)
{
	struct display_sub	*sub;

	LIST_FOREACH(sub, &display_subs, entry) {
		if (sub->s.conn == c)
			return;
	}
	sub = xcalloc(1, sizeof *sub);
	control_stream_attach(c, &sub->s, 0, &display_sub_ops);
	LIST_INSERT_HEAD(&display_subs, sub, entry);
}

static void
display_broadcast(const char *name, json_t *body)
{
	struct display_sub	*sub;

	LIST_FOREACH(sub, &display_subs, entry) {
		if (sub->s.conn != NULL)
			control_event(sub->s.conn, name, 0,
			    json_deep_copy(body));
	}
	json_decref(body);
}

/* Only a linked waiter has a stream: display_wake detaches first. */
static void
display_waiter_abort(struct control_stream *s)
{
	struct display_waiter	*w = (struct display_waiter *)s;

	LIST_REMOVE(w, entry);
	free(w);
}

static const struct control_stream_ops display_waiter_ops = {
	NULL, NULL, display_waiter_abort
};

static void
display_wait(struct display *d, struct control_conn *c, uint32_t id,
    int closing)
{
	struct display_waiter	*w;

	w = xcalloc(1, sizeof *w);
	w->d = d;
	w->closing = closing;
	control_stream_attach(c, &w->s, id, &display_waiter_ops);
	LIST_INSERT_HEAD(&d->waiters, w, entry);
}

static json_t *
display_info(const struct display *d, int created)
{
	char	name[16];

	snprintf(name, sizeof name, ":%d", d->slot);
	return json_pack("{s:s,s:s,s:i,s:i,s:i,s:i,s:s,s:b}",
	    "bot", d->bot, "display", name, "slot", d->slot,
	    "width", d->width, "height", d->height, "depth", d->depth,
	    "xauthority", d->authfile, "created", created);
}

/*
 * Answer the waiters of one kind: opens with code (0: the display info),
 * closes with the closed display.
 */
static void
display_wake(struct display *d, int closing, int code, const char *why)
{
	struct display_waiter	*w, *prev = NULL;
	struct control_conn	*c;
	char			 name[16];

	snprintf(name, sizeof name, ":%d", d->slot);
	/*
	 * Not LIST_FOREACH_SAFE: a callback may add or drop waiters, so the
	 * next one is read after it, from the last waiter kept (prev).
	 */
	for (;;) {
		w = prev == NULL ? LIST_FIRST(&d->waiters) :
		    LIST_NEXT(prev, entry);
		if (w == NULL)
			break;
		if (w->closing != closing) {
			prev = w;
			continue;
		}
		LIST_REMOVE(w, entry);
		if (w->cb != NULL) {
			w->cb(code == 0 ? d : NULL, code, w->cbarg);
			free(w);
			continue;
		}
		c = w->s.conn;
		control_stream_detach(&w->s);
		if (c != NULL && code != 0)
			control_reply_error(c, w->s.id, code, why);
		else if (c != NULL && closing)
			control_reply(c, w->s.id, json_pack("{s:s,s:s,s:i}",
			    "bot", d->bot, "display", name, "slot", d->slot));
		else if (c != NULL)
			control_reply(c, w->s.id, display_info(d, 1));
		free(w);
	}
}

/* ---- the X server ---------------------------------------------------------- */

static uint64_t
display_wall_ms(void)
{
	struct timeval	tv;

	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
}

/* Does something accept connections on X socket n? */
static int
display_socket_live(int n)
{
	struct sockaddr_un	 sun;
	int			 fd, live;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof sun.sun_path, "/tmp/.X11-unix/X%d", n);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return 1;	/* cannot tell: leave the slot alone */
	/* Local and listening: connect() answers at once either way. */
	live = connect(fd, (struct sockaddr *)&sun, sizeof sun) == 0 ||
	    (errno != ECONNREFUSED && errno != ENOENT);
	close(fd);
	return live;
}

/* Another X server (alive) holds slot n? */
static int
display_slot_taken(int n)
{
	char		 path[64], buf[16];
	struct stat	 st;
	ssize_t		 len;
	uid_t		 uid;
	long		 pid;
	int		 fd;

	snprintf(path, sizeof path, "/tmp/.X11-unix/X%d", n);
	if (lstat(path, &st) == 0) {
		/*
		 * A socket without a lock: an X server run without lock files
		 * answers on it; a stale one refuses (Xvfb replaces it).
		 */
		/*
		 * Xvfb unlinks a stale socket, which the sticky directory
		 * allows only for its owner (or root): another user's is
		 * as good as taken.
		 */
		uid = st.st_uid;
		snprintf(path, sizeof path, "/tmp/.X%d-lock", n);
		if (lstat(path, &st) != 0)
			return display_socket_live(n) ||
			    (geteuid() != 0 && uid != geteuid());
	}
	snprintf(path, sizeof path, "/tmp/.X%d-lock", n);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return errno != ENOENT;
	len = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (len <= 0)
		return 1;
	buf[len] = '\0';
	pid = strtol(buf, NULL, 10);
	if (pid <= 0)
		return 1;
	return kill((pid_t)pid, 0) == 0 || errno != ESRCH;
}

static int
display_pick_slot(void)
{
	struct display	*d;
	int		 n;

	for (n = (int)display_first; n < display_first + DISPLAY_MAX_SLOTS;
	    n++) {
		LIST_FOREACH(d, &display_list, entry) {
			if (d->slot == n)
				break;
		}
		if (d == NULL && !display_slot_taken(n))
			return n;
	}
	return -1;
}

static void
display_put16(unsigned char **p, size_t v)
{
	bytes_put_be16(*p, (uint16_t)v);
	*p += 2;
}

static void
display_putstr(unsigned char **p, const void *s, size_t n)
{
	display_put16(p, n);
	memcpy(*p, s, n);
	*p += n;
}

/* One FamilyWild entry: any host, this display number, our cookie. */
static int
display_write_auth(struct display *d)
{
	static const char	 proto[] = "MIT-MAGIC-COOKIE-1";
	unsigned char		 buf[128], *p = buf;
	char			 num[16];
	ssize_t			 n;
	int			 fd, r = ERR_INTERNAL;

	if (getrandom(d->cookie, sizeof d->cookie, 0) !=
	    (ssize_t)sizeof d->cookie)
		return ERR_INTERNAL;
	snprintf(num, sizeof num, "%d", d->slot);
	display_put16(&p, 0xffff);
	display_putstr(&p, "", 0);
	display_putstr(&p, num, strlen(num));
	display_putstr(&p, proto, sizeof proto - 1);
	display_putstr(&p, d->cookie, sizeof d->cookie);
	if (snprintf(d->authfile, sizeof d->authfile, "%s/xauth-%d",
	    display_rundir, d->slot) >= (int)sizeof d->authfile)
		return ERR_NAME_TOO_LONG;
	(void)unlink(d->authfile);
	fd = open(d->authfile, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd == -1)
		return err_from_errno(errno);
	n = write(fd, buf, (size_t)(p - buf));
	if (n != p - buf)
		r = ERR_IO;
	else
		r = 0;
	explicit_bzero(buf, sizeof buf);
	if (close(fd) != 0)
		r = ERR_IO;
	return r;
}

void
display_set_hooks(display_hook ready, display_hook closing)
{
	display_ready_hook = ready;
	display_closing_hook = closing;
}

/* Viewers go first (G-5): run before the capture or the slot goes. */
static void
display_run_closing_hook(struct display *d)
{
	if (!d->hooked)
		return;
	d->hooked = 0;
	if (display_closing_hook != NULL)
		display_closing_hook(d);
}

/*
 * Read what the window manager wrote to stderr, keeping the tail.  Returns
 * 1 at end of file or on an error (the pipe is done), 0 when it would block.
 */
static int
display_wm_err_read(struct display *d, int fd)
{
	char	buf[4096];
	ssize_t	n;
	size_t	keep;

	for (;;) {
		n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0)
			return 1;
		if ((size_t)n >= sizeof d->wm_err) {
			memcpy(d->wm_err, buf + n - sizeof d->wm_err,
			    sizeof d->wm_err);
			d->wm_errlen = sizeof d->wm_err;
			continue;
		}
		if (d->wm_errlen + (size_t)n > sizeof d->wm_err) {
			keep = sizeof d->wm_err - (size_t)n;
			memmove(d->wm_err, d->wm_err + d->wm_errlen - keep,
			    keep);
			d->wm_errlen = keep;
		}
		memcpy(d->wm_err + d->wm_errlen, buf, (size_t)n);
		d->wm_errlen += (size_t)n;
	}
}

/*
 * The window manager's stderr, read as it comes so a chatty one never
 * blocks on a full pipe; at its end only the loop_fd goes (the tail stays
 * for display_wm_cb).
 */
static void
display_wm_err_cb(struct loop_fd *lf, int events, void *arg)
{
	struct display	*d = arg;

	if (display_wm_err_read(d, loop_fd_get(lf)) && !(events & LOOP_HUP)) {
		loop_fd_close(lf);
		d->wm_errfd = NULL;
		return;
	}
	if (events & LOOP_HUP)
		d->wm_errfd = NULL;	/* the loop closes it */
}

/*
 * The window manager exited on its own (display_wm_stop forgets it before
 * stopping it): the desktop has none from now on.  Say so at warning level
 * with the end of what it wrote to stderr, which says why (twm: "unable to
 * open fontset").  The log line passes through redaction like every other.
 */
static void
display_wm_cb(pid_t pid, int status, void *arg)
{
	struct display	*d = arg;
	char		 raw[DISPLAY_WM_ERR_MAX + 1], q[4 * DISPLAY_WM_ERR_MAX + 3];
	size_t		 i, n, skip;

	/* It has exited: all it wrote is in the pipe, unless a child of its
	 * own still holds the write end (then what is there so far). */
	if (d->wm_errfd != NULL) {
		(void)display_wm_err_read(d, loop_fd_get(d->wm_errfd));
		loop_fd_close(d->wm_errfd);
		d->wm_errfd = NULL;
	}
	n = d->wm_errlen;
	while (n > 0 && (d->wm_err[n - 1] == '\n' || d->wm_err[n - 1] == ' '))
		n--;
	/* A tail may begin inside a UTF-8 character: start after it. */
	for (skip = 0; skip < n && skip < 3 &&
	    ((unsigned char)d->wm_err[skip] & 0xc0) == 0x80; skip++)
		;
	for (i = skip; i < n; i++)	/* NULs would cut the line short */
		raw[i - skip] = d->wm_err[i] == '\0' ? ' ' : d->wm_err[i];
	raw[n - skip] = '\0';
	log_quote(q, sizeof q, raw);
	log_warn("display.wm_exited", "bot=%s slot=%d pid=%d status=%d "
	    "stderr=%s", d->bot, d->slot, (int)pid, status, q);
	d->wm_pid = 0;
	d->wm_errlen = 0;
}

/* In the child: only async-signal-safe calls until exec. */
static void
display_wm_child(char *const argv[], char *const envp[], int errfd)
{
	sigset_t	none;
	int		devnull;

	(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	(void)setsid();
	if ((devnull = open("/dev/null", O_RDWR)) == -1)
		_exit(127);
	(void)dup2(devnull, 0);
	(void)dup2(devnull, 1);
	(void)dup2(errfd != -1 ? errfd : devnull, 2);
	(void)close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	execve(argv[0], argv, envp);
	_exit(127);
}

/*
 * twm's own defaults make the user place every new window with the mouse,
 * so an application would never appear: give it a file that places them.
 * Its default fonts ("variable") are bitmap fonts a fresh machine may not
 * have, and without them twm exits at once: name "fixed", which Xvfb
 * always has (its built-in font path), installed fonts or not.
 * Returns the file, or NULL to run twm with its defaults.
 */
static const char *
display_twmrc(void)
{
	static const char	 rc[] = "RandomPlacement\nUsePPosition \"on\"\n"
	    "NoGrabServer\n"
	    "TitleFont \"fixed\"\nResizeFont \"fixed\"\nMenuFont \"fixed\"\n"
	    "IconFont \"fixed\"\nIconManagerFont \"fixed\"\n";
	static char		 path[PATH_MAX];
	int			 fd;

	if (path[0] != '\0')
		return path;
	if (display_rundir[0] == '\0' || (size_t)snprintf(path, sizeof path,
	    "%s/twmrc", display_rundir) >= sizeof path) {
		path[0] = '\0';
		return NULL;
	}
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) == -1 || write(fd, rc, sizeof rc - 1) != sizeof rc - 1) {
		if (fd != -1)
			close(fd);
		path[0] = '\0';
		return NULL;
	}
	close(fd);
	return path;
}

/*
 * Start the window manager on d, in its own session, with DISPLAY and
 * XAUTHORITY naming d.  A failure only costs the window manager.
 */
static void
display_wm_start(struct display *d)
{
	extern char		**environ;
	const struct nss_var	 *nv;
	char			  dpy[32], xauth[PATH_MAX + 16];
	char			 *argv[4], **envp, **own;
	const char		 *base, *rc;
	size_t			  n = 0, k = 0, o = 0;
	pid_t			  pid;
	int			  errp[2], saved;

	if (display_wm[0] == '\0')
		return;
	snprintf(dpy, sizeof dpy, "DISPLAY=:%d", d->slot);
	snprintf(xauth, sizeof xauth, "XAUTHORITY=%s", d->authfile);
	while (environ[n] != NULL)
		n++;
	/* nss_wrapper's too: its menus and whatever it starts name the
	 * user (G-19). */
	own = xcalloc(4, sizeof *own);
	for (nv = nss_vars(); nv->name != NULL; nv++)
		if (asprintf(&own[o++], "%s=%s", nv->name, nv->value) == -1)
			fatal("out of memory");
	envp = xcalloc(n + 3 + o, sizeof *envp);
	for (n = 0; environ[n] != NULL; n++)
		if (strncmp(environ[n], "DISPLAY=", 8) != 0 &&
		    strncmp(environ[n], "XAUTHORITY=", 11) != 0 &&
		    (o == 0 || (strncmp(environ[n], "LD_PRELOAD=", 11) != 0 &&
		    strncmp(environ[n], "NSS_WRAPPER_", 12) != 0)))
			envp[k++] = environ[n];
	envp[k++] = dpy;
	envp[k++] = xauth;
	for (n = 0; n < o; n++)
		envp[k++] = own[n];
	argv[0] = display_wm;
	argv[1] = NULL;
	base = strrchr(display_wm, '/');
	if (strcmp(base != NULL ? base + 1 : display_wm, "twm") == 0 &&
	    (rc = display_twmrc()) != NULL) {
		argv[1] = "-f";
		argv[2] = (char *)rc;
		argv[3] = NULL;
	}
	/* Its stderr comes back through a pipe (else /dev/null). */
	if (pipe2(errp, O_CLOEXEC) == -1)
		errp[0] = errp[1] = -1;
	pid = fork();
	if (pid == 0)
		display_wm_child(argv, envp, errp[1]);
	saved = errno;
	free(envp);
	for (n = 0; n < o; n++)
		free(own[n]);
	free(own);
	if (errp[1] != -1)
		close(errp[1]);
	if (pid == -1) {
		if (errp[0] != -1)
			close(errp[0]);
		log_warn("display.wm_failed", "bot=%s slot=%d error=\"%s\"",
		    d->bot, d->slot, strerror(saved));
		return;
	}
	d->wm_pid = pid;
	d->wm_errlen = 0;
	if (errp[0] != -1)
		d->wm_errfd = loop_fd_add(errp[0], display_wm_err_cb, d);
	loop_child_watch(pid, display_wm_cb, d);
	log_info("display.wm_start", "bot=%s slot=%d pid=%d", d->bot,
	    d->slot, (int)pid);
}

/* Stop the window manager (its whole session's group); the loop reaps. */
static void
display_wm_stop(struct display *d)
{
	loop_fd_close(d->wm_errfd);
	d->wm_errfd = NULL;
	if (d->wm_pid <= 0)
		return;
	loop_child_forget(d->wm_pid);
	(void)kill(-d->wm_pid, SIGTERM);
	d->wm_pid = 0;
}

static void
display_free(struct display *d)
{
	display_run_closing_hook(d);
	display_wm_stop(d);

	LIST_REMOVE(d, entry);
	capture_free(d->cap);
	loop_fd_close(d->readyfd);
	loop_timer_cancel(d->kill_timer);
	if (d->authfile[0] != '\0')
		(void)unlink(d->authfile);
	explicit_bzero(d->cookie, sizeof d->cookie);
	free(d);
}

static void
display_kill_timeout(void *arg)
{
	struct display	*d = arg;

	d->kill_timer = NULL;
	if (d->pid > 0) {
		log_warn("display.kill", "slot=%d pid=%d signal=KILL", d->slot,
		    (int)d->pid);
		kill(d->pid, SIGKILL);
	}
}

/*
 * Begin tearing d down: capture first (no more X calls), then SIGTERM the
 * server; display_child_cb finishes once it has exited.
 */
static void
display_teardown(struct display *d)
{
	display_run_closing_hook(d);
	display_wm_stop(d);
	d->state = DISPLAY_CLOSING;
	capture_free(d->cap);
	d->cap = NULL;
	loop_fd_close(d->readyfd);
	d->readyfd = NULL;
	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
		if (d->kill_timer == NULL)
			d->kill_timer = loop_timer_add(DISPLAY_KILL_MS,
			    display_kill_timeout, d);
	}
}

static int	display_spawn(struct display *);

/*
 * The server died before it was ready: most likely another server took
 * the slot between our check and its bind.  Try the next free slot.
 */
static int
display_restart(struct display *d)
{
	int	slot;

	loop_fd_close(d->readyfd);
	d->readyfd = NULL;
	d->readylen = 0;
	if ((slot = display_pick_slot()) < 0)
		return ERR_MULTI_SCREEN_UNAVAILABLE;
	(void)unlink(d->authfile);
	d->slot = slot;
	if (display_write_auth(d) != 0)
		return ERR_DISPLAY_FAILED;
	log_info("display.retry", "bot=%s slot=%d", d->bot, d->slot);
	/* A started child finishes through this callback again. */
	if (display_spawn(d) != 0 && d->pid == 0)
		return ERR_DISPLAY_FAILED;
	return 0;
}

static void
display_child_cb(pid_t pid, int status, void *arg)
{
	struct display	*d = arg;
	json_t		*ev;
	char		 name[16];

	(void)pid;
	d->pid = 0;
	if (d->state == DISPLAY_STARTING && d->tries < DISPLAY_START_TRIES &&
	    !LIST_EMPTY(&d->waiters) && display_restart(d) == 0)
		return;
	snprintf(name, sizeof name, ":%d", d->slot);
	log_info("display.exited", "bot=%s slot=%d status=%d closing=%d",
	    d->bot, d->slot, status, d->state == DISPLAY_CLOSING);
	if (d->state != DISPLAY_CLOSING) {
		d->crashed = 1;
		ev = json_pack("{s:s,s:s,s:i}", "bot", d->bot, "display", name,
		    "slot", d->slot);
		if (WIFSIGNALED(status))
			json_object_set_new(ev, "signal",
			    json_integer(WTERMSIG(status)));
		else
			json_object_set_new(ev, "status",
			    json_integer(WEXITSTATUS(status)));
		if (d->state == DISPLAY_READY)
			display_broadcast("display.exited", ev);
		else
			json_decref(ev);
	}
	display_wake(d, 0, ERR_DISPLAY_FAILED, "(the X server exited)");
	display_wake(d, 1, 0, NULL);
	display_free(d);
}

static void
display_capture_dead(struct capture *cap, void *arg)
{
	struct display	*d = arg;

	(void)cap;
	/* The server is going or gone; its exit finishes the teardown. */
	log_warn("display.connection_lost", "bot=%s slot=%d", d->bot, d->slot);
	if (d->pid > 0 && d->kill_timer == NULL) {
		kill(d->pid, SIGTERM);
		d->kill_timer = loop_timer_add(DISPLAY_KILL_MS,
		    display_kill_timeout, d);
	}
}

static void
display_ready(struct display *d)
{
	char	name[16];
	int	r;

	snprintf(name, sizeof name, ":%d", d->slot);
	r = capture_open(&d->cap, name, d->cookie, sizeof d->cookie,
	    display_capture_dead, d);
	if (r != 0) {
		log_error("display.capture_failed", "bot=%s slot=%d error=%s",
		    d->bot, d->slot, err_name(r));
		display_wake(d, 0, ERR_DISPLAY_FAILED,
		    "(no damage capture on it)");
		display_teardown(d);
		return;
	}
	d->state = DISPLAY_READY;
	d->used_ms = loop_now_ms();
	log_info("display.ready", "bot=%s slot=%d pid=%d", d->bot, d->slot,
	    (int)d->pid);
	display_wm_start(d);
	d->hooked = 1;
	if (display_ready_hook != NULL)
		display_ready_hook(d);
	display_wake(d, 0, 0, NULL);
}

static void
display_ready_cb(struct loop_fd *lf, int events, void *arg)
{
	struct display	*d = arg;
	ssize_t		 n;
	char		*nl;

	n = read(loop_fd_get(lf), d->readybuf + d->readylen,
	    sizeof d->readybuf - 1 - d->readylen);
	if (n > 0) {
		d->readylen += (size_t)n;
		d->readybuf[d->readylen] = '\0';
		if ((nl = strchr(d->readybuf, '\n')) == NULL &&
		    d->readylen < sizeof d->readybuf - 1)
			return;
		loop_fd_close(lf);
		d->readyfd = NULL;
		if (nl == NULL || atoi(d->readybuf) != d->slot) {
			display_wake(d, 0, ERR_DISPLAY_FAILED,
			    "(the X server took another display)");
			display_teardown(d);
			return;
		}
		display_ready(d);
		return;
	}
	if (n == -1 && errno == EAGAIN && !(events & LOOP_HUP))
		return;
	/* EOF before the number: it failed to start; SIGCHLD follows. */
	if (!(events & LOOP_HUP))
		loop_fd_close(lf);
	d->readyfd = NULL;
}

/* In the child: only async-signal-safe calls until exec. */
static void
display_exec_child(int wfd, char *const argv[])
{
	sigset_t	none;
	int		devnull;

	(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	(void)setsid();
	if (wfd == 3)
		(void)fcntl(3, F_SETFD, 0);
	else if (dup2(wfd, 3) == -1)
		_exit(127);
	if ((devnull = open("/dev/null", O_RDWR)) == -1)
		_exit(127);
	(void)dup2(devnull, 0);
	(void)dup2(devnull, 1);
	(void)dup2(devnull, 2);
	(void)close_range(4, ~0U, CLOSE_RANGE_CLOEXEC);
	execvp(argv[0], argv);
	_exit(127);
}

static int
display_spawn(struct display *d)
{
	char	 name[16], geom[48];
	char	*argv[16];
	pid_t	 pid;
	int	 p[2], i = 0;

	snprintf(name, sizeof name, ":%d", d->slot);
	snprintf(geom, sizeof geom, "%dx%dx%d", d->width, d->height, d->depth);
	argv[i++] = (char *)display_xvfb;
	argv[i++] = name;
	argv[i++] = "-screen";
	argv[i++] = "0";
	argv[i++] = geom;
	argv[i++] = "-nolisten";
	argv[i++] = "tcp";
	argv[i++] = "-noreset";
	argv[i++] = "-auth";
	argv[i++] = d->authfile;
	argv[i++] = "-displayfd";
	argv[i++] = "3";
	argv[i] = NULL;
	if (pipe2(p, O_CLOEXEC) == -1)
		return err_from_errno(errno);
	d->tries++;
	pid = fork();
	if (pid == -1) {
		close(p[0]);
		close(p[1]);
		return err_from_errno(errno);
	}
	if (pid == 0)
		display_exec_child(p[1], argv);
	close(p[1]);
	d->pid = pid;
	loop_child_watch(pid, display_child_cb, d);
	d->readyfd = loop_fd_add(p[0], display_ready_cb, d);
	if (d->readyfd == NULL) {
		display_teardown(d);
		return ERR_INTERNAL;
	}
	log_info("display.start", "bot=%s slot=%d pid=%d geometry=%s", d->bot,
	    d->slot, (int)pid, geom);
	return 0;
}

/* ---- lookup and the screen limit (G-3) ---------------------------------- */

static struct display *
display_lookup(const char *bot)
{
	struct display	*d;

	LIST_FOREACH(d, &display_list, entry) {
		if (d->state != DISPLAY_CLOSING && strcmp(d->bot, bot) == 0)
			return d;
	}
	return NULL;
}

unsigned
display_count(void)
{
	struct display	*d;
	unsigned	 n = 0;

	LIST_FOREACH(d, &display_list, entry) {
		if (d->state != DISPLAY_CLOSING)
			n++;
	}
	return n;
}

/* The oldest ready, idle, uncontrolled desktop, or NULL. */
static struct display *
display_victim(void)
{
	struct display	*d, *best = NULL;
	uint64_t	 now = loop_now_ms();

	LIST_FOREACH(d, &display_list, entry) {
		if (d->state != DISPLAY_READY || d->controlled ||
		    !LIST_EMPTY(&d->waiters) ||
		    now - d->used_ms < (uint64_t)display_idle_ms)
			continue;
		if (best == NULL || d->used_ms < best->used_ms)
			best = d;
	}
	return best;
}

static int
display_make_room(char *detail, size_t detaillen)
{
	struct display	*v;
	char		 name[16];

	if (display_limit <= 0 || display_count() < (unsigned)display_limit)
		return 0;
	if ((v = display_victim()) == NULL) {
		snprintf(detail, detaillen, "(limit %lld, none idle and "
		    "uncontrolled)", (long long)display_limit);
		return ERR_MULTI_SCREEN_UNAVAILABLE;
	}
	snprintf(name, sizeof name, ":%d", v->slot);
	log_info("display.evict", "bot=%s slot=%d", v->bot, v->slot);
	display_broadcast("display.evicted", json_pack("{s:s,s:s,s:i}",
	    "bot", v->bot, "display", name, "slot", v->slot));
	display_teardown(v);
	return 0;
}

/* ---- ops ------------------------------------------------------------------- */

static int
display_args_bot(json_t *args, const char **bot, char *detail)
{
	int	r;

	if ((r = jsonx_str(args, "bot", 64, bot, detail)) != 0)
		return r == ERR_NOT_FOUND ? ERR_BAD_REQUEST : r;
	return path_bot_valid(*bot);
}

static int
display_args_geometry(json_t *args, struct display *d, char *detail)
{
	int64_t	v;
	int	r;

	d->width = (int)display_def_w;
	d->height = (int)display_def_h;
	d->depth = (int)display_def_depth;
	r = jsonx_int(args, "width", DISPLAY_MIN_SIDE, DISPLAY_MAX_SIDE, &v,
	    detail);
	if (r == 0)
		d->width = (int)v;
	else if (r != ERR_NOT_FOUND)
		return r;
	r = jsonx_int(args, "height", DISPLAY_MIN_SIDE, DISPLAY_MAX_SIDE, &v,
	    detail);
	if (r == 0)
		d->height = (int)v;
	else if (r != ERR_NOT_FOUND)
		return r;
	/* Capture and observe read 32-bit pixels: depth 24 only. */
	r = jsonx_int(args, "depth", 24, 24, &v, detail);
	if (r != 0 && r != ERR_NOT_FOUND)
		return r;
	return 0;
}

int
display_op_open(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen)
{
	static const char *const keys[] = { "bot", "fence", "width", "height",
	    "depth", NULL };
	struct display	*d = NULL, tmp;
	const char	*bot;
	int		 r = ERR_INTERNAL;

	if ((r = jsonx_only_keys(args, keys, detail)) != 0 ||
	    (r = display_args_bot(args, &bot, detail)) != 0)
		return r;
	memset(&tmp, 0, sizeof tmp);
	if ((r = display_args_geometry(args, &tmp, detail)) != 0)
		return r;
	display_init();
	display_subscribe(c);
	if ((d = display_lookup(bot)) != NULL) {
		d->used_ms = loop_now_ms();
		if (d->state == DISPLAY_STARTING) {
			display_wait(d, c, id, 0);
			return 0;
		}
		return control_reply(c, id, display_info(d, 0));
	}
	if (display_rundir[0] == '\0')
		return ERR_DISPLAY_FAILED;
	if ((r = display_make_room(detail, detaillen)) != 0)
		return r;
	d = xcalloc(1, sizeof *d);
	d->gen = ++display_gen_next;
	snprintf(d->bot, sizeof d->bot, "%s", bot);
	d->width = tmp.width;
	d->height = tmp.height;
	d->depth = tmp.depth;
	d->state = DISPLAY_STARTING;
	d->since_ms = display_wall_ms();
	d->used_ms = loop_now_ms();
	if ((d->slot = display_pick_slot()) < 0) {
		free(d);
		snprintf(detail, detaillen, "(no free display slot)");
		return ERR_MULTI_SCREEN_UNAVAILABLE;
	}
	LIST_INSERT_HEAD(&display_list, d, entry);
	if ((r = display_write_auth(d)) != 0) {
		display_free(d);
		return r;
	}
	display_wait(d, c, id, 0);
	if ((r = display_spawn(d)) != 0) {
		display_wake(d, 0, r, "(cannot start the X server)");
		if (d->pid == 0)
			display_free(d);
		return 0;
	}
	return 0;
}

int
display_op_close(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen)
{
	static const char *const keys[] = { "bot", "fence", NULL };
	struct display	*d;
	const char	*bot;
	int		 r;

	(void)detaillen;
	if ((r = jsonx_only_keys(args, keys, detail)) != 0 ||
	    (r = display_args_bot(args, &bot, detail)) != 0)
		return r;
	display_init();
	display_subscribe(c);
	if ((d = display_lookup(bot)) == NULL)
		return ERR_NO_DISPLAY;
	display_wake(d, 0, ERR_CANCELLED, "(the desktop was closed)");
	display_wait(d, c, id, 1);
	display_teardown(d);
	if (d->pid == 0) {
		/* Never started or already reaped: nothing to wait for. */
		display_wake(d, 1, 0, NULL);
		display_free(d);
	}
	return 0;
}

int
display_op_list(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen)
{
	static const char *const keys[] = { NULL };
	static const char *const states[] = { "starting", "ready", "closing" };
	struct display	*d;
	json_t		*arr, *one;
	uint64_t	 now = loop_now_ms();
	int		 r;

	(void)detaillen;
	if ((r = jsonx_only_keys(args, keys, detail)) != 0)
		return r;
	display_init();
	display_subscribe(c);
	arr = json_array();
	LIST_FOREACH(d, &display_list, entry) {
		one = display_info(d, 0);
		json_object_del(one, "created");
		json_object_set_new(one, "state",
		    json_string(states[d->state]));
		json_object_set_new(one, "pid", json_integer(d->pid));
		json_object_set_new(one, "since_ms",
		    json_integer((json_int_t)d->since_ms));
		json_object_set_new(one, "idle_ms",
		    json_integer((json_int_t)(now - d->used_ms)));
		json_object_set_new(one, "controlled",
		    json_boolean(d->controlled));
		json_object_set_new(one, "frame", json_integer(d->cap != NULL ?
		    (json_int_t)capture_frame(d->cap) : 0));
		json_array_append_new(arr, one);
	}
	return control_reply(c, id, json_pack("{s:I,s:o}", "limit",
	    (json_int_t)display_limit, "displays", arr));
}

/* ---- for observe and input ---------------------------------------------- */

struct display *
display_find(const char *bot)
{
	struct display	*d = display_lookup(bot);

	return d != NULL && d->state == DISPLAY_READY && d->cap != NULL ?
	    d : NULL;
}

struct capture *
display_capture(struct display *d)
{
	return d->cap;
}

int
display_slot(const struct display *d)
{
	return d->slot;
}

const char *
display_xauthority(const struct display *d)
{
	return d->authfile;
}

uint64_t
display_generation(const struct display *d)
{
	return d->gen;
}

int
display_input_claim(struct display *d, const void *owner)
{
	if (d->input_owner != NULL && d->input_owner != owner)
		return ERR_BUSY;
	d->input_owner = owner;
	return 0;
}

void
display_input_release(struct display *d, const void *owner)
{
	if (d != NULL && d->input_owner == owner)
		d->input_owner = NULL;
}

void
display_touch(struct display *d)
{
	d->used_ms = loop_now_ms();
}

void
display_set_controlled(struct display *d, int on)
{
	d->controlled = on ? 1 : 0;
}

/*
 * Wait until deadline (display_wall_ms) for X server d, asked to stop, to
 * exit, and reap it.  One still running then is killed, and the socket and
 * lock file it had no time to remove are removed here: left behind, they
 * would push the next display on this machine up a slot, and another
 * user's guestd could never reuse the slot.
 */
static void
display_shutdown_wait(struct display *d, uint64_t deadline)
{
	struct pollfd	 pfd;
	uint64_t	 now;
	char		 path[64];
	int		 fd, r;

	if ((fd = (int)syscall(SYS_pidfd_open, d->pid, 0)) != -1) {
		pfd.fd = fd;
		pfd.events = POLLIN;
		do {
			now = display_wall_ms();
			r = poll(&pfd, 1, deadline > now ?
			    (int)(deadline - now) : 0);
		} while (r == -1 && errno == EINTR);
		close(fd);
	}
	if (waitpid(d->pid, NULL, WNOHANG) != 0)
		return;		/* it exited (or is not ours to wait for) */
	log_warn("display.stop_timeout", "bot=%s slot=%d pid=%ld", d->bot,
	    d->slot, (long)d->pid);
	kill(d->pid, SIGKILL);
	(void)waitpid(d->pid, NULL, 0);
	snprintf(path, sizeof path, "/tmp/.X11-unix/X%d", d->slot);
	(void)unlink(path);
	snprintf(path, sizeof path, "/tmp/.X%d-lock", d->slot);
	(void)unlink(path);
}

/*
 * At exit: every X server is asked to stop and waited for, a bounded
 * time in all.  A supervisor that stops guestd may kill what is left of
 * its user right after guestd exits (the local provider's sweep does).
 */
void
display_shutdown(void)
{
	struct display	*d;
	char		 path[PATH_MAX + 8];
	uint64_t	 deadline;

	LIST_FOREACH(d, &display_list, entry) {
		if (d->wm_pid > 0)
			kill(-d->wm_pid, SIGTERM);
		if (d->pid > 0)
			kill(d->pid, SIGTERM);
		if (d->authfile[0] != '\0')
			(void)unlink(d->authfile);
	}
	deadline = display_wall_ms() + DISPLAY_STOP_WAIT_MS;
	LIST_FOREACH(d, &display_list, entry) {
		if (d->pid > 0)
			display_shutdown_wait(d, deadline);
	}
	if (display_rundir[0] != '\0') {
		(void)snprintf(path, sizeof path, "%s/twmrc", display_rundir);
		(void)unlink(path);
		(void)rmdir(display_rundir);
	}
}

/* The ready display on slot :N, or NULL (the G-33 server names slots). */
struct display *
display_find_slot(int slot)
{
	struct display	*d;

	LIST_FOREACH(d, &display_list, entry) {
		if (d->slot == slot && d->state == DISPLAY_READY &&
		    d->cap != NULL)
			return d;
	}
	return NULL;
}

/*
 * display.open for a module of guestd itself (browser.open opens its
 * bot's desktop lazily): the same start and the same waiters, with a
 * callback instead of a reply.
 */
int
display_open_notify(const char *bot, display_open_cb cb, void *arg)
{
	struct display_waiter	*w;
	struct display		*d;
	char			 detail[JSONX_ERRLEN];
	int			 r;

	if ((r = path_bot_valid(bot)) != 0)
		return r;
	display_init();
	if ((d = display_lookup(bot)) != NULL && d->state == DISPLAY_READY) {
		cb(d, 0, arg);
		return 0;
	}
	if (d == NULL) {
		if (display_rundir[0] == '\0')
			return ERR_DISPLAY_FAILED;
		if ((r = display_make_room(detail, sizeof detail)) != 0)
			return r;
		d = xcalloc(1, sizeof *d);
		d->gen = ++display_gen_next;
		snprintf(d->bot, sizeof d->bot, "%s", bot);
		d->width = (int)display_def_w;
		d->height = (int)display_def_h;
		d->depth = (int)display_def_depth;
		d->state = DISPLAY_STARTING;
		d->since_ms = display_wall_ms();
		d->used_ms = loop_now_ms();
		if ((d->slot = display_pick_slot()) < 0) {
			free(d);
			return ERR_MULTI_SCREEN_UNAVAILABLE;
		}
		LIST_INSERT_HEAD(&display_list, d, entry);
		if ((r = display_write_auth(d)) != 0) {
			display_free(d);
			return r;
		}
		if ((r = display_spawn(d)) != 0) {
			if (d->pid == 0)
				display_free(d);
			return r;
		}
	}
	w = xcalloc(1, sizeof *w);
	w->d = d;
	w->cb = cb;
	w->cbarg = arg;
	LIST_INSERT_HEAD(&d->waiters, w, entry);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * The bots' browsers (doc/DESIGN.md G-21 ... G-23, G-25).
 *
 * A browser goes OFF -> DISPLAY (its desktop is starting) -> STARTING (the
 * process runs, DevTools not ready) -> RUNNING -> CLOSING -> OFF.  Nothing
 * polls: the desktop says when it is ready (display_open_notify), the
 * browser prints "DevTools listening on ws://..." on stderr, which we read
 * from a pipe on the loop, the first page target arrives as a CDP event,
 * and the exit comes through the loop's child watch.
 *
 * Each browser runs in its own session and process group so a close can
 * signal all its helpers at once, and so it survives nothing of ours by
 * accident: guestd's exit stops it (browser_shutdown).  The profile
 * directory is made confined to the workspace (path.h) and is never
 * deleted: a restart, a new slot or a guestd restart finds it again and
 * --restore-last-session brings the tabs back.
 *
 * Requests that wait are control streams in one list; a connection that
 * goes away marks its waiters gone, and they are freed once no callback
 * can reach them.
 */
#include "autoconf.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "browser.h"
#include "cdp.h"
#include "control.h"
#include "display.h"
#include "err.h"
#include "exec.h"
#include "guestd.h"
#include "json.h"
#include "log.h"
#include "loop.h"
#include "nss.h"
#include "page.h"
#include "path.h"
#include "proxy-relay.h"
#include "queue-compat.h"
#include "xmalloc.h"

#ifndef GUESTD_BROWSER_DEFAULT
#define GUESTD_BROWSER_DEFAULT	"chromium"
#endif

#define BROWSER_START_MS	30000	/* spawn -> first page target */
#define BROWSER_CDP_CLOSE_MS	5000	/* Browser.close -> SIGTERM */
#define BROWSER_TERM_MS		5000	/* SIGTERM -> SIGKILL */
#define BROWSER_KILL_MS		5000	/* SIGKILL -> give up waiting */
#define BROWSER_ERRLINE		4096
#define BROWSER_CDP_BASE	9221	/* G-34: 9221 + display number */
#define BROWSER_PATH		"/usr/local/bin:/usr/bin:/bin"

enum browser_state {
	BROWSER_OFF, BROWSER_DISPLAY, BROWSER_STARTING, BROWSER_RUNNING,
	BROWSER_CLOSING
};

enum browser_wkind { BW_OPEN, BW_CLOSE, BW_QUIESCE };

struct browser_waiter {
	struct control_stream	 s;	/* first */
	enum browser_wkind	 kind;
	struct browser		*b;	/* NULL for quiesce */
	char			*url;	/* BW_OPEN: navigate once running */
	int			 created;
	json_t			*args;	/* BW_QUIESCE: fn's arguments */
	control_op_fn		 fn;
	int			 busy;	/* a page_focus() is on its way */
	int			 gone;	/* its connection went away */
	LIST_ENTRY(browser_waiter) entry;	/* linked from creation */
};

struct browser {
	char			 bot[65];
	enum browser_state	 state;
	pid_t			 pid;
	uint64_t		 gen;
	int			 port;		/* DevTools */
	int			 slot;
	char			 display[16];
	char			 xauth[PATH_MAX];
	char			 profile[PATH_MAX];
	struct loop_fd		*errfd;
	char			 errbuf[BROWSER_ERRLINE];
	size_t			 errlen;
	struct cdp		*cdp;
	int			 page_seen;
	struct loop_timer	*timer;
	const char		*how;		/* how the last close went */
	int			 crashed_before;	/* restore expected */
	char			*proxy_url, *proxy_user, *proxy_pass;
	struct proxy_relay		*relay;
	int			 proxy_relay_port;
	void			*page_state;
	json_t			*tabs;		/* page targetId -> url */
	json_t			*restore;	/* urls to reopen after a crash */
	json_t			*blank;		/* ids of blank tabs to close */
	int			 restoring;	/* createTarget calls owed */
	LIST_ENTRY(browser)	 entry;
};

static LIST_HEAD(, browser)	 browser_list =
    LIST_HEAD_INITIALIZER(browser_list);
static LIST_HEAD(, browser_waiter) browser_waiters =
    LIST_HEAD_INITIALIZER(browser_waiters);
static uint64_t			 browser_gen_next;

static void	browser_spawn(struct browser *);
static void	browser_stopped(struct browser *, int, const char *);
static void	browser_check_quiesce(void);
static void	browser_note_crash(struct browser *);

/* ---- small helpers --------------------------------------------------------- */

static struct browser *
browser_get(const char *bot, int create)
{
	struct browser	*b;

	LIST_FOREACH(b, &browser_list, entry) {
		if (strcmp(b->bot, bot) == 0)
			return b;
	}
	if (!create)
		return NULL;
	b = xcalloc(1, sizeof *b);
	snprintf(b->bot, sizeof b->bot, "%s", bot);
	b->gen = ++browser_gen_next;
	b->how = "none";
	LIST_INSERT_HEAD(&browser_list, b, entry);
	return b;
}

struct browser *
browser_find(const char *bot)
{
	struct browser	*b = browser_get(bot, 0);

	return b != NULL && b->state == BROWSER_RUNNING ? b : NULL;
}

struct cdp *
browser_cdp(struct browser *b)
{
	return b->cdp;
}

const char *
browser_bot(const struct browser *b)
{
	return b->bot;
}

uint64_t
browser_generation(const struct browser *b)
{
	return b->gen;
}

void **
browser_page_state(struct browser *b)
{
	return &b->page_state;
}

static int
browser_cdp_base(void)
{
	const char	*s = getenv("GUESTD_CDP_BASE");
	long		 v;
	char		*ep;

	if (s == NULL || *s == '\0')
		return BROWSER_CDP_BASE;
	v = strtol(s, &ep, 10);
	if (*ep != '\0' || v < 1024 || v > 65000)
		return BROWSER_CDP_BASE;
	return (int)v;
}

static const char *
browser_binary(void)
{
	const char	*s = getenv("GUESTD_BROWSER");

	return s != NULL && *s != '\0' ? s : GUESTD_BROWSER_DEFAULT;
}

static void
browser_proxy_clear(struct browser *b)
{
	if (b->proxy_pass != NULL)
		explicit_bzero(b->proxy_pass, strlen(b->proxy_pass));
	if (b->proxy_user != NULL)
		explicit_bzero(b->proxy_user, strlen(b->proxy_user));
	free(b->proxy_url);
	free(b->proxy_user);
	free(b->proxy_pass);
	b->proxy_url = b->proxy_user = b->proxy_pass = NULL;
}

/* 1 when nobody listens on 127.0.0.1:port. */
static int
browser_port_free(int port)
{
	struct sockaddr_in	sin;
	int			fd, one = 1, ok;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return 1;
	/* A TIME_WAIT left by the last browser is not "in use". */
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = bind(fd, (struct sockaddr *)&sin, sizeof sin) == 0;
	close(fd);
	return ok;
}

/*
 * .browser-profiles/<bot>/ beneath the workspace, made if missing; never
 * through a symlink that leads out (path_open refuses those).
 */
static int
browser_profile(struct browser *b)
{
	char	rel[128];
	int	root, fd, r = ERR_INTERNAL;

	if ((root = path_root_open(guestd.workspace)) == -1)
		return err_from_errno(errno);
	if (mkdirat(root, ".browser-profiles", 0700) == -1 && errno != EEXIST) {
		r = err_from_errno(errno);
		goto out;
	}
	snprintf(rel, sizeof rel, ".browser-profiles/%s", b->bot);
	fd = path_open(root, ".browser-profiles", O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0) {
		r = fd;
		goto out;
	}
	if (mkdirat(fd, b->bot, 0700) == -1 && errno != EEXIST) {
		r = err_from_errno(errno);
		close(fd);
		goto out;
	}
	close(fd);
	if ((fd = path_open(root, rel, O_RDONLY | O_DIRECTORY, 0)) < 0) {
		r = fd;
		goto out;
	}
	close(fd);
	snprintf(b->profile, sizeof b->profile, "%s/%s", guestd.workspace,
	    rel);
	r = 0;
out:
	close(root);
	return r;
}

static json_t *
browser_info(const struct browser *b, int created)
{
	char	rel[128];

	snprintf(rel, sizeof rel, ".browser-profiles/%s", b->bot);
	return json_pack("{s:s,s:s,s:i,s:i,s:s,s:b,s:b}",
	    "bot", b->bot, "display", b->display, "pid", (int)b->pid,
	    "port", b->port, "profile", rel, "created", created,
	    "proxied", b->relay != NULL);
}

/* ---- waiters ----------------------------------------------------------------- */

static void
browser_waiter_free(struct browser_waiter *w)
{
	LIST_REMOVE(w, entry);
	control_stream_detach(&w->s);
	free(w->url);
	json_decref(w->args);
	free(w);
}

static void
browser_waiter_abort(struct control_stream *s)
{
	struct browser_waiter	*w = (struct browser_waiter *)s;

	w->gone = 1;
	if (!w->busy)
		browser_waiter_free(w);
}

static const struct control_stream_ops browser_waiter_ops = {
	NULL, NULL, browser_waiter_abort
};

static struct browser_waiter *
browser_wait(struct control_conn *c, uint32_t id, enum browser_wkind kind,
    struct browser *b)
{
	struct browser_waiter	*w;

	w = xcalloc(1, sizeof *w);
	w->kind = kind;
	w->b = b;
	control_stream_attach(c, &w->s, id, &browser_waiter_ops);
	LIST_INSERT_HEAD(&browser_waiters, w, entry);
	return w;
}

static void
browser_focus_done(void *arg, int code, const char *msg)
{
	struct browser_waiter	*w = arg;
	struct browser		*b = w->b;

	w->busy = 0;
	if (!w->gone && w->s.conn != NULL) {
		if (code != 0)
			control_reply_error(w->s.conn, w->s.id, code, msg);
		else
			control_reply(w->s.conn, w->s.id,
			    browser_info(b, w->created));
	}
	browser_waiter_free(w);
}

/* Answer w for a running browser: focus (and navigate) first. */
static void
browser_answer_open(struct browser_waiter *w)
{
	int	r;

	w->busy = 1;
	r = page_focus(w->b, w->url, browser_focus_done, w);
	if (r != 0)
		browser_focus_done(w, r == ERR_NOT_FOUND ? 0 : r,
		    "(cannot focus the browser)");
}

/* Wake the waiters of b of one kind; code != 0 fails opens. */
static void
browser_wake(struct browser *b, enum browser_wkind kind, int code,
    const char *why)
{
	struct browser_waiter	*w, *next;

	for (w = LIST_FIRST(&browser_waiters); w != NULL; w = next) {
		next = LIST_NEXT(w, entry);
		if (w->b != b || w->kind != kind || w->busy)
			continue;
		if (w->gone || w->s.conn == NULL) {
			browser_waiter_free(w);
			continue;
		}
		if (kind == BW_OPEN && code == 0) {
			browser_answer_open(w);
			/* It may have freed others: start over. */
			next = LIST_FIRST(&browser_waiters);
			continue;
		}
		if (code != 0)
			control_reply_error(w->s.conn, w->s.id, code, why);
		else
			control_reply(w->s.conn, w->s.id, json_pack(
			    "{s:s,s:b,s:s}", "bot", b->bot, "closed", 1,
			    "how", b->how));
		browser_waiter_free(w);
	}
}

/* ---- the process ------------------------------------------------------------- */

static void
browser_timer_set(struct browser *b, uint64_t ms, loop_timer_cb cb)
{
	loop_timer_cancel(b->timer);
	b->timer = loop_timer_add(ms, cb, b);
}

static void
browser_kill_timeout(void *arg)
{
	struct browser	*b = arg;

	b->timer = NULL;
	log_warn("browser.kill_unconfirmed", "bot=%s pid=%d", b->bot,
	    (int)b->pid);
}

static void
browser_term_timeout(void *arg)
{
	struct browser	*b = arg;

	b->timer = NULL;
	if (b->pid <= 0)
		return;
	b->how = "kill";
	log_warn("browser.kill", "bot=%s pid=%d signal=KILL", b->bot,
	    (int)b->pid);
	(void)kill(-b->pid, SIGKILL);
	browser_timer_set(b, BROWSER_KILL_MS, browser_kill_timeout);
}

static void
browser_cdp_timeout(void *arg)
{
	struct browser	*b = arg;

	b->timer = NULL;
	if (b->pid <= 0)
		return;
	b->how = "term";
	log_info("browser.term", "bot=%s pid=%d", b->bot, (int)b->pid);
	(void)kill(-b->pid, SIGTERM);
	browser_timer_set(b, BROWSER_TERM_MS, browser_term_timeout);
}

static void
browser_close_reply(void *arg, int code, json_t *res, const char *msg)
{
	(void)arg;
	(void)res;
	(void)msg;
	(void)code;
	/* The exit is what counts; the timers cover a silent browser. */
}

/* Begin closing b (whatever state it is in). */
static void
browser_close_start(struct browser *b)
{
	switch (b->state) {
	case BROWSER_OFF:
	case BROWSER_CLOSING:
		return;
	case BROWSER_DISPLAY:
		b->state = BROWSER_OFF;
		browser_wake(b, BW_OPEN, ERR_CANCELLED,
		    "(the browser was closed while starting)");
		browser_wake(b, BW_CLOSE, 0, NULL);
		browser_check_quiesce();
		return;
	default:
		break;
	}
	b->state = BROWSER_CLOSING;
	browser_wake(b, BW_OPEN, ERR_CANCELLED,
	    "(the browser was closed while starting)");
	if (b->cdp != NULL && cdp_call(b->cdp, NULL, "Browser.close", NULL,
	    BROWSER_CDP_CLOSE_MS, browser_close_reply, b) == 0) {
		b->how = "cdp";
		browser_timer_set(b, BROWSER_CDP_CLOSE_MS, browser_cdp_timeout);
		return;
	}
	browser_cdp_timeout(b);
}

static void
browser_child_cb(pid_t pid, int status, void *arg)
{
	struct browser	*b = arg;
	json_t		*ev;
	int		 asked = b->state == BROWSER_CLOSING;

	log_info("browser.exited", "bot=%s pid=%d status=%d asked=%d", b->bot,
	    (int)pid, status, asked);
	/* Helpers of the old browser must not outlive it. */
	(void)kill(-pid, SIGKILL);
	if (!asked) {
		ev = json_pack("{s:s,s:i}", "bot", b->bot, "pid", (int)pid);
		if (WIFSIGNALED(status))
			json_object_set_new(ev, "signal",
			    json_integer(WTERMSIG(status)));
		else
			json_object_set_new(ev, "status",
			    json_integer(WEXITSTATUS(status)));
		control_broadcast("browser.exited", ev);
		browser_note_crash(b);
	} else {
		json_decref(b->restore);
		b->restore = NULL;
	}
	browser_stopped(b, b->state == BROWSER_STARTING ? ERR_BROWSER_START :
	    0, "(the browser exited while starting)");
}

/* The process is gone (or never came): release everything of it. */
static void
browser_stopped(struct browser *b, int code, const char *why)
{
	b->pid = 0;
	b->state = BROWSER_OFF;
	loop_timer_cancel(b->timer);
	b->timer = NULL;
	loop_fd_close(b->errfd);
	b->errfd = NULL;
	cdp_free(b->cdp);
	b->cdp = NULL;
	proxy_relay_stop(b->relay);
	b->relay = NULL;
	page_state_free(b->page_state);
	b->page_state = NULL;
	b->page_seen = 0;
	json_decref(b->tabs);
	b->tabs = NULL;
	json_decref(b->blank);
	b->blank = NULL;
	b->restoring = 0;
	b->gen = ++browser_gen_next;
	browser_wake(b, BW_OPEN, code != 0 ? code : ERR_BROWSER_START,
	    code != 0 ? why : "(the browser exited)");
	browser_wake(b, BW_CLOSE, 0, NULL);
	browser_check_quiesce();
}

static void
browser_start_timeout(void *arg)
{
	struct browser	*b = arg;

	b->timer = NULL;
	log_warn("browser.start_timeout", "bot=%s pid=%d", b->bot, (int)b->pid);
	browser_wake(b, BW_OPEN, ERR_BROWSER_START,
	    "(DevTools did not come up in time)");
	browser_close_start(b);
}

#define BROWSER_RESTORE_MAX	16

/* A tab that shows nothing of the bot's own: Chromium's start page. */
static int
browser_blank_url(const char *u)
{
	return u == NULL || *u == '\0' || strcmp(u, "about:blank") == 0 ||
	    strncmp(u, "chrome://newtab", 15) == 0 ||
	    strncmp(u, "chrome://new-tab-page", 21) == 0;
}

/* Remember the bot's http(s) tabs, to reopen them after a crash. */
static void
browser_note_crash(struct browser *b)
{
	const char	*id;
	json_t		*v;

	json_decref(b->restore);
	b->restore = json_array();
	json_object_foreach(b->tabs, id, v) {
		const char *u = json_string_value(v);

		if (u != NULL && (strncmp(u, "http://", 7) == 0 ||
		    strncmp(u, "https://", 8) == 0) &&
		    json_array_size(b->restore) < BROWSER_RESTORE_MAX)
			json_array_append(b->restore, v);
	}
	if (json_array_size(b->restore) == 0) {
		json_decref(b->restore);
		b->restore = NULL;
	}
}

static void	browser_ready(struct browser *);

static void
browser_restore_reply(void *arg, int code, json_t *res, const char *msg)
{
	struct browser	*b = arg;
	json_t		*v;
	size_t		 i;

	(void)res;
	(void)msg;
	if (code != 0)
		log_warn("browser.restore_failed", "bot=%s error=%s", b->bot,
		    err_name(code));
	if (--b->restoring > 0)
		return;
	/* The restored tabs are open: the start page goes, then we are
	 * ready (a focus must not pick a tab that is closing). */
	json_array_foreach(b->blank, i, v) {
		if (cdp_call(b->cdp, NULL, "Target.closeTarget", json_pack(
		    "{s:O}", "targetId", v), 0, browser_restore_reply, b) == 0)
			b->restoring++;
	}
	json_decref(b->blank);
	b->blank = NULL;
	if (b->restoring == 0)
		browser_ready(b);
}

/*
 * Chromium restores a session that ended cleanly, but after a crash of a
 * profile's first session it shows only its start page.  Then we reopen
 * the tabs we saw last ourselves.  1 when that is under way.
 */
static int
browser_restore(struct browser *b)
{
	const char	*id;
	json_t		*v;
	size_t		 i;

	if (b->restore == NULL || b->restoring > 0)
		return b->restoring > 0;
	json_object_foreach(b->tabs, id, v) {
		if (!browser_blank_url(json_string_value(v))) {
			/* Chromium did it. */
			json_decref(b->restore);
			b->restore = NULL;
			return 0;
		}
	}
	json_decref(b->blank);
	b->blank = json_array();
	json_object_foreach(b->tabs, id, v)
		json_array_append_new(b->blank, json_string(id));
	log_info("browser.restore", "bot=%s tabs=%zu", b->bot,
	    json_array_size(b->restore));
	json_array_foreach(b->restore, i, v) {
		if (cdp_call(b->cdp, NULL, "Target.createTarget", json_pack(
		    "{s:O}", "url", v), 0, browser_restore_reply, b) == 0)
			b->restoring++;
	}
	json_decref(b->restore);
	b->restore = NULL;
	return b->restoring > 0;
}

static void
browser_ready(struct browser *b)
{
	if (b->state != BROWSER_STARTING || !b->page_seen)
		return;
	if (browser_restore(b))
		return;
	loop_timer_cancel(b->timer);
	b->timer = NULL;
	b->state = BROWSER_RUNNING;
	log_info("browser.ready", "bot=%s pid=%d port=%d display=%s", b->bot,
	    (int)b->pid, b->port, b->display);
	browser_wake(b, BW_OPEN, 0, NULL);
}

static void
browser_cdp_event(void *arg, const char *method, json_t *params,
    const char *session)
{
	struct browser	*b = arg;
	const char	*type, *id;
	json_t		*ti;

	(void)session;
	if (b->tabs == NULL)
		b->tabs = json_object();
	if (strcmp(method, "Target.targetDestroyed") == 0) {
		id = json_string_value(json_object_get(params, "targetId"));
		if (id != NULL)
			json_object_del(b->tabs, id);
		return;
	}
	if (strcmp(method, "Target.targetCreated") != 0 &&
	    strcmp(method, "Target.targetInfoChanged") != 0)
		return;
	ti = json_object_get(params, "targetInfo");
	type = json_string_value(json_object_get(ti, "type"));
	id = json_string_value(json_object_get(ti, "targetId"));
	if (type == NULL || id == NULL || strcmp(type, "page") != 0)
		return;
	if (json_object_size(b->tabs) < 256 || json_object_get(b->tabs, id))
		json_object_set(b->tabs, id, json_object_get(ti, "url") ?
		    json_object_get(ti, "url") : json_null());
	if (strcmp(method, "Target.targetCreated") == 0) {
		b->page_seen = 1;
		browser_ready(b);
	}
}

static void
browser_discover_reply(void *arg, int code, json_t *res, const char *msg)
{
	struct browser	*b = arg;

	(void)res;
	if (code != 0)
		log_warn("browser.discover_failed", "bot=%s error=%s", b->bot,
		    err_name(code));
}

static void
browser_cdp_state(void *arg, int code)
{
	struct browser	*b = arg;
	json_t		*p;

	if (code != 0) {
		/* The process exit (child watch) finishes the story. */
		log_info("browser.cdp_closed", "bot=%s error=%s", b->bot,
		    err_name(code));
		cdp_free(b->cdp);
		b->cdp = NULL;
		return;
	}
	/* Existing targets arrive as targetCreated events, then new ones. */
	p = json_pack("{s:b}", "discover", 1);
	if (cdp_call(b->cdp, NULL, "Target.setDiscoverTargets", p, 0,
	    browser_discover_reply, b) != 0)
		log_warn("browser.discover_failed", "bot=%s", b->bot);
}

struct browser_probe {
	struct browser	*b;
	uint64_t	 gen;
	char		 path[256];
};

/*
 * The answer of GET /json/version: the port must be served by the
 * browser we started (its browser id, from our stderr line), not by some
 * other program that took the port meanwhile.  Then connect.
 */
static void
browser_version_cb(void *arg, int code, const char *body, size_t len)
{
	struct browser_probe	*pr = arg;
	struct browser		*b = pr->b;
	const char		*url;
	char			 e[JSONX_ERRLEN];
	json_t			*j = NULL;
	size_t			 ul, pl;
	int			 jc;

	if (b->gen != pr->gen || b->state != BROWSER_STARTING ||
	    b->cdp != NULL)
		goto out;
	if (code == 0)
		j = jsonx_parse(body, len, CDP_MAX_HTTP_HEAD, 1, &jc, e);
	url = json_string_value(json_object_get(j, "webSocketDebuggerUrl"));
	pl = strlen(pr->path);
	if (url == NULL || (ul = strlen(url)) < pl ||
	    strcmp(url + ul - pl, pr->path) != 0) {
		log_warn("browser.devtools_mismatch", "bot=%s port=%d", b->bot,
		    b->port);
		browser_wake(b, BW_OPEN, url == NULL ? ERR_BROWSER_START :
		    ERR_BROWSER_PORT_BUSY, "(another program answers on the "
		    "bot's DevTools port)");
		browser_close_start(b);
		goto out;
	}
	b->cdp = cdp_open(b->port, pr->path, browser_cdp_state,
	    browser_cdp_event, b);
	if (b->cdp == NULL) {
		browser_wake(b, BW_OPEN, ERR_BROWSER_START,
		    "(cannot connect to DevTools)");
		browser_close_start(b);
	}
out:
	json_decref(j);
	free(pr);
}

/* "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/ID" */
static void
browser_stderr_line(struct browser *b, char *line)
{
	static const char	 pfx[] = "DevTools listening on ws://127.0.0.1:";
	struct browser_probe	*pr;
	char			*p, *path;
	long			 port;

	if ((p = strstr(line, pfx)) == NULL || b->cdp != NULL ||
	    b->state != BROWSER_STARTING)
		return;
	p += sizeof pfx - 1;
	port = strtol(p, &path, 10);
	if (port != b->port || *path != '/')
		return;
	path[strcspn(path, " \r\n")] = '\0';
	pr = xcalloc(1, sizeof *pr);
	pr->b = b;
	pr->gen = b->gen;
	if (strlen(path) >= sizeof pr->path ||
	    (snprintf(pr->path, sizeof pr->path, "%s", path),
	    cdp_http_get(b->port, "/json/version", browser_version_cb,
	    pr) != 0)) {
		free(pr);
		browser_wake(b, BW_OPEN, ERR_BROWSER_START,
		    "(cannot reach DevTools)");
		browser_close_start(b);
	}
}

/* The browser's stderr: watched for the DevTools line, otherwise dropped
 * (it may name URLs, which are not ours to log). */
static void
browser_stderr_cb(struct loop_fd *lf, int events, void *arg)
{
	struct browser	*b = arg;
	char		*nl;
	ssize_t		 n;

	for (;;) {
		n = read(loop_fd_get(lf), b->errbuf + b->errlen,
		    sizeof b->errbuf - 1 - b->errlen);
		if (n <= 0)
			break;
		b->errlen += (size_t)n;
		b->errbuf[b->errlen] = '\0';
		while ((nl = strchr(b->errbuf, '\n')) != NULL) {
			*nl = '\0';
			browser_stderr_line(b, b->errbuf);
			b->errlen -= (size_t)(nl + 1 - b->errbuf);
			memmove(b->errbuf, nl + 1, b->errlen);
			b->errbuf[b->errlen] = '\0';
		}
		if (b->errlen == sizeof b->errbuf - 1)
			b->errlen = 0;	/* an endless line: drop it */
	}
	if ((events & LOOP_HUP) || n == 0) {
		if (!(events & LOOP_HUP))
			loop_fd_close(lf);
		if (b->errfd == lf)
			b->errfd = NULL;
	}
}

static char **
browser_env(const struct browser *b)
{
	const struct nss_var	 *nv;
	char			**envp;
	size_t			  n = 0;

	envp = xcalloc(16, sizeof *envp);
	/* The workspace is the user's home. */
	if (asprintf(&envp[n++], "HOME=%s", guestd.workspace) == -1 ||
	    asprintf(&envp[n++], "USER=%s", guestd.user) == -1 ||
	    asprintf(&envp[n++], "LOGNAME=%s", guestd.user) == -1 ||
	    asprintf(&envp[n++], "PATH=%s", BROWSER_PATH) == -1 ||
	    asprintf(&envp[n++], "LANG=C.UTF-8") == -1 ||
	    asprintf(&envp[n++], "DISPLAY=%s", b->display) == -1 ||
	    asprintf(&envp[n++], "XAUTHORITY=%s", b->xauth) == -1)
		fatal("out of memory");
	/* Its profile dialogs and downloads name the user (G-19). */
	for (nv = nss_vars(); nv->name != NULL; nv++)
		if (asprintf(&envp[n++], "%s=%s", nv->name, nv->value) == -1)
			fatal("out of memory");
	envp[n] = NULL;
	return envp;
}

static void
browser_strv_free(char **v)
{
	size_t	i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

static char **
browser_argv(const struct browser *b)
{
	char	**argv;
	size_t	  n = 0;

	argv = xcalloc(32, sizeof *argv);
	argv[n++] = xstrdup(browser_binary());
	if (asprintf(&argv[n++], "--user-data-dir=%s", b->profile) == -1 ||
	    asprintf(&argv[n++], "--remote-debugging-port=%d", b->port) == -1)
		fatal("out of memory");
	/* G-22, X-4: DevTools on loopback only. */
	argv[n++] = xstrdup("--remote-debugging-address=127.0.0.1");
	argv[n++] = xstrdup("--restore-last-session");
	argv[n++] = xstrdup("--no-first-run");
	argv[n++] = xstrdup("--no-default-browser-check");
	argv[n++] = xstrdup("--disable-background-networking");
	argv[n++] = xstrdup("--disable-component-update");
	argv[n++] = xstrdup("--disable-sync");
	argv[n++] = xstrdup("--disable-quic");
	argv[n++] = xstrdup("--password-store=basic");
	argv[n++] = xstrdup("--disable-session-crashed-bubble");
	argv[n++] = xstrdup("--start-maximized");
	/* The sandbox needs an unprivileged user; only root goes without. */
	if (geteuid() == 0)
		argv[n++] = xstrdup("--no-sandbox");
	if (b->relay != NULL) {
		if (asprintf(&argv[n++], "--proxy-server=http://127.0.0.1:%d",
		    b->proxy_relay_port) == -1)
			fatal("out of memory");
		/*
		 * Chromium already sends loopback direct unless told
		 * "<-loopback>"; naming it keeps that true if defaults move.
		 */
		argv[n++] = xstrdup("--proxy-bypass-list="
		    "localhost;127.0.0.1;[::1]");
	}
	argv[n] = NULL;
	return argv;
}

static int
browser_exec(struct browser *b)
{
	posix_spawn_file_actions_t	 fa;
	posix_spawnattr_t		 attr;
	char				**argv, **envp;
	pid_t				 pid;
	int				 p[2], e, r = ERR_INTERNAL;

	if (pipe2(p, O_CLOEXEC) == -1)
		return err_from_errno(errno);
	argv = browser_argv(b);
	envp = browser_env(b);
	exec_spawnattr_init(&attr);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	posix_spawn_file_actions_addchdir_np(&fa, guestd.workspace);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	e = posix_spawnp(&pid, argv[0], &fa, &attr, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(p[1]);
	if (e != 0) {
		close(p[0]);
		log_error("browser.spawn_failed", "bot=%s binary=%s error=\"%s\"",
		    b->bot, argv[0], strerror(e));
		r = ERR_BROWSER_START;
		goto out;
	}
	b->pid = pid;
	/* The relay serves this browser's processes and nothing else. */
	proxy_relay_set_owner(b->relay, pid);
	loop_child_watch(pid, browser_child_cb, b);
	b->errlen = 0;
	b->errfd = loop_fd_add(p[0], browser_stderr_cb, b);
	log_info("browser.start", "bot=%s pid=%d port=%d display=%s proxied=%d",
	    b->bot, (int)pid, b->port, b->display, b->relay != NULL);
	r = 0;
out:
	browser_strv_free(argv);
	browser_strv_free(envp);
	return r;
}

/* Start the process on a ready display; failures wake the opens. */
static void
browser_spawn(struct browser *b)
{
	struct display	*d;
	const char	*why = "(cannot start the browser)";
	int		 r;

	if ((d = display_find(b->bot)) == NULL) {
		r = ERR_NO_DISPLAY;
		why = "(the bot's desktop went away)";
		goto fail;
	}
	b->slot = display_slot(d);
	snprintf(b->display, sizeof b->display, ":%d", b->slot);
	snprintf(b->xauth, sizeof b->xauth, "%s", display_xauthority(d));
	b->port = browser_cdp_base() + b->slot;
	if (!browser_port_free(b->port)) {
		r = ERR_BROWSER_PORT_BUSY;
		why = "(something else listens on the bot's DevTools port)";
		log_warn("browser.port_busy", "bot=%s port=%d", b->bot,
		    b->port);
		goto fail;
	}
	if ((r = browser_profile(b)) != 0) {
		why = "(cannot make the profile directory)";
		goto fail;
	}
	if (b->proxy_url != NULL) {
		r = proxy_relay_start(b->profile, b->proxy_url, b->proxy_user,
		    b->proxy_pass, &b->relay, &b->proxy_relay_port);
		if (r != 0) {
			why = "(cannot start the proxy relay)";
			goto fail;
		}
	}
	b->state = BROWSER_STARTING;
	b->page_seen = 0;
	if ((r = browser_exec(b)) != 0) {
		proxy_relay_stop(b->relay);
		b->relay = NULL;
		goto fail;
	}
	browser_timer_set(b, BROWSER_START_MS, browser_start_timeout);
	return;
fail:
	b->state = BROWSER_OFF;
	browser_wake(b, BW_OPEN, r, why);
	browser_check_quiesce();
}

static void
browser_display_ready(struct display *d, int code, void *arg)
{
	struct browser	*b = arg;

	(void)d;
	if (b->state != BROWSER_DISPLAY)
		return;
	if (code != 0) {
		b->state = BROWSER_OFF;
		browser_wake(b, BW_OPEN, code, "(the bot's desktop did not "
		    "start)");
		browser_check_quiesce();
		return;
	}
	browser_spawn(b);
}

/* ---- ops ------------------------------------------------------------------- */

static int
browser_args_proxy(struct browser *b, json_t *args, char *detail,
    size_t detaillen)
{
	static const char *const keys[] = { "url", "username", "password",
	    NULL };
	json_t		*px;
	const char	*url, *user = NULL, *pass = NULL;
	char		 host[256];
	int		 port, r;

	px = json_object_get(args, "proxy");
	if (px == NULL)
		return 0;
	if (json_is_null(px)) {
		browser_proxy_clear(b);
		return 0;
	}
	if (!json_is_object(px) || (r = jsonx_only_keys(px, keys,
	    detail)) != 0) {
		snprintf(detail, detaillen, "(proxy wants {url, username, "
		    "password})");
		return ERR_BAD_REQUEST;
	}
	if ((r = jsonx_str(px, "url", 1024, &url, detail)) != 0)
		return ERR_BAD_REQUEST;
	if (proxy_relay_parse_url(url, host, sizeof host, &port) != 0) {
		/* Never echo it: it might hold credentials. */
		snprintf(detail, detaillen, "(proxy.url must be "
		    "http://host:port without credentials)");
		return ERR_BAD_REQUEST;
	}
	r = jsonx_str(px, "username", 256, &user, NULL);
	if (r != 0 && r != ERR_NOT_FOUND)
		return ERR_BAD_REQUEST;
	r = jsonx_str(px, "password", 256, &pass, NULL);
	if (r != 0 && r != ERR_NOT_FOUND)
		return ERR_BAD_REQUEST;
	browser_proxy_clear(b);
	b->proxy_url = xstrdup(url);
	b->proxy_user = user != NULL ? xstrdup(user) : NULL;
	b->proxy_pass = pass != NULL ? xstrdup(pass) : NULL;
	return 0;
}

int
browser_op_open(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen)
{
	static const char *const keys[] = { "bot", "fence", "url", "proxy",
	    NULL };
	struct browser_waiter	*w;
	struct browser		*b;
	const char		*bot, *url = NULL;
	int			 r, proxy_changed;

	if ((r = jsonx_only_keys(args, keys, detail)) != 0)
		return r;
	if ((r = jsonx_str(args, "bot", 64, &bot, detail)) != 0)
		return r == ERR_NOT_FOUND ? ERR_BAD_REQUEST : r;
	if ((r = path_bot_valid(bot)) != 0)
		return r;
	r = jsonx_str(args, "url", PAGE_MAX_URL, &url, detail);
	if (r != 0 && r != ERR_NOT_FOUND)
		return r;
	if (url != NULL && (r = page_url_check(url)) != 0)
		return r;
	b = browser_get(bot, 1);
	proxy_changed = json_object_get(args, "proxy") != NULL;
	if ((r = browser_args_proxy(b, args, detail, detaillen)) != 0)
		return r;
	if (b->state == BROWSER_CLOSING) {
		snprintf(detail, detaillen, "(the browser is closing; open it "
		    "again once closed)");
		return ERR_BUSY;
	}
	if (proxy_changed && b->state != BROWSER_OFF)
		log_info("browser.proxy_pending", "bot=%s (applies at the "
		    "next start)", b->bot);
	w = browser_wait(c, id, BW_OPEN, b);
	w->url = url != NULL ? xstrdup(url) : NULL;
	switch (b->state) {
	case BROWSER_RUNNING:
		browser_answer_open(w);
		return 0;
	case BROWSER_DISPLAY:
	case BROWSER_STARTING:
		return 0;
	default:
		break;
	}
	w->created = 1;
	b->state = BROWSER_DISPLAY;
	if ((r = display_open_notify(bot, browser_display_ready, b)) != 0) {
		b->state = BROWSER_OFF;
		browser_waiter_free(w);
		return r;
	}
	return 0;
}

int
browser_op_close(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen)
{
	static const char *const keys[] = { "bot", "fence", NULL };
	struct browser	*b;
	const char	*bot;
	int		 r;

	(void)detaillen;
	if ((r = jsonx_only_keys(args, keys, detail)) != 0)
		return r;
	if ((r = jsonx_str(args, "bot", 64, &bot, detail)) != 0)
		return r == ERR_NOT_FOUND ? ERR_BAD_REQUEST : r;
	if ((r = path_bot_valid(bot)) != 0)
		return r;
	b = browser_get(bot, 0);
	if (b == NULL || b->state == BROWSER_OFF)
		return control_reply(c, id, json_pack("{s:s,s:b,s:s}", "bot",
		    bot, "closed", 0, "how", "none"));
	browser_wait(c, id, BW_CLOSE, b);
	browser_close_start(b);
	return 0;
}

static unsigned
browser_active(void)
{
	struct browser	*b;
	unsigned	 n = 0;

	LIST_FOREACH(b, &browser_list, entry) {
		if (b->state != BROWSER_OFF)
			n++;
	}
	return n;
}

/* Every browser is off: run the export (or quiesce reply) that waited. */
static void
browser_check_quiesce(void)
{
	struct browser_waiter	*w;
	struct control_conn	*c;
	control_op_fn		 fn;
	json_t			*args;
	char			 detail[256];
	uint32_t		 id;
	int			 r;

	if (browser_active() > 0)
		return;
	for (;;) {
		LIST_FOREACH(w, &browser_waiters, entry) {
			if (w->kind == BW_QUIESCE)
				break;
		}
		if (w == NULL)
			return;
		c = w->s.conn;
		id = w->s.id;
		fn = w->fn;
		args = json_incref(w->args);
		if (w->gone)
			c = NULL;
		browser_waiter_free(w);
		if (c != NULL) {
			detail[0] = '\0';
			r = fn(c, id, args, detail, sizeof detail);
			if (r != 0)
				control_reply_error(c, id, r, detail[0] != '\0' ?
				    detail : NULL);
		}
		json_decref(args);
	}
}

int
browser_quiesce_then(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen, control_op_fn fn)
{
	struct browser_waiter	*w;
	struct browser		*b;

	if (browser_active() == 0)
		return fn(c, id, args, detail, detaillen);
	log_info("browser.quiesce", "browsers=%u", browser_active());
	w = browser_wait(c, id, BW_QUIESCE, NULL);
	w->fn = fn;
	w->args = json_incref(args);
	LIST_FOREACH(b, &browser_list, entry)
		browser_close_start(b);
	return 0;
}

static int
browser_quiesced(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen)
{
	(void)detail;
	(void)detaillen;
	return control_reply(c, id, json_pack("{s:O}", "closed",
	    json_object_get(args, "closed")));
}

int
browser_op_quiesce(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen)
{
	static const char *const keys[] = { NULL };
	struct browser	*b;
	json_t		*closed, *a;
	int		 r;

	if ((r = jsonx_only_keys(args, keys, detail)) != 0)
		return r;
	closed = json_array();
	LIST_FOREACH(b, &browser_list, entry) {
		if (b->state != BROWSER_OFF)
			json_array_append_new(closed, json_string(b->bot));
	}
	a = json_pack("{s:o}", "closed", closed);
	r = browser_quiesce_then(c, id, a, detail, detaillen,
	    browser_quiesced);
	json_decref(a);
	return r;
}

int
browser_op_list(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen)
{
	static const char *const names[] = { "off", "display", "starting",
	    "running", "closing" };
	static const char *const keys[] = { NULL };
	struct browser	*b;
	json_t		*arr;
	int		 r;

	(void)detaillen;
	if ((r = jsonx_only_keys(args, keys, detail)) != 0)
		return r;
	arr = json_array();
	LIST_FOREACH(b, &browser_list, entry) {
		json_array_append_new(arr, json_pack("{s:s,s:s,s:i,s:i,s:s,"
		    "s:b}", "bot", b->bot, "state", names[b->state],
		    "pid", (int)b->pid, "port", b->port, "display",
		    b->display, "proxied", b->relay != NULL));
	}
	return control_reply(c, id, json_pack("{s:o}", "browsers", arr));
}

/*
 * guestd is exiting: SIGTERM lets each browser write its session and
 * cookies; we wait a bounded time (the loop is gone, so plainly), then
 * SIGKILL what is left.
 */
void
browser_shutdown(void)
{
	struct timespec	 ts = { 0, 20 * 1000 * 1000 };
	struct browser	*b;
	unsigned	 left, i;
	int		 status;

	LIST_FOREACH(b, &browser_list, entry) {
		if (b->pid > 0) {
			loop_child_forget(b->pid);
			(void)kill(-b->pid, SIGTERM);
		}
	}
	for (i = 0; i < BROWSER_TERM_MS / 20; i++) {
		left = 0;
		LIST_FOREACH(b, &browser_list, entry) {
			if (b->pid <= 0)
				continue;
			if (waitpid(b->pid, &status, WNOHANG) == b->pid) {
				(void)kill(-b->pid, SIGKILL);
				b->pid = 0;
			} else
				left++;
		}
		if (left == 0)
			break;
		nanosleep(&ts, NULL);
	}
	LIST_FOREACH(b, &browser_list, entry) {
		if (b->pid > 0) {
			(void)kill(-b->pid, SIGKILL);
			(void)waitpid(b->pid, &status, 0);
			b->pid = 0;
		}
		proxy_relay_stop(b->relay);
		b->relay = NULL;
		browser_proxy_clear(b);
	}
}

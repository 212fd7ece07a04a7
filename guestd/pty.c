/* SPDX-License-Identifier: MIT */
/*
 * The terminal: a PTY server per control capability, shells on the gateway.
 *
 * Per connection (struct pty_client):
 *
 *   browser --ws--> framer --> stdin bytes / resize --> PTY master
 *   browser <--ws-- [out: one chunk] <------------------ PTY master
 *
 * Downstream, at most one chunk waits for the browser: reading the master
 * stops until lws says the websocket is writeable again, so a shell that
 * floods a client that stopped reading fills the PTY and then blocks in
 * write(), and guestd holds one chunk.  Upstream, frames are parsed as
 * they stream in (a 1 MiB stdin frame is never held whole); what the
 * master cannot take now stays in a small pending buffer and the
 * websocket stops being read until the master is writeable.
 *
 * The shell: guestd already runs as the workspace user, so the shell
 * does too.  posix_spawn(3) with POSIX_SPAWN_SETSID makes it a session
 * leader, and the first terminal a session leader opens without O_NOCTTY
 * becomes its controlling terminal (Linux), so opening the slave as a
 * file action gives the shell job control without a fork() of guestd.
 * Its environment is the bot's shell tool's (exec.c) with
 * TERM=xterm-256color; its cwd is bots/<bot>/.  When the uid has no
 * passwd entry, that environment preloads nss_wrapper with guestd's
 * passwd/group files (nss.c) that name it "rakazo".
 *
 * A closed websocket hangs its shell up (the master closes; SIGHUP to the
 * session); the session is killed after a grace if it lingers.  Revoking
 * the capability does the same for every shell of its server, after
 * closing their websockets with a reason, and removes the session
 * directory.  Clients outlive their websocket until their shell is reaped.
 */
#include "autoconf.h"

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <libwebsockets.h>

#include "buf.h"
#include "capability.h"
#include "err.h"
#include "exec.h"
#include "gateway.h"
#include "guestd.h"
#include "log.h"
#include "loop.h"
#include "nss.h"
#include "path.h"
#include "pty.h"
#include "queue-compat.h"
#include "token.h"
#include "xmalloc.h"

#define PTY_CHUNK	(64 * 1024)	/* one output message at most */
#define PTY_PEND_MAX	(256 * 1024)	/* input not yet taken by the PTY */
#define PTY_TAIL_MAX	(256 * 1024)	/* output left after the shell quit */
#define PTY_GRACE_MS	1000		/* SIGHUP -> SIGKILL */
#define PTY_RETRY_MS	10		/* input blocked: try again, */
#define PTY_RETRY_MAX_MS 320		/* backing off to this */
#define PTY_CLOSE_S	3		/* a close frame the peer won't read */
#define PTY_URI_MAX	512
#define PTY_COLS_MAX	4096
#define PTY_ROWS_MAX	4096

struct pty_server;

struct pty_client {
	struct pty_server	*srv;	/* NULL once the server stopped */
	struct lws		*wsi;	/* NULL once the websocket closed */
	char			 id[17];
	struct loop_fd		*mlf;	/* the master; NULL once closed */
	pid_t			 pid;	/* the shell; 0 once reaped */
	pid_t			 sid;	/* its session (its pid at start) */
	int			 hung_up;

	uint8_t			*out;	/* LWS_PRE + PTY_CHUNK */
	size_t			 outlen;
	uint8_t			*tail;	/* read after the shell hung up */
	size_t			 taillen, tailoff;
	int			 eof;	/* the master has no more to give */

	struct pty_framer	 fr;
	uint8_t			*pend;	/* websocket bytes not yet handled */
	size_t			 pendlen, pendcap;
	int			 rx_paused;
	struct loop_timer	*retry_t;	/* the master's POLLOUT can be lost */
	unsigned		 retry_ms;	/* backs off while blocked */

	int			 close_code;	/* 0: none pending */
	const char		*close_why;
	LIST_ENTRY(pty_client)	 entry;
};

struct pty_server {
	const struct capability	*cap;
	char			 bot[65];
	LIST_ENTRY(pty_server)	 entry;
};

static LIST_HEAD(, pty_server)	 pty_servers =
    LIST_HEAD_INITIALIZER(pty_servers);
static LIST_HEAD(, pty_client)	 pty_clients =	/* all, live or reaping */
    LIST_HEAD_INITIALIZER(pty_clients);
static unsigned			 pty_nconns;

static void	pty_client_maybe_free(struct pty_client *);
static void	pty_flush_in(struct pty_client *);
static void	pty_retry_cb(void *);

unsigned
pty_count(void)
{
	return pty_nconns;
}

unsigned
pty_shells(void)
{
	struct pty_client	*c;
	unsigned		 n = 0;

	LIST_FOREACH(c, &pty_clients, entry) {
		if (c->pid > 0)
			n++;
	}
	return n;
}

/* ---- the framer (G-35) --------------------------------------------------- */

void
pty_frame_init(struct pty_framer *f)
{
	memset(f, 0, sizeof *f);
}

int
pty_frame_next(struct pty_framer *f, const uint8_t *p, size_t n,
    struct pty_event *ev, const char **why)
{
	struct cursor	c;
	size_t		take;
	uint16_t	cols, rows;

	memset(ev, 0, sizeof *ev);
	*why = NULL;
	if (n == 0)
		return 0;
	if (!f->in_payload) {
		take = PTY_FRAME_HDR - f->hdrlen;
		if (take > n)
			take = n;
		memcpy(f->hdr + f->hdrlen, p, take);
		f->hdrlen += take;
		if (f->hdrlen < PTY_FRAME_HDR)
			return (int)take;
		/* Whole, so neither read can come short. */
		cursor_init(&c, f->hdr, sizeof f->hdr);
		(void)cursor_get_u8(&c, &f->kind);
		(void)cursor_get_u32be(&c, &f->left);
		f->hdrlen = 0;
		if (f->kind != PTY_KIND_STDIN && f->kind != PTY_KIND_RESIZE) {
			*why = "unknown frame kind";
			return ERR_PROTOCOL;
		}
		if (f->left > PTY_FRAME_MAX) {
			*why = "frame larger than 1 MiB";
			return ERR_TOO_LARGE;
		}
		if (f->kind == PTY_KIND_RESIZE && f->left != 4) {
			*why = "resize frame must carry 4 bytes";
			return ERR_PROTOCOL;
		}
		f->rslen = 0;
		f->in_payload = f->left > 0;
		return (int)take;
	}
	take = f->left < n ? f->left : n;
	if (take > INT_MAX / 2)
		take = INT_MAX / 2;
	f->left -= (uint32_t)take;
	if (f->left == 0)
		f->in_payload = 0;
	if (f->kind == PTY_KIND_STDIN) {
		ev->type = PTY_EV_STDIN;
		ev->data = p;
		ev->n = take;
		return (int)take;
	}
	memcpy(f->rs + f->rslen, p, take);
	f->rslen += take;
	if (f->rslen == 4) {
		cursor_init(&c, f->rs, f->rslen);
		(void)cursor_get_u16be(&c, &cols);
		(void)cursor_get_u16be(&c, &rows);
		ev->type = PTY_EV_RESIZE;
		ev->cols = cols;
		ev->rows = rows;
	}
	return (int)take;
}

void
pty_frame_unread(struct pty_framer *f, size_t n)
{
	/* Only stdin bytes of the current frame come back: still kind 0. */
	f->left += (uint32_t)n;
	f->in_payload = f->left > 0;
}

/* ---- the environment ------------------------------------------------- */

/* envp with name=value set (replacing); envp may be reallocated. */
static char **
pty_env_set(char **envp, const char *name, const char *value)
{
	size_t	 i, nl = strlen(name);
	char	*s;

	if (asprintf(&s, "%s=%s", name, value) == -1)
		fatal("asprintf: out of memory");
	for (i = 0; envp[i] != NULL; i++) {
		if (strncmp(envp[i], name, nl) == 0 && envp[i][nl] == '=') {
			free(envp[i]);
			envp[i] = s;
			return envp;
		}
	}
	envp = xrealloc(envp, (i + 2) * sizeof *envp);
	envp[i] = s;
	envp[i + 1] = NULL;
	return envp;
}

/* The shell tool's environment, nss_wrapper's (nss.c) included. */
static char **
pty_env(const struct pty_server *s)
{
	char	**envp;

	envp = exec_env_new(s->bot);
	envp = pty_env_set(envp, "TERM", "xterm-256color");
	envp = pty_env_set(envp, "COLORTERM", "truecolor");
	return envp;
}

/* ---- the shell ----------------------------------------------------------- */

/* Signal every process of session sid (the shell's jobs have groups of
 * their own, so the shell's group alone is not enough); how many. */
static int
pty_kill_session(pid_t sid, int sig)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[64], buf[512], *p;
	long		 pid, s;
	ssize_t		 n;
	int		 fd, hit = 0;

	if (sid <= 1)
		return 0;
	(void)kill(-sid, sig);
	if ((d = opendir("/proc")) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if ((pid = strtol(de->d_name, &p, 10)) <= 0 || *p != '\0')
			continue;
		snprintf(path, sizeof path, "/proc/%ld/stat", pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* pid (comm) state ppid pgrp session: comm may hold ')'. */
		if ((p = strrchr(buf, ')')) == NULL ||
		    sscanf(p + 1, " %*c %*d %*d %ld", &s) != 1)
			continue;
		if (s == sid && kill((pid_t)pid, sig) == 0)
			hit++;
	}
	closedir(d);
	return hit;
}

static int
pty_open_cwd(const char *bot)
{
	char	dir[PATH_MAX];
	int	rootfd, fd, r;

	if ((rootfd = path_root_open(guestd.workspace)) == -1)
		return err_from_errno(errno);
	if ((r = path_ensure_bot(rootfd, bot)) != 0) {
		close(rootfd);
		return r;
	}
	snprintf(dir, sizeof dir, "bots/%s", bot);
	fd = path_open(rootfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	close(rootfd);
	return fd;
}

/*
 * A new PTY (80x24) with a login bash on its slave; the master in
 * *masterp.  0 or ERR_*.
 */
static int
pty_spawn(const struct pty_server *s, int *masterp, pid_t *pidp)
{
	posix_spawn_file_actions_t	 fa;
	posix_spawnattr_t		 attr;
	struct winsize			 ws = { 24, 80, 0, 0 };
	char				*argv[3], **envp = NULL;
	char				 slave[64];
	int				 m = -1, sl = -1, cwd = -1, e, r;
	pid_t				 pid;

	*masterp = -1;
	*pidp = 0;
	if (getuid() == 0 || geteuid() == 0)
		return ERR_PERMISSION;	/* never a root shell */
	if ((m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1 ||
	    grantpt(m) == -1 || unlockpt(m) == -1 ||
	    ptsname_r(m, slave, sizeof slave) != 0) {
		r = err_from_errno(errno);
		goto out;
	}
	(void)ioctl(m, TIOCSWINSZ, &ws);
	/* Held until the child has its own, so the master never sees a
	 * hang-up before the shell starts. */
	if ((sl = open(slave, O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1) {
		r = err_from_errno(errno);
		goto out;
	}
	if ((cwd = pty_open_cwd(s->bot)) < 0) {
		r = cwd;
		goto out;
	}
	envp = pty_env(s);
	argv[0] = (char *)"bash";
	argv[1] = (char *)"-l";
	argv[2] = NULL;
	exec_spawnattr_init(&attr);
	posix_spawn_file_actions_init(&fa);
	/* After setsid(): without O_NOCTTY this becomes the controlling
	 * terminal. */
	posix_spawn_file_actions_addopen(&fa, 0, slave, O_RDWR, 0);
	posix_spawn_file_actions_adddup2(&fa, 0, 1);
	posix_spawn_file_actions_adddup2(&fa, 0, 2);
	posix_spawn_file_actions_addfchdir_np(&fa, cwd);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	e = posix_spawn(&pid, guestd.shell, &fa, &attr, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (e != 0) {
		log_warn("term.spawn_failed", "error=\"%s\"", strerror(e));
		r = ERR_EXEC_SPAWN;
		goto out;
	}
	*pidp = pid;
	*masterp = m;
	m = -1;
	r = 0;
out:
	exec_env_free(envp);
	if (cwd >= 0)
		close(cwd);
	if (sl != -1)
		close(sl);
	if (m != -1)
		close(m);
	return r;
}

/* ---- closing ------------------------------------------------------------- */

/* Close the websocket with code and reason once lws lets us write. */
static void
pty_close(struct pty_client *c, int code, const char *why)
{
	if (c->wsi == NULL || c->close_code != 0)
		return;
	c->close_code = code;
	c->close_why = why;
	lws_callback_on_writable(c->wsi);
	/* A peer that does not read gets no close frame: drop it then. */
	lws_set_timeout(c->wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, PTY_CLOSE_S);
}

/* The grace timer owns its session id: the client may be gone by then. */
static void
pty_kill_cb(void *arg)
{
	pid_t	*sid = arg;
	int	 n;

	if ((n = pty_kill_session(*sid, SIGKILL)) > 0)
		log_info("term.shell_killed", "session=%d processes=%d",
		    (int)*sid, n);
	free(sid);
}

/*
 * Hang the shell up now (the master closes, SIGHUP to the session, also
 * to jobs in groups of their own) and SIGKILL whatever of the session is
 * left after the grace.
 */
static void
pty_hangup(struct pty_client *c)
{
	pid_t	*sid;

	loop_fd_close(c->mlf);
	c->mlf = NULL;
	if (c->sid <= 0 || c->hung_up)
		return;
	c->hung_up = 1;
	(void)pty_kill_session(c->sid, SIGHUP);
	(void)pty_kill_session(c->sid, SIGCONT);
	sid = xmalloc(sizeof *sid);
	*sid = c->sid;
	(void)loop_timer_add(PTY_GRACE_MS, pty_kill_cb, sid);
}

static void
pty_client_maybe_free(struct pty_client *c)
{
	if (c->wsi != NULL || c->pid > 0)
		return;
	LIST_REMOVE(c, entry);
	loop_timer_cancel(c->retry_t);
	loop_fd_close(c->mlf);
	free(c->out);
	free(c->tail);
	free(c->pend);
	free(c);
}

static void
pty_child_cb(pid_t pid, int status, void *arg)
{
	struct pty_client	*c = arg;

	log_info("term.shell_exited", "id=%s pid=%d status=%d", c->id,
	    (int)pid, status);
	/* Whatever it left behind in its session goes too. */
	(void)pty_kill_session(pid, SIGHUP);
	c->pid = 0;
	pty_client_maybe_free(c);
}

/* ---- PTY -> browser ------------------------------------------------------ */

/* Fill the chunk from the master; 1 when the master is done. */
static int
pty_read_chunk(struct pty_client *c, int fd)
{
	ssize_t	n;

	while (c->outlen < PTY_CHUNK) {
		n = read(fd, c->out + LWS_PRE + c->outlen,
		    PTY_CHUNK - c->outlen);
		if (n > 0) {
			c->outlen += (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		return 1;	/* EIO: no slave left */
	}
	return 0;
}

/* After the hang-up: keep what is left (bounded) to send before closing. */
static void
pty_read_tail(struct pty_client *c, int fd)
{
	ssize_t	n;

	c->tail = xmalloc(PTY_TAIL_MAX);
	while (c->taillen < PTY_TAIL_MAX) {
		n = read(fd, c->tail + c->taillen, PTY_TAIL_MAX - c->taillen);
		if (n > 0)
			c->taillen += (size_t)n;
		else if (n == -1 && errno == EINTR)
			continue;
		else
			break;
	}
}

static void
pty_master_cb(struct loop_fd *lf, int events, void *arg)
{
	struct pty_client	*c = arg;

	if (events & LOOP_HUP) {
		c->mlf = NULL;	/* freed by the loop after this callback */
		if (c->outlen == 0)
			(void)pty_read_chunk(c, loop_fd_get(lf));
		pty_read_tail(c, loop_fd_get(lf));
		c->eof = 1;
		if (c->wsi != NULL)
			lws_callback_on_writable(c->wsi);
		return;
	}
	if (events & LOOP_WRITE)
		pty_flush_in(c);
	if (!(events & LOOP_READ) || c->outlen > 0 || c->mlf == NULL)
		return;
	if (pty_read_chunk(c, loop_fd_get(lf))) {
		loop_fd_close(c->mlf);
		c->mlf = NULL;
		c->eof = 1;
	} else
		loop_fd_want_read(c->mlf, 0);	/* one chunk in flight */
	if (c->wsi != NULL && (c->outlen > 0 || c->eof))
		lws_callback_on_writable(c->wsi);
}

/* ---- browser -> PTY ------------------------------------------------------ */

/*
 * A PTY master does not always report POLLOUT when the slave's reader
 * frees room (the wake-up only comes after throttling), so blocked input
 * is also retried on a short timer while it stays blocked.
 */
static void
pty_retry_cb(void *arg)
{
	struct pty_client	*c = arg;

	c->retry_t = NULL;
	pty_flush_in(c);
}

static void
pty_rx_pause(struct pty_client *c, int on)
{
	if (c->rx_paused == on || c->wsi == NULL)
		return;
	c->rx_paused = on;
	lws_rx_flow_control(c->wsi, on ? 0 : 1);
}

static void
pty_resize(struct pty_client *c, unsigned cols, unsigned rows)
{
	struct winsize	ws;

	if (cols == 0 || rows == 0 || cols > PTY_COLS_MAX ||
	    rows > PTY_ROWS_MAX) {
		pty_close(c, LWS_CLOSE_STATUS_POLICY_VIOLATION,
		    "resize out of range");
		return;
	}
	memset(&ws, 0, sizeof ws);
	ws.ws_col = (unsigned short)cols;
	ws.ws_row = (unsigned short)rows;
	/* The kernel sends SIGWINCH to the foreground job. */
	(void)ioctl(loop_fd_get(c->mlf), TIOCSWINSZ, &ws);
}

/*
 * Hand what the browser sent to the PTY, frame by frame.  What the master
 * cannot take now stays pending and the websocket is not read until the
 * master is writeable again.
 */
static void
pty_flush_in(struct pty_client *c)
{
	struct pty_event	 ev;
	const char		*why;
	size_t			 used = 0, off;
	int			 r, held = 0;

	while (used < c->pendlen && c->mlf != NULL && c->close_code == 0) {
		r = pty_frame_next(&c->fr, c->pend + used, c->pendlen - used,
		    &ev, &why);
		if (r < 0) {
			pty_close(c, r == ERR_TOO_LARGE ?
			    LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE :
			    LWS_CLOSE_STATUS_POLICY_VIOLATION, why);
			break;
		}
		used += (size_t)r;
		if (ev.type == PTY_EV_RESIZE)
			pty_resize(c, ev.cols, ev.rows);
		if (ev.type != PTY_EV_STDIN)
			continue;
		off = 0;
		if (loop_fd_write_pending(c->mlf, ev.data, ev.n, &off) < 0)
			off = ev.n;	/* hung up: HUP follows */
		if (off < ev.n) {
			/* Writability is asked for; the timer is the backstop. */
			pty_frame_unread(&c->fr, ev.n - off);
			used -= ev.n - off;
			if (c->retry_t == NULL) {
				c->retry_ms = c->retry_ms == 0 ? PTY_RETRY_MS :
				    c->retry_ms * 2 > PTY_RETRY_MAX_MS ?
				    PTY_RETRY_MAX_MS : c->retry_ms * 2;
				c->retry_t = loop_timer_add(c->retry_ms,
				    pty_retry_cb, c);
			}
			held = 1;
			break;
		}
	}
	if (c->close_code != 0 || c->mlf == NULL)
		used = c->pendlen;	/* nothing more goes in */
	memmove(c->pend, c->pend + used, c->pendlen - used);
	c->pendlen -= used;
	if (!held)
		c->retry_ms = 0;
	pty_rx_pause(c, held);
}

static void
pty_on_receive(struct pty_client *c, const void *in, size_t len)
{
	if (c->close_code != 0 || c->mlf == NULL)
		return;
	if (!lws_frame_is_binary(c->wsi)) {
		pty_close(c, LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE,
		    "text message: frames are binary");
		return;
	}
	/* lws stops delivering soon after we pause, never far beyond. */
	if (len > PTY_PEND_MAX - c->pendlen) {
		pty_close(c, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE,
		    "input backlog too large");
		return;
	}
	if (c->pendlen + len > c->pendcap) {
		c->pendcap = c->pendlen + len < 4096 ? 4096 :
		    c->pendlen + len;
		c->pend = xrealloc(c->pend, c->pendcap);
	}
	memcpy(c->pend + c->pendlen, in, len);
	c->pendlen += len;
	pty_flush_in(c);
}

/* ---- the websocket ------------------------------------------------------- */

static int
pty_writeable(struct pty_client *c)
{
	size_t	n;

	if (c->close_code != 0) {
		lws_close_reason(c->wsi, (enum lws_close_status)c->close_code,
		    (unsigned char *)(uintptr_t)c->close_why,
		    strlen(c->close_why));
		return -1;
	}
	if (c->outlen == 0 && c->tailoff < c->taillen) {
		n = c->taillen - c->tailoff;
		if (n > PTY_CHUNK)
			n = PTY_CHUNK;
		memcpy(c->out + LWS_PRE, c->tail + c->tailoff, n);
		c->tailoff += n;
		c->outlen = n;
	}
	if (c->outlen > 0) {
		if (lws_write(c->wsi, c->out + LWS_PRE, c->outlen,
		    LWS_WRITE_BINARY) < (int)c->outlen)
			return -1;
		c->outlen = 0;
	}
	if (c->tailoff < c->taillen)
		lws_callback_on_writable(c->wsi);
	else if (c->eof)
		pty_close(c, LWS_CLOSE_STATUS_NORMAL, "shell exited");
	else if (c->mlf != NULL)
		loop_fd_want_read(c->mlf, 1);
	return 0;
}

static struct pty_server *
pty_server_get(const struct capability *cap)
{
	struct pty_server	*s;

	LIST_FOREACH(s, &pty_servers, entry) {
		if (s->cap == cap)
			return s;
	}
	s = xcalloc(1, sizeof *s);
	s->cap = cap;
	snprintf(s->bot, sizeof s->bot, "%s", capability_bot(cap));
	LIST_INSERT_HEAD(&pty_servers, s, entry);
	log_info("term.server_started", "capability_id=%s nss_wrapper=%s",
	    capability_id(cap), nss_active() ? "yes" : "no");
	return s;
}

/*
 * The token of a /term/<token> URI into tok: 1 when wsi is a terminal's,
 * with *ok set when the token is well-formed.
 */
static int
pty_target(struct lws *wsi, char *tok, size_t toklen, int *ok)
{
	char	uri[PTY_URI_MAX];
	int	n;

	*ok = 0;
	tok[0] = '\0';
	n = lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI);
	if (n <= 0 || n >= PTY_URI_MAX ||
	    lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI) <= 0)
		return 0;
	if (strncmp(uri, "/term/", 6) != 0) {
		explicit_bzero(uri, sizeof uri);
		return 0;
	}
	if (strlen(uri + 6) < toklen) {
		snprintf(tok, toklen, "%s", uri + 6);
		*ok = capability_token_wellformed(tok, strlen(tok));
	}
	explicit_bzero(uri, sizeof uri);
	return 1;
}

/* The live control capability named by wsi's URI, or NULL (why set). */
static const struct capability *
pty_authorise(struct lws *wsi, const char **why)
{
	const struct capability	*cap;
	char			 tok[TOKEN_STRLEN + 2];
	int			 ok;

	(void)pty_target(wsi, tok, sizeof tok, &ok);
	cap = ok ? capability_find(tok, strlen(tok)) : NULL;
	explicit_bzero(tok, sizeof tok);
	*why = !ok ? "invalid_path" : cap == NULL ? "authority_rejected" :
	    !capability_control(cap) ? "view_capability" : NULL;
	return *why == NULL ? cap : NULL;
}

static int
pty_filter(struct lws *wsi)
{
	const char	*why;

	if (pty_authorise(wsi, &why) != NULL)
		return 0;
	log_info("term.rejected", "reason=%s", why);
	/* A status, not an empty reply, so the page can say why. */
	if (strcmp(why, "invalid_path") == 0)
		gateway_refuse(wsi, 404, "no terminal at this path");
	else if (strcmp(why, "view_capability") == 0)
		gateway_refuse(wsi, 403, "a view token cannot open a terminal");
	else
		gateway_refuse(wsi, 403,
		    "unknown, expired or revoked terminal token");
	return -1;
}

static int
pty_established(struct lws *wsi)
{
	const struct capability	*cap;
	struct pty_server	*s;
	struct pty_client	*c;
	const char		*why;
	int			 m, r;
	pid_t			 pid;

	if ((cap = pty_authorise(wsi, &why)) == NULL) {
		/* Revoked between the filter and now. */
		log_info("term.rejected", "reason=%s", why);
		return -1;
	}
	c = xcalloc(1, sizeof *c);
	c->wsi = wsi;
	(void)token_hex(c->id, 8);
	pty_frame_init(&c->fr);
	c->out = xmalloc(LWS_PRE + PTY_CHUNK);
	LIST_INSERT_HEAD(&pty_clients, c, entry);
	pty_nconns++;
	lws_set_opaque_user_data(wsi, c);
	if ((s = pty_server_get(cap)) == NULL) {
		pty_close(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION,
		    "cannot start the terminal");
		return 0;
	}
	c->srv = s;
	if ((r = pty_spawn(s, &m, &pid)) != 0) {
		log_warn("term.shell_failed", "id=%s error=%s", c->id,
		    err_name(r));
		pty_close(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION,
		    "cannot start a shell");
		return 0;
	}
	c->pid = c->sid = pid;
	(void)loop_child_watch(pid, pty_child_cb, c);
	if ((c->mlf = loop_fd_add(m, pty_master_cb, c)) == NULL) {
		pty_hangup(c);
		pty_close(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION,
		    "cannot start a shell");
		return 0;
	}
	log_info("term.connected", "id=%s capability_id=%s pid=%d", c->id,
	    capability_id(cap), (int)pid);
	return 0;
}

static void
pty_closed(struct lws *wsi, struct pty_client *c)
{
	lws_set_opaque_user_data(wsi, NULL);
	c->wsi = NULL;
	pty_nconns--;
	log_info("term.closed", "id=%s reason=\"%s\"", c->id,
	    c->close_why != NULL ? c->close_why : "client");
	pty_hangup(c);
	pty_client_maybe_free(c);
}

int
pty_gateway_cb(struct lws *wsi, int reason, void *in, size_t len)
{
	struct pty_client	*c;
	char			 tok[TOKEN_STRLEN + 2];
	int			 ok;

	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		if (!pty_target(wsi, tok, sizeof tok, &ok))
			return PTY_PASS;
		explicit_bzero(tok, sizeof tok);
		return pty_filter(wsi);
	case LWS_CALLBACK_ESTABLISHED:
		if (!pty_target(wsi, tok, sizeof tok, &ok))
			return PTY_PASS;
		explicit_bzero(tok, sizeof tok);
		return pty_established(wsi);
	case LWS_CALLBACK_RECEIVE:
	case LWS_CALLBACK_SERVER_WRITEABLE:
	case LWS_CALLBACK_CLOSED:
		break;
	default:
		return PTY_PASS;
	}
	if ((c = lws_get_opaque_user_data(wsi)) == NULL)
		return PTY_PASS;
	switch (reason) {
	case LWS_CALLBACK_RECEIVE:
		pty_on_receive(c, in, len);
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return pty_writeable(c);
	default:
		pty_closed(wsi, c);
		return 0;
	}
}

void
pty_drop(const struct capability *cap)
{
	struct pty_server	*s;
	struct pty_client	*c, *next;

	LIST_FOREACH(s, &pty_servers, entry) {
		if (s->cap == cap)
			break;
	}
	if (s == NULL)
		return;
	LIST_REMOVE(s, entry);
	LIST_FOREACH_SAFE(c, &pty_clients, entry, next) {
		if (c->srv != s)
			continue;
		c->srv = NULL;
		pty_close(c, LWS_CLOSE_STATUS_GOINGAWAY,
		    "control capability ended");
		pty_hangup(c);
	}
	log_info("term.server_stopped", "capability_id=%s",
	    capability_id(cap));
	free(s);
}

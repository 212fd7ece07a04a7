/* SPDX-License-Identifier: MIT */
/*
 * Commands (doc/DESIGN.md G-26, X-1, X-4, X-5).  exec spawns "bash -c COMMAND"
 * as the workspace user (guestd already runs as that user) in a session of its
 * own, so its process group can be signalled as a whole.  The child gets a
 * clean environment and its cwd through fchdir() on a directory opened
 * beneath the workspace root, so a symlink swapped in later cannot move it.
 *
 * Output pipes live on the loop.  Every byte is read, even past the output
 * limit (those are counted and dropped), so a command never blocks because
 * of our cap; only a stream whose controller does not read pauses reading,
 * which is the backpressure we want.  A command ends when its child is
 * reaped: the pipes are drained (not waited on: a background job may hold
 * them open for ever) and the reply goes out.  Timeouts and cancels send
 * SIGTERM to the group, SIGKILL after a grace, and confirm that the group
 * is empty before saying so.  Nothing here blocks the loop except
 * posix_spawn() itself, which returns once execve() has succeeded or failed.
 */
#include "autoconf.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "control.h"
#include "display.h"
#include "err.h"
#include "exec.h"
#include "guestd.h"
#include "json.h"
#include "log.h"
#include "loop.h"
#include "nss.h"
#include "path.h"
#include "proto.h"
#include "queue-compat.h"
#include "redact.h"
#include "xmalloc.h"

#define EXEC_MAX_COMMAND	(256 * 1024)
#define EXEC_MAX_STDIN		(1024 * 1024)
#define EXEC_MAX_ENV		256
#define EXEC_MAX_ENV_NAME	256
#define EXEC_MAX_ENV_VALUE	(64 * 1024)
#define EXEC_DEF_TIMEOUT_MS	60000
#define EXEC_DEF_OUTPUT		(1024 * 1024)
/* Unstreamed output travels inside the JSON reply: keep the reply, even
 * fully escaped, under PROTO_MAX_REPLY. */
#define EXEC_MAX_INLINE		(1024 * 1024)
#define EXEC_READ_CHUNK		(64 * 1024)
/* After exit, read at most this much more per stream before closing. */
#define EXEC_DRAIN_MAX		(4 * 1024 * 1024)
#define EXEC_GRACE_MS		2000	/* SIGTERM -> SIGKILL */
#define EXEC_CONFIRM_MS		1000	/* SIGKILL -> "may be running" */
#define EXEC_POLL_MS		10
#define EXEC_LOG_CMD		200
#define EXEC_DEFAULT_PATH	"/usr/local/bin:/usr/bin:/bin"

enum exec_state {
	EXEC_RUNNING,		/* child alive */
	EXEC_DRAINING,		/* child reaped, pipes being emptied */
	EXEC_CONFIRMING,	/* killed: waiting for the group to vanish */
	EXEC_DONE		/* replied; waits only for a cancel reply */
};

struct exec;

struct exec_out {
	struct exec	*e;
	uint8_t		 channel;
	struct loop_fd	*lf;
	uint64_t	 total;		/* bytes read */
	uint64_t	 drained;	/* bytes read after the exit */
	struct buf	 keep;		/* !stream: up to limit bytes */
};

struct exec {
	struct control_stream	 s;	/* first: abort/resume get this */
	struct control_conn	*conn;
	uint32_t		 id;
	pid_t			 pid;	/* also the process group id */
	enum exec_state		 state;
	int			 stream;
	uint64_t		 limit;
	struct exec_out		 out[2];

	struct loop_fd		*in_lf;
	char			*in_data;
	size_t			 in_len;
	size_t			 in_off;

	struct loop_timer	*timeout_t;
	struct loop_timer	*kill_t;	/* SIGKILL after the grace */
	struct loop_timer	*poll_t;	/* group-gone polling */
	uint64_t		 started_ms;
	uint64_t		 ended_ms;
	uint64_t		 killed_ms;	/* when SIGKILL went out; 0 none */
	int			 status;
	int			 reaped;
	int			 timed_out;
	int			 cancelled;
	int			 truncated;

	uint32_t		 cancel_id;	/* pending exec.cancel; 0 none */

	LIST_ENTRY(exec)	 entry;		/* linked from exec_new on */
};

/* Arguments of one exec request, borrowed from the request JSON. */
struct exec_args {
	const char	*command;
	const char	*bot;
	const char	*cwd;
	json_t		*env;
	int64_t		 timeout_ms;
	int64_t		 output_limit;
	int		 stream;
	const char	*in;
	size_t		 inlen;
	int		 has_in;
};

static LIST_HEAD(, exec) exec_list = LIST_HEAD_INITIALIZER(exec_list);
static uint8_t		 exec_rbuf[EXEC_READ_CHUNK];

static void	exec_read(struct exec_out *, int);
static void	exec_advance(struct exec *);
static void	exec_stream_resume(struct control_stream *);
static int	exec_stream_data(struct control_stream *, const uint8_t *,
		    size_t, int);
static void	exec_stream_abort(struct control_stream *);

static const struct control_stream_ops exec_stream_ops = {
	exec_stream_resume,
	exec_stream_data,
	exec_stream_abort
};

unsigned
exec_running(void)
{
	struct exec	*e;
	unsigned	 n = 0;

	LIST_FOREACH(e, &exec_list, entry)
		if (e->state != EXEC_DONE)
			n++;
	return n;
}

/* Release fds and timers; the struct itself stays. */
static void
exec_release(struct exec *e)
{
	int	 i;

	for (i = 0; i < 2; i++) {
		loop_fd_close(e->out[i].lf);
		e->out[i].lf = NULL;
		buf_free(&e->out[i].keep);
	}
	loop_fd_close(e->in_lf);
	e->in_lf = NULL;
	free(e->in_data);
	e->in_data = NULL;
	loop_timer_cancel(e->timeout_t);
	loop_timer_cancel(e->kill_t);
	loop_timer_cancel(e->poll_t);
	e->timeout_t = e->kill_t = e->poll_t = NULL;
}

static void
exec_free(struct exec *e)
{
	if (e == NULL)
		return;
	exec_release(e);
	LIST_REMOVE(e, entry);
	free(e);
}

/*
 * 1 when pid's /proc entry says it is a live member of group pgid.  A
 * zombie is dead: whether it is reaped soon depends on whoever inherited
 * it (init may poll), which must not decide our answer.
 */
static int
exec_proc_live_member(const char *pid, pid_t pgid)
{
	char		 path[64], st[512], *p, state;
	int		 fd, pgrp, ppid;
	ssize_t		 n;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;	/* gone meanwhile */
	n = read(fd, st, sizeof(st) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	st[n] = '\0';
	/* "pid (comm) S ppid pgrp ..."; comm may hold anything but the
	 * last ')' ends it. */
	if ((p = strrchr(st, ')')) == NULL ||
	    sscanf(p + 1, " %c %d %d", &state, &ppid, &pgrp) != 3)
		return 1;	/* unreadable: assume the worst */
	return pgrp == pgid && state != 'Z' && state != 'X';
}

/* 1 when no live process of the group is left; 0 when some or unknown. */
static int
exec_group_gone(const struct exec *e)
{
	struct dirent	*de;
	DIR		*d;
	int		 live = 0;

	if (kill(-e->pid, 0) == -1 && errno == ESRCH)
		return 1;
	/* Only zombies may be left: look. */
	if ((d = opendir("/proc")) == NULL)
		return 0;
	while (!live && (de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		live = exec_proc_live_member(de->d_name, e->pid);
	}
	closedir(d);
	return !live;
}

static void
exec_signal(struct exec *e, int sig)
{
	if (kill(-e->pid, sig) == -1 && errno != ESRCH)
		log_warn("exec.kill", "id=%u pid=%d signal=%d errno=%d",
		    e->id, (int)e->pid, sig, errno);
}

/* ---- UTF-8 ------------------------------------------------------------ */

/*
 * A JSON string of p with each invalid byte, and each NUL, replaced by
 * U+FFFD.  NUL is valid UTF-8 but the protocol refuses it inside strings
 * (every reader takes them as C strings): a reply holding \u0000 was
 * refused whole by the client, losing the command's result.  Exact bytes
 * are what "stream" is for.
 */
static json_t *
exec_utf8_string(const uint8_t *p, size_t n)
{
	static const uint8_t	 repl[] = { 0xef, 0xbf, 0xbd };
	struct buf		 b;
	json_t			*j = NULL;
	size_t			 i = 0, k;

	buf_init(&b, SIZE_MAX);
	while (i < n) {
		k = p[i] == '\0' ? 0 : jsonx_utf8_len(p + i, n - i, NULL);
		if (k == 0) {
			if (buf_append(&b, repl, sizeof(repl)) != 0)
				goto out;
			i++;
			continue;
		}
		if (buf_append(&b, p + i, k) != 0)
			goto out;
		i += k;
	}
	j = json_stringn(b.len ? (const char *)b.data : "", b.len);
out:
	buf_free(&b);
	return j;
}

/* ---- finishing -------------------------------------------------------- */

static void
exec_cancel_reply(struct exec *e, int killed)
{
	uint32_t	 cid = e->cancel_id;

	if (cid == 0 || e->conn == NULL)
		return;
	e->cancel_id = 0;
	log_info("exec.cancelled", "id=%u pid=%d state=%s", e->id, (int)e->pid,
	    killed ? "killed" : "may_be_running");
	if (killed)
		control_reply(e->conn, cid, json_pack("{s:I, s:s}", "target",
		    (json_int_t)e->id, "state", "killed"));
	else
		control_reply_error(e->conn, cid, ERR_EXEC_MAY_BE_RUNNING,
		    "The process group still had members after SIGKILL.");
}

static json_t *
exec_result(struct exec *e)
{
	json_t	*res;
	int	 sig, i;
	const char *name;

	res = json_pack("{s:b, s:b, s:b, s:I}", "timed_out", e->timed_out,
	    "cancelled", e->cancelled, "truncated", e->truncated,
	    "duration_ms", (json_int_t)(e->ended_ms - e->started_ms));
	if (res == NULL)
		return NULL;
	if (WIFSIGNALED(e->status)) {
		sig = WTERMSIG(e->status);
		name = sigabbrev_np(sig);
		json_object_set_new(res, "signal", json_integer(sig));
		json_object_set_new(res, "signal_name",
		    json_string(name != NULL ? name : "UNKNOWN"));
	} else
		json_object_set_new(res, "exit_code",
		    json_integer(WEXITSTATUS(e->status)));
	if (e->stream)
		return res;
	for (i = 0; i < 2; i++) {
		json_t	*str = exec_utf8_string(e->out[i].keep.data,
		    e->out[i].keep.len);

		if (str == NULL) {
			json_decref(res);
			return NULL;
		}
		json_object_set_new(res, i == 0 ? "stdout" : "stderr", str);
	}
	return res;
}

static void
exec_reply(struct exec *e)
{
	json_t	*res;

	log_info("exec.end", "id=%u pid=%d exit=%d signal=%d timed_out=%d "
	    "cancelled=%d duration_ms=%llu", e->id, (int)e->pid,
	    WIFEXITED(e->status) ? WEXITSTATUS(e->status) : -1,
	    WIFSIGNALED(e->status) ? WTERMSIG(e->status) : 0, e->timed_out,
	    e->cancelled, (unsigned long long)(e->ended_ms - e->started_ms));
	if (e->stream)
		control_send_data(e->conn, e->id, PROTO_CH_STDOUT, "", 0, 1);
	res = exec_result(e);
	if (res == NULL)
		control_reply_error(e->conn, e->id, ERR_NOMEM, NULL);
	else
		control_reply(e->conn, e->id, res);
	control_stream_detach(&e->s);
}

static void
exec_poll_cb(void *arg)
{
	struct exec	*e = arg;
	int		 i;

	e->poll_t = NULL;
	for (i = 0; i < 2 && e->state == EXEC_DRAINING; i++)
		if (e->out[i].lf != NULL && !e->s.paused)
			exec_read(&e->out[i], LOOP_READ);
	exec_advance(e);
}

/*
 * Move the command along whatever happened: called after every event.  May
 * free e.
 */
static void
exec_advance(struct exec *e)
{
	uint64_t elapsed;
	int	 i, gone;

	if (e->state == EXEC_DRAINING) {
		for (i = 0; i < 2; i++)
			if (e->out[i].lf != NULL)
				return;	/* paused or still draining */
		e->state = (e->timed_out || e->cancelled) ?
		    EXEC_CONFIRMING : EXEC_DONE;
		if (e->state == EXEC_CONFIRMING && e->killed_ms == 0) {
			exec_signal(e, SIGKILL);
			e->killed_ms = loop_now_ms();
		}
		if (e->state == EXEC_DONE)
			exec_reply(e);
	}
	if (e->state == EXEC_CONFIRMING) {
		gone = exec_group_gone(e);
		if (!gone && loop_now_ms() - e->killed_ms < EXEC_CONFIRM_MS) {
			if (e->poll_t == NULL)
				e->poll_t = loop_timer_add(EXEC_POLL_MS,
				    exec_poll_cb, e);
			return;
		}
		exec_cancel_reply(e, gone);
		e->state = EXEC_DONE;
		exec_reply(e);
	}
	if (e->state == EXEC_RUNNING && e->killed_ms != 0 &&
	    e->cancel_id != 0) {
		/* SIGKILL sent but the child is not even reaped yet. */
		elapsed = loop_now_ms() - e->killed_ms;
		if (elapsed >= EXEC_CONFIRM_MS)
			exec_cancel_reply(e, 0);
		else if (e->poll_t == NULL)
			e->poll_t = loop_timer_add(EXEC_CONFIRM_MS - elapsed,
			    exec_poll_cb, e);
		return;
	}
	if (e->state == EXEC_DONE)
		exec_free(e);
}

static void
exec_kill_cb(void *arg)
{
	struct exec	*e = arg;

	e->kill_t = NULL;
	if (e->killed_ms != 0)
		return;
	exec_signal(e, SIGKILL);
	e->killed_ms = loop_now_ms();
	exec_advance(e);
}

/* SIGTERM to the group now, SIGKILL after the grace. */
static void
exec_terminate(struct exec *e)
{
	if (e->kill_t != NULL || e->killed_ms != 0)
		return;
	exec_signal(e, SIGTERM);
	e->kill_t = loop_timer_add(EXEC_GRACE_MS, exec_kill_cb, e);
	if (e->kill_t == NULL)
		exec_kill_cb(e);
}

static void
exec_timeout_cb(void *arg)
{
	struct exec	*e = arg;

	e->timeout_t = NULL;
	if (e->state != EXEC_RUNNING)
		return;
	e->timed_out = 1;
	log_info("exec.timeout", "id=%u pid=%d", e->id, (int)e->pid);
	exec_terminate(e);
}

static void
exec_child_cb(pid_t pid, int status, void *arg)
{
	struct exec	*e = arg;
	int		 i;

	if (e->conn == NULL) {
		/* The connection went away; the group was killed then. */
		exec_free(e);
		return;
	}
	e->reaped = 1;
	e->status = status;
	e->ended_ms = loop_now_ms();
	e->state = EXEC_DRAINING;
	loop_timer_cancel(e->timeout_t);
	e->timeout_t = NULL;
	if (e->killed_ms == 0 && (e->timed_out || e->cancelled)) {
		/* The leader went on SIGTERM; the rest of the group goes now. */
		loop_timer_cancel(e->kill_t);
		e->kill_t = NULL;
		exec_signal(e, SIGKILL);
		e->killed_ms = loop_now_ms();
	}
	loop_timer_cancel(e->poll_t);
	e->poll_t = NULL;
	loop_fd_close(e->in_lf);
	e->in_lf = NULL;
	for (i = 0; i < 2; i++)
		if (e->out[i].lf != NULL && !e->s.paused)
			exec_read(&e->out[i], LOOP_READ);
	exec_advance(e);
}

/* ---- pipes ------------------------------------------------------------ */

static void
exec_pause(struct exec *e)
{
	int	 i;

	for (i = 0; i < 2; i++)
		if (e->out[i].lf != NULL)
			loop_fd_want_read(e->out[i].lf, 0);
	control_stream_pause(&e->s);
}

/* Account n bytes read from o: keep, stream or drop them. */
static void
exec_take(struct exec_out *o, const uint8_t *p, size_t n)
{
	struct exec	*e = o->e;
	size_t		 room, k;

	room = o->total < e->limit ? e->limit - o->total : 0;
	k = n < room ? n : room;
	o->total += n;
	if (k < n)
		e->truncated = 1;
	if (k == 0)
		return;
	if (e->stream)
		control_send_data(e->conn, e->id, o->channel, p, k, 0);
	else if (buf_append(&o->keep, p, k) != 0)
		e->truncated = 1;
}

/* One read: 1 data, 0 nothing now (EAGAIN), -1 EOF or error. */
static int
exec_read_once(struct exec_out *o)
{
	struct exec	*e = o->e;
	ssize_t		 n;

	n = read(loop_fd_get(o->lf), exec_rbuf, sizeof(exec_rbuf));
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	if (e->state != EXEC_RUNNING)
		o->drained += (size_t)n;
	exec_take(o, exec_rbuf, (size_t)n);
	return 1;
}

/*
 * While the child runs: one read per event.  On HUP or once the child is
 * reaped: read until EAGAIN or EOF and close, bounded so a background job
 * that keeps writing cannot hold us here.  On HUP the loop closes the fd.
 */
static void
exec_read(struct exec_out *o, int events)
{
	struct exec	*e = o->e;
	int		 got, hup = (events & LOOP_HUP) != 0;
	int		 drain = hup || e->state != EXEC_RUNNING;

	do {
		got = exec_read_once(o);
		if (got < 0)
			break;
		if (!hup && e->stream && control_out_full(e->conn)) {
			exec_pause(e);
			return;
		}
	} while (got > 0 && drain && o->drained < EXEC_DRAIN_MAX);
	if (got < 0 || drain) {
		if (!hup)
			loop_fd_close(o->lf);
		o->lf = NULL;
	}
}

static void
exec_out_cb(struct loop_fd *lf, int events, void *arg)
{
	struct exec_out	*o = arg;
	struct exec	*e = o->e;

	if (events & (LOOP_READ | LOOP_HUP))
		exec_read(o, events);
	if (e->state != EXEC_RUNNING)
		exec_advance(e);
}

/*
 * The child's stdin: write what is left of the request's bytes, then close
 * the pipe so the child reads EOF.
 */
static void
exec_in_cb(struct loop_fd *lf, int events, void *arg)
{
	struct exec	*e = arg;

	if (events & LOOP_HUP) {
		e->in_lf = NULL;	/* the loop closes it */
		return;
	}
	/*
	 * 0: the pipe is full and writability is asked for.  Otherwise all
	 * of it went, or the reader is gone (main.c ignores SIGPIPE: that is
	 * just EPIPE here); either way the pipe is done.
	 */
	if (loop_fd_write_pending(lf, e->in_data, e->in_len, &e->in_off) == 0)
		return;
	loop_fd_close(lf);
	e->in_lf = NULL;
	free(e->in_data);
	e->in_data = NULL;
}

/* ---- control stream callbacks ----------------------------------------- */

static void
exec_stream_resume(struct control_stream *s)
{
	struct exec	*e = (struct exec *)s;
	int		 i;

	for (i = 0; i < 2; i++)
		if (e->out[i].lf != NULL)
			loop_fd_want_read(e->out[i].lf, 1);
	/* An idle pipe gives no event: drain from a timer, not from inside
	 * control.c's callback (which may free e). */
	if (e->state == EXEC_DRAINING && e->poll_t == NULL)
		e->poll_t = loop_timer_add(0, exec_poll_cb, e);
}

static int
exec_stream_data(struct control_stream *s, const uint8_t *p, size_t n,
    int end)
{
	/* stdin comes in the request; stray frames are dropped. */
	return 0;
}

static void
exec_stream_abort(struct control_stream *s)
{
	struct exec	*e = (struct exec *)s;

	log_info("exec.abort", "id=%u pid=%d", e->id, (int)e->pid);
	e->conn = NULL;
	e->cancel_id = 0;
	if (e->state != EXEC_DONE)
		exec_signal(e, SIGKILL);
	if (e->reaped) {
		exec_free(e);
		return;
	}
	/* Keep only the child watch: it reaps, then frees. */
	exec_release(e);
	e->state = EXEC_DONE;
}

/* ---- spawning --------------------------------------------------------- */

static int
exec_env_name_ok(const char *k)
{
	size_t	 i;

	if (k[0] == '\0' || strlen(k) > EXEC_MAX_ENV_NAME ||
	    (k[0] >= '0' && k[0] <= '9'))
		return 0;
	for (i = 0; k[i] != '\0'; i++) {
		char	 c = k[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '_'))
			return 0;
	}
	return 1;
}

static int
exec_env_check(json_t *env, char *detail, size_t detaillen)
{
	const char	*k;
	json_t		*v;

	if (json_object_size(env) > EXEC_MAX_ENV) {
		snprintf(detail, detaillen, "env has more than %d variables.",
		    EXEC_MAX_ENV);
		return ERR_BAD_REQUEST;
	}
	json_object_foreach(env, k, v) {
		if (!exec_env_name_ok(k)) {
			snprintf(detail, detaillen, "env has an invalid "
			    "variable name.");
			return ERR_BAD_REQUEST;
		}
		if (!json_is_string(v) ||
		    json_string_length(v) > EXEC_MAX_ENV_VALUE ||
		    strlen(json_string_value(v)) != json_string_length(v)) {
			snprintf(detail, detaillen, "env values must be "
			    "strings of at most %d bytes without NUL.",
			    EXEC_MAX_ENV_VALUE);
			return ERR_BAD_REQUEST;
		}
	}
	return 0;
}

void
exec_env_free(char **envp)
{
	size_t	 i;

	if (envp == NULL)
		return;
	for (i = 0; envp[i] != NULL; i++)
		free(envp[i]);
	free(envp);
}

/* Set name=value in envp (n entries used), replacing an earlier one. */
static void
exec_env_set(char **envp, size_t *n, const char *name, const char *value)
{
	size_t	 i, nl = strlen(name);
	char	*s;

	if (asprintf(&s, "%s=%s", name, value) == -1)
		fatal("asprintf: out of memory");
	for (i = 0; i < *n; i++) {
		if (strncmp(envp[i], name, nl) == 0 && envp[i][nl] == '=') {
			free(envp[i]);
			envp[i] = s;
			return;
		}
	}
	envp[(*n)++] = s;
}

static char **
exec_env_build(const struct exec_args *a)
{
	struct display	 *d;
	char		**envp, dpy[16];
	size_t		  n = 0;
	const char	 *k;
	const struct nss_var *nv;
	json_t		 *v;

	envp = xcalloc(20 + json_object_size(a->env) + 1, sizeof(*envp));
	exec_env_set(envp, &n, "HOME", guestd.workspace);
	exec_env_set(envp, &n, "USER", guestd.user);
	exec_env_set(envp, &n, "LOGNAME", guestd.user);
	exec_env_set(envp, &n, "SHELL", guestd.shell);
	exec_env_set(envp, &n, "PATH", EXEC_DEFAULT_PATH);
	exec_env_set(envp, &n, "LANG", "C.UTF-8");
	exec_env_set(envp, &n, "TERM", "dumb");
	exec_env_set(envp, &n, "RAKAZO_WORKSPACE", guestd.workspace);
	/* A uid without a passwd entry still has a name and a home. */
	for (nv = nss_vars(); nv->name != NULL; nv++)
		exec_env_set(envp, &n, nv->name, nv->value);
	if (a->bot != NULL) {
		exec_env_set(envp, &n, "RAKAZO_BOT", a->bot);
		/* The bot's own desktop, when it has one open. */
		if ((d = display_find(a->bot)) != NULL) {
			snprintf(dpy, sizeof dpy, ":%d", display_slot(d));
			exec_env_set(envp, &n, "DISPLAY", dpy);
			exec_env_set(envp, &n, "XAUTHORITY",
			    display_xauthority(d));
		}
	}
	if (a->env != NULL)
		json_object_foreach(a->env, k, v)
			exec_env_set(envp, &n, k, json_string_value(v));
	envp[n] = NULL;
	return envp;
}

char **
exec_env_new(const char *bot)
{
	struct exec_args	a;

	memset(&a, 0, sizeof a);
	a.bot = bot;
	return exec_env_build(&a);
}

/* Open the directory the command starts in; fd or ERR_*. */
static int
exec_open_cwd(const struct exec_args *a, char *detail, size_t detaillen)
{
	char		 botdir[PATH_MAX];
	const char	*path;
	int		 rootfd, fd = ERR_INTERNAL, r;

	rootfd = path_root_open(guestd.workspace);
	if (rootfd == -1)
		return err_from_errno(errno);
	if (a->bot != NULL && (r = path_ensure_bot(rootfd, a->bot)) != 0) {
		fd = r;
		goto out;
	}
	if (a->cwd != NULL)
		path = a->cwd;
	else if (a->bot != NULL) {
		snprintf(botdir, sizeof(botdir), "bots/%s", a->bot);
		path = botdir;
	} else
		path = ".";
	if (a->cwd != NULL && (r = path_check(a->cwd, strlen(a->cwd))) != 0) {
		snprintf(detail, detaillen, "cwd is not a valid workspace "
		    "path.");
		fd = r;
		goto out;
	}
	fd = path_open(rootfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd == ERR_NOT_FOUND)
		snprintf(detail, detaillen, "cwd does not exist.");
	else if (fd == ERR_NOT_DIR)
		snprintf(detail, detaillen, "cwd is not a directory.");
out:
	close(rootfd);
	return fd;
}

static int
exec_pipe(int p[2])
{
	if (pipe2(p, O_CLOEXEC) == -1)
		return err_from_errno(errno);
	return 0;
}

static void
exec_close_pair(int p[2])
{
	if (p[0] != -1)
		close(p[0]);
	if (p[1] != -1)
		close(p[1]);
	p[0] = p[1] = -1;
}

void
exec_spawnattr_init(posix_spawnattr_t *attr)
{
	sigset_t	all, none;

	sigfillset(&all);
	sigemptyset(&none);
	posix_spawnattr_init(attr);
	posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSID |
	    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setsigmask(attr, &none);
	posix_spawnattr_setsigdefault(attr, &all);
}

/*
 * Start the command with posix_spawn(3): glibc runs it with
 * clone(CLONE_VM|CLONE_VFORK), far cheaper than fork() of a daemon, and
 * reports a failed execve() as its return value.  The child gets a session
 * of its own, default signal dispositions, an empty mask, the pipes on
 * 0/1/2, cwd through fchdir on a directory opened beneath the workspace,
 * and nothing else: every other descriptor is CLOEXEC or closed here.
 * On success *pidp and the parent's ends of the pipes (in[1], out[0],
 * err[0]) are left open, the rest closed.
 */
static int
exec_spawn(const struct exec_args *a, int cwdfd, int in[2], int out[2],
    int err[2], pid_t *pidp, char *detail, size_t detaillen)
{
	posix_spawn_file_actions_t	 fa;
	posix_spawnattr_t		 attr;
	char				*argv[4];
	char				**envp = NULL;
	int				 devnull = -1, infd, r, e;
	pid_t				 pid;

	*pidp = -1;
	if ((r = exec_pipe(out)) != 0 || (r = exec_pipe(err)) != 0)
		goto out;
	if (a->has_in && (r = exec_pipe(in)) != 0)
		goto out;
	if (!a->has_in) {
		devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (devnull == -1) {
			r = err_from_errno(errno);
			goto out;
		}
	}
	infd = a->has_in ? in[0] : devnull;
	envp = exec_env_build(a);
	argv[0] = (char *)"bash";
	argv[1] = (char *)"-c";
	argv[2] = (char *)a->command;
	argv[3] = NULL;

	exec_spawnattr_init(&attr);
	posix_spawn_file_actions_init(&fa);
	/* dup2 onto the same number clears CLOEXEC, as POSIX asks. */
	posix_spawn_file_actions_adddup2(&fa, infd, 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	posix_spawn_file_actions_addfchdir_np(&fa, cwdfd);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	e = posix_spawn(&pid, guestd.shell, &fa, &attr, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (e != 0) {
		snprintf(detail, detaillen, "Starting %s failed: %s.",
		    guestd.shell, strerror(e));
		r = ERR_EXEC_SPAWN;
		goto out;
	}
	*pidp = pid;
	r = 0;
out:
	exec_env_free(envp);
	if (devnull != -1)
		close(devnull);
	/* The child's ends. */
	if (in[0] != -1)
		close(in[0]);
	in[0] = -1;
	if (out[1] != -1)
		close(out[1]);
	out[1] = -1;
	if (err[1] != -1)
		close(err[1]);
	err[1] = -1;
	if (r != 0) {
		exec_close_pair(in);
		exec_close_pair(out);
		exec_close_pair(err);
	}
	return r;
}

/* ---- requests --------------------------------------------------------- */

static int
exec_parse(json_t *args, struct exec_args *a, char *detail, size_t detaillen)
{
	static const char *const keys[] = { "command", "bot", "fence", "cwd",
	    "env", "timeout_ms", "output_limit", "stream", "stdin", NULL };
	char		 err[JSONX_ERRLEN] = "";
	json_t		*in;
	int		 r;

	memset(a, 0, sizeof(*a));
	a->timeout_ms = EXEC_DEF_TIMEOUT_MS;
	if (a->timeout_ms > guestd.exec_max_timeout_ms)
		a->timeout_ms = guestd.exec_max_timeout_ms;
	a->output_limit = EXEC_DEF_OUTPUT;
	if ((uint64_t)a->output_limit > guestd.exec_max_output)
		a->output_limit = (int64_t)guestd.exec_max_output;
	if (!json_is_object(args)) {
		snprintf(detail, detaillen, "args must be an object.");
		return ERR_BAD_REQUEST;
	}
	if ((r = jsonx_only_keys(args, keys, err)) != 0)
		goto out;
	r = jsonx_str(args, "command", EXEC_MAX_COMMAND, &a->command, err);
	if (r == ERR_NOT_FOUND) {
		snprintf(err, sizeof(err), "command is required.");
		r = ERR_BAD_REQUEST;
	}
	if (r != 0)
		goto out;
	if ((r = jsonx_str(args, "bot", 64, &a->bot, err)) != 0 &&
	    r != ERR_NOT_FOUND)
		goto out;
	if (a->bot != NULL && (r = path_bot_valid(a->bot)) != 0) {
		snprintf(err, sizeof(err), "bot is not a valid bot id.");
		goto out;
	}
	if ((r = jsonx_str(args, "cwd", PATH_MAX, &a->cwd, err)) != 0 &&
	    r != ERR_NOT_FOUND)
		goto out;
	if ((r = jsonx_obj(args, "env", &a->env, err)) != 0 &&
	    r != ERR_NOT_FOUND)
		goto out;
	if ((r = jsonx_int(args, "timeout_ms", 1, guestd.exec_max_timeout_ms,
	    &a->timeout_ms, err)) != 0 && r != ERR_NOT_FOUND)
		goto out;
	if ((r = jsonx_int(args, "output_limit", 0,
	    (int64_t)guestd.exec_max_output, &a->output_limit, err)) != 0 &&
	    r != ERR_NOT_FOUND)
		goto out;
	if ((r = jsonx_bool(args, "stream", &a->stream, err)) != 0 &&
	    r != ERR_NOT_FOUND)
		goto out;
	if (!a->stream && a->output_limit > EXEC_MAX_INLINE)
		a->output_limit = EXEC_MAX_INLINE;
	/* jsonx_str refuses "", which is a fine (empty) stdin. */
	in = json_object_get(args, "stdin");
	if (in != NULL) {
		if (!json_is_string(in) ||
		    json_string_length(in) > EXEC_MAX_STDIN ||
		    strlen(json_string_value(in)) != json_string_length(in)) {
			snprintf(err, sizeof(err), "stdin must be a string of "
			    "at most %d bytes without NUL.", EXEC_MAX_STDIN);
			r = ERR_BAD_REQUEST;
			goto out;
		}
		a->in = json_string_value(in);
		a->inlen = json_string_length(in);
		a->has_in = 1;
	}
	if (a->env != NULL &&
	    (r = exec_env_check(a->env, detail, detaillen)) != 0)
		return r;
	r = 0;
out:
	if (r != 0 && err[0] != '\0')
		snprintf(detail, detaillen, "%s", err);
	return r;
}

static void
exec_log_start(const struct exec *e, const struct exec_args *a)
{
	char	*red, cmd[EXEC_LOG_CMD * 4 + 8], cwd[PATH_MAX + 8];
	size_t	 n;

	red = redact_dup(a->command);
	n = strlen(red);
	if (n > EXEC_LOG_CMD) {
		/* Cut on a character boundary, after redaction. */
		n = EXEC_LOG_CMD;
		while (n > 0 && ((uint8_t)red[n] & 0xc0) == 0x80)
			n--;
		red[n] = '\0';
	}
	log_quote(cmd, sizeof(cmd), red);
	free(red);
	log_quote(cwd, sizeof(cwd), a->cwd != NULL ? a->cwd : "");
	log_info("exec.start", "id=%u pid=%d bot=%s cwd=%s stream=%d "
	    "timeout_ms=%lld command=%s", e->id, (int)e->pid,
	    a->bot != NULL ? a->bot : "-", cwd, e->stream,
	    (long long)a->timeout_ms, cmd);
}

static struct exec *
exec_new(struct control_conn *c, uint32_t id, const struct exec_args *a)
{
	struct exec	*e;
	int		 i;

	e = xcalloc(1, sizeof(*e));
	e->conn = c;
	e->id = id;
	e->pid = -1;
	e->state = EXEC_RUNNING;
	e->stream = a->stream;
	e->limit = (uint64_t)a->output_limit;
	for (i = 0; i < 2; i++) {
		e->out[i].e = e;
		e->out[i].channel = i == 0 ? PROTO_CH_STDOUT : PROTO_CH_STDERR;
		buf_init(&e->out[i].keep, e->limit);
	}
	/* Linked at once, so exec_free can always unlink it. */
	LIST_INSERT_HEAD(&exec_list, e, entry);
	return e;
}

/* Put the parent's pipe ends on the loop; they are owned by it after. */
static int
exec_adopt(struct exec *e, const struct exec_args *a, int in[2],
    int out[2], int err[2])
{
	int	*fds[2] = { &out[0], &err[0] }, i;

	for (i = 0; i < 2; i++) {
		e->out[i].lf = loop_fd_add(*fds[i], exec_out_cb, &e->out[i]);
		if (e->out[i].lf == NULL)
			return ERR_INTERNAL;
		*fds[i] = -1;
	}
	if (!a->has_in)
		return 0;
	if (a->inlen == 0) {
		close(in[1]);	/* empty stdin: EOF at once */
		in[1] = -1;
		return 0;
	}
	e->in_data = xmalloc(a->inlen);
	memcpy(e->in_data, a->in, a->inlen);
	e->in_len = a->inlen;
	e->in_lf = loop_fd_add(in[1], exec_in_cb, e);
	if (e->in_lf == NULL)
		return ERR_INTERNAL;
	in[1] = -1;
	loop_fd_want_read(e->in_lf, 0);
	loop_fd_want_write(e->in_lf);
	return 0;
}

int
exec_op_run(struct control_conn *c, uint32_t id, json_t *args, char *detail,
    size_t detaillen)
{
	struct exec_args a;
	struct exec	*e = NULL;
	int		 in[2] = { -1, -1 }, out[2] = { -1, -1 };
	int		 err[2] = { -1, -1 }, cwdfd = -1, r = ERR_INTERNAL;
	pid_t		 pid;

	if (guestd.exec_max_running > 0 &&
	    exec_running() >= (uint64_t)guestd.exec_max_running) {
		snprintf(detail, detaillen, "%lld commands are running "
		    "already.", (long long)guestd.exec_max_running);
		return ERR_BUSY;
	}
	if ((r = exec_parse(args, &a, detail, detaillen)) != 0)
		return r;
	if ((cwdfd = exec_open_cwd(&a, detail, detaillen)) < 0)
		return cwdfd;
	r = exec_spawn(&a, cwdfd, in, out, err, &pid, detail, detaillen);
	close(cwdfd);
	if (r != 0)
		return r;

	e = exec_new(c, id, &a);
	e->pid = pid;
	e->started_ms = loop_now_ms();
	if (loop_child_watch(pid, exec_child_cb, e) != 0) {
		/* Cannot supervise it: do not let it run unsupervised. */
		kill(-pid, SIGKILL);
		while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
			;
		exec_close_pair(in);
		exec_close_pair(out);
		exec_close_pair(err);
		exec_free(e);
		return ERR_INTERNAL;
	}
	control_stream_attach(c, &e->s, id, &exec_stream_ops);
	exec_log_start(e, &a);
	control_event(c, "exec.started", id, json_pack("{s:i}", "pid",
	    (int)pid));
	if (exec_adopt(e, &a, in, out, err) != 0 ||
	    (e->timeout_t = loop_timer_add((uint64_t)a.timeout_ms,
	    exec_timeout_cb, e)) == NULL) {
		/* The child watch still reaps it and replies. */
		log_error("exec.supervise", "id=%u pid=%d", id, (int)pid);
		exec_close_pair(in);
		exec_close_pair(out);
		exec_close_pair(err);
		exec_release(e);
		e->cancelled = 1;
		exec_signal(e, SIGKILL);
		e->killed_ms = loop_now_ms();
	}
	return 0;
}

int
exec_op_cancel(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen)
{
	static const char *const keys[] = { "target", "bot", "fence", NULL };
	char		 err[JSONX_ERRLEN] = "";
	struct exec	*e;
	int64_t		 target = 0;
	int		 r;

	if (!json_is_object(args)) {
		snprintf(detail, detaillen, "args must be an object.");
		return ERR_BAD_REQUEST;
	}
	if ((r = jsonx_only_keys(args, keys, err)) != 0 ||
	    (r = jsonx_int(args, "target", 1, UINT32_MAX, &target, err)) != 0) {
		if (r == ERR_NOT_FOUND) {
			snprintf(err, sizeof(err), "target is required.");
			r = ERR_BAD_REQUEST;
		}
		snprintf(detail, detaillen, "%s", err);
		return r;
	}
	LIST_FOREACH(e, &exec_list, entry)
		if (e->conn == c && e->id == (uint32_t)target &&
		    e->state != EXEC_DONE)
			break;
	if (e == NULL) {
		snprintf(detail, detaillen, "No running command with that id.");
		return ERR_NOT_FOUND;
	}
	if (e->cancel_id != 0) {
		snprintf(detail, detaillen, "A cancel of that command is "
		    "already in progress.");
		return ERR_BUSY;
	}
	log_info("exec.cancel", "id=%u pid=%d", e->id, (int)e->pid);
	e->cancel_id = id;
	e->cancelled = 1;
	if (e->state == EXEC_RUNNING)
		exec_terminate(e);
	else if (e->killed_ms == 0) {
		/* Leader already gone, pipes draining: finish the group. */
		exec_signal(e, SIGKILL);
		e->killed_ms = loop_now_ms();
	}
	exec_advance(e);
	return 0;
}

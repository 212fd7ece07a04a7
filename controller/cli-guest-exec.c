/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest exec [options] -- CMD...: run one bash command in the
 * guest, its output streamed to ours, and exit with its status (128+signal
 * when signalled, 124 when timed out, 130 when cancelled).  SIGINT and
 * SIGTERM cancel the command in the guest rather than abandon it, and a
 * closed standard output stops it as a pipeline would.
 */
#include "autoconf.h"

#include <sys/eventfd.h>
#include <sys/signalfd.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli-guest.h"
#include "cli.h"
#include "err.h"
#include "guest-client.h"
#include "proto.h"
#include "task.h"
#include "xmalloc.h"

#define GUEST_STDIN_MAX		(512 * 1024)

/* exec: the state of one running command. */
struct guest_exec {
	struct cliguest	*g;
	uint32_t	 id;
	int		 done;
	int		 cancel_sent;
	int		 broken_pipe;
	json_t		*reply;
	int		 sfd;		/* SIGINT, SIGTERM */
	int		 donefd;	/* the command's reply came */
	int		 watching;	/* guest_exec_signals() runs */
	struct task_cond cv;		/* it ended */
};

static void	guest_exec_cancel(struct gclient *, struct guest_exec *);

static void
guest_exec_reply(struct gclient *c, uint32_t id, json_t *msg, void *arg)
{
	struct guest_exec	*ex = arg;

	ex->reply = json_incref(msg);
	ex->done = 1;
}

static int
guest_exec_data(struct gclient *c, uint32_t id, uint8_t channel,
    const uint8_t *p, size_t n, int end, void *arg)
{
	struct guest_exec	*ex = arg;
	int			 fd;

	if (channel == PROTO_CH_STDOUT)
		fd = STDOUT_FILENO;
	else if (channel == PROTO_CH_STDERR)
		fd = STDERR_FILENO;
	else
		return 0;
	/*
	 * Nobody reads our output any more (`| head`): stop the command as
	 * a pipeline would, but still wait for guestd to confirm.
	 */
	if (n > 0 && cliguest_write_all(fd, p, n) != 0 && errno == EPIPE &&
	    !ex->broken_pipe) {
		ex->broken_pipe = 1;
		guest_exec_cancel(c, ex);
	}
	return 0;
}

static void
guest_cancel_reply(struct gclient *c, uint32_t id, json_t *msg, void *arg)
{
	struct errmsg	 err;

	if (json_is_true(json_object_get(msg, "ok")))
		return;
	gclient_reply_error(msg, &err);
	cli_error("%s", err.msg);
}

/*
 * A task of its own: SIGINT/SIGTERM arrive through the signalfd on the
 * client's loop while the exec task waits for its reply; the exec task
 * ends this one through donefd.
 */
static void
guest_exec_signals(void *arg)
{
	struct guest_exec		*ex = arg;
	struct signalfd_siginfo		 si;
	int				 fds[2], which;

	fds[0] = ex->sfd;
	fds[1] = ex->donefd;
	while (!ex->done && task_wait_fds(fds, 2, -1, &which) == 0 &&
	    which == 0) {
		while (read(ex->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			;
		guest_exec_cancel(ex->g->c, ex);
	}
	ex->watching = 0;
	task_cond_broadcast(&ex->cv);
}

/* Ask guestd once to kill the command; its exec reply ends the wait. */
static void
guest_exec_cancel(struct gclient *c, struct guest_exec *ex)
{
	if (ex->cancel_sent || ex->done)
		return;
	ex->cancel_sent = 1;
	gclient_request(c, "exec.cancel", cliguest_args(ex->g,
	    json_pack("{s:I}", "target", (json_int_t)ex->id)),
	    guest_cancel_reply, NULL, NULL);
}

/*
 * Before the loop (cliguest_cmd.prepare): SIGINT and SIGTERM blocked for
 * good, so they are read from the signalfd, never lost.  A shell starts
 * background commands with SIGINT ignored, and an ignored signal never
 * reaches a signalfd: take the default back (it never runs while the
 * signal is blocked).
 */
static void
guest_exec_prepare(void)
{
	sigset_t	 set;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/* End guest_exec_signals(): ex lives on this task's stack. */
static void
guest_exec_unwatch(struct guest_exec *ex)
{
	uint64_t	 one = 1;

	ex->done = 1;
	if (write(ex->donefd, &one, sizeof one) != (ssize_t)sizeof one)
		return;
	while (ex->watching)
		(void)task_cond_wait(&ex->cv, -1);
}

static int
guest_exec_status(json_t *res)
{
	json_t	*v;

	if (json_is_true(json_object_get(res, "timed_out")))
		return 124;
	v = json_object_get(res, "signal");
	if (json_is_integer(v))
		return 128 + (int)(json_integer_value(v) & 0x7f);
	v = json_object_get(res, "exit_code");
	if (json_is_integer(v))
		return (int)(json_integer_value(v) & 0xff);
	return CLI_EXIT_ERROR;
}

static int
guest_read_text_file(const char *path, json_t **out)
{
	char	*buf;
	size_t	 len = 0;
	ssize_t	 n;
	int	 fd, r = CLI_EXIT_ERROR;

	*out = NULL;
	buf = xmalloc(GUEST_STDIN_MAX + 1);
	fd = strcmp(path, "-") == 0 ? dup(STDIN_FILENO) :
	    open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cli_error("IO_ERROR: cannot open %s: %s", path,
		    strerror(errno));
		goto out;
	}
	while ((n = read(fd, buf + len, GUEST_STDIN_MAX + 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			cli_error("IO_ERROR: cannot read %s: %s", path,
			    strerror(errno));
			goto out;
		}
		len += (size_t)n;
		if (len > GUEST_STDIN_MAX) {
			cli_error("TOO_LARGE: %s exceeds %d bytes; use put "
			    "and redirect instead", path, GUEST_STDIN_MAX);
			goto out;
		}
	}
	/* json_stringn takes NUL, the protocol's strings never do. */
	if (memchr(buf, '\0', len) != NULL) {
		cli_error("BAD_REQUEST: %s holds a NUL byte; use put and "
		    "redirect instead", path);
		goto out;
	}
	if ((*out = json_stringn(buf, len)) == NULL) {
		cli_error("BAD_REQUEST: %s is not UTF-8 text", path);
		goto out;
	}
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return r;
}

static int
guest_exec_parse(int argc, char **argv, json_t *args, int *as_json)
{
	static const struct option	 opts[] = {
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "cwd", required_argument, NULL, 'c' },
		{ "env", required_argument, NULL, 'e' },
		{ "output-limit", required_argument, NULL, 'o' },
		{ "stdin-file", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	json_t		*env = NULL, *in;
	char		*cmd, *eq;
	size_t		 len = 0;
	int64_t		 v;
	int		 ch, i;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (ch) {
		case 't':
		case 'o':
			if (cliguest_parse_int(optarg, 0, INT64_MAX, 10,
			    &v) != 0)
				return -1;
			json_object_set_new(args, ch == 't' ? "timeout_ms" :
			    "output_limit", json_integer(v));
			break;
		case 'c':
			json_object_set_new(args, "cwd", json_string(optarg));
			break;
		case 'e':
			if ((eq = strchr(optarg, '=')) == NULL ||
			    eq == optarg)
				return -1;
			if (env == NULL) {
				env = json_object();
				json_object_set_new(args, "env", env);
			}
			*eq = '\0';
			json_object_set_new(env, optarg, json_string(eq + 1));
			*eq = '=';
			break;
		case 'i':
			if (guest_read_text_file(optarg, &in) != 0)
				return -2;
			json_object_set_new(args, "stdin", in);
			break;
		case 'j':
			*as_json = 1;
			break;
		default:
			return -1;
		}
	}
	if (optind >= argc)
		return -1;
	/* The words are joined with spaces into one bash command string. */
	for (i = optind; i < argc; i++)
		len += strlen(argv[i]) + 1;
	cmd = xmalloc(len);
	cmd[0] = '\0';
	for (i = optind; i < argc; i++) {
		if (i > optind)
			strcat(cmd, " ");
		strcat(cmd, argv[i]);
	}
	json_object_set_new(args, "command", json_string(cmd));
	free(cmd);
	json_object_set_new(args, "stream", json_boolean(!*as_json));
	return 0;
}

static int
guest_exec(struct cliguest *g, int argc, char **argv)
{
	static const char	*usage = "[--timeout-ms N] [--cwd DIR] "
	    "[--env K=V]... [--output-limit N] [--stdin-file F] [--json] "
	    "-- CMD...";
	struct guest_exec	 ex;
	json_t			*args, *res;
	sigset_t		 set;
	struct errmsg		 err;
	int			 as_json = 0, r;

	memset(&ex, 0, sizeof(ex));
	ex.g = g;
	args = json_object();
	if ((r = guest_exec_parse(argc, argv, args, &as_json)) != 0) {
		json_decref(args);
		return r == -2 ? CLI_EXIT_ERROR : cliguest_usage("exec", usage);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if ((r = cliguest_connect(g)) != 0) {
		json_decref(args);
		return r;
	}
	ex.sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	ex.donefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ex.sfd < 0 || ex.donefd < 0 ||
	    task_spawn(guest_exec_signals, &ex) != 0) {
		json_decref(args);
		cli_error("INTERNAL: cannot watch signals: %s",
		    strerror(errno));
		return CLI_EXIT_ERROR;
	}
	ex.watching = 1;
	ex.id = gclient_request(g->c, "exec", cliguest_args(g, args),
	    guest_exec_reply, guest_exec_data, &ex);
	if (ex.id == 0) {
		guest_exec_unwatch(&ex);
		return cliguest_conn_failed(g, ERR_PEER_GONE);
	}
	/* Output may pause for as long as the command likes: no idle limit. */
	r = gclient_run(g->c, &ex.done, 0);
	guest_exec_unwatch(&ex);
	if (r != 0)
		return cliguest_conn_failed(g, r);
	if (ex.broken_pipe) {
		json_decref(ex.reply);
		return 128 + SIGPIPE;
	}
	if (ex.cancel_sent) {
		json_decref(ex.reply);
		cli_error("cancelled");
		return CLI_EXIT_CANCELLED;
	}
	if (!json_is_true(json_object_get(ex.reply, "ok"))) {
		gclient_reply_error(ex.reply, &err);
		json_decref(ex.reply);
		cli_error("%s", err.msg);
		return CLI_EXIT_ERROR;
	}
	res = json_object_get(ex.reply, "result");
	if (as_json)
		cliguest_print_json(res);
	r = guest_exec_status(res);
	json_decref(ex.reply);
	return r;
}

const struct cliguest_cmd cli_guest_exec_entry = {
	"exec", "[--timeout-ms N] [--cwd DIR] [--env K=V]... "
	    "[--output-limit N] [--stdin-file F] [--json] -- CMD...",
	guest_exec, guest_exec_prepare
};

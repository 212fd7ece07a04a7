/*
 * `rakazoctl guest`: talk to one guestd directly over its control channel
 * (SPEC G-31, C-5), for operators and for tests.  Global options name the
 * guestd and its secret; then one verb from guest_verbs[] follows, each a
 * thin mapping of a command line onto one protocol op.  A verb parses its
 * own arguments before connecting, so a usage error never needs a server.
 *
 * The desktop verbs (open, close, displays, screenshot, act) name the bot
 * as their first argument, which wins over a global --bot.
 *
 * Exit statuses: 0 ok, 1 error reply or local failure, 2 usage,
 * 3 CONNECT_FAILED / UNAUTHORIZED; `exec` exits with the command's status
 * (128+signal when signalled, 124 when timed out, 130 when cancelled).
 */
#include "autoconf.h"

#include <sys/types.h>
#include <sys/signalfd.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "err.h"
#include "log.h"
#include "proto.h"
#include "controller/cli.h"
#include "controller/guest-client.h"

#define GUEST_ERRLEN		512
#define GUEST_SECRET_MAX	4096
#define GUEST_STDIN_MAX		(512 * 1024)

struct guest {
	const char	*url;
	const char	*secret_file;
	const char	*bot;
	int64_t		 fence;
	int		 has_fence;
	int		 timeout_ms;	/* 0: defaults */
	struct gclient	*c;
};

struct guest_verb {
	const char	*name;
	const char	*usage;
	int		(*fn)(struct guest *g, int argc, char **argv);
};

static int	guest_main(int, char **);

const struct cli_cmd cli_guest_entry = {
	"guest",
	"--url URL [--secret-file FILE] [--bot BOT] [--fence N] "
	    "[--timeout MS] VERB ...",
	guest_main
};

/* ---- helpers ------------------------------------------------------------ */

static int
guest_usage(const char *name, const char *usage)
{
	fprintf(stderr, "usage: rakazoctl guest [options] %s %s\n", name,
	    usage);
	return CLI_EXIT_USAGE;
}

static int
guest_write_all(int fd, const void *p, size_t n)
{
	const char	*s = p;
	ssize_t		 w;

	while (n > 0) {
		w = write(fd, s, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

static void
guest_print_json(json_t *j)
{
	char	*s;

	s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	if (s == NULL)
		fatal("json_dumps failed");
	printf("%s\n", s);
	fflush(stdout);
	free(s);
}

/*
 * --bot and --fence go with every request that can carry them (health
 * takes no arguments at all).
 */
static json_t *
guest_args(struct guest *g, json_t *args)
{
	if (args == NULL)
		args = json_object();
	if (g == NULL)
		return args;
	if (g->bot != NULL)
		json_object_set_new(args, "bot", json_string(g->bot));
	if (g->has_fence)
		json_object_set_new(args, "fence", json_integer(g->fence));
	return args;
}

static int
guest_parse_int(const char *s, int64_t min, int64_t max, int base,
    int64_t *out)
{
	char		*ep;
	long long	 v;

	errno = 0;
	v = strtoll(s, &ep, base);
	if (*s == '\0' || *ep != '\0' || errno != 0 || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* The secret: first line of the file, or RAKAZO_GUEST_SECRET. */
static int
guest_read_secret(struct guest *g, char **out)
{
	char	 buf[GUEST_SECRET_MAX + 1];
	ssize_t	 n;
	size_t	 len = 0;
	int	 fd;
	const char *env;

	*out = NULL;
	if (g->secret_file == NULL) {
		env = getenv("RAKAZO_GUEST_SECRET");
		if (env == NULL || *env == '\0') {
			cli_error("no secret given; use --secret-file FILE "
			    "or set RAKAZO_GUEST_SECRET");
			return CLI_EXIT_USAGE;
		}
		*out = xstrdup(env);
		return 0;
	}
	if ((fd = open(g->secret_file, O_RDONLY | O_CLOEXEC)) < 0) {
		cli_error("CONFIG_INVALID: cannot read the secret file %s "
		    "(%s)", g->secret_file, strerror(errno));
		return CLI_EXIT_ERROR;
	}
	while (len < sizeof(buf) - 1 &&
	    (n = read(fd, buf + len, sizeof(buf) - 1 - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	len = strcspn(buf, "\r\n");
	buf[len] = '\0';
	while (len > 0 && (buf[len - 1] == ' ' || buf[len - 1] == '\t'))
		buf[--len] = '\0';
	if (len == 0) {
		explicit_bzero(buf, sizeof(buf));
		cli_error("CONFIG_INVALID: the secret file %s is empty",
		    g->secret_file);
		return CLI_EXIT_ERROR;
	}
	*out = xstrdup(buf);
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

static int
guest_connect(struct guest *g)
{
	struct gclient_opts	 o;
	char			 err[GUEST_ERRLEN];
	char			*secret = NULL;
	int			 r;

	if ((r = guest_read_secret(g, &secret)) != 0)
		return r;
	memset(&o, 0, sizeof(o));
	o.url = g->url;
	o.secret = secret;
	o.timeout_ms = g->timeout_ms;
	r = gclient_connect(&g->c, &o, err, sizeof(err));
	explicit_bzero(secret, strlen(secret));
	free(secret);
	if (r == 0)
		return 0;
	cli_error("%s", err);
	if (r == ERR_CONFIG)
		return CLI_EXIT_USAGE;
	if (r == ERR_CONNECT || r == ERR_UNAUTHORIZED)
		return CLI_EXIT_CONNECT;
	return CLI_EXIT_ERROR;
}

/* A failure of the connection itself (not an error reply). */
static int
guest_conn_failed(struct guest *g, int r)
{
	const char	*why = gclient_error(g->c);

	cli_error("%s: %s", err_name(r), why[0] ? why : err_message(r));
	return CLI_EXIT_ERROR;
}

/* One JSON request; prints the result when print is set. */
static int
guest_simple(struct guest *g, const char *op, json_t *args, int print)
{
	json_t	*res = NULL;
	char	 err[GUEST_ERRLEN];
	int	 r;

	if ((r = guest_connect(g)) != 0) {
		json_decref(args);
		return r;
	}
	r = gclient_call(g->c, op, guest_args(strcmp(op, "health") != 0 ?
	    g : NULL, args), &res, err, sizeof(err));
	if (r != 0) {
		cli_error("%s", err);
		return CLI_EXIT_ERROR;
	}
	if (print)
		guest_print_json(res);
	json_decref(res);
	return CLI_EXIT_OK;
}

/* ---- streaming requests (put, get, export, import) ---------------------- */

struct guest_stream {
	int	 done;
	json_t	*reply;
	int	 out_fd;	/* channel 0 goes here, or -1 */
	int	 in_fd;		/* upload from here, or -1 */
	int	 out_errno;
	int	 in_errno;
	int	 got_end;
};

static void
guest_stream_reply(struct gclient *c, uint32_t id, json_t *msg, void *arg)
{
	struct guest_stream	*st = arg;

	st->reply = json_incref(msg);
	st->done = 1;
}

static int
guest_stream_data(struct gclient *c, uint32_t id, uint8_t channel,
    const uint8_t *p, size_t n, int end, void *arg)
{
	struct guest_stream	*st = arg;

	if (channel != PROTO_CH_DATA || st->out_fd < 0)
		return 0;
	if (n > 0 && guest_write_all(st->out_fd, p, n) != 0) {
		st->out_errno = errno;
		return ERR_IO;
	}
	if (end)
		st->got_end = 1;
	return 0;
}

static ssize_t
guest_stream_source(void *arg, uint8_t *p, size_t max, int *end)
{
	struct guest_stream	*st = arg;
	ssize_t			 n;

	do
		n = read(st->in_fd, p, max);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		st->in_errno = errno;
		return ERR_IO;
	}
	if (n == 0)
		*end = 1;
	return n;
}

/*
 * Send op, upload in_fd if >= 0, write channel 0 into out_fd if >= 0 and
 * wait for the reply.  On success *result holds the result.
 */
static int
guest_stream_run(struct guest *g, const char *op, json_t *args, int in_fd,
    int out_fd, json_t **result)
{
	struct guest_stream	 st;
	char			 err[GUEST_ERRLEN];
	uint32_t		 id;
	int			 r;

	*result = NULL;
	memset(&st, 0, sizeof(st));
	st.in_fd = in_fd;
	st.out_fd = out_fd;
	id = gclient_request(g->c, op, guest_args(g, args),
	    guest_stream_reply, guest_stream_data, &st);
	if (id == 0)
		return guest_conn_failed(g, ERR_PEER_GONE);
	if (in_fd >= 0 && (r = gclient_upload(g->c, id, guest_stream_source,
	    &st)) != 0)
		return guest_conn_failed(g, r);
	r = gclient_run(g->c, &st.done, g->timeout_ms);
	if (r != 0) {
		if (st.in_errno != 0)
			cli_error("IO_ERROR: cannot read the input: %s",
			    strerror(st.in_errno));
		else if (st.out_errno != 0)
			cli_error("IO_ERROR: cannot write the output: %s",
			    strerror(st.out_errno));
		else
			return guest_conn_failed(g, r);
		return CLI_EXIT_ERROR;
	}
	if (!json_is_true(json_object_get(st.reply, "ok"))) {
		gclient_reply_error(st.reply, err, sizeof(err));
		cli_error("%s", err);
		json_decref(st.reply);
		return CLI_EXIT_ERROR;
	}
	*result = json_incref(json_object_get(st.reply, "result"));
	json_decref(st.reply);
	return CLI_EXIT_OK;
}

/* ---- verbs -------------------------------------------------------------- */

static int
guest_health(struct guest *g, int argc, char **argv)
{
	if (argc != 1)
		return guest_usage("health", "");
	return guest_simple(g, "health", NULL, 1);
}

/* exec: the state of one running command. */
struct guest_exec {
	struct guest	*g;
	uint32_t	 id;
	int		 done;
	int		 cancel_sent;
	int		 broken_pipe;
	json_t		*reply;
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
	if (n > 0 && guest_write_all(fd, p, n) != 0 && errno == EPIPE &&
	    !ex->broken_pipe) {
		ex->broken_pipe = 1;
		guest_exec_cancel(c, ex);
	}
	return 0;
}

static void
guest_cancel_reply(struct gclient *c, uint32_t id, json_t *msg, void *arg)
{
	char	 err[GUEST_ERRLEN];

	if (json_is_true(json_object_get(msg, "ok")))
		return;
	gclient_reply_error(msg, err, sizeof(err));
	cli_error("%s", err);
}

/* SIGINT/SIGTERM arrive here through the signalfd on the client's loop. */
static void
guest_exec_signal(struct gclient *c, int fd, void *arg)
{
	struct guest_exec		*ex = arg;
	struct signalfd_siginfo		 si;

	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		;
	guest_exec_cancel(c, ex);
}

/* Ask guestd once to kill the command; its exec reply ends the wait. */
static void
guest_exec_cancel(struct gclient *c, struct guest_exec *ex)
{
	if (ex->cancel_sent || ex->done)
		return;
	ex->cancel_sent = 1;
	gclient_request(c, "exec.cancel", guest_args(ex->g,
	    json_pack("{s:I}", "target", (json_int_t)ex->id)),
	    guest_cancel_reply, NULL, NULL);
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
			if (guest_parse_int(optarg, 0, INT64_MAX, 10, &v) != 0)
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
guest_exec(struct guest *g, int argc, char **argv)
{
	static const char	*usage = "[--timeout-ms N] [--cwd DIR] "
	    "[--env K=V]... [--output-limit N] [--stdin-file F] [--json] "
	    "-- CMD...";
	struct guest_exec	 ex;
	json_t			*args, *res;
	sigset_t		 set;
	char			 err[GUEST_ERRLEN];
	int			 as_json = 0, sfd, r;

	memset(&ex, 0, sizeof(ex));
	ex.g = g;
	args = json_object();
	if ((r = guest_exec_parse(argc, argv, args, &as_json)) != 0) {
		json_decref(args);
		return r == -2 ? CLI_EXIT_ERROR : guest_usage("exec", usage);
	}
	/*
	 * Blocked from here on, so a signal is read from the loop, not lost.
	 * A shell starts background commands with SIGINT ignored, and an
	 * ignored signal never reaches a signalfd: take the default back
	 * (it never runs while the signal is blocked).
	 */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if ((r = guest_connect(g)) != 0) {
		json_decref(args);
		return r;
	}
	if ((sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0 ||
	    gclient_watch_fd(g->c, sfd, guest_exec_signal, &ex) != 0) {
		json_decref(args);
		cli_error("INTERNAL: cannot watch signals: %s",
		    strerror(errno));
		return CLI_EXIT_ERROR;
	}
	ex.id = gclient_request(g->c, "exec", guest_args(g, args),
	    guest_exec_reply, guest_exec_data, &ex);
	if (ex.id == 0)
		return guest_conn_failed(g, ERR_PEER_GONE);
	/* Output may pause for as long as the command likes: no idle limit. */
	if ((r = gclient_run(g->c, &ex.done, 0)) != 0)
		return guest_conn_failed(g, r);
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
		gclient_reply_error(ex.reply, err, sizeof(err));
		json_decref(ex.reply);
		cli_error("%s", err);
		return CLI_EXIT_ERROR;
	}
	res = json_object_get(ex.reply, "result");
	if (as_json)
		guest_print_json(res);
	r = guest_exec_status(res);
	json_decref(ex.reply);
	return r;
}

static int
guest_put(struct guest *g, int argc, char **argv)
{
	static const char		*usage = "LOCAL REMOTE [--mode OCTAL] "
	    "[--parents]";
	static const struct option	 opts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "parents", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 }
	};
	json_t		*args, *res = NULL;
	int64_t		 mode;
	int		 ch, fd, r;

	args = json_object();
	optind = 0;
	while ((ch = getopt_long(argc, argv, "p", opts, NULL)) != -1) {
		switch (ch) {
		case 'm':
			if (guest_parse_int(optarg, 0, 07777, 8, &mode) != 0)
				goto usage;
			json_object_set_new(args, "mode", json_integer(mode));
			break;
		case 'p':
			json_object_set_new(args, "parents", json_true());
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2)
		goto usage;
	json_object_set_new(args, "path", json_string(argv[optind + 1]));
	if (strcmp(argv[optind], "-") == 0)
		fd = dup(STDIN_FILENO);
	else
		fd = open(argv[optind], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cli_error("IO_ERROR: cannot open %s: %s", argv[optind],
		    strerror(errno));
		json_decref(args);
		return CLI_EXIT_ERROR;
	}
	if ((r = guest_connect(g)) == 0)
		r = guest_stream_run(g, "file.write", args, fd, -1, &res);
	else
		json_decref(args);
	close(fd);
	json_decref(res);
	return r;
usage:
	json_decref(args);
	return guest_usage("put", usage);
}

/* Make a temp file beside local so the final rename is atomic. */
static int
guest_get_temp(const char *local, char **tmpp)
{
	char	*copy, *dir, *tmp;
	int	 fd;

	copy = xstrdup(local);
	dir = dirname(copy);
	if (asprintf(&tmp, "%s/.rakazoctl.XXXXXX", dir) < 0)
		fatal("asprintf");
	free(copy);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		free(tmp);
		return -1;
	}
	*tmpp = tmp;
	return fd;
}

/*
 * Give the finished temp file the mode a new file would get, flush it and
 * rename it over local; the temp file is gone afterwards either way.
 */
static int
guest_commit_temp(int fd, const char *tmp, const char *local)
{
	mode_t	 um;
	int	 e;

	um = umask(0);
	umask(um);
	if (fchmod(fd, 0666 & ~um) != 0 || fsync(fd) != 0) {
		e = errno;
		close(fd);
		errno = e;
		goto fail;
	}
	if (close(fd) != 0 || rename(tmp, local) != 0)
		goto fail;
	return CLI_EXIT_OK;
fail:
	cli_error("IO_ERROR: cannot write %s: %s", local, strerror(errno));
	unlink(tmp);
	return CLI_EXIT_ERROR;
}

static int
guest_get(struct guest *g, int argc, char **argv)
{
	static const char		*usage = "REMOTE LOCAL [--offset N] "
	    "[--length N]";
	static const struct option	 opts[] = {
		{ "offset", required_argument, NULL, 'o' },
		{ "length", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 }
	};
	json_t		*args, *res = NULL;
	char		*tmp = NULL;
	const char	*local;
	int64_t		 v;
	int		 ch, fd = -1, r;

	args = json_object();
	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
		case 'l':
			if (guest_parse_int(optarg, 0, INT64_MAX, 10, &v) != 0)
				goto usage;
			json_object_set_new(args, ch == 'o' ? "offset" :
			    "length", json_integer(v));
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2)
		goto usage;
	json_object_set_new(args, "path", json_string(argv[optind]));
	local = argv[optind + 1];
	if ((r = guest_connect(g)) != 0) {
		json_decref(args);
		return r;
	}
	if (strcmp(local, "-") == 0) {
		r = guest_stream_run(g, "file.read", args, -1, STDOUT_FILENO,
		    &res);
		json_decref(res);
		return r;
	}
	if ((fd = guest_get_temp(local, &tmp)) < 0) {
		cli_error("IO_ERROR: cannot create a file beside %s: %s",
		    local, strerror(errno));
		json_decref(args);
		return CLI_EXIT_ERROR;
	}
	r = guest_stream_run(g, "file.read", args, -1, fd, &res);
	json_decref(res);
	if (r == 0)
		r = guest_commit_temp(fd, tmp, local);
	else {
		close(fd);
		unlink(tmp);
	}
	free(tmp);
	return r;
usage:
	json_decref(args);
	return guest_usage("get", usage);
}

static void
guest_ls_print(json_t *res)
{
	json_t		*ents, *e, *mode;
	const char	*type, *name;
	size_t		 i;

	ents = json_object_get(res, "entries");
	json_array_foreach(ents, i, e) {
		type = json_string_value(json_object_get(e, "type"));
		name = json_string_value(json_object_get(e, "name"));
		mode = json_object_get(e, "mode");
		printf("%s ", type != NULL ? type : "?");
		if (json_is_integer(mode))
			printf("%04o", (unsigned)(json_integer_value(mode) &
			    07777));
		else if (json_is_string(mode))
			printf("%s", json_string_value(mode));
		else
			printf("????");
		printf(" %" JSON_INTEGER_FORMAT " %s\n",
		    json_integer_value(json_object_get(e, "size")),
		    name != NULL ? name : "?");
	}
	fflush(stdout);
	if (json_is_true(json_object_get(res, "truncated")))
		cli_error("the listing was truncated");
}

static int
guest_ls(struct guest *g, int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	json_t	*res = NULL;
	char	 err[GUEST_ERRLEN];
	int	 ch, as_json = 0, r;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch != 'j')
			return guest_usage("ls", "[--json] [PATH]");
		as_json = 1;
	}
	if (argc - optind > 1)
		return guest_usage("ls", "[--json] [PATH]");
	if ((r = guest_connect(g)) != 0)
		return r;
	r = gclient_call(g->c, "file.list", guest_args(g, json_pack("{s:s}",
	    "path", optind < argc ? argv[optind] : ".")), &res, err,
	    sizeof(err));
	if (r != 0) {
		cli_error("%s", err);
		return CLI_EXIT_ERROR;
	}
	if (as_json)
		guest_print_json(res);
	else
		guest_ls_print(res);
	json_decref(res);
	return CLI_EXIT_OK;
}

static int
guest_stat(struct guest *g, int argc, char **argv)
{
	if (argc != 2)
		return guest_usage("stat", "PATH");
	return guest_simple(g, "file.stat", json_pack("{s:s}", "path",
	    argv[1]), 1);
}

/* mkdir [-p] PATH and rm [-r] PATH differ only in op and flag. */
static int
guest_path_flag(struct guest *g, int argc, char **argv, const char *op,
    const char *optstr, const char *key, const char *usage)
{
	int	 ch, flag = 0;

	optind = 0;
	while ((ch = getopt(argc, argv, optstr)) != -1) {
		if (ch != optstr[0])
			return guest_usage(argv[0], usage);
		flag = 1;
	}
	if (argc - optind != 1)
		return guest_usage(argv[0], usage);
	return guest_simple(g, op, json_pack("{s:s, s:b}", "path",
	    argv[optind], key, flag), 0);
}

static int
guest_mkdir(struct guest *g, int argc, char **argv)
{
	return guest_path_flag(g, argc, argv, "file.mkdir", "p", "parents",
	    "[-p] PATH");
}

static int
guest_rm(struct guest *g, int argc, char **argv)
{
	return guest_path_flag(g, argc, argv, "file.remove", "r", "recursive",
	    "[-r] PATH");
}

static int
guest_export(struct guest *g, int argc, char **argv)
{
	json_t	*res = NULL;
	int	 r;

	if (argc != 1)
		return guest_usage("export", "> FILE.tar");
	if (isatty(STDOUT_FILENO)) {
		cli_error("refusing to write a tar archive to a terminal; "
		    "redirect standard output");
		return CLI_EXIT_USAGE;
	}
	if ((r = guest_connect(g)) != 0)
		return r;
	r = guest_stream_run(g, "workspace.export", NULL, -1, STDOUT_FILENO,
	    &res);
	json_decref(res);
	return r;
}

static int
guest_import(struct guest *g, int argc, char **argv)
{
	json_t	*res = NULL;
	int	 r;

	if (argc != 1)
		return guest_usage("import", "< FILE.tar");
	if (isatty(STDIN_FILENO)) {
		cli_error("refusing to read a tar archive from a terminal; "
		    "redirect standard input");
		return CLI_EXIT_USAGE;
	}
	if ((r = guest_connect(g)) != 0)
		return r;
	r = guest_stream_run(g, "workspace.import", NULL, STDIN_FILENO, -1,
	    &res);
	json_decref(res);
	return r;
}

/* ---- desktops (display.*) ----------------------------------------------- */

/* "WxH" with both sides 1..max. */
static int
guest_parse_size(const char *s, int64_t max, int64_t *w, int64_t *h)
{
	char	 buf[64], *x;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	if ((x = strchr(buf, 'x')) == NULL)
		return -1;
	*x = '\0';
	if (guest_parse_int(buf, 1, max, 10, w) != 0 ||
	    guest_parse_int(x + 1, 1, max, 10, h) != 0)
		return -1;
	return 0;
}

/* "X,Y,W,H" into a region object; guestd checks it against the screen. */
static json_t *
guest_parse_region(const char *s)
{
	char	 buf[128], *p, *save = NULL;
	int64_t	 v[4];
	int	 i;

	if (strlen(s) >= sizeof(buf))
		return NULL;
	strcpy(buf, s);
	p = strtok_r(buf, ",", &save);
	for (i = 0; i < 4; i++) {
		if (p == NULL || guest_parse_int(p, i < 2 ? 0 : 1, INT32_MAX,
		    10, &v[i]) != 0)
			return NULL;
		p = strtok_r(NULL, ",", &save);
	}
	if (p != NULL)
		return NULL;
	return json_pack("{s:I, s:I, s:I, s:I}", "x", (json_int_t)v[0],
	    "y", (json_int_t)v[1], "width", (json_int_t)v[2],
	    "height", (json_int_t)v[3]);
}

static int
guest_open(struct guest *g, int argc, char **argv)
{
	static const char		*usage = "BOT [--geometry WxH]";
	static const struct option	 opts[] = {
		{ "geometry", required_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 }
	};
	json_t		*args;
	int64_t		 w, h;
	int		 ch;

	args = json_object();
	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch != 'g' || guest_parse_size(optarg, 65535, &w, &h) != 0) {
			json_decref(args);
			return guest_usage("open", usage);
		}
		json_object_set_new(args, "width", json_integer(w));
		json_object_set_new(args, "height", json_integer(h));
	}
	if (argc - optind != 1) {
		json_decref(args);
		return guest_usage("open", usage);
	}
	/* The verb's BOT wins over a global --bot. */
	g->bot = argv[optind];
	return guest_simple(g, "display.open", args, 1);
}

static int
guest_close(struct guest *g, int argc, char **argv)
{
	if (argc != 2)
		return guest_usage("close", "BOT");
	g->bot = argv[1];
	return guest_simple(g, "display.close", NULL, 1);
}

/* One display as "bot display WxH since idle controlled". */
static void
guest_displays_line(json_t *d)
{
	const char	*bot, *dpy;
	char		 since[32] = "-";
	struct tm	 tm;
	json_int_t	 ms;
	time_t		 t;

	bot = json_string_value(json_object_get(d, "bot"));
	dpy = json_string_value(json_object_get(d, "display"));
	ms = json_integer_value(json_object_get(d, "since_ms"));
	t = (time_t)(ms / 1000);
	if (ms > 0 && gmtime_r(&t, &tm) != NULL)
		strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("%s %s %" JSON_INTEGER_FORMAT "x%" JSON_INTEGER_FORMAT
	    " %s %.1fs %s\n", bot != NULL ? bot : "?",
	    dpy != NULL ? dpy : "?",
	    json_integer_value(json_object_get(d, "width")),
	    json_integer_value(json_object_get(d, "height")), since,
	    (double)json_integer_value(json_object_get(d, "idle_ms")) / 1000,
	    json_is_true(json_object_get(d, "controlled")) ? "controlled" :
	    "free");
}

static int
guest_displays(struct guest *g, int argc, char **argv)
{
	json_t	*res = NULL, *d;
	char	 err[GUEST_ERRLEN];
	size_t	 i;
	int	 as_json = 0, r;

	if (argc == 2 && strcmp(argv[1], "--json") == 0)
		as_json = 1;
	else if (argc != 1)
		return guest_usage("displays", "[--json]");
	if ((r = guest_connect(g)) != 0)
		return r;
	/* display.list takes no arguments: no bot, no fence. */
	r = gclient_call(g->c, "display.list", json_object(), &res, err,
	    sizeof(err));
	if (r != 0) {
		cli_error("%s", err);
		return CLI_EXIT_ERROR;
	}
	if (as_json)
		guest_print_json(res);
	else {
		json_array_foreach(json_object_get(res, "displays"), i, d)
			guest_displays_line(d);
		fflush(stdout);
	}
	json_decref(res);
	return CLI_EXIT_OK;
}

/*
 * Without --jpeg or --png the format follows the output's name: .jpg and
 * .jpeg ask for JPEG at guestd's default quality, anything else for PNG.
 */
static void
guest_shot_format(json_t *args, const char *out)
{
	const char	*dot;

	if (json_object_get(args, "format") != NULL)
		return;
	dot = strrchr(out, '.');
	if (dot != NULL && (strcasecmp(dot, ".jpg") == 0 ||
	    strcasecmp(dot, ".jpeg") == 0))
		json_object_set_new(args, "format", json_string("jpeg"));
	else
		json_object_set_new(args, "format", json_string("png"));
}

static int
guest_shot_parse(int argc, char **argv, json_t *args, const char **out)
{
	static const struct option	 opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "jpeg", required_argument, NULL, 'j' },
		{ "png", no_argument, NULL, 'p' },
		{ "max", required_argument, NULL, 'm' },
		{ "region", required_argument, NULL, 'r' },
		{ "since", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 }
	};
	json_t	*region;
	int64_t	 v, w, h;
	int	 ch;

	*out = NULL;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			*out = optarg;
			break;
		case 'j':
			if (guest_parse_int(optarg, 1, 100, 10, &v) != 0)
				return -1;
			json_object_set_new(args, "format",
			    json_string("jpeg"));
			json_object_set_new(args, "quality", json_integer(v));
			break;
		case 'p':
			json_object_set_new(args, "format", json_string("png"));
			json_object_del(args, "quality");
			break;
		case 'm':
			if (guest_parse_size(optarg, INT32_MAX, &w, &h) != 0)
				return -1;
			json_object_set_new(args, "max_width", json_integer(w));
			json_object_set_new(args, "max_height",
			    json_integer(h));
			break;
		case 'r':
			if ((region = guest_parse_region(optarg)) == NULL)
				return -1;
			json_object_set_new(args, "region", region);
			break;
		case 's':
			if (guest_parse_int(optarg, 0, INT64_MAX, 10, &v) != 0)
				return -1;
			json_object_set_new(args, "since_frame",
			    json_integer(v));
			break;
		default:
			return -1;
		}
	}
	/* Writing an image to a terminal or to stdout beside the JSON: no. */
	if (argc - optind != 1 || *out == NULL || strcmp(*out, "-") == 0)
		return -1;
	guest_shot_format(args, *out);
	return 0;
}

static int
guest_screenshot(struct guest *g, int argc, char **argv)
{
	static const char	*usage = "BOT -o FILE [--jpeg Q | --png] "
	    "[--max WxH] [--region X,Y,W,H] [--since FRAME]";
	json_t		*args, *res = NULL;
	const char	*out;
	char		*tmp = NULL;
	int		 fd, r;

	args = json_object();
	if (guest_shot_parse(argc, argv, args, &out) != 0) {
		json_decref(args);
		return guest_usage("screenshot", usage);
	}
	g->bot = argv[optind];
	if ((r = guest_connect(g)) != 0) {
		json_decref(args);
		return r;
	}
	/* The image lands beside FILE and replaces it only when whole. */
	if ((fd = guest_get_temp(out, &tmp)) < 0) {
		cli_error("IO_ERROR: cannot create a file beside %s: %s",
		    out, strerror(errno));
		json_decref(args);
		return CLI_EXIT_ERROR;
	}
	r = guest_stream_run(g, "display.observe", args, -1, fd, &res);
	if (r == 0 && !json_is_true(json_object_get(res, "unchanged")))
		r = guest_commit_temp(fd, tmp, out);
	else {
		/* Unchanged: FILE keeps the picture the caller already has. */
		close(fd);
		unlink(tmp);
	}
	if (r == 0)
		guest_print_json(res);
	json_decref(res);
	free(tmp);
	return r;
}

/* act: the reply, kept whole so an error's details can be shown. */
struct guest_act {
	int	 done;
	json_t	*reply;
};

static void
guest_act_reply(struct gclient *c, uint32_t id, json_t *msg, void *arg)
{
	struct guest_act	*a = arg;

	a->reply = json_incref(msg);
	a->done = 1;
}

/*
 * An error of a batch may say how far it got (done, failed, uncertain):
 * those fields, when present, go to stdout as JSON so a script can tell
 * what happened; the sentence goes to stderr as for every verb.
 */
static void
guest_act_error(json_t *reply)
{
	json_t	*e, *extra;
	char	 err[GUEST_ERRLEN];

	gclient_reply_error(reply, err, sizeof(err));
	cli_error("%s", err);
	e = json_object_get(reply, "error");
	if (!json_is_object(e))
		return;
	extra = json_deep_copy(e);
	json_object_del(extra, "code");
	json_object_del(extra, "message");
	if (json_object_size(extra) > 0)
		guest_print_json(extra);
	json_decref(extra);
}

/*
 * Send a batch op (display.act, page.act) on a connected client and wait
 * for its reply without an idle limit of our own: a batch may wait and
 * hold keys.  The result goes to standard output; so does a failure's
 * progress (guest_act_error).  args is stolen.
 */
static int
guest_run_batch(struct guest *g, const char *op, json_t *args)
{
	struct guest_act	a;
	int			r;

	memset(&a, 0, sizeof(a));
	if (gclient_request(g->c, op, guest_args(g, args), guest_act_reply,
	    NULL, &a) == 0)
		return guest_conn_failed(g, ERR_PEER_GONE);
	if ((r = gclient_run(g->c, &a.done, 0)) != 0)
		return guest_conn_failed(g, r);
	if (!json_is_true(json_object_get(a.reply, "ok"))) {
		guest_act_error(a.reply);
		json_decref(a.reply);
		return CLI_EXIT_ERROR;
	}
	guest_print_json(json_object_get(a.reply, "result"));
	json_decref(a.reply);
	return CLI_EXIT_OK;
}

static int
guest_act(struct guest *g, int argc, char **argv)
{
	static const char		*usage = "BOT [--scale S] "
	    "'JSON-ACTIONS'";
	static const struct option	 opts[] = {
		{ "scale", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 }
	};
	json_t			*args, *actions;
	json_error_t		 je;
	char			*ep;
	double			 scale = 0;
	int			 ch, r;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch != 's')
			return guest_usage("act", usage);
		errno = 0;
		scale = strtod(optarg, &ep);
		if (*optarg == '\0' || *ep != '\0' || errno != 0 ||
		    !(scale > 0))
			return guest_usage("act", usage);
	}
	if (argc - optind != 2)
		return guest_usage("act", usage);
	actions = json_loads(argv[optind + 1], JSON_REJECT_DUPLICATES, &je);
	if (!json_is_array(actions)) {
		json_decref(actions);
		cli_error("JSON-ACTIONS must be a JSON array of actions");
		return guest_usage("act", usage);
	}
	g->bot = argv[optind];
	args = json_pack("{s:o}", "actions", actions);
	if (scale > 0)
		json_object_set_new(args, "scale", json_real(scale));
	if ((r = guest_connect(g)) != 0) {
		json_decref(args);
		return r;
	}
	return guest_run_batch(g, "display.act", args);
}

static int
guest_call_verb(struct guest *g, int argc, char **argv)
{
	json_t		*args = NULL;
	json_error_t	 je;

	if (argc < 2 || argc > 3)
		return guest_usage("call", "OP [JSON-ARGS]");
	if (argc == 3) {
		args = json_loads(argv[2], JSON_REJECT_DUPLICATES, &je);
		if (!json_is_object(args)) {
			json_decref(args);
			cli_error("JSON-ARGS must be a JSON object");
			return guest_usage("call", "OP [JSON-ARGS]");
		}
	}
	return guest_simple(g, argv[1], args, 1);
}

/* ---- screen-url, revoke (the screen gateway) ----------------------------- */

/* The host part of ws://HOST:PORT/...: where the gateway is reached too. */
static int
guest_url_host(const char *url, char *host, size_t len)
{
	const char	*p, *end;

	if ((p = strstr(url, "://")) == NULL)
		return -1;
	p += 3;
	if (*p == '[') {
		if ((end = strchr(p, ']')) == NULL)
			return -1;
		end++;
	} else if ((end = strpbrk(p, ":/")) == NULL)
		end = p + strlen(p);
	if (end == p || (size_t)(end - p) >= len)
		return -1;
	memcpy(host, p, (size_t)(end - p));
	host[end - p] = '\0';
	return 0;
}

static int
guest_screen_url(struct guest *g, int argc, char **argv)
{
	static const char		*usage = "BOT [--control] [--ttl SECONDS]";
	static const struct option	 opts[] = {
		{ "control", no_argument, NULL, 'c' },
		{ "ttl", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	json_t		*args, *res = NULL;
	const char	*tok;
	char		 host[256], err[GUEST_ERRLEN];
	int64_t		 ttl = 0, gwport;
	int		 ch, control = 0, r;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 'c')
			control = 1;
		else if (ch != 't' || guest_parse_int(optarg, 1, 30 * 86400,
		    10, &ttl) != 0)
			return guest_usage("screen-url", usage);
	}
	if (argc - optind != 1 || guest_url_host(g->url, host,
	    sizeof(host)) != 0)
		return guest_usage("screen-url", usage);
	g->bot = argv[optind];
	if ((r = guest_connect(g)) != 0)
		return r;
	gwport = json_integer_value(json_object_get(gclient_hello(g->c),
	    "gateway_port"));
	if (gwport <= 0) {
		cli_error("guestd runs no screen gateway (start it with "
		    "--gateway ADDR:PORT)");
		return CLI_EXIT_ERROR;
	}
	args = json_pack("{s:s}", "policy", control ? "control" : "view");
	if (ttl > 0)
		json_object_set_new(args, "ttl", json_integer(ttl));
	if (gclient_call(g->c, "capability.grant", guest_args(g, args), &res,
	    err, sizeof(err)) != 0) {
		cli_error("%s", err);
		return CLI_EXIT_ERROR;
	}
	if ((tok = json_string_value(json_object_get(res, "token"))) == NULL) {
		json_decref(res);
		cli_error("capability.grant answered without a token");
		return CLI_EXIT_ERROR;
	}
	printf("ws://%s:%" PRId64 "/screen/%s\n", host, gwport, tok);
	printf("http://%s:%" PRId64 "/embed.html?token=%s\n", host, gwport,
	    tok);
	json_decref(res);
	return CLI_EXIT_OK;
}

/*
 * term-url TOKEN: where the terminal of a control capability (from
 * `screen-url BOT --control`) is reached; the token is checked by guestd
 * when a terminal connects, not here.
 */
static int
guest_term_url(struct guest *g, int argc, char **argv)
{
	char	 host[256];
	int64_t	 gwport;
	int	 r;

	if (argc != 2 || argv[1][0] == '\0' || strspn(argv[1],
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789-_") != strlen(argv[1]) ||
	    guest_url_host(g->url, host, sizeof(host)) != 0)
		return guest_usage("term-url", "TOKEN");
	if ((r = guest_connect(g)) != 0)
		return r;
	gwport = json_integer_value(json_object_get(gclient_hello(g->c),
	    "gateway_port"));
	if (gwport <= 0) {
		cli_error("guestd runs no screen gateway (start it with "
		    "--gateway ADDR:PORT)");
		return CLI_EXIT_ERROR;
	}
	printf("ws://%s:%" PRId64 "/term/%s\n", host, gwport, argv[1]);
	printf("http://%s:%" PRId64 "/term.html?token=%s\n", host, gwport,
	    argv[1]);
	return CLI_EXIT_OK;
}

static int
guest_revoke(struct guest *g, int argc, char **argv)
{
	if (argc != 2)
		return guest_usage("revoke", "TOKEN");
	return guest_simple(g, "capability.revoke", json_pack("{s:s}",
	    "token", argv[1]), 1);
}

/* ---- browser and page tools (G-21, G-24) --------------------------------- */

/* browser BOT [URL]: open (or focus) the bot's browser. */
static int
guest_browser(struct guest *g, int argc, char **argv)
{
	if (argc < 2 || argc > 3)
		return guest_usage("browser", "BOT [URL]");
	g->bot = argv[1];
	return guest_simple(g, "browser.open", argc == 3 ?
	    json_pack("{s:s}", "url", argv[2]) : NULL, 1);
}

static int
guest_page_navigate(struct guest *g, int argc, char **argv)
{
	if (argc != 3)
		return guest_usage("page-navigate", "BOT URL");
	g->bot = argv[1];
	return guest_simple(g, "page.navigate", json_pack("{s:s}", "url",
	    argv[2]), 1);
}

static int
guest_page_snapshot(struct guest *g, int argc, char **argv)
{
	if (argc != 2)
		return guest_usage("page-snapshot", "BOT");
	g->bot = argv[1];
	return guest_simple(g, "page.snapshot", NULL, 1);
}

/* page-act BOT JSON: JSON is the steps array or {"steps": [...]}. */
static int
guest_page_act(struct guest *g, int argc, char **argv)
{
	json_error_t		 je;
	json_t			*j;
	int			 r;

	if (argc != 3)
		return guest_usage("page-act", "BOT 'JSON-STEPS'");
	j = json_loads(argv[2], JSON_REJECT_DUPLICATES, &je);
	if (json_is_array(j))
		j = json_pack("{s:o}", "steps", j);
	if (!json_is_object(j)) {
		json_decref(j);
		cli_error("JSON-STEPS must be an array of steps or "
		    "{\"steps\": [...]}");
		return guest_usage("page-act", "BOT 'JSON-STEPS'");
	}
	g->bot = argv[1];
	if ((r = guest_connect(g)) != 0) {
		json_decref(j);
		return r;
	}
	/* As act: a failure's progress (completed, uncertain, fallback)
	 * goes to standard output as JSON. */
	return guest_run_batch(g, "page.act", j);
}

static const struct guest_verb guest_verbs[] = {
	{ "health", "", guest_health },
	{ "exec", "[--timeout-ms N] [--cwd DIR] [--env K=V]... "
	    "[--output-limit N] [--stdin-file F] [--json] -- CMD...",
	    guest_exec },
	{ "put", "LOCAL|- REMOTE [--mode OCTAL] [--parents]", guest_put },
	{ "get", "REMOTE LOCAL|- [--offset N] [--length N]", guest_get },
	{ "ls", "[--json] [PATH]", guest_ls },
	{ "stat", "PATH", guest_stat },
	{ "mkdir", "[-p] PATH", guest_mkdir },
	{ "rm", "[-r] PATH", guest_rm },
	{ "export", "> FILE.tar", guest_export },
	{ "import", "< FILE.tar", guest_import },
	{ "open", "BOT [--geometry WxH]", guest_open },
	{ "close", "BOT", guest_close },
	{ "displays", "[--json]", guest_displays },
	{ "screenshot", "BOT -o FILE [--jpeg Q | --png] [--max WxH] "
	    "[--region X,Y,W,H] [--since FRAME]", guest_screenshot },
	{ "act", "BOT [--scale S] 'JSON-ACTIONS'", guest_act },
	{ "call", "OP [JSON-ARGS]", guest_call_verb },
	{ "screen-url", "BOT [--control] [--ttl SECONDS]", guest_screen_url },
	{ "revoke", "TOKEN", guest_revoke },
	{ "term-url", "TOKEN", guest_term_url },
	{ "browser", "BOT [URL]", guest_browser },
	{ "page-navigate", "BOT URL", guest_page_navigate },
	{ "page-snapshot", "BOT", guest_page_snapshot },
	{ "page-act", "BOT 'JSON-STEPS'", guest_page_act },
};

#define GUEST_NVERBS	(sizeof(guest_verbs) / sizeof(guest_verbs[0]))

static void
guest_help(FILE *f)
{
	size_t	 i;

	fprintf(f, "usage: rakazoctl %s %s\nverbs:\n", cli_guest_entry.name,
	    cli_guest_entry.usage);
	for (i = 0; i < GUEST_NVERBS; i++)
		fprintf(f, "  %s %s\n", guest_verbs[i].name,
		    guest_verbs[i].usage);
	fprintf(f, "The secret may come from RAKAZO_GUEST_SECRET instead of "
	    "--secret-file.\n");
}

static int
guest_main(int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "secret-file", required_argument, NULL, 's' },
		{ "bot", required_argument, NULL, 'b' },
		{ "fence", required_argument, NULL, 'f' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct guest	 g;
	int64_t		 v;
	size_t		 i;
	int		 ch, r;

	memset(&g, 0, sizeof(g));
	optind = 0;
	while ((ch = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (ch) {
		case 'u':
			g.url = optarg;
			break;
		case 's':
			g.secret_file = optarg;
			break;
		case 'b':
			g.bot = optarg;
			break;
		case 'f':
			if (guest_parse_int(optarg, 0, INT64_MAX, 10,
			    &g.fence) != 0)
				return cli_usage(&cli_guest_entry);
			g.has_fence = 1;
			break;
		case 't':
			if (guest_parse_int(optarg, 1, INT32_MAX, 10, &v) != 0)
				return cli_usage(&cli_guest_entry);
			g.timeout_ms = (int)v;
			break;
		case 'h':
			guest_help(stdout);
			return CLI_EXIT_OK;
		default:
			return cli_usage(&cli_guest_entry);
		}
	}
	if (optind >= argc || g.url == NULL) {
		if (g.url == NULL)
			cli_error("--url is required");
		guest_help(stderr);
		return CLI_EXIT_USAGE;
	}
	for (i = 0; i < GUEST_NVERBS; i++)
		if (strcmp(argv[optind], guest_verbs[i].name) == 0)
			break;
	if (i == GUEST_NVERBS) {
		cli_error("unknown guest verb '%s'", argv[optind]);
		guest_help(stderr);
		return CLI_EXIT_USAGE;
	}
	r = guest_verbs[i].fn(&g, argc - optind, argv + optind);
	gclient_free(g.c);
	return r;
}

/* SPDX-License-Identifier: MIT */
/*
 * `rakazoctl guest`: talk to one guestd directly over its control channel
 * (doc/DESIGN.md G-31, C-5), for operators and for tests.  Global options name
 * the guestd and its secret; then one verb from cliguest_verbs[] follows, each
 * in its own cli-guest-*.c file and a thin mapping of a command line onto
 * one protocol op.  This file holds what the verbs share (cli-guest.h):
 * connecting, the request shapes, output helpers and the dispatcher.
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
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
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
#include "xmalloc.h"

#define CLIGUEST_SECRET_MAX	4096

static int	cliguest_main(int, char **);

const struct cli_cmd cli_guest_entry = {
	"guest",
	"--url URL [--secret-file FILE] [--bot BOT] [--fence N] "
	    "[--timeout MS] VERB ...",
	cliguest_main
};

/* ---- helpers ------------------------------------------------------------ */

int
cliguest_usage(const char *name, const char *usage)
{
	fprintf(stderr, "usage: rakazoctl guest [options] %s %s\n", name,
	    usage);
	return CLI_EXIT_USAGE;
}

int
cliguest_write_all(int fd, const void *p, size_t n)
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

void
cliguest_print_json(json_t *j)
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
json_t *
cliguest_args(struct cliguest *g, json_t *args)
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

int
cliguest_parse_int(const char *s, int64_t min, int64_t max, int base,
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
cliguest_read_secret(struct cliguest *g, char **out)
{
	char	 buf[CLIGUEST_SECRET_MAX + 1];
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

int
cliguest_connect(struct cliguest *g)
{
	struct gclient_opts	 o;
	struct errmsg		 err;
	char			*secret = NULL;
	int			 r;

	if ((r = cliguest_read_secret(g, &secret)) != 0)
		return r;
	memset(&o, 0, sizeof(o));
	o.url = g->url;
	o.secret = secret;
	o.timeout_ms = g->timeout_ms;
	r = gclient_connect(&g->c, &o, &err);
	explicit_bzero(secret, strlen(secret));
	free(secret);
	if (r == 0)
		return 0;
	cli_error("%s", err.msg);
	if (r == ERR_CONFIG)
		return CLI_EXIT_USAGE;
	if (r == ERR_CONNECT || r == ERR_UNAUTHORIZED)
		return CLI_EXIT_CONNECT;
	return CLI_EXIT_ERROR;
}

/* A failure of the connection itself (not an error reply). */
int
cliguest_conn_failed(struct cliguest *g, int r)
{
	const char	*why = gclient_error(g->c);

	cli_error("%s: %s", err_name(r), why[0] ? why : err_message(r));
	return CLI_EXIT_ERROR;
}

/* One JSON request; prints the result when print is set. */
int
cliguest_simple(struct cliguest *g, const char *op, json_t *args, int print)
{
	json_t	*res = NULL;
	struct errmsg	 err;
	int	 r;

	if ((r = cliguest_connect(g)) != 0) {
		json_decref(args);
		return r;
	}
	r = gclient_call(g->c, op, cliguest_args(strcmp(op, "health") != 0 ?
	    g : NULL, args), &res, &err);
	if (r != 0) {
		cli_error("%s", err.msg);
		return CLI_EXIT_ERROR;
	}
	if (print)
		cliguest_print_json(res);
	json_decref(res);
	return CLI_EXIT_OK;
}

/* Make a temp file beside local so the final rename is atomic. */
int
cliguest_get_temp(const char *local, char **tmpp)
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
int
cliguest_commit_temp(int fd, const char *tmp, const char *local)
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

/* "WxH" with both sides 1..max. */
int
cliguest_parse_size(const char *s, int64_t max, int64_t *w, int64_t *h)
{
	char	 buf[64], *x;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	if ((x = strchr(buf, 'x')) == NULL)
		return -1;
	*x = '\0';
	if (cliguest_parse_int(buf, 1, max, 10, w) != 0 ||
	    cliguest_parse_int(x + 1, 1, max, 10, h) != 0)
		return -1;
	return 0;
}

/* The host part of ws://HOST:PORT/...: where the gateway is reached too. */
int
cliguest_url_host(const char *url, char *host, size_t len)
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

/* mkdir [-p] PATH and rm [-r] PATH differ only in op and flag. */
int
cliguest_path_flag(struct cliguest *g, int argc, char **argv, const char *op,
    const char *optstr, const char *key, const char *usage)
{
	int	 ch, flag = 0;

	optind = 0;
	while ((ch = getopt(argc, argv, optstr)) != -1) {
		if (ch != optstr[0])
			return cliguest_usage(argv[0], usage);
		flag = 1;
	}
	if (argc - optind != 1)
		return cliguest_usage(argv[0], usage);
	return cliguest_simple(g, op, json_pack("{s:s, s:b}", "path",
	    argv[optind], key, flag), 0);
}

/* ---- streaming requests (put, get, export, import) ---------------------- */

struct cliguest_stream {
	int	 done;
	json_t	*reply;
	int	 out_fd;	/* channel 0 goes here, or -1 */
	int	 in_fd;		/* upload from here, or -1 */
	int	 out_errno;
	int	 in_errno;
	int	 got_end;
};

static void
cliguest_stream_reply(struct gclient *c, uint32_t id, json_t *msg, void *arg)
{
	struct cliguest_stream	*st = arg;

	st->reply = json_incref(msg);
	st->done = 1;
}

static int
cliguest_stream_data(struct gclient *c, uint32_t id, uint8_t channel,
    const uint8_t *p, size_t n, int end, void *arg)
{
	struct cliguest_stream	*st = arg;

	if (channel != PROTO_CH_DATA || st->out_fd < 0)
		return 0;
	if (n > 0 && cliguest_write_all(st->out_fd, p, n) != 0) {
		st->out_errno = errno;
		return ERR_IO;
	}
	if (end)
		st->got_end = 1;
	return 0;
}

static ssize_t
cliguest_stream_source(void *arg, uint8_t *p, size_t max, int *end)
{
	struct cliguest_stream	*st = arg;
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
int
cliguest_stream_run(struct cliguest *g, const char *op, json_t *args,
    int in_fd, int out_fd, json_t **result)
{
	struct cliguest_stream	 st;
	struct errmsg		 err;
	uint32_t		 id;
	int			 r;

	*result = NULL;
	memset(&st, 0, sizeof(st));
	st.in_fd = in_fd;
	st.out_fd = out_fd;
	id = gclient_request(g->c, op, cliguest_args(g, args),
	    cliguest_stream_reply, cliguest_stream_data, &st);
	if (id == 0)
		return cliguest_conn_failed(g, ERR_PEER_GONE);
	if (in_fd >= 0 && (r = gclient_upload(g->c, id, cliguest_stream_source,
	    &st)) != 0)
		return cliguest_conn_failed(g, r);
	r = gclient_run(g->c, &st.done, g->timeout_ms);
	if (r != 0) {
		if (st.in_errno != 0)
			cli_error("IO_ERROR: cannot read the input: %s",
			    strerror(st.in_errno));
		else if (st.out_errno != 0)
			cli_error("IO_ERROR: cannot write the output: %s",
			    strerror(st.out_errno));
		else
			return cliguest_conn_failed(g, r);
		return CLI_EXIT_ERROR;
	}
	if (!json_is_true(json_object_get(st.reply, "ok"))) {
		gclient_reply_error(st.reply, &err);
		cli_error("%s", err.msg);
		json_decref(st.reply);
		return CLI_EXIT_ERROR;
	}
	*result = json_incref(json_object_get(st.reply, "result"));
	json_decref(st.reply);
	return CLI_EXIT_OK;
}

/* ---- batches (act, page-act) -------------------------------------------- */

/* A batch: the reply, kept whole so an error's details can be shown. */
struct cliguest_act {
	int	 done;
	json_t	*reply;
};

static void
cliguest_act_reply(struct gclient *c, uint32_t id, json_t *msg, void *arg)
{
	struct cliguest_act	*a = arg;

	a->reply = json_incref(msg);
	a->done = 1;
}

/*
 * An error of a batch may say how far it got (done, failed, uncertain):
 * those fields, when present, go to stdout as JSON so a script can tell
 * what happened; the sentence goes to stderr as for every verb.
 */
static void
cliguest_act_error(json_t *reply)
{
	json_t	*e, *extra;
	struct errmsg	 err;

	gclient_reply_error(reply, &err);
	cli_error("%s", err.msg);
	e = json_object_get(reply, "error");
	if (!json_is_object(e))
		return;
	extra = json_deep_copy(e);
	json_object_del(extra, "code");
	json_object_del(extra, "message");
	if (json_object_size(extra) > 0)
		cliguest_print_json(extra);
	json_decref(extra);
}

/*
 * Send a batch op (display.act, page.act) on a connected client and wait
 * for its reply without an idle limit of our own: a batch may wait and
 * hold keys.  The result goes to standard output; so does a failure's
 * progress (cliguest_act_error).  args is stolen.
 */
int
cliguest_run_batch(struct cliguest *g, const char *op, json_t *args)
{
	struct cliguest_act	a;
	int			r;

	memset(&a, 0, sizeof(a));
	if (gclient_request(g->c, op, cliguest_args(g, args),
	    cliguest_act_reply, NULL, &a) == 0)
		return cliguest_conn_failed(g, ERR_PEER_GONE);
	if ((r = gclient_run(g->c, &a.done, 0)) != 0)
		return cliguest_conn_failed(g, r);
	if (!json_is_true(json_object_get(a.reply, "ok"))) {
		cliguest_act_error(a.reply);
		json_decref(a.reply);
		return CLI_EXIT_ERROR;
	}
	cliguest_print_json(json_object_get(a.reply, "result"));
	json_decref(a.reply);
	return CLI_EXIT_OK;
}

/* ---- the dispatcher ----------------------------------------------------- */

static const struct cliguest_cmd *const cliguest_verbs[] = {
	&cli_guest_health_entry,
	&cli_guest_exec_entry,
	&cli_guest_put_entry,
	&cli_guest_get_entry,
	&cli_guest_ls_entry,
	&cli_guest_stat_entry,
	&cli_guest_mkdir_entry,
	&cli_guest_rm_entry,
	&cli_guest_export_entry,
	&cli_guest_import_entry,
	&cli_guest_open_entry,
	&cli_guest_close_entry,
	&cli_guest_displays_entry,
	&cli_guest_screenshot_entry,
	&cli_guest_act_entry,
	&cli_guest_call_entry,
	&cli_guest_screen_url_entry,
	&cli_guest_revoke_entry,
	&cli_guest_term_url_entry,
	&cli_guest_browser_entry,
	&cli_guest_page_navigate_entry,
	&cli_guest_page_snapshot_entry,
	&cli_guest_page_act_entry,
};

#define CLIGUEST_NVERBS	\
	(sizeof(cliguest_verbs) / sizeof(cliguest_verbs[0]))

static void
cliguest_help(FILE *f)
{
	size_t	 i;

	fprintf(f, "usage: rakazoctl %s %s\nverbs:\n", cli_guest_entry.name,
	    cli_guest_entry.usage);
	for (i = 0; i < CLIGUEST_NVERBS; i++)
		fprintf(f, "  %s %s\n", cliguest_verbs[i]->name,
		    cliguest_verbs[i]->usage);
	fprintf(f, "The secret may come from RAKAZO_GUEST_SECRET instead of "
	    "--secret-file.\n");
}

/* The verb and the options, for its task. */
static struct cliguest			 cliguest_g;
static const struct cliguest_cmd	*cliguest_verb;

/* The verb runs as a task on the client's loop (guest-client.h). */
static int
cliguest_task(int argc, char **argv)
{
	int	 r;

	r = cliguest_verb->fn(&cliguest_g, argc, argv);
	gclient_free(cliguest_g.c);
	cliguest_g.c = NULL;
	return r;
}

static int
cliguest_main(int argc, char **argv)
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
	struct cliguest	 g;
	int64_t		 v;
	size_t		 i;
	int		 ch;

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
			if (cliguest_parse_int(optarg, 0, INT64_MAX, 10,
			    &g.fence) != 0)
				return cli_usage(&cli_guest_entry);
			g.has_fence = 1;
			break;
		case 't':
			if (cliguest_parse_int(optarg, 1, INT32_MAX, 10,
			    &v) != 0)
				return cli_usage(&cli_guest_entry);
			g.timeout_ms = (int)v;
			break;
		case 'h':
			cliguest_help(stdout);
			return CLI_EXIT_OK;
		default:
			return cli_usage(&cli_guest_entry);
		}
	}
	if (optind >= argc || g.url == NULL) {
		if (g.url == NULL)
			cli_error("--url is required");
		cliguest_help(stderr);
		return CLI_EXIT_USAGE;
	}
	for (i = 0; i < CLIGUEST_NVERBS; i++)
		if (strcmp(argv[optind], cliguest_verbs[i]->name) == 0)
			break;
	if (i == CLIGUEST_NVERBS) {
		cli_error("unknown guest verb '%s'", argv[optind]);
		cliguest_help(stderr);
		return CLI_EXIT_USAGE;
	}
	cliguest_g = g;
	cliguest_verb = cliguest_verbs[i];
	if (cliguest_verb->prepare != NULL)
		cliguest_verb->prepare();
	return gclient_main(argc - optind, argv + optind, cliguest_task);
}

/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl s3: the operator's and the tests' window on the object store
 * client (s3.c), a debug verb.  It reads the same OBJECT_STORAGE_*
 * settings as serve and runs each call as a task on its own lws loop, so
 * what it proves (signing, streaming, multipart, refusals) is what serve
 * does.  With --seal ID:REV and --key FILE, put seals and get opens the
 * object in the home store's format (rakazo-home(5)), FILE holding the
 * data key itself.
 *
 *   rakazoctl s3 put [--stream] [--seal ID:REV --key FILE] KEY FILE|-
 *   rakazoctl s3 get [--seal ID:REV --key FILE] KEY FILE|-
 *   rakazoctl s3 head KEY
 *   rakazoctl s3 ls [--max-keys N] [PREFIX]
 *   rakazoctl s3 rm KEY...
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libwebsockets.h>

#include "cli.h"
#include "curl-loop.h"
#include "err.h"
#include "s3.h"
#include "seal-key.h"
#include "seal.h"
#include "task.h"

#define CLI_S3_CHUNK	(256 * 1024)

struct cli_s3 {
	struct s3	*s3;
	struct curl_loop *loop;
	struct lws_context *ctx;
	int		 argc;
	char		**argv;
	int		 stream;
	int		 max_keys;	/* ls page size */
	const char	*seal_id;
	uint64_t	 seal_rev;
	uint8_t		 key[SEAL_KEY_LEN];
	int		 fd;		/* the local file */
	struct s3_upload *up;
	struct seal_open *op;
	struct errmsg	 e;
	int		 r;
	int		 done;
};

static int
cli_s3_open_local(struct cli_s3 *c, const char *path, int out)
{
	int	 fd;

	if (strcmp(path, "-") == 0)
		return out ? STDOUT_FILENO : STDIN_FILENO;
	fd = out ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) :
	    open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return errmsg_set(&c->e, err_from_errno(errno), "%s: %s",
		    path, strerror(errno));
	return fd;
}

static int
cli_s3_write_all(int fd, const void *p, size_t n)
{
	const char	*b = p;
	ssize_t		 w;

	while (n > 0) {
		if ((w = write(fd, b, n)) < 0) {
			if (errno == EINTR)
				continue;
			return err_from_errno(errno);
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Sealed bytes into the upload writer (a seal_sink). */
static int
cli_s3_up_sink(void *arg, const void *p, size_t n)
{
	struct cli_s3	*c = arg;

	return s3_upload_write(c->up, p, n, &c->e);
}

static ssize_t
cli_s3_src(void *arg, void *p, size_t max)
{
	struct cli_s3	*c = arg;
	ssize_t		 n;

	while ((n = read(c->fd, p, max)) < 0 && errno == EINTR)
		;
	return n < 0 ? err_from_errno(errno) : n;
}

static int
cli_s3_file_sink(void *arg, const void *p, size_t n)
{
	struct cli_s3	*c = arg;

	return cli_s3_write_all(c->fd, p, n);
}

static int
cli_s3_open_sink(void *arg, const void *p, size_t n)
{
	struct cli_s3	*c = arg;

	return seal_open_write(c->op, p, n, &c->e);
}

static int
cli_s3_put(struct cli_s3 *c, const char *key, const char *path)
{
	struct seal	*sl = NULL;
	struct stat	 st;
	uint8_t		*buf = NULL;
	uint64_t	 size;
	ssize_t		 n;
	int		 r;

	if ((c->fd = cli_s3_open_local(c, path, 0)) < 0)
		return c->fd;
	if (c->stream) {
		if (fstat(c->fd, &st) != 0 || !S_ISREG(st.st_mode))
			return errmsg_set(&c->e, ERR_NOT_REGULAR, "--stream "
			    "needs a regular file");
		if ((r = s3_put(c->s3, key, (uint64_t)st.st_size, cli_s3_src,
		    c, &c->e)) == 0)
			printf("%llu %s\n", (unsigned long long)st.st_size, key);
		goto out;
	}
	if ((r = s3_upload_begin(c->s3, key, &c->up, &c->e)) != 0)
		goto out;
	if (c->seal_id != NULL && (r = seal_new(&sl, c->key, c->seal_id,
	    c->seal_rev, cli_s3_up_sink, c, &c->e)) != 0)
		goto out;
	buf = malloc(CLI_S3_CHUNK);
	for (;;) {
		if ((n = read(c->fd, buf, CLI_S3_CHUNK)) < 0) {
			if (errno == EINTR)
				continue;
			r = errmsg_set(&c->e, err_from_errno(errno), "%s: %s",
			    path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		r = sl != NULL ? seal_write(sl, buf, (size_t)n, &c->e) :
		    s3_upload_write(c->up, buf, (size_t)n, &c->e);
		if (r != 0)
			goto out;
	}
	if (sl != NULL && (r = seal_finish(sl, &c->e)) != 0)
		goto out;
	r = s3_upload_finish(c->up, &size, &c->e);
	c->up = NULL;
	if (r == 0)
		printf("%llu %s\n", (unsigned long long)size, key);
out:
	seal_free(sl);
	s3_upload_abort(c->up);
	c->up = NULL;
	free(buf);
	return r;
}

static int
cli_s3_get(struct cli_s3 *c, const char *key, const char *path)
{
	uint64_t	 size;
	int		 r;

	if ((c->fd = cli_s3_open_local(c, path, 1)) < 0)
		return c->fd;
	if (c->seal_id == NULL)
		return s3_get(c->s3, key, cli_s3_file_sink, c, &size, &c->e);
	if ((r = seal_open_new(&c->op, c->key, c->seal_id, c->seal_rev,
	    cli_s3_file_sink, c, &c->e)) != 0)
		return r;
	if ((r = s3_get(c->s3, key, cli_s3_open_sink, c, &size, &c->e)) == 0)
		r = seal_open_finish(c->op, &c->e);
	seal_open_free(c->op);
	c->op = NULL;
	/* Refused: nothing unauthenticated stays behind. */
	if (r != 0 && strcmp(path, "-") != 0)
		unlink(path);
	return r;
}

static int
cli_s3_ls(struct cli_s3 *c, const char *prefix)
{
	struct s3_list	 l;
	char		*token = NULL;
	size_t		 i;
	int		 r;

	do {
		if ((r = s3_list(c->s3, prefix, token, c->max_keys, &l,
		    &c->e)) != 0)
			break;
		for (i = 0; i < l.n; i++)
			printf("%llu %s\n", (unsigned long long)l.items[i].size,
			    l.items[i].key);
		free(token);
		token = l.next_token;
		l.next_token = NULL;
		s3_list_release(&l);
	} while (token != NULL);
	free(token);
	return r;
}

static void
cli_s3_task(void *arg)
{
	struct cli_s3	*c = arg;
	struct s3_object o;
	const char	*verb = c->argv[0];
	int		 i;

	if (strcmp(verb, "put") == 0 && c->argc == 3)
		c->r = cli_s3_put(c, c->argv[1], c->argv[2]);
	else if (strcmp(verb, "get") == 0 && c->argc == 3)
		c->r = cli_s3_get(c, c->argv[1], c->argv[2]);
	else if (strcmp(verb, "head") == 0 && c->argc == 2) {
		if ((c->r = s3_head(c->s3, c->argv[1], &o, &c->e)) == 0)
			printf("%llu %s %s\n", (unsigned long long)o.size,
			    o.etag, c->argv[1]);
	} else if (strcmp(verb, "ls") == 0 && c->argc <= 2)
		c->r = cli_s3_ls(c, c->argc == 2 ? c->argv[1] : NULL);
	else if (strcmp(verb, "rm") == 0 && c->argc >= 2) {
		for (i = 1; i < c->argc && c->r == 0; i++)
			c->r = s3_delete(c->s3, c->argv[i], &c->e);
	} else
		c->r = ERR_BAD_REQUEST;
	if (c->fd > STDERR_FILENO)
		close(c->fd);
	fflush(stdout);
	c->done = 1;
	/*
	 * The task ran from a timer inside lws_service(), which goes on to
	 * poll: without a wake-up the loop below notices done only when
	 * lws's own 30 s poll timeout ends.
	 */
	lws_cancel_service(c->ctx);
}

static int
cli_s3_loop(struct cli_s3 *c, const struct s3_config *cfg)
{
	static struct lws_protocols		 protos[3];
	struct lws_context_creation_info	 info;
	struct lws_context			*ctx;
	struct lws_vhost			*vh;
	int					 r;

	protos[0] = task_fd_protocol;
	protos[1] = curl_loop_protocol;
	memset(&protos[2], 0, sizeof(protos[2]));
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = protos;
	info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
	info.gid = -1;
	info.uid = -1;
	if ((ctx = lws_create_context(&info)) == NULL ||
	    (vh = lws_create_vhost(ctx, &info)) == NULL) {
		if (ctx != NULL)
			lws_context_destroy(ctx);
		return errmsg_set(&c->e, ERR_INTERNAL, "cannot create the "
		    "event loop");
	}
	task_init(ctx, vh);
	c->ctx = ctx;
	if ((r = curl_loop_new(&c->loop, ctx, vh, &c->e)) == 0 &&
	    (r = s3_new(&c->s3, c->loop, cfg, &c->e)) == 0 &&
	    (r = task_spawn(cli_s3_task, c)) == 0) {
		while (!c->done)
			if (lws_service(ctx, 0) < 0)
				break;
		r = c->done ? c->r : errmsg_set(&c->e, ERR_INTERNAL, "the "
		    "event loop failed");
	}
	s3_free(c->s3);
	curl_loop_free(c->loop);
	task_shutdown();
	lws_context_destroy(ctx);
	return r;
}

static int
cli_s3_seal_opt(struct cli_s3 *c, const char *v)
{
	static char	 id[SEAL_ID_MAX + 1];
	const char	*colon = strrchr(v, ':');
	char		*end;

	if (colon == NULL || (size_t)(colon - v) > SEAL_ID_MAX)
		return -1;
	snprintf(id, sizeof(id), "%.*s", (int)(colon - v), v);
	errno = 0;
	c->seal_rev = strtoull(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || end == colon + 1)
		return -1;
	c->seal_id = id;
	return 0;
}

static int
cli_s3(int argc, char **argv)
{

	struct s3_config cfg;
	struct cli_s3	 c;
	const char	*keyfile = NULL;
	int		 enabled, created, r, i;

	memset(&c, 0, sizeof(c));
	c.fd = -1;
	if (argc < 2)
		return cli_usage(&cli_s3_entry);
	/* s3 VERB [options] ARGS: argv[i] is the verb, options follow. */
	for (i = 2; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--stream") == 0)
			c.stream = 1;
		else if (strcmp(argv[i], "--seal") == 0 && i + 1 < argc) {
			if (cli_s3_seal_opt(&c, argv[++i]) != 0)
				return cli_usage(&cli_s3_entry);
		} else if (strcmp(argv[i], "--key") == 0 && i + 1 < argc)
			keyfile = argv[++i];
		else if (strcmp(argv[i], "--max-keys") == 0 && i + 1 < argc) {
			if ((c.max_keys = atoi(argv[++i])) < 1 ||
			    c.max_keys > 1000)
				return cli_usage(&cli_s3_entry);
		}
		else
			return cli_usage(&cli_s3_entry);
	}
	/* The verb moves next to its arguments. */
	argv[i - 1] = argv[1];
	c.argv = argv + i - 1;
	c.argc = argc - i + 1;
	if ((c.seal_id == NULL) != (keyfile == NULL))
		return cli_usage(&cli_s3_entry);
	if (keyfile != NULL && (r = seal_key_load(keyfile, c.key, &created,
	    &c.e)) != 0) {
		cli_error("%s: %s", err_name(r), errmsg_str(&c.e));
		return CLI_EXIT_ERROR;
	}
	if ((r = s3_config_from_env(&cfg, &enabled, &c.e)) != 0 || !enabled) {
		if (r == 0)
			r = errmsg_set(&c.e, ERR_CONFIG, "OBJECT_STORAGE_BUCKET "
			    "is not set");
		cli_error("%s: %s", err_name(r), errmsg_str(&c.e));
		return CLI_EXIT_USAGE;
	}
	r = cli_s3_loop(&c, &cfg);
	s3_config_release(&cfg);
	explicit_bzero(c.key, sizeof(c.key));
	if (r == ERR_BAD_REQUEST && c.e.code == 0)
		return cli_usage(&cli_s3_entry);
	if (r != 0) {
		cli_error("%s: %s", err_name(r), errmsg_str(&c.e));
		return r == ERR_CONNECT || r == ERR_S3_DENIED ?
		    CLI_EXIT_CONNECT : CLI_EXIT_ERROR;
	}
	return CLI_EXIT_OK;
}

const struct cli_cmd cli_s3_entry = {
	"s3", "put [--stream] [--seal ID:REV --key FILE] KEY FILE | "
	"get [--seal ID:REV --key FILE] KEY FILE | head KEY | "
	"ls [--max-keys N] [PREFIX] | "
	"rm KEY...", cli_s3
};

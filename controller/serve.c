/*
 * rakazoctl serve (SPEC C-1): the controller daemon.  One libwebsockets
 * HTTP server (its own context, bound to loopback by default) reads each
 * request whole, body capped at 1 MiB via LWS_CALLBACK_HTTP_BODY, and
 * hands it to a worker thread that runs api_handle(): tool calls block on
 * guestd for as long as a command runs, and the loop must keep serving
 * other bots meanwhile.  A finished worker wakes the loop with
 * lws_cancel_service() (the one thread-safe lws call) and the loop writes
 * the reply.  A maintenance thread runs the reconciler (C-7) and the idle
 * stop (C-6) on a timer.
 *
 * Capabilities die with their lease (C-3, G-20): a loop timer (lws sul) is
 * set for the earliest expiry of a lease holding capabilities; when it
 * fires, a worker revokes the dead ones at guestd and reports the next
 * expiry, and the loop sets the timer again.  A request that stores a new
 * capability moves the timer earlier through api.cap_deadline.  The timer
 * also fires at start-up (a previous process's leases may have lapsed) and
 * at least every reconcile period (other processes grant too).
 *
 * Start-up refuses to run without a bearer token or a data directory: a
 * missing credential is a setup failure, never a silent fallback (C-1).
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libwebsockets.h>

#include "config.h"
#include "err.h"
#include "json.h"
#include "log.h"
#include "token.h"
#include "api.h"
#include "cli.h"
#include "provider.h"
#include "run.h"
#include "store.h"

#define SERVE_MAX_JOBS	64

struct serve_job {
	struct serve_job	*next;
	struct lws		*wsi;
	int			 done, orphan, notified;
	char			 method[8];
	char			*path, *query, *auth;
	char			*body;
	size_t			 len, cap;
	int			 too_large;
	struct api_resp		 resp;
};

struct serve_pss {
	struct serve_job	*job;
};

static pthread_mutex_t		 serve_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t		 serve_cv = PTHREAD_COND_INITIALIZER;
static struct serve_job		*serve_jobs;
static unsigned			 serve_njobs;
static struct lws_context	*serve_ctx;
static struct api		 serve_api;
static volatile sig_atomic_t	 serve_stop;
static int64_t			 serve_tick_ms;

/* The capability expiry timer; loop-owned except where noted. */
static lws_sorted_usec_list_t	 serve_sweep_sul;
static int64_t			 serve_sweep_at;	/* armed for; 0 none */
static int			 serve_sweep_running;
/* Under serve_mu: results of the worker and hints from requests. */
static int			 serve_sweep_done;
static int64_t			 serve_sweep_next, serve_sweep_hint;

static void
serve_job_free(struct serve_job *j)
{
	free(j->path);
	free(j->query);
	if (j->auth != NULL) {
		token_wipe(j->auth, strlen(j->auth));
		free(j->auth);
	}
	free(j->body);
	free(j->resp.body);
	free(j);
}

/* Called with serve_mu held. */
static void
serve_job_unlink(struct serve_job *j)
{
	struct serve_job	**pp;

	for (pp = &serve_jobs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			serve_njobs--;
			return;
		}
}

static void *
serve_worker(void *arg)
{
	struct serve_job	*j = arg;
	struct api_req		 q;

	memset(&q, 0, sizeof q);
	q.method = j->method;
	q.path = j->path;
	q.query = j->query;
	q.auth = j->auth;
	q.body = j->body;
	q.bodylen = j->len;
	q.too_large = j->too_large;
	api_handle(&serve_api, &q, &j->resp);
	pthread_mutex_lock(&serve_mu);
	j->done = 1;
	pthread_mutex_unlock(&serve_mu);
	lws_cancel_service(serve_ctx);
	return NULL;
}

static int
serve_dispatch(struct serve_job *j)
{
	pthread_attr_t	 at;
	pthread_t	 t;
	int		 r;

	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&t, &at, serve_worker, j);
	pthread_attr_destroy(&at);
	return r == 0 ? 0 : ERR_BUSY;
}

/* A reply written by the loop itself (busy), no worker involved. */
static void
serve_local_error(struct serve_job *j, int code)
{
	json_t	*e;

	e = json_pack("{s:{s:s, s:s}}", "error", "code", err_name(code),
	    "message", err_message(code));
	j->resp.status = api_status(code);
	j->resp.body = jsonx_dump(e, &j->resp.len);
	json_decref(e);
	j->done = 1;
}

static char *
serve_hdr(struct lws *wsi, enum lws_token_indexes h)
{
	int	 n = lws_hdr_total_length(wsi, h);
	char	*s;

	if (n <= 0)
		return xstrdup("");
	s = xmalloc((size_t)n + 2);
	if (lws_hdr_copy(wsi, s, n + 1, h) < 0)
		s[0] = '\0';
	return s;
}

/*
 * The query string: lws keeps each argument as a fragment, and
 * lws_hdr_copy() joins them without their '&', so join them here.
 */
static char *
serve_query(struct lws *wsi)
{
	int	 n = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS);
	int	 i, len = 0, k;
	char	*s;

	if (n <= 0)
		return xstrdup("");
	/* n bytes of arguments, at most n separators, a NUL. */
	s = xmalloc((size_t)n * 2 + 2);
	for (i = 0; ; i++) {
		if (len > 0)
			s[len++] = '&';
		k = lws_hdr_copy_fragment(wsi, s + len, n * 2 + 2 - len,
		    WSI_TOKEN_HTTP_URI_ARGS, i);
		if (k < 0) {
			if (len > 0)
				len--;
			break;
		}
		len += k;
	}
	s[len] = '\0';
	return s;
}

static struct serve_job *
serve_job_new(struct lws *wsi, const char *uri)
{
	struct serve_job	*j;
	static const struct {
		enum lws_token_indexes	 h;
		const char		*m;
	} methods[] = {
		{ WSI_TOKEN_GET_URI, "GET" }, { WSI_TOKEN_POST_URI, "POST" },
		{ WSI_TOKEN_DELETE_URI, "DELETE" }, { WSI_TOKEN_PUT_URI, "PUT" },
	};
	size_t			 i;

	j = xcalloc(1, sizeof *j);
	j->wsi = wsi;
	for (i = 0; i < sizeof methods / sizeof methods[0]; i++)
		if (lws_hdr_total_length(wsi, methods[i].h) > 0) {
			snprintf(j->method, sizeof j->method, "%s",
			    methods[i].m);
			break;
		}
	j->path = xstrdup(uri);
	j->query = serve_query(wsi);
	j->auth = serve_hdr(wsi, WSI_TOKEN_HTTP_AUTHORIZATION);
	return j;
}

static void
serve_start(struct serve_job *j)
{
	pthread_mutex_lock(&serve_mu);
	if (serve_dispatch(j) != 0)
		serve_local_error(j, ERR_BUSY);
	pthread_mutex_unlock(&serve_mu);
	if (j->done)
		lws_callback_on_writable(j->wsi);
}

static int
serve_write(struct lws *wsi, struct serve_pss *pss)
{
	struct serve_job	*j = pss->job;
	unsigned char		 hdr[LWS_PRE + 512], *p, *end, *buf;
	int			 r;

	if (j == NULL || !j->done)
		return 0;
	p = hdr + LWS_PRE;
	end = hdr + sizeof hdr - 1;
	if (lws_add_http_common_headers(wsi, (unsigned)j->resp.status,
	    "application/json", (lws_filepos_t)j->resp.len, &p, end) ||
	    lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL,
	    (const unsigned char *)"no-store", 8, &p, end) ||
	    lws_finalize_write_http_header(wsi, hdr + LWS_PRE, &p, end))
		return -1;
	buf = xmalloc(LWS_PRE + j->resp.len + 1);
	memcpy(buf + LWS_PRE, j->resp.body, j->resp.len);
	/* lws keeps whatever the socket did not take and sends it later. */
	r = lws_write(wsi, buf + LWS_PRE, j->resp.len, LWS_WRITE_HTTP_FINAL);
	free(buf);
	pthread_mutex_lock(&serve_mu);
	serve_job_unlink(j);
	pthread_mutex_unlock(&serve_mu);
	serve_job_free(j);
	pss->job = NULL;
	if (r < 0)
		return -1;
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/* ---- capability expiry (loop timer) ---------------------------------- */

static void	serve_sweep_fire(lws_sorted_usec_list_t *sul);

/* Loop thread: make the timer fire by at (ms, store clock). */
static void
serve_sweep_arm(int64_t at)
{
	int64_t	 now = store_now_ms();

	if (at <= 0 || at > now + serve_tick_ms)
		at = now + serve_tick_ms;
	if (serve_sweep_at != 0 && serve_sweep_at <= at)
		return;
	serve_sweep_at = at;
	/* +1 ms: the sweep compares expires_ms <= now. */
	lws_sul_schedule(serve_ctx, 0, &serve_sweep_sul, serve_sweep_fire,
	    (at > now ? at - now + 1 : 1) * LWS_US_PER_MS);
}

static void *
serve_sweep_worker(void *arg)
{
	int64_t	 next = 0;
	int	 n = 0;

	(void)arg;
	if (api_cap_sweep(&serve_api, &n, &next) == 0 && n > 0)
		log_info("control.expired", "revoked=%d", n);
	pthread_mutex_lock(&serve_mu);
	serve_sweep_next = next;
	serve_sweep_done = 1;
	pthread_mutex_unlock(&serve_mu);
	lws_cancel_service(serve_ctx);
	return NULL;
}

/* The timer: revoking talks to guestd, so a worker does it. */
static void
serve_sweep_fire(lws_sorted_usec_list_t *sul)
{
	pthread_attr_t	 at;
	pthread_t	 t;
	int		 r;

	(void)sul;
	serve_sweep_at = 0;
	if (serve_sweep_running)
		return;		/* its completion re-arms */
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&t, &at, serve_sweep_worker, NULL);
	pthread_attr_destroy(&at);
	if (r == 0)
		serve_sweep_running = 1;
	else
		serve_sweep_arm(0);
}

/* Called from request threads (api.cap_deadline). */
static void
serve_cap_deadline(int64_t at_ms)
{
	pthread_mutex_lock(&serve_mu);
	if (serve_sweep_hint == 0 || at_ms < serve_sweep_hint)
		serve_sweep_hint = at_ms;
	pthread_mutex_unlock(&serve_mu);
	lws_cancel_service(serve_ctx);
}

/* Loop side of a wake-up: a finished sweep or a new deadline. */
static void
serve_sweep_collect(void)
{
	int64_t	 next = 0, hint;
	int	 done;

	pthread_mutex_lock(&serve_mu);
	done = serve_sweep_done;
	if (done) {
		serve_sweep_done = 0;
		next = serve_sweep_next;
	}
	hint = serve_sweep_hint;
	serve_sweep_hint = 0;
	pthread_mutex_unlock(&serve_mu);
	if (done) {
		serve_sweep_running = 0;
		serve_sweep_arm(next);
	}
	if (hint != 0)
		serve_sweep_arm(hint);
}

/* Loop side of a wake-up: reply where a worker finished. */
static void
serve_collect(void)
{
	struct serve_job	*j, *next;

	pthread_mutex_lock(&serve_mu);
	for (j = serve_jobs; j != NULL; j = next) {
		next = j->next;
		if (!j->done)
			continue;
		if (j->orphan) {
			serve_job_unlink(j);
			serve_job_free(j);
		} else if (!j->notified) {
			j->notified = 1;
			lws_callback_on_writable(j->wsi);
		}
	}
	pthread_cond_broadcast(&serve_cv);
	pthread_mutex_unlock(&serve_mu);
}

static int
serve_http_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	struct serve_pss	*pss = user;
	struct serve_job	*j;
	char			 cl[32];
	long long		 n;

	switch (reason) {
	case LWS_CALLBACK_HTTP:
		if (pss->job != NULL)
			return -1;
		pthread_mutex_lock(&serve_mu);
		if (serve_njobs >= SERVE_MAX_JOBS) {
			pthread_mutex_unlock(&serve_mu);
			lws_return_http_status(wsi, 503, NULL);
			return -1;
		}
		j = serve_job_new(wsi, (const char *)in);
		j->next = serve_jobs;
		serve_jobs = j;
		serve_njobs++;
		pthread_mutex_unlock(&serve_mu);
		pss->job = j;
		n = -1;
		if (lws_hdr_copy(wsi, cl, sizeof cl,
		    WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0)
			n = strtoll(cl, NULL, 10);
		if (n > API_MAX_BODY)
			j->too_large = 1;
		/* Bodies come through HTTP_BODY; the rest runs now. */
		if (strcmp(j->method, "GET") == 0 || n <= 0)
			serve_start(j);
		return 0;
	case LWS_CALLBACK_HTTP_BODY:
		if ((j = pss->job) == NULL)
			return -1;
		if (j->too_large || j->len + len > API_MAX_BODY) {
			/* Read and drop the rest so the 413 reaches them. */
			j->too_large = 1;
			return 0;
		}
		if (j->len + len > j->cap) {
			j->cap = (j->len + len) * 2;
			if (j->cap > API_MAX_BODY)
				j->cap = API_MAX_BODY;
			j->body = xrealloc(j->body, j->cap);
		}
		memcpy(j->body + j->len, in, len);
		j->len += len;
		return 0;
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		if (pss->job == NULL)
			return -1;
		serve_start(pss->job);
		return 0;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return serve_write(wsi, pss);
	case LWS_CALLBACK_CLOSED_HTTP:
		if ((j = pss->job) == NULL)
			return 0;
		pss->job = NULL;
		pthread_mutex_lock(&serve_mu);
		if (j->done) {
			serve_job_unlink(j);
			serve_job_free(j);
		} else
			j->orphan = 1;	/* the worker still holds it */
		pthread_mutex_unlock(&serve_mu);
		return 0;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		serve_collect();
		if (serve_ctx != NULL)
			serve_sweep_collect();
		return 0;
	default:
		break;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

static const struct lws_protocols serve_protocols[] = {
	{ "http", serve_http_cb, sizeof(struct serve_pss), 0, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

/* ---- maintenance ------------------------------------------------------ */

static void *
serve_maintenance(void *arg)
{
	struct timespec	 ts;
	int		 changed, stopped;

	pthread_mutex_lock(&serve_mu);
	while (!serve_stop) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += serve_tick_ms / 1000;
		ts.tv_nsec += (serve_tick_ms % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		(void)pthread_cond_timedwait(&serve_cv, &serve_mu, &ts);
		if (serve_stop)
			break;
		pthread_mutex_unlock(&serve_mu);
		if (api_reconcile(&serve_api, &changed) == 0 && changed > 0)
			log_info("reconcile", "changed=%d", changed);
		(void)api_idle_sweep(&serve_api, &stopped);
		pthread_mutex_lock(&serve_mu);
	}
	pthread_mutex_unlock(&serve_mu);
	return NULL;
}

static void
serve_on_signal(int sig)
{
	serve_stop = 1;
	if (serve_ctx != NULL)
		lws_cancel_service(serve_ctx);
}

/* ---- start-up ----------------------------------------------------------- */

static int
serve_usage(FILE *f)
{
	fprintf(f, "usage: rakazoctl serve --data-dir DIR (--token-file F | "
	    "RAKAZO_API_TOKEN) [--listen ADDR:PORT] [--provider NAME]\n"
	    "       [--idle-ms N] [--reconcile-ms N] [--guestd PATH] "
	    "[--guest-user NAME] [--ready-file F] [--log-level L]\n");
	return CLI_EXIT_USAGE;
}

static int
serve_write_ready(const char *path, int port)
{
	char	 line[16];
	int	 fd, n, r = 0;

	/* Non-blocking: a FIFO without a reader must not hang start-up. */
	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK,
	    0644)) == -1)
		return -1;
	n = snprintf(line, sizeof line, "%d\n", port);
	if (write(fd, line, (size_t)n) != n)
		r = -1;
	close(fd);
	return r;
}

static int
serve_main(int argc, char **argv)
{
	const char	*listen_s = "127.0.0.1:8420", *data_dir = NULL;
	const char	*token_file = NULL, *provider = "local";
	const char	*guestd = "guestd", *guest_user = "nobody";
	const char	*ready = NULL, *level = "info";
	int64_t		 idle_ms = 1800000, reconcile_ms = 30000;
	const struct config_opt opts[] = {
		{ "listen", "RAKAZO_LISTEN", CONFIG_STR, &listen_s, 0, 0,
		  "ADDR:PORT (default 127.0.0.1:8420)" },
		{ "data-dir", "DATA_DIR", CONFIG_STR, &data_dir, 0, 0,
		  "state and computers live here" },
		{ "token-file", "RAKAZO_API_TOKEN_FILE", CONFIG_STR,
		  &token_file, 0, 0, "bearer token file (mode 0600)" },
		{ "provider", "SANDBOX_PROVIDER", CONFIG_STR, &provider, 0, 0,
		  "local, fake or none" },
		{ "idle-ms", "SANDBOX_IDLE_MS", CONFIG_INT, &idle_ms, 0,
		  INT64_C(1) << 40, "stop idle computers after (0: never)" },
		{ "reconcile-ms", "RAKAZO_RECONCILE_MS", CONFIG_INT,
		  &reconcile_ms, 100, 86400000, "reconciler period" },
		{ "guestd", "RAKAZO_GUESTD", CONFIG_STR, &guestd, 0, 0,
		  "guestd binary for the local provider" },
		{ "guest-user", "RAKAZO_GUEST_USER", CONFIG_STR, &guest_user,
		  0, 0, "user guestd becomes when we are root" },
		{ "ready-file", NULL, CONFIG_STR, &ready, 0, 0,
		  "write the bound port here once listening" },
		{ "log-level", "RAKAZO_LOG_LEVEL", CONFIG_STR, &level, 0, 0,
		  "error, warn, info or debug" },
	};
	struct lws_context_creation_info info;
	struct provider_config	 pc;
	struct provider		*prov = NULL;
	struct store		*s = NULL;
	struct lws_vhost	*vh;
	char			 err[512], host[256], tok[SECRET_MAX + 1];
	const char		*envtok;
	pthread_t		 mt;
	int			 next, port, r, lvl, changed, mt_ok = 0;
	int			 status = CLI_EXIT_ERROR;

	if (argc > 1 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		serve_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (config_parse(opts, sizeof opts / sizeof opts[0], argc, argv,
	    &next, err, sizeof err) != 0) {
		cli_error("%s", err);
		return serve_usage(stderr);
	}
	if (next != argc)
		return serve_usage(stderr);
	if ((lvl = log_level_parse(level)) < 0) {
		cli_error("CONFIG_INVALID: --log-level %s is not a level",
		    level);
		return CLI_EXIT_USAGE;
	}
	log_init("rakazoctl", (enum log_level)lvl);
	if (data_dir == NULL || *data_dir == '\0') {
		cli_error("CONFIG_INVALID: no data directory: give --data-dir "
		    "DIR or DATA_DIR");
		return CLI_EXIT_USAGE;
	}
	/* The API token: a file, else the environment; never a default. */
	if (token_file != NULL) {
		if (token_read_file(token_file, tok, sizeof tok, 1) != 0) {
			cli_error("CONFIG_INVALID: cannot use the token file "
			    "(missing, empty, or readable by others)");
			return CLI_EXIT_USAGE;
		}
	} else if ((envtok = getenv("RAKAZO_API_TOKEN")) != NULL &&
	    *envtok != '\0' && strlen(envtok) <= SECRET_MAX) {
		snprintf(tok, sizeof tok, "%s", envtok);
		unsetenv("RAKAZO_API_TOKEN");
	} else {
		cli_error("CONFIG_INVALID: no API token: give --token-file F "
		    "or RAKAZO_API_TOKEN; the controller never runs without "
		    "one");
		return CLI_EXIT_USAGE;
	}
	if (config_parse_hostport(listen_s, host, sizeof host, &port) != 0) {
		cli_error("CONFIG_INVALID: --listen wants ADDR:PORT");
		return CLI_EXIT_USAGE;
	}
	/* state.db, secrets and logs are ours alone. */
	umask(077);
	if (mkdir(data_dir, 0700) == -1 && errno != EEXIST) {
		cli_error("IO_ERROR: cannot create the data directory: %s",
		    strerror(errno));
		return CLI_EXIT_ERROR;
	}
	memset(&pc, 0, sizeof pc);
	pc.data_dir = data_dir;
	pc.guestd = guestd;
	pc.guest_user = guest_user;
	if (provider_new(&prov, provider, &pc, err, sizeof err) != 0) {
		cli_error("CONFIG_INVALID: %s", err);
		return CLI_EXIT_USAGE;
	}
	/* Open (and migrate) now so a broken store stops start-up. */
	if ((r = store_open(&s, data_dir, err, sizeof err)) != 0) {
		cli_error("%s: %s", err_name(r), err);
		goto out;
	}
	store_free(s);
	serve_api.store_url = data_dir;
	serve_api.prov = prov;
	serve_api.token = tok;
	serve_api.idle_ms = idle_ms;
	serve_api.cap_deadline = serve_cap_deadline;
	serve_tick_ms = reconcile_ms;
	if (idle_ms > 0 && idle_ms / 4 < serve_tick_ms)
		serve_tick_ms = idle_ms / 4 > 100 ? idle_ms / 4 : 100;
	/* C-7: rows match reality before the first request. */
	if ((r = api_reconcile(&serve_api, &changed)) != 0) {
		cli_error("%s: the start-up reconciler failed", err_name(r));
		goto out;
	}
	log_info("reconcile", "changed=%d at=start", changed);

	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, serve_on_signal);
	signal(SIGINT, serve_on_signal);
	memset(&info, 0, sizeof info);
	info.port = port;
	info.iface = host;
	info.protocols = serve_protocols;
	/* MACHINE-NOTES: iface is ignored while IPv6 is on. */
	info.options = LWS_SERVER_OPTION_DISABLE_IPV6 |
	    LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
	if ((serve_ctx = lws_create_context(&info)) == NULL ||
	    (vh = lws_create_vhost(serve_ctx, &info)) == NULL) {
		cli_error("CONNECT_FAILED: cannot listen on %s", listen_s);
		goto out;
	}
	port = lws_get_vhost_listen_port(vh);
	log_info("serve.listening", "addr=%s port=%d provider=%s data_dir=%s",
	    host, port, provider_name(prov), data_dir);
	if (ready != NULL && serve_write_ready(ready, port) != 0) {
		cli_error("IO_ERROR: cannot write the ready file");
		goto out;
	}
	if (pthread_create(&mt, NULL, serve_maintenance, NULL) == 0)
		mt_ok = 1;
	/* Now: capabilities of leases that lapsed while no one watched. */
	serve_sweep_arm(store_now_ms());
	while (!serve_stop)
		if (lws_service(serve_ctx, 0) < 0)
			break;
	status = CLI_EXIT_OK;
out:
	pthread_mutex_lock(&serve_mu);
	serve_stop = 1;
	pthread_cond_broadcast(&serve_cv);
	pthread_mutex_unlock(&serve_mu);
	if (mt_ok)
		pthread_join(mt, NULL);
	/* Computers keep running: a restarted controller reconnects. */
	if (serve_ctx != NULL)
		lws_context_destroy(serve_ctx);
	serve_ctx = NULL;
	token_wipe(tok, sizeof tok);
	provider_free(prov);
	return status;
}

const struct cli_cmd cli_serve_entry = {
	"serve", "--data-dir DIR --token-file F [--listen ADDR:PORT] "
	    "[--provider local|fake|none]", serve_main
};

/* SPDX-License-Identifier: MIT */
/*
 * guestd: the one native daemon inside a computer image.
 *
 * Start-up order matters for safety: read the secret (possibly root-only),
 * drop to the workspace user for good, only then touch the workspace
 * and open the listening socket, bound to exactly the address we were given.
 * From there on one lws service loop runs everything (loop.c).
 */
#include "autoconf.h"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libwebsockets.h>

#include "capability.h"
#include "browser.h"
#include "deskserver.h"
#include "config.h"
#include "control.h"
#include "err.h"
#include "files.h"
#include "guestd.h"
#include "log.h"
#include "loop.h"
#include "nss.h"
#include "ops.h"
#include "gateway.h"
#include "pty.h"
#include "rfb.h"
#include "token.h"
#include "workspace.h"
#include "xmalloc.h"

struct guestd_settings guestd;

static const char	*main_listen = "127.0.0.1:7000";
static const char	*main_secret_file;
static const char	*main_workspace;
static const char	*main_user;
static const char	*main_ready_file;
static const char	*main_log_level = "info";
/* The home size cap: no restore may grow a home past it (a small tar can
 * declare huge sparse files) and no checkpoint holds more. */
static uint64_t		 main_home_max_bytes = 16ULL << 30;
static int64_t		 main_import_max_entries = 1000000;
static uint64_t		 main_exec_max_output = 64ULL << 20;
static int64_t		 main_exec_max_timeout_ms = 86400000;
static int64_t		 main_exec_max_running = 64;
static const char	*main_gateway;
static const char	*main_gateway_pages;
static const char	*main_novnc;
#ifndef GUESTD_TERM_DIR
#define GUESTD_TERM_DIR	"/usr/share/rakazo-computer/term"
#endif
static const char	*main_term_assets = GUESTD_TERM_DIR;
static const char	*main_compat;
static const char	*main_debug_vnc;
static int64_t		 main_debug_vnc_base = 5900;
static int		 main_debug_vnc_control;

static const struct config_opt main_opts[] = {
	{ "listen", "GUESTD_LISTEN", CONFIG_STR, &main_listen, 0, 0,
	  "ADDR:PORT to listen on (default 127.0.0.1:7000; port 0 picks one)" },
	{ "secret-file", "GUESTD_SECRET_FILE", CONFIG_STR, &main_secret_file,
	  0, 0, "file holding the control bearer secret (or GUESTD_SECRET)" },
	{ "workspace", "GUESTD_WORKSPACE", CONFIG_STR, &main_workspace, 0, 0,
	  "workspace directory (created if missing)" },
	{ "user", "GUESTD_USER", CONFIG_STR, &main_user, 0, 0,
	  "workspace user to become (required when started as root)" },
	{ "ready-file", NULL, CONFIG_STR, &main_ready_file, 0, 0,
	  "write the bound port here once listening (a FIFO works)" },
	{ "log-level", "GUESTD_LOG_LEVEL", CONFIG_STR, &main_log_level, 0, 0,
	  "error, warn, info or debug" },
	{ "home-max-bytes", "GUESTD_HOME_MAX_BYTES", CONFIG_SIZE,
	  &main_home_max_bytes, 1, INT64_MAX,
	  "the home size cap: file sizes, sparse holes included, an export "
	  "or import may hold (default 16G)" },
	{ "import-max-bytes", "GUESTD_IMPORT_MAX_BYTES", CONFIG_SIZE,
	  &main_home_max_bytes, 1, INT64_MAX,
	  "the older name of --home-max-bytes" },
	{ "import-max-entries", "GUESTD_IMPORT_MAX_ENTRIES", CONFIG_INT,
	  &main_import_max_entries, 1, INT64_MAX,
	  "entries a workspace import may hold (default 1000000)" },
	{ "exec-max-output", "GUESTD_EXEC_MAX_OUTPUT", CONFIG_SIZE,
	  &main_exec_max_output, 1, INT64_MAX,
	  "largest output_limit a command may ask for (default 64M)" },
	{ "exec-max-timeout-ms", "GUESTD_EXEC_MAX_TIMEOUT_MS", CONFIG_INT,
	  &main_exec_max_timeout_ms, 1, INT64_MAX,
	  "largest timeout_ms a command may ask for (default 86400000)" },
	{ "exec-max-running", "GUESTD_EXEC_MAX_RUNNING", CONFIG_INT,
	  &main_exec_max_running, 1, 100000,
	  "commands running at once (default 64)" },
	{ "gateway", "GUESTD_GATEWAY", CONFIG_STR, &main_gateway, 0, 0,
	  "ADDR[:PORT] of the screen gateway (port 6080 if none; off unless "
	  "given)" },
	{ "gateway-pages", "GUESTD_GATEWAY_PAGES", CONFIG_STR,
	  &main_gateway_pages, 0, 0,
	  "directory of static files the gateway serves (embed.html, noVNC)" },
	{ "novnc", "GUESTD_NOVNC", CONFIG_STR, &main_novnc, 0, 0,
	  "noVNC directory served at /novnc/ (default /usr/share/novnc)" },
	{ "term-assets", "GUESTD_TERM_ASSETS", CONFIG_STR, &main_term_assets,
	  0, 0, "terminal page directory: term.html and xterm/ (default "
	  GUESTD_TERM_DIR ")" },
	{ "compat", "GUESTD_COMPAT", CONFIG_STR, &main_compat, 0, 0,
	  "ADDR:PORT of the drop-in POST /v1/desktop server (G-33; usually "
	  "port 7070; off unless given)" },
	{ "debug-vnc", "GUESTD_DEBUG_VNC", CONFIG_STR, &main_debug_vnc, 0, 0,
	  "loopback ADDR: each display's RFB on ADDR port 5900+slot" },
	{ "debug-vnc-base", "GUESTD_DEBUG_VNC_BASE", CONFIG_INT,
	  &main_debug_vnc_base, 1, 65535,
	  "first debug VNC port (default 5900)" },
	{ "debug-vnc-control", "GUESTD_DEBUG_VNC_CONTROL", CONFIG_BOOL,
	  &main_debug_vnc_control, 0, 0,
	  "debug VNC viewers may inject input (default view only)" },
};
#define MAIN_NOPTS (sizeof main_opts / sizeof main_opts[0])

static void
main_usage(FILE *f)
{
	size_t	i;

	fprintf(f, "usage: guestd --listen ADDR:PORT --secret-file FILE "
	    "--workspace DIR [--user NAME] [options]\n");
	for (i = 0; i < MAIN_NOPTS; i++)
		fprintf(f, "  --%-20s %s\n", main_opts[i].flag, main_opts[i].help);
}

static void	main_die(const char *, ...)
		    __attribute__((format(printf, 1, 2), noreturn));

static void
main_die(const char *fmt, ...)
{
	va_list	ap;

	fputs("guestd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void
main_read_secret(char *secret, size_t len)
{
	const char	*env;
	int		 r;

	if (main_secret_file != NULL) {
		r = token_read_file(main_secret_file, secret, len, 1);
		if (r != 0)
			main_die("cannot use the secret file: %s: %s",
			    err_name(r), err_message(r));
	} else if ((env = getenv("GUESTD_SECRET")) != NULL && *env != '\0') {
		if (strlen(env) >= len)
			main_die("GUESTD_SECRET is too long");
		snprintf(secret, len, "%s", env);
	} else
		main_die("no control secret: give --secret-file FILE or "
		    "GUESTD_SECRET; guestd never runs without one");
	/* Commands must not inherit it. */
	if (getenv("GUESTD_SECRET") != NULL) {
		env = getenv("GUESTD_SECRET");
		token_wipe((void *)env, strlen(env));
		unsetenv("GUESTD_SECRET");
	}
}

/*
 * never run as root.  As root we need --user and become it for good
 * (supplementary groups too); otherwise we stay who we are.
 */
static void
main_drop_privileges(void)
{
	struct passwd	*pw;

	if (geteuid() == 0 || getuid() == 0) {
		if (main_user == NULL)
			main_die("refusing to run as root: give --user NAME, the "
			    "unprivileged workspace user to become");
		if ((pw = getpwnam(main_user)) == NULL)
			main_die("no such user: %s", main_user);
		if (pw->pw_uid == 0)
			main_die("--user %s is root; give an unprivileged user",
			    main_user);
		if (setgroups(1, &pw->pw_gid) != 0 ||
		    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) != 0 ||
		    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) != 0)
			main_die("cannot become %s: %s", main_user,
			    strerror(errno));
		if (setuid(0) == 0 || geteuid() == 0)
			main_die("privileges could not be dropped");
	} else if (main_user != NULL) {
		if ((pw = getpwnam(main_user)) == NULL || pw->pw_uid != getuid())
			main_die("--user %s: only root can switch users",
			    main_user);
	}
	guestd.uid = getuid();
	guestd.gid = getgid();
	pw = getpwuid(guestd.uid);
	/* A uid without a passwd entry (G-19) still gets a name. */
	guestd.user = xstrdup(pw != NULL ? pw->pw_name : "rakazo");
}

static void
main_workspace_setup(void)
{
	char		 real[PATH_MAX];
	struct stat	 st;
	size_t		 n;
	int		 r;

	if (main_workspace == NULL)
		main_die("no workspace: give --workspace DIR");
	if (mkdir(main_workspace, 0755) == -1 && errno != EEXIST)
		main_die("cannot create the workspace: %s", strerror(errno));
	if (realpath(main_workspace, real) == NULL)
		main_die("workspace: %s", strerror(errno));
	if (stat(real, &st) == -1 || !S_ISDIR(st.st_mode))
		main_die("workspace is not a directory");
	if (access(real, R_OK | W_OK | X_OK) == -1)
		main_die("workspace is not writable by %s", guestd.user);
	guestd.workspace = xstrdup(real);
	/* An import a crash cut short ends as the old or the new tree
	 * before anyone sees the workspace. */
	if ((r = workspace_recover(guestd.workspace)) != 0)
		log_error("workspace.recover_failed", "error=%s", err_name(r));
	/* Temp files of writes a crash cut short are never whole files. */
	if ((n = files_clean_stale(guestd.workspace)) > 0)
		log_info("files.stale_temps_removed", "n=%zu", n);
}

static void
main_lws_log(int level, const char *line)
{
	char	buf[512];
	size_t	n;

	snprintf(buf, sizeof buf, "%s", line);
	n = strlen(buf);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	log_warn("lws", "level=%d msg=\"%s\"", level, buf);
}

/* Plain HTTP on the control port: nothing to serve. */
static int
main_http_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		/* A websocket without our subprotocol. */
		return -1;
	case LWS_CALLBACK_HTTP:
		if (lws_return_http_status(wsi, HTTP_STATUS_NOT_FOUND, NULL))
			return -1;
		return lws_http_transaction_completed(wsi) ? -1 : 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

static struct lws_protocols main_protocols[4];

/*
 * Opened before privileges are dropped, so a root-made FIFO or file works;
 * written once the port is bound.
 */
static int
main_open_ready(void)
{
	int	fd;

	if (main_ready_file == NULL)
		return -1;
	fd = open(main_ready_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644);
	if (fd == -1)
		main_die("ready file: %s", strerror(errno));
	return fd;
}

static void
main_write_ready(int fd, int port)
{
	char	buf[32];
	int	n;

	if (fd == -1)
		return;
	n = snprintf(buf, sizeof buf, "%d\n", port);
	/* Second line, for tests that ask for port 0. */
	if (deskserver_port() > 0)
		n += snprintf(buf + n, sizeof buf - (size_t)n, "compat=%d\n",
		    deskserver_port());
	if (write(fd, buf, (size_t)n) != n)
		main_die("ready file: %s", strerror(errno));
	close(fd);
}

int
main(int argc, char **argv)
{
	struct lws_context_creation_info info;
	struct lws_context	*ctx;
	struct lws_vhost	*vh;
	struct errmsg	 err;
	char			 host[256];
	char			 secret[SECRET_MAX + 1];
	sigset_t		 set;
	int			 next, port, lvl, i, readyfd, r;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			main_usage(stdout);
			return 0;
		}
		if (strcmp(argv[i], "--version") == 0) {
			puts(GUESTD_VERSION_STRING);
			return 0;
		}
	}
	if (config_parse(main_opts, MAIN_NOPTS, argc, argv, &next, &err) != 0)
		main_die("%s", err.msg);
	if (next < argc)
		main_die("unexpected argument: %s", argv[next]);
	if ((lvl = log_level_parse(main_log_level)) < 0)
		main_die("unknown log level: %s", main_log_level);
	log_init("guestd", (enum log_level)lvl);
	if (config_parse_hostport(main_listen, host, sizeof host, &port) != 0)
		main_die("--listen wants ADDR:PORT, got %s", main_listen);

	/* G-16: never a debug port on anything but loopback. */
	if (main_debug_vnc != NULL && rfb_set_debug(main_debug_vnc,
	    (int)main_debug_vnc_base, main_debug_vnc_control) != 0)
		main_die("--debug-vnc wants an IPv4 loopback address "
		    "(127.0.0.1), got %s", main_debug_vnc);
	main_read_secret(secret, sizeof secret);
	readyfd = main_open_ready();
	main_drop_privileges();
	main_workspace_setup();

	guestd.shell = "/bin/bash";
	/* Without the names a child only loses its name (G-19). */
	if ((r = nss_init(guestd.user, guestd.uid, guestd.gid,
	    guestd.workspace, guestd.shell)) != 0)
		log_error("nss.init_failed", "error=%s", err_name(r));
	guestd.home_max_bytes = main_home_max_bytes;
	guestd.import_max_entries = (uint64_t)main_import_max_entries;
	guestd.exec_max_output = main_exec_max_output;
	guestd.exec_max_timeout_ms = main_exec_max_timeout_ms;
	guestd.exec_max_running = main_exec_max_running;
	guestd.started_ms = loop_now_ms();

	/* Signals arrive through loop.c's signalfd; block them everywhere
	 * before any thread exists. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	/*
	 * Orphaned grandchildren (a command's background jobs) become ours,
	 * so the loop reaps them at once and a cancel can confirm that a
	 * process group is really gone.
	 */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		log_warn("guestd.subreaper", "error=\"%s\"", strerror(errno));

	control_set_secret(secret);
	deskserver_set_secret(secret);
	token_wipe(secret, sizeof secret);
	control_set_ops(ops_table, ops_count);

	lws_set_log_level(LLL_ERR | LLL_WARN, main_lws_log);
	main_protocols[0] = (struct lws_protocols){ "http", main_http_cb, 0, 0,
	    0, NULL, 0 };
	main_protocols[1] = control_protocol;
	main_protocols[2] = loop_raw_protocol;
	memset(&main_protocols[3], 0, sizeof main_protocols[3]);

	/*
	 * The context takes the control listener's address options too: lws
	 * checks DISABLE_IPV6 on the context as well as on each vhost (see
	 * loop_listen_options()).
	 */
	memset(&info, 0, sizeof info);
	info.port = port;
	info.iface = host;
	info.protocols = main_protocols;
	info.gid = -1;
	info.uid = -1;
	info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS |
	    loop_listen_options(host);
	if ((ctx = lws_create_context(&info)) == NULL)
		main_die("cannot create the service context");
	if ((vh = loop_listen(ctx, NULL, host, port, main_protocols)) == NULL)
		main_die("cannot listen on %s", main_listen);
	loop_init(ctx, vh);
	capability_init();
	capability_on_revoke(pty_drop);
	if (main_gateway != NULL) {
		char	gwhost[256];
		int	gwport = 6080;

		if (strchr(main_gateway, ':') == NULL)
			snprintf(gwhost, sizeof gwhost, "%s", main_gateway);
		else if (config_parse_hostport(main_gateway, gwhost,
		    sizeof gwhost, &gwport) != 0)
			main_die("--gateway wants ADDR[:PORT], got %s",
			    main_gateway);
		if (main_novnc != NULL)
			gateway_set_novnc(main_novnc);
		gateway_set_term_assets(main_term_assets);
		gateway_set_term(pty_gateway_cb);
		if (gateway_start(ctx, gwhost, gwport, main_gateway_pages) != 0)
			main_die("cannot start the gateway on %s", main_gateway);
	}
	if (main_compat != NULL) {
		char	chost[256];
		int	cport;

		if (config_parse_hostport(main_compat, chost, sizeof chost,
		    &cport) != 0)
			main_die("--compat wants ADDR:PORT, got %s", main_compat);
		if (deskserver_start(ctx, chost, cport) != 0)
			main_die("cannot start the compat server on %s",
			    main_compat);
	}
	port = lws_get_vhost_listen_port(vh);
	log_info("guestd.listening", "addr=%s port=%d workspace=%s user=%s",
	    host, port, guestd.workspace, guestd.user);
	main_write_ready(readyfd, port);

	loop_run();

	log_info("guestd.stopping", "connections=%u", control_count());
	/* Browsers first, while their X servers still run (G-21). */
	browser_shutdown();
	control_close_all();
	lws_context_destroy(ctx);
	return 0;
}

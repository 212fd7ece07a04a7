/* SPDX-License-Identifier: MIT */
/*
 * What the verbs of `rakazoctl guest` share (cli-guest-*.c): the global
 * options, one table entry per verb, connecting with the secret, and the
 * request shapes more than one verb uses (one JSON call, a streamed body,
 * a batch).  Each helper prints its own error and returns an exit status
 * from cli.h, so a verb can return what it gets.
 */
#ifndef CONTROLLER_CLI_GUEST_H
#define CONTROLLER_CLI_GUEST_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* The global options, and the client once a verb has connected. */
struct cliguest {
	const char	*url;
	const char	*secret_file;
	const char	*bot;
	int64_t		 fence;
	int		 has_fence;
	int		 timeout_ms;	/* 0: defaults */
	struct gclient	*c;
};

/*
 * One verb: fn gets argv starting at the verb's own name.  A verb parses
 * its arguments before connecting, so a usage error never needs a server.
 */
struct cliguest_cmd {
	const char	*name;
	const char	*usage;		/* arguments after the name */
	int		(*fn)(struct cliguest *g, int argc, char **argv);
	/*
	 * Optional, run before the loop starts, on its own context: what
	 * must hold for the whole process.  fn runs as a task, and every
	 * switch between a task and the loop restores that context's signal
	 * mask, so a mask set in fn would not outlive fn's first wait.
	 */
	void		(*prepare)(void);
};

extern const struct cliguest_cmd	cli_guest_health_entry;
extern const struct cliguest_cmd	cli_guest_exec_entry;
extern const struct cliguest_cmd	cli_guest_put_entry;
extern const struct cliguest_cmd	cli_guest_get_entry;
extern const struct cliguest_cmd	cli_guest_ls_entry;
extern const struct cliguest_cmd	cli_guest_stat_entry;
extern const struct cliguest_cmd	cli_guest_mkdir_entry;
extern const struct cliguest_cmd	cli_guest_rm_entry;
extern const struct cliguest_cmd	cli_guest_export_entry;
extern const struct cliguest_cmd	cli_guest_import_entry;
extern const struct cliguest_cmd	cli_guest_open_entry;
extern const struct cliguest_cmd	cli_guest_close_entry;
extern const struct cliguest_cmd	cli_guest_displays_entry;
extern const struct cliguest_cmd	cli_guest_screenshot_entry;
extern const struct cliguest_cmd	cli_guest_act_entry;
extern const struct cliguest_cmd	cli_guest_call_entry;
extern const struct cliguest_cmd	cli_guest_screen_url_entry;
extern const struct cliguest_cmd	cli_guest_revoke_entry;
extern const struct cliguest_cmd	cli_guest_term_url_entry;
extern const struct cliguest_cmd	cli_guest_browser_entry;
extern const struct cliguest_cmd	cli_guest_page_navigate_entry;
extern const struct cliguest_cmd	cli_guest_page_snapshot_entry;
extern const struct cliguest_cmd	cli_guest_page_act_entry;

/* Print "usage: rakazoctl guest [options] NAME USAGE"; CLI_EXIT_USAGE. */
int	cliguest_usage(const char *name, const char *usage);
/* write(2) all of p, retrying on EINTR; -1 with errno set. */
int	cliguest_write_all(int fd, const void *p, size_t n);
/* Print j as one line of compact JSON on stdout. */
void	cliguest_print_json(json_t *j);
/* Add --bot and --fence to args (a new object when NULL); g may be NULL. */
json_t	*cliguest_args(struct cliguest *g, json_t *args);
/* strtoll in base into min..max, the whole string; 0 or -1. */
int	cliguest_parse_int(const char *s, int64_t min, int64_t max, int base,
	    int64_t *out);
/* "WxH" with both sides 1..max; 0 or -1. */
int	cliguest_parse_size(const char *s, int64_t max, int64_t *w,
	    int64_t *h);
/* The host part of ws://HOST:PORT/... into host; 0 or -1. */
int	cliguest_url_host(const char *url, char *host, size_t len);

/* Read the secret and connect g->c; 0 or an exit status (printed). */
int	cliguest_connect(struct cliguest *g);
/* A failure of the connection itself (not an error reply). */
int	cliguest_conn_failed(struct cliguest *g, int r);
/* Connect and make one JSON request (args stolen); print the result. */
int	cliguest_simple(struct cliguest *g, const char *op, json_t *args,
	    int print);
/*
 * On a connected g: send op (args stolen), upload in_fd if >= 0, write
 * channel 0 into out_fd if >= 0 and wait for the reply.  On success
 * *result holds the result.
 */
int	cliguest_stream_run(struct cliguest *g, const char *op, json_t *args,
	    int in_fd, int out_fd, json_t **result);
/*
 * On a connected g: send a batch op (display.act, page.act; args stolen)
 * and print its result, or a failure's progress, on stdout.
 */
int	cliguest_run_batch(struct cliguest *g, const char *op, json_t *args);
/* A verb PATH with one optional flag (mkdir -p, rm -r). */
int	cliguest_path_flag(struct cliguest *g, int argc, char **argv,
	    const char *op, const char *optstr, const char *key,
	    const char *usage);

/* A temp file beside local (its fd, *tmpp its name), or -1 with errno. */
int	cliguest_get_temp(const char *local, char **tmpp);
/* Flush the temp file and rename it over local; it is gone either way. */
int	cliguest_commit_temp(int fd, const char *tmp, const char *local);

#endif

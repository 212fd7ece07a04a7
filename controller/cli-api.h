/* SPDX-License-Identifier: MIT */
/*
 * What the API verbs of rakazoctl share (cli-computer.c, cli-shell.c ...):
 * one option parser for the common flags, the controller URL and token
 * (flags over environment), one call helper that turns error replies into
 * "CODE: message" on stderr and the documented exit statuses.
 *
 *   --url URL          RAKAZO_URL (default http://127.0.0.1:8420)
 *   --token-file F     RAKAZO_API_TOKEN_FILE, else RAKAZO_API_TOKEN
 *   --computer ID      RAKAZO_COMPUTER (default "team")
 *   --bot NAME         RAKAZO_BOT
 *   --lease ID, --json, --follow, --control, --force, --start
 */
#ifndef CONTROLLER_CLI_API_H
#define CONTROLLER_CLI_API_H

#include <jansson.h>

#include "http-client.h"

struct cliapi {
	const char	*url;
	const char	*token_file;
	const char	*computer;
	const char	*bot;
	const char	*lease;
	int		 json, follow, control, force, start;
	int		 quiet;		/* print no error */
	/* A non-2xx JSON reply that is no error object is the answer too
	 * (a 503 health report): *reply gets it, with CLI_EXIT_ERROR. */
	int		 any_reply;
	char		 token[600];
	int		 npos;
	char		**pos;		/* positional arguments */
};

/* Parse argv[1..]; CLI_EXIT_OK or CLI_EXIT_USAGE (message printed). */
int	cliapi_parse(struct cliapi *o, int argc, char **argv);
/*
 * Call the API.  body stolen (may be NULL).  On 2xx: CLI_EXIT_OK and
 * *reply (when reply != NULL).  Else prints the error and returns
 * CLI_EXIT_CONNECT (no controller / UNAUTHORIZED) or CLI_EXIT_ERROR.
 */
int	cliapi_call(struct cliapi *o, const char *method, const char *path,
	    json_t *body, json_t **reply);
/*
 * A file transfer (PUT or GET .../files): a body of len bytes from src
 * (len < 0: none), a 2xx reply's bytes to sink (NULL: JSON in *reply).
 * Errors as cliapi_call.
 */
int	cliapi_stream(struct cliapi *o, const char *method, const char *path,
	    long long len, http_client_src src, void *src_arg,
	    http_client_sink sink, void *sink_arg, json_t **reply);
/* %-escape s for a query value or path (malloc'd). */
char	*cliapi_escape(const char *s);
/* POST /v1/tools/{tool} with computer, bot (and lease) added. */
int	cliapi_tool(struct cliapi *o, const char *tool, json_t *args,
	    json_t **reply);
/* Print j as indented JSON on stdout. */
void	cliapi_print_json(json_t *j);
void	cliapi_free(struct cliapi *o);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Shared plumbing of the API verbs (cli-api.h).
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "token.h"
#include "cli.h"
#include "cli-api.h"
#include "http-client.h"
#include "xmalloc.h"

static const char *
cliapi_env(const char *name, const char *def)
{
	const char	*v = getenv(name);

	return v != NULL && *v != '\0' ? v : def;
}

int
cliapi_parse(struct cliapi *o, int argc, char **argv)
{
	static const char *const with_arg[] = { "--url", "--token-file",
	    "--computer", "--bot", "--lease", NULL };
	const char	**dst[] = { &o->url, &o->token_file, &o->computer,
	    &o->bot, &o->lease };
	int		 i, k, dashdash = 0;

	memset(o, 0, sizeof *o);
	o->url = cliapi_env("RAKAZO_URL", "http://127.0.0.1:8420");
	o->token_file = cliapi_env("RAKAZO_API_TOKEN_FILE", NULL);
	o->computer = cliapi_env("RAKAZO_COMPUTER", "team");
	o->bot = cliapi_env("RAKAZO_BOT", NULL);
	o->pos = xcalloc((size_t)argc + 1, sizeof *o->pos);
	for (i = 1; i < argc; i++) {
		if (dashdash || argv[i][0] != '-' || strcmp(argv[i], "-") == 0) {
			o->pos[o->npos++] = argv[i];
			continue;
		}
		if (strcmp(argv[i], "--") == 0) {
			dashdash = 1;
			continue;
		}
		for (k = 0; with_arg[k] != NULL; k++)
			if (strcmp(argv[i], with_arg[k]) == 0)
				break;
		if (with_arg[k] != NULL) {
			if (i + 1 >= argc) {
				cli_error("%s needs a value", argv[i]);
				return CLI_EXIT_USAGE;
			}
			*dst[k] = argv[++i];
		} else if (strcmp(argv[i], "--json") == 0)
			o->json = 1;
		else if (strcmp(argv[i], "--follow") == 0 ||
		    strcmp(argv[i], "-f") == 0)
			o->follow = 1;
		else if (strcmp(argv[i], "--control") == 0)
			o->control = 1;
		else if (strcmp(argv[i], "--force") == 0)
			o->force = 1;
		else if (strcmp(argv[i], "--start") == 0)
			o->start = 1;
		else {
			cli_error("unknown option %s", argv[i]);
			return CLI_EXIT_USAGE;
		}
	}
	return CLI_EXIT_OK;
}

static int
cliapi_token(struct cliapi *o)
{
	const char	*env;

	if (o->token[0] != '\0')
		return 0;
	if (o->token_file != NULL)
		return token_read_file(o->token_file, o->token,
		    sizeof o->token, 1);
	if ((env = getenv("RAKAZO_API_TOKEN")) != NULL && *env != '\0' &&
	    strlen(env) < sizeof o->token) {
		snprintf(o->token, sizeof o->token, "%s", env);
		return 0;
	}
	return ERR_UNAUTHORIZED;
}

static int	cliapi_reply(struct cliapi *, struct http_client_resp *,
		    json_t **);

int
cliapi_call(struct cliapi *o, const char *method, const char *path,
    json_t *body, json_t **reply)
{
	struct http_client_resp	 resp;
	struct errmsg		 err;
	char			 *s = NULL;
	size_t			 len = 0;
	int			 r;

	if (reply != NULL)
		*reply = NULL;
	if (strncmp(path, "/internal/", 10) != 0 && cliapi_token(o) != 0) {
		json_decref(body);
		cli_error("UNAUTHORIZED: no API token: give --token-file F or "
		    "set RAKAZO_API_TOKEN");
		return CLI_EXIT_CONNECT;
	}
	if (body != NULL && (s = jsonx_dump(body, &len)) == NULL)
		fatal("cannot serialise a request");
	json_decref(body);
	r = http_client_request(o->url, method, path, o->token[0] != '\0' ?
	    o->token : NULL, s, len, &resp, &err);
	free(s);
	if (r != 0) {
		cli_error("%s: %s", err_name(r), err.msg);
		return r == ERR_CONNECT || r == ERR_CONFIG ? CLI_EXIT_CONNECT :
		    CLI_EXIT_ERROR;
	}
	return cliapi_reply(o, &resp, reply);
}

/* A reply: *reply on 2xx JSON, else its error printed.  resp is freed. */
static int
cliapi_reply(struct cliapi *o, struct http_client_resp *r, json_t **reply)
{
	struct http_client_resp	 resp = *r;
	json_t			*j = NULL, *e;
	const char		*code, *cause, *msg;
	char			*s;
	int			 status = CLI_EXIT_ERROR;

	j = json_loadb(resp.body, resp.len, 0, NULL);
	if (resp.status >= 200 && resp.status < 300 && j != NULL) {
		if (reply != NULL) {
			*reply = j;
			j = NULL;
		}
		status = CLI_EXIT_OK;
		goto out;
	}
	e = json_object_get(j, "error");
	if (o->any_reply && json_is_object(j) && e == NULL) {
		if (reply != NULL) {
			*reply = j;
			j = NULL;
		}
		goto out;
	}
	code = json_string_value(json_object_get(e, "code"));
	cause = json_string_value(json_object_get(e, "cause"));
	msg = json_string_value(json_object_get(e, "message"));
	if (code == NULL) {
		cli_error("PROTOCOL_ERROR: HTTP %d from the controller",
		    resp.status);
		goto out;
	}
	if (o->quiet)
		;
	else if (o->json && j != NULL) {
		s = json_dumps(j, JSON_COMPACT);
		fprintf(stderr, "%s\n", s != NULL ? s : "");
		free(s);
	} else if (cause != NULL)
		cli_error("%s (%s): %s", code, cause, msg != NULL ? msg : "");
	else
		cli_error("%s: %s", code, msg != NULL ? msg : "");
	if (strcmp(code, "UNAUTHORIZED") == 0)
		status = CLI_EXIT_CONNECT;
out:
	json_decref(j);
	http_client_resp_free(&resp);
	return status;
}

int
cliapi_stream(struct cliapi *o, const char *method, const char *path,
    long long len, http_client_src src, void *src_arg,
    http_client_sink sink, void *sink_arg, json_t **reply)
{
	struct http_client_resp	 resp;
	struct errmsg		 err;
	int			 r;

	if (reply != NULL)
		*reply = NULL;
	if (cliapi_token(o) != 0) {
		cli_error("UNAUTHORIZED: no API token: give --token-file F or "
		    "set RAKAZO_API_TOKEN");
		return CLI_EXIT_CONNECT;
	}
	r = http_client_stream(o->url, method, path, o->token[0] != '\0' ?
	    o->token : NULL, len, src, src_arg, sink, sink_arg, &resp, &err);
	if (r != 0) {
		cli_error("%s: %s", err_name(r), err.msg);
		return r == ERR_CONNECT || r == ERR_CONFIG ? CLI_EXIT_CONNECT :
		    CLI_EXIT_ERROR;
	}
	/* A 2xx body that went to the sink is no JSON. */
	if (sink != NULL && resp.status >= 200 && resp.status < 300) {
		http_client_resp_free(&resp);
		return CLI_EXIT_OK;
	}
	return cliapi_reply(o, &resp, reply);
}

char *
cliapi_escape(const char *s)
{
	static const char	 hex[] = "0123456789ABCDEF";
	char			*out, *o;
	unsigned char		 c;

	o = out = xmalloc(strlen(s) * 3 + 1);
	for (; *s != '\0'; s++) {
		c = (unsigned char)*s;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || strchr("-._~/", c) != NULL) {
			*o++ = (char)c;
			continue;
		}
		*o++ = '%';
		*o++ = hex[c >> 4];
		*o++ = hex[c & 15];
	}
	*o = '\0';
	return out;
}

int
cliapi_tool(struct cliapi *o, const char *tool, json_t *args,
    json_t **reply)
{
	char	 path[128];

	if (o->bot == NULL) {
		json_decref(args);
		cli_error("give --bot NAME (or RAKAZO_BOT)");
		return CLI_EXIT_USAGE;
	}
	json_object_set_new(args, "computer", json_string(o->computer));
	json_object_set_new(args, "bot", json_string(o->bot));
	if (o->lease != NULL)
		json_object_set_new(args, "lease", json_string(o->lease));
	snprintf(path, sizeof path, "/v1/tools/%s", tool);
	return cliapi_call(o, "POST", path, args, reply);
}

void
cliapi_print_json(json_t *j)
{
	char	*s = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);

	printf("%s\n", s != NULL ? s : "null");
	free(s);
}

void
cliapi_free(struct cliapi *o)
{
	token_wipe(o->token, sizeof o->token);
	free(o->pos);
	o->pos = NULL;
}

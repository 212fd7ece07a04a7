/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: rakazoctl serve's HTTP/JSON API (api_handle) on
 * untrusted requests, with the fake provider and a real SQLite state
 * store in a private temp directory (made once, removed at exit).
 *
 * Input: byte 0 picks the method and whether the bearer token is right;
 * then "PATH[?QUERY]" up to the first newline; the rest is the body.
 * Every answer must be a status 200..599 with a well-formed JSON body,
 * so no route can crash, hang, or reply with something a client cannot
 * parse, whatever the path, query or body.
 */
#include "autoconf.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "err.h"
#include "log.h"
#include "api.h"
#include "provider.h"

#define FUZZ_TOKEN	"fuzz-api-token-0123456789"

static struct api	 fuzz_api;
static char		 fuzz_dir[64];

static void
fuzz_cleanup(void)
{
	char	 cmd[128];

	if (fuzz_dir[0] == '\0')
		return;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_dir);
	if (system(cmd) != 0)
		fuzz_dir[0] = '\0';
}

static void
fuzz_init(void)
{
	struct provider_config	 pc;
	struct provider		*prov = NULL;
	struct errmsg		 err;

	snprintf(fuzz_dir, sizeof fuzz_dir, "/tmp/fuzz_api.XXXXXX");
	if (mkdtemp(fuzz_dir) == NULL)
		abort();
	atexit(fuzz_cleanup);
	log_init("fuzz_api", LOG_LVL_ERROR);
	memset(&pc, 0, sizeof pc);
	pc.data_dir = fuzz_dir;
	if (provider_new(&prov, "fake", &pc, &err) != 0)
		abort();
	fuzz_api.store_url = fuzz_dir;
	fuzz_api.lock_dir = fuzz_dir;
	fuzz_api.prov = prov;
	fuzz_api.token = FUZZ_TOKEN;
	fuzz_api.idle_ms = 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = { "GET", "POST", "DELETE",
	    "PUT" };
	static int		 ready;
	struct api_req		 q;
	struct api_resp		 out;
	const uint8_t		*nl;
	char			*path, *query;
	json_t			*j;

	if (!ready) {
		fuzz_init();
		ready = 1;
	}
	if (size < 1 || size > 64 * 1024)
		return 0;
	nl = memchr(data + 1, '\n', size - 1);
	if (nl == NULL)
		nl = data + size;
	/* The server hands over NUL-terminated strings. */
	path = strndup((const char *)data + 1, (size_t)(nl - data - 1));
	if (path == NULL || strlen(path) != (size_t)(nl - data - 1)) {
		free(path);
		return 0;
	}
	query = strchr(path, '?');
	if (query != NULL)
		*query++ = '\0';
	memset(&q, 0, sizeof q);
	q.method = methods[data[0] & 3];
	q.path = path;
	q.query = query != NULL ? query : "";
	q.auth = (data[0] & 4) ? "Bearer wrong" : "Bearer " FUZZ_TOKEN;
	q.body = nl < data + size ? (const char *)nl + 1 : NULL;
	q.bodylen = nl < data + size ? size - (size_t)(nl - data) - 1 : 0;
	q.length = -1;
	memset(&out, 0, sizeof out);
	api_handle(&fuzz_api, &q, &out);
	if (out.status < 200 || out.status > 599)
		abort();
	if (!out.stream) {
		j = json_loadb(out.body, out.len, 0, NULL);
		if (j == NULL)
			abort();
		json_decref(j);
	}
	free(out.body);
	free(path);
	return 0;
}

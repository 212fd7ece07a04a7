/* SPDX-License-Identifier: MIT */
/*
 * Act round trip: display.act batches on a bot's desktop through guestd's
 * control channel (one connection, as a controller holds it), each timed
 * from sending the request to having the reply.
 *
 *   act-rtt URL SECRET-FILE BOT
 *
 * Reads commands on stdin, one per line, and answers each with one line
 * on stdout, so a script can check what arrived on the desktop between
 * two timed batches:
 *
 *   clicks N [B]   one batch of N clicks of button B (left, right,
 *                  middle; left) where the pointer is
 *   type FILE      one batch typing the UTF-8 text of FILE
 *   move X Y       one batch moving the pointer (untimed set-up)
 *   mark X Y       one batch: a right click at X,Y (an end marker; the
 *                  place varies so the repeat guard never sees a repeat)
 *
 *   ok us=.. completed=..      or      error CODE: message
 *
 * Built by `make benchmarks`; not part of `make check`.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libwebsockets.h>

#include "err.h"
#include "timing.h"
#include "guest-client.h"
#include "token.h"

#define ART_TEXT_MAX	(64 * 1024)

struct art_call {
	int	 done;
	json_t	*reply;
};

static void
art_reply(struct gclient *c, uint32_t id, json_t *msg, void *arg)
{
	struct art_call	*ac = arg;

	ac->reply = json_incref(msg);
	ac->done = 1;
}

/* One batch (actions stolen); prints the answer line.  0 or ERR_*. */
static int
art_act(struct gclient *c, const char *bot, json_t *actions)
{
	struct art_call	 ac;
	json_t		*args, *res;
	struct errmsg	 err;
	double		 t0, us;
	int		 r;

	memset(&ac, 0, sizeof ac);
	args = json_pack("{s:s,s:o}", "bot", bot, "actions", actions);
	if (args == NULL)
		return ERR_NOMEM;
	t0 = bench_now_us();
	if (gclient_request(c, "display.act", args, art_reply, NULL,
	    &ac) == 0)
		return ERR_PEER_GONE;
	if ((r = gclient_run(c, &ac.done, 60000)) != 0)
		return r;
	us = bench_now_us() - t0;
	if (!json_is_true(json_object_get(ac.reply, "ok"))) {
		gclient_reply_error(ac.reply, &err);
		printf("error %s\n", err.msg);
	} else {
		res = json_object_get(ac.reply, "result");
		printf("ok us=%.0f completed=%lld\n", us, (long long)
		    json_integer_value(json_object_get(res, "completed")));
	}
	fflush(stdout);
	json_decref(ac.reply);
	return 0;
}

static json_t *
art_clicks(int n, const char *button)
{
	json_t	*a = json_array();
	int	 i;

	for (i = 0; i < n && a != NULL; i++)
		json_array_append_new(a, json_pack("{s:s,s:s}", "kind",
		    "click", "button", button));
	return a;
}

static json_t *
art_type(const char *file)
{
	FILE	*f;
	char	*buf;
	size_t	 n;
	json_t	*a = NULL;

	if ((f = fopen(file, "r")) == NULL)
		return NULL;
	if ((buf = malloc(ART_TEXT_MAX + 1)) != NULL) {
		n = fread(buf, 1, ART_TEXT_MAX, f);
		buf[n] = '\0';
		a = json_pack("[{s:s,s:s%}]", "kind", "type", "text", buf, n);
		free(buf);
	}
	fclose(f);
	return a;
}

static int
art_command(struct gclient *c, const char *bot, char *line)
{
	json_t	*actions = NULL;
	char	 file[4096], button[16] = "left";
	int	 n, x, y;

	line[strcspn(line, "\r\n")] = '\0';
	if (sscanf(line, "clicks %d %15s", &n, button) >= 1 && n > 0)
		actions = art_clicks(n, button);
	else if (sscanf(line, "type %4095s", file) == 1)
		actions = art_type(file);
	else if (sscanf(line, "move %d %d", &x, &y) == 2)
		actions = json_pack("[{s:s,s:i,s:i}]", "kind", "move", "x", x,
		    "y", y);
	else if (sscanf(line, "mark %d %d", &x, &y) == 2)
		actions = json_pack("[{s:s,s:s,s:i,s:i}]", "kind", "click",
		    "button", "right", "x", x, "y", y);
	else {
		printf("error BAD_REQUEST: unknown command\n");
		fflush(stdout);
		return 0;
	}
	if (actions == NULL) {
		printf("error BAD_REQUEST: cannot build the batch\n");
		fflush(stdout);
		return 0;
	}
	return art_act(c, bot, actions);
}

static int
act_rtt_main(int argc, char **argv)
{
	struct gclient_opts	 opts;
	struct gclient		*c;
	struct errmsg		 err;
	char			 secret[SECRET_MAX + 1], line[4200];
	int			 r = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: act-rtt URL SECRET-FILE BOT "
		    "< commands\n");
		return 2;
	}
	if ((r = token_read_file(argv[2], secret, sizeof secret, 0)) != 0) {
		fprintf(stderr, "secret: %s\n", err_name(r));
		return 1;
	}
	lws_set_log_level(0, NULL);
	memset(&opts, 0, sizeof opts);
	opts.url = argv[1];
	opts.secret = secret;
	if (gclient_connect(&c, &opts, &err) != 0) {
		fprintf(stderr, "connect: %s\n", err.msg);
		return 1;
	}
	while (r == 0 && fgets(line, sizeof line, stdin) != NULL)
		r = art_command(c, argv[3], line);
	if (r != 0)
		fprintf(stderr, "act-rtt: %s\n", err_name(r));
	gclient_free(c);
	return r == 0 ? 0 : 1;
}

/* The body is a task on the client's loop (guest-client.h). */
int
main(int argc, char **argv)
{
	return gclient_main(argc, argv, act_rtt_main);
}

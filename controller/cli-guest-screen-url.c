/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest screen-url BOT: a capability for the bot's screen on
 * guestd's gateway (capability.grant), printed as the websocket and the
 * embed page URLs.  It is a secret: printed, never logged.
 */
#include "autoconf.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>

#include <jansson.h>

#include "cli-guest.h"
#include "cli.h"
#include "err.h"
#include "guest-client.h"

static int
guest_screen_url(struct cliguest *g, int argc, char **argv)
{
	static const char		*usage = "BOT [--control] "
	    "[--ttl SECONDS]";
	static const struct option	 opts[] = {
		{ "control", no_argument, NULL, 'c' },
		{ "ttl", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	json_t		*args, *res = NULL;
	const char	*tok;
	struct errmsg	 err;
	char		 host[256];
	int64_t		 ttl = 0, gwport;
	int		 ch, control = 0, r;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 'c')
			control = 1;
		else if (ch != 't' || cliguest_parse_int(optarg, 1, 30 * 86400,
		    10, &ttl) != 0)
			return cliguest_usage("screen-url", usage);
	}
	if (argc - optind != 1 || cliguest_url_host(g->url, host,
	    sizeof(host)) != 0)
		return cliguest_usage("screen-url", usage);
	g->bot = argv[optind];
	if ((r = cliguest_connect(g)) != 0)
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
	if (gclient_call(g->c, "capability.grant", cliguest_args(g, args), &res,
	    &err) != 0) {
		cli_error("%s", err.msg);
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

const struct cliguest_cmd cli_guest_screen_url_entry = {
	"screen-url", "BOT [--control] [--ttl SECONDS]", guest_screen_url
};

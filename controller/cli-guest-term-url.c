/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest term-url TOKEN: the terminal URLs of a control
 * capability on guestd's gateway.
 */
#include "autoconf.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli-guest.h"
#include "cli.h"
#include "guest-client.h"

/*
 * term-url TOKEN: where the terminal of a control capability (from
 * `screen-url BOT --control`) is reached; the token is checked by guestd
 * when a terminal connects, not here.
 */
static int
guest_term_url(struct cliguest *g, int argc, char **argv)
{
	char	 host[256];
	int64_t	 gwport;
	int	 r;

	if (argc != 2 || argv[1][0] == '\0' || strspn(argv[1],
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789-_") != strlen(argv[1]) ||
	    cliguest_url_host(g->url, host, sizeof(host)) != 0)
		return cliguest_usage("term-url", "TOKEN");
	if ((r = cliguest_connect(g)) != 0)
		return r;
	gwport = json_integer_value(json_object_get(gclient_hello(g->c),
	    "gateway_port"));
	if (gwport <= 0) {
		cli_error("guestd runs no screen gateway (start it with "
		    "--gateway ADDR:PORT)");
		return CLI_EXIT_ERROR;
	}
	printf("ws://%s:%" PRId64 "/term/%s\n", host, gwport, argv[1]);
	printf("http://%s:%" PRId64 "/term.html?token=%s\n", host, gwport,
	    argv[1]);
	return CLI_EXIT_OK;
}

const struct cliguest_cmd cli_guest_term_url_entry = {
	"term-url", "TOKEN", guest_term_url
};

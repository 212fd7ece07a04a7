/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest screenshot BOT -o FILE: one picture of the bot's
 * desktop (display.observe) into FILE, its metadata as JSON on stdout.
 * FILE is replaced only by a whole image, and kept when unchanged.
 */
#include "autoconf.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>

#include "cli-guest.h"
#include "cli.h"

/* "X,Y,W,H" into a region object; guestd checks it against the screen. */
static json_t *
guest_parse_region(const char *s)
{
	char	 buf[128], *p, *save = NULL;
	int64_t	 v[4];
	int	 i;

	if (strlen(s) >= sizeof(buf))
		return NULL;
	strcpy(buf, s);
	p = strtok_r(buf, ",", &save);
	for (i = 0; i < 4; i++) {
		if (p == NULL || cliguest_parse_int(p, i < 2 ? 0 : 1, INT32_MAX,
		    10, &v[i]) != 0)
			return NULL;
		p = strtok_r(NULL, ",", &save);
	}
	if (p != NULL)
		return NULL;
	return json_pack("{s:I, s:I, s:I, s:I}", "x", (json_int_t)v[0],
	    "y", (json_int_t)v[1], "width", (json_int_t)v[2],
	    "height", (json_int_t)v[3]);
}

/*
 * Without --jpeg or --png the format follows the output's name: .jpg and
 * .jpeg ask for JPEG at guestd's default quality, anything else for PNG.
 */
static void
guest_shot_format(json_t *args, const char *out)
{
	const char	*dot;

	if (json_object_get(args, "format") != NULL)
		return;
	dot = strrchr(out, '.');
	if (dot != NULL && (strcasecmp(dot, ".jpg") == 0 ||
	    strcasecmp(dot, ".jpeg") == 0))
		json_object_set_new(args, "format", json_string("jpeg"));
	else
		json_object_set_new(args, "format", json_string("png"));
}

static int
guest_shot_parse(int argc, char **argv, json_t *args, const char **out)
{
	static const struct option	 opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "jpeg", required_argument, NULL, 'j' },
		{ "png", no_argument, NULL, 'p' },
		{ "max", required_argument, NULL, 'm' },
		{ "region", required_argument, NULL, 'r' },
		{ "since", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 }
	};
	json_t	*region;
	int64_t	 v, w, h;
	int	 ch;

	*out = NULL;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			*out = optarg;
			break;
		case 'j':
			if (cliguest_parse_int(optarg, 1, 100, 10, &v) != 0)
				return -1;
			json_object_set_new(args, "format",
			    json_string("jpeg"));
			json_object_set_new(args, "quality", json_integer(v));
			break;
		case 'p':
			json_object_set_new(args, "format", json_string("png"));
			json_object_del(args, "quality");
			break;
		case 'm':
			if (cliguest_parse_size(optarg, INT32_MAX, &w, &h) != 0)
				return -1;
			json_object_set_new(args, "max_width", json_integer(w));
			json_object_set_new(args, "max_height",
			    json_integer(h));
			break;
		case 'r':
			if ((region = guest_parse_region(optarg)) == NULL)
				return -1;
			json_object_set_new(args, "region", region);
			break;
		case 's':
			if (cliguest_parse_int(optarg, 0, INT64_MAX, 10,
			    &v) != 0)
				return -1;
			json_object_set_new(args, "since_frame",
			    json_integer(v));
			break;
		default:
			return -1;
		}
	}
	/* Writing an image to a terminal or to stdout beside the JSON: no. */
	if (argc - optind != 1 || *out == NULL || strcmp(*out, "-") == 0)
		return -1;
	guest_shot_format(args, *out);
	return 0;
}

static int
guest_screenshot(struct cliguest *g, int argc, char **argv)
{
	static const char	*usage = "BOT -o FILE [--jpeg Q | --png] "
	    "[--max WxH] [--region X,Y,W,H] [--since FRAME]";
	json_t		*args, *res = NULL;
	const char	*out;
	char		*tmp = NULL;
	int		 fd, r;

	args = json_object();
	if (guest_shot_parse(argc, argv, args, &out) != 0) {
		json_decref(args);
		return cliguest_usage("screenshot", usage);
	}
	g->bot = argv[optind];
	if ((r = cliguest_connect(g)) != 0) {
		json_decref(args);
		return r;
	}
	/* The image lands beside FILE and replaces it only when whole. */
	if ((fd = cliguest_get_temp(out, &tmp)) < 0) {
		cli_error("IO_ERROR: cannot create a file beside %s: %s",
		    out, strerror(errno));
		json_decref(args);
		return CLI_EXIT_ERROR;
	}
	r = cliguest_stream_run(g, "display.observe", args, -1, fd, &res);
	if (r == 0 && !json_is_true(json_object_get(res, "unchanged")))
		r = cliguest_commit_temp(fd, tmp, out);
	else {
		/* Unchanged: FILE keeps the picture the caller already has. */
		close(fd);
		unlink(tmp);
	}
	if (r == 0)
		cliguest_print_json(res);
	json_decref(res);
	free(tmp);
	return r;
}

const struct cliguest_cmd cli_guest_screenshot_entry = {
	"screenshot", "BOT -o FILE [--jpeg Q | --png] [--max WxH] "
	    "[--region X,Y,W,H] [--since FRAME]",
	guest_screenshot
};

/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl guest ls [--json] [PATH]: list a directory with file.list,
 * one "type mode size name" line per entry.  Names are printed as ls -b
 * does: a file name is anyone's choice, so control characters (C0, DEL
 * and the C1 range), backslashes and bytes that are not UTF-8 are written
 * as C escapes or \ooo, and no name can move the cursor, recolour or
 * retitle the terminal, or split a line.
 */
#include "autoconf.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli-guest.h"
#include "cli.h"
#include "err.h"
#include "guest-client.h"
#include "json.h"
#include "xmalloc.h"

static void
guest_ls_name(FILE *f, const uint8_t *p, size_t len)
{
	static const char	 cesc[] = "\a\b\t\n\v\f\r";
	static const char	 cname[] = "abtnvfr";
	const char		*c;
	uint32_t		 cp;
	size_t			 i, j, k;

	for (i = 0; i < len; i += k) {
		k = 1;
		if (p[i] == '\\') {
			fputs("\\\\", f);
			continue;
		}
		if (p[i] != 0 && (c = strchr(cesc, p[i])) != NULL) {
			fprintf(f, "\\%c", cname[c - cesc]);
			continue;
		}
		if (p[i] < 0x20 || p[i] == 0x7f) {
			fprintf(f, "\\%03o", p[i]);
			continue;
		}
		if (p[i] < 0x80) {
			fputc(p[i], f);
			continue;
		}
		if ((k = jsonx_utf8_len(p + i, len - i, &cp)) == 0 ||
		    (cp >= 0x80 && cp <= 0x9f)) {
			/* Not UTF-8, or a C1 control (CSI is U+009B). */
			if (k == 0)
				k = 1;
			for (j = 0; j < k; j++)
				fprintf(f, "\\%03o", p[i + j]);
			continue;
		}
		fwrite(p + i, 1, k, f);
	}
}

/* The entry's name as bytes: guestd sends names that are not UTF-8 as
 * name_hex (and an escaped name); *bufp is to be freed. */
static size_t
guest_ls_raw(json_t *e, const uint8_t **out, uint8_t **bufp)
{
	const char	*hex, *name;
	uint8_t		*b;
	size_t		 n, i;
	unsigned	 v;

	*bufp = NULL;
	hex = json_string_value(json_object_get(e, "name_hex"));
	if (hex != NULL && (n = strlen(hex)) % 2 == 0 && n > 0) {
		b = xmalloc(n / 2);
		for (i = 0; i < n / 2; i++) {
			if (sscanf(hex + 2 * i, "%2x", &v) != 1)
				break;
			b[i] = (uint8_t)v;
		}
		if (i == n / 2) {
			*bufp = b;
			*out = b;
			return n / 2;
		}
		free(b);
	}
	name = json_string_value(json_object_get(e, "name"));
	if (name == NULL)
		name = "?";
	*out = (const uint8_t *)name;
	return json_is_string(json_object_get(e, "name")) ?
	    json_string_length(json_object_get(e, "name")) : 1;
}

static void
guest_ls_print(json_t *res)
{
	json_t		*ents, *e, *mode;
	const char	*type;
	const uint8_t	*name;
	uint8_t		*buf;
	size_t		 i, len;

	ents = json_object_get(res, "entries");
	json_array_foreach(ents, i, e) {
		type = json_string_value(json_object_get(e, "type"));
		len = guest_ls_raw(e, &name, &buf);
		mode = json_object_get(e, "mode");
		printf("%s ", type != NULL ? type : "?");
		if (json_is_integer(mode))
			printf("%04o", (unsigned)(json_integer_value(mode) &
			    07777));
		else if (json_is_string(mode))
			printf("%s", json_string_value(mode));
		else
			printf("????");
		printf(" %" JSON_INTEGER_FORMAT " ",
		    json_integer_value(json_object_get(e, "size")));
		guest_ls_name(stdout, name, len);
		putchar('\n');
		free(buf);
	}
	fflush(stdout);
	if (json_is_true(json_object_get(res, "truncated")))
		cli_error("the listing was truncated");
}

static int
guest_ls(struct cliguest *g, int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	json_t	*res = NULL;
	struct errmsg	 err;
	int	 ch, as_json = 0, r;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch != 'j')
			return cliguest_usage("ls", "[--json] [PATH]");
		as_json = 1;
	}
	if (argc - optind > 1)
		return cliguest_usage("ls", "[--json] [PATH]");
	if ((r = cliguest_connect(g)) != 0)
		return r;
	r = gclient_call(g->c, "file.list", cliguest_args(g, json_pack("{s:s}",
	    "path", optind < argc ? argv[optind] : ".")), &res, &err);
	if (r != 0) {
		cli_error("%s", err.msg);
		return CLI_EXIT_ERROR;
	}
	if (as_json)
		cliguest_print_json(res);
	else
		guest_ls_print(res);
	json_decref(res);
	return CLI_EXIT_OK;
}

const struct cliguest_cmd cli_guest_ls_entry = {
	"ls", "[--json] [PATH]", guest_ls
};

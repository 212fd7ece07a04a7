/* SPDX-License-Identifier: MIT */
/*
 * Settings from flags and the environment, driven by a table so a daemon
 * states each setting once.  Precedence: a flag beats its environment
 * variable, which beats the default the caller stored in *dst.  Errors
 * name the flag or variable; a value is quoted back only when its name
 * does not look secret (doc/DESIGN.md X-5).
 *
 * For CONFIG_INT and CONFIG_SIZE, min == max == 0 means "no bounds".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "err.h"
#include "redact.h"
#include "xmalloc.h"

static void
config_err(struct errmsg *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
config_err(struct errmsg *err, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	errmsg_vset(err, ERR_CONFIG, fmt, ap);
	va_end(ap);
}

static int
config_isdigits(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

int
config_parse_size(const char *s, uint64_t *out)
{
	uint64_t	 v = 0, mult = 1;
	const char	*p;
	unsigned	 d;

	if (s == NULL || *s < '0' || *s > '9')
		return ERR_CONFIG;
	for (p = s; *p >= '0' && *p <= '9'; p++) {
		d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return ERR_CONFIG;
		v = v * 10 + d;
	}
	switch (*p) {
	case '\0':
		break;
	case 'K': case 'k':
		mult = 1024;
		p++;
		break;
	case 'M': case 'm':
		mult = 1024 * 1024;
		p++;
		break;
	case 'G': case 'g':
		mult = 1024 * 1024 * 1024;
		p++;
		break;
	default:
		return ERR_CONFIG;
	}
	if (*p != '\0' || (v != 0 && mult > UINT64_MAX / v))
		return ERR_CONFIG;
	*out = v * mult;
	return 0;
}

static int
config_host_ok(const char *h, size_t n, int bracketed)
{
	size_t	 i;
	char	 c;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		c = h[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '-' ||
		    c == '_')
			continue;
		if (bracketed && (c == ':' || c == '%'))
			continue;
		return 0;
	}
	return 1;
}

int
config_parse_hostport(const char *s, char *host, size_t hostlen, int *port)
{
	const char	*h, *colon, *end;
	size_t		 n;
	long		 p;
	int		 bracketed = 0;

	if (hostlen > 0)
		host[0] = '\0';
	if (s == NULL)
		return ERR_CONFIG;
	if (s[0] == '[') {
		if ((end = strchr(s, ']')) == NULL || end[1] != ':')
			return ERR_CONFIG;
		h = s + 1;
		n = (size_t)(end - h);
		colon = end + 1;
		bracketed = 1;
	} else {
		if ((colon = strchr(s, ':')) == NULL ||
		    strchr(colon + 1, ':') != NULL)
			return ERR_CONFIG;
		h = s;
		n = (size_t)(colon - s);
	}
	if (!config_host_ok(h, n, bracketed) || n >= hostlen)
		return ERR_CONFIG;
	if (!config_isdigits(colon + 1) || strlen(colon + 1) > 5)
		return ERR_CONFIG;
	p = strtol(colon + 1, NULL, 10);
	if (p > 65535)
		return ERR_CONFIG;
	memcpy(host, h, n);
	host[n] = '\0';
	*port = (int)p;
	return 0;
}

/* "Option --listen" or "Environment variable GUESTD_LISTEN". */
static void
config_where(char *dst, size_t dstlen, const struct config_opt *o, int env)
{
	if (env)
		snprintf(dst, dstlen, "Environment variable %s", o->env);
	else
		snprintf(dst, dstlen, "Option --%s", o->flag);
}

static int
config_secret(const struct config_opt *o)
{
	return redact_key_is_secret(o->flag) ||
	    (o->env != NULL && redact_key_is_secret(o->env));
}

static int
config_bool(const char *s, int *out)
{
	static const char *const yes[] = { "1", "true", "yes", "on", NULL };
	static const char *const no[] = { "0", "false", "no", "off", NULL };
	size_t	 i;

	for (i = 0; yes[i] != NULL; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return ERR_CONFIG;
}

static int
config_bounded(const struct config_opt *o)
{
	return o->min != 0 || o->max != 0;
}

/* Store value (from a flag or, when env, a variable) into o->dst. */
static int
config_set(const struct config_opt *o, const char *value, int env,
    struct errmsg *err)
{
	char		 where[128], shown[64], *end;
	long long	 i;
	uint64_t	 u;
	int		 b;

	config_where(where, sizeof(where), o, env);
	if (config_secret(o))
		snprintf(shown, sizeof(shown), "the value");
	else
		snprintf(shown, sizeof(shown), "\"%.40s\"", value);
	switch (o->type) {
	case CONFIG_STR:
		*(const char **)o->dst = value;
		return 0;
	case CONFIG_BOOL:
		if (config_bool(value, &b) != 0) {
			config_err(err, "%s: %s is not a boolean "
			    "(use 1, 0, true or false).", where, shown);
			return ERR_CONFIG;
		}
		*(int *)o->dst = b;
		return 0;
	case CONFIG_INT:
		errno = 0;
		i = strtoll(value, &end, 10);
		if (*value == '\0' || *end != '\0' || errno != 0 ||
		    (config_bounded(o) && (i < o->min || i > o->max))) {
			if (config_bounded(o))
				config_err(err, "%s: %s is not an "
				    "integer from %" PRId64 " to %" PRId64 ".",
				    where, shown, o->min, o->max);
			else
				config_err(err, "%s: %s is not an "
				    "integer.", where, shown);
			return ERR_CONFIG;
		}
		*(int64_t *)o->dst = (int64_t)i;
		return 0;
	case CONFIG_SIZE:
		if (config_parse_size(value, &u) != 0 ||
		    (config_bounded(o) && ((o->min > 0 &&
		    u < (uint64_t)o->min) || o->max < 0 ||
		    u > (uint64_t)o->max))) {
			config_err(err, "%s: %s is not a size in "
			    "range (a number with an optional K, M or G "
			    "suffix).", where, shown);
			return ERR_CONFIG;
		}
		*(uint64_t *)o->dst = u;
		return 0;
	}
	config_err(err, "%s: unknown option type.", where);
	return ERR_CONFIG;
}

/* The option as the user typed it, without any "=value" part. */
static void
config_badopt(struct errmsg *err, const char *arg, const char *why)
{
	size_t	 n;

	if (arg == NULL)
		arg = "?";
	n = strcspn(arg, "=");
	if (n > 64)
		n = 64;
	config_err(err, "Option %.*s: %s.", (int)n, arg, why);
}

int
config_parse(const struct config_opt *opts, size_t nopts, int argc,
    char **argv, int *next, struct errmsg *err)
{
	struct option	*lo = NULL;
	char		*seen = NULL;
	const char	*v, *arg;
	size_t		 i;
	int		 c, idx, r = ERR_CONFIG;

	errmsg_clear(err);
	if (next != NULL)
		*next = argc > 0 ? 1 : 0;
	lo = xcalloc(nopts + 1, sizeof(*lo));
	seen = xcalloc(nopts + 1, 1);
	for (i = 0; i < nopts; i++) {
		lo[i].name = opts[i].flag;
		lo[i].has_arg = opts[i].type == CONFIG_BOOL ? no_argument :
		    required_argument;
		lo[i].val = 256 + (int)i;
	}

	/* optind = 0 makes glibc reinitialise; '+' stops at operands. */
	optind = 0;
	opterr = 0;
	for (;;) {
		idx = optind != 0 ? optind : 1;
		c = getopt_long(argc, argv, "+:", lo, NULL);
		if (c == -1)
			break;
		arg = idx < argc ? argv[idx] : NULL;
		if (c == ':') {
			config_badopt(err, arg, "needs a value");
			goto out;
		}
		if (c < 256 || (size_t)(c - 256) >= nopts) {
			if (optopt >= 256)
				config_badopt(err, arg,
				    "takes no value");
			else
				config_badopt(err, arg,
				    "is not known");
			goto out;
		}
		i = (size_t)(c - 256);
		if ((r = config_set(&opts[i], opts[i].type == CONFIG_BOOL ?
		    "1" : optarg, 0, err)) != 0)
			goto out;
		r = ERR_CONFIG;
		seen[i] = 1;
	}
	if (next != NULL)
		*next = optind;

	for (i = 0; i < nopts; i++) {
		if (seen[i] || opts[i].env == NULL ||
		    (v = getenv(opts[i].env)) == NULL)
			continue;
		if ((r = config_set(&opts[i], v, 1, err)) != 0)
			goto out;
	}
	r = 0;
out:
	free(lo);
	free(seen);
	return r;
}

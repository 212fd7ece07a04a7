/* SPDX-License-Identifier: MIT */
/*
 * Configuration from flags and the environment.  A table of options says
 * for each setting its long flag, its environment variable and its type;
 * flags override the environment, which overrides the default already in
 * *dst.  Errors name the flag and come back as ERR_CONFIG with a sentence.
 */
#ifndef COMMON_CONFIG_H
#define COMMON_CONFIG_H

#include <stddef.h>
#include <stdint.h>

struct errmsg;

enum config_type {
	CONFIG_STR,	/* const char ** (points into argv/environ) */
	CONFIG_INT,	/* int64_t *, bounded by min/max */
	CONFIG_BOOL,	/* int *; flag without argument sets 1; env 1/0/true/false */
	CONFIG_SIZE	/* uint64_t *, accepts 10K, 64M, 2G suffixes */
};

struct config_opt {
	const char	*flag;		/* "listen" for --listen */
	const char	*env;		/* "GUESTD_LISTEN" or NULL */
	enum config_type type;
	void		*dst;
	int64_t		 min, max;	/* for CONFIG_INT / CONFIG_SIZE */
	const char	*help;
};

/*
 * Parse argv[1..argc) until "--" or the first non-option argument; *next
 * gets the index of the first unparsed argument.  --help is not handled
 * here.  Returns 0 or ERR_CONFIG with err filled.
 */
int	 config_parse(const struct config_opt *opts, size_t nopts, int argc,
	    char **argv, int *next, struct errmsg *err);
/* Parse "64M" etc. into *out; 0 or ERR_CONFIG. */
int	 config_parse_size(const char *s, uint64_t *out);
/* Split "host:port" ("[::1]:80" too); port 0..65535.  0 or ERR_CONFIG. */
int	 config_parse_hostport(const char *s, char *host, size_t hostlen,
	    int *port);

#endif

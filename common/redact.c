/* SPDX-License-Identifier: MIT */
/*
 * Masking of secrets in free text (doc/DESIGN.md X-5).  Every log line and
 * error sentence passes through redact_text(), so it must be cheap, bounded and
 * safe on hostile input: one forward pass over src (each byte is looked at
 * a small constant number of times), output truncated at dstlen and never
 * overflowed.  It errs on the side of masking too much: a log line that
 * lost a harmless value is better than one that leaked a token.
 *
 * The scanner walks src a word at a time (a word is a run of letters,
 * digits, '_' and '-'); what follows a word decides whether it starts a
 * secret: "://" (URL credentials), a blank and a token (Bearer/Basic),
 * '=' or ": " or a JSON "key": after a secret-looking name.  A '/' may
 * start a capability path (/screen/<tok>, /term/<tok>).
 *
 * Beside those name rules, value-shape rules catch secrets that carry no
 * secret-looking name: a word that starts like a provider's API key
 * (sk-, ghp_, github_pat_, xoxb-, AKIA...) and is long and random enough,
 * a JWT (three base64url segments, the first "eyJ"), the value of a long
 * option named like a secret (--token X), and the password arguments of
 * a few commands that take one on their command line (mysql -pX,
 * sshpass -p X, curl -u user:X, redis-cli -a X, docker login -p X, aws
 * configure set NAME X), openssl's pass:X, PEM private-key bodies, Vault
 * tokens and webhook URLs whose path is the key.  Those command rules are
 * scoped to the command's own words (up to ; | & or a line end) so that
 * ls -p or sort -u are never touched; a false positive may hide one
 * argument, never a whole command.
 */
#include <stdlib.h>
#include <string.h>

#include "redact.h"
#include "xmalloc.h"

struct rw {
	char	*dst;
	size_t	 dstlen;
	size_t	 len;		/* bytes written to dst */
	size_t	 need;		/* bytes the whole output takes */
	int	 counting;	/* keep going past a full dst to learn need */
	int	 cmd;		/* REDACT_CMD_*: the command being read */
};

/* Commands whose own options carry a password (redact_cmd_opt). */
enum {
	REDACT_CMD_NONE,
	REDACT_CMD_MYSQL,	/* mysql*, mariadb*: -pSECRET */
	REDACT_CMD_SSHPASS,	/* sshpass -p SECRET, until its command */
	REDACT_CMD_CURL,	/* curl -u/-U/--user/--proxy-user u:SECRET */
	REDACT_CMD_REDIS,	/* redis-cli -a SECRET */
	REDACT_CMD_DOCKER,	/* docker, podman, nerdctl: until "login" */
	REDACT_CMD_LOGIN,	/* docker login -p SECRET */
	REDACT_CMD_AWS,		/* aws: until "configure" */
	REDACT_CMD_AWSCONF	/* aws configure set NAME SECRET */
};

static int
redact_lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

static int
redact_isalpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int
redact_isword(int c)
{
	return redact_isalpha(c) || (c >= '0' && c <= '9') || c == '_' ||
	    c == '-';
}

static int
redact_isblank(int c)
{
	return c == ' ' || c == '\t';
}

/* Characters of a bearer token, base64 (either alphabet) or hex. */
static int
redact_istokchar(int c)
{
	return redact_isword(c) || c == '.' || c == '~' || c == '+' ||
	    c == '/' || c == '=';
}

/*
 * "Basic" is also an English word: mask what follows only when it looks
 * like base64 (an upper-case letter, a digit or + / =), not "basic idea".
 * "Bearer" is rare enough in prose to mask always.
 */
static int
redact_looks_b64(const char *p, const char *e)
{
	for (; p < e; p++)
		if ((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    *p == '+' || *p == '/' || *p == '=')
			return 1;
	return 0;
}

/* Where an unquoted value ends (k=v lists, query strings, JSON scalars). */
static int
redact_isvalend(int c)
{
	return c == '\0' || c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
	    strchr("&#\"',;}])\\<>{[", c) != NULL;
}

static void
rw_put(struct rw *w, const char *p, size_t n)
{
	size_t	 room;

	w->need += n;
	if (w->dstlen == 0)
		return;
	room = w->dstlen - 1 - w->len;
	if (n > room)
		n = room;
	memcpy(w->dst + w->len, p, n);
	w->len += n;
}

static int
rw_full(const struct rw *w)
{
	return !w->counting && (w->dstlen == 0 || w->len == w->dstlen - 1);
}

static void
rw_mask(struct rw *w)
{
	rw_put(w, REDACT_MASK, sizeof(REDACT_MASK) - 1);
}

/* Case-insensitive search for lowercase needle in s[0..n). */
static const char *
redact_find(const char *s, size_t n, const char *needle, size_t from)
{
	size_t	 m = strlen(needle), i, j;

	if (m > n)
		return NULL;
	for (i = from; i <= n - m; i++) {
		for (j = 0; j < m; j++)
			if (redact_lower((unsigned char)s[i + j]) != needle[j])
				break;
		if (j == m)
			return s + i;
	}
	return NULL;
}

/* A lower-case letter followed by an upper-case one: a camelCase seam. */
static int
redact_seam(int a, int b)
{
	return a >= 'a' && a <= 'z' && b >= 'A' && b <= 'Z';
}

/*
 * 1 when lowercase word occurs in key[0..n) as a component of its own:
 * bounded on each side by the key's ends, a non-letter or a camelCase
 * seam.
 */
static int
redact_component(const char *key, size_t n, const char *word)
{
	const char	*p;
	size_t		 m = strlen(word), i, off = 0;

	while ((p = redact_find(key, n, word, off)) != NULL) {
		i = (size_t)(p - key);
		off = i + 1;
		if (i > 0 && redact_isalpha((unsigned char)key[i - 1]) &&
		    !redact_seam((unsigned char)key[i - 1],
		    (unsigned char)p[0]))
			continue;
		if (i + m < n && redact_isalpha((unsigned char)key[i + m]) &&
		    !redact_seam((unsigned char)p[m - 1],
		    (unsigned char)key[i + m]))
			continue;
		return 1;
	}
	return 0;
}

static int
redact_key_is_secretn(const char *key, size_t n)
{
	static const char *const words[] = {
		"token", "secret", "password", "passwd", "passphrase",
		"apikey", "api_key", "credential", "auth", "session", "cookie",
		"signature", "x-amz-", NULL
	};
	const char	*p;
	size_t		 i, off;

	for (i = 0; words[i] != NULL; i++)
		if (redact_find(key, n, words[i], 0) != NULL)
			return 1;
	/*
	 * "pass" and "pwd" count as whole components (DB_PASS, smtpPass,
	 * MYSQL_PWD) but not inside words (bypass, passenger, compass), and
	 * PWD and OLDPWD are the shell's working directories.  So does "sig",
	 * a presigned URL's signature (Azure's ?sig=), but not signal or
	 * design.
	 */
	if (redact_component(key, n, "pass") || redact_component(key, n,
	    "sig") ||
	    (redact_component(key, n, "pwd") && !(n == 3 ||
	    (n == 6 && redact_find(key, n, "oldpwd", 0) != NULL))))
		return 1;
	/*
	 * "key" counts when it ends a component (api-key, AWS_SECRET_KEY,
	 * key_id) but not inside a longer word (keyboard, keys).
	 */
	off = 0;
	while ((p = redact_find(key, n, "key", off)) != NULL) {
		off = (size_t)(p - key) + 3;
		if (off == n || !redact_isalpha((unsigned char)key[off]))
			return 1;
	}
	return 0;
}

int
redact_key_is_secret(const char *key)
{
	if (key == NULL)
		return 0;
	return redact_key_is_secretn(key, strlen(key));
}

/* Length of a quote at p: '"' or '\'' is 1, an escaped \" is 2, else 0. */
static size_t
redact_quote_len(const char *p)
{
	if (p[0] == '"' || p[0] == '\'')
		return 1;
	if (p[0] == '\\' && p[1] == '"')
		return 2;
	return 0;
}

/*
 * Skip a quoted value whose opening quote (q bytes) is at p; returns the
 * position after its closing quote (or the end of text when unterminated).
 */
static const char *
redact_skip_quoted(const char *p, size_t q)
{
	char	 open = p[q - 1];

	p += q;
	while (*p != '\0') {
		if (q == 2 && p[0] == '\\' && p[1] == '"')
			return p + 2;
		if (*p == '"' && q == 2)
			return p;	/* end of the enclosing string */
		if (q == 1 && *p == open)
			return p + 1;
		if (*p == '\\' && p[1] != '\0')
			p += 2;
		else
			p++;
	}
	return p;
}

/* Emit a masked value starting at p; returns where scanning resumes. */
static const char *
redact_value(struct rw *w, const char *p, int to_eol)
{
	const char	*e;
	size_t		 q;

	if ((q = redact_quote_len(p)) != 0) {
		e = redact_skip_quoted(p, q);
		rw_put(w, p, q);
		rw_mask(w);
		if ((size_t)(e - p) >= 2 * q &&
		    memcmp(e - q, p, q) == 0)
			rw_put(w, p, q);
		return e;
	}
	e = p;
	if (to_eol) {
		/* A header value runs to the end of the line or string. */
		while (*e != '\0' && *e != '\r' && *e != '\n' && *e != '"' &&
		    !(e[0] == '\\' && (e[1] == '"' || e[1] == 'n' ||
		    e[1] == 'r')))
			e += (e[0] == '\\' && e[1] != '\0') ? 2 : 1;
	} else {
		while (!redact_isvalend((unsigned char)*e))
			e++;
	}
	if (e != p)
		rw_mask(w);
	return e;
}

/*
 * Webhook URLs whose path is the credential: anyone holding it posts to
 * the channel.  Host and the path up to the secret part are kept.
 */
static const char *const redact_hooks[] = {
	"hooks.slack.com/services/", "hooks.slack.com/workflows/",
	"hooks.slack.com/triggers/", "discord.com/api/webhooks/",
	"discordapp.com/api/webhooks/", NULL
};

/*
 * "scheme://user:pass@host": mask everything before the last '@'.  A
 * webhook URL (redact_hooks): mask its path after the known prefix.
 */
static const char *
redact_url(struct rw *w, const char *word, const char *p)
{
	const char	*at = NULL, *e;
	size_t		 i, m;

	rw_put(w, word, (size_t)(p - word) + 3);
	p += 3;
	for (i = 0; redact_hooks[i] != NULL; i++) {
		m = strlen(redact_hooks[i]);
		if (redact_find(p, strnlen(p, m), redact_hooks[i], 0) != p)
			continue;
		for (e = p + m; !redact_isvalend((unsigned char)*e) &&
		    *e != '?'; e++)
			;
		rw_put(w, p, m);
		if (e != p + m)
			rw_mask(w);
		return e;
	}
	for (e = p; *e != '\0' && strchr("/?#\"'<>\\ \t\r\n", *e) == NULL;
	    e++)
		if (*e == '@')
			at = e;
	if (at == NULL)
		return p;
	rw_mask(w);
	return at;
}

/*
 * Where an unquoted command-line argument ends: a blank, a line end, a
 * quote (also the end of the log_quote()d value around a command), or a
 * shell operator.  A backslash escape of a log value (\" \n \r \t) ends
 * it too; any other backslash pair is part of the argument.
 */
static const char *
redact_arg_end(const char *p)
{
	while (*p != '\0' && !redact_isblank((unsigned char)*p) &&
	    strchr("\r\n\"'`;|&<>()", *p) == NULL) {
		if (p[0] == '\\') {
			if (p[1] == '\0' || strchr("\"nrt", p[1]) != NULL)
				break;
			p++;
		}
		p++;
	}
	return p;
}

/* Mask one command-line argument at p (quoted or not). */
static const char *
redact_arg(struct rw *w, const char *p)
{
	const char	*e;

	if (redact_quote_len(p) != 0)
		return redact_value(w, p, 0);
	e = redact_arg_end(p);
	if (e != p)
		rw_mask(w);
	return e;
}

/* "user:password" (curl -u): keep the user, mask after the first ':'. */
static const char *
redact_userpass(struct rw *w, const char *p)
{
	const char	*e, *c;

	if (redact_quote_len(p) != 0)
		return redact_value(w, p, 0);
	e = redact_arg_end(p);
	if ((c = memchr(p, ':', (size_t)(e - p))) == NULL)
		return p;	/* no password: curl asks for one */
	rw_put(w, p, (size_t)(c + 1 - p));
	if (c + 1 != e)
		rw_mask(w);
	return e;
}

/* An argument follows after blanks (and is not the next option). */
static const char *
redact_next_arg(const char *e)
{
	const char	*k;

	for (k = e; redact_isblank((unsigned char)*k); k++)
		;
	if (k == e || *k == '-' || (redact_arg_end(k) == k &&
	    redact_quote_len(k) == 0))
		return NULL;
	return k;
}

/*
 * API keys by their documented prefixes.  A prefix alone proves little
 * ("sk-learn"), so the rest of the word must be as long as the provider's
 * keys are, and for the short, common-looking prefixes mix upper case,
 * lower case and digits as random keys do ("sk-learn-tutorial-2024" is
 * left alone).  AWS key ids have an exact length and alphabet.
 */
#define SHAPE_MIX	0x01	/* upper, lower and digit in the body */
#define SHAPE_AWS	0x02	/* exactly min chars of [A-Z0-9] */

static const struct redact_shape {
	const char	*prefix;
	size_t		 min;		/* body length after the prefix */
	int		 flags;
} redact_shapes[] = {
	{ "sk-ant-",	 32, SHAPE_MIX },	/* Anthropic */
	{ "sk-",	 20, SHAPE_MIX },	/* OpenAI and others */
	{ "sk_live_",	 16, 0 },		/* Stripe */
	{ "sk_test_",	 16, 0 },
	{ "rk_live_",	 16, 0 },
	{ "ghp_",	 30, 0 },		/* GitHub */
	{ "gho_",	 30, 0 },
	{ "ghu_",	 30, 0 },
	{ "ghs_",	 30, 0 },
	{ "ghr_",	 30, 0 },
	{ "github_pat_", 20, 0 },
	{ "glpat-",	 20, 0 },		/* GitLab */
	{ "xoxb-",	 10, 0 },		/* Slack */
	{ "xoxp-",	 10, 0 },
	{ "xoxa-",	 10, 0 },
	{ "xoxe-",	 10, 0 },
	{ "xoxr-",	 10, 0 },
	{ "xoxs-",	 10, 0 },
	{ "xapp-",	 10, 0 },
	{ "npm_",	 30, 0 },		/* npm */
	{ "hf_",	 30, SHAPE_MIX },	/* Hugging Face */
	{ "AIza",	 30, SHAPE_MIX },	/* Google */
	{ "AKIA",	 16, SHAPE_AWS },	/* AWS key ids */
	{ "ASIA",	 16, SHAPE_AWS },
	{ NULL,		 0, 0 }
};

static const struct redact_shape *
redact_key_shape(const char *s, size_t n)
{
	const struct redact_shape	*sh;
	const char			*p;
	size_t				 pl;
	int				 up, lo, dg, ok;

	for (sh = redact_shapes; sh->prefix != NULL; sh++) {
		pl = strlen(sh->prefix);
		if (n < pl + sh->min || strncmp(s, sh->prefix, pl) != 0)
			continue;
		up = lo = dg = 0;
		ok = 1;
		for (p = s + pl; p < s + n; p++) {
			up |= *p >= 'A' && *p <= 'Z';
			lo |= *p >= 'a' && *p <= 'z';
			dg |= *p >= '0' && *p <= '9';
			if ((sh->flags & SHAPE_AWS) && !((*p >= 'A' &&
			    *p <= 'Z') || (*p >= '0' && *p <= '9')))
				ok = 0;
		}
		if ((sh->flags & SHAPE_AWS) && n != pl + sh->min)
			ok = 0;
		if ((sh->flags & SHAPE_MIX) && !(up && lo && dg))
			ok = 0;
		/* The first matching prefix decides: sk-ant- before sk-. */
		return ok ? sh : NULL;
	}
	return NULL;
}

/*
 * A JWT: the word [s, e) is its header ("eyJ" is base64url of '{"'),
 * then '.', the payload, '.' and a signature (empty when unsigned).
 * Returns its end, or NULL.
 */
static const char *
redact_jwt_end(const char *s, const char *e)
{
	const char	*p;

	if (e - s < 10 || strncmp(s, "eyJ", 3) != 0 || *e != '.')
		return NULL;
	for (p = e + 1; redact_isword((unsigned char)*p); p++)
		;
	if (p - (e + 1) < 2 || *p != '.')
		return NULL;
	for (p++; redact_isword((unsigned char)*p); p++)
		;
	return p;
}

/* A word that names a command with password options starts its scope. */
static int
redact_cmd_word(const char *s, size_t n)
{
	if ((n >= 5 && strncmp(s, "mysql", 5) == 0) ||
	    (n >= 7 && strncmp(s, "mariadb", 7) == 0))
		return REDACT_CMD_MYSQL;
	if (n == 7 && strncmp(s, "sshpass", 7) == 0)
		return REDACT_CMD_SSHPASS;
	if (n == 4 && strncmp(s, "curl", 4) == 0)
		return REDACT_CMD_CURL;
	if (n == 9 && strncmp(s, "redis-cli", 9) == 0)
		return REDACT_CMD_REDIS;
	if ((n == 6 && strncmp(s, "docker", 6) == 0) ||
	    (n == 6 && strncmp(s, "podman", 6) == 0) ||
	    (n == 7 && strncmp(s, "nerdctl", 7) == 0))
		return REDACT_CMD_DOCKER;
	if (n == 3 && strncmp(s, "aws", 3) == 0)
		return REDACT_CMD_AWS;
	return REDACT_CMD_NONE;
}

static int
redact_is(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/*
 * An option word [s, e) inside the scope of w->cmd: returns where
 * scanning resumes after masking its password, or NULL when it is not a
 * password option.  Short options take the value attached (-pX) or, where
 * the command allows it, as the next argument (-p X).
 */
static const char *
redact_cmd_opt(struct rw *w, const char *s, const char *e)
{
	const char	*k;
	size_t		 n = (size_t)(e - s);
	char		 opt = '\0';
	int		 sep = 1, userpass = 0;

	switch (w->cmd) {
	case REDACT_CMD_MYSQL:
		opt = 'p';
		sep = 0;	/* "-p db": -p asks, db is a database */
		break;
	case REDACT_CMD_SSHPASS:
		opt = 'p';
		break;
	case REDACT_CMD_REDIS:
		opt = 'a';
		break;
	case REDACT_CMD_LOGIN:
		opt = 'p';	/* docker login -p X; --password X is generic */
		break;
	case REDACT_CMD_CURL:
		userpass = 1;
		if (redact_is(s, n, "--user") ||
		    redact_is(s, n, "--proxy-user")) {
			/* --user=u:X, or --user u:X */
			if (*e == '=')
				k = e + 1;
			else if ((k = redact_next_arg(e)) == NULL)
				return NULL;
			rw_put(w, s, (size_t)(k - s));
			return redact_userpass(w, k);
		}
		opt = s[1] == 'U' ? 'U' : 'u';
		break;
	default:
		return NULL;
	}
	if (n < 2 || s[0] != '-' || s[1] != opt)
		return NULL;
	rw_put(w, s, 2);
	/*
	 * Attached: the rest of the word and on (-pX, -p'a b').  A bare '"'
	 * right after -p followed by a blank is the end of a log_quote()d
	 * command ("mysql -u root -p"), not a quoted password.
	 */
	if (n > 2 || *e == '\'' || (e[0] == '\\' && e[1] == '"') ||
	    (*e == '"' && e[1] != '\0' && !redact_isblank((unsigned char)e[1])))
		k = s + 2;
	else if (!sep || (k = redact_next_arg(e)) == NULL)
		return s + 2;
	else
		rw_put(w, e, (size_t)(k - e));
	/* sshpass has one password: the command it runs is not its own. */
	if (w->cmd == REDACT_CMD_SSHPASS)
		w->cmd = REDACT_CMD_NONE;
	return userpass ? redact_userpass(w, k) : redact_arg(w, k);
}

/* "--token X": a long option named like a secret, value after blanks. */
static int
redact_secret_opt(const char *s, size_t n)
{
	static const char *const ends[] = { "token", "password", "passwd",
	    "pass", "passphrase", "secret", "apikey", "api-key", "api_key",
	    NULL };
	size_t	 i, m;

	if (n < 3 || s[0] != '-' || s[1] != '-')
		return 0;
	for (i = 0; ends[i] != NULL; i++) {
		m = strlen(ends[i]);
		if (n - 2 >= m && redact_find(s + n - m, m, ends[i], 0) !=
		    NULL && (n - 2 == m || !redact_isalpha(
		    (unsigned char)s[n - m - 1])))
			return 1;
	}
	return 0;
}

/*
 * A PEM private key: the word [s, e) is "-----BEGIN", its label (on the
 * same line, up to 64 bytes) ends in "PRIVATE KEY-----" or "PRIVATE KEY
 * BLOCK-----" (PGP).  The header and the END line are kept, the base64
 * body and any headers between (Proc-Type, DEK-Info) masked; without an
 * END line everything to the end of the text is.  NULL: not one.
 */
static const char *
redact_pem(struct rw *w, const char *s, const char *e)
{
	const char	*h, *body, *end;

	if ((size_t)(e - s) != 10 || strncmp(s, "-----BEGIN", 10) != 0 ||
	    *e != ' ')
		return NULL;
	for (h = e; *h != '\0' && *h != '\n' && *h != '\r' && *h != '\\' &&
	    h - e < 64 && strncmp(h, "-----", 5) != 0; h++)
		;
	if (strncmp(h, "-----", 5) != 0 ||
	    redact_find(e, (size_t)(h - e), "private key", 0) == NULL)
		return NULL;
	body = h + 5;
	rw_put(w, s, (size_t)(body - s));
	if ((end = strstr(body, "-----END")) == NULL)
		end = body + strlen(body);
	if (end != body)
		rw_mask(w);
	return end;
}

/*
 * HashiCorp Vault tokens: "hvs." (service), "hvb." (batch), "hvr."
 * (recovery) and a long random body.  The word [s, e) is the prefix
 * without its '.'; returns the token's end, or NULL.
 */
static const char *
redact_vault_end(const char *s, const char *e)
{
	const char	*p;
	int		 up = 0, lo = 0, dg = 0;

	if (e - s != 3 || *e != '.' || (strncmp(s, "hvs", 3) != 0 &&
	    strncmp(s, "hvb", 3) != 0 && strncmp(s, "hvr", 3) != 0))
		return NULL;
	for (p = e + 1; redact_isword((unsigned char)*p); p++) {
		up |= *p >= 'A' && *p <= 'Z';
		lo |= *p >= 'a' && *p <= 'z';
		dg |= *p >= '0' && *p <= '9';
	}
	if (p - (e + 1) < 24 || up + lo + dg < 2)
		return NULL;
	return p;
}

/* A word has been read at [s, e); handle what it may start. */
static const char *
redact_word(struct rw *w, const char *text, const char *s, const char *e)
{
	const struct redact_shape	*sh;
	const char			*k, *t;
	size_t				 n = (size_t)(e - s), q;
	int				 quoted_key = 0, cmd;

	if (e[0] == ':' && e[1] == '/' && e[2] == '/')
		return redact_url(w, s, e);
	if (s[0] == '-' && (t = redact_pem(w, s, e)) != NULL)
		return t;

	/* Value shapes: API keys by prefix, JWTs, Vault tokens. */
	if ((sh = redact_key_shape(s, n)) != NULL) {
		rw_put(w, s, strlen(sh->prefix));
		rw_mask(w);
		return e;
	}
	if ((t = redact_jwt_end(s, e)) != NULL) {
		rw_mask(w);
		return t;
	}
	if ((t = redact_vault_end(s, e)) != NULL) {
		rw_put(w, s, 4);
		rw_mask(w);
		return t;
	}
	/*
	 * openssl's password arguments: "-pass pass:X" (also -passin,
	 * -passout, -password); env:, file: and fd: name where it is.
	 */
	if (n == 4 && memcmp(s, "pass", 4) == 0 && e[0] == ':' &&
	    (s == text || redact_isblank((unsigned char)s[-1]) ||
	    s[-1] == '=' || s[-1] == '\'' || s[-1] == '"') &&
	    (redact_arg_end(e + 1) != e + 1 || redact_quote_len(e + 1))) {
		rw_put(w, s, 5);
		return redact_arg(w, e + 1);
	}

	/* Commands whose options carry passwords, and those options. */
	if (s[0] != '-' && (cmd = redact_cmd_word(s, n)) != REDACT_CMD_NONE)
		w->cmd = cmd;
	else if (s[0] == '-' && (t = redact_cmd_opt(w, s, e)) != NULL)
		return t;
	else if (s[0] != '-' && w->cmd == REDACT_CMD_SSHPASS)
		w->cmd = REDACT_CMD_NONE;	/* the command it runs */
	else if (w->cmd == REDACT_CMD_DOCKER && redact_is(s, n, "login"))
		w->cmd = REDACT_CMD_LOGIN;	/* not docker run -p 80:80 */
	else if (w->cmd == REDACT_CMD_AWS && redact_is(s, n, "configure"))
		w->cmd = REDACT_CMD_AWSCONF;
	else if (w->cmd == REDACT_CMD_AWSCONF && s[0] != '-' &&
	    redact_key_is_secretn(s, n) &&
	    (k = redact_next_arg(e)) != NULL) {
		/* aws configure set aws_secret_access_key X */
		rw_put(w, s, (size_t)(k - s));
		return redact_arg(w, k);
	}
	if (redact_secret_opt(s, n) && (k = redact_next_arg(e)) != NULL) {
		rw_put(w, s, (size_t)(k - s));
		return redact_arg(w, k);
	}

	if ((n == 6 && redact_find(s, n, "bearer", 0) != NULL) ||
	    (n == 5 && redact_find(s, n, "basic", 0) != NULL)) {
		for (k = e; redact_isblank((unsigned char)*k); k++)
			;
		for (t = k; redact_istokchar((unsigned char)*t); t++)
			;
		if (k != e && t != k && (n == 6 || redact_looks_b64(k, t))) {
			rw_put(w, s, (size_t)(k - s));
			rw_mask(w);
			return t;
		}
	}

	/* key=value, also "key = value" as config files write it. */
	for (k = e; redact_isblank((unsigned char)*k); k++)
		;
	if (*k == '=' && redact_key_is_secretn(s, n)) {
		k++;
		if (k - 1 != e)
			while (redact_isblank((unsigned char)*k))
				k++;
		rw_put(w, s, (size_t)(k - s));
		return redact_value(w, k, 0);
	}

	/* "key": value (JSON, possibly escaped inside a quoted log value). */
	k = e;
	if (s > text && s[-1] == '"' && (q = redact_quote_len(k)) != 0 &&
	    k[0] != '\'') {
		k += q;
		quoted_key = 1;
	}
	while (redact_isblank((unsigned char)*k))
		k++;
	/* Unquoted "Name: value" needs the blank, so "host:443" is left. */
	if (*k == ':' && (quoted_key || redact_isblank((unsigned char)k[1])) &&
	    redact_key_is_secretn(s, n)) {
		k++;
		while (redact_isblank((unsigned char)*k))
			k++;
		if (quoted_key && (*k == '{' || *k == '['))
			goto plain;
		rw_put(w, s, (size_t)(k - s));
		return redact_value(w, k, !quoted_key);
	}
plain:
	rw_put(w, s, n);
	return e;
}

/* "/screen/<tok>" and "/term/<tok>": capability paths. */
static const char *
redact_slash(struct rw *w, const char *p)
{
	static const char *const caps[] = { "/screen/", "/term/", NULL };
	const char	*e;
	size_t		 i, n;

	for (i = 0; caps[i] != NULL; i++) {
		n = strlen(caps[i]);
		if (strncmp(p, caps[i], n) != 0)
			continue;
		for (e = p + n; !redact_isvalend((unsigned char)*e) &&
		    *e != '/' && *e != '?'; e++)
			;
		if (e == p + n)
			continue;
		rw_put(w, p, n);
		rw_mask(w);
		return e;
	}
	rw_put(w, p, 1);
	return p + 1;
}

static void
redact_run(struct rw *w, const char *src)
{
	const char	*p = src, *e;

	w->cmd = REDACT_CMD_NONE;
	while (*p != '\0' && !rw_full(w)) {
		if (redact_isword((unsigned char)*p)) {
			for (e = p; redact_isword((unsigned char)*e); e++)
				;
			p = redact_word(w, src, p, e);
		} else if (*p == '/')
			p = redact_slash(w, p);
		else {
			/* Copy the run up to the next interesting byte. */
			for (e = p + 1; *e != '\0' && *e != '/' &&
			    !redact_isword((unsigned char)*e); e++)
				;
			/* A shell operator or a line ends a command's scope. */
			if (memchr(p, ';', (size_t)(e - p)) != NULL ||
			    memchr(p, '|', (size_t)(e - p)) != NULL ||
			    memchr(p, '&', (size_t)(e - p)) != NULL ||
			    memchr(p, '\n', (size_t)(e - p)) != NULL ||
			    memchr(p, '\r', (size_t)(e - p)) != NULL)
				w->cmd = REDACT_CMD_NONE;
			rw_put(w, p, (size_t)(e - p));
			p = e;
		}
	}
	if (w->dstlen > 0)
		w->dst[w->len] = '\0';
}

size_t
redact_text(char *dst, size_t dstlen, const char *src)
{
	struct rw	 w = { dst, dstlen, 0, 0, 0, REDACT_CMD_NONE };

	if (src == NULL)
		src = "";
	redact_run(&w, src);
	return w.len;
}

char *
redact_dup(const char *src)
{
	struct rw	 w = { NULL, 0, 0, 0, 1, REDACT_CMD_NONE };
	char		*out;

	if (src == NULL)
		src = "";
	redact_run(&w, src);
	out = xmalloc(w.need + 1);
	w.dst = out;
	w.dstlen = w.need + 1;
	w.len = w.need = 0;
	redact_run(&w, src);
	return out;
}

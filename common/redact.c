/*
 * Masking of secrets in free text (SPEC X-5).  Every log line and error
 * sentence passes through redact_text(), so it must be cheap, bounded and
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
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "redact.h"

struct rw {
	char	*dst;
	size_t	 dstlen;
	size_t	 len;		/* bytes written to dst */
	size_t	 need;		/* bytes the whole output takes */
	int	 counting;	/* keep going past a full dst to learn need */
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

static int
redact_key_is_secretn(const char *key, size_t n)
{
	static const char *const words[] = {
		"token", "secret", "password", "passwd", "apikey", "api_key",
		"credential", "auth", "session", "cookie", "signature",
		"x-amz-", NULL
	};
	const char	*p;
	size_t		 i, off;

	for (i = 0; words[i] != NULL; i++)
		if (redact_find(key, n, words[i], 0) != NULL)
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

/* "scheme://user:pass@host": mask everything before the last '@'. */
static const char *
redact_url(struct rw *w, const char *word, const char *p)
{
	const char	*at = NULL, *e;

	rw_put(w, word, (size_t)(p - word) + 3);
	p += 3;
	for (e = p; *e != '\0' && strchr("/?#\"'<>\\ \t\r\n", *e) == NULL;
	    e++)
		if (*e == '@')
			at = e;
	if (at == NULL)
		return p;
	rw_mask(w);
	return at;
}

/* A word has been read at [s, e); handle what it may start. */
static const char *
redact_word(struct rw *w, const char *text, const char *s, const char *e)
{
	const char	*k, *t;
	size_t		 n = (size_t)(e - s), q;
	int		 quoted_key = 0;

	if (e[0] == ':' && e[1] == '/' && e[2] == '/')
		return redact_url(w, s, e);

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
	struct rw	 w = { dst, dstlen, 0, 0, 0 };

	if (src == NULL)
		src = "";
	redact_run(&w, src);
	return w.len;
}

char *
redact_dup(const char *src)
{
	struct rw	 w = { NULL, 0, 0, 0, 1 };
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

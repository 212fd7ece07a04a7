/* SPDX-License-Identifier: MIT */
/*
 * jansson for untrusted JSON.  The size cap is checked before jansson sees
 * a byte, duplicate keys are an error (two readers must never disagree on
 * which "path" counted), and NUL inside strings is refused so a C string
 * never silently stops short.  Error sentences give a position, never the
 * input itself: a request may carry secrets.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "json.h"

static void
jsonx_err(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
jsonx_err(char *err, const char *fmt, ...)
{
	va_list	 ap;

	if (err == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(err, JSONX_ERRLEN, fmt, ap);
	va_end(ap);
}

/* What went wrong, in words that never quote the input. */
static const char *
jsonx_what(const json_error_t *e)
{
	switch (json_error_code(e)) {
	case json_error_duplicate_key:
		return "duplicate key";
	case json_error_null_character:
	case json_error_null_byte_in_key:
		return "NUL character in a string";
	case json_error_invalid_utf8:
		return "invalid UTF-8";
	case json_error_premature_end_of_input:
		return "unexpected end of input";
	case json_error_end_of_input_expected:
		return "trailing data after the value";
	case json_error_stack_overflow:
		return "nesting too deep";
	case json_error_numeric_overflow:
		return "number out of range";
	case json_error_out_of_memory:
		return "out of memory";
	default:
		return "syntax error";
	}
}

json_t *
jsonx_parse(const char *s, size_t n, size_t max, int want_object, int *code,
    char err[JSONX_ERRLEN])
{
	json_error_t	 e;
	json_t		*j;
	size_t		 flags = JSON_REJECT_DUPLICATES;

	*code = ERR_BAD_JSON;
	if (err != NULL)
		err[0] = '\0';
	if (n > max) {
		*code = ERR_TOO_LARGE;
		jsonx_err(err, "The JSON message is %zu bytes, over the limit "
		    "of %zu.", n, max);
		return NULL;
	}
	if (s == NULL) {
		jsonx_err(err, "The JSON message is empty.");
		return NULL;
	}
	if (!want_object)
		flags |= JSON_DECODE_ANY;
	if ((j = json_loadb(s, n, flags, &e)) == NULL) {
		if (json_error_code(&e) == json_error_out_of_memory)
			*code = ERR_NOMEM;
		jsonx_err(err, "Invalid JSON at line %d, column %d: %s.",
		    e.line, e.column, jsonx_what(&e));
		return NULL;
	}
	if (want_object && !json_is_object(j)) {
		json_decref(j);
		jsonx_err(err, "The JSON message must be an object.");
		return NULL;
	}
	*code = 0;
	return j;
}

/* Look key up; NULL with ERR_NOT_FOUND when absent (JSON null too). */
static int
jsonx_get(json_t *obj, const char *key, json_t **v, char *err)
{
	*v = NULL;
	if (!json_is_object(obj)) {
		jsonx_err(err, "Expected an object holding \"%s\".", key);
		return ERR_BAD_REQUEST;
	}
	*v = json_object_get(obj, key);
	if (*v == NULL || json_is_null(*v)) {
		jsonx_err(err, "Missing field \"%s\".", key);
		return ERR_NOT_FOUND;
	}
	return 0;
}

int
jsonx_str(json_t *obj, const char *key, size_t maxlen, const char **out,
    char err[JSONX_ERRLEN])
{
	json_t	*v;
	size_t	 len;
	int	 r;

	if ((r = jsonx_get(obj, key, &v, err)) != 0)
		return r;
	if (!json_is_string(v)) {
		jsonx_err(err, "Field \"%s\" must be a string.", key);
		return ERR_BAD_REQUEST;
	}
	len = json_string_length(v);
	if (len == 0 || len > maxlen ||
	    memchr(json_string_value(v), '\0', len) != NULL) {
		jsonx_err(err, "Field \"%s\" must be a string of 1 to %zu "
		    "bytes without NUL.", key, maxlen);
		return ERR_BAD_REQUEST;
	}
	*out = json_string_value(v);
	return 0;
}

int
jsonx_int(json_t *obj, const char *key, int64_t min, int64_t max,
    int64_t *out, char err[JSONX_ERRLEN])
{
	json_t		*v;
	json_int_t	 i;
	int		 r;

	if ((r = jsonx_get(obj, key, &v, err)) != 0)
		return r;
	if (!json_is_integer(v) || (i = json_integer_value(v)) < min ||
	    i > max) {
		jsonx_err(err, "Field \"%s\" must be an integer from %lld to "
		    "%lld.", key, (long long)min, (long long)max);
		return ERR_BAD_REQUEST;
	}
	*out = (int64_t)i;
	return 0;
}

int
jsonx_bool(json_t *obj, const char *key, int *out, char err[JSONX_ERRLEN])
{
	json_t	*v;
	int	 r;

	if ((r = jsonx_get(obj, key, &v, err)) != 0)
		return r;
	if (!json_is_boolean(v)) {
		jsonx_err(err, "Field \"%s\" must be true or false.", key);
		return ERR_BAD_REQUEST;
	}
	*out = json_is_true(v);
	return 0;
}

int
jsonx_obj(json_t *obj, const char *key, json_t **out, char err[JSONX_ERRLEN])
{
	json_t	*v;
	int	 r;

	if ((r = jsonx_get(obj, key, &v, err)) != 0)
		return r;
	if (!json_is_object(v)) {
		jsonx_err(err, "Field \"%s\" must be an object.", key);
		return ERR_BAD_REQUEST;
	}
	*out = v;
	return 0;
}

/* Name an unknown key only when it is short and plain: it is input. */
static int
jsonx_key_printable(const char *k)
{
	size_t	 n;

	for (n = 0; k[n] != '\0'; n++) {
		if (n >= 32)
			return 0;
		if (!((k[n] >= 'a' && k[n] <= 'z') ||
		    (k[n] >= 'A' && k[n] <= 'Z') ||
		    (k[n] >= '0' && k[n] <= '9') ||
		    k[n] == '_' || k[n] == '-' || k[n] == '.'))
			return 0;
	}
	return n > 0;
}

int
jsonx_only_keys(json_t *obj, const char *const *allowed,
    char err[JSONX_ERRLEN])
{
	const char	*k;
	json_t		*v;
	size_t		 i;

	if (!json_is_object(obj)) {
		jsonx_err(err, "Expected an object.");
		return ERR_BAD_REQUEST;
	}
	json_object_foreach(obj, k, v) {
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(k, allowed[i]) == 0)
				break;
		if (allowed[i] != NULL)
			continue;
		if (jsonx_key_printable(k))
			jsonx_err(err, "Unknown field \"%s\".", k);
		else
			jsonx_err(err, "Unknown field.");
		return ERR_BAD_REQUEST;
	}
	return 0;
}

char *
jsonx_dump(const json_t *j, size_t *lenp)
{
	char	*s;

	if (lenp != NULL)
		*lenp = 0;
	if (j == NULL)
		return NULL;
	s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	if (s != NULL && lenp != NULL)
		*lenp = strlen(s);
	return s;
}

size_t
jsonx_utf8_len(const uint8_t *p, size_t n, uint32_t *cp)
{
	struct cursor	 cur;
	uint32_t	 c;
	size_t		 len, i;
	uint8_t		 b;

	cursor_init(&cur, p, n);
	if (cursor_get_u8(&cur, &b) != 0)
		return 0;
	if (b < 0x80) {
		c = b;
		len = 1;
		goto out;
	}
	if (b >= 0xc2 && b <= 0xdf) {
		len = 2;
		c = b & 0x1f;
	} else if (b >= 0xe0 && b <= 0xef) {
		len = 3;
		c = b & 0x0f;
	} else if (b >= 0xf0 && b <= 0xf4) {
		len = 4;
		c = b & 0x07;
	} else
		return 0;
	for (i = 1; i < len; i++) {
		if (cursor_get_u8(&cur, &b) != 0 || (b & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (b & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
out:
	if (cp != NULL)
		*cp = c;
	return len;
}

void
jsonx_utf8_fix(char *s)
{
	uint8_t	*p = (uint8_t *)s;
	size_t	 n = strlen(s), k;

	while (n > 0) {
		if ((k = jsonx_utf8_len(p, n, NULL)) == 0) {
			*p = '?';
			k = 1;
		}
		p += k;
		n -= k;
	}
}

json_t *
jsonx_name_string(const char *name, size_t len, int *escaped)
{
	static const char	 hexd[] = "0123456789abcdef";
	const uint8_t		*p = (const uint8_t *)name;
	size_t			 i, k, o = 0;
	char			*esc;
	json_t			*j;

	if (escaped != NULL)
		*escaped = 0;
	if ((j = json_stringn(name, len)) != NULL)
		return j;
	if ((esc = malloc(4 * len + 1)) == NULL)
		return NULL;
	for (i = 0; i < len; i += k) {
		if ((k = jsonx_utf8_len(p + i, len - i, NULL)) != 0) {
			memcpy(esc + o, p + i, k);
			o += k;
			continue;
		}
		k = 1;
		esc[o++] = '\\';
		esc[o++] = 'x';
		esc[o++] = hexd[p[i] >> 4];
		esc[o++] = hexd[p[i] & 15];
	}
	j = json_stringn(esc, o);
	free(esc);
	if (escaped != NULL && j != NULL)
		*escaped = 1;
	return j;
}

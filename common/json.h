/* SPDX-License-Identifier: MIT */
/*
 * jansson helpers for untrusted JSON.  Sizes are capped before parsing,
 * duplicate keys are rejected (JSON_REJECT_DUPLICATES), NUL bytes inside
 * strings are refused, and the getters check shape and bounds so handlers
 * never touch a json_t of the wrong type.  Getters return 0, ERR_NOT_FOUND
 * when an optional key is absent (out left untouched), or ERR_BAD_REQUEST
 * with a sentence in err (if not NULL) naming the key.
 */
#ifndef COMMON_JSON_H
#define COMMON_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define JSONX_ERRLEN 160

/*
 * Parse at most max bytes.  Returns NULL with *code set to ERR_TOO_LARGE
 * (n > max) or ERR_BAD_JSON (syntax, duplicates, not an object when
 * want_object) and a sentence in err.
 */
json_t	*jsonx_parse(const char *s, size_t n, size_t max, int want_object,
	    int *code, char err[JSONX_ERRLEN]);

/* String of 1..maxlen bytes without NUL; *out borrowed from obj. */
int	 jsonx_str(json_t *obj, const char *key, size_t maxlen,
	    const char **out, char err[JSONX_ERRLEN]);
/* Integer within [min, max]. */
int	 jsonx_int(json_t *obj, const char *key, int64_t min, int64_t max,
	    int64_t *out, char err[JSONX_ERRLEN]);
int	 jsonx_bool(json_t *obj, const char *key, int *out,
	    char err[JSONX_ERRLEN]);
/* Object (borrowed). */
int	 jsonx_obj(json_t *obj, const char *key, json_t **out,
	    char err[JSONX_ERRLEN]);
/* Reject keys not in the NULL-terminated allowed list. */
int	 jsonx_only_keys(json_t *obj, const char *const *allowed,
	    char err[JSONX_ERRLEN]);

/* Serialise compactly; caller frees.  NULL on failure. */
char	*jsonx_dump(const json_t *j, size_t *lenp);

/*
 * UTF-8, as JSON strings need it.  jsonx_utf8_len: the length of the
 * valid sequence at p (n bytes left), 0 if it is not one (overlong forms,
 * surrogates and code points past U+10FFFF included); *cp (may be NULL)
 * gets its code point.  jsonx_utf8_fix: replace each byte of s that
 * starts no valid sequence with '?', in place, so a sentence cut short
 * by a fixed buffer still makes a JSON string.
 */
size_t	 jsonx_utf8_len(const uint8_t *p, size_t n, uint32_t *cp);
void	 jsonx_utf8_fix(char *s);
/*
 * A file name as a JSON string, never lost: each byte of name (len bytes)
 * that starts no valid UTF-8 sequence is written as \xHH.  *escaped (may
 * be NULL) says whether any was.  NULL only when out of memory.
 */
json_t	*jsonx_name_string(const char *name, size_t len, int *escaped);

#endif

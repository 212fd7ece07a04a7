/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: jsonx_parse and the getters on arbitrary bytes, as a
 * control-channel request would reach them.  Checks that error sentences
 * are always terminated and that accepted strings have no NUL.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json.h"

static const char *const allowed[] = { "id", "op", "args", NULL };

static void
fuzz_getters(json_t *j)
{
	char		 err[JSONX_ERRLEN];
	const char	*s;
	int64_t		 i;
	int		 b;
	json_t		*o;
	char		*d;
	size_t		 len;

	if (jsonx_str(j, "op", 64, &s, err) == 0 && strlen(s) == 0)
		abort();
	jsonx_int(j, "id", 1, UINT32_MAX, &i, err);
	jsonx_bool(j, "b", &b, err);
	if (jsonx_obj(j, "args", &o, err) == 0) {
		jsonx_str(o, "path", 4096, &s, err);
		jsonx_int(o, "mode", 0, 07777, &i, err);
		jsonx_only_keys(o, allowed, err);
	}
	if (jsonx_only_keys(j, allowed, err) != 0 &&
	    memchr(err, '\0', JSONX_ERRLEN) == NULL)
		abort();
	if ((d = jsonx_dump(j, &len)) != NULL) {
		if (strlen(d) != len)
			abort();
		free(d);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	 err[JSONX_ERRLEN];
	int	 code = 1;
	json_t	*j;

	j = jsonx_parse((const char *)data, size, 64 * 1024, 1, &code, err);
	if (j == NULL) {
		if (code != ERR_BAD_JSON && code != ERR_TOO_LARGE &&
		    code != ERR_NOMEM)
			abort();
		if (memchr(err, '\0', JSONX_ERRLEN) == NULL)
			abort();
		return 0;
	}
	if (code != 0 || !json_is_object(j))
		abort();
	fuzz_getters(j);
	json_decref(j);
	return 0;
}

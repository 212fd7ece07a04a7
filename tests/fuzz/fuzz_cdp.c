/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the DevTools client's parsers (guestd/cdp.c): the
 * WebSocket frame parser and the HTTP response head parser get arbitrary
 * bytes.  Invariants: a frame consumes no more than it was given, its
 * payload lies inside the input and never exceeds the bound; a head is
 * never longer than the input or CDP_MAX_HTTP_HEAD.  The URL rule of
 * page.c must refuse anything with an '@' in the authority.
 */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cdp.h"
#include "err.h"
#include "guestd.h"
#include "page.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* page.c links browser.c, which reads the settings. */
struct guestd_settings guestd;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cdp_frame	 f;
	size_t			 off = 0, max = 4096;
	int64_t			 clen;
	int			 r, status;
	char			*s;

	while (off < size) {
		r = cdp_ws_parse(data + off, size - off, max, &f);
		if (r <= 0)
			break;
		if ((size_t)r > size - off || f.len > max ||
		    f.payload < data + off || f.payload + f.len >
		    data + off + (size_t)r)
			abort();
		off += (size_t)r;
	}
	r = cdp_http_head((const char *)data, size, &status, &clen);
	if (r > 0 && ((size_t)r > size || r > CDP_MAX_HTTP_HEAD ||
	    status < 100 || status > 599))
		abort();
	s = malloc(size + 1);
	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (page_url_check(s) == 0) {
		const char *a = strstr(s, "://") + 3;
		size_t n = strcspn(a, "/?#\\");

		if (memchr(a, '@', n) != NULL)
			abort();
	}
	free(s);
	return 0;
}

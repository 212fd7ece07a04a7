/* SPDX-License-Identifier: MIT */
/*
 * Bounded tag scans over S3 replies (s3-xml.h).  Each search stays inside
 * the span it was given, so a reply cut anywhere is just "not found".
 */
#include "autoconf.h"

#include <string.h>

#include "s3-xml.h"

/* Find needle (of nlen bytes) in [p, p + n); offset or -1. */
static long
s3_xml_find(const char *p, size_t n, const char *needle, size_t nlen)
{
	size_t	 i;

	if (nlen == 0 || nlen > n)
		return -1;
	for (i = 0; i + nlen <= n; i++)
		if (p[i] == needle[0] && memcmp(p + i, needle, nlen) == 0)
			return (long)i;
	return -1;
}

int
s3_xml_elem(const char *p, size_t n, const char *tag, size_t *off,
    size_t *len, size_t *end)
{
	char	 open[72], close[72];
	size_t	 tl = strlen(tag);
	long	 a, b;

	if (tl == 0 || tl > 64)
		return 0;
	open[0] = '<';
	memcpy(open + 1, tag, tl);
	open[tl + 1] = '>';
	close[0] = '<';
	close[1] = '/';
	memcpy(close + 2, tag, tl);
	close[tl + 2] = '>';
	if ((a = s3_xml_find(p, n, open, tl + 2)) < 0)
		return 0;
	a += (long)tl + 2;
	if ((b = s3_xml_find(p + a, n - (size_t)a, close, tl + 3)) < 0)
		return 0;
	*off = (size_t)a;
	*len = (size_t)b;
	if (end != NULL)
		*end = (size_t)a + (size_t)b + tl + 3;
	return 1;
}

static const struct {
	const char	*name;
	char		 c;
} s3_xml_ents[] = {
	{ "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' },
	{ "&quot;", '"' }, { "&apos;", '\'' },
};

int
s3_xml_text(const char *p, size_t n, const char *tag, char *out,
    size_t outlen, size_t *end)
{
	size_t	 off, len, i, o = 0, k, el;

	if (outlen == 0 || !s3_xml_elem(p, n, tag, &off, &len, end))
		return 0;
	p += off;
	for (i = 0; i < len && o + 1 < outlen; ) {
		if (p[i] == '&') {
			for (k = 0; k < sizeof(s3_xml_ents) /
			    sizeof(s3_xml_ents[0]); k++) {
				el = strlen(s3_xml_ents[k].name);
				if (len - i >= el && memcmp(p + i,
				    s3_xml_ents[k].name, el) == 0)
					break;
			}
			if (k < sizeof(s3_xml_ents) / sizeof(s3_xml_ents[0])) {
				out[o++] = s3_xml_ents[k].c;
				i += strlen(s3_xml_ents[k].name);
				continue;
			}
		}
		/* No NUL or control bytes reach a message or a key. */
		out[o++] = (unsigned char)p[i] < 0x20 && p[i] != '\t' ? '?' :
		    p[i];
		i++;
	}
	out[o] = '\0';
	return 1;
}

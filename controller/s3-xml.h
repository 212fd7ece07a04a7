/* SPDX-License-Identifier: MIT */
/*
 * The few S3 XML replies the object store client reads (s3.c): error
 * bodies, InitiateMultipartUploadResult and ListBucketResult.  Not an XML
 * parser: S3 replies are flat, machine-made documents, so a bounded scan
 * for <Tag>text</Tag> with the five predefined entities is enough, and it
 * never allocates more than the text it returns.  The bytes come from
 * the network and are treated as hostile (tests/fuzz/fuzz_s3xml.c).
 */
#ifndef CONTROLLER_S3_XML_H
#define CONTROLLER_S3_XML_H

#include <stddef.h>

/*
 * The text of the first <tag>...</tag> within [p, p + n), entities
 * decoded, NUL-terminated and cut to outlen - 1 bytes; *end (may be NULL)
 * gets the offset just past the closing tag.  1 when found, else 0.
 */
int	s3_xml_text(const char *p, size_t n, const char *tag, char *out,
	    size_t outlen, size_t *end);
/*
 * The body of the first <tag>...</tag> element, undecoded: offset in
 * *off and length in *len, *end past its closing tag.  1 or 0.
 */
int	s3_xml_elem(const char *p, size_t n, const char *tag, size_t *off,
	    size_t *len, size_t *end);

#endif

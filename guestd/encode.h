/* SPDX-License-Identifier: MIT */
/*
 * Picture encoders over 32-bit BGRX rows (the capture framebuffer's
 * format), cut into horizontal bands that are encoded independently, so
 * one picture runs on every worker of the pool at once.
 *
 * JPEG: each band is a complete JPEG (libjpeg-turbo, fast integer DCT,
 * 4:2:0).  RFB sends the bands as rectangles of their own; observe asks
 * for restart markers after every MCU row and encode_join() splices the
 * bands into one JPEG (restart intervals reset the DC predictors, so a
 * band's entropy-coded data is valid after a restart marker).
 *
 * PNG: each band is a deflate stream of its filtered rows at zlib level 1,
 * ended on a byte boundary (a sync flush) so the streams concatenate into
 * the one zlib stream of the PNG; encode_join() adds the headers and the
 * Adler-32 of the whole (adler32_combine of the bands').
 */
#ifndef GUESTD_ENCODE_H
#define GUESTD_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#define ENCODE_BANDS_MAX	4
/* Pictures smaller than this many pixels are one band: the split would
 * cost more than it saves. */
#define ENCODE_SPLIT_PIXELS	(256 * 1024)

enum encode_format {
	ENCODE_JPEG,
	ENCODE_PNG
};

/* JPEG chroma subsampling. */
enum encode_samp {
	ENCODE_SAMP_420 = 0,
	ENCODE_SAMP_422,
	ENCODE_SAMP_444
};

struct encode_job;
typedef void	(*encode_done_fn)(struct encode_job *j, void *arg);

struct encode_band {
	struct encode_job	*job;
	int			 y, h;		/* rows of the picture */
	uint8_t			*buf;		/* encoded, malloc'd */
	size_t			 len;
	uint32_t		 crc;		/* PNG: of "IDAT" + buf */
	uint32_t		 adler;		/* PNG: of the filtered rows */
	size_t			 rawlen;
	int			 r;
};

struct encode_job {
	/* Set by the caller; px stays valid and unchanged until done. */
	const uint8_t		*px;
	int			 w, h;
	size_t			 stride;
	enum encode_format	 format;
	int			 quality;	/* JPEG 1..100 */
	enum encode_samp	 subsamp;	/* JPEG chroma; 0: 4:2:0 */
	int			 join;		/* bands will be joined */
	int			 nbands;	/* 0: encode_bands() decides */

	/* Filled in. */
	struct encode_band	 band[ENCODE_BANDS_MAX];
	int			 left;		/* bands out (atomic) */
	int			 r;		/* 0 or the first ERR_* */
	encode_done_fn		 done;
	void			*arg;
};

/* How many bands a w x h picture is worth on the pool now (its idle
 * workers). */
int	 encode_bands(int w, int h);
/*
 * Encode j's bands on the worker pool; done(j, arg) runs on the loop once
 * all are back (j->r says how it went), never before this returns.
 * Bands the pool's queue has no room for are encoded on the caller.  0,
 * or ERR_BUSY when the queue took none (done is then not called).
 */
int	 encode_start(struct encode_job *j, encode_done_fn done, void *arg);
/* The same, on the calling thread. */
int	 encode_run(struct encode_job *j);
/* One JPEG or PNG of j's bands (j->join set).  0 or ERR_*. */
int	 encode_join(const struct encode_job *j, uint8_t **out,
	    size_t *outlen);
/* Free the bands' buffers. */
void	 encode_clear(struct encode_job *j);

#endif

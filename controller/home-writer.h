/* SPDX-License-Identifier: MIT */
/*
 * A put's bytes written and hashed off the loop (home-writer.c).
 *
 * A checkpoint's archive arrives on the loop in guestd's frames; writing
 * it into the store and computing its sha256 are the CPU-heavy part of a
 * checkpoint, so they run on one thread of the put's own while the loop
 * goes on reading the socket.  The loop copies the bytes into a few
 * fixed chunks (HOME_WRITER_SLOTS of HOME_WRITER_CHUNK: the memory is
 * bounded whatever the sizes) and waits only when all of them are
 * queued, which is at most what it waited before for each write.  A
 * store whose writes touch loop state (the object store) is written on
 * the loop as before; only the hash moves.
 */
#ifndef CONTROLLER_HOME_WRITER_H
#define CONTROLLER_HOME_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "home.h"

#define HOME_WRITER_CHUNK	(512 * 1024)
#define HOME_WRITER_SLOTS	4

struct home_writer;

/* A writer of put p (still the caller's: commit or abort it after
 * home_writer_finish or home_writer_free). */
int	home_writer_new(struct home_store *hs, struct home_put *p,
	    struct home_writer **out, struct errmsg *e);
/* On the loop: n more bytes.  0, or the first failure's code (e in
 * home_writer_finish). */
int	home_writer_write(struct home_writer *w, const uint8_t *p, size_t n);
/*
 * From a task: every byte written, the thread gone; the sha256 of the
 * bytes as hex into sha (65 bytes) and their count.  0 or ERR_*.
 */
int	home_writer_finish(struct home_writer *w, char *sha, size_t shalen,
	    int64_t *bytes, struct errmsg *e);
/* Stop (a thread still running finishes its chunk first) and free. */
void	home_writer_free(struct home_writer *w);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * File operations on the workspace (doc/DESIGN.md G-27): file.list, file.stat,
 * file.read (ranges, streamed as binary frames), file.write (atomic: temp
 * file in the same directory, fsync, rename), file.mkdir, file.remove.
 * All paths go through path.c.
 */
#ifndef GUESTD_FILES_H
#define GUESTD_FILES_H

#include "control.h"

int	files_op_list(struct control_conn *, uint32_t, json_t *, char *, size_t);
int	files_op_stat(struct control_conn *, uint32_t, json_t *, char *, size_t);
int	files_op_read(struct control_conn *, uint32_t, json_t *, char *, size_t);
int	files_op_write(struct control_conn *, uint32_t, json_t *, char *, size_t);
int	files_op_mkdir(struct control_conn *, uint32_t, json_t *, char *, size_t);
int	files_op_remove(struct control_conn *, uint32_t, json_t *, char *, size_t);

/* 1 when a file name is the temp name of a file.write in progress
 * (".NAME.rakazo-tmp-<16 hex>"): export leaves those out. */
int	files_tmp_name(const char *name);
/* At start-up: remove the temp files that writes cut short by a crash
 * left anywhere in the workspace; how many. */
size_t	files_clean_stale(const char *workspace);

#endif

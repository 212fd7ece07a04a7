/* SPDX-License-Identifier: MIT */
/*
 * display.act: ordered action batches on a bot's desktop (see act.c).
 */
#ifndef GUESTD_ACT_H
#define GUESTD_ACT_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct control_conn;

int	act_op(struct control_conn *, uint32_t, json_t *, char *, size_t);

#endif

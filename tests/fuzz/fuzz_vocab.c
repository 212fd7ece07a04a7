/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: vocab_parse_args on arbitrary JSON, as an `act`
 * request would bring it.  Checks the parser's promises: on success every
 * action is well formed (counts, paths, key lists, text in range); on
 * failure there is no batch, a known code and a terminated sentence.
 */
#include "autoconf.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "vocab.h"

static void
check_action(const struct action *a)
{
	size_t	 i;

	if (a->has_xy && (a->x < 0 || a->y < 0))
		abort();
	if (a->kind == ACTION_CLICK && (a->count < 1 || a->count > 3 ||
	    a->button < 1 || a->button > 9))
		abort();
	if (a->kind == ACTION_DRAG && (a->npath < 2 || a->path == NULL))
		abort();
	if ((a->kind == ACTION_KEY || a->kind == ACTION_HOLD) &&
	    (a->nkeys == 0 || a->keys[0] == 0 || a->keys[a->nkeys - 1] == 0))
		abort();
	if (a->nmods < 0 || a->nmods > VOCAB_MODS_MAX)
		abort();
	for (i = 0; i < (size_t)a->nmods; i++)
		if (a->mods[i] == 0)
			abort();
	if (a->ntext > VOCAB_TEXT_MAX)
		abort();
	for (i = 0; i < a->ntext; i++)
		if (a->text[i] > 0x10ffff || a->text[i] == 0 ||
		    (a->text[i] >= 0xd800 && a->text[i] <= 0xdfff))
			abort();
	if (a->duration_ms < 0 || a->duration_ms > VOCAB_WAIT_MAX_MS)
		abort();
	if (a->scroll_x < -VOCAB_SCROLL_MAX ||
	    a->scroll_x > VOCAB_SCROLL_MAX ||
	    a->scroll_y < -VOCAB_SCROLL_MAX ||
	    a->scroll_y > VOCAB_SCROLL_MAX)
		abort();
	if (strcmp(vocab_kind_name(a->kind), "unknown") == 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vocab_batch	*b = NULL;
	struct vocab_error	 e;
	char			 err[JSONX_ERRLEN];
	json_t			*j;
	size_t			 i;
	int			 code, r;

	j = jsonx_parse((const char *)data, size, 256 * 1024, 1, &code, err);
	if (j == NULL)
		return 0;
	r = vocab_parse_args(j, &b, &e);
	if (r == 0) {
		if (b == NULL || b->n == 0 || b->n > VOCAB_MAX)
			abort();
		for (i = 0; i < b->n; i++)
			check_action(&b->v[i]);
		vocab_has_input(b);
	} else {
		if (b != NULL || r != e.code || r >= 0 || r <= ERR__LAST ||
		    memchr(e.msg, '\0', sizeof(e.msg)) == NULL ||
		    e.index < -1 || e.index >= VOCAB_MAX)
			abort();
	}
	vocab_free(b);
	json_decref(j);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Page tools over CDP (doc/DESIGN.md G-24, G-36): text and element refs instead
 * of pixels, for models without vision and for speed.
 *
 *  page.navigate {bot, fence, url} (mutating) -> {url, frame}
 *                http(s) only, no user:pass@ (else URL_REFUSED).
 *  page.snapshot {bot} -> {url, title, text (<= 12000 chars), truncated,
 *                elements[<= 80 {ref, role, name, value?, checked?}]}
 *  page.act      {bot, fence, steps[1..24]} (mutating)
 *                step: {kind: click|type|select|press|scroll|focus, ref,
 *                text? (type), value? (select), key? (press), dx?, dy?
 *                (scroll)} -> {completed, url}
 *                A failure answers the error with {completed, uncertain,
 *                fallback?: "computer_act"}; nothing is replayed.  A ref
 *                whose element left the document (or from an earlier
 *                document) is STALE_REF, never redirected.
 *
 * The target is the one visible tab of the bot's browser; several
 * visible tabs are PAGE_AMBIGUOUS.  Scripts run in an isolated world of
 * the page's main frame, so the page's own scripts cannot see or spoof
 * them; refs are 128 random bits (token_random) held in that world, which
 * dies with the document.
 */
#ifndef GUESTD_PAGE_H
#define GUESTD_PAGE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "control.h"

#define PAGE_MAX_TEXT		12000
#define PAGE_MAX_ELEMENTS	80
#define PAGE_MAX_STEPS		24
#define PAGE_MAX_URL		8192

struct browser;

int	page_op_navigate(struct control_conn *, uint32_t, json_t *, char *,
	    size_t);
int	page_op_snapshot(struct control_conn *, uint32_t, json_t *, char *,
	    size_t);
int	page_op_act(struct control_conn *, uint32_t, json_t *, char *, size_t);

/* 0 when url is http(s) without userinfo and <= PAGE_MAX_URL; else
 * ERR_URL_REFUSED. */
int	page_url_check(const char *url);

/*
 * Bring the target tab to the front and, when url is not NULL, navigate
 * it (browser.open on a running or just started browser).  done() runs
 * once, later.  0 or ERR_* (done will not run).
 */
typedef void	(*page_done_fn)(void *arg, int code, const char *msg);
int	page_focus(struct browser *b, const char *url, page_done_fn done,
	    void *arg);
/* Forget page state of a browser that went away (NULL is a no-op). */
void	page_state_free(void *state);

#endif

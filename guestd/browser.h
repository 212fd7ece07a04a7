/* SPDX-License-Identifier: MIT */
/*
 * One persistent browser per active bot (doc/DESIGN.md G-21 ... G-23, G-25).
 *
 *  browser.open    {bot, fence, url?, proxy?{url, username?, password?}|null}
 *                  (mutating) -> {bot, display, pid, port, profile,
 *                  created, restored, proxied}
 *                  Opens the bot's desktop if needed, then starts the
 *                  browser chosen at build time (--with-browser; env
 *                  GUESTD_BROWSER overrides the binary) with its profile
 *                  .browser-profiles/<bot>/ inside the workspace, DevTools
 *                  on 127.0.0.1:<GUESTD_CDP_BASE (9221) + display number>
 *                  and session restore on.  A running browser is focused
 *                  (and navigated when url is given) instead.  proxy sets
 *                  the bot's upstream proxy from the browser's next start
 *                  on (null clears it; absent keeps it); credentials go
 *                  only to the relay (proxy-relay.h) and live in memory only.
 *  browser.close   {bot, fence} (mutating) -> {bot, closed, how:"cdp"|
 *                  "term"|"kill"|"none"}
 *                  Browser.close over CDP, then SIGTERM, then SIGKILL to
 *                  its process group, each after a bounded wait.
 *  browser.quiesce {} -> {closed[bots]}  closes every browser cleanly
 *                  (before a workspace export, G-25).
 *  browser.list    {} -> {browsers[{bot, state, pid, port, display}]}
 *
 * Event browser.exited {bot, pid, status|signal} to every connection when a
 * browser ended without being asked to; the next browser.open restores its
 * session.  Profiles are never deleted, cloned or merged.
 */
#ifndef GUESTD_BROWSER_H
#define GUESTD_BROWSER_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "control.h"

struct browser;
struct cdp;

int	browser_op_open(struct control_conn *, uint32_t, json_t *, char *,
	    size_t);
int	browser_op_close(struct control_conn *, uint32_t, json_t *, char *,
	    size_t);
int	browser_op_quiesce(struct control_conn *, uint32_t, json_t *, char *,
	    size_t);
int	browser_op_list(struct control_conn *, uint32_t, json_t *, char *,
	    size_t);

/* The running browser of bot (DevTools connected), or NULL. */
struct browser	*browser_find(const char *bot);
struct cdp	*browser_cdp(struct browser *b);
const char	*browser_bot(const struct browser *b);
/* Changes whenever the bot's browser restarts (page.c drops its state). */
uint64_t	 browser_generation(const struct browser *b);
/* Page state kept by page.c for this browser (freed with page_state_free). */
void		**browser_page_state(struct browser *b);

/*
 * Run fn(c, id, args) once no browser is running, closing every running
 * browser cleanly first (workspace export, G-25).  Returns what fn
 * returns when nothing had to close; otherwise 0, and fn runs later (its
 * error, if any, is replied then).  args is kept (a reference) meanwhile.
 */
int	browser_quiesce_then(struct control_conn *c, uint32_t id, json_t *args,
	    char *detail, size_t detaillen, control_op_fn fn);

/* guestd exits: SIGTERM every browser group and wait a bounded time. */
void	browser_shutdown(void);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The op table of the control channel and the small ops that belong to no
 * other module (hello, health).  The reference for every op, its args and
 * its result is man/guestd-protocol.7; summary:
 *
 *  hello            {version:1, client?}        -> {protocol, server,
 *                    capabilities[], limits{max_json, max_binary, chunk,
 *                    import_max_bytes, import_max_entries, exec_max_output,
 *                    exec_max_timeout_ms}, gateway_port}
 *                    Must be the first request; others before it get
 *                    HELLO_REQUIRED.  Another version: UNSUPPORTED_VERSION.
 *  health           {}                          -> {state:"ok", uptime_ms,
 *                    connections, execs_running, workspace}
 *  exec             {command, bot?, cwd?, env?{K:V}, timeout_ms?,
 *                    output_limit?, stream?, stdin?}
 *                    event exec.started {id, pid}; when stream, output
 *                    arrives as binary frames on channels 1/2 (END on the
 *                    last); -> {exit_code|signal, timed_out, cancelled,
 *                    truncated, duration_ms, stdout?, stderr?}
 *                    (stdout/stderr as UTF-8 strings only when !stream,
 *                    invalid bytes replaced by U+FFFD)
 *  exec.cancel      {target}                    -> {target, state:"killed"}
 *                    or EXEC_MAY_BE_RUNNING / NOT_FOUND
 *  file.list        {path, bot?}                -> {path, entries[{name,
 *                    type, size, mode, mtime}], truncated}
 *  file.stat        {path}                      -> {type, size, mode, mtime}
 *  file.read        {path, offset?, length?}    -> binary frames channel 0
 *                    (END on the last, possibly empty) then {size, offset,
 *                    length}
 *  file.write       {path, mode?, parents?}     then the client sends the
 *                    body as channel 0 frames for this id, END on the last
 *                    -> {path, size}; atomic (temp + fsync + rename)
 *  file.mkdir       {path, parents?, mode?}     -> {path}
 *  file.remove      {path, recursive?}          -> {path}
 *  workspace.export {}                          -> channel 0 frames (a tar),
 *                    END, then {bytes, entries, skipped}
 *  workspace.import {}                          then channel 0 frames (a
 *                    tar), END -> {entries, bytes}
 *  display.open     {bot, width?, height?, depth?} -> {bot, display,
 *                    slot, width, height, depth, xauthority, created}
 *                    (display.h)
 *  display.close    {bot}                       -> {bot, display, slot}
 *  display.list     {}                          -> {limit, displays[]}
 *  display.observe  {bot, format?, quality?, max_width?, max_height?,
 *                    region?, since_frame?}     -> channel 0 frames (the
 *                    image), END, then {frame, width, height, scale, ...};
 *                    no image, {unchanged:true, ...}, when since_frame is
 *                    the current frame   (observe.h)
 *  display.act      {bot, actions[], scale?}    -> {completed, total,
 *                    frame, ...}   (act.h, vocab.h)
 *  capability.grant {bot, policy, ttl?}         -> {token, id, policy,
 *                    bot, path, expires_ms}   (capability.h)
 *  capability.revoke {token | id}               -> {id, revoked}
 *  capability.renew {token | id, ttl}           -> {id, expires_ms}
 *  browser.open     {bot, url?, proxy?}         -> {bot, display, pid,
 *                    port, profile, created, proxied}   (browser.h)
 *  browser.close    {bot}                       -> {bot, closed, how}
 *  browser.quiesce  {}                          -> {closed[]}
 *  browser.list     {}                          -> {browsers[]}
 *  page.navigate    {bot, url}                  -> {url, title}  (page.h)
 *  page.snapshot    {bot}                       -> {url, title, text,
 *                    truncated, frames, elements[]}
 *  page.act         {bot, steps[]}              -> {completed}
 *
 * Paths are workspace-relative; "bot" (when given) makes bots/<bot>/ and
 * shared/ exist and, for exec, is the default cwd.  Mutating ops accept
 * {bot, fence}: a fence lower than the highest seen for that bot is
 * refused with STALE_FENCE (G-32).
 */
#ifndef GUESTD_OPS_H
#define GUESTD_OPS_H

#include "control.h"

extern const struct control_op	ops_table[];
extern const size_t		ops_count;

int	ops_hello(struct control_conn *, uint32_t, json_t *, char *, size_t);
int	ops_health(struct control_conn *, uint32_t, json_t *, char *, size_t);

#endif

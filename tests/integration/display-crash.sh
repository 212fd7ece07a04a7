#!/bin/bash
# SPDX-License-Identifier: MIT
# A crashed Xvfb (G-1) is noticed through the loop (SIGCHLD), reported as
# a display.exited event, dropped from the list, and the next open starts
# a fresh one that works.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
t_start_guestd

rk call display.open '{"bot":"zed"}' >/dev/null || t_fail "open"
pid=$(rk call display.list | grep -o '"pid":[0-9]*' | cut -d: -f2)
[ -n "$pid" ] && [ "$pid" -gt 0 ] || t_fail "no pid listed"

# A watcher connection subscribes (any display op) and waits.
mkfifo "$T/w"
"$DISPLAY_SHOT" --url "$URL" --secret-file "$SECRET" \
    --wait-event display.exited display.list '{}' >"$T/w" &
wpid=$!
exec 8<"$T/w"
while read -r line <&8; do
	[ "$line" = subscribed ] && break
done
kill -KILL "$pid"
read -r ev <&8 || t_fail "no event line"
wait "$wpid" || t_fail "watcher failed: $ev"
exec 8<&-
t_contains "$ev" '"event":"display.exited"' "exited event"
t_contains "$ev" '"bot":"zed"' "event names the bot"
t_contains "$ev" '"signal":9' "event says how it died"
t_not_contains "$(rk call display.list)" '"bot":"zed"' "dead display listed"

# guestd is fine and the next open starts a new server.
t_eq "$(rk exec -- echo alive)" alive "guestd after the crash"
out=$(rk call display.open '{"bot":"zed"}') || t_fail "reopen: $out"
t_contains "$out" '"created":true' "a new display"
npid=$(rk call display.list | grep -o '"pid":[0-9]*' | cut -d: -f2)
[ "$npid" != "$pid" ] || t_fail "same pid after restart"
"$DISPLAY_SHOT" --url "$URL" --secret-file "$SECRET" display.observe \
    '{"bot":"zed","max_width":64}' >/dev/null || t_fail "observe after restart"
exit 0

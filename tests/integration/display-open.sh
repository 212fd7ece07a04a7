#!/bin/bash
# SPDX-License-Identifier: MIT
# display.open / close / list (G-1, G-2, G-4, G-32): lazy start answered
# once the X server is ready, the same display for an active bot, two bots
# on two independent displays, slots recycled after close, the list's
# fields, bad arguments and stale fences refused with nothing started.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
t_start_guestd

val() {	# json key
	printf '%s' "$1" | sed -n "s/.*\"$2\":\"\\{0,1\\}\\([^,\"}]*\\).*/\\1/p"
}
shot() {
	"$DISPLAY_SHOT" --url "$URL" --secret-file "$SECRET" "$@"
}

a=$(rk call display.open '{"bot":"alice","fence":3}') || t_fail "open: $a"
t_contains "$a" '"created":true' "first open creates"
t_contains "$a" '"width":1280,"height":800,"depth":24' "default geometry"
slot_a=$(val "$a" slot)
t_eq "$slot_a" "$GUESTD_DISPLAY_FIRST" "first slot"
[ -S "/tmp/.X11-unix/X$slot_a" ] || t_fail "no X socket for :$slot_a"

again=$(rk call display.open '{"bot":"alice"}') || t_fail "reopen"
t_contains "$again" '"created":false' "reopen returns the existing display"
t_eq "$(val "$again" slot)" "$slot_a" "same slot"

b=$(rk call display.open '{"bot":"bob","width":800,"height":600}') ||
	t_fail "open bob: $b"
slot_b=$(val "$b" slot)
[ "$slot_b" != "$slot_a" ] || t_fail "two bots share slot $slot_a"
t_contains "$b" '"width":800,"height":600' "bob's geometry"

# Independent: each screenshot has its own size.
shot display.observe '{"bot":"alice","since_frame":0}' | grep -q \
    '"width":1280,"height":800' || t_fail "alice's screen"
shot display.observe '{"bot":"bob"}' | grep -q '"width":800,"height":600' ||
	t_fail "bob's screen"

# A bot's commands see its own desktop; another bot's see none.
out=$(rk --bot bob exec -- 'echo "$DISPLAY"; xdpyinfo | grep dimensions') ||
	t_fail "exec on bob's desktop: $out"
t_contains "$out" ":$slot_b" "bob's DISPLAY"
t_contains "$out" "800x600 pixels" "bob's X server answers with its cookie"
out=$(rk --bot zed exec -- 'echo "display=${DISPLAY:-none}"')
t_eq "$out" "display=none" "a bot without a desktop"

l=$(rk call display.list) || t_fail "list"
for k in '"bot":"alice"' '"bot":"bob"' '"state":"ready"' '"idle_ms":' \
    '"since_ms":' '"controlled":false' '"limit":0' '"pid":'; do
	t_contains "$l" "$k" "list field $k"
done

# Stale fence: refused, alice's display untouched.
out=$(rk call display.close '{"bot":"alice","fence":2}' 2>&1) &&
	t_fail "stale fence accepted"
t_contains "$out" STALE_FENCE "stale fence code"
t_contains "$(rk call display.list)" '"bot":"alice"' "alice survived"

# Close: answered once the server is gone; the slot is free again.
c=$(rk call display.close '{"bot":"alice","fence":3}') || t_fail "close: $c"
t_contains "$c" "\"slot\":$slot_a" "close names the slot"
[ -e "/tmp/.X$slot_a-lock" ] && t_fail "X server still holds :$slot_a"
t_not_contains "$(rk call display.list)" '"bot":"alice"' "alice listed"
out=$(rk call display.close '{"bot":"alice"}' 2>&1) &&
	t_fail "closing twice succeeded"
t_contains "$out" DISPLAY_NOT_OPEN "close twice code"

# Recycled: carol gets alice's old slot.
cr=$(rk call display.open '{"bot":"carol"}') || t_fail "open carol"
t_eq "$(val "$cr" slot)" "$slot_a" "slot recycled"

# Bad requests start nothing.
for bad in '{}' '{"bot":"../x"}' '{"bot":"dave","width":5}' \
    '{"bot":"dave","depth":8}' '{"bot":"dave","colour":1}' \
    '{"bot":"dave","height":"tall"}'; do
	out=$(rk call display.open "$bad" 2>&1) && t_fail "accepted $bad"
done
t_not_contains "$(rk call display.list)" dave "bad open started something"

# guestd stopping takes its X servers with it, and waits for them: once
# it has exited they are gone, with their sockets and lock files (a
# supervisor may kill what is left of guestd's user right after, and an X
# server killed halfway leaves files that push later displays up a slot).
l=$(rk call display.list)
pids=$(printf '%s' "$l" | grep -o '"pid":[0-9]*' | cut -d: -f2)
slots=$(printf '%s' "$l" | grep -o '"slot":[0-9]*' | cut -d: -f2)
[ -n "$pids" ] && [ -n "$slots" ] || t_fail "no X servers listed: $l"
kill "$GUESTD_PID"
wait "$GUESTD_PID"
GUESTD_PID=""
for p in $pids; do
	kill -0 "$p" 2>/dev/null && t_fail "Xvfb $p outlived guestd"
done
for s in $slots; do
	[ -e "/tmp/.X11-unix/X$s" ] && t_fail "guestd left the socket of :$s"
	[ -e "/tmp/.X$s-lock" ] && t_fail "guestd left the lock file of :$s"
done
grep -q 'event=display.stop_timeout' "$GUESTD_LOG" &&
	t_fail "an X server had to be killed"
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# An idle desktop costs ~0 CPU (G-6): no polling timer anywhere.  With
# three desktops open (one with a client on it) guestd's CPU time over 5
# idle seconds stays within a few clock ticks.  The sleep here is the
# measurement window, not a synchronisation.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
t_start_guestd

for b in i1 i2 i3; do
	rk call display.open "{\"bot\":\"$b\"}" >/dev/null || t_fail "open $b"
done
out=$(rk call display.open '{"bot":"i1"}')
dpy=$(printf '%s' "$out" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
xauth=$(printf '%s' "$out" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
mkfifo "$T/xin" "$T/xout"
DISPLAY=$dpy XAUTHORITY=$xauth "$XPATTERN" <"$T/xin" >"$T/xout" 2>&1 &
xpid=$!
exec 7>"$T/xin" 8<"$T/xout"
read -r line <&8 || t_fail "xpattern did not start"
"$DISPLAY_SHOT" --url "$URL" --secret-file "$SECRET" display.observe \
    '{"bot":"i1","format":"jpeg"}' >/dev/null || t_fail "observe"

ticks() {
	awk '{ print $14 + $15 }' "/proc/$GUESTD_PID/stat"
}
t0=$(ticks)
sleep 5
t1=$(ticks)
used=$((t1 - t0))
t_note "guestd used $used ticks in 5 idle seconds with 3 desktops"
[ "$used" -le 3 ] || t_fail "idle guestd used $used ticks in 5 s"

echo quit >&7
wait "$xpid"
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# Idle with viewers costs ~0 CPU (issue 4 item 10's target: under 0.1% of
# a core): three desktops, a websocket viewer and a debug-port listener,
# an update request pending, and over 5 idle seconds guestd uses at most a
# few clock ticks and sends the viewer nothing; then one change reaches it
# at once.  The 5 s are the measurement window, not a synchronisation.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
: "${RFBPROBE:?run through make check}"
t_start_guestd --gateway 127.0.0.1:0 --debug-vnc 127.0.0.1 \
    --debug-vnc-base "$T_VNC_BASE"
gw=$(sed -n 's/.*event=gateway.listening .*port=\([0-9]*\).*/\1/p' \
    "$GUESTD_LOG" | head -n 1)

for b in i2 i3 i1; do
	out=$(rk call display.open "{\"bot\":\"$b\",\"width\":640,\"height\":480}") ||
		t_fail "open $b"
done
dpy=$(printf '%s' "$out" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
xa=$(printf '%s' "$out" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
mkfifo "$T/xin" "$T/xout"
DISPLAY=$dpy XAUTHORITY=$xa "$XPATTERN" <"$T/xin" >"$T/xout" 2>&1 &
xpid=$!
exec 7>"$T/xin" 8<"$T/xout"
read -r line <&8
tok=$(rk call capability.grant '{"bot":"i1","policy":"view"}' |
    sed -n 's/.*"token":"\([^"]*\)".*/\1/p')

mkfifo "$T/pin" "$T/pout"
"$RFBPROBE" --url "ws://127.0.0.1:$gw/screen/$tok" <"$T/pin" >"$T/pout" 2>&1 &
ppid=$!
exec 5>"$T/pin" 6<"$T/pout"
read -r line <&6
printf 'handshake\nupdate\nrequest inc\nready\n' >&5
read -r line <&6
read -r line <&6
read -r line <&6
t_eq "$line" ready "viewer waiting for changes"

ticks() {
	awk '{ print $14 + $15 }' "/proc/$GUESTD_PID/stat"
}
t0=$(ticks)
echo 'quiet 5000' >&5
read -r line <&6
t1=$(ticks)
t_eq "$line" quiet "nothing sent to an idle viewer"
used=$((t1 - t0))
t_note "guestd used $used ticks in 5 idle seconds with a viewer"
[ "$used" -le 3 ] || t_fail "idle guestd used $used ticks in 5 s"

echo "rect 10 10 20 20 abcdef" >&7
read -r line <&8
printf 'read-update\npixel 15 15 abcdef\n' >&5
read -r line <&6
read -r line <&6
t_eq "$line" ok "the change arrived"
exec 5>&- 6<&-
wait "$ppid"
echo quit >&7
wait "$xpid"
exit 0

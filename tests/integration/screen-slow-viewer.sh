#!/bin/bash
# SPDX-License-Identifier: MIT
# Bounded memory (issue 4 item 8): a viewer that asks for two hundred full
# 1280x800 frames of noise (4 MB each in Raw) and then stops reading costs
# guestd a bounded amount of memory, and another viewer is served
# meanwhile (the loop never blocks on the slow one).
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
: "${RFBPROBE:?run through make check}"
t_start_guestd --gateway 127.0.0.1:0
gw=$(sed -n 's/.*event=gateway.listening .*port=\([0-9]*\).*/\1/p' \
    "$GUESTD_LOG" | head -n 1)
GW="ws://127.0.0.1:$gw"

out=$(rk call display.open '{"bot":"slow","width":1280,"height":800}') ||
	t_fail "open: $out"
dpy=$(printf '%s' "$out" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
xa=$(printf '%s' "$out" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
mkfifo "$T/xin" "$T/xout"
DISPLAY=$dpy XAUTHORITY=$xa "$XPATTERN" <"$T/xin" >"$T/xout" 2>&1 &
xpid=$!
exec 7>"$T/xin" 8<"$T/xout"
read -r line <&8
printf 'noise\nrect 0 0 8 8 00ffff\n' >&7
read -r line <&8
read -r line <&8
t_eq "$line" ok "noise painted"
tok=$(rk call capability.grant '{"bot":"slow","policy":"view"}' |
    sed -n 's/.*"token":"\([^"]*\)".*/\1/p')

# One full frame through a normal viewer first, so the baseline includes
# what serving any viewer costs.
r=$(printf 'handshake\nupdate\npixel 4 4 00ffff\n' |
    "$RFBPROBE" --url "$GW/screen/$tok") || t_fail "first viewer: $r"
base=$(t_guestd_hwm_kb)

mkfifo "$T/sin" "$T/sout"
"$RFBPROBE" --url "$GW/screen/$tok" <"$T/sin" >"$T/sout" 2>&1 &
spid=$!
exec 5>"$T/sin" 6<"$T/sout"
read -r line <&6
printf 'handshake\nflood 200\nstall 4000\n' >&5
exec 5>&-
read -r line <&6
t_contains "$line" "init 1280 800" "slow viewer init"
read -r line <&6
t_eq "$line" flooded "slow viewer asked for 200 frames"

# While it does not read, another viewer is served at once.
t0=$(date +%s%3N)
r=$(printf 'handshake\nupdate\npixel 4 4 00ffff\n' |
    "$RFBPROBE" --url "$GW/screen/$tok") || t_fail "second viewer: $r"
t1=$(date +%s%3N)
t_contains "$r" "ok" "second viewer served during the stall"
t_note "second viewer: a full 1280x800 frame in $((t1 - t0)) ms"
# A loop blocked in a write to the stalled viewer would take seconds.
[ $((t1 - t0)) -lt 1500 ] || t_fail "second viewer took $((t1 - t0)) ms"
rk call health '{}' >/dev/null || t_fail "control channel blocked"

hwm=$(t_guestd_hwm_kb)
t_note "VmHWM before $base kB, during the stall $hwm kB"
[ $((hwm - base)) -lt 49152 ] ||
	t_fail "guestd grew by $((hwm - base)) kB for one stalled viewer"

read -r line <&6
t_eq "$line" stalled "slow viewer done"
exec 6<&-
wait "$spid"
echo quit >&7
wait "$xpid"
exit 0

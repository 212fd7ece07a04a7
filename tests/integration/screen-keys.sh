#!/bin/bash
# SPDX-License-Identifier: MIT
# Every key a viewer sends (issue: keysyms off the keymap were dropped,
# shifted ones arrived unshifted, keypad digits as KP_Insert): raw RFB
# KeyEvents for H ! ? ~ é 中 KP_0 KP_5, with no Shift sent, reach a real
# X client that had typed before as exactly those keysyms and their text,
# through the gateway (rfbprobe) and the debug port (libvncclient); '1'
# sent while the viewer holds Shift arrives as '1'.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
: "${RFBPROBE:?run through make check}"
: "${VNCSHOT:?run through make check}"
: "${XINPUT_RECORDER:?run through make check}"
base=$T_VNC_BASE
t_start_guestd --gateway 127.0.0.1:0 --debug-vnc 127.0.0.1 \
    --debug-vnc-base "$base" --debug-vnc-control
gw=$(sed -n 's/.*event=gateway.listening .*port=\([0-9]*\).*/\1/p' \
    "$GUESTD_LOG" | head -n 1)

o=$(rk call display.open '{"bot":"bob","width":640,"height":480}') ||
	t_fail "open: $o"
slot=$(printf '%s' "$o" | sed -n 's/.*"slot":\([0-9]*\).*/\1/p')
dpy=$(printf '%s' "$o" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
auth=$(printf '%s' "$o" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')

# The file is there before the recorder: waits on it never race its start.
: >"$T/rec"
DISPLAY=$dpy XAUTHORITY=$auth "$XINPUT_RECORDER" >"$T/rec" 2>&1 &
T_KILL=$!
# wait_rec PATTERN N: until N recorder lines match PATTERN (20 s).
wait_rec() {
	i=0
	while [ "$(grep -c "$1" "$T/rec")" -lt "$2" ]; do
		i=$((i + 1))
		[ "$i" -le 200 ] || t_fail "recorder: no line $2 like '$1'"
		sleep 0.1
	done
}
# pressed N: "keysym/utf8" of the key presses before the Nth F12, after
# the one before, modifiers left out.
pressed() {
	wait_rec '^key press keysym=0xffc9 ' "$1"
	awk -v n="$1" '
		/^key press keysym=0xffc9 / { if (++m == n) exit; next }
		m == n - 1 && /^key press / &&
		    !/keysym=0xff(e1|e2|7f) / {
			s = $3; sub(/keysym=/, "", s)
			u = $4; sub(/utf8=/, "", u)
			printf "%s/%s ", s, u
		}' "$T/rec"
}
wait_rec '^ready$' 1

# The client types once first: it holds a keymap of its own from then on.
rk act bob '[{"kind":"type","text":"a"},{"kind":"key","keys":"F12"}]' \
    >/dev/null || t_fail "warm-up"
t_eq "$(pressed 1)" "0x61/61 " "warm-up"

want="0x48/48 0x21/21 0x3f/3f 0x7e/7e 0xe9/c3a9 0x1004e2d/e4b8ad \
0xffb0/30 0xffb5/35 0x31/31 "
syms="48 21 3f 7e e9 1004e2d ffb0 ffb5"

tok=$(rk call capability.grant '{"bot":"bob","policy":"control"}' |
    sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
[ -n "$tok" ] || t_fail "grant"
script="handshake
update"
for s in $syms; do
	script="$script
key $s 1
key $s 0"
done
# '1' with the viewer's own Shift down.
script="$script
key ffe1 1
key 31 1
key 31 0
key ffe1 0
key ffc9 1
key ffc9 0
update"
r=$(printf '%s\n' "$script" | "$RFBPROBE" --url "ws://127.0.0.1:$gw/screen/$tok") ||
	t_fail "gateway viewer: $r"
t_eq "$(pressed 2)" "$want" "gateway keys"

args=""
for s in $syms; do
	args="$args key:$s"
done
# shellcheck disable=SC2086
r=$("$VNCSHOT" "127.0.0.1:$((base + slot))" $args key:ffc9) ||
	t_fail "debug port viewer: $r"
t_eq "$(pressed 3)" "${want% 0x31/31 } " "debug port keys"

# NumLock and Shift are as the viewer left them.
wait_rec '^key release keysym=0xffc9 ' 3
last=$(grep '^key release keysym=0xffc9 ' "$T/rec" | tail -n 1)
t_contains "$last" "state=0x0 " "no modifier left on"

# Keypad keys with NumLock locked by the viewer: KP_5, not KP_Begin, and
# KP_Insert (NumLock's other level) too.
r=$(printf 'handshake\nkey ff7f 1\nkey ff7f 0\nkey ffb5 1\nkey ffb5 0
key ff9e 1\nkey ff9e 0\nkey ff7f 1\nkey ff7f 0\nkey ffc9 1\nkey ffc9 0
update\n' | "$RFBPROBE" --url "ws://127.0.0.1:$gw/screen/$tok") ||
	t_fail "gateway viewer, NumLock: $r"
t_eq "$(pressed 4)" "0xffb5/35 0xff9e/ " "gateway keypad with NumLock"

# The same through display.act, NumLock off and on.
rk act bob '[{"kind":"key","keys":"KP_0 KP_5 KP_Insert"},
    {"action":"key","text":"Num_Lock"},
    {"type":"keypress","keys":["KP_0"]},{"kind":"key","keys":"KP_Begin"},
    {"kind":"key","keys":"Num_Lock F12"}]' >/dev/null ||
	t_fail "act keypad"
t_eq "$(pressed 5)" "0xffb0/30 0xffb5/35 0xff9e/ 0xffb0/30 0xff9d/ " \
    "act keypad"
exit 0

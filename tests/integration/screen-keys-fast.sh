#!/bin/bash
# SPDX-License-Identifier: MIT
# Viewer keys (issue 26 item 14), from a real RFB client (rfbprobe through
# the gateway) to a real X client (xinput-recorder): Shift+Tab arrives as
# ISO_Left_Tab with Shift, as TigerVNC's own server gives it (the viewer's
# Shift was let go around Tab, a plain Tab came out); and a fast burst of
# 40 distinct characters off the keymap arrives right, every one (spare
# keycodes were lent again after some 20 ms, not their settle time, so
# clients translated keys typed with them with the next meaning).
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "# no python3"; exit 77; }
: "${RFBPROBE:?run through make check}"
: "${XINPUT_RECORDER:?run through make check}"
t_start_guestd --gateway 127.0.0.1:0
gw=$(sed -n 's/.*event=gateway.listening .*port=\([0-9]*\).*/\1/p' \
    "$GUESTD_LOG" | head -n 1)
[ -n "$gw" ] || t_fail "no gateway"

o=$(rk call display.open '{"bot":"bob","width":640,"height":480}') ||
	t_fail "open: $o"
dpy=$(printf '%s' "$o" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
auth=$(printf '%s' "$o" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')

: >"$T/rec"
# It spends 5 ms on each key, as a client drawing it: it reads behind.
DISPLAY=$dpy XAUTHORITY=$auth "$XINPUT_RECORDER" -s 5 >"$T/rec" 2>&1 &
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
# between N: the key press lines before the Nth F12, after the one
# before, Shift left out.
between() {
	wait_rec '^key press keysym=0xffc9 ' "$1"
	awk -v n="$1" '
		/^key press keysym=0xffc9 / { if (++m == n) exit; next }
		m == n - 1 && /^key press / && !/keysym=0xff(e1|e2) /' "$T/rec"
}
wait_rec '^ready$' 1
# The client types once first: it holds a keymap of its own from then on.
rk act bob '[{"kind":"type","text":"a"},{"kind":"key","keys":"F12"}]' \
    >/dev/null || t_fail "warm-up"
between 1 >/dev/null

tok=$(rk call capability.grant '{"bot":"bob","policy":"control"}' |
    sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
[ -n "$tok" ] || t_fail "grant"
viewer() {
	"$RFBPROBE" --url "ws://127.0.0.1:$gw/screen/$tok"
}

# Shift+Tab, as noVNC, TigerVNC's viewer and libvncclient send it.
r=$(printf 'handshake\nkey ffe1 1\nkey ff09 1\nkey ff09 0\nkey ffe1 0
key ffc9 1\nkey ffc9 0\nupdate\n' | viewer) || t_fail "viewer: $r"
l=$(between 2)
case $l in
"key press keysym=0xfe20 "*"state=0x1 "*) ;;
*) t_fail "Shift+Tab arrived as: $l" ;;
esac
# Tab alone is still Tab.
r=$(printf 'handshake\nkey ff09 1\nkey ff09 0\nkey ffc9 1\nkey ffc9 0
update\n' | viewer) || t_fail "viewer: $r"
l=$(between 3)
case $l in
"key press keysym=0xff09 "*"state=0x0 "*) ;;
*) t_fail "Tab arrived as: $l" ;;
esac

# 40 distinct CJK characters, none on the keymap, as fast as a viewer
# sends a paste: each must arrive as itself.
script="handshake"
want=""
for i in $(seq 0 39); do
	cp=$((0x4e00 + i * 7))
	script="$script
key $(printf '%x' $((0x1000000 + cp))) 1
key $(printf '%x' $((0x1000000 + cp))) 0"
	want="$want$(python3 -c "import sys; print(chr($cp).encode().hex())")"
done
script="$script
key ffc9 1
key ffc9 0
update"
r=$(printf '%s\n' "$script" | viewer) || t_fail "viewer: $r"
got=$(between 4 | sed -n 's/.* utf8=\([0-9a-f]*\) .*/\1/p' | tr -d '\n')
if [ "$got" != "$want" ]; then
	t_note "want $want"
	t_note "got  $got"
	t_fail "the burst of 40 characters arrived wrong"
fi
exit 0

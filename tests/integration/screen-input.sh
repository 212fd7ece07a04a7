#!/bin/bash
# SPDX-License-Identifier: MIT
# Policies (G-15): a view viewer's pointer and keys never reach the X
# client; a control viewer's do (XTest on guestd's own connection).  A
# control capability marks the display controlled while it lives.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
: "${RFBPROBE:?run through make check}"
: "${XINPUT_RECORDER:?run through make check}"
t_start_guestd --gateway 127.0.0.1:0
gw=$(sed -n 's/.*event=gateway.listening .*port=\([0-9]*\).*/\1/p' \
    "$GUESTD_LOG" | head -n 1)
GW="ws://127.0.0.1:$gw"

out=$(rk call display.open '{"bot":"bob","width":640,"height":480}') ||
	t_fail "open: $out"
dpy=$(printf '%s' "$out" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
xauth=$(printf '%s' "$out" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
mkfifo "$T/rec"
DISPLAY=$dpy XAUTHORITY=$xauth "$XINPUT_RECORDER" >"$T/rec" 2>&1 &
rpid=$!
exec 8<"$T/rec"
read -r line <&8
t_eq "$line" ready "recorder ready"

token_of() {
	printf '%s' "$1" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p'
}
vt=$(token_of "$(rk call capability.grant '{"bot":"bob","policy":"view"}')")
ct=$(token_of "$(rk call capability.grant \
    '{"bot":"bob","policy":"control"}')")
[ -n "$vt" ] && [ -n "$ct" ] || t_fail "grants"
rk call display.list '{}' | grep -q '"controlled":true' ||
	t_fail "a control capability does not mark the display controlled"

# The view viewer clicks, types and moves; the full update after it
# proves the server has handled (dropped) those messages.
r=$(printf 'handshake\nupdate\npointer 100 100 0\npointer 100 100 1
pointer 100 100 0\nkey 61 1\nkey 61 0\nupdate\n' |
    "$RFBPROBE" --url "$GW/screen/$vt") || t_fail "view viewer: $r"
# The control viewer does the same elsewhere: these are the first events
# the recorder may see.
r=$(printf 'handshake\nupdate\npointer 200 150 0\npointer 200 150 1
pointer 200 150 0\nkey 62 1\nkey 62 0\nupdate\n' |
    "$RFBPROBE" --url "$GW/screen/$ct") || t_fail "control viewer: $r"

seen=""
while read -r line <&8; do
	case "$line" in
	*"keysym=0x61"*|*"x=100 y=100"*)
		t_fail "view input reached the client: $line" ;;
	"key release keysym=0x62"*)
		seen="$seen|$line"; break ;;
	*) seen="$seen|$line" ;;
	esac
done
t_contains "$seen" "button press 1 x=200 y=150" "control click"
t_contains "$seen" "button release 1 x=200 y=150" "control release"
t_contains "$seen" "key press keysym=0x62" "control key"

# guestd's pointer is where the control viewer left it.
obs=$(rk call display.observe '{"bot":"bob","since_frame":999999999}' 2>&1)
t_contains "$obs" '"cursor":{"x":200,"y":150}' "pointer position"

rk call capability.revoke "{\"token\":\"$ct\"}" >/dev/null ||
	t_fail "revoke control"
rk call display.list '{}' | grep -q '"controlled":false' ||
	t_fail "still controlled after the control capability went"

kill "$rpid" 2>/dev/null
wait "$rpid" 2>/dev/null
exec 8<&-
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# Debug VNC (G-16): --debug-vnc 127.0.0.1 serves each display's RFB on
# 127.0.0.1:BASE+slot to a native libvncclient viewer, bound to loopback
# only; a non-loopback address is refused at start-up.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
: "${VNCSHOT:?run through make check}"

for bad in 0.0.0.0 10.1.2.3 ::1 localhost; do
	"$GUESTD" --debug-vnc "$bad" --listen 127.0.0.1:0 >"$T/bad" 2>&1 &&
		t_fail "--debug-vnc $bad accepted"
	t_contains "$(cat "$T/bad")" "loopback" "refusal names loopback"
done

base=$T_VNC_BASE
t_start_guestd --debug-vnc 127.0.0.1 --debug-vnc-base "$base"
out=$(rk call display.open '{"bot":"alice","width":640,"height":480}') ||
	t_fail "open: $out"
slot=$(printf '%s' "$out" | sed -n 's/.*"slot":\([0-9]*\).*/\1/p')
dpy=$(printf '%s' "$out" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
xauth=$(printf '%s' "$out" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
port=$((base + slot))
grep -q "rfb.debug_listening addr=127.0.0.1 port=$port" "$GUESTD_LOG" ||
	t_fail "no debug listener on $port"

mkfifo "$T/xin" "$T/xout"
DISPLAY=$dpy XAUTHORITY=$xauth "$XPATTERN" <"$T/xin" >"$T/xout" 2>&1 &
xpid=$!
exec 7>"$T/xin" 8<"$T/xout"
read -r line <&8

r=$("$VNCSHOT" "127.0.0.1:$port" 10,10,ff0000 630,10,00ff00 10,470,0000ff \
    630,470,ffffff) || t_fail "native viewer: $r"
t_contains "$r" "size 640 480" "native size"

# Bound to loopback only: the socket's local address is 127.0.0.1.
if command -v ss >/dev/null 2>&1; then
	l=$(ss -Hltn "sport = :$port")
	t_contains "$l" "127.0.0.1:$port" "listening on loopback"
	t_not_contains "$l" "0.0.0.0:$port" "not on every interface"
	t_not_contains "$l" "*:$port" "not on every interface (v6)"
fi
# Another address of this machine does not answer.
other=$(hostname -I 2>/dev/null | awk '{ print $1 }')
if [ -n "$other" ] && [ "${other#127.}" = "$other" ]; then
	"$VNCSHOT" "$other:$port" >/dev/null 2>&1 &&
		t_fail "debug port answered on $other"
fi

echo quit >&7
wait "$xpid"
rk call display.close '{"bot":"alice"}' >/dev/null || t_fail "close"
"$VNCSHOT" "127.0.0.1:$port" >/dev/null 2>&1 &&
	t_fail "debug port still open after close"
exit 0

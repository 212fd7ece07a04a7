#!/bin/bash
# SPDX-License-Identifier: MIT
# Many viewers share one capture (issue 4 item 8): thirty viewers on one
# display all see the pattern and then a change; ten displays at once each
# serve their own picture to their own viewer.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
: "${RFBPROBE:?run through make check}"
t_start_guestd --gateway 127.0.0.1:0
gw=$(sed -n 's/.*event=gateway.listening .*port=\([0-9]*\).*/\1/p' \
    "$GUESTD_LOG" | head -n 1)
GW="ws://127.0.0.1:$gw"
token_of() {
	printf '%s' "$1" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p'
}
paint() {	# bot w h -> starts xpattern, fds by name
	out=$(rk call display.open "{\"bot\":\"$1\",\"width\":$2,\"height\":$3}") ||
		t_fail "open $1: $out"
	dpy=$(printf '%s' "$out" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
	xa=$(printf '%s' "$out" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
	mkfifo "$T/$1.in" "$T/$1.out"
	DISPLAY=$dpy XAUTHORITY=$xa "$XPATTERN" <"$T/$1.in" >"$T/$1.out" 2>&1 &
}

# ---- thirty viewers on one display --------------------------------------
paint one 320 240
exec 7>"$T/one.in" 8<"$T/one.out"
read -r line <&8
tok=$(token_of "$(rk call capability.grant '{"bot":"one","policy":"view"}')")
declare -a fin fout
pids=""
for i in $(seq 1 30); do
	mkfifo "$T/v$i.in" "$T/v$i.out"
	"$RFBPROBE" --url "$GW/screen/$tok" <"$T/v$i.in" >"$T/v$i.out" 2>&1 &
	pids="$pids $!"
	exec {fd}>"$T/v$i.in"
	fin[$i]=$fd
	exec {fd}<"$T/v$i.out"
	fout[$i]=$fd
done
# All thirty connect and get the pattern, all at once.
for i in $(seq 1 30); do
	printf 'handshake\nupdate\npixel 10 10 ff0000\n' >&"${fin[$i]}"
done
for i in $(seq 1 30); do
	read -r line <&"${fout[$i]}"
	t_contains "$line" "open" "viewer $i open"
	read -r line <&"${fout[$i]}"
	t_contains "$line" "init 320 240" "viewer $i init"
	read -r line <&"${fout[$i]}"
	read -r line <&"${fout[$i]}"
	t_eq "$line" ok "viewer $i pattern"
done
# One change, one capture, thirty viewers see it.
echo "rect 0 0 50 50 00ffff" >&7
read -r line <&8
for i in $(seq 1 30); do
	printf 'update inc\npixel 20 20 00ffff\n' >&"${fin[$i]}"
done
for i in $(seq 1 30); do
	read -r line <&"${fout[$i]}"
	read -r line <&"${fout[$i]}"
	t_eq "$line" ok "viewer $i saw the change"
	eval "exec ${fin[$i]}>&- ${fout[$i]}<&-"
done
for p in $pids; do
	wait "$p" || t_fail "a viewer failed"
done
upg=$(grep -c 'websocket_upgraded' "$GUESTD_LOG")
[ "$upg" -ge 30 ] || t_fail "only $upg upgrades"
echo quit >&7
exec 7>&- 8<&-

# ---- ten displays at once ------------------------------------------------
colors="ff0000 00ff00 0000ff ffff00 ff00ff 00ffff 808080 800000 008000 000080"
i=0
for c in $colors; do
	i=$((i + 1))
	paint "d$i" 160 120
	exec 7>"$T/d$i.in" 8<"$T/d$i.out"
	read -r line <&8
	echo "fill $c" >&7
	read -r line <&8
	t_eq "$line" ok "fill d$i"
	eval "exec $((i + 40))>&7"
	exec 7>&- 8<&-
done
pids=""
i=0
for c in $colors; do
	i=$((i + 1))
	t=$(token_of "$(rk call capability.grant \
	    "{\"bot\":\"d$i\",\"policy\":\"view\"}")")
	printf 'handshake\nupdate\npixel 20 20 %s\n' "$c" |
	    "$RFBPROBE" --url "$GW/screen/$t" >"$T/d$i.res" 2>&1 &
	pids="$pids $!"
done
for p in $pids; do
	wait "$p" || true
done
i=0
for c in $colors; do
	i=$((i + 1))
	t_contains "$(cat "$T/d$i.res")" "ok" "display d$i shows $c"
	echo quit >&$((i + 40))
done
exit 0

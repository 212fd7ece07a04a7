#!/bin/bash
# SPDX-License-Identifier: MIT
# observe (G-6, G-7) on a real Xvfb: our X client paints known quadrants
# and the screenshot shows them (PNG exactly, JPEG within a tolerance);
# region and downscale; the unchanged answer carries no bytes; a change
# gives a new frame whose damage box covers what was painted.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
t_start_guestd

shot() {
	"$DISPLAY_SHOT" --url "$URL" --secret-file "$SECRET" "$@"
}
field() {	# json key
	printf '%s\n' "$1" | head -n 1 |
	    sed -n "s/.*\"$2\":\\([^,}]*\\).*/\\1/p"
}

out=$(rk call display.open '{"bot":"alice","width":640,"height":480}') ||
	t_fail "open: $out"
t_contains "$out" '"display":":' "display name"
dpy=$(printf '%s' "$out" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
xauth=$(printf '%s' "$out" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
[ -s "$xauth" ] || t_fail "no cookie file"
t_eq "$(stat -c %a "$xauth")" 600 "cookie file mode"

# Without the cookie the server refuses us.
if DISPLAY=$dpy XAUTHORITY=/dev/null "$XPATTERN" </dev/null >/dev/null 2>&1
then
	t_fail "connected without the cookie"
fi

# Our client, driven through a FIFO; each command answers "ok".
mkfifo "$T/xin" "$T/xout"
DISPLAY=$dpy XAUTHORITY=$xauth "$XPATTERN" <"$T/xin" >"$T/xout" 2>&1 &
xpid=$!
exec 7>"$T/xin" 8<"$T/xout"
read -r line <&8 || t_fail "xpattern did not start"
t_eq "$line" "ready 640x480" "xpattern ready"

png=$(shot --out "$T/a.png" --pixel 10,10,ff0000,0 --pixel 630,10,00ff00,0 \
    --pixel 10,470,0000ff,0 --pixel 630,470,ffffff,0 \
    --pixel 319,239,ff0000,0 --pixel 320,240,ffffff,0 \
    display.observe '{"bot":"alice"}') || t_fail "png pixels: $png"
frame=$(field "$png" frame)
shot --pixel 10,10,00ff00,0 display.observe '{"bot":"alice"}' >/dev/null &&
	t_fail "a wrong pixel passed the check"
t_contains "$png" '"width":640,"height":480' "png size"
t_contains "$png" '"format":"png"' "png format"
head -c 8 "$T/a.png" | od -An -c | grep -q 'P   N   G' || t_fail "not a PNG"

jpg=$(shot --pixel 100,100,ff0000,24 --pixel 500,100,00ff00,24 \
    --pixel 100,400,0000ff,24 --pixel 500,400,ffffff,24 \
    display.observe '{"bot":"alice","format":"jpeg","quality":85}') ||
	t_fail "jpeg pixels: $jpg"
t_contains "$jpg" '"format":"jpeg"' "jpeg format"

# Region: the top-right quadrant only, green everywhere.
reg=$(shot --pixel 0,0,00ff00,0 --pixel 99,49,00ff00,0 display.observe \
    '{"bot":"alice","region":{"x":400,"y":100,"width":100,"height":50}}') ||
	t_fail "region: $reg"
t_contains "$reg" '"width":100,"height":50' "region size"
shot display.observe \
    '{"bot":"alice","region":{"x":600,"y":0,"width":100,"height":50}}' \
    >"$T/r" && t_fail "region off screen accepted"
t_contains "$(cat "$T/r")" RANGE_INVALID "region off screen code"

# Downscale to fit 320x320: 320x240, scale 0.5, quadrants kept.
sc=$(shot --pixel 10,10,ff0000,0 --pixel 310,230,ffffff,0 display.observe \
    '{"bot":"alice","max_width":320,"max_height":320}') ||
	t_fail "scaled: $sc"
t_contains "$sc" '"width":320,"height":240,"scale":0.5' "scaled size"

# Unchanged: same frame, no bytes.
un=$(shot display.observe "{\"bot\":\"alice\",\"since_frame\":$frame}") ||
	t_fail "unchanged: $un"
t_contains "$un" '"unchanged":true' "unchanged flag"
t_contains "$un" "bytes 0" "unchanged has no bytes"
t_eq "$(field "$un" frame)" "$frame" "unchanged frame id"

# A change: new frame, damage covers the painted box, pixels follow.
echo "rect 100 50 20 10 123456" >&7
read -r line <&8
t_eq "$line" ok "rect painted"
ch=$(shot --pixel 105,55,123456,0 --pixel 99,55,ff0000,0 \
    display.observe "{\"bot\":\"alice\",\"since_frame\":$frame}") ||
	t_fail "changed: $ch"
t_contains "$ch" '"unchanged":false' "changed flag"
nframe=$(field "$ch" frame)
[ "$nframe" -gt "$frame" ] || t_fail "frame did not advance: $ch"
t_contains "$ch" '"damage":{"x":100,"y":50,"width":20,"height":10}' \
    "damage box"

# Incompressible: a PNG bigger than the control queue's high-water mark
# arrives whole through pause/resume, and decodes.
echo noise >&7
read -r line <&8
t_eq "$line" ok "noise painted"
echo "rect 0 0 8 8 00ffff" >&7
read -r line <&8
big=$(shot --pixel 4,4,00ffff,0 display.observe '{"bot":"alice"}') ||
	t_fail "big png: $big"
n=$(printf '%s\n' "$big" | sed -n 's/^bytes //p')
[ "$n" -gt 800000 ] || t_fail "noise PNG only $n bytes"
t_contains "$big" "\"bytes\":$n" "byte count in the metadata"

# 1280x800 of noise is ~3 MB, past CONTROL_OUT_HIGH (2 MiB): the image
# is paused and resumed on the way and still arrives whole.
out=$(rk call display.open '{"bot":"big"}') || t_fail "open big"
bdpy=$(printf '%s' "$out" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
bauth=$(printf '%s' "$out" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
mkfifo "$T/bin" "$T/bout"
DISPLAY=$bdpy XAUTHORITY=$bauth "$XPATTERN" <"$T/bin" >"$T/bout" 2>&1 &
bpid=$!
exec 5>"$T/bin" 6<"$T/bout"
read -r line <&6
printf 'noise\nrect 1270 790 10 10 ff00ff\n' >&5
read -r line <&6
read -r line <&6
t_eq "$line" ok "big noise painted"
big=$(shot --pixel 1275,795,ff00ff,0 display.observe '{"bot":"big"}') ||
	t_fail "big png: $big"
n=$(printf '%s\n' "$big" | sed -n 's/^bytes //p')
[ "$n" -gt 2500000 ] || t_fail "1280x800 noise PNG only $n bytes"
echo quit >&5
wait "$bpid"
exec 5>&- 6<&-

# Bad input is answered with a code.
shot display.observe '{"bot":"alice","format":"gif"}' >"$T/r" &&
	t_fail "gif accepted"
t_contains "$(cat "$T/r")" BAD_REQUEST "bad format code"
shot display.observe '{"bot":"alice","quality":0}' >"$T/r" &&
	t_fail "quality 0 accepted"
shot display.observe '{"bot":"nobody-here"}' >"$T/r" &&
	t_fail "observe without a display"
t_contains "$(cat "$T/r")" DISPLAY_NOT_OPEN "no display code"

echo quit >&7
wait "$xpid"
exec 7>&- 8<&-
rk call display.close '{"bot":"alice"}' >/dev/null || t_fail "close"
[ -e "$xauth" ] && t_fail "cookie file left behind"
exit 0

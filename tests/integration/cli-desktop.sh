#!/bin/bash
# SPDX-License-Identifier: MIT
# The desktop verbs of `rakazoctl guest` on a real Xvfb: open (and open
# again), displays, screenshot as PNG and JPEG (magic bytes and the size in
# the file itself), region and downscale, --since with nothing changed
# (the file is left alone, nothing stray beside it) and after a change,
# act's error form, close; usage errors exit 2 without a server.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
t_start_guestd

OUT="$T/out"
mkdir -p "$OUT"

field() {	# json key: a scalar value of the first line
	printf '%s\n' "$1" | head -n 1 |
	    sed -n "s/.*\"$2\":\\([^,}]*\\).*/\\1/p"
}
magic() {	# file: the first four bytes in hex
	od -An -tx1 -N4 "$1" | tr -d ' \n'
}
png_size() {	# file: WxH from the IHDR chunk (big-endian at offset 16)
	od -An -tu1 -j16 -N8 "$1" | awk '{
		printf "%dx%d\n", (($1 * 256 + $2) * 256 + $3) * 256 + $4,
		    (($5 * 256 + $6) * 256 + $7) * 256 + $8 }'
}
jpeg_size() {	# file: WxH as file(1) reads it from the SOF marker
	file -b "$1" | sed -n 's/.*, \([0-9]*x[0-9]*\), components.*/\1/p'
}
no_strays() {	# no temp file left in $OUT
	local f
	for f in "$OUT"/.rakazoctl*; do
		[ -e "$f" ] && t_fail "$1: $f"
	done
	return 0
}

# Usage errors need no server and exit 2.
for bad in "open" "open a b" "open a --geometry 640" "close" \
    "displays -x" "screenshot alice" "screenshot alice -o -" \
    "screenshot -o $OUT/u.png" "screenshot alice -o $OUT/u.png --jpeg 0" \
    "screenshot alice -o $OUT/u.png --region 1,2,3" \
    "screenshot alice -o $OUT/u.png --max 10" "act alice" \
    "act alice {}" "act alice [ --scale 0"; do
	# shellcheck disable=SC2086
	"$RAKAZOCTL" guest --url ws://127.0.0.1:1 $bad >/dev/null 2>&1
	t_eq "$?" 2 "usage: $bad"
done

out=$(rk open alice --geometry 640x480) || t_fail "open: $out"
t_contains "$out" '"bot":"alice"' "open bot"
t_contains "$out" '"width":640,"height":480' "open geometry"
t_contains "$out" '"created":true' "open created"
dpy=$(printf '%s' "$out" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
xauth=$(printf '%s' "$out" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
again=$(rk open alice) || t_fail "open again: $again"
t_contains "$again" '"created":false' "open again keeps the desktop"
t_contains "$again" "\"display\":\"$dpy\"" "open again same display"

lines=$(rk displays) || t_fail "displays: $lines"
t_eq "$(printf '%s\n' "$lines" | wc -l)" 1 "one display listed"
printf '%s\n' "$lines" | grep -Eq \
    "^alice $dpy 640x480 [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z [0-9]+\\.[0-9]s free\$" ||
	t_fail "displays line: $lines"
js=$(rk displays --json) || t_fail "displays --json"
t_contains "$js" '"displays":[{"bot":"alice"' "displays --json"

# Known quadrants on the screen, painted by our X client.
mkfifo "$T/xin" "$T/xout"
DISPLAY=$dpy XAUTHORITY=$xauth "$XPATTERN" <"$T/xin" >"$T/xout" 2>&1 &
xpid=$!
exec 7>"$T/xin" 8<"$T/xout"
read -r line <&8 || t_fail "xpattern did not start"
t_eq "$line" "ready 640x480" "xpattern ready"

# PNG, the default for a .png name.
meta=$(rk screenshot alice -o "$OUT/a.png") || t_fail "png: $meta"
t_eq "$(magic "$OUT/a.png")" 89504e47 "PNG magic"
t_eq "$(png_size "$OUT/a.png")" 640x480 "PNG IHDR size"
t_contains "$meta" '"format":"png"' "png metadata format"
t_contains "$meta" '"unchanged":false' "png metadata unchanged flag"
t_eq "$(field "$meta" bytes)" "$(stat -c %s "$OUT/a.png")" "png byte count"
frame=$(field "$meta" frame)
[ -n "$frame" ] || t_fail "no frame id: $meta"

# JPEG at a quality, scaled down to fit, aspect kept.
meta=$(rk screenshot alice -o "$OUT/b.img" --jpeg 80 --max 320x320) ||
	t_fail "jpeg: $meta"
t_eq "$(magic "$OUT/b.img" | cut -c1-6)" ffd8ff "JPEG magic"
t_contains "$meta" '"width":320,"height":240,"scale":0.5' "jpeg scaled"
if command -v file >/dev/null 2>&1; then
	t_eq "$(jpeg_size "$OUT/b.img")" 320x240 "JPEG SOF size"
fi
# A .jpg name asks for JPEG; --png overrides the name.
rk screenshot alice -o "$OUT/c.jpg" >/dev/null || t_fail "jpg by name"
t_eq "$(magic "$OUT/c.jpg" | cut -c1-6)" ffd8ff "JPEG by name"
rk screenshot alice -o "$OUT/d.jpg" --png >/dev/null || t_fail "--png"
t_eq "$(magic "$OUT/d.jpg")" 89504e47 "--png wins over the name"

# A region: the top-right quadrant, 100x50.
meta=$(rk screenshot alice -o "$OUT/r.png" --region 400,100,100,50) ||
	t_fail "region: $meta"
t_eq "$(png_size "$OUT/r.png")" 100x50 "region size"
t_contains "$meta" '"region":{"x":400,"y":100,"width":100,"height":50}' \
    "region metadata"

# Nothing changed since frame: the file is left alone.
cp "$OUT/a.png" "$T/a.keep"
touch -d @1000000000 "$OUT/a.png"
meta=$(rk screenshot alice -o "$OUT/a.png" --since "$frame") ||
	t_fail "unchanged: $meta"
t_contains "$meta" '"unchanged":true' "unchanged flag"
t_eq "$(field "$meta" frame)" "$frame" "unchanged frame id"
t_eq "$(stat -c %Y "$OUT/a.png")" 1000000000 "unchanged file not rewritten"
cmp -s "$OUT/a.png" "$T/a.keep" || t_fail "unchanged file altered"
rk screenshot alice -o "$OUT/new.png" --since "$frame" >/dev/null ||
	t_fail "unchanged to a new name"
[ -e "$OUT/new.png" ] && t_fail "unchanged created a file"
no_strays "no temp file after unchanged"

# A change: a new frame and a new picture in place of the old.
echo "rect 0 0 320 240 00ffff" >&7
read -r line <&8
t_eq "$line" ok "rect painted"
meta=$(rk screenshot alice -o "$OUT/a.png" --since "$frame") ||
	t_fail "changed: $meta"
t_contains "$meta" '"unchanged":false' "changed flag"
t_contains "$meta" '"damage":{"x":0,"y":0,"width":320,"height":240}' \
    "changed damage"
[ "$(field "$meta" frame)" -gt "$frame" ] || t_fail "frame did not advance"
cmp -s "$OUT/a.png" "$T/a.keep" && t_fail "changed file not rewritten"
t_eq "$(png_size "$OUT/a.png")" 640x480 "changed PNG size"

# Errors: CODE on stderr, exit 1, no file and no temp file left.
rk screenshot nobody-here -o "$OUT/n.png" >"$T/o" 2>"$T/e" &&
	t_fail "screenshot without a desktop"
t_contains "$(cat "$T/e")" "rakazoctl: DISPLAY_NOT_OPEN: " "no desktop code"
[ -e "$OUT/n.png" ] && t_fail "error left a file"
[ -s "$T/o" ] && t_fail "error printed on stdout"
rk screenshot alice -o "$OUT/n.png" --region 600,0,100,100 2>"$T/e" &&
	t_fail "region off screen accepted"
t_contains "$(cat "$T/e")" "rakazoctl: RANGE_INVALID: " "off-screen code"
no_strays "no temp file after errors"

# act: an action guestd cannot accept is refused as CODE: message, exit 1
# with ACTION_INVALID; a good batch answers its result.
rk act alice '[{"kind":"no-such-kind"}]' >"$T/o" 2>"$T/e"
t_eq "$?" 1 "act refused"
grep -Eq '^rakazoctl: [A-Z_]+: ' "$T/e" || t_fail "act error: $(cat "$T/e")"
rk act alice '[{"kind":"wait","ms":1}]' >"$T/o" 2>"$T/e" ||
	t_fail "act: $(cat "$T/e")"
t_contains "$(cat "$T/o")" '"completed":1' "act result JSON"

echo quit >&7
wait "$xpid"
exec 7>&- 8<&-

out=$(rk close alice) || t_fail "close: $out"
t_contains "$out" "\"display\":\"$dpy\"" "close display"
t_eq "$(rk displays)" "" "nothing listed after close"
rk close alice 2>"$T/e" && t_fail "close twice"
t_contains "$(cat "$T/e")" "rakazoctl: DISPLAY_NOT_OPEN: " "close twice code"
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# Every kind of PNG guestd writes passes strict decoders (issue 26 item
# 12): the full screenshot (bands), a scaled one, a region, a zoom out of
# display.act and the /v1/desktop observation, each decoded through
# png_read_end by libpng (png-strict, which checks every chunk's CRC,
# IEND's too), by pngcheck and by ImageMagick.  IEND once carried CRC 0,
# which lenient readers (browsers, PIL) never look at.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
command -v curl >/dev/null 2>&1 || { echo "# no curl"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "# no python3"; exit 77; }
command -v pngcheck >/dev/null 2>&1 || { echo "# no pngcheck"; exit 77; }
command -v identify >/dev/null 2>&1 || { echo "# no ImageMagick"; exit 77; }
: "${PNG_STRICT:?run through make check}"
: "${DISPLAY_SHOT:?run through make check}"

# Like t_start_guestd, with the /v1/desktop server (its port comes second).
t_secret
mkfifo "$T/ready"
user_args=""
[ "$(id -u)" -eq 0 ] && user_args="--user $T_USER"
# shellcheck disable=SC2086
"$GUESTD" --listen 127.0.0.1:0 --secret-file "$SECRET" --workspace "$WS" \
    --ready-file "$T/ready" --log-level debug --compat 127.0.0.1:0 \
    $user_args >"$GUESTD_LOG" 2>&1 &
GUESTD_PID=$!
exec 4<>"$T/ready"
read -t 30 -r PORT <&4 || PORT=""
read -t 5 -r cline <&4 || cline=""
exec 4<&-
[ -n "$PORT" ] || t_fail "guestd did not start"
CPORT=${cline#compat=}
[ -n "$CPORT" ] && [ "$CPORT" != "$cline" ] || t_fail "no compat port: '$cline'"
URL="ws://127.0.0.1:$PORT"

o=$(rk call display.open '{"bot":"alice","width":640,"height":480}') ||
	t_fail "open: $o"
slot=$(printf '%s' "$o" | sed -n 's/.*"slot":\([0-9]*\).*/\1/p')
[ -n "$slot" ] || t_fail "no slot in $o"

shot() {
	"$DISPLAY_SHOT" --url "$URL" --secret-file "$SECRET" "$@"
}

# b64 FILE PYEXPR: the base64 image at PYEXPR of the JSON on stdin, decoded.
b64() {
	python3 -c 'import base64, json, sys
d = json.load(sys.stdin)
sys.stdout.buffer.write(base64.b64decode(eval(sys.argv[2])))' "$1" "$2" \
	    > "$1" || t_fail "no image at $2"
}

shot --out "$T/full.png" display.observe '{"bot":"alice","format":"png"}' \
    >/dev/null || t_fail "observe"
shot --out "$T/scaled.png" display.observe \
    '{"bot":"alice","format":"png","max_width":200}' >/dev/null ||
	t_fail "observe scaled"
shot --out "$T/region.png" display.observe \
    '{"bot":"alice","format":"png","region":{"x":10,"y":20,"width":33,"height":17}}' \
    >/dev/null || t_fail "observe region"
rk act alice '[{"action":"zoom","region":[100,100,180,150]}]' |
    b64 "$T/zoom.png" 'd["zoom"][0]["image"]'
curl -sS --max-time 30 -H "Authorization: Bearer $(cat "$SECRET")" \
    -H 'Content-Type: application/json' --data-binary \
    "{\"display\":$slot,\"steps\":[{\"argv\":[\"mousemove\",\"5\",\"5\"]}],\"observe\":true,\"settleMs\":10}" \
    "http://127.0.0.1:$CPORT/v1/desktop" |
    b64 "$T/compat.png" 'd["observation"]["image"]'

for f in full scaled region zoom compat; do
	p=$T/$f.png
	out=$("$PNG_STRICT" "$p") || t_fail "libpng through png_read_end: $out"
	t_note "$out"
	out=$(pngcheck "$p" 2>&1) || t_fail "pngcheck: $out"
	out=$(identify -regard-warnings "$p" 2>&1) ||
		t_fail "ImageMagick identify: $out"
	# A full decode to another format, as a converting client does.
	out=$(identify -regard-warnings -format '%wx%h %k\n' "$p" 2>&1) ||
		t_fail "ImageMagick decode: $out"
done
echo "ok"

#!/bin/bash
# SPDX-License-Identifier: MIT
# Anthropic's zoom through display.act returns the region of the screen as
# its image: a PNG of exactly the region's size at full resolution, whose
# pixels are the screen's there (xpattern's four known quadrants meet in
# the region), also when the batch is in scaled coordinates.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "# no python3"; exit 77; }
: "${XPATTERN:?run through make check}"
t_start_guestd

o=$(rk call display.open '{"bot":"alice"}') || t_fail "open: $o"
slot=$(printf '%s' "$o" | sed -n 's/.*"slot":\([0-9]*\).*/\1/p')
auth=$(printf '%s' "$o" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')

mkfifo "$T/xin" "$T/xout"
DISPLAY=":$slot" XAUTHORITY="$auth" "$XPATTERN" <"$T/xin" >"$T/xout" 2>&1 &
T_KILL="$!"
exec 7>"$T/xin" 8<"$T/xout"
read -t 20 -r line <&8 || t_fail "xpattern did not start"
t_eq "$line" "ready 1280x800" "xpattern ready"
# A mark of its own 3x3 pixels at 700,380 (inside the green quadrant).
echo "rect 700 380 3 3 123456" >&7
read -t 10 -r line <&8 && t_eq "$line" ok "rect painted"

# zoom_pixels JSON-REPLY: the zoom's fields, then the colour of the PNG's
# pixels named: x,y ... (hex RRGGBB), all on one line.
zoom_pixels() {
	printf '%s' "$1" | python3 -c '
import base64, json, struct, sys, zlib
d = json.load(sys.stdin)
z = d["zoom"]
assert len(z) == 1, z
z = z[0]
png = base64.b64decode(z["image"])
assert png[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, w, h = 8, b"", 0, 0
while pos < len(png):
    n, = struct.unpack(">I", png[pos:pos + 4])
    kind, body = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        assert (depth, ctype) == (8, 2), (depth, ctype)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
row = 1 + 3 * w
assert len(raw) == row * h
# Undo the filter of each row (PNG 1.2, section 6): any of the five is valid.
rows, prev = [], bytearray(3 * w)
for y in range(h):
    f, cur = raw[y * row], bytearray(raw[y * row + 1:(y + 1) * row])
    for i in range(len(cur)):
        a = cur[i - 3] if i >= 3 else 0
        b, c = prev[i], prev[i - 3] if i >= 3 else 0
        if f == 1:
            cur[i] = (cur[i] + a) & 255
        elif f == 2:
            cur[i] = (cur[i] + b) & 255
        elif f == 3:
            cur[i] = (cur[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else
                                b if pb <= pc else c)) & 255
        else:
            assert f == 0, "filter %d" % f
    rows.append(cur)
    prev = cur
def px(x, y):
    return bytes(rows[y][3 * x:3 * x + 3]).hex()
r = z["region"]
out = ["%dx%d" % (w, h), "%dx%d" % (z["width"], z["height"]),
    "%d,%d,%d,%d" % (r["x"], r["y"], r["width"], r["height"]),
    z["mimeType"], str(z["action"])]
for a in sys.argv[1:]:
    x, y = map(int, a.split(","))
    out.append(px(x, y))
print(" ".join(out))
' "${@:2}"
}

# Real pixels: a region across the middle, where the quadrants meet.
r=$(rk act alice '[{"action":"zoom","region":[600,380,720,420]}]') ||
	t_fail "zoom: $r"
t_contains "$r" '"screenshot_requested":true' "still a screenshot marker"
got=$(zoom_pixels "$r" 0,0 119,0 0,39 119,39 39,19 40,20 100,0 101,2) ||
	t_fail "zoom reply: $r"
t_eq "$got" "120x40 120x40 600,380,120,40 image/png 0 ff0000 00ff00 0000ff ffffff ff0000 ffffff 123456 123456" \
    "zoomed region: size, quadrants, mark"

# In scaled coordinates (scale 0.5): the region is the same real pixels,
# returned at full resolution.
r=$(rk act alice --scale 0.5 \
    '[{"action":"mouse_move","coordinate":[10,10]},{"action":"zoom","region":[300,190,360,210]}]' 2>&1) ||
	t_fail "scaled zoom: $r"
got=$(zoom_pixels "$r" 0,0 119,39 100,0) || t_fail "scaled zoom reply: $r"
t_eq "$got" "120x40 120x40 600,380,120,40 image/png 1 ff0000 ffffff 123456" \
    "scaled zoom is the real region"

# Off the screen: refused before anything happens.
r=$(rk act alice '[{"action":"zoom","region":[1200,700,1300,800]}]' 2>&1) &&
	t_fail "zoom off the screen accepted: $r"
t_contains "$r" COORDINATES_OUT_OF_RANGE "zoom off the screen"

kill -0 "$GUESTD_PID" || t_fail "guestd died"
exit 0

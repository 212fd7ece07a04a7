#!/bin/bash
# SPDX-License-Identifier: MIT
# packaging/demo.sh as a person meets it (issue 11 item 6), with the
# binaries of this build: its screenshot shows the windows it opened (it
# waits for them to map), and Ctrl-C, a SIGINT to its whole process group
# as a terminal sends it, stops everything it started: no controller,
# guestd, Xvfb, window manager or desktop app of this run survives, and its
# temp data dir is gone.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
command -v xterm >/dev/null 2>&1 || { echo "# no xterm"; exit 77; }
command -v xwininfo >/dev/null 2>&1 || { echo "# no xwininfo"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "# no python3"; exit 77; }
export RAKAZOCTL GUESTD
export TERM_ASSETS=${TERM_ASSETS:-}
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR"
chmod 1777 "$TMPDIR"	# guestd (nobody, as root) makes its X dir there
LOG=$T/demo.log

# Its own session and process group, as a terminal's foreground job, with
# SIGINT not ignored (a script's background jobs start with it ignored, and
# a shell cannot trap what it inherited ignored).
setsid env --default-signal=INT bash "$top_srcdir/packaging/demo.sh" \
    </dev/null >"$LOG" 2>&1 &
DEMO=$!
T_KILL="$T_KILL $DEMO"

for _ in $(seq 1200); do
	grep -q '^Press Ctrl-C' "$LOG" && break
	kill -0 "$DEMO" 2>/dev/null || break
	sleep 0.1
done
grep -q '^Press Ctrl-C' "$LOG" || { cat "$LOG" >&2; t_fail "the demo did not get ready"; }
D=$(ls -d "$TMPDIR"/rakazo-demo.* 2>/dev/null | head -n 1)
[ -d "$D" ] || t_fail "no demo dir in $TMPDIR"

# Everything of this run: the processes whose command line or environment
# names its temp dir (the controller, guestd, the apps the bot's shell
# started) and their children (guestd's Xvfb and window manager).
ours() {
	local p
	for p in /proc/[0-9]*; do
		if { tr '\0' '\n' < "$p/cmdline"; } 2>/dev/null |
		    grep -q "^$D" ||
		    { tr '\0' '\n' < "$p/environ"; } 2>/dev/null |
		    grep -q "=$D"; then
			echo "${p#/proc/}"
		fi
	done
}
ours_all() {
	local mine p
	mine=" $(ours | tr '\n' ' ') "
	for p in /proc/[0-9]*; do
		case $mine in *" $(awk '/^PPid:/ { print $2 }' \
		    "$p/status" 2>/dev/null) "*)
			mine="$mine${p#/proc/} " ;;
		esac
	done
	echo "$mine" | tr ' ' '\n' | sed '/^$/d'
}
before=$(ours_all | sort -u)
names=""
for p in $before; do
	names="$names $(cat "/proc/$p/comm" 2>/dev/null)"
done
t_note "processes of the run:$names"
t_contains "$names" "guestd" "guestd among them"
t_contains "$names" "Xvfb" "Xvfb among them"
t_contains "$names" "xterm" "xterm among them"

# The screenshot shows xterm (at +40+40, its white background over
# Xvfb's black and white root weave): a 20x20 block inside it is uniform.
python3 - "$D/alice.png" <<'PY' || t_fail "the screenshot does not show xterm"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, hdr = 8, b"", None
while pos < len(data):
    n, typ = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if typ == b"IHDR":
        hdr = struct.unpack(">IIBBBBB", body)
    elif typ == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype = hdr[0], hdr[1], hdr[2], hdr[3]
assert depth == 8 and ctype in (2, 6) and hdr[6] == 0, hdr
bpp = 3 if ctype == 2 else 4
raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line); prev = line
block = {bytes(rows[y][x * bpp:x * bpp + 3]) for y in range(300, 320) for x in range(300, 320)}
print("# colours in the block inside xterm:", len(block))
sys.exit(0 if len(block) == 1 else 1)
PY

# Ctrl-C.
kill -INT -- "-$DEMO"
for _ in $(seq 600); do
	kill -0 "$DEMO" 2>/dev/null || break
	sleep 0.1
done
! kill -0 "$DEMO" 2>/dev/null || t_fail "the demo runs 60 s after SIGINT"
wait "$DEMO" 2>/dev/null
left=""
for _ in $(seq 100); do
	left=""
	for p in $before; do
		[ -d "/proc/$p" ] || continue
		[ "$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)" != Z ] ||
			continue
		left="$left $(cat "/proc/$p/comm" 2>/dev/null):$p"
	done
	[ -z "$left" ] && break
	sleep 0.1
done
[ -z "$left" ] || { tail -n 30 "$LOG" >&2; t_fail "left running after Ctrl-C:$left"; }
[ ! -e "$D" ] || t_fail "the demo's data dir $D is still there"
grep -q '^stopping' "$LOG" || t_fail "the demo did not say it was stopping"
echo "ok"

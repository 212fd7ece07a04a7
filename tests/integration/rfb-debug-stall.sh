#!/bin/bash
# SPDX-License-Identifier: MIT
# A stalled debug-port viewer never blocks guestd (G-16 with the gate of
# rfb.c): a raw TCP client on the debug port asks for fifty full 1280x800
# frames of Raw (4 MB each) and then stops reading while the screen keeps
# changing.  Meanwhile every control call answers within a second and a
# well-behaved native viewer on the same port gets a full frame at once;
# afterwards the stalled viewer, reading again, is still served.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "# no python3"; exit 77; }
: "${VNCSHOT:?run through make check}"
: "${XPATTERN:?run through make check}"

base=$T_VNC_BASE
t_start_guestd --debug-vnc 127.0.0.1 --debug-vnc-base "$base"
out=$(rk call display.open '{"bot":"stall","width":1280,"height":800}') ||
	t_fail "open: $out"
slot=$(printf '%s' "$out" | sed -n 's/.*"slot":\([0-9]*\).*/\1/p')
dpy=$(printf '%s' "$out" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
xa=$(printf '%s' "$out" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
port=$((base + slot))
grep -q "rfb.debug_listening addr=127.0.0.1 port=$port" "$GUESTD_LOG" ||
	t_fail "no debug listener on $port"

mkfifo "$T/xin" "$T/xout"
DISPLAY=$dpy XAUTHORITY=$xa "$XPATTERN" <"$T/xin" >"$T/xout" 2>&1 &
xpid=$!
T_KILL="$xpid"
exec 7>"$T/xin" 8<"$T/xout"
read -r line <&8
t_contains "$line" ready "pattern client"

# The stalled viewer: RFB 3.8, security None, then fifty non-incremental
# full-screen requests with a tiny receive window, and no reading until a
# line arrives on stdin; then it reads one full frame's worth of bytes.
cat >"$T/stall.py" <<'EOF'
import socket, struct, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.settimeout(20)
s.connect(("127.0.0.1", int(sys.argv[1])))
def rd(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            print("eof in handshake", flush=True)
            sys.exit(1)
        b += c
    return b
rd(12)
s.sendall(b"RFB 003.008\n")
rd(rd(1)[0])
s.sendall(b"\x01")
if rd(4) != b"\0\0\0\0":
    print("security refused", flush=True)
    sys.exit(1)
s.sendall(b"\x01")
init = rd(24)
w, h = struct.unpack(">HH", init[:4])
rd(struct.unpack(">I", init[20:24])[0])
s.sendall(struct.pack(">BBHHHH", 3, 0, 0, 0, w, h) * 50)
print("flooded %d %d" % (w, h), flush=True)
sys.stdin.readline()
got = 0
try:
    while got < w * h * 4:
        c = s.recv(1 << 20)
        if not c:
            break
        got += len(c)
except OSError:
    pass
print("drained" if got >= w * h * 4 else "short %d" % got, flush=True)
EOF
mkfifo "$T/sin" "$T/sout"
python3 "$T/stall.py" "$port" <"$T/sin" >"$T/sout" 2>&1 &
spid=$!
T_KILL="$T_KILL $spid"
exec 5>"$T/sin" 6<"$T/sout"
read -r line <&6
t_eq "$line" "flooded 1280 800" "stalled viewer asked for fifty frames"

# The screen changes all the time meanwhile (noise, then a flat colour).
(
	while [ ! -e "$T/stop" ]; do
		printf 'noise\n' >&7
		read -r l <&8 || break
		printf 'fill 203040\n' >&7
		read -r l <&8 || break
	done
) &
painter=$!
T_KILL="$T_KILL $painter"

# Twenty control round trips, each within a second.
worst=0
for i in $(seq 1 20); do
	t0=$(date +%s%3N)
	rk call health '{}' >/dev/null || t_fail "health call $i failed"
	dt=$(($(date +%s%3N) - t0))
	[ "$dt" -gt "$worst" ] && worst=$dt
	[ "$dt" -lt 1000 ] || t_fail "health call $i took $dt ms"
done
t_note "slowest of 20 health calls: $worst ms"

# A well-behaved viewer on the same port gets a whole frame at once.
t0=$(date +%s%3N)
r=$("$VNCSHOT" "127.0.0.1:$port") || t_fail "second viewer: $r"
dt=$(($(date +%s%3N) - t0))
t_contains "$r" "size 1280 800" "second viewer served during the stall"
t_note "second viewer: a full frame in $dt ms"
[ "$dt" -lt 2000 ] || t_fail "second viewer took $dt ms"

touch "$T/stop"
wait "$painter"

# The stalled viewer was held, not dropped: reading again, it is served.
echo go >&5
exec 5>&-
read -r line <&6
t_eq "$line" drained "stalled viewer served once it reads"
wait "$spid"
rk call health '{}' >/dev/null || t_fail "guestd gone"

echo quit >&7
wait "$xpid"
exit 0

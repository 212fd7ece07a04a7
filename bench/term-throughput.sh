#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The terminal (guestd/pty.c) against a bare PTY, in the same run:
#
#   throughput: `cat` of a BENCH_MB MiB text file in a shell of the
#     terminal, every byte read by termprobe (the test suite's websocket
#     client) until a marker after it, against the same `cat` under
#     script(1), which copies its PTY to /dev/null: the limit a PTY sets.
#     Medians of BENCH_REPS runs; target: at least half the bare PTY.
#   echo latency: BENCH_KEYS keystrokes into bash's prompt, each timed from
#     the frame going out until its echo is back, against the same through
#     a bare PTY (python3's pty module driving bash).  Median and p99.
#
# Needs Xvfb (a capability needs a display) and script(1) (util-linux).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

MB=${BENCH_MB:-512}
REPS=${BENCH_REPS:-3}
KEYS=${BENCH_KEYS:-500}
command -v Xvfb >/dev/null || b_die "needs Xvfb"
command -v script >/dev/null || b_die "needs script (util-linux)"
TERMPROBE=${TERMPROBE:-$B_BUILD/tests/integration/termprobe}
[ -x "$TERMPROBE" ] || make -s -C "$B_BUILD" tests/integration/termprobe \
    >/dev/null 2>&1 || true
[ -x "$TERMPROBE" ] || b_die "no termprobe: make tests/integration/termprobe"

WS="$B_T/ws"
b_mkdir "$WS" "$WS/bots" "$WS/bots/alice"
GUESTD_DISPLAY_FIRST=$((300 + $$ % 400))
export GUESTD_DISPLAY_FIRST
b_start_guestd a "$WS" --gateway 127.0.0.1:0 --log-level info
gw=$(sed -n 's/.*event=gateway.listening .*port=\([0-9]*\).*/\1/p' \
    "$B_T/guestd-a.log" | head -n 1)
b_rk a call display.open '{"bot":"alice","width":320,"height":240}' \
    >/dev/null
tok=$(b_rk a call capability.grant '{"bot":"alice","policy":"control"}' |
    sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
TURL="ws://127.0.0.1:$gw/term/$tok"

# 100-byte lines, MB MiB in all.
big="$WS/bots/alice/big.txt"
head -c $((MB * 1024 * 1024 / 100 * 99)) /dev/zero | tr '\0' x |
    fold -w 99 >"$big"
chmod a+r "$big"
bytes=$(stat -c %s "$big")

echo "cat of $bytes bytes ($MB MiB), $REPS runs each:"
: >"$B_T/term.ms"
: >"$B_T/bare.ms"
for _ in $(seq "$REPS"); do
	r=$(printf 'send cat big.txt; echo E""ND\\r\nuntil END\n' |
	    "$TERMPROBE" --timeout 600000 --url "$TURL")
	ms=$(printf '%s\n' "$r" | sed -n 's/^until bytes=[0-9]* ms=//p')
	[ -n "$ms" ] || b_die "terminal run failed: $r"
	echo "$ms" >>"$B_T/term.ms"
	t0=${EPOCHREALTIME/./}
	b_as_user script -q -c "cat '$big'" /dev/null >/dev/null
	t1=${EPOCHREALTIME/./}
	echo $(((t1 - t0) / 1000)) >>"$B_T/bare.ms"
done
tm=$(b_median <"$B_T/term.ms")
bm=$(b_median <"$B_T/bare.ms")
tmbs=$(awk -v b="$bytes" -v m="$tm" 'BEGIN { printf "%.1f", b / m / 1000 }')
bmbs=$(awk -v b="$bytes" -v m="$bm" 'BEGIN { printf "%.1f", b / m / 1000 }')
echo "  terminal (guestd, websocket): median $tm ms = $tmbs MB/s"
echo "  bare PTY (script -c cat):     median $bm ms = $bmbs MB/s"
echo "  throughput ratio terminal/bare: $(b_ratio "$bm" "$tm")" \
    "(target >= 0.50)"

echo "keystroke echo latency, $KEYS keys at a bash prompt:"
r=$(printf 'send echo R""EADY\\r\nexpect READY\\r\nsleep 200\necho-latency %d\n' \
    "$KEYS" | "$TERMPROBE" --url "$TURL")
tl=$(printf '%s\n' "$r" | sed -n 's/^latency .*median_us=\([0-9]*\).*/\1/p')
tp=$(printf '%s\n' "$r" | sed -n 's/^latency .*p99_us=\([0-9]*\).*/\1/p')
[ -n "$tl" ] || b_die "latency run failed: $r"
bare=$(b_as_user env HOME="$WS" python3 - "$KEYS" <<'PY'
import os, pty, select, sys, time
n = int(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
def read_until(b, t=10):
    got = b""
    end = time.time() + t
    while b not in got and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            got += os.read(fd, 65536)
    return got
os.write(fd, b"echo R\"\"EADY\r")
read_until(b"READY\r")
time.sleep(0.2)
read_until(b"\0", 0.1)
lat = []
for i in range(n):
    c = bytes([ord("a") + i % 26])
    t0 = time.perf_counter()
    os.write(fd, c)
    read_until(c)
    lat.append((time.perf_counter() - t0) * 1e6)
    if i % 50 == 49:
        os.write(fd, b"\x15")
lat.sort()
print(int(lat[n // 2]), int(lat[min(n - 1, n * 99 // 100)]))
os.kill(pid, 9)
PY
)
bl=${bare% *}
bp=${bare#* }
echo "  terminal (guestd, websocket): median ${tl} us, p99 ${tp} us"
echo "  bare PTY (python pty, bash):  median ${bl} us, p99 ${bp} us"
echo "  latency ratio terminal/bare: $(b_ratio "$tl" "$bl")"

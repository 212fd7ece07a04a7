#!/bin/bash
# SPDX-License-Identifier: MIT
# Slot picking (G-1) next to other X servers: an X socket without a lock
# file that still answers (a server run without locks) keeps its slot; a
# stale one (refusing connections) is reused when guestd's user may replace
# it, and left alone when another user owns it (the sticky /tmp/.X11-unix
# would not let Xvfb unlink it).
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
N=$GUESTD_DISPLAY_FIRST
LIVE=/tmp/.X11-unix/X$N
FOREIGN=/tmp/.X11-unix/X$((N + 1))	# stale, another user's (as root)
STALE=/tmp/.X11-unix/X$((N + 2))	# stale, guestd's user's
for i in 0 1 2; do
	[ ! -e "/tmp/.X11-unix/X$((N + i))" ] && [ ! -e "/tmp/.X$((N + i))-lock" ] ||
	    { echo "# slots taken"; exit 77; }
done
mkdir -p /tmp/.X11-unix
# guestd runs as $T_USER when the tests run as root (tests/lib.sh).
if [ "$(id -u)" -eq 0 ]; then
	OWNER=$(id -u "$T_USER")
	WANT=$((N + 2))
else
	OWNER=$(id -u)
	WANT=$((N + 1))		# every stale socket is ours: the first is used
fi

# A listener on :N without a lock, and a socket file on :N+1 nobody
# listens on.  The listener says "ready" through a FIFO (no sleeps).
mkfifo "$T/ready"
python3 - "$LIVE" "$FOREIGN" "$STALE" "$OWNER" > "$T/ready" <<'PY' &
import os, socket, sys
live = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
live.bind(sys.argv[1]); live.listen(8)
for path in sys.argv[2:4]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path); s.close()
# As X servers make them: anyone may connect (guestd may not be root).
for path in sys.argv[1:4]:
    os.chmod(path, 0o777)
os.chown(sys.argv[3], int(sys.argv[4]), -1)
print("ready", flush=True)
while True:
    c, _ = live.accept(); c.close()
PY
T_KILL="$T_KILL $!"
cleanup_sockets() {
	rc=$?
	rm -f "$LIVE" "$FOREIGN" "$STALE"
	(exit "$rc")
	t_cleanup
}
trap cleanup_sockets EXIT
read -t 10 -r r < "$T/ready" || t_fail "the fake X listener did not start"
t_eq "$r" ready "fake X listener up"

t_start_guestd
a=$(rk call display.open '{"bot":"alice"}') || t_fail "open: $a"
slot=$(printf '%s' "$a" | sed -n 's/.*"slot":\([0-9]*\).*/\1/p')
t_eq "$slot" "$WANT" "live and foreign lock-less slots skipped, a stale one reused"
t_eq "$(grep -c 'event=display.start ' "$GUESTD_LOG")" 1 "one Xvfb start, no retry"
exit 0

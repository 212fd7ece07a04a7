#!/bin/bash
# SPDX-License-Identifier: MIT
# serve stopped (SIGTERM) while the maintenance task's object sweep waits
# on the bucket: the transfer is ended, the sweep unwinds and frees what
# it holds (store rows, its store connection, the request), and serve
# exits 0 soon after the signal.  Under AddressSanitizer a sweep dropped
# mid-wait is a LeakSanitizer report and exit status 23.  The "bucket" is
# a loopback listener that logs each request line; the bucket checks
# (max-keys=1) get an empty listing, every other request no answer, so the
# sweep's LIST of a home is in flight for as long as the test wants.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

HOLD_LOG="$T/hold.log"
: > "$HOLD_LOG"
python3 -c '
import os, re, socket, sys
EMPTY = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult>"
    b"<Name>rakazo-test</Name><IsTruncated>false</IsTruncated>"
    b"</ListBucketResult>")
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
held = []
while True:
    c, _ = s.accept()
    req = b""
    while b"\r\n\r\n" not in req:
        b = c.recv(65536)
        if not b:
            break
        req += b
    line = req.split(b"\r\n", 1)[0].decode("latin-1")
    with open(sys.argv[2], "a") as f:
        f.write(line + "\n")
    if re.search(r"[?&]max-keys=1(&| )", line):
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\n"
            b"Connection: close\r\nContent-Length: %d\r\n\r\n" %
            len(EMPTY) + EMPTY)
        c.close()
    else:
        held.append(c)
' "$T/hold.port" "$HOLD_LOG" &
HOLD_PID=$!
T_KILL="$T_KILL $HOLD_PID"
_i=0
while [ ! -s "$T/hold.port" ]; do
	kill -0 "$HOLD_PID" 2>/dev/null || t_fail "the listener died"
	_i=$((_i + 1))
	[ "$_i" -le 200 ] || t_fail "the listener not ready in 10 s"
	sleep 0.05
done

export OBJECT_STORAGE_BUCKET=rakazo-test
OBJECT_STORAGE_ENDPOINT="http://127.0.0.1:$(cat "$T/hold.port")"
export OBJECT_STORAGE_ENDPOINT
export OBJECT_STORAGE_ACCESS_KEY_ID=AKIDRAKAZOTEST
export OBJECT_STORAGE_SECRET_ACCESS_KEY=not-a-secret-of-anyone
export OBJECT_STORAGE_REGION=us-east-1

ctl_start --reconcile-ms 200
# A computer row, so the sweep holds its list of computers too.
api POST /v1/computers '{"id":"team"}' >/dev/null

# The sweep's LIST of the homes reached the bucket and waits.
_i=0
until grep -q '^GET /rakazo-test/?.*max-keys=1000' "$HOLD_LOG"; do
	kill -0 "$CTL_PID" 2>/dev/null || t_fail "serve died"
	_i=$((_i + 1))
	[ "$_i" -le 600 ] || t_fail "no LIST at the bucket in 30 s: \
$(cat "$HOLD_LOG")"
	sleep 0.05
done

START=$(date +%s)
kill -TERM "$CTL_PID"
# Bounded: a serve stuck on the unanswered LIST is killed after 20 s.
_i=0
while kill -0 "$CTL_PID" 2>/dev/null; do
	_i=$((_i + 1))
	if [ "$_i" -gt 400 ]; then
		kill -9 "$CTL_PID"
		t_fail "serve did not exit within 20 s of SIGTERM"
	fi
	sleep 0.05
done
wait "$CTL_PID"
rc=$?
CTL_PID=""
ELAPSED=$(($(date +%s) - START))
grep -q LeakSanitizer "$CTL_LOG" &&
	t_fail "leaks at exit: $(grep -A12 LeakSanitizer "$CTL_LOG")"
t_eq "$rc" 0 "serve's exit status after SIGTERM mid-sweep"
[ "$ELAPSED" -le 6 ] || t_fail "serve took $ELAPSED s to exit"
exit 0

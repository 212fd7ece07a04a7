#!/bin/bash
# SPDX-License-Identifier: MIT
# One control connection cannot exhaust guestd: a client pipelines
# thousands of file.read requests and never reads a reply.  guestd stops
# reading that connection once its replies back up, so its fds and memory
# stay bounded (under a 1024-fd limit) and a second connection's calls
# keep working; when the client finally reads, every request gets its
# reply and its bytes.  Requests that stay open without a body
# (file.write) are capped per connection: the excess is answered BUSY.
. "$top_srcdir/tests/lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "# no python3"; exit 77; }
# The fd limit an image commonly runs under (lowering it needs no right).
ulimit -n 1024 || t_fail "ulimit"
# Under AddressSanitizer freed memory stays resident in its quarantine
# (256 MiB by default), which is not guestd's: keep it small here.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"
t_start_guestd

head -c 3000000 /dev/urandom > "$WS/big.bin"
head -c 1000 /dev/urandom > "$WS/small.bin"
chmod 644 "$WS/big.bin" "$WS/small.bin"

PYTHONPATH="$top_srcdir/tests/hostile" python3 - "$PORT" "$SECRET" \
    "$GUESTD_PID" <<'EOF' || t_fail "flood"
import sys, threading, time
import wsctl

port, secret, pid = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
N = 5000
fd0, rss0 = wsctl.proc_fds(pid), wsctl.proc_rss_kb(pid)

a = wsctl.connect(port, secret)
# One read that fills the reply queue, then thousands more behind it.
reqs = [a.frame(1, ('{"id":%d,"op":"file.read","args":{"path":"%s"}}' %
        (i, "big.bin" if i == 2 else "small.bin")).encode())
        for i in range(2, N + 2)]
blob = b"".join(reqs)
print("# %d requests, %d bytes" % (N, len(blob)))
sent = threading.Event()
def send():
    a.send_raw(blob)
    sent.set()
threading.Thread(target=send, daemon=True).start()

# guestd either reads everything (the unread bytes in its socket fall to 0)
# or stops reading (they stay put): wait until one of the two is settled.
lport = a.s.getsockname()[1]
last, same = None, 0
end = time.monotonic() + 60
while time.monotonic() < end:
    q = wsctl.tcp_rx_queue(port, lport)
    if sent.is_set() and q == 0:
        break
    same = same + 1 if q == last and q else 0
    last = q
    if same >= 40:
        break
    time.sleep(0.05)
fds, rss = wsctl.proc_fds(pid), wsctl.proc_rss_kb(pid)
print("# unread %s; fds %d -> %d; rss %d -> %d KiB" %
      (last, fd0, fds, rss0, rss))
assert fds <= fd0 + 16, "fds grew to %d (from %d)" % (fds, fd0)
assert rss <= rss0 + 40 * 1024, "rss grew to %d KiB (from %d)" % (rss, rss0)

# A second controller is served meanwhile.
b = wsctl.connect(port, secret)
data = []
r = b.call(7, "file.read", {"path": "small.bin"}, data)
assert r.get("ok") and len(b"".join(data)) == 1000, r
b.close()

# Now the first client reads: every request gets its reply and its bytes.
got, order = {}, []
while len(order) < N:
    m = a.recv()
    if m[0] == "bin":
        got[m[1]] = got.get(m[1], 0) + len(m[4])
        continue
    o = m[1]
    if "event" in o:
        continue
    assert o.get("ok"), o
    order.append(o["id"])
    want = 3000000 if o["id"] == 2 else 1000
    assert got.get(o["id"], 0) == want, (o, got.get(o["id"]))
assert sorted(order) == list(range(2, N + 2)), "replies missing"
assert order == sorted(order), "replies out of order"
print("# all %d replies arrived in order" % N)

# Requests that stay open (an upload whose body never comes) are capped
# per connection; the excess is refused BUSY and costs nothing.
fd1 = wsctl.proc_fds(pid)
c = wsctl.connect(port, secret)
M = 400
c.send_raw(b"".join(c.frame(1, ('{"id":%d,"op":"file.write","args":'
    '{"path":"up%d"}}' % (i, i)).encode()) for i in range(2, M + 2)))
busy = 0
c.s.settimeout(2)
try:
    while True:
        m = c.recv()
        if m[0] == "text" and not m[1].get("ok"):
            assert m[1]["error"]["code"] == "BUSY", m
            busy += 1
except Exception:
    pass
fds = wsctl.proc_fds(pid)
print("# %d uploads without body: %d BUSY, fds %d -> %d" %
      (M, busy, fd1, fds))
assert busy >= M - 128, "only %d BUSY" % busy
assert fds <= fd1 + 2 * 128 + 8, "fds %d" % fds
b = wsctl.connect(port, secret)
r = b.call(9, "file.stat", {"path": "small.bin"})
assert r.get("ok"), r
c.close()
EOF

# The open uploads left no temp files behind when their client went.
i=0
while [ -n "$(find "$WS" -name '*.rakazo-tmp-*' | head -1)" ]; do
	i=$((i + 1))
	[ "$i" -le 200 ] || t_fail "temp files of aborted uploads left"
	sleep 0.05
done
kill -0 "$GUESTD_PID" || t_fail "guestd died"

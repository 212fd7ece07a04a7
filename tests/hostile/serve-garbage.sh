#!/bin/bash
# SPDX-License-Identifier: MIT
# Garbage before authentication: raw TCP peers that close early or send
# what is not a complete, well-formed HTTP request (an empty connection, a
# header cut short, a header never finished, escapes that decode to NUL or
# do not decode, a header line without a colon, binary junk, a 200 KB
# header, 10 000 headers, a 100 KB URI, an unknown method, "OPTIONS *"
# without Host, the HTTP/2 preface, bad Content-Lengths).  After each,
# rakazoctl serve is alive and answers an authenticated request
# correctly; each bad request got a 4xx or a clean close within a bound,
# never a hang.  Then a burst of them at once.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

# Headers must be complete 2 s after their first byte (10 s by default).
ctl_start --provider fake --header-timeout-ms 2000
api POST /v1/computers '{"id":"g1"}' >/dev/null

# One interpreter for every case: python's start-up is the slow part.
cat > "$T/garbage.py" <<'PY'
import os, random, socket, sys, threading, time

port, tok, pid = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
# What lws cannot decide early (a header never finished, a line without a
# colon) ends at the header timeout: 2 s; a hang is nothing within 8 s.
BOUND = 8.0
auth = "Authorization: Bearer %s\r\n" % tok
rnd = random.Random(12)
cases = [
    ("empty", b""),
    ("partial-close", b"GET /v1/computers HTTP/1.1\r\nHost: x\r\nAcc"),
    ("header-timeout", b"GET /v1/computers HTTP/1.1\r\nHost: x\r\n"),
    ("nul-arg", b"GET /v1/computers?a=%00 HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("nul-arg-auth", ("GET /v1/computers/g1/files?bot=a&path=%00 HTTP/1.1"
        "\r\nHost: x\r\n" + auth + "\r\n").encode()),
    ("bad-escape", b"GET /v1/computers?a=%zz HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("bad-escape-auth", ("GET /v1/computers/g1/files?bot=a&path=%zz "
        "HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n").encode()),
    ("no-colon", b"GET /v1/computers HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n"),
    ("no-colon-auth", ("GET /v1/computers HTTP/1.1\r\nHost: x\r\n" + auth +
        "NoColon\r\n\r\n").encode()),
    ("binary", bytes(rnd.getrandbits(8) for _ in range(8192))),
    ("big-header", b"GET /v1/computers HTTP/1.1\r\nHost: x\r\nX-Big: " +
        b"a" * (200 * 1024) + b"\r\n\r\n"),
    ("many-headers", b"GET /v1/computers HTTP/1.1\r\nHost: x\r\n" +
        b"".join(b"X-H%d: v\r\n" % i for i in range(10000)) + b"\r\n"),
    ("long-uri", b"GET /v1/" + b"a" * (100 * 1024) +
        b" HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("foo-method", b"FOO / HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("foo-method-auth", ("FOO /v1/computers HTTP/1.1\r\nHost: x\r\n" + auth +
        "\r\n").encode()),
    ("options-star", b"OPTIONS * HTTP/1.1\r\n\r\n"),
    ("h2-preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" +
        b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"),
    ("bad-length", ("POST /v1/computers HTTP/1.1\r\nHost: x\r\n" + auth +
        "Content-Length: 12abc\r\n\r\n{}").encode()),
    ("negative-length", ("POST /v1/computers HTTP/1.1\r\nHost: x\r\n" +
        auth + "Content-Length: -1\r\n\r\n").encode()),
    ("huge-length", ("POST /v1/computers HTTP/1.1\r\nHost: x\r\n" + auth +
        "Content-Length: 99999999999999999999999\r\n\r\n").encode()),
]

def probe(name, payload):
    """'status NNN', 'closed' (EOF or reset, no reply) or 'hang'."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(BOUND)
    start, data = time.monotonic(), b""
    try:
        if payload:
            s.sendall(payload)
        if name in ("empty", "partial-close"):
            s.close()
            return "closed"
        while b"\r\n" not in data:
            d = s.recv(65536)
            if not d:
                break
            data += d
    except socket.timeout:
        return "hang"
    except (ConnectionResetError, BrokenPipeError):
        pass
    finally:
        s.close()
    if data.startswith(b"HTTP/1."):
        return "status " + data.split(b" ")[1].decode()
    return "hang" if time.monotonic() - start >= BOUND else "closed"

def alive(after):
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit("FAIL: serve died after %s" % after)
    data = b""
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(("GET /v1/computers/g1 HTTP/1.1\r\nHost: x\r\n" +
            auth + "Connection: close\r\n\r\n").encode())
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
        s.close()
    except OSError as e:
        sys.exit("FAIL: after %s an authenticated request failed: %s" %
            (after, e))
    if not data.startswith(b"HTTP/1.1 200") or b'"id":"g1"' not in data:
        sys.exit("FAIL: after %s an authenticated request got %r" %
            (after, data[:200]))

for name, payload in cases:
    r = probe(name, payload)
    print("# %s: %s" % (name, r))
    if r != "closed" and not r.startswith("status 4"):
        sys.exit("FAIL: %s: got %s, want a 4xx or a close within %gs" %
            (name, r, BOUND))
    alive(name)

# A burst of early closes and junk at once.
res = []
def one(name, payload):
    res.append(probe(name, payload))
threads = [threading.Thread(target=one, args=c) for c in cases * 3]
for t in threads:
    t.start()
for t in threads:
    t.join()
bad = [r for r in res if r != "closed" and not r.startswith("status 4")]
if bad:
    sys.exit("FAIL: in the burst: %s" % bad)
alive("the burst")
PY

python3 "$T/garbage.py" "$CTL_PORT" "$(cat "$CTL_TOKEN")" "$CTL_PID" ||
    t_fail "serve did not hold against garbage"
t_eq "$(ctl health | head -1)" "state: ok" "health after the garbage"

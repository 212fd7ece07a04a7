#!/bin/bash
# SPDX-License-Identifier: MIT
# Request smuggling and upgrades at rakazoctl serve (RFC 9112 6.3).  A
# request with both Content-Length and Transfer-Encoding is answered 400
# and the connection closes, so a second request hidden in its body never
# runs; Transfer-Encoding alone is answered 411 (chunked bodies are not
# read) and closes likewise; an h2c Upgrade is refused, never answered
# 101, with the token or without.  After each, a plain request is served.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

ctl_start --provider fake
api POST /v1/computers '{"id":"g1"}' >/dev/null

cat > "$T/smuggle.py" <<'PY'
import re, socket, sys, time

port, tok = int(sys.argv[1]), sys.argv[2]
auth = "Authorization: Bearer %s\r\n" % tok
# What a proxy that frames by Transfer-Encoding passes on as one request,
# and a server that frames by Content-Length would read as two: the
# second is a DELETE of the computer.
hidden = ("DELETE /v1/computers/g1 HTTP/1.1\r\nHost: x\r\n" + auth +
    "\r\n")
chunked = "0\r\n\r\n" + hidden
cases = [
    ("both", "POST /v1/computers HTTP/1.1\r\nHost: x\r\n" + auth +
        "Content-Type: application/json\r\nContent-Length: 5\r\n"
        "Transfer-Encoding: chunked\r\n\r\n" + chunked, 400),
    ("both-noauth", "POST /v1/computers HTTP/1.1\r\nHost: x\r\n"
        "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked,
        400),
    ("te-first", "POST /v1/computers HTTP/1.1\r\nHost: x\r\n" + auth +
        "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n" + chunked,
        400),
    ("te-only", "POST /v1/computers HTTP/1.1\r\nHost: x\r\n" + auth +
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
        "\r\n2\r\n{}\r\n" + chunked, 411),
    ("te-only-get", "GET /v1/computers HTTP/1.1\r\nHost: x\r\n" + auth +
        "Transfer-Encoding: chunked\r\n\r\n" + chunked, 411),
    ("te-identity", "POST /v1/computers HTTP/1.1\r\nHost: x\r\n" + auth +
        "Transfer-Encoding: identity\r\n\r\n" + hidden, 411),
    ("h2c", "GET /v1/computers HTTP/1.1\r\nHost: x\r\n"
        "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
        "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n", 400),
    ("h2c-auth", "GET /v1/computers HTTP/1.1\r\nHost: x\r\n" + auth +
        "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
        "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n", 400),
]

def exchange(payload):
    """Every byte the server sends until it closes (or 8 s pass)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=8)
    s.sendall(payload.encode())
    data, t0 = b"", time.monotonic()
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return data, True
            data += d
    except socket.timeout:
        return data, False
    except OSError:
        return data, True
    finally:
        s.close()

def get_g1():
    data, _ = exchange("GET /v1/computers/g1 HTTP/1.1\r\nHost: x\r\n" +
        auth + "Connection: close\r\n\r\n")
    return data.startswith(b"HTTP/1.1 200")

for name, payload, want in cases:
    data, closed = exchange(payload)
    answers = re.findall(rb"(?:^|\r\n)HTTP/1\.[01] (\d{3})", data)
    print("# %s: %s, %s" % (name, [int(a) for a in answers],
        "closed" if closed else "left open"))
    if b"101" in answers:
        sys.exit("FAIL: %s was answered 101" % name)
    if len(answers) != 1 or int(answers[0]) != want:
        sys.exit("FAIL: %s: answers %s, want one %d" % (name, answers,
            want))
    if not closed:
        sys.exit("FAIL: %s: the connection stayed open" % name)
    if not get_g1():
        sys.exit("FAIL: after %s the computer is gone or serve does not "
            "answer" % name)
PY
python3 "$T/smuggle.py" "$CTL_PORT" "$(cat "$CTL_TOKEN")" ||
    t_fail "a smuggled or upgraded request got through"
kill -0 "$CTL_PID" || t_fail "serve died"

#!/bin/bash
# SPDX-License-Identifier: MIT
# guestd's two HTTP servers, the screen gateway and the compat desktop
# server, against the holes rakazoctl serve had (serve-smuggle.sh,
# serve-flood.sh): a request with both Content-Length and
# Transfer-Encoding is answered 400 and the connection closes,
# Transfer-Encoding alone 411 and closes, an h2c Upgrade is never
# answered 101; a flood of half-sent connections from one address is
# shed oldest first (64 stay at the gateway, 32 at the compat server) and
# a page load or an authenticated request is answered meanwhile.  And a
# page load asks for /favicon.ico: the gateway answers it with an icon,
# not 404.  An authenticated request with an empty body is answered
# BAD_JSON.
. "${top_srcdir:-.}/tests/lib.sh"
command -v curl >/dev/null 2>&1 || { echo "# no curl"; exit 77; }

t_secret
mkfifo "$T/ready"
user_args=""
[ "$(id -u)" -eq 0 ] && user_args="--user $T_USER"
# shellcheck disable=SC2086
"$GUESTD" --listen 127.0.0.1:0 --secret-file "$SECRET" --workspace "$WS" \
    --ready-file "$T/ready" --log-level debug --compat 127.0.0.1:0 \
    --gateway 127.0.0.1:0 $user_args >"$GUESTD_LOG" 2>&1 &
GUESTD_PID=$!
exec 4<>"$T/ready"
read -t 30 -r PORT <&4 || PORT=""
read -t 5 -r cline <&4 || cline=""
exec 4<&-
[ -n "$PORT" ] || t_fail "guestd did not start"
CPORT=${cline#compat=}
[ -n "$CPORT" ] && [ "$CPORT" != "$cline" ] || t_fail "no compat port: '$cline'"
GPORT=$(sed -n 's/.*event=gateway.listening .*port=\([0-9]*\).*/\1/p' \
    "$GUESTD_LOG" | head -n 1)
[ -n "$GPORT" ] || t_fail "the gateway did not listen"

# The favicon a page load asks for: a real icon, not a 404.
h=$(curl -sS -D - -o "$T/icon" "http://127.0.0.1:$GPORT/favicon.ico") ||
    t_fail "favicon.ico"
t_contains "$(printf '%s' "$h" | head -n 1)" " 200" "favicon.ico status"
t_contains "$(printf '%s' "$h" | tr 'A-Z' 'a-z')" \
    "content-type: image/x-icon" "favicon.ico type"
t_eq "$(head -c 4 "$T/icon" | od -An -tx1 | tr -d ' ')" 00000100 \
    "favicon.ico is an ICO"
t_eq "$(curl -sS -o /dev/null -w '%{http_code}' \
    "http://127.0.0.1:$GPORT/embed.html?token=x")" 200 "embed.html"

cat > "$T/http.py" <<'PY'
# http.py PORT TOKEN PATH: smuggling and h2c cases against one server.
import re, socket, sys, time

port, tok, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
auth = "Authorization: Bearer %s\r\n" % tok
hidden = "GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n" % (path, auth)
chunked = "0\r\n\r\n" + hidden
head = "POST %s HTTP/1.1\r\nHost: x\r\n" % path
cases = [
    ("both", head + auth + "Content-Length: 5\r\n"
        "Transfer-Encoding: chunked\r\n\r\n" + chunked, 400),
    ("both-noauth", head + "Content-Length: 5\r\n"
        "Transfer-Encoding: chunked\r\n\r\n" + chunked, 400),
    ("te-only", head + auth + "Transfer-Encoding: chunked\r\n\r\n"
        "2\r\n{}\r\n" + chunked, 411),
    ("te-only-get", "GET %s HTTP/1.1\r\nHost: x\r\n" % path + auth +
        "Transfer-Encoding: chunked\r\n\r\n" + chunked, 411),
    ("h2c", "GET %s HTTP/1.1\r\nHost: x\r\n" % path + auth +
        "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
        "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n", None),
]

def exchange(payload):
    s = socket.create_connection(("127.0.0.1", port), timeout=8)
    s.sendall(payload.encode())
    data = b""
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

for name, payload, want in cases:
    data, closed = exchange(payload)
    answers = [int(a) for a in
        re.findall(rb"(?:^|\r\n)HTTP/1\.[01] (\d{3})", data)]
    print("# %s %s: %s, %s" % (path, name, answers,
        "closed" if closed else "left open"))
    if 101 in answers:
        sys.exit("FAIL: %s was answered 101" % name)
    # An upgrade refused: closed, or one 4xx.
    if want is None and (len(answers) > 1 or
        (answers and not 400 <= answers[0] < 500)):
        sys.exit("FAIL: %s: answers %s" % (name, answers))
    if want is not None and answers != [want]:
        sys.exit("FAIL: %s: answers %s, want one %d" % (name, answers,
            want))
    if not closed:
        sys.exit("FAIL: %s: the connection stayed open" % name)
PY
python3 "$T/http.py" "$GPORT" x /embed.html ||
    t_fail "the gateway let a smuggled or upgraded request through"
python3 "$T/http.py" "$CPORT" "$(cat "$SECRET")" /v1/desktop ||
    t_fail "the compat server let a smuggled or upgraded request through"
# An authenticated request with an empty body (Content-Length: 0): lws
# still reports that body, as no bytes at no address, after the request
# ran; it is answered BAD_JSON and guestd lives on (a UBSan tree once
# halted there).
b=$(curl -sS -w '\n%{http_code}' -X POST -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $(cat "$SECRET")" --data-binary '' \
    "http://127.0.0.1:$CPORT/v1/desktop") || t_fail "empty body: no answer"
t_eq "$(printf '%s' "$b" | tail -n 1)" 400 "empty body status"
t_contains "$b" '"BAD_JSON"' "empty body code"

cat > "$T/flood.py" <<'PY'
# flood.py PORT N KEEP REQUEST: N half-sent connections; the oldest
# N - KEEP must be closed, the rest stay; then REQUEST (a file of raw
# bytes) on a new connection is answered while they are held.
import select, socket, sys, time

port, n, keep, req = (int(sys.argv[1]), int(sys.argv[2]),
    int(sys.argv[3]), open(sys.argv[4], "rb").read())

def closed(s):
    try:
        return s.recv(4096) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True

order = []
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.setblocking(False)
    s.send(b"GET /embed.html HTTP/1.1\r\nHost: x\r\nX-Wait: ")
    order.append(s)
idx = {s: i for i, s in enumerate(order)}
open_, gone = set(order), []
t0 = time.monotonic()
while len(gone) < n - keep and time.monotonic() - t0 < 30:
    r, _, _ = select.select(list(open_), [], [], 1.0)
    for s in r:
        if closed(s):
            open_.discard(s)
            gone.append(idx[s])
end = time.monotonic() + 1.0
while time.monotonic() < end:
    r, _, _ = select.select(list(open_), [], [], 0.2)
    for s in r:
        if closed(s):
            open_.discard(s)
            gone.append(idx[s])
if sorted(gone) != list(range(n - keep)):
    sys.exit("FAIL: %d of %d closed, want the oldest %d" % (len(gone), n,
        n - keep))
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(req)
data = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    data += d
if not data.startswith(b"HTTP/1.1 "):
    sys.exit("FAIL: during the flood a request got %r" % data[:80])
print("# %d half-sent connections: the oldest %d shed, %d held; a request "
    "meanwhile: %s" % (n, len(gone), len(open_), data[9:12].decode()))
PY
printf 'GET /favicon.ico HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' \
    > "$T/page.req"
python3 "$T/flood.py" "$GPORT" 200 64 "$T/page.req" > "$T/gw.out" 2>&1
rc=$?
cat "$T/gw.out"
[ "$rc" -eq 0 ] || t_fail "the gateway was not kept from a flood"
grep -q "meanwhile: 200" "$T/gw.out" || t_fail "no page during the flood"
# An authenticated request: answered past the token (400, no body).
printf 'POST /v1/desktop HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 0\r\nConnection: close\r\n\r\n' \
    "$(cat "$SECRET")" > "$T/desk.req"
python3 "$T/flood.py" "$CPORT" 70 32 "$T/desk.req" > "$T/desk.out" 2>&1
rc=$?
cat "$T/desk.out"
[ "$rc" -eq 0 ] || t_fail "the compat server was not kept from a flood"
grep -q "meanwhile: 400" "$T/desk.out" ||
    t_fail "no authenticated answer during the flood"
kill -0 "$GUESTD_PID" || t_fail "guestd died"

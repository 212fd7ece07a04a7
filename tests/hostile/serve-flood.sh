#!/bin/bash
# SPDX-License-Identifier: MIT
# A flood of connections without a token does not lock out authenticated
# clients (rakazoctl(1), "Limits").  Connections that never finish their
# headers (half-sent, no token) are shed, oldest first, when a newcomer
# needs their place: one peer address holds at most 128 connections,
# and connections without a token at most 512 - 64 (the 64 are kept for
# requests that show it).
#
#  1. from a remote peer (its own network namespace): 300 half-sent
#     connections; 128 stay open, and the 172 closed are exactly the
#     oldest.  Then the peer reopens every one it loses, as fast as it
#     can, while 47 authenticated requests from another address are each
#     answered 200 within a bound;
#  2. from five remote addresses, 120 each (under the per-peer cap):
#     448 stay open, the 152 closed are the oldest of all;
#  3. from loopback, the address the authenticated client uses too: 600
#     half-sent connections, then 47 authenticated requests, each
#     answered (each sheds one of the flood's oldest); then loopback
#     reopens every connection it loses, as fast as it can, and 47 more
#     are answered: a connection whose request had arrived when it was
#     accepted is not shed by the burst it was accepted in.
#
# Without network namespaces (not root, no ip) only 3 runs.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
. "${top_srcdir:-.}/tests/lib-netns.sh"

# 512 connections need serve's descriptor limit at 1280 or more
# (it keeps most for guestd connections and the store).
[ "$(ulimit -n)" -ge 4096 ] || ulimit -n 4096 2>/dev/null ||
    ulimit -n "$(ulimit -Hn)" 2>/dev/null
[ "$(ulimit -n)" -ge 1400 ] || {
	echo "# skipped: a descriptor limit of $(ulimit -n)"
	exit 77
}
netns_up 5
case $? in
0)	trap 'rc_=$?; netns_down; (exit $rc_); ctl_cleanup' EXIT
	set -- $NETNS_PEERS
	PEER1=$1 ;;
77)	t_note "no network namespaces here (needs root and ip): loopback only" ;;
*)	t_fail "the network namespace was not made" ;;
esac

# The header timeout far away: only shedding may close the flood here.
if [ -n "$NETNS_NAME" ]; then
	ctl_start --listen "$NETNS_HOST:0" --header-timeout-ms 120000
	CTL_URL="http://$NETNS_HOST:$CTL_PORT"
else
	ctl_start --header-timeout-ms 120000
fi
api POST /v1/computers '{"id":"g1"}' >/dev/null
t_eq "$(cat "$T/api.code")" 201 "the computer"

cat > "$T/flood.py" <<'PY'
# flood.py burst HOST PORT SRC[,SRC...] N KEEP: N half-sent connections,
#   round robin over the sources; waits until N - KEEP were closed by the
#   server and checks they are the oldest N - KEEP.
# flood.py hold HOST PORT SRC N STOPFILE: N connections, each reopened as
#   soon as the server closes it, until STOPFILE exists; says "# flooding"
#   once the server shed the first.
import os, select, socket, sys, time

mode, host, port, srcs, n = (sys.argv[1], sys.argv[2], int(sys.argv[3]),
    sys.argv[4].split(","), int(sys.argv[5]))
HALF = b"GET /v1/computers HTTP/1.1\r\nHost: x\r\nX-Wait: "

def fail(msg):
    sys.exit("FAIL: " + msg)

def conn(i):
    s = socket.socket()
    s.bind((srcs[i % len(srcs)], 0))
    s.connect((host, port))
    s.setblocking(False)
    s.send(HALF)
    return s

def closed(s):
    """Did the server close s (EOF or reset)?"""
    try:
        return s.recv(4096) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True

if mode == "burst":
    keep = int(sys.argv[6])
    order = [conn(i) for i in range(n)]
    idx = {s: i for i, s in enumerate(order)}
    open_, gone = set(order), []
    t0 = time.monotonic()
    while len(gone) < n - keep and time.monotonic() - t0 < 30:
        r, _, _ = select.select(list(open_), [], [], 1.0)
        for s in r:
            if closed(s):
                open_.discard(s)
                gone.append(idx[s])
    # Anything more the server would close comes within this.
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        r, _, _ = select.select(list(open_), [], [], 0.2)
        for s in r:
            if closed(s):
                open_.discard(s)
                gone.append(idx[s])
    if len(gone) != n - keep:
        fail("%d of %d connections closed, want %d" % (len(gone), n,
            n - keep))
    if sorted(gone) != list(range(n - keep)):
        fail("the closed connections were not the oldest: %s" %
            sorted(gone)[-10:])
    print("# %d half-sent connections from %d address(es): the oldest %d "
        "shed within %.1fs, %d open" % (n, len(srcs), len(gone),
        time.monotonic() - t0, len(open_)))
    sys.stdout.flush()
    # Held until told: the caller checks the server meanwhile.
    sys.stdin.read()
else:
    stop = sys.argv[6]
    live = [conn(i) for i in range(n)]
    shed = 0
    while not os.path.exists(stop):
        r, _, _ = select.select(live, [], [], 0.2)
        for s in r:
            if closed(s):
                s.close()
                if shed == 0:
                    print("# flooding")
                    sys.stdout.flush()
                shed += 1
                live[live.index(s)] = conn(0)
    print("# the flood lost %d connections to shedding and reopened "
        "each" % shed)
    if shed == 0:
        fail("the flood never lost a connection")
PY

cat > "$T/auth.py" <<'PY'
# auth.py HOST PORT TOKEN N BOUND: N authenticated requests, each answered
# 200 within BOUND seconds.
import socket, sys, time

host, port, tok, n, bound = (sys.argv[1], int(sys.argv[2]), sys.argv[3],
    int(sys.argv[4]), float(sys.argv[5]))
worst = 0.0
for i in range(n):
    t0 = time.monotonic()
    data = b""
    try:
        s = socket.create_connection((host, port), timeout=bound)
        s.sendall(("GET /v1/computers/g1 HTTP/1.1\r\nHost: x\r\n"
            "Authorization: Bearer %s\r\nConnection: close\r\n\r\n" %
            tok).encode())
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
        s.close()
    except OSError as e:
        sys.exit("FAIL: request %d of %d: %s" % (i + 1, n, e))
    el = time.monotonic() - t0
    if not data.startswith(b"HTTP/1.1 200") or b'"id":"g1"' not in data:
        sys.exit("FAIL: request %d of %d got %r" % (i + 1, n, data[:80]))
    if el > bound:
        sys.exit("FAIL: request %d of %d took %.1fs" % (i + 1, n, el))
    worst = max(worst, el)
print("# %d authenticated requests during the flood: all 200, the slowest "
    "in %.2fs" % (n, worst))
PY
TOK=$(cat "$CTL_TOKEN")

# burst NAME [netns_exec] flood.py burst ARGS...: start a burst in the
# background, holding its connections until burst_end; wait (bounded) for
# its one-line report and fail unless the shedding was oldest first.
burst() {
	_name=$1
	shift
	mkfifo "$T/$_name.hold" "$T/$_name.out"
	"$@" < "$T/$_name.hold" > "$T/$_name.out" 2>&1 &
	BURST=$!
	T_KILL="$T_KILL $BURST"
	exec 6>"$T/$_name.hold" 7<"$T/$_name.out"
	read -r -t 60 line <&7 || line="FAIL: no report within 60 s"
	echo "$line"
	case $line in
	"# "*"shed within"*) ;;
	*) t_fail "$_name: the flood was not shed oldest first" ;;
	esac
}

burst_end() {
	exec 6>&- 7<&-
	wait "$BURST"
}

# hold NAME HOST PORT [netns_exec] flood.py hold ARGS...: a flood that
# reopens every connection it loses, and 47 authenticated requests to
# HOST:PORT meanwhile, each answered within 5 s.
hold() {
	_name=$1 _host=$2 _port=$3
	shift 3
	rm -f "$T/$_name.stop"
	mkfifo "$T/$_name.out"
	"$@" "$T/$_name.stop" > "$T/$_name.out" 2>&1 &
	HOLD=$!
	T_KILL="$T_KILL $HOLD"
	exec 7<"$T/$_name.out"
	read -r -t 60 line <&7 || line="FAIL: no flood within 60 s"
	echo "$line"
	[ "$line" = "# flooding" ] ||
	    t_fail "$_name: the flood did not start"
	python3 "$T/auth.py" "$_host" "$_port" "$TOK" 47 5
	rc=$?
	touch "$T/$_name.stop"
	cat <&7
	exec 7<&-
	wait "$HOLD"
	hrc=$?
	[ "$rc" -eq 0 ] ||
	    t_fail "$_name: during the flood a request was not answered"
	[ "$hrc" -eq 0 ] || t_fail "$_name: the flood did not run"
}

if [ -n "$NETNS_NAME" ]; then
	# 1. One remote address: the per-peer cap.
	burst remote1 netns_exec python3 "$T/flood.py" burst "$NETNS_HOST" \
	    "$CTL_PORT" "$PEER1" 300 128
	python3 "$T/auth.py" "$NETNS_HOST" "$CTL_PORT" "$TOK" 5 5 ||
	    t_fail "beside one peer's 128 connections: a request unanswered"
	burst_end

	# The same peer reopens every connection it loses, as fast as it can.
	hold remote1-hold "$NETNS_HOST" "$CTL_PORT" netns_exec python3 \
	    "$T/flood.py" hold "$NETNS_HOST" "$CTL_PORT" "$PEER1" 300
	kill -0 "$CTL_PID" || t_fail "serve died in the remote flood"

	# 2. Five remote addresses under the per-peer cap: the cap on
	# connections without a token.  A second serve, so nothing of the
	# first flood is still closing.
	ctl_serve g "$T/g.log" --listen "$NETNS_HOST:0" \
	    --header-timeout-ms 120000
	[ -n "$SERVE_PORT" ] || t_fail "the second serve did not start"
	T_KILL="$T_KILL $SERVE_PID"
	burst remote5 netns_exec python3 "$T/flood.py" burst "$NETNS_HOST" \
	    "$SERVE_PORT" "$(echo $NETNS_PEERS | tr ' ' ,)" 600 448
	python3 "$T/auth.py" "$NETNS_HOST" "$SERVE_PORT" "$TOK" 47 5 ||
	    t_fail "beside 448 connections without a token: a request unanswered"
	burst_end
	kill "$SERVE_PID"
fi

# 3. Loopback, the authenticated client's own address (the issue's case:
# 600 half-sent connections held, then requests; each sheds one).
ctl_serve l "$T/l.log" --header-timeout-ms 120000
[ -n "$SERVE_PORT" ] || t_fail "the third serve did not start"
T_KILL="$T_KILL $SERVE_PID"
burst loopback python3 "$T/flood.py" burst 127.0.0.1 "$SERVE_PORT" \
    127.0.0.1 600 128
python3 "$T/auth.py" 127.0.0.1 "$SERVE_PORT" "$TOK" 47 5 ||
    t_fail "during a loopback flood a request was not answered"
burst_end
hold loopback-hold 127.0.0.1 "$SERVE_PORT" python3 "$T/flood.py" hold \
    127.0.0.1 "$SERVE_PORT" 127.0.0.1 300
kill -0 "$SERVE_PID" || t_fail "serve died in the loopback flood"
kill -0 "$CTL_PID" || t_fail "serve died"

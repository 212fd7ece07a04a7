#!/bin/bash
# SPDX-License-Identifier: MIT
# PostgreSQL restarted under load (C-2): two `rakazoctl serve` processes
# on one database, a driver per process acquiring and releasing one bot's
# lease as fast as it can.  The server is killed (immediate stop: every
# connection dies at once) and started again.  While it is away requests
# fail with STATE_STORE_UNAVAILABLE (503) and nothing else; once it is
# back both processes grant again without being restarted; and no lease
# was ever granted twice: every fence handed out is distinct, and none
# exceeds the bot's fence in the database.
. "${top_srcdir:-.}/tests/lib.sh"
RAKAZO_TEST_STORE=postgres
. "${top_srcdir:-.}/tests/lib-controller.sh"

ctl_start
A=$CTL_URL
ctl_serve second "$T/serve-b.log"
[ -n "$SERVE_PORT" ] || t_fail "the second controller did not start"
T_KILL="$T_KILL $SERVE_PID"
B="http://127.0.0.1:$SERVE_PORT"
r=$(api POST /v1/computers '{"id":"team"}')
t_contains "$r" "201 " "create the computer"

# The drivers: one thread per controller; each result is one line
# "PHASE URL-INDEX HTTP-CODE ERROR-CODE FENCE" in $T/load.out.  PHASE is
# the content of $T/phase when the request was sent.
# phase NAME: what the drivers tag their next requests with (renamed
# into place, so a driver never reads half a word).
phase() {
	echo "$1" > "$T/phase.new" && mv "$T/phase.new" "$T/phase"
}
phase before
python3 - "$A" "$B" "$(cat "$CTL_TOKEN")" "$T" <<'EOF' &
import json, os, sys, threading, urllib.request, urllib.error
urls, tok, tdir = sys.argv[1:3], sys.argv[3], sys.argv[4]
out = open(os.path.join(tdir, "load.out"), "a", buffering=1)
lock = threading.Lock()

def call(method, url, body=None):
    req = urllib.request.Request(url, method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + tok,
                 "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.load(e)
        except Exception:
            return e.code, {}
    except Exception as e:
        return 0, {"error": {"code": "CLIENT_" + type(e).__name__}}

def drive(i):
    n = 0
    while not os.path.exists(os.path.join(tdir, "stop")):
        phase = open(os.path.join(tdir, "phase")).read().strip()
        n += 1
        st, j = call("POST", urls[i] + "/v1/leases", {"computer": "team",
            "bot": "b", "holder": "h%d-%d" % (i, n), "ttl_ms": 1000})
        code = (j.get("error") or {}).get("code", "-")
        fence = j.get("fence", "-") if st == 201 else "-"
        with lock:
            out.write("%s %d %d %s %s\n" % (phase, i, st, code, fence))
        if st == 201:
            call("DELETE", urls[i] + "/v1/leases/" + j["id"])

ts = [threading.Thread(target=drive, args=(i,)) for i in (0, 1)]
for t in ts: t.start()
for t in ts: t.join()
EOF
LOAD_PID=$!
T_KILL="$T_KILL $LOAD_PID"

# count PATTERN: result lines matching an extended regex.
count() {
	_c=$(grep -cE -- "$1" "$T/load.out" 2>/dev/null)
	echo "${_c:-0}"
}
# until_count PATTERN N SECONDS: wait (bounded) for N such lines.
until_count() {
	_deadline=$((SECONDS + $3))
	while [ "$(count "$1")" -lt "$2" ]; do
		[ "$SECONDS" -lt "$_deadline" ] ||
		    t_fail "no $2 results like '$1' in $3 s"
		sleep 0.05
	done
}

until_count '^before 0 201 ' 10 20
until_count '^before 1 201 ' 10 20
pg_down || t_fail "the server did not stop"
phase down
until_count '^down 0 503 STATE_STORE_UNAVAILABLE' 5 20
until_count '^down 1 503 STATE_STORE_UNAVAILABLE' 5 20
r=$(api GET /internal/health)
t_contains "$r" "503 " "health while the database is away"
case "$r" in
*STATE_STORE_UNAVAILABLE*|*'"state":"failed"'*) ;;
*) t_fail "health while the database is away: $r" ;;
esac
# Requests sent while it starts again may go either way: tagged apart.
phase starting
pg_up || t_fail "the server did not start again"
phase after
until_count '^after 0 201 ' 10 30
until_count '^after 1 201 ' 10 30
touch "$T/stop"
wait "$LOAD_PID"

t_note "results: $(wc -l < "$T/load.out") requests," \
    "$(count ' 201 ') grants, $(count ' 503 ') unavailable"
# Only three answers: granted, held by another, store unavailable.  (A
# request in flight when the server died gets 503 too.)
bad=$(grep -vE ' 201 - [0-9]+$| 409 LEASE_HELD -$| 503 STATE_STORE_UNAVAILABLE -$' \
    "$T/load.out" | head -5)
[ -z "$bad" ] || t_fail "unexpected answers: $bad"
t_eq "$(count '^down [01] 201 ')" 0 "grants while the database was down"
dups=$(awk '$3 == 201 { print $5 }' "$T/load.out" | sort | uniq -d | head -3)
[ -z "$dups" ] || t_fail "fences granted twice: $dups"
maxf=$(awk '$3 == 201 && $5 > m { m = $5 } END { print m + 0 }' "$T/load.out")
dbf=$(pg_sql "SELECT fence FROM bots WHERE computer = 'team' AND bot = 'b'")
[ "$maxf" -le "$dbf" ] || t_fail "fence $maxf granted above the bot's $dbf"
r=$(CTL_URL=$B api GET /internal/health)
t_contains "$r" "200 " "B healthy again"
exit 0

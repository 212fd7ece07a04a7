#!/bin/bash
# SPDX-License-Identifier: MIT
# rakazoctl serve is one thread and one loop (C-1): a command that waits
# on one bot does not hold up another bot of the same computer, the process
# keeps a single thread while it waits, and two serve processes on one
# data directory start a computer once and wake each other's activity long
# polls.  Ordering comes from a FIFO in the workspace (bots/gate, beside
# each bot's own directory), not from timing.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

shell_json() { # BOT COMMAND
	python3 -c 'import json,sys
print(json.dumps({"computer":"team","bot":sys.argv[1],"command":sys.argv[2]}))' "$1" "$2"
}

post() { # URL PATH JSON OUT
	curl -s -o "$4" -w '%{http_code}' -X POST \
	    -H "Authorization: Bearer $(cat "$CTL_TOKEN")" \
	    -H 'Content-Type: application/json' --data-binary "$3" "$1$2"
}

ctl_start
r=$(api POST /v1/computers '{"id":"team","start":true}')
t_contains "$r" "201 " "computer started"
r=$(api POST /v1/tools/shell "$(shell_json b 'mkfifo ../gate')")
t_contains "$r" '"exit_code":0' "fifo made"

# Bot a blocks reading the FIFO; bot b is answered meanwhile.
post "$CTL_URL" /v1/tools/shell "$(shell_json a 'cat ../gate')" \
    "$T/a.out" > "$T/a.code" &
A=$!
# Wait until a's command runs: guestd lists it (a condition, bounded).
i=0
until pgrep -f '^cat ../gate$' >/dev/null; do
	i=$((i + 1))
	[ "$i" -le 400 ] || t_fail "bot a's command never started"
	sleep 0.05
done
r=$(api POST /v1/tools/shell "$(shell_json b 'echo hello from b')")
t_contains "$r" "hello from b" "bot b answered while bot a waits"
kill -0 "$A" 2>/dev/null || t_fail "bot a's call ended before its input"
t_eq "$(awk '/^Threads:/ {print $2}' "/proc/$CTL_PID/status")" 1 \
    "serve has one thread while a call waits"
r=$(api POST /v1/tools/shell "$(shell_json b 'echo released > ../gate')")
t_contains "$r" '"exit_code":0' "gate opened"
wait "$A"
t_eq "$(cat "$T/a.code")" 200 "bot a's call answered"
t_contains "$(cat "$T/a.out")" "released" "bot a read what b wrote"

# A second serve process on the same data directory.
ctl_serve ctl2 "$T/serve2.log"
T_KILL="$T_KILL $SERVE_PID"
[ -n "$SERVE_PORT" ] || t_fail "the second serve did not start"
URL2="http://127.0.0.1:$SERVE_PORT"

# A long poll on the first process wakes for an event the second records.
api GET /v1/computers/team/activity >/dev/null
NEXT=$(api_field next)
W0=$(grep -c "event=activity.wait" "$CTL_LOG")
curl -s --max-time 25 -o "$T/lp.out" \
    -H "Authorization: Bearer $(cat "$CTL_TOKEN")" \
    "$CTL_URL/v1/computers/team/activity?after=$NEXT&wait_ms=60000" &
LP=$!
ctl_wait_log "event=activity.wait" $((W0 + 1))
code=$(post "$URL2" /v1/tools/shell "$(shell_json c 'echo from process two')" "$T/p2.out")
t_eq "$code" 200 "the second process ran a tool"
wait "$LP" || t_fail "the long poll was not woken by the other process"
t_contains "$(cat "$T/lp.out")" "from process two" "cross-process event"

# Both processes get a first call for a stopped computer at once: one
# guestd starts, one run opens.
r=$(api POST /v1/computers/team/stop)
t_contains "$r" "200 " "computer stopped"
post "$CTL_URL" /v1/tools/shell "$(shell_json a 'echo one')" "$T/s1.out" \
    > "$T/s1.code" &
S1=$!
post "$URL2" /v1/tools/shell "$(shell_json b 'echo two')" "$T/s2.out" \
    > "$T/s2.code" &
S2=$!
wait "$S1"
wait "$S2"
t_eq "$(cat "$T/s1.code") $(cat "$T/s2.code")" "200 200" "both calls answered"
n=0
for d in /proc/[0-9]*; do
	if { tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null |
	    grep -q -- "--workspace $CTL_DATA/computers/team/home"; then
		n=$((n + 1))
	fi
done
t_eq "$n" 1 "exactly one guestd runs for the computer"
api GET /v1/computers/team/runs >/dev/null
open=$(python3 -c 'import json,sys
print(sum(1 for r in json.load(open(sys.argv[1]))["runs"] if not r.get("ended_ms")))' "$T/api.out")
t_eq "$open" 1 "exactly one open run"

# A flood: 64 requests in progress (long polls that wait for an event that
# never comes) fill serve; the next is refused at once with 503 BUSY in
# the API's error shape, memory stays flat, and when the clients leave
# their slots free at once (not at the end of their wait_ms).
W0=$(grep -c "event=activity.wait" "$CTL_LOG")
RSS0=$(awk '/^VmRSS:/ {print $2}' "/proc/$CTL_PID/status")
LPS=""
for i in $(seq 1 64); do
	curl -s -o /dev/null --max-time 120 \
	    -H "Authorization: Bearer $(cat "$CTL_TOKEN")" \
	    "$CTL_URL/v1/computers/team/activity?after=999999999&wait_ms=60000" &
	LPS="$LPS $!"
done
ctl_wait_log "event=activity.wait" $((W0 + 64)) 30
r=$(api GET /v1/computers)
t_contains "$r" "503 " "the 65th request is refused"
t_contains "$r" '"code":"BUSY"' "with the BUSY code"
RSS1=$(awk '/^VmRSS:/ {print $2}' "/proc/$CTL_PID/status")
[ $((RSS1 - RSS0)) -lt 32768 ] ||
    t_fail "64 waiting requests cost $((RSS1 - RSS0)) kB"
t_eq "$(awk '/^Threads:/ {print $2}' "/proc/$CTL_PID/status")" 1 \
    "still one thread with 64 requests waiting"
kill $LPS 2>/dev/null
wait $LPS 2>/dev/null
i=0
until [ "$(api GET /v1/computers | cut -c1-3)" = 200 ]; do
	i=$((i + 1))
	[ "$i" -le 100 ] || t_fail "slots not freed after the clients left"
	sleep 0.05
done
exit 0

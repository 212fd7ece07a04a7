#!/bin/bash
# SPDX-License-Identifier: MIT
# Activity long poll (G-30): GET .../activity?after=N&wait_ms=W with nothing
# newer waits, and a recorded event answers the waiting request at once
# (the server wakes from the insert; the test waits for the server's own
# "parked" log line before acting, so no timing guess is involved).
# `rakazoctl activity --follow` uses it and prints a new event at once.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

nevents() {
	python3 -c 'import json,sys
print(len(json.load(open(sys.argv[1]))["events"]))' "$1"
}

ctl_start
api POST /v1/computers '{"id":"team","start":true}' >/dev/null
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"b","command":"echo first"}')
t_contains "$r" "200 " "first event"
api GET /v1/computers/team/activity >/dev/null
NEXT=$(api_field next)

# Nothing new: the request waits its wait_ms, then answers empty.
t0=$(date +%s%3N)
r=$(api GET "/v1/computers/team/activity?after=$NEXT&wait_ms=800")
t1=$(date +%s%3N)
t_contains "$r" "200 " "empty long poll"
t_eq "$(nevents "$T/api.out")" 0 "no events"
[ $((t1 - t0)) -ge 750 ] || t_fail "the long poll did not wait ($((t1 - t0)) ms)"

# A parked request is answered by the next event, long before its wait.
W0=$(grep -c "event=activity.wait" "$CTL_LOG")
t0=$(date +%s%3N)
curl -s -o "$T/lp.out" -H "Authorization: Bearer $(cat "$CTL_TOKEN")" \
    "$CTL_URL/v1/computers/team/activity?after=$NEXT&wait_ms=30000" &
LP=$!
ctl_wait_log "event=activity.wait" $((W0 + 1))
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"b","command":"echo woke"}')
t_contains "$r" "200 " "second event"
wait "$LP" || t_fail "long poll failed"
t1=$(date +%s%3N)
t_eq "$(nevents "$T/lp.out")" 1 "the waiter got the event"
t_contains "$(cat "$T/lp.out")" "echo woke" "the new event"
[ $((t1 - t0)) -lt 15000 ] || t_fail "the waiter slept through ($((t1 - t0)) ms)"

# The CLI follows with the long poll.
W1=$(grep -c "event=activity.wait" "$CTL_LOG")
ctl activity --computer team --follow --json > "$T/follow.out" 2>&1 &
FP=$!
ctl_wait_log "event=activity.wait" $((W1 + 1))
t_eq "$(wc -l < "$T/follow.out")" 2 "history printed"
api POST /v1/tools/shell '{"computer":"team","bot":"b","command":"echo third"}' >/dev/null
i=0
until grep -q "echo third" "$T/follow.out"; do
	i=$((i + 1))
	[ "$i" -le 200 ] || { kill "$FP"; t_fail "follow did not print"; }
	sleep 0.05
done
kill "$FP"
wait "$FP" 2>/dev/null
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# The lease of a single tool call when PostgreSQL goes away as the call
# ends (C-2, C-3).  A shell call without a lease holds the bot's implicit
# execution lease while its command waits on a FIFO in the workspace; the
# server is stopped at once, the command let go, so the call's release
# fails; then the server comes back.  The lease must not stay held for
# its 10 minutes: once the store is back it is released (bounded wait on
# the database itself), the first request after the restart is answered
# (no 503 for a connection that died with the old server), the bot's next
# call is not LEASE_HELD, stop is not refused, and the fence only grew.
. "${top_srcdir:-.}/tests/lib.sh"
RAKAZO_TEST_STORE=postgres
. "${top_srcdir:-.}/tests/lib-controller.sh"

ctl_start
r=$(api POST /v1/computers '{"id":"team","start":true}')
t_contains "$r" "201 " "create the computer"
GATE="$CTL_DATA/computers/team/home/bots/b/gate"

# A few requests first, so the pool holds connections that the server's
# stop will kill while they sit idle.
for i in 1 2 3; do
	r=$(api POST /v1/tools/shell '{"computer":"team","bot":"b","command":"true"}')
	t_contains "$r" "200 " "a call before the fault ($i)"
done
fence0=$(pg_sql "SELECT fence FROM bots WHERE computer = 'team' AND bot = 'b'")

# Requests one after another use one pooled connection, idle now.  The
# server goes and comes back: the first request after the restart runs
# on that connection, which read the server's goodbye but not yet its
# hang-up, and must not fail with 503 for it.
pg_down || t_fail "the server did not stop (0)"
pg_up || t_fail "the server did not start again (0)"
r=$(api GET /v1/computers/team)
t_contains "$r" "200 " "the first request after a restart"

curl -s -o "$T/call.out" -w '%{http_code}' \
    -H "Authorization: Bearer $(cat "$CTL_TOKEN")" \
    --data-binary '{"computer":"team","bot":"b","command":"mkfifo gate && cat gate"}' \
    "$CTL_URL/v1/tools/shell" > "$T/call.code" &
CALL_PID=$!
T_KILL="$T_KILL $CALL_PID"
i=0
until [ -p "$GATE" ]; do
	i=$((i + 1))
	[ "$i" -le 400 ] || t_fail "the call's command did not start"
	sleep 0.05
done
t_eq "$(pg_sql "SELECT count(*) FROM leases WHERE holder LIKE 'call-%'")" 1 \
    "the call holds its lease"

pg_down || t_fail "the server did not stop"
echo go > "$GATE"
# The reply comes after the handler's release: that release met no server.
wait "$CALL_PID"
t_eq "$(cat "$T/call.code")" 200 "the call itself succeeded"
ctl_wait_log 'store.pg_unreachable' 1 10

pg_up || t_fail "the server did not start again"
# The first request after the restart.
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"b","command":"echo next"}')
t_contains "$r" "200 " "the bot's first call after the restart"
t_not_contains "$r" LEASE_HELD "the failed release does not hold the bot"
t_contains "$r" next "the call ran"
t_eq "$(pg_sql "SELECT count(*) FROM leases WHERE computer = 'team'")" 0 \
    "no lease left behind"
r=$(api POST /v1/computers/team/stop)
t_contains "$r" "200 " "stop is not refused"
fence1=$(pg_sql "SELECT fence FROM bots WHERE computer = 'team' AND bot = 'b'")
[ "$fence1" -gt "$fence0" ] || t_fail "the fence went from $fence0 to $fence1"

# Without any request: the server's retry releases a failed release as
# soon as the store is back.
r=$(api POST /v1/computers/team/start)
t_contains "$r" "200 " "start again"
rm -f "$GATE"
curl -s -o "$T/call2.out" -w '%{http_code}' \
    -H "Authorization: Bearer $(cat "$CTL_TOKEN")" \
    --data-binary '{"computer":"team","bot":"b","command":"mkfifo gate && cat gate"}' \
    "$CTL_URL/v1/tools/shell" > "$T/call2.code" &
CALL_PID=$!
T_KILL="$T_KILL $CALL_PID"
i=0
until [ -p "$GATE" ]; do
	i=$((i + 1))
	[ "$i" -le 400 ] || t_fail "the second call's command did not start"
	sleep 0.05
done
pg_down || t_fail "the server did not stop (2)"
echo go > "$GATE"
wait "$CALL_PID"
t_eq "$(cat "$T/call2.code")" 200 "the second call itself succeeded"
pg_up || t_fail "the server did not start again (2)"
i=0
until [ "$(pg_sql "SELECT count(*) FROM leases WHERE computer = 'team'")" = 0 ]
do
	i=$((i + 1))
	[ "$i" -le 200 ] || t_fail "the lease was not released within 10 s"
	sleep 0.05
done
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"b","command":"true"}')
t_contains "$r" "200 " "the bot's call after the retry"
exit 0

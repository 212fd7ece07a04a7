#!/bin/bash
# SPDX-License-Identifier: MIT
# Fenced leases through the real server, local provider, real guestd:
# two drivers race for one bot and exactly one wins while another bot
# works in parallel; a lease expires without heartbeat and the next grant
# has a higher fence; the old holder is refused by the controller and, at
# guestd itself, with STALE_FENCE (G-32); the 409 rules of take-control.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

ctl_start
api POST /v1/computers '{"id":"team","start":true}' >/dev/null
t_contains "$(ctl computer show team)" running "computer started"

# Two drivers at once for bot1: exactly one wins.
for h in d1 d2; do
	curl -s -o "$T/acq.$h" -w '%{http_code}\n' \
	    -H "Authorization: Bearer $(cat "$CTL_TOKEN")" \
	    --data-binary "{\"computer\":\"team\",\"bot\":\"bot1\",\"holder\":\"$h\",\"ttl_ms\":60000}" \
	    "$CTL_URL/v1/leases" > "$T/acq.$h.code" &
	pids="${pids:-} $!"
done
# shellcheck disable=SC2086
wait $pids
codes=$(cat "$T/acq.d1.code" "$T/acq.d2.code" | sort | tr '\n' ' ')
t_eq "$codes" "201 409 " "one of two drivers wins"
for h in d1 d2; do
	if [ "$(cat "$T/acq.$h.code")" = 201 ]; then win=$h; else lose=$h; fi
done
t_contains "$(cat "$T/acq.$lose")" LEASE_HELD "the loser's code"
LEASE=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$T/acq.$win")
FENCE=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fence"])' "$T/acq.$win")

# The holder drives; a call without the lease is refused; bot2 is free.
r=$(api POST /v1/tools/shell "{\"computer\":\"team\",\"bot\":\"bot1\",\"lease\":\"$LEASE\",\"command\":\"echo driven > f\"}")
t_contains "$r" "200 " "the holder drives"
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"bot1","command":"true"}')
t_contains "$r" "409 " "no lease: refused"
t_contains "$r" LEASE_HELD "no lease: code"
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"bot2","command":"echo free"}')
t_contains "$r" "200 " "another bot works meanwhile"

# 409 rules: the bot runs, a user cannot take control ...
r=$(api POST /v1/computers/team/control '{"bot":"bot1","holder":"alice"}')
t_contains "$r" "409 " "takeover of a running bot"
t_contains "$r" STOP_THE_BOT_FIRST "takeover code"
# ... until the run asks for it.
r=$(api POST /v1/tools/request_takeover "{\"computer\":\"team\",\"bot\":\"bot1\",\"lease\":\"$LEASE\",\"reason\":\"password\"}")
t_contains "$r" waiting_takeover "request_takeover"
r=$(api POST /v1/computers/team/control '{"bot":"bot1","holder":"alice"}')
t_contains "$r" "201 " "takeover while waiting"
t_contains "$r" '"path":"/screen/' "control screen path"
t_contains "$r" '"terminal_path":"/term/' "terminal path"
CTRL=$(api_field id)
r=$(api POST /v1/computers/team/control '{"bot":"bot1","holder":"bob"}')
t_contains "$r" LEASE_HELD "second user refused"
r=$(api DELETE "/v1/computers/team/control/$CTRL")
t_contains "$r" "200 " "release control"
t_contains "$(cat "$CTL_DATA"/computers/team/guestd.log)" \
    "capability.revoked" "release revokes the capability"
r=$(api DELETE "/v1/leases/$LEASE")
t_contains "$r" "200 " "release the run's lease"

# Expiry: a short lease without heartbeat lapses; the next grant has a
# higher fence.  (Waiting for time to pass is what is tested here.)  The
# TTL leaves room for a loaded machine between the grant and the first act.
T0=$(date +%s%3N)
r=$(api POST /v1/leases '{"computer":"team","bot":"bot3","holder":"old","ttl_ms":5000}')
# Parsed in the shell: a python start-up on a loaded machine can outlast
# the lease before its first use.
[[ $r =~ \"id\":\"([^\"]*)\" ]] && OLD=${BASH_REMATCH[1]}
[[ $r =~ \"fence\":([0-9]+) ]] && OLDF=${BASH_REMATCH[1]}
[ -n "${OLD:-}" ] && [ -n "${OLDF:-}" ] || t_fail "no lease in: $r"
r=$(api POST /v1/tools/shell "{\"computer\":\"team\",\"bot\":\"bot3\",\"lease\":\"$OLD\",\"command\":\"true\"}")
t_contains "$r" "200 " "old holder acts while live"
r=$(api POST /v1/leases '{"computer":"team","bot":"bot3","holder":"new"}')
t_contains "$r" LEASE_HELD "live lease not taken"
# Another holder asks until the old lease has lapsed (bounded: 10 s).
deadline=$((SECONDS + 10))
while :; do
	r=$(api POST /v1/leases '{"computer":"team","bot":"bot3","holder":"new"}')
	case "$r" in *"201 "*) break ;; esac
	t_contains "$r" LEASE_HELD "live lease not taken"
	[ "$SECONDS" -lt "$deadline" ] || t_fail "the old lease never lapsed"
	sleep 0.1
done
t_contains "$r" "201 " "expired lease taken over"
[ $(($(date +%s%3N) - T0)) -ge 5000 ] || t_fail "the lease lapsed before its TTL"
NEW=$(api_field id)
NEWF=$(api_field fence)
[ "$NEWF" -gt "$OLDF" ] || t_fail "fence did not grow: $OLDF -> $NEWF"
r=$(api POST "/v1/leases/$OLD/heartbeat" '{}')
t_contains "$r" LEASE_EXPIRED "heartbeat after expiry"
r=$(api POST /v1/tools/shell "{\"computer\":\"team\",\"bot\":\"bot3\",\"lease\":\"$NEW\",\"command\":\"true\"}")
t_contains "$r" "200 " "new holder acts"
r=$(api POST /v1/tools/shell "{\"computer\":\"team\",\"bot\":\"bot3\",\"lease\":\"$OLD\",\"command\":\"true\"}")
t_contains "$r" "409 " "old holder refused by the controller"

# A controller process still holding the old fence, talking to guestd
# directly (as after a partition), is refused by guestd itself.
GPORT=$(sed -n 's/.*event=guestd.listening.* port=\([0-9]*\).*/\1/p' \
    "$CTL_DATA/computers/team/guestd.log" | head -1)
[ -n "$GPORT" ] || t_fail "no guestd port in its log"
out=$("$RAKAZOCTL" guest --url "ws://127.0.0.1:$GPORT" \
    --secret-file "$CTL_DATA/computers/team/secret" call exec \
    "{\"command\":\"touch stale\",\"bot\":\"bot3\",\"fence\":$OLDF}" 2>&1)
t_contains "$out" STALE_FENCE "guestd refuses the stale fence"
[ -e "$CTL_DATA/computers/team/home/bots/bot3/stale" ] &&
    t_fail "the stale command ran"
exit 0

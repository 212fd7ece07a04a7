#!/bin/bash
# SPDX-License-Identifier: MIT
# Two `rakazoctl serve` processes on one PostgreSQL database (C-2), local
# provider, real guestd: twelve drivers spread over both race for one bot
# and exactly one wins; a computer asked to start by both at once starts
# once (one guestd, one open run); a lease granted by one process lapses
# and, after another holder took the bot through the other process, the
# old lease is refused there (and its fence by guestd).  The database
# password never reaches a log or a computer's environment.
. "${top_srcdir:-.}/tests/lib.sh"
RAKAZO_TEST_STORE=postgres
. "${top_srcdir:-.}/tests/lib-controller.sh"

# A store that is not there, or a URL that is not one, stops start-up
# with a stable code and without the password.
out=$(DATABASE_URL="postgres://rakazo:$PG_PASS@127.0.0.1:1/rakazo" \
    timeout 30 "$RAKAZOCTL" serve --listen 127.0.0.1:0 --data-dir "$T/bad" \
    --token-file "$CTL_TOKEN" 2>&1) && t_fail "serve ran without its store"
t_contains "$out" STATE_STORE_UNAVAILABLE "an unreachable store"
t_not_contains "$out" "$PG_PASS" "the password in the error"
out=$(timeout 30 "$RAKAZOCTL" serve --listen 127.0.0.1:0 --data-dir \
    "$T/bad" --token-file "$CTL_TOKEN" --store \
    "postgres://rakazo:$PG_PASS@127.0.0.1/x?a=%zz" 2>&1) &&
    t_fail "serve ran with a malformed store URL"
t_contains "$out" CONFIG_INVALID "a malformed store URL"
t_not_contains "$out" "$PG_PASS" "the password in the error"

ctl_start
A=$CTL_URL
ctl_serve second "$T/serve-b.log"
[ -n "$SERVE_PORT" ] || t_fail "the second controller did not start"
T_KILL="$T_KILL $SERVE_PID"
B="http://127.0.0.1:$SERVE_PORT"

for u in "$A" "$B"; do
	CTL_URL=$u api GET /internal/health >/dev/null
	t_eq "$(api_field store.backend)" postgres "backend of $u"
done

# A computer both processes know, not yet started.
r=$(CTL_URL=$A api POST /v1/computers '{"id":"team"}')
t_contains "$r" "201 " "create through A"
r=$(CTL_URL=$B api GET /v1/computers/team)
t_contains "$r" '"state":"stopped"' "B sees A's computer"

# Started once: the first tool calls of two bots, one through each
# process, at the same moment.
i=0
for u in "$A" "$B" "$A" "$B"; do
	i=$((i + 1))
	curl -s -o "$T/start.$i" -w '%{http_code}\n' \
	    -H "Authorization: Bearer $(cat "$CTL_TOKEN")" \
	    --data-binary "{\"computer\":\"team\",\"bot\":\"s$i\",\"command\":\"echo s$i\"}" \
	    "$u/v1/tools/shell" > "$T/start.$i.code" &
	pids="${pids:-} $!"
done
# shellcheck disable=SC2086
wait $pids
for i in 1 2 3 4; do
	t_eq "$(cat "$T/start.$i.code")" 200 "first call $i"
	t_contains "$(cat "$T/start.$i")" "s$i" "first call $i output"
done
n=0
for d in /proc/[0-9]*; do
	if { tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null |
	    grep -q -- "--workspace $CTL_DATA/computers/team/"; then
		n=$((n + 1))
	fi
done
t_eq "$n" 1 "guestd processes of the computer"
t_eq "$(pg_sql "SELECT count(*) FROM computer_runs WHERE computer = 'team'")" \
    1 "runs recorded"

# Contention: twelve drivers, six through each process, one bot.
pids=""
for h in 1 2 3 4 5 6 7 8 9 10 11 12; do
	u=$A
	[ $((h % 2)) -eq 0 ] && u=$B
	curl -s -o "$T/acq.$h" -w '%{http_code}\n' \
	    -H "Authorization: Bearer $(cat "$CTL_TOKEN")" \
	    --data-binary "{\"computer\":\"team\",\"bot\":\"bot1\",\"holder\":\"d$h\",\"ttl_ms\":60000}" \
	    "$u/v1/leases" > "$T/acq.$h.code" &
	pids="$pids $!"
done
# shellcheck disable=SC2086
wait $pids
wins=0
for h in 1 2 3 4 5 6 7 8 9 10 11 12; do
	case "$(cat "$T/acq.$h.code")" in
	201) wins=$((wins + 1)) ;;
	409) t_contains "$(cat "$T/acq.$h")" LEASE_HELD "loser $h's code" ;;
	*) t_fail "driver $h: $(cat "$T/acq.$h.code") $(cat "$T/acq.$h")" ;;
	esac
done
t_eq "$wins" 1 "winners among twelve drivers on two processes"
t_eq "$(pg_sql "SELECT count(*) || ' ' || max(fence) FROM leases WHERE computer = 'team' AND bot = 'bot1'")" \
    "1 1" "one lease row, fence 1"

# Expiry across processes: A grants a short lease; once it has lapsed
# another holder takes the bot through B; the old lease is refused by B.
r=$(CTL_URL=$A api POST /v1/leases '{"computer":"team","bot":"bot3","holder":"old","ttl_ms":2000}')
[[ $r =~ \"id\":\"([^\"]*)\" ]] && OLD=${BASH_REMATCH[1]}
[[ $r =~ \"fence\":([0-9]+) ]] && OLDF=${BASH_REMATCH[1]}
[ -n "${OLD:-}" ] && [ -n "${OLDF:-}" ] || t_fail "no lease in: $r"
r=$(CTL_URL=$B api POST /v1/tools/shell "{\"computer\":\"team\",\"bot\":\"bot3\",\"lease\":\"$OLD\",\"command\":\"true\"}")
t_contains "$r" "200 " "A's live lease acts through B"
deadline=$((SECONDS + 10))
while :; do
	r=$(CTL_URL=$B api POST /v1/leases '{"computer":"team","bot":"bot3","holder":"new"}')
	case "$r" in *"201 "*) break ;; esac
	t_contains "$r" LEASE_HELD "live lease not taken"
	[ "$SECONDS" -lt "$deadline" ] || t_fail "the old lease never lapsed"
	sleep 0.1
done
NEW=$(api_field id)
NEWF=$(api_field fence)
[ "$NEWF" -gt "$OLDF" ] || t_fail "fence did not grow: $OLDF -> $NEWF"
r=$(CTL_URL=$A api POST /v1/tools/shell "{\"computer\":\"team\",\"bot\":\"bot3\",\"lease\":\"$NEW\",\"command\":\"true\"}")
t_contains "$r" "200 " "B's new lease acts through A"
for u in "$B" "$A"; do
	r=$(CTL_URL=$u api POST /v1/tools/shell "{\"computer\":\"team\",\"bot\":\"bot3\",\"lease\":\"$OLD\",\"command\":\"touch late\"}")
	t_contains "$r" "409 " "the old lease through $u"
	case "$r" in
	*LEASE_EXPIRED*|*STALE_FENCE*) ;;
	*) t_fail "the old lease through $u: $r" ;;
	esac
done
out=$(ctl_guest team exec "{\"command\":\"touch stale\",\"bot\":\"bot3\",\"fence\":$OLDF}")
t_contains "$out" STALE_FENCE "guestd refuses the old fence"
[ -e "$CTL_DATA/computers/team/home/bots/bot3/late" ] &&
    t_fail "a refused command ran"

# The password: in no log, in no computer's environment.
grep -qF -- "$PG_PASS" "$CTL_LOG" "$T/serve-b.log" &&
    t_fail "the database password is in a serve log"
for d in /proc/[0-9]*; do
	if { tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null |
	    grep -q -- "--workspace $CTL_DATA/computers/team/"; then
		tr '\0' '\n' < "$d/environ" | grep -q '^DATABASE_URL=' &&
		    t_fail "guestd inherited DATABASE_URL"
	fi
done
exit 0

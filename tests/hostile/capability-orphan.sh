#!/bin/bash
# SPDX-License-Identifier: MIT
# A control capability dies with its lease even when no controller is left
# to revoke it (issue 12, item 8).  guestd grants a control lease's screen
# and terminal capability with the lease's ttl and ends it on its own
# timer; the lease's heartbeat renews both.  With serve alive and
# heartbeating, the tokens keep working well past the first ttl; after
# `kill -9` of serve, once the ttl has passed, the screen token's websocket
# upgrade and the terminal token are refused and the viewer and terminal
# that were open are closed.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
: "${RFBPROBE:?run through make check}"
: "${TERMPROBE:?run through make check}"

TTL_MS=6000

# Fields of the last reply without a python start-up (slow on a loaded
# machine, and the lease is ticking): the lease's id comes first.
field() {	# KEY
	grep -o "\"$1\":[^,}]*" "$T/api.out" | head -n 1 | cut -d: -f2- |
	    tr -d '"'
}

screen_try() {	# TOKEN: the probe's output for one handshake
	printf 'handshake\n' | "$RFBPROBE" --url "ws://127.0.0.1:$GW/screen/$1" \
	    2>&1
}
term_try() {	# TOKEN
	"$TERMPROBE" --url "ws://127.0.0.1:$GW/term/$1" </dev/null 2>&1
}

ctl_start
api POST /v1/computers '{"id":"co","start":true}' >/dev/null
GW=$(sed -n 's/.*event=gateway.listening .*port=\([0-9]*\).*/\1/p' \
    "$CTL_DATA/computers/co/guestd.log" | head -n 1)
[ -n "$GW" ] || t_fail "guestd's gateway did not listen"

# 1. Alive and heartbeating: the tokens outlive their first ttl.
r=$(api POST /v1/computers/co/control "{\"bot\":\"hb\",\"ttl_ms\":$TTL_MS}")
t_contains "$r" "201 " "take control"
L1=$(field id)
TOK1=$(field token)
grep -q '"expires_ms":null' "$T/api.out" &&
	t_fail "the control capability was granted without a ttl"
t0=$(date +%s%3N)
# Heartbeats at a sixth of the ttl; waiting out twice the ttl is the test.
while [ "$(date +%s%3N)" -lt $((t0 + 2 * TTL_MS + 500)) ]; do
	r=$(api POST "/v1/leases/$L1/heartbeat" "{\"ttl_ms\":$TTL_MS}")
	t_contains "$r" "200 " "heartbeat"
	t_contains "$r" '"renewed":1' "the heartbeat renewed the capability"
	sleep 1
done
t_contains "$(screen_try "$TOK1")" "init" "screen token works past its ttl"
t_contains "$(term_try "$TOK1")" "open" "terminal token works past its ttl"
r=$(api DELETE "/v1/computers/co/control/$L1")
t_contains "$r" "200 " "release"

# 2. serve killed: the capability ends on guestd's own timer.
r=$(api POST /v1/computers/co/control "{\"bot\":\"orph\",\"ttl_ms\":$TTL_MS}")
t_contains "$r" "201 " "take control again"
TOK2=$(field token)
t_contains "$(screen_try "$TOK2")" "init" "screen token works"
# An open viewer and an open terminal.
mkfifo "$T/vin" "$T/vout" "$T/tin" "$T/tout"
"$RFBPROBE" --url "ws://127.0.0.1:$GW/screen/$TOK2" <"$T/vin" \
    >"$T/vout" 2>&1 &
T_KILL="$T_KILL $!"
exec 5>"$T/vin" 6<"$T/vout"
read -t 10 -r line <&6 || t_fail "viewer: no output"
t_contains "$line" "open" "viewer open"
printf 'handshake\nwait-close 30000\n' >&5
read -t 10 -r line <&6 || t_fail "viewer: no init"
t_contains "$line" "init" "viewer handshake"
"$TERMPROBE" --url "ws://127.0.0.1:$GW/term/$TOK2" <"$T/tin" \
    >"$T/tout" 2>&1 &
T_KILL="$T_KILL $!"
exec 7>"$T/tin" 8<"$T/tout"
read -t 10 -r line <&8 || t_fail "terminal: no output"
t_eq "$line" "open" "terminal open"
printf 'expect-close\n' >&7

kill -9 "$CTL_PID"
wait "$CTL_PID" 2>/dev/null
CTL_PID=""
killed=$(date +%s%3N)
# Bounded: the ttl plus a generous margin for a loaded machine.
until screen_try "$TOK2" | grep -q connect-failed; do
	[ "$(date +%s%3N)" -lt $((killed + TTL_MS + 15000)) ] ||
		t_fail "the screen token still works $(( $(date +%s%3N) - killed )) ms after serve died"
	sleep 0.2
done
t_note "screen token refused $(( $(date +%s%3N) - killed )) ms after kill -9"
t_contains "$(term_try "$TOK2")" "refused" "terminal token refused"
read -t 15 -r line <&6 || t_fail "viewer: not closed"
t_contains "$line" "closed" "the open viewer was closed"
read -t 15 -r line <&8 || t_fail "terminal: not closed"
t_eq "$line" "closed 1001 control capability ended" \
    "the open terminal was closed"
grep -q "event=screen.capability.revoked.*reason=expired" \
    "$CTL_DATA/computers/co/guestd.log" ||
	t_fail "guestd did not log the expiry"
exec 5>&- 6<&- 7>&- 8<&-
exit 0

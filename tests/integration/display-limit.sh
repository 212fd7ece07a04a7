#!/bin/bash
# SPDX-License-Identifier: MIT
# SANDBOX_TEAM_SCREEN_LIMIT (G-3): at the limit the oldest idle,
# uncontrolled desktop is torn down to make room (and an event says so);
# when none is idle the open fails with MULTI_SCREEN_UNAVAILABLE while
# exec and files keep working.  Then a race for a slot: a foreign X
# server squatting on the first slot makes guestd move to the next one.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
SANDBOX_TEAM_SCREEN_LIMIT=2
export GUESTD_DISPLAY_FIRST SANDBOX_TEAM_SCREEN_LIMIT

# Branch 1: idle means unused for 0 ms, so the oldest goes.
t_start_guestd
rk call display.open '{"bot":"a1"}' >/dev/null || t_fail "open a1"
rk call display.open '{"bot":"a2"}' >/dev/null || t_fail "open a2"
# Touch a1 so a2 is now the oldest.
rk call display.open '{"bot":"a1"}' >/dev/null || t_fail "reopen a1"
"$DISPLAY_SHOT" --url "$URL" --secret-file "$SECRET" \
    --wait-event display.evicted display.open '{"bot":"a3"}' >"$T/ev" ||
	t_fail "open a3 over the limit: $(cat "$T/ev")"
t_contains "$(cat "$T/ev")" '"created":true' "a3 opened"
t_contains "$(cat "$T/ev")" '"event":"display.evicted"' "eviction event"
t_contains "$(cat "$T/ev")" '"bot":"a2","display"' "a2 was the one evicted"
l=$(rk call display.list)
t_contains "$l" '"bot":"a1"' "a1 kept"
t_contains "$l" '"bot":"a3"' "a3 listed"
t_contains "$l" '"limit":2' "limit in list"
t_not_contains "$l" '"bot":"a2","display":":' "a2 still listed as open"
kill "$GUESTD_PID"; wait "$GUESTD_PID"; GUESTD_PID=""

# Branch 2: nothing idle long enough: refused, nothing torn down.
GUESTD_SCREEN_IDLE_MS=600000
export GUESTD_SCREEN_IDLE_MS
t_start_guestd
rk call display.open '{"bot":"b1"}' >/dev/null || t_fail "open b1"
rk call display.open '{"bot":"b2"}' >/dev/null || t_fail "open b2"
out=$(rk call display.open '{"bot":"b3"}' 2>&1) && t_fail "over the limit"
t_contains "$out" MULTI_SCREEN_UNAVAILABLE "limit code"
l=$(rk call display.list)
t_contains "$l" '"bot":"b1"' "b1 kept"
t_contains "$l" '"bot":"b2"' "b2 kept"
t_not_contains "$l" '"bot":"b3"' "b3 started anyway"
t_eq "$(rk exec -- echo still)" still "exec at the limit"
echo hi > "$T/f"
rk put "$T/f" f.txt >/dev/null || t_fail "files at the limit"
# Closing one makes room.
rk call display.close '{"bot":"b1"}' >/dev/null || t_fail "close b1"
rk call display.open '{"bot":"b3"}' >/dev/null || t_fail "open after close"
kill "$GUESTD_PID"; wait "$GUESTD_PID"; GUESTD_PID=""

# A foreign X server on our first slot: we take the next one.
unset GUESTD_SCREEN_IDLE_MS SANDBOX_TEAM_SCREEN_LIMIT
GUESTD_DISPLAY_FIRST=$((GUESTD_DISPLAY_FIRST + 40))
mkfifo "$T/dfd"
Xvfb ":$GUESTD_DISPLAY_FIRST" -nolisten tcp -displayfd 9 9>"$T/dfd" \
    >/dev/null 2>&1 &
squat=$!
read -r n <"$T/dfd"
t_eq "$n" "$GUESTD_DISPLAY_FIRST" "squatter ready"
t_start_guestd
out=$(rk call display.open '{"bot":"c1"}') || t_fail "open beside a squatter"
t_contains "$out" "\"slot\":$((GUESTD_DISPLAY_FIRST + 1))" "next slot"
kill "$squat"; wait "$squat" 2>/dev/null
exit 0

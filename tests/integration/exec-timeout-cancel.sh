#!/bin/bash
# SPDX-License-Identifier: MIT
# exec timeouts and cancels (G-26): the whole process group dies, also
# members that ignore SIGTERM and background jobs; the CLI reports 124 on a
# timeout and 130 on ^C after cancelling.
. "$top_srcdir/tests/lib.sh"
t_start_guestd

gone() {	# pattern what
	if pgrep -f "$1" >/dev/null; then
		t_fail "$2 still running: $(pgrep -af "$1")"
	fi
}

# Timeout: exit 124 and the command is gone.
rk exec --timeout-ms 300 -- "sleep 30.123$$"
t_eq "$?" 124 "exit status on timeout"
gone "sleep 30\\.123$$" "timed-out sleep"

out=$(rk exec --json --timeout-ms 300 -- "echo before; sleep 30.124$$")
t_contains "$out" '"timed_out":true' "timed_out"
t_contains "$out" '"stdout":"before\n"' "output before the timeout"
gone "sleep 30\\.124$$" "timed-out sleep"

# SIGTERM ignored (and inherited by the sleep): SIGKILL after the grace.
start=$SECONDS
rk exec --timeout-ms 300 -- "trap '' TERM; sleep 30.456$$; echo survived" \
    >"$T/out"
t_eq "$?" 124 "exit status on timeout, TERM ignored"
t_not_contains "$(cat "$T/out")" survived "output after the kill"
gone "sleep 30\\.456$$" "TERM-ignoring sleep"
[ $((SECONDS - start)) -lt 15 ] || t_fail "timeout took $((SECONDS - start)) s"

# ^C: rakazoctl cancels and the group, background jobs included, is gone.
# Job control gives the background rakazoctl its own SIGINT back.
mkfifo "$T/fifo"
set -m
"$RAKAZOCTL" guest --url "$URL" --secret-file "$SECRET" exec -- \
    "sleep 31.$$ & sleep 32.$$ & echo started; wait" \
    >"$T/fifo" 2>"$T/cancel.err" &
rkpid=$!
set +m
exec 3<"$T/fifo"
read -r line <&3
t_eq "$line" "started" "first line"
kill -INT "$rkpid"
wait "$rkpid"
t_eq "$?" 130 "exit status after ^C"
exec 3<&-
t_contains "$(cat "$T/cancel.err")" "rakazoctl: cancelled" "cancel message"
gone "sleep 3[12]\\.$$" "cancelled group"

# Over the protocol: NOT_FOUND for what is not ours; "killed" is confirmed
# before the command's own reply (cancelled:true) goes out.
out=$(printf '%s\n' \
    'text {"id":2,"op":"exec.cancel","args":{"target":99}}' recv \
    "text {\"id\":3,\"op\":\"exec\",\"args\":{\"command\":\"trap '' TERM; sleep 33.$$ & sleep 34.$$\"}}" \
    'recv' \
    'text {"id":4,"op":"exec.cancel","args":{"target":3}}' \
    'drain "id":4,"ok"' \
    'drain "id":3,"ok"' |
    "$WSPROBE" --url "$URL" --secret-file "$SECRET" --hello) ||
	t_fail "wsprobe failed: $out"
echo "$out"
t_contains "$out" '"id":2,"ok":false' "cancel of an unknown id"
t_contains "$out" 'NOT_FOUND' "cancel of an unknown id"
t_contains "$out" '"event":"exec.started"' "exec.started"
t_contains "$out" '"state":"killed"' "cancel confirmed"
t_contains "$out" '"cancelled":true' "exec reply says cancelled"
gone "sleep 3[34]\\.$$" "cancelled TERM-ignoring group"

# The connection goes away: its commands die with it (no reply to anyone).
out=$(printf '%s\n' \
    "text {\"id\":2,\"op\":\"exec\",\"args\":{\"command\":\"sleep 35.$$ & sleep 36.$$\"}}" \
    recv |
    "$WSPROBE" --url "$URL" --secret-file "$SECRET" --hello)
t_contains "$out" '"event":"exec.started"' "exec.started before the close"
# pidwait blocks (pidfd, no polling) until the group has exited; 124 is
# the timeout, 1 means nothing was left to wait for.
timeout 10 pidwait -f "sleep 3[56]\\.$$"
[ "$?" -ne 124 ] ||
	t_fail "commands outlived their connection: $(pgrep -af "sleep 3[56]")"
gone "sleep 3[56]\\.$$" "group of a closed connection"

kill -0 "$GUESTD_PID" || t_fail "guestd died"
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# Output floods (G-26): guestd's memory stays bounded.  Without streaming
# only output_limit bytes are kept and the rest is read and dropped; with
# streaming a reader that stops reading pauses the command instead of
# growing queues, and the output flows again once it reads.
. "$top_srcdir/tests/lib.sh"
t_start_guestd --exec-max-output 2G
# Under ASan, freed frames sit in its quarantine: run with
# ASAN_OPTIONS=quarantine_size_mb=1 for a meaningful VmHWM.
limit_kb=65536

out=$(rk exec --json --timeout-ms 3000 --output-limit 65536 -- yes)
t_eq "$?" 124 "exit status of the timed-out flood"
t_contains "$out" '"truncated":true' "truncated"
t_contains "$out" '"timed_out":true' "timed_out"
s=$(printf '%s' "$out" | sed 's/.*"stdout":"//; s/".*//')
t_eq "$(printf '%s' "$s" | tr -cd y | wc -c)" 32768 "lines of y kept"
t_eq "${#s}" $((32768 * 3)) "stdout length (JSON-escaped y\\n)"
hwm=$(t_guestd_hwm_kb)
t_note "VmHWM after the non-stream flood: $hwm KiB"
[ "$hwm" -lt "$limit_kb" ] || t_fail "guestd VmHWM $hwm KiB"

# A streaming reader that stalls for 4 s, then reads on.
out=$(printf '%s\n' \
    'text {"id":2,"op":"exec","args":{"command":"yes","stream":true,"timeout_ms":8000,"output_limit":1073741824}}' \
    'recv' \
    'stall 4000' \
    'count' \
    'drain "id":2,"ok"' \
    'count' |
    "$WSPROBE" --url "$URL" --secret-file "$SECRET" --hello) ||
	t_fail "wsprobe failed: $out"
echo "$out" | grep -v '^bin' | cut -c1-300
t_contains "$out" '"id":2,"ok":true' "exec reply"
t_contains "$out" '"timed_out":true' "stream flood timed out"
t_contains "$out" '"truncated":false' "nothing dropped while streaming"
counts=$(echo "$out" | sed -n 's/^bytes \([0-9]*\)$/\1/p')
c1=$(echo "$counts" | sed -n 1p)
c2=$(echo "$counts" | sed -n 2p)
[ -n "$c1" ] && [ -n "$c2" ] || t_fail "no counts in: $(echo "$out" | grep -v '^bin' | head)"
t_note "bytes after the stall: $c1, at the end: $c2"
# More than the 2 MiB queue and the socket buffers: reading resumed.
[ "$c2" -gt $((c1 + 32 * 1024 * 1024)) ] ||
	t_fail "output did not flow after the stall ($c1 -> $c2)"
hwm=$(t_guestd_hwm_kb)
t_note "VmHWM after the stream flood: $hwm KiB"
[ "$hwm" -lt "$limit_kb" ] || t_fail "guestd VmHWM $hwm KiB"

kill -0 "$GUESTD_PID" || t_fail "guestd died"
exit 0

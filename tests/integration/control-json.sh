#!/bin/bash
# SPDX-License-Identifier: MIT
# Malformed, hostile and oversized messages get a clear error with a stable
# code, and the connection and guestd live on.
. "$top_srcdir/tests/lib.sh"
t_start_guestd

deep=$(printf '%0.s[' $(seq 1 20000))
printf '{"id":9,"op":%s' "$deep" > "$T/deep.json"

out=$(printf '%s\n' \
    'text this is not json' recv \
    'text {"id":2,"id":3,"op":"health"}' recv \
    'text {"id":4,"op":"no.such.op"}' recv \
    'text {"op":"health"}' recv \
    'text {"id":-5,"op":"health"}' recv \
    'text {"id":"6","op":"health"}' recv \
    'text {"id":7,"op":"health","args":[1]}' recv \
    'text {"id":8,"op":"health","extra":1}' recv \
    'text [1,2,3]' recv \
    "textfile $T/deep.json" recv \
    'textbig 2000000' recv \
    'binraw 0001' recv \
    'bin 77 0 0 1100000' recv \
    'bin 0 0 0 10' recv \
    'bin 5 9 0 10' recv \
    'text {"id":10,"op":"health"}' recv |
    "$WSPROBE" --url "$URL" --secret-file "$SECRET" --hello) ||
	t_fail "wsprobe failed: $out"
echo "$out"

n=$(echo "$out" | grep -c '"ok":false')
t_eq "$n" 15 "error replies"
t_contains "$out" 'BAD_JSON' "not JSON"
t_eq "$(echo "$out" | grep -c 'BAD_JSON')" 4 "BAD_JSON replies (syntax, duplicate, array, depth)"
t_contains "$out" 'UNKNOWN_OP' "unknown op"
t_eq "$(echo "$out" | grep -c 'BAD_REQUEST')" 5 "BAD_REQUEST replies"
t_eq "$(echo "$out" | grep -c 'TOO_LARGE')" 2 "TOO_LARGE replies"
t_eq "$(echo "$out" | grep -c 'PROTOCOL_ERROR')" 3 "PROTOCOL_ERROR replies"
t_contains "$out" '"id":10,"ok":true' "connection alive afterwards"
t_not_contains "$out" 'closed' "connection closed"

# Fences (G-32): a lower fence than the highest seen for a bot is refused.
out=$(printf '%s\n' \
    'text {"id":2,"op":"file.mkdir","args":{"path":"f5","bot":"a","fence":5}}' recv \
    'text {"id":3,"op":"file.mkdir","args":{"path":"f3","bot":"a","fence":3}}' recv \
    'text {"id":4,"op":"file.mkdir","args":{"path":"f6","bot":"a","fence":6}}' recv \
    'text {"id":5,"op":"file.mkdir","args":{"path":"g1","bot":"b","fence":1}}' recv \
    'text {"id":6,"op":"file.mkdir","args":{"path":"h","fence":1}}' recv |
    "$WSPROBE" --url "$URL" --secret-file "$SECRET" --hello)
echo "$out"
t_contains "$out" '"id":2,"ok":true' "fence 5"
t_contains "$out" 'STALE_FENCE' "fence 3 after 5"
t_contains "$out" '"id":4,"ok":true' "fence 6"
t_contains "$out" '"id":5,"ok":true' "another bot's fence"
t_contains "$out" '"id":6,"ok":false' "fence without a bot"
[ -d "$WS/f3" ] && t_fail "a stale fence acted"
[ -d "$WS/f6" ] || t_fail "fence 6 did not act"

kill -0 "$GUESTD_PID" || t_fail "guestd died"
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# G-35 framing under hostile input: an unknown kind, a length over 1 MiB,
# a resize frame of the wrong size, an out-of-range resize and a text
# message each close that connection with a close reason, and only that
# one; a full 1 MiB stdin frame, split over many messages, arrives whole
# through a PTY that pushes back.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/integration/term-lib.sh"
term_start
ctl=$(term_grant control)

term_open K "$ctl"		# a bystander that must survive the others
pk=$(term_pid K)

bad() {		# script-line expected-close what
	r=$(printf '%s\nexpect-close\n' "$1" | term_probe "$ctl")
	t_contains "$r" "$2" "$3"
}
bad "raw 0200000000" "closed 1008 unknown frame kind" "bad kind"
bad "raw ff00000001aa" "closed 1008 unknown frame kind" "kind 255"
bad "raw 0000100001" "closed 1009 frame larger than 1 MiB" "len > 1 MiB"
bad "raw 00ffffffff" "closed 1009 frame larger than 1 MiB" "len 4 GiB"
bad "raw 01000000020050" "closed 1008 resize frame must carry 4 bytes" \
    "truncated resize"
bad "raw 0100000005005000180a" \
    "closed 1008 resize frame must carry 4 bytes" "long resize"
bad "resize 0 24" "closed 1008 resize out of range" "zero columns"
bad "resize 80 65535" "closed 1008 resize out of range" "huge rows"
bad "text hello" "closed 1003 text message: frames are binary" "text"

# A frame header split byte by byte, then a whole 1 MiB frame.
r=$(term_probe "$ctl" <<'SCRIPT'
split 1 echo B""YTES\r
expect BYTES
send stty -icanon -echo; echo R""EADY; head -c 1048576 >got; stty sane; echo W""C=$(wc -c <got) $(tr -d a <got | wc -c)\r
expect READY
bigframe 1048576
grab WC=
SCRIPT
) || t_fail "big frame: $r"
t_contains "$r" "grab WC=1048576 0" "1 MiB frame arrives whole"

kill -0 "$pk" || t_fail "bystander's shell died"
term_say K 'send echo S""TILL\r'
term_say K 'expect STILL'
t_eq "$(term_line K)" "ok" "bystander still works"
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# G-20 flow control: shells flooding clients that stop reading (`yes`, and
# `cat` of a 1 GiB file) keep guestd's memory bounded, while a client that
# reads gets a 256 MiB `cat` through at full speed next to them, and the
# stalled clients' terminals still work once they read again.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/integration/term-lib.sh"
term_start
ctl=$(term_grant control)
truncate -s 1G "$WS/bots/alice/gig" 2>/dev/null ||
	{ mkdir -p "$WS/bots/alice" && truncate -s 1G "$WS/bots/alice/gig"; }
chmod a+r "$WS/bots/alice/gig"

term_open Y "$ctl"
term_open G "$ctl"
term_pid Y >/dev/null
term_pid G >/dev/null
base=$(t_guestd_hwm_kb)
# The probes read nothing while they wait for script lines: stalled.
term_say Y 'send yes\r'
term_say G 'send cat gig; echo G""DONE\r'

r=$(printf 'send head -c 268435456 /dev/zero | tr "\\\\0" x; echo F""DONE\\r\nuntil FDONE\n' |
    "$TERMPROBE" --timeout 120000 --url "ws://127.0.0.1:$GW/term/$ctl") ||
	t_fail "fast client: $r"
bytes=$(printf '%s\n' "$r" | sed -n 's/^until bytes=\([0-9]*\) ms=.*/\1/p')
ms=$(printf '%s\n' "$r" | sed -n 's/^until bytes=[0-9]* ms=\([0-9]*\)/\1/p')
[ -n "$bytes" ] && [ "$bytes" -ge 268435456 ] || t_fail "fast client: $r"
t_note "fast client: $bytes bytes in $ms ms beside two stalled floods"

hwm=$(t_guestd_hwm_kb)
t_note "guestd VmHWM: $base KiB before, $hwm KiB after"
[ $((hwm - base)) -lt 16384 ] || t_fail "memory grew by $((hwm - base)) KiB"

# The stalled ones recover: stop the floods and talk to them.
term_say Y 'send \x03'
term_say Y 'send echo Y""OK\r'
term_say Y 'expect YOK'
t_eq "$(term_line Y)" "ok" "yes client recovers"
term_say G 'send \x03'
term_say G 'send echo G""OK\r'
term_say G 'expect GOK'
t_eq "$(term_line G)" "ok" "cat client recovers"
hwm=$(t_guestd_hwm_kb)
[ $((hwm - base)) -lt 16384 ] || t_fail "memory grew by $((hwm - base)) KiB"
exit 0

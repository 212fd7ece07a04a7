#!/bin/bash
# SPDX-License-Identifier: MIT
# As root, each local computer's guestd runs as a uid of its own.  A build
# tree in a private home (a checkout in /root, mode 0700) is out of that
# uid's reach by path: the computer must start all the same (the controller
# opens the binary before it gives up root).  Root only.
. "${top_srcdir:-.}/tests/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "# SKIP: needs root"; exit 77; }
. "${top_srcdir:-.}/tests/lib-controller.sh"

mkdir -p "$T/private/bin"
cp "$GUESTD" "$T/private/bin/guestd"
chmod 755 "$T/private/bin/guestd"
chmod 700 "$T/private"
GUESTD="$T/private/bin/guestd"

ctl_start
r=$(api POST /v1/computers '{"id":"team","start":true}')
t_contains "$r" '"state":"running"' "computer started from a private tree"
t_contains "$(ctl computer show team)" running "computer running"

# It runs as the computer's uid, not as root.
pid=""
for d in /proc/[0-9]*; do
	if { tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null |
	    grep -q -- "--workspace $CTL_DATA/computers/team"; then
		pid=${d#/proc/}
	fi
done
[ -n "$pid" ] || t_fail "no guestd of the computer"
uid=$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")
[ "$uid" -ne 0 ] || t_fail "guestd runs as root"

# And it works: a command as a bot.
out=$(ctl shell --bot alice -- "echo private-ok" 2>&1) ||
	t_fail "exec: $out"
t_contains "$out" private-ok "exec output"
echo "ok: computer started from a 0700 tree, guestd uid $uid"

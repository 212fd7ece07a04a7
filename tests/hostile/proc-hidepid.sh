#!/bin/bash
# SPDX-License-Identifier: MIT
# One local computer cannot see another's processes (issue 26, item 4).
# As root each computer has a uid of its own and its guestd a mount
# namespace with a /proc mounted hidepid=invisible: from A's shell, B's
# guestd, X server and a command B left running with a password on its
# command line exist neither in /proc nor in ps; A's own processes (its
# guestd, its X server, the shell's) still do, and A's desktop still
# works, and so does its browser.  serve, on the host's /proc, still sees and stops both.
. "$top_srcdir/tests/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "# needs root"; exit 77; }
. "$top_srcdir/tests/lib-controller.sh"

ctl_start
grep -q 'event=local.proc_shared' "$CTL_LOG" && {
	echo "# SKIP: no private /proc here (no CAP_SYS_ADMIN, or kernel < 5.8)"
	exit 77
}
ctl computer create a >/dev/null || t_fail "create a"
ctl computer create b >/dev/null || t_fail "create b"
A="$CTL_DATA/computers/a"
B="$CTL_DATA/computers/b"
sh_a() { ctl shell --computer a --bot ann -- "$1"; }
sh_b() { ctl shell --computer b --bot bob -- "$1"; }
gpid() {
	for d in /proc/[0-9]*; do
		if { tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null |
		    grep -q -- "--workspace $1/home"; then
			echo "${d#/proc/}"
		fi
	done
}

# Both have desktops; B leaves a command running whose arguments hold a
# password, as `mysql -p...` or `sshpass -p` would.
ctl screenshot --computer a --bot ann "$T/a.png" >/dev/null ||
	t_fail "a's screenshot"
ctl screenshot --computer b --bot bob "$T/b.png" >/dev/null ||
	t_fail "b's screenshot"
sh_b 'setsid nohup sh -c "sleep 1000; true" x -pb-hunter2-Pw >/dev/null 2>&1 &
echo started' >/dev/null || t_fail "b's leftover"
sh_a 'setsid nohup sh -c "sleep 1000; true" a-own-marker >/dev/null 2>&1 &
echo started' >/dev/null || t_fail "a's leftover"
pa=$(gpid "$A")
pb=$(gpid "$B")
[ -n "$pa" ] && [ -n "$pb" ] || t_fail "guestd of a ($pa) or b ($pb)"
bx=$(pgrep -u "$(stat -c %u "$B/home")" Xvfb | head -1)
[ -n "$bx" ] || t_fail "no X server of b"
bl=$(pgrep -u "$(stat -c %u "$B/home")" -f b-hunter2-Pw | head -1)
[ -n "$bl" ] || t_fail "b's leftover is not running"

# From A: B's processes are not there, by pid, in a listing or in ps.
out=$(sh_a "for p in $pb $bx $bl; do
	test -e /proc/\$p && echo seen \$p
	tr '\\0' ' ' 2>/dev/null </proc/\$p/cmdline && echo read \$p
done
ls /proc; ps -eo pid,args")
t_not_contains "$out" "seen " "a sees a process of b in /proc"
t_not_contains "$out" "read " "a reads a command line of b"
t_not_contains "$out" "b-hunter2-Pw" "a sees b's password in ps"
t_not_contains "$out" "$B/home" "a sees b's guestd in ps"
# ... nor anything of another user: root's, serve's own command line.
t_not_contains "$out" "--token-file" "a sees serve's command line"
# A's own are: its guestd, its X server, its leftover.
t_contains "$out" "--workspace $A/home" "a sees its own guestd"
t_contains "$out" "Xvfb" "a sees its own X server"
t_contains "$out" "a-own-marker" "a sees its own leftover"
out=$(sh_a "tr '\\0' ' ' </proc/$pa/cmdline")
t_contains "$out" "--workspace $A/home" "a reads its own guestd's command line"
# A's desktop still works in its namespace, after all this.
ctl screenshot --computer a --bot ann "$T/a2.png" >/dev/null ||
	t_fail "a's screenshot after"
# So does its browser (Chromium reads /proc/self and its children's).
if command -v "${GUESTD_BROWSER:-chromium}" >/dev/null 2>&1; then
	# A page on loopback that is there anyway: serve's health.
	r=$(api POST /v1/tools/browser_navigate "{\"computer\":\"a\",
	    \"bot\":\"ann\",\"url\":\"$CTL_URL/internal/health\"}")
	t_contains "$r" "200 " "a's browser"
	t_contains "$r" "/internal/health" "a's browser loaded the page"
	t_contains "$(sh_a 'ps -eo args')" "chrom" "a sees its own browser"
else
	t_note "no chromium: the browser is not tried"
fi
# serve sees through the host's /proc: stopping B ends all of B.
ctl computer stop b >/dev/null || t_fail "stop b"
# (A dead one may wait as a zombie for the reaper it was orphaned to.)
t_eq "$(ps -o stat= -p "$bl" | grep -vc '^Z')" 0 "b's leftover after b's stop"
kill -0 "$pa" 2>/dev/null || t_fail "a's guestd died with b's stop"
t_note "proc-hidepid ok"

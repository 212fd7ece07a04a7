#!/bin/bash
# SPDX-License-Identifier: MIT
# Two computers of one controller are two tenants.  As root, serve gives
# each local computer a uid and gid of its own (--local-uid-range), so from
# A's shell tool B's workspace can be neither read nor written, B's runtime
# directory (X cookie, capability and terminal sockets) neither listed nor
# entered, B's X server not used without its cookie, and B's guestd not
# signalled; A's own files still work.  The uid is recorded: the same after
# a serve restart and a computer stop/start.  A stop also ends whatever A's
# commands left running (its uid has no process left), and each sweep of
# a uid ends as soon as none is left.
. "$top_srcdir/tests/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "# needs root"; exit 77; }
. "$top_srcdir/tests/lib-controller.sh"

ctl_start
h=$(curl -s "$CTL_URL/internal/health")
t_contains "$h" '"isolation":"uid"' "health says each computer has a user"
ctl computer create a >/dev/null || t_fail "create a"
ctl computer create b >/dev/null || t_fail "create b"

A="$CTL_DATA/computers/a"
B="$CTL_DATA/computers/b"
sh_a() { ctl shell --computer a --bot ann -- "$1"; }
sh_b() { ctl shell --computer b --bot bob -- "$1"; }

ua=$(sh_a 'id -u') || t_fail "a's shell: $ua"
ub=$(sh_b 'id -u') || t_fail "b's shell: $ub"
[ "$ua" -ne 0 ] && [ "$ub" -ne 0 ] || t_fail "a computer runs as root"
[ "$ua" != "$ub" ] || t_fail "a and b share uid $ua"
t_eq "$(sh_a 'id -g')" "$ua" "a's group is its own"
t_eq "$(stat -c '%u %a' "$A/home")" "$ua 700" "a's home: owner, mode"
t_eq "$(stat -c '%u %a' "$B/home")" "$ub 700" "b's home: owner, mode"
t_eq "$(stat -c '%u %a' "$B/tmp")" "$ub 700" "b's runtime dir: owner, mode"

# B has a secret file, a desktop (X cookie, capability sockets) and a
# terminal session (its socket directory).
sh_b 'echo b-private > secret.txt; echo ok' >/dev/null || t_fail "b write"
ctl screenshot --computer b --bot bob "$T/b.png" >/dev/null ||
	t_fail "b's screenshot"
r=$(api POST /v1/tools/terminal_url '{"computer":"b","bot":"bob"}')
t_contains "$r" "200 " "b's terminal"
bpid=""
for d in /proc/[0-9]*; do
	if { tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null |
	    grep -q -- "--workspace $B/home"; then
		bpid=${d#/proc/}
	fi
done
[ -n "$bpid" ] || t_fail "no guestd of b"
cookie=$(find "$B/tmp" -name 'xauth-*' | head -1)
[ -n "$cookie" ] || t_fail "b has no X cookie under its runtime dir"
sock=$(find "$B/tmp" -type s | head -1)
[ -n "$sock" ] || t_fail "b has no socket under its runtime dir"
slot=${cookie##*xauth-}
t_note "a=$ua b=$ub b's guestd=$bpid display=:$slot"

# From A: every way into B fails.
bhome="$B/home/bots/bob"
out=$(sh_a "cat '$bhome/secret.txt' 2>&1; echo rc=\$?")
t_not_contains "$out" "b-private" "a reads b's file"
t_contains "$out" "rc=1" "a reading b's file fails"
out=$(sh_a "{ echo pwned > '$bhome/pwned'; } 2>&1; echo rc=\$?")
t_contains "$out" "rc=1" "a writing into b's workspace fails"
out=$(sh_a "ls '$B/home' 2>&1; echo rc=\$?")
t_contains "$out" "rc=2" "a listing b's home fails"
out=$(sh_a "rm -rf '$bhome' 2>&1; echo rc=\$?")
t_contains "$(sh_b 'cat secret.txt')" "b-private" "b's file survives a's rm"
out=$(sh_a "cat '$cookie' >/dev/null 2>&1; echo rc=\$?")
t_contains "$out" "rc=1" "a reads b's X cookie"
out=$(sh_a "ls '$B/tmp' 2>&1; echo rc=\$?")
t_contains "$out" "rc=2" "a lists b's runtime dir"
out=$(sh_a "python3 -c 'import socket,sys
s=socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); print(\"connected\")
except OSError as e:
    print(\"refused\", e.errno)' '$sock'")
t_contains "$out" "refused 13" "a connects to b's socket"
# B's X server without B's cookie: the connection setup is refused (the
# first byte of the server's answer is 0, Failed).
out=$(sh_a "python3 -c 'import socket,sys
s=socket.socket(socket.AF_UNIX)
s.connect(\"/tmp/.X11-unix/X\"+sys.argv[1])
s.sendall(b\"l\\0\\x0b\\0\\0\\0\\0\\0\\0\\0\\0\\0\")
print(\"x-status\", s.recv(1)[0])' $slot")
t_contains "$out" "x-status 0" "a uses b's display without its cookie"
out=$(sh_a "kill -TERM $bpid 2>&1; echo rc=\$?")
t_contains "$out" "rc=1" "a signals b's guestd"
kill -0 "$bpid" 2>/dev/null || t_fail "b's guestd died"
out=$(sh_a "cat /proc/$bpid/environ >/dev/null 2>&1; echo rc=\$?")
t_contains "$out" "rc=1" "a reads b's guestd environment"
t_eq "$(sh_b 'cat secret.txt')" "b-private" "b's file unchanged"
[ -e "$bhome/pwned" ] && t_fail "a's file landed in b's workspace"

# A's own files still work.
sh_a 'echo mine > own.txt' >/dev/null || t_fail "a's own write"
t_eq "$(sh_a 'cat own.txt')" "mine" "a reads its own file"

# Leftovers of A's commands end with A's stop; the uid stays A's.
sh_a 'setsid nohup sleep 1000 >/dev/null 2>&1 & echo started' >/dev/null
n=$(ps -o pid= -u "$ua" | wc -l)
[ "$n" -ge 2 ] || t_fail "a has $n processes"
ctl computer stop a >/dev/null || t_fail "stop a"
# Dead ones may wait as zombies for the reaper they were orphaned to.
t_eq "$(ps -o stat= -u "$ua" | grep -vc '^Z')" 0 \
    "a's live processes after its stop"
# Each start and stop so far swept its uid, and each sweep ended when
# nothing of the uid was alive (not after all its tries).
! grep -q 'event=local.sweep_incomplete' "$CTL_LOG" ||
    t_fail "a sweep gave up: $(grep sweep_incomplete "$CTL_LOG" | head -1)"
kill -0 "$bpid" 2>/dev/null || t_fail "b's guestd died with a's stop"
ctl_stop
ctl_start
t_eq "$(sh_a 'id -u')" "$ua" "a's uid after a restart"
t_eq "$(sh_a 'cat own.txt')" "mine" "a's file after a restart"
t_eq "$(sh_b 'id -u')" "$ub" "b's uid after a restart"

# A home the shared user wrote (an older release, or the range off)
# becomes the computer's own, whole, at its first start with a uid.
ctl_stop
ctl_start --local-uid-range off --allow-shared-user
ctl computer create c >/dev/null || t_fail "create c"
C="$CTL_DATA/computers/c"
ctl shell --computer c --bot cy -- 'mkdir -p d/e && echo old >d/e/f' \
    >/dev/null || t_fail "c's shared-user write"
t_eq "$(stat -c %U "$C/home/bots/cy/d/e/f")" nobody "c's file before"
ctl computer stop c >/dev/null || t_fail "stop c"
ctl_stop
ctl_start
uc=$(ctl shell --computer c --bot cy -- 'id -u')
[ "$uc" != "$ua" ] && [ "$uc" != "$ub" ] && [ "$uc" -ne 65534 ] ||
	t_fail "c's uid $uc"
t_eq "$(ctl shell --computer c --bot cy -- 'echo new >>d/e/f && cat d/e/f')" \
    "old
new" "c's old file is its own"
t_eq "$(find "$C/home" ! -user "$uc" | wc -l)" 0 "files of c not its own"
t_note "tenant-isolation ok"

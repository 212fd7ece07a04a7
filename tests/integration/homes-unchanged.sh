#!/bin/bash
# SPDX-License-Identifier: MIT
# C-8, C-9: a checkpoint when nothing changed moves no bytes: guestd says
# the tree still has the newest revision's fingerprint and the new
# revision is the same archive again (a hard link) with its own row.
# What a fingerprint of times could miss is still caught: a rewrite that
# keeps the size and the mtime (right after the last look, compared by
# content, or long after it, by its change time), and a file held by a
# shared writable mapping.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

ckpt() {	# the checkpoint's log line
	ctl checkpoint team >/dev/null || t_fail "checkpoint failed"
	grep "event=computer.checkpoint " "$CTL_LOG" | tail -1
}
t_re() {	# text ERE what
	printf '%s' "$1" | grep -Eq -- "$2" || t_fail "$3: /$2/ not in '$1'"
}
ino() { stat -c %i "$CTL_DATA/homes/team/rev-$1.tar"; }
member() { tar -xOf "$CTL_DATA/homes/team/rev-$1.tar" "$2"; }
as_owner() {	# run as the computer's user, as guestd does
	if [ "$(id -u)" -eq 0 ]; then
		setpriv --reuid="${OWNER%:*}" --regid="${OWNER#*:}" \
		    --clear-groups "$@"
	else
		"$@"
	fi
}
# Wait until the clock is 3 s past the change time of $1: the file is
# no longer "racy" (within guestd's 2 s margin) for the next look.
wait_settled() {
	_c=$(stat -c %Z "$1")
	_i=0
	while [ "$(date +%s)" -le $((_c + 3)) ]; do
		_i=$((_i + 1))
		[ "$_i" -le 200 ] || t_fail "the clock does not move"
		sleep 0.05
	done
}

ctl_start --home-keep 10
HOME_DIR="$CTL_DATA/computers/team/home"
r=$(api POST /v1/computers '{"id":"team","start":true}')
t_contains "$r" "201 " "computer created"
r=$(api POST /v1/tools/write_file '{"computer":"team","bot":"b","path":"bots/b/a.txt","content":"hello"}')
t_contains "$r" "200 " "a file written"
F="$HOME_DIR/bots/b/a.txt"
OWNER=$(stat -c %u:%g "$F")

t_re "$(ckpt)" "revision=1 .*unchanged=0" "the first checkpoint exports"
t_re "$(ckpt)" "revision=2 .*unchanged=1" "nothing changed: no export"
t_eq "$(ino 2)" "$(ino 1)" "revision 2 is revision 1's archive"
api GET /v1/computers/team/homes >/dev/null
t_eq "$(api_field revisions.0.sha256)" "$(api_field revisions.1.sha256)" \
    "the same sha256 recorded"

# Right after the last look (racy): same size, same mtime, new bytes.
m=$(stat -c %y "$F")
printf 'HELLO' > "$F"
touch -d "$m" "$F"
t_re "$(ckpt)" "revision=3 .*unchanged=0" "a racy rewrite is seen"
t_eq "$(member 3 bots/b/a.txt)" "HELLO" "revision 3 holds the new bytes"

# A racy file stays compared by its bytes: still unchanged.
wait_settled "$F"
t_re "$(ckpt)" "revision=4 .*unchanged=1" "the same bytes: no export"
# Long after a change, the change time tells.
as_owner sh -c "printf 'b' > '$HOME_DIR/bots/b/b.txt'"
wait_settled "$HOME_DIR/bots/b/b.txt"
t_re "$(ckpt)" "revision=5 .*unchanged=0" "a new file: export"
t_re "$(ckpt)" "revision=6 .*unchanged=1" "settled: no export"
m=$(stat -c %y "$F")
as_owner sh -c "printf 'HeLLo' > '$F'"
touch -d "$m" "$F"
t_re "$(ckpt)" "revision=7 .*unchanged=0" "a settled rewrite is seen"
t_eq "$(member 7 bots/b/a.txt)" "HeLLo" "revision 7 holds the new bytes"

# A shared writable mapping writes without setting any time: while one
# is held, every checkpoint exports.
t_re "$(ckpt)" "revision=8 .*unchanged=1" "unchanged again"
mkfifo "$T/map-in"
# The system python: a per-user shim is not the computer user's to run.
as_owner /usr/bin/python3 -c 'import mmap, sys
f = open(sys.argv[1], "r+b")
m = mmap.mmap(f.fileno(), 0)
print("mapped", flush=True)
sys.stdin.read()' "$F" < "$T/map-in" > "$T/map-out" 2>&1 &
MAPPER=$!
exec 6>"$T/map-in"
i=0
until grep -q mapped "$T/map-out" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -le 200 ] || t_fail "the mapper did not start"
	sleep 0.05
done
t_re "$(ckpt)" "revision=9 .*unchanged=0" "a shared writable map: export"
t_re "$(ckpt)" "revision=10 .*unchanged=0" "still held: export again"
exec 6>&-
wait "$MAPPER"
t_re "$(ckpt)" "revision=11 .*unchanged=0" "the export after it ends"
t_re "$(ckpt)" "revision=12 .*unchanged=1" "then no export again"
t_eq "$(member 12 bots/b/a.txt)" "HeLLo" "the bytes kept"

# An import replaces the tree (new inodes): the next checkpoint exports
# (guestd knows without a walk), and the one after it is unchanged again.
t_contains "$(ctl restore team --revision 12)" "now revision 13" \
    "revision 12 restored"
t_re "$(ckpt)" "revision=14 .*unchanged=0" "after an import: export"
t_eq "$(member 14 bots/b/a.txt)" "HeLLo" "the restored bytes exported"
t_re "$(ckpt)" "revision=15 .*unchanged=1" "then no export again"

#!/bin/bash
# SPDX-License-Identifier: MIT
# An operator's restore whose guestd is killed (SIGKILL) at each step of
# the import's swap: the answer, the recorded revisions and the workspace
# agree.  A kill before the swap's point of no return leaves the old
# workspace and the restore fails (RESTORE_FAILED), recording nothing; a
# kill after it leaves the restored workspace (guestd's start-up finishes
# the swap) and the restore succeeds, recorded as a new revision, since
# the controller asks the restarted guestd which import its workspace
# holds (workspace.imported).  Real serve, local provider, real guestd;
# GUESTD_TEST_CRASH_AT, passed to every guestd serve starts, kills it at
# the named step.  Which steps a swap passes depends on whether guestd may
# write the workspace's parent (one exchange) or not (moving entries).
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

tool() {	# tool COMPUTER NAME JSON-ARGS
	api POST "/v1/tools/$2" "{\"computer\":\"$1\",\"bot\":\"alice\",$3}"
}
revs() {	# REV:CAUSE of computer $1, newest first
	api GET "/v1/computers/$1/homes" >/dev/null
	python3 -c 'import json,sys
print(" ".join(str(r["revision"])+":"+r["cause"] for r in
    json.load(open(sys.argv[1]))["revisions"]))' "$T/api.out"
}

reached_old=0
reached_new=0
n=0
# crash STEP WANT: a restore of revision 1 over revision 2's workspace,
# guestd killed at STEP; WANT old (fails, nothing recorded) or new.
crash() {
	n=$((n + 1))
	C="c$n"
	ctl_stop
	GUESTD_TEST_CRASH_AT=$1 ctl_start
	api POST /v1/computers "{\"id\":\"$C\"}" >/dev/null
	r=$(tool "$C" write_file '"path":"a.txt","content":"one"')
	t_contains "$r" "200 " "$1: write"
	t_contains "$(ctl checkpoint "$C")" "revision 1" "$1: revision 1"
	r=$(tool "$C" write_file '"path":"a.txt","content":"two"')
	t_contains "$(ctl checkpoint "$C")" "revision 2" "$1: revision 2"
	out=$(ctl restore "$C" --revision 1 2>&1)
	rc=$?
	GL="$CTL_DATA/computers/$C/guestd.log"
	if ! grep -q "workspace.test_crash step=$1" "$GL"; then
		# Not a step of this swap: a plain restore.
		t_eq "$rc" 0 "$1: an uninterrupted restore"
		t_note "$1: not a step of this swap"
		return
	fi
	r=$(tool "$C" read_file '"path":"a.txt"')
	if [ "$2" = old ]; then
		reached_old=1
		t_eq "$rc" 1 "$1: the restore fails"
		t_contains "$out" RESTORE_FAILED "$1: with its code"
		t_contains "$r" '"content":"two"' "$1: the old workspace"
		t_eq "$(revs "$C")" "2:operator 1:operator" "$1: nothing recorded"
	else
		reached_new=1
		t_eq "$rc" 0 "$1: the restore succeeds: $out"
		t_contains "$out" "now revision 3" "$1: recorded"
		t_contains "$r" '"content":"one"' "$1: the restored workspace"
		t_eq "$(revs "$C")" "3:restore:1 2:operator 1:operator" \
		    "$1: the revisions"
		grep -q "event=checkpoint.restore_settled computer=$C .*held=1" \
		    "$CTL_LOG" || t_fail "$1: not settled in the log"
	fi
	ls -A "$CTL_DATA/computers/$C/home" | grep -v '^\.rakazo-imported$' |
	    grep -q '^\.rakazo-' && t_fail "$1: the swap left guestd's names"
	ls -A "$CTL_DATA/computers/$C" | grep -q '^\.home\.import-' &&
		t_fail "$1: the swap left a staging directory"
	t_note "$1: $2"
}

crash staged old
crash journal old
crash moving-out old
crash moved-out new
crash moving-in new
crash moved-in new
crash exchanged new
t_eq "$reached_old$reached_new" 11 "a step on each side of the swap"

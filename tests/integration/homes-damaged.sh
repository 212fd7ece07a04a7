#!/bin/bash
# SPDX-License-Identifier: MIT
# C-8, C-9, C-15 with a damaged archive (a flipped byte on the disk, the
# file's size kept): a checkpoint with nothing changed links the newest
# archive only when its sha256 still matches its row, else it exports,
# so one damaged archive never becomes every later revision; a stopped
# computer's files are not served from a damaged archive (a restore
# refuses it too); and a checkpoint of a computer whose guestd died says
# only what is true of the store.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
. "${top_srcdir:-.}/tests/lib-homes.sh"

tool() {	# tool NAME JSON-ARGS (computer team, bot alice)
	api POST "/v1/tools/$1" "{\"computer\":\"team\",\"bot\":\"alice\",$2}"
}
ino() { stat -c %i "$CTL_DATA/homes/team/rev-$1.tar"; }
# damage REV: the first byte of the file's content flipped in place.
damage() {
	_f="$CTL_DATA/homes/team/rev-$1.tar"
	_o=$(grep -boa 'hello, stored' "$_f" | head -1 | cut -d: -f1)
	[ -n "$_o" ] || t_fail "the content is not in revision $1"
	printf 'J' | dd of="$_f" bs=1 seek="$_o" conv=notrunc 2>/dev/null
}

ctl_start --home-keep 10
api POST /v1/computers '{"id":"team"}' >/dev/null
r=$(tool write_file '"path":"bots/alice/notes.txt","content":"hello, stored"')
t_contains "$r" "200 " "a file written"
t_contains "$(ctl checkpoint team)" "revision 1" "revision 1"

# 1. The newest archive damaged: the unchanged checkpoint exports.
damage 1
t_contains "$(ctl checkpoint team)" "revision 2" "revision 2"
grep "event=computer.checkpoint " "$CTL_LOG" | tail -1 | grep -q unchanged=0 ||
	t_fail "a damaged archive was linked as an unchanged revision"
grep -q "event=checkpoint.unchanged_damaged .*revision=1" "$CTL_LOG" ||
	t_fail "the damaged archive is not named in the log"
[ "$(ino 2)" != "$(ino 1)" ] || t_fail "revision 2 is revision 1's file"
api GET /v1/computers/team/homes >/dev/null
h=$(sha256sum < "$CTL_DATA/homes/team/rev-2.tar" | cut -c1-64)
t_eq "$h" "$(api_field revisions.0.sha256)" "revision 2 is whole"
grep -aq 'hello, stored' "$CTL_DATA/homes/team/rev-2.tar" ||
	t_fail "revision 2 lacks the workspace's bytes"
# A whole archive is still linked.
t_contains "$(ctl checkpoint team)" "revision 3" "revision 3"
grep "event=computer.checkpoint " "$CTL_LOG" | tail -1 | grep -q unchanged=1 ||
	t_fail "a whole archive was not linked"
t_eq "$(ino 3)" "$(ino 2)" "revision 3 is revision 2's archive"
r=$(ctl restore team --revision 1 2>&1)
t_contains "$r" RESTORE_FAILED "the damaged revision 1 is not restored"
t_contains "$(ctl restore team --revision 2)" "now revision 4" \
    "revision 2 restores"

# 2. A stopped computer's files: not from a damaged archive.
r=$(api POST /v1/computers/team/stop '{}')
t_contains "$r" '"state":"stopped"' "stopped"
api GET /v1/computers/team/homes >/dev/null
LAST=$(api_field revisions.0.revision)
r=$(tool read_file '"path":"bots/alice/notes.txt"')
t_contains "$r" '"content":"hello, stored"' "a whole revision is served"
damage "$LAST"
r=$(tool read_file '"path":"bots/alice/notes.txt"')
t_contains "$r" HOME_STORE_ERROR "a damaged revision's file is refused"
t_contains "$r" "damaged" "saying why"
t_not_contains "$r" "Jello" "the damaged bytes are not served"
r=$(tool list_files '"path":"bots/alice"')
t_contains "$r" HOME_STORE_ERROR "a damaged revision is not listed"
t_not_contains "$r" '"stored"' "no stored answer"

# 3. guestd killed: the checkpoint says what the store holds, no more.
ctl_sql "DELETE FROM home_revisions WHERE computer='team' AND revision=$LAST"
r=$(api POST /v1/computers/team/start '{}')
t_contains "$r" "200 " "started again"
r=$(tool read_file '"path":"bots/alice/notes.txt"')
t_contains "$r" '"content":"hello, stored"' "the computer works again"
GP=$(guestd_pid)
[ -n "$GP" ] || t_fail "no guestd"
kill -9 "$GP"
# Dead once gone or a zombie (serve, its parent, reaps it when it will).
i=0
while [ -e "/proc/$GP" ] &&
    [ "$(awk '{print $3}' "/proc/$GP/stat" 2>/dev/null)" != Z ]; do
	i=$((i + 1))
	[ "$i" -le 500 ] || t_fail "guestd did not die"
	sleep 0.01
done
api GET /v1/computers/team/homes >/dev/null
NEWEST=$(api_field revisions.0.revision)
r=$(ctl checkpoint team 2>&1)
t_contains "$r" CHECKPOINT_FAILED "no checkpoint without a machine"
t_not_contains "$r" "saved when it stopped" "no claim of a save"
t_contains "$r" "not running" "it says the machine does not run"
t_contains "$r" "newest stored revision is $NEWEST" "and what the store holds"

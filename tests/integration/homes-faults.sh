#!/bin/bash
# SPDX-License-Identifier: MIT
# C-9 under faults, with the local provider and real guestd: guestd
# killed (-9) mid-checkpoint leaves the previous revision current and
# whole, and the next checkpoint succeeds; rakazoctl serve killed (-9)
# between the archive's commit and its row leaves no current half
# revision, and the restarted serve removes the leftover; two serve
# processes checkpointing one computer at once make one whole revision
# each, never the same number twice.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
. "${top_srcdir:-.}/tests/lib-homes.sh"

# Every revision row's sha256 is its archive's.
leftovers() {
	ls -a "$CTL_DATA/homes/team" | grep -c '^\.put-'
}

ctl_start
api POST /v1/computers '{"id":"team"}' >/dev/null
api POST /v1/tools/write_file '{"computer":"team","bot":"alice","path":"a.txt","content":"one"}' >/dev/null
t_contains "$(ctl checkpoint team)" "revision 1" "baseline revision"

# 1. guestd killed in the middle of a checkpoint.
head -c 150000000 /dev/urandom > "$T/big"
r=$(curl -s -o /dev/null -w '%{http_code}' -X PUT \
    -H "Authorization: Bearer $(cat "$CTL_TOKEN")" --data-binary @"$T/big" \
    "$CTL_URL/v1/computers/team/files?bot=alice&path=big.bin")
rm -f "$T/big"
t_eq "$r" 200 "a large file to export"
GP=$(guestd_pid)
[ -n "$GP" ] || t_fail "no guestd"
ctl checkpoint team > "$T/ck1.out" 2>&1 &
CK=$!
i=0
until [ -n "$(find "$CTL_DATA/homes/team" -name '.put-*' -size +1M 2>/dev/null)" ]; do
	i=$((i + 1))
	[ "$i" -le 2000 ] || t_fail "the checkpoint never started writing"
	sleep 0.01
done
kill -9 "$GP"
wait "$CK"
t_eq "$?" 1 "the interrupted checkpoint failed"
t_contains "$(cat "$T/ck1.out")" CHECKPOINT_FAILED "with a stable code"
t_eq "$(revs)" "1:operator" "revision 1 is still the current one"
check_whole "after guestd died"
t_eq "$(leftovers)" 0 "the half archive is gone"
t_contains "$(api GET '/v1/computers/team/activity?limit=1000')" \
    '"ok":false' "a failed checkpoint event"
# The next call restarts guestd on the same workspace; the next save works.
r=$(api POST /v1/tools/read_file '{"computer":"team","bot":"alice","path":"a.txt"}')
t_contains "$r" '"content":"one"' "the computer works again"
t_contains "$(ctl checkpoint team)" "revision 2" "the next checkpoint succeeds"
check_whole "after the next checkpoint"

# 2. serve killed after the archive's commit, before its row.
ctl_stop
RAKAZO_TEST_CRASH_AT=checkpoint-committed ctl_start
ctl checkpoint team > "$T/ck2.out" 2>&1 && t_fail "the serve did not die"
wait "$CTL_PID" 2>/dev/null
CTL_PID=""
[ -f "$CTL_DATA/homes/team/rev-3.tar" ] || t_fail "no committed archive left"
ctl_start
t_eq "$(revs)" "2:operator 1:operator" "no half revision is current"
[ ! -e "$CTL_DATA/homes/team/rev-3.tar" ] || t_fail "leftover kept"
t_eq "$(leftovers)" 0 "no temporary files"
t_contains "$(ctl checkpoint team)" "revision 3" "checkpoints go on"
check_whole "after the serve restart"

# 3. Two serve processes checkpoint one computer at once.
ctl_serve second "$T/second.log"
P2=$SERVE_PORT
T_KILL="$T_KILL $SERVE_PID"
[ -n "$P2" ] || t_fail "second serve did not start"
ctl checkpoint team > "$T/c1" 2>&1 &
A=$!
RAKAZO_URL="http://127.0.0.1:$P2" RAKAZO_API_TOKEN_FILE="$CTL_TOKEN" \
    "$RAKAZOCTL" checkpoint team > "$T/c2" 2>&1 &
B=$!
wait "$A" || t_fail "first checkpoint: $(cat "$T/c1")"
wait "$B" || t_fail "second checkpoint: $(cat "$T/c2")"
t_eq "$(cat "$T/c1" "$T/c2" | sed 's/.*revision \([0-9]*\).*/\1/' | sort | tr '\n' ' ')" \
    "4 5 " "one revision each, distinct"
t_eq "$(revs)" "5:operator 4:operator 3:operator" "three kept"
check_whole "after concurrent checkpoints"

#!/bin/bash
# SPDX-License-Identifier: MIT
# C-10 through the real server, guestd and a real S3 implementation
# (s3rver behind the SigV4-verifying front, on loopback).  With
# OBJECT_STORAGE_BUCKET set: a checkpoint is a sealed object
# homes/<id>/<revision> (the plaintext is not in it) and the content key
# file is made 0600; a computer whose machine and local cache are both
# deleted comes back byte-identical from the bucket; the next revision's
# upload deletes the previous object; a flipped byte, a truncated object,
# another home's and another revision's object are each refused with a
# stable code and nothing is restored; the reconciler deletes objects no
# computer owns and never the current one, also after serve was killed
# in the middle of an upload, between the upload and its row or between
# the row and the previous object's delete; a bucket unreachable at checkpoint time fails the
# checkpoint with a clear event and health says so; deleting the computer
# clears its wrapped key and its objects; a wrong S3 secret is a setup
# failure that /internal/health reports.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
. "${top_srcdir:-.}/tests/lib-homes.sh"
. "${top_srcdir:-.}/tests/lib-s3.sh"

s3_start
s3() { timeout 60 "$RAKAZOCTL" s3 "$@"; }
HOME_DIR="$CTL_DATA/computers/team/home"
objs() { s3 ls "homes/$1/" | awk '{print $2}' | tr '\n' ' '; }
# Wait (bounded) until the bucket's listing of homes/$1/ is $2.
wait_objs() {
	_deadline=$(($(date +%s) + 30))
	while [ "$(objs "$1")" != "$2" ]; do
		[ "$(date +%s)" -lt "$_deadline" ] ||
			t_fail "homes/$1/ is '$(objs "$1")', want '$2'"
		sleep 0.1
	done
}

ctl_start --reconcile-ms 300
grep -q 'event=home.content_key' "$CTL_LOG" || t_fail "no content key log"
t_eq "$(stat -c %a "$CTL_DATA/content.key")" 600 "content key mode"
ctl_wait_log 'event=home.object_store state=ok' 1 20
r=$(curl -s "$CTL_URL/internal/health")
t_contains "$r" '"home_store":{"backend":"object","state":"ok"}' "health"

api POST /v1/computers '{"id":"team"}' >/dev/null
api POST /v1/leases '{"computer":"team","bot":"alice","holder":"agent"}' >/dev/null
LA=$(api_field id)
r=$(api POST /v1/tools/write_file "{\"computer\":\"team\",\"bot\":\"alice\",\"lease\":\"$LA\",\"path\":\"bots/alice/notes.txt\",\"content\":\"plaintext-marker-31337\"}")
t_contains "$r" "200 " "write a file"
head -c 3000000 /dev/urandom > "$T/blob"
r=$(curl -s -o /dev/null -w '%{http_code}' -X PUT \
    -H "Authorization: Bearer $(cat "$CTL_TOKEN")" --data-binary @"$T/blob" \
    "$CTL_URL/v1/computers/team/files?bot=alice&lease=$LA&path=shared/blob.bin")
t_eq "$r" 200 "upload a binary file"
api DELETE "/v1/leases/$LA" >/dev/null

# A stop checkpoints: revision 1 is a sealed object in the bucket.
BEFORE=$(tree_sum "$HOME_DIR")
r=$(api POST /v1/computers/team/stop '{}')
t_contains "$r" '"state":"stopped"' "stopped"
t_eq "$(revs)" "1:stopped" "revision 1"
t_eq "$(objs team)" "homes/team/1 " "object of revision 1"
s3 get homes/team/1 "$T/obj1" || t_fail "raw get"
grep -q plaintext-marker-31337 "$T/obj1" && t_fail "plaintext in the object"
head -c 7 "$T/obj1" | grep -q '^RKZHOME' || true
t_eq "$(ctl_sql "SELECT length(home_key) FROM computers WHERE id='team'")" \
    80 "wrapped data key on the computer row"
grep -q 'VERIFIED PUT /rakazo-test/homes/team/1' "$S3_LOG" ||
	t_fail "upload not signed: $(cat "$S3_LOG")"

# Machine and cache both gone: the bucket brings it back byte-identical.
rm -rf "$CTL_DATA/computers/team" "$CTL_DATA/homes/team"
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"alice","command":"cat notes.txt"}')
t_contains "$r" 'plaintext-marker-31337' "restored from the bucket"
t_eq "$(tree_sum "$HOME_DIR")" "$BEFORE" "workspace byte-identical"
grep -q 'event=home.fetched computer=team revision=1' "$CTL_LOG" ||
	t_fail "not fetched from the bucket"
[ -f "$CTL_DATA/homes/team/rev-1.tar" ] || t_fail "cache not refilled"

# The next revision: its object, then the previous one deleted.
t_contains "$(ctl checkpoint team)" "team revision 2" "checkpoint"
t_eq "$(objs team)" "homes/team/2 " "previous object deleted"
r=$(api POST /v1/computers/team/stop '{}')
t_contains "$r" '"state":"stopped"' "stopped again"
t_eq "$(objs team)" "homes/team/3 " "revision 3 alone"
s3 get homes/team/3 "$T/good" || t_fail "get revision 3"

# Tampering: each refused with its code, nothing restored.
tamper() {	# what file code
	s3 put homes/team/3 "$2" >/dev/null || t_fail "put $1"
	rm -rf "$CTL_DATA/computers/team" "$CTL_DATA/homes/team"
	r=$(api POST /v1/tools/shell '{"computer":"team","bot":"alice","command":"cat notes.txt"}')
	t_not_contains "$r" 'plaintext-marker-31337' "$1: restored"
	ev=$(api GET '/v1/computers/team/activity?limit=1000')
	t_contains "$ev" "$3" "$1: refusal code"
	[ -e "$CTL_DATA/homes/team/rev-3.tar" ] && t_fail "$1: cached"
	[ -e "$HOME_DIR/bots/alice/notes.txt" ] && t_fail "$1: workspace"
	# A refused restore leaves the machine stopped: no new revision.
	t_eq "$(revs)" "3:stopped 2:operator 1:stopped" "$1: revisions"
}
python3 - "$T/good" "$T/flipped" "$T/cut" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
f = bytearray(b); f[len(f) // 2] ^= 1
open(sys.argv[2], 'wb').write(f)
open(sys.argv[3], 'wb').write(b[:65536 + 200])
PY
tamper "flipped byte" "$T/flipped" SEAL_AUTH_FAILED
tamper "truncated" "$T/cut" SEAL_
# Another home's object, another revision's, under team's name.
openssl rand -hex 32 > "$T/k"
chmod 600 "$T/k"
s3 put --seal other:3 --key "$T/k" homes/x/other "$T/blob" >/dev/null
s3 get homes/x/other "$T/other" && s3 rm homes/x/other
tamper "another home" "$T/other" SEAL_WRONG_OBJECT
s3 put --seal team:2 --key "$T/k" homes/x/rev2 "$T/blob" >/dev/null
s3 get homes/x/rev2 "$T/rev2" && s3 rm homes/x/rev2
tamper "another revision" "$T/rev2" SEAL_WRONG_OBJECT
# The good object back: restored.
s3 put homes/team/3 "$T/good" >/dev/null
rm -rf "$CTL_DATA/computers/team" "$CTL_DATA/homes/team"
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"alice","command":"cat notes.txt"}')
t_contains "$r" 'plaintext-marker-31337' "restored after the tampering"

# The reconciler: strays go, the current revision stays.
s3 put homes/team/99 "$T/good" >/dev/null
s3 put homes/ghost/1 "$T/good" >/dev/null
wait_objs ghost ""
wait_objs team "homes/team/3 "

# serve killed after the upload, before the row: the old revision stays
# current and the reconciler removes the object nobody owns.
ctl_stop
RAKAZO_TEST_CRASH_AT=checkpoint-committed ctl_start --reconcile-ms 300
ctl checkpoint team > "$T/ck.out" 2>&1 && t_fail "the serve did not die"
wait "$CTL_PID" 2>/dev/null
CTL_PID=""
t_eq "$(objs team)" "homes/team/3 homes/team/4 " "the killed upload's object"
ctl_start --reconcile-ms 300
t_eq "$(revs)" "3:stopped 2:operator 1:stopped" "the old revision is current"
wait_objs team "homes/team/3 "
# serve killed between the row and the previous object's delete: the
# restarted serve's reconciler deletes the superseded object.
ctl_stop
RAKAZO_TEST_CRASH_AT=checkpoint-recorded ctl_start --reconcile-ms 300
ctl checkpoint team > "$T/ck.out" 2>&1 && t_fail "the serve did not die"
wait "$CTL_PID" 2>/dev/null
CTL_PID=""
t_eq "$(objs team)" "homes/team/3 homes/team/4 " "both objects after the kill"
ctl_start --reconcile-ms 300
t_eq "$(revs)" "4:operator 3:stopped 2:operator 1:stopped" "revision 4 current"
wait_objs team "homes/team/4 "
api POST /v1/computers/team/stop '{}' >/dev/null
wait_objs team "homes/team/5 "
rm -rf "$CTL_DATA/computers/team" "$CTL_DATA/homes/team"
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"alice","command":"cat notes.txt"}')
t_contains "$r" 'plaintext-marker-31337' "restored after the restarts"

# The bucket unreachable at checkpoint time: a clear event, the old
# revision stays current, health says so; back, checkpoints go on.
s3_stop
out=$(ctl checkpoint team 2>&1) && t_fail "a checkpoint without the bucket"
t_contains "$out" "CHECKPOINT_FAILED" "checkpoint refused"
ev=$(api GET '/v1/computers/team/activity?limit=1000')
t_contains "$ev" "unreachable during" "the event says the bucket is unreachable"
t_eq "$(revs | cut -d' ' -f1)" "5:stopped" "revision 5 still current"
ctl_wait_log 'event=home.object_store state=failed' 1 20
t_contains "$(curl -s "$CTL_URL/internal/health")" CONNECT_FAILED \
    "health: unreachable"
s3_start "$S3_PORT"
ctl_wait_log 'event=home.object_store state=ok' 2 20
t_contains "$(ctl checkpoint team)" "team revision 6" "checkpoints go on"
wait_objs team "homes/team/6 "

# serve killed in the middle of an upload: no object and no row for it,
# revision 6 stays current and is what a restore brings back.
ctl_stop
RAKAZO_TEST_CRASH_AT=object-uploading ctl_start --reconcile-ms 300
ctl checkpoint team > "$T/ck.out" 2>&1 && t_fail "the serve did not die"
wait "$CTL_PID" 2>/dev/null
CTL_PID=""
ctl_start --reconcile-ms 300
t_eq "$(revs | cut -d' ' -f1)" "6:operator" "revision 6 still current"
wait_objs team "homes/team/6 "
api POST /v1/computers/team/stop '{}' >/dev/null
rm -rf "$CTL_DATA/computers/team" "$CTL_DATA/homes/team"
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"alice","command":"cat notes.txt"}')
t_contains "$r" 'plaintext-marker-31337' "restored after the killed upload"

# Deleting the computer: the wrapped key first, then its objects.
r=$(api DELETE /v1/computers/team '{"force":true}')
t_contains "$r" '"deleted":true' "deleted"
t_eq "$(objs team)" "" "objects of a deleted computer"

# A wrong secret: a setup failure, reported, never a silent fallback.
ctl_stop
OBJECT_STORAGE_SECRET_ACCESS_KEY=wrong-secret-x7 ctl_start --reconcile-ms 300
ctl_wait_log 'event=home.object_store state=failed' 1 20
r=$(curl -s -w ' %{http_code}' "$CTL_URL/internal/health")
t_contains "$r" '"state":"failed"' "health: failed"
t_contains "$r" 'OBJECT_STORE_DENIED' "health: denied"
t_contains "$r" ' 503' "health: 503"
t_not_contains "$r" 'wrong-secret-x7' "the secret in health"
t_not_contains "$(cat "$CTL_LOG")" 'wrong-secret-x7' "the secret in the log"
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# C-10's failures say what failed, with the stable codes rakazo-home(5)
# names (real serve and guestd, s3rver behind the SigV4 front): a
# checkpoint while the bucket cannot be reached fails with the object
# store's reason (never "Success."); a restore of a tampered object
# fails with RESTORE_FAILED whose cause is the seal's code, in the API's
# error and in the event; a home whose data key is gone fails with cause
# KEY_INVALID.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
. "${top_srcdir:-.}/tests/lib-homes.sh"
. "${top_srcdir:-.}/tests/lib-s3.sh"

s3_start
s3() { timeout 60 "$RAKAZOCTL" s3 "$@"; }

# Parts of 5 MiB: the archive below is a multipart upload.
export OBJECT_STORAGE_PART_SIZE=5M
ctl_start --reconcile-ms 300
ctl_wait_log 'event=home.object_store state=ok' 1 20
api POST /v1/computers '{"id":"team"}' >/dev/null
r=$(api POST /v1/tools/write_file '{"computer":"team","bot":"alice","path":"bots/alice/notes.txt","content":"plaintext-marker-31337"}')
t_contains "$r" "200 " "write a file"
head -c 7000000 /dev/urandom > "$T/blob"
r=$(curl -s -o /dev/null -w '%{http_code}' -X PUT \
    -H "Authorization: Bearer $(cat "$CTL_TOKEN")" --data-binary @"$T/blob" \
    "$CTL_URL/v1/computers/team/files?bot=alice&path=shared/blob.bin")
t_eq "$r" 200 "a file larger than a part"
t_contains "$(ctl checkpoint team)" "team revision 1" "revision 1"

# 1. The bucket unreachable (a part's upload fails): the object store's
# reason, not "Success.".
s3_stop
out=$(ctl checkpoint team 2>&1) && t_fail "a checkpoint without the bucket"
t_contains "$out" "CHECKPOINT_FAILED" "checkpoint refused"
t_not_contains "$out" "Success" "no success in a failure"
t_contains "$out" "CHECKPOINT_FAILED (CONNECT_FAILED)" "its cause"
t_contains "$out" "unreachable" "the reason is given"
t_eq "$(revs)" "1:operator" "revision 1 still current"
s3_start "$S3_PORT"
ctl_wait_log 'event=home.object_store state=ok' 2 20

# 2. A tampered object: RESTORE_FAILED, caused by SEAL_AUTH_FAILED.
s3 get homes/team/1 "$T/good" || t_fail "get revision 1"
python3 - "$T/good" "$T/flipped" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[len(b) // 2] ^= 1
open(sys.argv[2], 'wb').write(b)
PY
s3 put homes/team/1 "$T/flipped" >/dev/null || t_fail "put"
rm -f "$CTL_DATA/homes/team/rev-1.tar"
r=$(api POST /v1/computers/team/restore '{"revision":1}')
t_contains "$r" '"code":"RESTORE_FAILED"' "the restore fails"
t_eq "$(api_field error.cause)" SEAL_AUTH_FAILED "its cause, a stable code"
t_contains "$(ctl restore team --revision 1 2>&1)" \
    "RESTORE_FAILED (SEAL_AUTH_FAILED)" "the CLI names the cause"
ev=$(api GET '/v1/computers/team/activity?limit=1000')
t_contains "$ev" "RESTORE_FAILED (SEAL_AUTH_FAILED)" "so does the event"
t_eq "$(revs)" "1:operator" "nothing recorded"

# 3. The home's wrapped data key damaged: KEY_INVALID.
s3 put homes/team/1 "$T/good" >/dev/null || t_fail "put back"
rm -f "$CTL_DATA/homes/team/rev-1.tar"
K=$(ctl_sql "SELECT home_key FROM computers WHERE id='team'")
t_eq "${#K}" 80 "a wrapped key"
ctl_sql "UPDATE computers SET home_key='$(printf '%080d' 0)' WHERE id='team'"
r=$(api POST /v1/computers/team/restore '{"revision":1}')
t_contains "$r" '"code":"RESTORE_FAILED"' "no key: the restore fails"
t_eq "$(api_field error.cause)" KEY_INVALID "its cause, KEY_INVALID"
ctl_sql "UPDATE computers SET home_key='$K' WHERE id='team'"
r=$(api POST /v1/computers/team/restore '{"revision":1}')
t_contains "$r" "200 " "the key back: restored"
exit 0

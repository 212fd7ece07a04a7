#!/bin/bash
# SPDX-License-Identifier: MIT
# The object store client (controller/s3.c) through `rakazoctl s3`
# against a real S3 implementation (s3rver) behind a front that verifies
# every SigV4 signature: put/get/head/list/delete, a streamed PUT, a
# multipart upload of three parts coming back byte-identical, a list
# paged by continuation tokens, a wrong secret refused 403 with a clear
# error that does not show the secret, and the
# sealed format over the wire (round trip, another revision refused, a
# flipped byte refused and nothing left behind).
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-s3.sh"

s3_start
# Bounded: a call that hangs fails the test instead of holding it.
s3() { timeout 60 "$RAKAZOCTL" s3 "$@"; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

# Small object: put, head, get, list, delete.
printf 'hello, bucket\n' > "$T/small"
t_eq "$(s3 put notes/small "$T/small")" "14 notes/small" "put"
t_contains "$(s3 head notes/small)" "14 " "head size"
t_eq "$(s3 get notes/small -)" "hello, bucket" "get"
t_eq "$(s3 ls notes/)" "14 notes/small" "ls"
s3 rm notes/small || t_fail "rm"
t_eq "$(s3 ls notes/)" "" "ls after rm"
out=$(s3 get notes/small "$T/gone" 2>&1) && t_fail "get of a deleted key"
t_contains "$out" "NOT_FOUND" "get after rm"
s3 rm notes/small || t_fail "rm of a missing key is no error"

# Multipart: 12 MiB in 5 MiB parts is three parts, byte-identical back.
head -c $((12 * 1024 * 1024)) /dev/urandom > "$T/big"
t_eq "$(OBJECT_STORAGE_PART_SIZE=5M s3 put homes/big "$T/big")" \
    "12582912 homes/big" "multipart put"
grep -q 'VERIFIED PUT /rakazo-test/homes/big?partNumber=3&uploadId=' \
    "$S3_LOG" || t_fail "no third part: $(cat "$S3_LOG")"
grep -q 'VERIFIED POST /rakazo-test/homes/big?uploadId=' "$S3_LOG" ||
	t_fail "no CompleteMultipartUpload"
s3 get homes/big "$T/big.back" || t_fail "get big"
t_eq "$(sha "$T/big.back")" "$(sha "$T/big")" "multipart round trip"
# A part size S3 would refuse is a setup error, not a failed upload.
out=$(OBJECT_STORAGE_PART_SIZE=1M s3 put homes/x "$T/small" 2>&1) &&
	t_fail "1M parts accepted"
t_contains "$out" "CONFIG_INVALID" "small part size"

# The streamed PUT (length known, payload unsigned).
s3 put --stream homes/streamed "$T/big" >/dev/null || t_fail "stream put"
s3 get homes/streamed - | cmp -s - "$T/big" || t_fail "stream round trip"

# Pages: five keys two at a time.
for i in 1 2 3 4 5; do
	echo "$i" > "$T/p$i"
	s3 put "page/k$i" "$T/p$i" >/dev/null || t_fail "put page/k$i"
done
t_eq "$(s3 ls --max-keys 2 page/ | awk '{print $2}' | tr '\n' ' ')" \
    "page/k1 page/k2 page/k3 page/k4 page/k5 " "paged list"
t_eq "$(grep -c 'continuation-token=' "$S3_LOG")" 2 "continuation pages"

# Every request so far was signed and verified.
grep -q REFUSED "$S3_LOG" && t_fail "refused: $(grep REFUSED "$S3_LOG")"

# A wrong secret: 403 SignatureDoesNotMatch, exit 3, secret not shown.
out=$(OBJECT_STORAGE_SECRET_ACCESS_KEY=not-the-secret-x1 s3 ls 2>&1)
rc=$?
t_eq "$rc" 3 "wrong secret exit status"
t_contains "$out" "OBJECT_STORE_DENIED" "wrong secret code"
t_contains "$out" "SignatureDoesNotMatch (HTTP 403)" "wrong secret reason"
t_not_contains "$out" "not-the-secret-x1" "secret in the error"
t_not_contains "$out" "$S3_SK" "secret in the error"
grep -q 'REFUSED SignatureDoesNotMatch' "$S3_LOG" || t_fail "not refused"
out=$(OBJECT_STORAGE_ACCESS_KEY_ID=AKIDOTHER s3 ls 2>&1)
t_contains "$out" "InvalidAccessKeyId" "wrong key id"

# Settings: a bucket without credentials is a setup error.
out=$(env -u OBJECT_STORAGE_SECRET_ACCESS_KEY -u AWS_SECRET_ACCESS_KEY \
    "$RAKAZOCTL" s3 ls 2>&1) && t_fail "no secret accepted"
t_contains "$out" "CONFIG_INVALID" "missing secret"
# The AWS_* names work too.
t_eq "$(env -u OBJECT_STORAGE_ACCESS_KEY_ID \
    -u OBJECT_STORAGE_SECRET_ACCESS_KEY AWS_ACCESS_KEY_ID="$S3_AK" \
    AWS_SECRET_ACCESS_KEY="$S3_SK" "$RAKAZOCTL" s3 ls page/k1)" \
    "2 page/k1" "AWS_* names"

# Sealed over the wire (rakazo-home(5)).
openssl rand -hex 32 > "$T/data.key"
chmod 600 "$T/data.key"
SEAL="--seal home-1:7 --key $T/data.key"
# shellcheck disable=SC2086
s3 put $SEAL homes/home-1/7 "$T/big" >/dev/null || t_fail "sealed put"
s3 get homes/home-1/7 "$T/raw" || t_fail "raw get"
cmp -s "$T/raw" "$T/big" && t_fail "the object holds the plaintext"
# shellcheck disable=SC2086
s3 get $SEAL homes/home-1/7 "$T/open" || t_fail "sealed get"
t_eq "$(sha "$T/open")" "$(sha "$T/big")" "sealed round trip"
out=$(s3 get --seal home-1:8 --key "$T/data.key" homes/home-1/7 \
    "$T/wrong" 2>&1) && t_fail "another revision opened"
t_contains "$out" "SEAL_WRONG_OBJECT" "another revision"
[ -e "$T/wrong" ] && t_fail "a refused archive left a file"
# One flipped byte in the middle of the stored object.
python3 - "$T/raw" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
b[len(b) // 2] ^= 0x20
open(p, 'wb').write(b)
PY
s3 put homes/home-1/7 "$T/raw" >/dev/null || t_fail "tampered put"
# shellcheck disable=SC2086
out=$(s3 get $SEAL homes/home-1/7 "$T/tampered" 2>&1) &&
	t_fail "a flipped byte opened"
t_contains "$out" "SEAL_AUTH_FAILED" "flipped byte"
[ -e "$T/tampered" ] && t_fail "a tampered archive left a file"
# Unreachable: nothing listens on the port (connection refused), and a
# server that accepts and hangs up at once.  Each is a prompt
# CONNECT_FAILED (exit 3), never a hang: lws sees the hang-up on its dup
# of curl's socket and curl must still be told.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
out=$(OBJECT_STORAGE_ENDPOINT="http://127.0.0.1:$port" s3 ls 2>&1)
t_eq "$?" 3 "refused exit status"
t_contains "$out" "CONNECT_FAILED" "refused endpoint"
python3 -c '
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept(); c.recv(65536); c.close()
' "$T/closer.port" &
T_KILL="$T_KILL $!"
s3_wait_file "$T/closer.port" 10 "$!"
cport=$(cat "$T/closer.port")
for verb in "ls" "get notes/x -" "put notes/x $T/small"; do
	# shellcheck disable=SC2086
	out=$(OBJECT_STORAGE_ENDPOINT="http://127.0.0.1:$cport" s3 $verb 2>&1)
	t_eq "$?" 3 "hang-up exit status ($verb)"
	t_contains "$out" "CONNECT_FAILED" "hang-up ($verb)"
done
exit 0

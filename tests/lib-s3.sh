# SPDX-License-Identifier: MIT
# A real S3 implementation for a test (sourced after tests/lib.sh): npm
# s3rver on loopback behind tests/fixtures/s3-front.mjs, which verifies
# every request's SigV4 signature with the secret (s3rver alone does
# not).  s3_start exports the OBJECT_STORAGE_* settings rakazoctl reads;
# S3_LOG lists one VERIFIED or REFUSED line per request.

S3_BUCKET=rakazo-test
S3_AK=AKIDRAKAZOTEST
S3_SK=$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')
S3_LOG="$T/s3-front.log"
S3_DIR="$T/s3-data"

# tests/s3/node_modules from install-deps.sh, else a private npm ci.
s3_modules() {
	t_npm_modules s3 s3rver
	S3_MODULES=$NPM_MODULES
}

# Wait until FILE exists with content, SECS at most, failing the test
# early if the process PID (optional) dies.
s3_wait_file() {	# FILE SECS [PID]
	_deadline=$(($(date +%s) + $2))
	while [ ! -s "$1" ]; do
		[ -z "${3:-}" ] || kill -0 "$3" 2>/dev/null ||
			t_fail "process $3 died before writing $1"
		[ "$(date +%s)" -lt "$_deadline" ] ||
			t_fail "$1 not written in $2 s"
		sleep 0.05
	done
}

# s3_start [PORT]: a fresh front (on PORT again after s3_stop; the
# objects stay in S3_DIR).
s3_start() {
	s3_modules
	mkdir -p "$S3_DIR"
	rm -f "$T/s3.port"
	# s3rver's continuation tokens are DES, in OpenSSL 3's legacy provider.
	node --openssl-legacy-provider \
	    "$top_srcdir/tests/fixtures/s3-front.mjs" --modules "$S3_MODULES" \
	    --dir "$S3_DIR" --bucket "$S3_BUCKET" --access-key "$S3_AK" --secret "$S3_SK" --port-file "$T/s3.port" --port "${1:-0}" \
	    --log "$S3_LOG" 2>"$T/s3-front.err" &
	S3_PID=$!
	T_KILL="$T_KILL $S3_PID"
	# Ready when the port file appears (written whole), 30 s at most.
	_deadline=$(($(date +%s) + 30))
	while [ ! -s "$T/s3.port" ]; do
		kill -0 "$S3_PID" 2>/dev/null ||
			t_fail "s3 front died: $(cat "$T/s3-front.err")"
		[ "$(date +%s)" -lt "$_deadline" ] ||
			t_fail "s3 front not ready in 30 s"
		sleep 0.05
	done
	S3_PORT=$(cat "$T/s3.port")
	export OBJECT_STORAGE_BUCKET="$S3_BUCKET"
	export OBJECT_STORAGE_ENDPOINT="http://127.0.0.1:$S3_PORT"
	export OBJECT_STORAGE_ACCESS_KEY_ID="$S3_AK"
	export OBJECT_STORAGE_SECRET_ACCESS_KEY="$S3_SK"
	export OBJECT_STORAGE_REGION=us-east-1
	unset OBJECT_STORAGE_PART_SIZE OBJECT_STORAGE_ADDRESSING
}

# The bucket unreachable: the front stops (s3_start "$S3_PORT" brings it
# back on the same port).
s3_stop() {
	local i
	kill "$S3_PID" 2>/dev/null
	# Bounded: a server that ignores SIGTERM gets SIGKILL after 10 s.
	for i in $(seq 100); do
		kill -0 "$S3_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$S3_PID" 2>/dev/null
	wait "$S3_PID" 2>/dev/null
}

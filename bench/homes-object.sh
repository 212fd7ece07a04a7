#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The object home store (C-10): checkpoint and restore of a ~BENCH_MB MiB
# (default 256) home through a real S3 server, against the obvious shell
# pipeline on the same server in the same run.
#
#   checkpoint:  rakazoctl checkpoint (guestd's export into the cache,
#                sealed in 64 KiB AES-256-GCM segments, uploaded as a
#                multipart object, the row, the previous object deleted)
#   baseline:    tar -c | openssl enc -aes-256-ctr | curl --aws-sigv4 -T -
#   restore:     the first call after the machine and the cache were
#                wiped: a machine started, the object fetched, opened
#                while it streams into the cache, imported by guestd
#   baseline:    curl --aws-sigv4 | openssl enc -d -aes-256-ctr | tar -x
#
# The server is npm s3rver behind tests/fixtures/s3-front.mjs (which
# checks every SigV4 signature), both on loopback; it needs tests/s3's
# node_modules (packaging/install-deps.sh).  BENCH_REPS (default 3)
# repetitions, interleaved.  Prints medians, throughputs, the ratios
# (target: checkpoint >= 0.8 of the baseline's throughput) and serve's
# peak memory (VmHWM).  Not part of make check.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

MB=${BENCH_MB:-256}
REPS=${BENCH_REPS:-3}
MODULES="$BENCH_TOP/tests/s3"
[ -f "$MODULES/node_modules/s3rver/package.json" ] ||
    b_die "no s3rver in tests/s3/node_modules: run packaging/install-deps.sh"
free_mb=$(df -Pm "$B_T" | awk 'NR == 2 { print $4 }')
[ "$free_mb" -ge $((MB * 8)) ] ||
    b_die "needs $((MB * 8)) MiB free under $B_T, has $free_mb"

BUCKET=rakazo-bench
AK=AKIDRAKAZOBENCH
SK=$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')
node --openssl-legacy-provider "$BENCH_TOP/tests/fixtures/s3-front.mjs" \
    --modules "$MODULES" --dir "$B_T/s3" --bucket "$BUCKET" \
    --access-key "$AK" --secret "$SK" --port-file "$B_T/s3.port" \
    2>"$B_T/s3.err" &
B_PID[s3]=$!
for _ in $(seq 1 600); do
	[ -s "$B_T/s3.port" ] && break
	kill -0 "${B_PID[s3]}" 2>/dev/null || b_die "s3 front: $(cat "$B_T/s3.err")"
	sleep 0.05
done
[ -s "$B_T/s3.port" ] || b_die "s3 front not ready"
S3_URL="http://127.0.0.1:$(cat "$B_T/s3.port")"
export OBJECT_STORAGE_BUCKET=$BUCKET OBJECT_STORAGE_ENDPOINT=$S3_URL \
    OBJECT_STORAGE_ACCESS_KEY_ID=$AK OBJECT_STORAGE_SECRET_ACCESS_KEY=$SK \
    OBJECT_STORAGE_REGION=us-east-1

DATA="$B_T/data"
TOK="$B_T/api-token"
LOG="$B_T/serve.log"
head -c 24 /dev/urandom | base64 | tr '+/' '-_' > "$TOK"
chmod 600 "$TOK"
mkfifo "$B_T/ctl-ready"
"$RAKAZOCTL" serve --listen 127.0.0.1:0 --data-dir "$DATA" \
    --token-file "$TOK" --guestd "$GUESTD" --home-keep 2 \
    --ready-file "$B_T/ctl-ready" --log-level info >"$LOG" 2>&1 &
B_PID[serve]=$!
exec 5<>"$B_T/ctl-ready"
read -t 30 -r PORT <&5 || b_die "rakazoctl serve did not start"
exec 5<&-
URL="http://127.0.0.1:$PORT"
trap 'b_stop_serve_guestds; b_cleanup' EXIT
ctl() { RAKAZO_URL="$URL" RAKAZO_API_TOKEN_FILE="$TOK" "$RAKAZOCTL" "$@"; }
api() {
	curl -s -o "$B_T/api.out" -w '%{http_code}' -X "$1" \
	    -H "Authorization: Bearer $(cat "$TOK")" \
	    -H 'Content-Type: application/json' ${3+--data-binary "$3"} \
	    "$URL$2"
}
[ "$(api POST /v1/computers '{"id":"bench","start":true}')" = 201 ] ||
    b_die "cannot create the computer: $(cat "$B_T/api.out")"
HOME_DIR="$DATA/computers/bench/home"
OWNER=$(stat -c %u:%g "$HOME_DIR")
hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"; }

echo "bench: building a ~$MB MiB home"
mkdir -p "$HOME_DIR/shared/data" "$HOME_DIR/bots/alice/src"
head -c $((2000 * 4096)) /dev/urandom |
    split -b 4096 -a 4 -d - "$HOME_DIR/bots/alice/src/f"
rest=$((MB * 1048576 - 2000 * 4096))
for i in $(seq 1 64); do
	head -c $((rest / 64)) /dev/urandom > "$HOME_DIR/shared/data/part-$i.bin"
done
chown -R "$OWNER" "$HOME_DIR"
bytes=$(du -sb "$HOME_DIR" | awk '{ print $1 }')
fingerprint() {
	(cd "$1" && find bots/alice shared -type f -printf '%p\0' |
	    sort -z | xargs -0 sha1sum | sha1sum | cut -c1-40)
}
want=$(fingerprint "$HOME_DIR")

KEY=$(openssl rand -hex 32)
IV=$(openssl rand -hex 16)
SIGV4=(--aws-sigv4 "aws:amz:us-east-1:s3" --user "$AK:$SK"
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")
us() { echo "${EPOCHREALTIME/./}"; }
run_ckpt() { ctl checkpoint bench >/dev/null || b_die "checkpoint failed"; }
run_base_up() {
	tar -C "$HOME_DIR" -cf - . |
	    openssl enc -aes-256-ctr -K "$KEY" -iv "$IV" |
	    curl -sf "${SIGV4[@]}" -T - "$S3_URL/$BUCKET/base/home" >/dev/null ||
	    b_die "baseline upload failed"
}
run_base_down() {
	rm -rf "$B_T/x"
	mkdir "$B_T/x"
	curl -sf "${SIGV4[@]}" "$S3_URL/$BUCKET/base/home" |
	    openssl enc -d -aes-256-ctr -K "$KEY" -iv "$IV" |
	    tar -C "$B_T/x" -xf - || b_die "baseline download failed"
}
# Untimed: the stop (which checkpoints) and the wipe of machine and cache.
pre_restore() {
	[ "$(api POST /v1/computers/bench/stop '{}')" = 200 ] ||
	    b_die "stop failed: $(cat "$B_T/api.out")"
	rm -rf "$HOME_DIR" "$DATA/homes/bench"
	sync
}
# Timed: the first call starts a machine, fetches, opens and imports.
run_restore() {
	[ "$(api POST /v1/tools/write_file \
	    '{"computer":"bench","bot":"b","path":"bots/b/x","content":"x"}')" = 200 ] ||
	    b_die "the first call failed: $(cat "$B_T/api.out")"
}

echo "bench: warm-up"
run_ckpt
run_base_up
run_base_down
[ "$(fingerprint "$B_T/x")" = "$want" ] || b_die "the baseline copy differs"
pre_restore
run_restore
[ "$(fingerprint "$HOME_DIR")" = "$want" ] || b_die "the restored home differs"
grep -q "event=home.fetched computer=bench" "$LOG" ||
    b_die "the restore did not come from the bucket"
echo "bench: the restored home and the baseline copy are identical"

# CPU in clock ticks: the machine's (/proc/stat: all but idle and iowait)
# and the S3 server's (the node process).  Printed apart, because
# s3rver reads and writes a multipart object's parts once more when the
# upload completes (and hashes them), work a real bucket does not bill to
# the client, while the baseline's chunked PUT (which a real S3 would
# refuse: it needs a length) is stored as it arrives.
HZ=$(getconf CLK_TCK)
machine_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
# timed NAME CMD: wall time, the S3 server's CPU and everything else's.
timed() {
	local name=$1 t0 t1 a0 a1 s0 s1
	shift
	a0=$(machine_ticks); s0=$(b_ticks "${B_PID[s3]}"); t0=$(us)
	"$@"
	t1=$(us); a1=$(machine_ticks); s1=$(b_ticks "${B_PID[s3]}")
	echo $((t1 - t0)) >> "$B_T/t-$name"
	echo $((s1 - s0)) >> "$B_T/s-$name"
	echo $((a1 - a0 - (s1 - s0))) >> "$B_T/c-$name"
}
for f in ck bu rs bd; do : > "$B_T/t-$f"; : > "$B_T/s-$f"; : > "$B_T/c-$f"; done
for r in $(seq 1 "$REPS"); do
	echo "$r" > "$HOME_DIR/bots/alice/changed.txt"
	chown "$OWNER" "$HOME_DIR/bots/alice/changed.txt"
	timed ck run_ckpt
	timed bu run_base_up
	pre_restore
	timed rs run_restore
	timed bd run_base_down
	printf 'bench: rep %d: checkpoint %.2f s, baseline up %.2f s; restore %.2f s, baseline down %.2f s\n' \
	    "$r" "$(tail -1 "$B_T/t-ck")e-6" "$(tail -1 "$B_T/t-bu")e-6" \
	    "$(tail -1 "$B_T/t-rs")e-6" "$(tail -1 "$B_T/t-bd")e-6"
done
S_HWM=$(hwm "${B_PID[serve]}")
awk -v b="$bytes" -v reps="$REPS" -v ck="$(b_median < "$B_T/t-ck")" \
    -v bu="$(b_median < "$B_T/t-bu")" -v rs="$(b_median < "$B_T/t-rs")" \
    -v bd="$(b_median < "$B_T/t-bd")" -v sh="$S_HWM" -v hz="$HZ" \
    -v sck="$(b_median < "$B_T/s-ck")" -v cck="$(b_median < "$B_T/c-ck")" \
    -v sbu="$(b_median < "$B_T/s-bu")" -v cbu="$(b_median < "$B_T/c-bu")" \
    -v srs="$(b_median < "$B_T/s-rs")" -v crs="$(b_median < "$B_T/c-rs")" \
    -v sbd="$(b_median < "$B_T/s-bd")" -v cbd="$(b_median < "$B_T/c-bd")" 'BEGIN {
	mib = b / 1048576
	printf "\nobject home store: %.0f MiB, median of %d\n", mib, reps
	printf "  checkpoint (seal + upload)        %7.2f s %7.1f MiB/s\n", ck / 1e6, mib / (ck / 1e6)
	printf "  tar | openssl ctr | curl sigv4     %7.2f s %7.1f MiB/s\n", bu / 1e6, mib / (bu / 1e6)
	printf "  restore (fetch + open + import)   %7.2f s %7.1f MiB/s\n", rs / 1e6, mib / (rs / 1e6)
	printf "  curl sigv4 | openssl ctr | tar -x  %7.2f s %7.1f MiB/s\n", bd / 1e6, mib / (bd / 1e6)
	printf "  ratio checkpoint/baseline %.2f (target >= 0.8), restore/baseline %.2f\n", bu / ck, bd / rs
	printf "  CPU (s), the S3 server / everything else (clients, kernel):\n"
	printf "    checkpoint %.2f / %.2f, baseline up %.2f / %.2f\n", sck / hz, cck / hz, sbu / hz, cbu / hz
	printf "    restore    %.2f / %.2f, baseline down %.2f / %.2f\n", srs / hz, crs / hz, sbd / hz, cbd / hz
	printf "  serve peak memory (VmHWM) %d KiB\n", sh
}'

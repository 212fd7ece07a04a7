#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Home checkpoints and restores (C-8, C-9): how long does saving a
# computer's whole workspace into the home store, and bringing it back,
# take compared with plain tar of the same files on the same disk in the
# same run?
#
#   checkpoint:  rakazoctl checkpoint (guestd's export streamed by serve
#                into DATA_DIR/homes, hashed, fsynced, renamed, recorded)
#   baseline:    tar -cf FILE -C home .   (and then sync FILE: durable)
#   restore:     the first call after the machine's workspace was wiped:
#                serve starts a machine and imports the newest revision
#                before answering (its "computer.restore ms=" is the
#                import alone; the call's wall time also pays the start)
#   baseline:    tar -xf FILE -C fresh-dir   (and then sync -f: durable)
#   unchanged:   a checkpoint right after another, nothing changed
#
# The data: a ~BENCH_MB MiB (default 256) home of random bytes in ~7000
# files: 6000 of 4 KiB and 900 of 16 KiB in ~500-file directories (about
# 15%), the rest in 100 medium files.  BENCH_REPS (default 3) timed
# repetitions, interleaved, after one untimed warm-up of each.  Prints
# medians, throughputs, the ratios (the target is >= 0.8 of tar's
# throughput each way) and serve's and guestd's peak memory (VmHWM).
# A checkpoint is durable when it returns (fsynced, renamed, the
# directory fsynced) and plain tar -c is not: its file may still be in
# the page cache only.  So the checkpoint's anchor is tar -c then sync;
# the ratio against tar -c alone is printed too, marked as not durable.
# The same holds for a restore: guestd syncs the staged tree (syncfs)
# before it swaps it in, so its anchor is tar -x then sync -f of the
# copy's file system.
# Nothing is deleted between the timed steps: the previous tar copy and
# the wiped workspace are moved aside and removed when the bench ends.
# On an ext4 without a journal (as on some VMs) the inode allocator
# skips every inode freed in the last minute, scanning past each of
# them on every allocation: 7000 files deleted just before a timed step
# made that step up to 2.5 times slower, and unequally so for the two
# sides, since each side followed a different number of deletions.
# A machine replaced by a new one restores onto a fresh disk, which is
# the case this times.
# The page cache: both sides of a pair start from the same state.  A
# checkpoint and tar -c read the home either cold (every file's pages
# dropped first: a home a restore wrote and nobody read since, as
# guestd writes large files past the cache) or warm (every file read
# first: a home the bots just used); both are timed and printed.  A
# restore and tar -x read their archive cold (serve's revision is
# dropped from the cache as it is written; tar's file is dropped the
# same way) and write into a fresh directory.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

MB=${BENCH_MB:-256}
REPS=${BENCH_REPS:-3}

free_mb=$(df -Pm "$B_T" | awk 'NR == 2 { print $4 }')
need_mb=$((MB * (6 + 4 * REPS)))
[ "$free_mb" -ge "$need_mb" ] ||
    b_die "needs $need_mb MiB free under $B_T, has $free_mb"

# serve at log level info: its computer.restore line times the import.
DATA="$B_T/data"
TOK="$B_T/api-token"
LOG="$B_T/guestd-serve.log"
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
ctl() {
	RAKAZO_URL="$URL" RAKAZO_API_TOKEN_FILE="$TOK" "$RAKAZOCTL" "$@"
}
api() {	# METHOD PATH [JSON]: the HTTP status
	curl -s -o "$B_T/api.out" -w '%{http_code}' -X "$1" \
	    -H "Authorization: Bearer $(cat "$TOK")" \
	    -H 'Content-Type: application/json' ${3+--data-binary "$3"} \
	    "$URL$2"
}
[ "$(api POST /v1/computers '{"id":"bench","start":true}')" = 201 ] ||
    b_die "cannot create the computer: $(cat "$B_T/api.out")"
HOME_DIR="$DATA/computers/bench/home"
OWNER=$(stat -c %u:%g "$HOME_DIR")
as_owner() {	# run as the computer's user, as guestd does
	if [ "$(id -u)" -eq 0 ]; then
		setpriv --reuid="${OWNER%:*}" --regid="${OWNER#*:}" \
		    --clear-groups "$@"
	else
		"$@"
	fi
}
guestd_pid() {
	local d
	for d in /proc/[0-9]*; do
		if { tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null |
		    grep -q -- "--workspace $DATA/computers/bench/"; then
			echo "${d#/proc/}"
			return
		fi
	done
}
hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"; }

# fill DIR COUNT SIZE: COUNT files of SIZE bytes in DIR, ~500 per subdir.
fill() {
	local dir=$1 count=$2 size=$3 per=500 i=0 n
	while [ "$count" -gt 0 ]; do
		n=$((count < per ? count : per))
		mkdir -p "$dir/d$i"
		head -c $((n * size)) /dev/urandom |
		    split -b "$size" -a 3 -d - "$dir/d$i/f"
		count=$((count - n))
		i=$((i + 1))
	done
}
echo "bench: building a ~$MB MiB home in $HOME_DIR"
fill "$HOME_DIR/bots/alice/src" 6000 4096
fill "$HOME_DIR/shared/docs" 900 16384
mkdir -p "$HOME_DIR/shared/data"
rest=$((MB * 1048576 - 6000 * 4096 - 900 * 16384))
for i in $(seq 1 100); do
	head -c $((rest / 100)) /dev/urandom > "$HOME_DIR/shared/data/part-$i.bin"
done
chown -R "$OWNER" "$HOME_DIR"
nfiles=$(find "$HOME_DIR" -type f | wc -l)
bytes=$(du -sb "$HOME_DIR" | awk '{ print $1 }')
echo "bench: $nfiles files, $((bytes / 1048576)) MiB"
TARD="$B_T/tar"
mkdir -p "$TARD"
chown "$OWNER" "$TARD"

fingerprint() {
	(cd "$1" && find bots/alice shared -type f -printf '%p\0' |
	    sort -z | xargs -0 sha1sum | sha1sum | cut -c1-40)
}

us() { echo "${EPOCHREALTIME/./}"; }
# cache cold|warm PATH...: drop every file's pages (after a sync: dirty
# pages stay), or read every file once.
cache() {
	local how=$1
	shift
	sync
	if [ "$how" = warm ]; then
		find "$@" -type f -print0 | xargs -0 cat > /dev/null
		return
	fi
	find "$@" -type f -print0 | python3 -c '
import os, sys
for p in sys.stdin.buffer.read().split(b"\0"):
    if p:
        fd = os.open(p, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)'
}
run_ckpt() {
	ctl checkpoint bench >/dev/null || b_die "checkpoint failed"
}
run_tar_c() {
	as_owner tar -C "$HOME_DIR" -cf "$TARD/home.tar" .
}
# set_aside DIR: move DIR out of the way; it is removed at the end.
TRASH="$B_T/trash"
mkdir -p "$TRASH"
set_aside() {
	[ ! -e "$1" ] || mv "$1" "$(mktemp -d "$TRASH/XXXXXX")/"
}
run_tar_x_clean() {
	set_aside "$TARD/x"
	as_owner mkdir "$TARD/x"
}
run_tar_x() {
	as_owner tar -C "$TARD/x" -xf "$TARD/home.tar"
}
# The machine's workspace wiped, the next call restores it first.
run_restore() {	# prints "wall-us import-ms"
	local t0 t1 n
	[ "$(api POST /v1/computers/bench/stop '{}')" = 200 ] ||
	    b_die "stop failed: $(cat "$B_T/api.out")"
	set_aside "$HOME_DIR"
	n=$(grep -c "event=computer.restore " "$LOG" || true)
	sync
	t0=$(us)
	[ "$(api POST /v1/tools/write_file \
	    '{"computer":"bench","bot":"b","path":"bots/b/x","content":"x"}')" = 200 ] ||
	    b_die "the first call failed: $(cat "$B_T/api.out")"
	t1=$(us)
	[ "$(grep -c "event=computer.restore " "$LOG")" -gt "$n" ] ||
	    b_die "the first call did not restore"
	echo "$((t1 - t0)) $(grep "event=computer.restore " "$LOG" | tail -1 |
	    sed 's/.* ms=\([0-9]*\).*/\1/')"
}

echo "bench: warm-up"
want=$(fingerprint "$HOME_DIR")
run_ckpt
run_tar_c
run_tar_x_clean
run_tar_x
[ "$(fingerprint "$TARD/x")" = "$want" ] || b_die "the tar copy differs"
run_restore > /dev/null
[ "$(fingerprint "$HOME_DIR")" = "$want" ] || b_die "the restored home differs"
echo "bench: the restored home and the tar copy are identical to the source"

for f in ckpt unch tarc tarcs wckpt wtarc wtarcs tarx tarxs rwall rimp; do
	: > "$B_T/t-$f"
done
G_HWM=0
# time_ckpt FILE-PREFIX: a checkpoint of a changed home, then tar -c of
# it, each from the cache state STATE.
time_ckpt() {
	local pre=$1 state=$2 r=$3 t0 t1 t2
	echo "$r$pre" > "$HOME_DIR/bots/alice/changed.txt"
	chown "$OWNER" "$HOME_DIR/bots/alice/changed.txt"
	cache "$state" "$HOME_DIR"
	t0=$(us); run_ckpt; t1=$(us)
	echo $((t1 - t0)) >> "$B_T/t-${pre}ckpt"
	if [ -z "$pre" ]; then
		t0=$(us); run_ckpt; t1=$(us)
		echo $((t1 - t0)) >> "$B_T/t-unch"
	fi
	set_aside "$TARD/home.tar"
	cache "$state" "$HOME_DIR"
	t0=$(us); run_tar_c; t1=$(us); sync "$TARD/home.tar"; t2=$(us)
	echo $((t1 - t0)) >> "$B_T/t-${pre}tarc"
	echo $((t2 - t0)) >> "$B_T/t-${pre}tarcs"
}
for r in $(seq 1 "$REPS"); do
	time_ckpt "" cold "$r"
	time_ckpt w warm "$r"
	run_tar_x_clean
	cache cold "$TARD/home.tar"
	t0=$(us); run_tar_x; t1=$(us); sync -f "$TARD/x"; t2=$(us)
	echo $((t1 - t0)) >> "$B_T/t-tarx"
	echo $((t2 - t0)) >> "$B_T/t-tarxs"
	g=$(hwm "$(guestd_pid)")
	[ "$g" -le "$G_HWM" ] || G_HWM=$g
	run_restore > "$B_T/rr"
	read -r wall imp < "$B_T/rr"
	echo "$wall" >> "$B_T/t-rwall"
	echo $((imp * 1000)) >> "$B_T/t-rimp"
	printf 'bench: rep %d: checkpoint cold %.2f s, warm %.2f s (unchanged %.2f); tar -c cold %.2f s (then sync %.2f), warm %.2f s (then sync %.2f); restore %.2f s (import %.2f), tar -x %.2f s (then sync %.2f)\n' \
	    "$r" "$(tail -1 "$B_T/t-ckpt")e-6" "$(tail -1 "$B_T/t-wckpt")e-6" \
	    "$(tail -1 "$B_T/t-unch")e-6" \
	    "$(tail -1 "$B_T/t-tarc")e-6" "$(tail -1 "$B_T/t-tarcs")e-6" \
	    "$(tail -1 "$B_T/t-wtarc")e-6" "$(tail -1 "$B_T/t-wtarcs")e-6" \
	    "$wall"e-6 "$imp"e-3 "$(tail -1 "$B_T/t-tarx")e-6" \
	    "$(tail -1 "$B_T/t-tarxs")e-6"
done
g=$(hwm "$(guestd_pid)")
[ "$g" -le "$G_HWM" ] || G_HWM=$g
S_HWM=$(hwm "${B_PID[serve]}")

awk -v b="$bytes" -v n="$nfiles" -v reps="$REPS" \
    -v ck="$(b_median < "$B_T/t-ckpt")" -v un="$(b_median < "$B_T/t-unch")" \
    -v tc="$(b_median < "$B_T/t-tarc")" -v tcs="$(b_median < "$B_T/t-tarcs")" \
    -v wck="$(b_median < "$B_T/t-wckpt")" \
    -v wtc="$(b_median < "$B_T/t-wtarc")" \
    -v wtcs="$(b_median < "$B_T/t-wtarcs")" \
    -v tx="$(b_median < "$B_T/t-tarx")" -v txs="$(b_median < "$B_T/t-tarxs")" \
    -v rw="$(b_median < "$B_T/t-rwall")" \
    -v ri="$(b_median < "$B_T/t-rimp")" -v sh="$S_HWM" -v gh="$G_HWM" 'BEGIN {
	mib = b / 1048576
	printf "\nhome checkpoint/restore: %d files, %.0f MiB, median of %d\n", n, mib, reps
	printf "  checkpoint, home cold         %7.2f s  %7.1f MiB/s\n", ck / 1e6, mib / (ck / 1e6)
	printf "  tar -c, home cold             %7.2f s  %7.1f MiB/s\n", tc / 1e6, mib / (tc / 1e6)
	printf "  tar -c then sync, home cold   %7.2f s  %7.1f MiB/s\n", tcs / 1e6, mib / (tcs / 1e6)
	printf "  checkpoint, home warm         %7.2f s  %7.1f MiB/s\n", wck / 1e6, mib / (wck / 1e6)
	printf "  tar -c, home warm             %7.2f s  %7.1f MiB/s\n", wtc / 1e6, mib / (wtc / 1e6)
	printf "  tar -c then sync, home warm   %7.2f s  %7.1f MiB/s\n", wtcs / 1e6, mib / (wtcs / 1e6)
	printf "  checkpoint, nothing changed   %7.2f s  %7.1f MiB/s\n", un / 1e6, mib / (un / 1e6)
	printf "  restore (import)              %7.2f s  %7.1f MiB/s\n", ri / 1e6, mib / (ri / 1e6)
	printf "  restore (first call, start + import) %.2f s\n", rw / 1e6
	printf "  tar -x from the file          %7.2f s  %7.1f MiB/s\n", tx / 1e6, mib / (tx / 1e6)
	printf "  tar -x, then sync -f          %7.2f s  %7.1f MiB/s\n", txs / 1e6, mib / (txs / 1e6)
	printf "  throughput ratio checkpoint/(tar -c, then sync), cold  %5.2f  (both durable: the anchor)\n", tcs / ck
	printf "  throughput ratio checkpoint/(tar -c, then sync), warm  %5.2f  (both durable: the anchor)\n", wtcs / wck
	printf "  throughput ratio checkpoint/tar -c, cold / warm        %5.2f / %.2f  (tar not durable yet)\n", tc / ck, wtc / wck
	printf "  throughput ratio restore/(tar -x, then sync -f)        %5.2f  (both durable: the anchor; first call: %.2f)\n", txs / ri, txs / rw
	printf "  throughput ratio restore/tar -x                        %5.2f  (tar not durable yet; first call: %.2f)\n", tx / ri, tx / rw
	printf "  peak memory: serve %d KiB, guestd %d KiB (VmHWM)\n", sh, gh
}'

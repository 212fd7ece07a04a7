#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Workspace transfer: how long does moving a whole workspace from one
# guestd to another take, compared with the plain `tar -c | tar -x` of the
# same files on the same machine in the same run?
#
#   guestd:   rakazoctl guest --url A export | rakazoctl guest --url B import
#   baseline: tar -C src -cf - . | tar -C dst -xf -
#
# The data: a ~BENCH_MB MiB (default 1024) workspace of random bytes, about
# 20% in ~29000 small files (1-64 KiB, ~500 per directory), 10% in 32
# medium files and 70% in 4 large ones.  BENCH_REPS (default 5) timed
# repetitions of each, interleaved, after one untimed warm-up of each; the
# first guestd transfer is checked to be byte-identical.  Needs about
# 4 x BENCH_MB of free space under BENCH_DIR (default $TMPDIR or /tmp).
#
# Note: the import also removes the previous workspace it replaces (the
# baseline extracts into a fresh directory), so guestd is charged a little
# more work than tar.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

MB=${BENCH_MB:-1024}
REPS=${BENCH_REPS:-5}

free_mb=$(df -Pm "$B_T" | awk 'NR == 2 { print $4 }')
[ "$free_mb" -ge $((MB * 4)) ] ||
    b_die "needs $((MB * 4)) MiB free under $B_T, has $free_mb"

SRC="$B_T/a/rakazo-home"
DSTP="$B_T/b"
DST="$DSTP/rakazo-home"
TARP="$B_T/t"
b_mkdir "$B_T/a" "$SRC" "$DSTP" "$DST" "$TARP"

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

echo "bench: building a ~$MB MiB workspace in $SRC"
t0=${EPOCHREALTIME/./}
small=$((MB * 1024 * 1024 / 5))		# 20%
fill "$SRC/bots/alice/notes"     $((small * 5 / 100 / 1024))  1024
fill "$SRC/bots/bob/src"         $((small * 25 / 100 / 4096)) 4096
fill "$SRC/shared/docs"          $((small * 35 / 100 / 16384)) 16384
fill "$SRC/.browser-profiles/alice/Default/IndexedDB" \
    $((small * 35 / 100 / 65536)) 65536
mkdir -p "$SRC/shared/datasets" "$SRC/bots/alice/media"
medium=$((MB * 1024 * 1024 / 10 / 32))	# 10% in 32 files
for i in $(seq 1 32); do
	head -c "$medium" /dev/urandom > "$SRC/shared/datasets/part-$i.bin"
done
large=$((MB * 1024 * 1024 * 7 / 10 / 4))	# 70% in 4 files
for i in 1 2 3 4; do
	head -c "$large" /dev/urandom > "$SRC/bots/alice/media/big-$i.bin"
done
[ "$(id -u)" -ne 0 ] || chown -R "$B_USER" "$SRC"
nfiles=$(find "$SRC" -type f | wc -l)
bytes=$(du -sb "$SRC" | awk '{ print $1 }')
echo "bench: $nfiles files, $((bytes / 1048576)) MiB in $(( (${EPOCHREALTIME/./} - t0) / 1000000 )) s"

b_start_guestd a "$SRC"
b_start_guestd b "$DST"

# Content fingerprint of a tree: names, sizes and bytes of regular files.
fingerprint() {
	(cd "$1" && find . -type f ! -path './.rakazo-*' -printf '%P\0' |
	    sort -z | xargs -0 sha1sum | sha1sum | cut -c1-40)
}

run_guestd() {
	b_rk a export | b_rk b import
}

run_tar() {
	# shellcheck disable=SC2016 # expanded by the inner bash
	b_as_user bash -c 'tar -C "$1" -cf - . | tar -C "$2" -xf -' _ \
	    "$SRC" "$TARP/dst"
}

reset_tar() {
	rm -rf "$TARP/dst"
	b_mkdir "$TARP/dst"
}

echo "bench: warm-up"
reset_tar
run_tar
run_guestd
want=$(fingerprint "$SRC")
[ "$(fingerprint "$DST")" = "$want" ] ||
    b_die "the imported workspace differs from the exported one"
[ "$(fingerprint "$TARP/dst")" = "$want" ] ||
    b_die "the tar copy differs from the source"
echo "bench: both copies are identical to the source"

: > "$B_T/t-guestd"
: > "$B_T/t-tar"
for r in $(seq 1 "$REPS"); do
	reset_tar
	sync
	t0=${EPOCHREALTIME/./}
	run_tar
	t1=${EPOCHREALTIME/./}
	echo $((t1 - t0)) >> "$B_T/t-tar"
	sync
	t0=${EPOCHREALTIME/./}
	run_guestd
	t1=${EPOCHREALTIME/./}
	echo $((t1 - t0)) >> "$B_T/t-guestd"
	printf 'bench: rep %d: tar %.2f s, guestd %.2f s\n' "$r" \
	    "$(awk -v v="$(tail -n 1 "$B_T/t-tar")" 'BEGIN { print v / 1e6 }')" \
	    "$(awk -v v="$(tail -n 1 "$B_T/t-guestd")" 'BEGIN { print v / 1e6 }')"
done

mg=$(b_median < "$B_T/t-guestd")
mt=$(b_median < "$B_T/t-tar")
awk -v g="$mg" -v t="$mt" -v b="$bytes" -v n="$nfiles" -v r="$REPS" 'BEGIN {
	mib = b / 1048576
	printf "\nworkspace transfer: %d files, %.0f MiB, median of %d\n", n, mib, r
	printf "  guestd export|import   %8.2f s  %7.1f MiB/s\n", g / 1e6, mib / (g / 1e6)
	printf "  tar -c | tar -x        %8.2f s  %7.1f MiB/s\n", t / 1e6, mib / (t / 1e6)
	printf "  ratio guestd/tar       %8.2f\n", g / t
}'

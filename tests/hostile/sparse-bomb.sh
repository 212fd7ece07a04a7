#!/bin/bash
# SPDX-License-Identifier: MIT
# A small tar that declares huge sparse files (300 entries of 64 MiB, a
# few bytes of data each: 18.75 GiB in well under a megabyte) is refused
# by the default home size cap (16G) with TAR_TOO_LARGE, from the declared
# sizes, before the data of the entry that crosses it is written: the
# workspace is exactly as before and no staging tree is left.  A sparse
# entry under the cap imports with its holes kept as holes, and a cap set
# lower refuses a single entry whose holes alone pass it.
. "$top_srcdir/tests/lib.sh"
command -v tar >/dev/null || { echo "# SKIP: no tar"; exit 77; }
command -v python3 >/dev/null || { echo "# SKIP: no python3"; exit 77; }

mkdir -p "$T/src"
truncate -s 64M "$T/src/probe"
[ "$(stat -c %b "$T/src/probe")" -lt 64 ] ||
	{ echo "# SKIP: no holes in $T"; exit 77; }
rm -f "$T/src/probe"

t_start_guestd

mkdir -p "$WS/old/d"
echo keep > "$WS/old/d/f"
[ "$(id -u)" -eq 0 ] && chown -R "$T_USER" "$WS"
manifest() {
	(cd "$WS" && find . -mindepth 1 -printf '%P %y %m %s\n' | sort &&
	    find . -type f -print0 | sort -z | xargs -0 -r md5sum)
}
BEFORE=$(manifest)

# The hostile archive, built by GNU tar (pax, GNU.sparse 1.0).
python3 - "$T/src" <<'EOF' || t_fail "making the sparse files"
import os, sys
for i in range(1, 301):
    fd = os.open(os.path.join(sys.argv[1], "s%03d" % i),
                 os.O_WRONLY | os.O_CREAT, 0o644)
    os.pwrite(fd, b"data", 1000)
    os.ftruncate(fd, 64 << 20)
    os.close(fd)
EOF
(cd "$T/src" && tar --posix --sparse --sparse-version=1.0 \
    -cf "$T/bomb.tar" s*) || t_fail "building the bomb"
size=$(stat -c %s "$T/bomb.tar")
t_note "bomb: $size bytes declaring 300 x 64 MiB"
[ "$size" -lt $((2 * 1024 * 1024)) ] || t_fail "GNU tar wrote the holes"

df0=$(df -Pk "$T" | awk 'NR == 2 { print $3 }')
if err=$(rk import < "$T/bomb.tar" 2>&1); then
	t_fail "the sparse bomb was imported"
fi
t_contains "$err" TAR_TOO_LARGE "sparse bomb"
t_contains "$err" "home size cap" "sparse bomb's reason"
t_eq "$(manifest)" "$BEFORE" "sparse bomb: workspace changed"
t_eq "$(ls -A "$T" | grep -c '\.import-')" 0 "staging left beside"
t_eq "$(ls -A "$WS" | grep -c '^\.rakazo-')" 0 "staging left inside"
df1=$(df -Pk "$T" | awk 'NR == 2 { print $3 }')
t_note "disk used before and after: $df0 KiB, $df1 KiB"

# One sparse entry of 1 GiB (refused before for its holes) is a home
# well under the cap: it imports, and its holes stay holes.
rm -rf "$T/one" && mkdir "$T/one"
truncate -s 1G "$T/one/big"
printf 'tail' | dd of="$T/one/big" bs=1 seek=$((1024 * 1024 * 1024 - 4)) \
    conv=notrunc 2>/dev/null
(cd "$T/one" && tar --posix --sparse -cf "$T/one.tar" big) ||
	t_fail "building one.tar"
rk import < "$T/one.tar" || t_fail "a 1 GiB sparse file was refused"
t_eq "$(stat -c %s "$WS/big")" $((1024 * 1024 * 1024)) "sparse size"
blocks=$(stat -c %b "$WS/big")
[ "$blocks" -lt 1024 ] || t_fail "the holes were written: $blocks blocks"
t_eq "$(tail -c 4 "$WS/big")" tail "sparse file's data"
[ -e "$WS/old" ] && t_fail "the import did not replace the workspace"

# A lower cap counts a single entry's holes.
kill "$GUESTD_PID"
wait "$GUESTD_PID"
GUESTD_PID=
t_start_guestd --home-max-bytes 512M
BEFORE=$(manifest)
if err=$(rk import < "$T/one.tar" 2>&1); then
	t_fail "a 1 GiB sparse file passed a 512M cap"
fi
t_contains "$err" TAR_TOO_LARGE "one sparse entry past the cap"
t_eq "$(manifest)" "$BEFORE" "one sparse entry: workspace changed"
exit 0

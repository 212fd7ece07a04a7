#!/bin/bash
# SPDX-License-Identifier: MIT
# Sparse files both ways, and the home size cap on export (G-28):
#  - a 2 GiB file that is one hole exports as a sparse entry (a tiny
#    archive, not 2 GiB of zeros) and restores as a hole (few blocks);
#  - a file of data and holes keeps both, byte for byte;
#  - GNU tar reads the export, sparse entries included;
#  - a home whose file sizes (holes counted) pass --home-max-bytes fails
#    its export TAR_TOO_LARGE naming the file, with no end-of-archive
#    marker, instead of a checkpoint a restore would refuse.
. "$top_srcdir/tests/lib.sh"

command -v tar >/dev/null || { echo "# SKIP: no tar"; exit 77; }
F="$T/files"
mkdir -p "$F"

# The file system must keep holes for any of this to mean something.
truncate -s 64M "$F/probe"
[ "$(stat -c %b "$F/probe")" -lt 64 ] ||
	{ echo "# SKIP: $F has no holes"; exit 77; }
truncate -s 64M "$WS/probe"
[ "$(stat -c %b "$WS/probe")" -lt 64 ] ||
	{ echo "# SKIP: the workspace has no holes"; exit 77; }
rm -f "$WS/probe"

t_start_guestd --home-max-bytes 3G

mkdir -p "$WS/big"
truncate -s 2G "$WS/big/holes"
# 1 MiB of data, a 5 MiB hole, 64 KiB of data, and a hole to 16 MiB.
head -c 1048576 /dev/urandom > "$WS/big/mixed"
head -c 65536 /dev/urandom |
	dd of="$WS/big/mixed" bs=1M seek=6 conv=notrunc 2>/dev/null
truncate -s 16M "$WS/big/mixed"
echo plain > "$WS/plain"
[ "$(id -u)" -eq 0 ] && chown -R "$T_USER" "$WS"
cp --sparse=always "$WS/big/mixed" "$F/mixed.want"

rk export > "$F/ws.tar" || t_fail "export failed"
size=$(stat -c %s "$F/ws.tar")
t_note "archive: $size bytes for 2 GiB + 16 MiB of apparent size"
[ "$size" -lt $((4 * 1024 * 1024)) ] ||
	t_fail "the export carried the holes: $size bytes"

# GNU tar reads it: names, sizes, and the data at its offsets.
tar -tvf "$F/ws.tar" > "$F/list" || t_fail "GNU tar cannot list the export"
grep -q ' 2147483648 .* big/holes$' "$F/list" || t_fail "big/holes listed"
grep -q ' 16777216 .* big/mixed$' "$F/list" || t_fail "big/mixed listed"
grep -q 'GNUSparseFile' "$F/list" && t_fail "GNU tar saw the raw sparse names"
mkdir "$F/x"
tar -xSf "$F/ws.tar" -C "$F/x" || t_fail "GNU tar cannot extract the export"
cmp "$F/x/big/mixed" "$F/mixed.want" || t_fail "GNU tar: mixed differs"
t_eq "$(stat -c %s "$F/x/big/holes")" 2147483648 "GNU tar: holes' size"

# The restore keeps the holes.
rm -rf "${WS:?}/big"
rk import < "$F/ws.tar" || t_fail "import failed"
t_eq "$(stat -c %s "$WS/big/holes")" 2147483648 "restored size"
blocks=$(stat -c %b "$WS/big/holes")
[ "$blocks" -lt 64 ] || t_fail "restored 2 GiB hole takes $blocks blocks"
cmp "$WS/big/mixed" "$F/mixed.want" || t_fail "restored mixed differs"
blocks=$(stat -c %b "$WS/big/mixed")
# 1 MiB + 64 KiB of data: 2176 blocks, some slack for the file system.
[ "$blocks" -lt 8192 ] || t_fail "restored mixed takes $blocks blocks"
t_eq "$(cat "$WS/plain")" plain "plain file"

# Past the cap (3G): 2 GiB + 16 MiB + 2 GiB.  The export fails, naming
# the file, and what it sent does not end like an archive.
truncate -s 2G "$WS/big/more"
[ "$(id -u)" -eq 0 ] && chown "$T_USER" "$WS/big/more"
if err=$(rk export 2>&1 > "$F/over.tar"); then
	t_fail "an export past the home size cap succeeded"
fi
t_contains "$err" TAR_TOO_LARGE "export past the cap"
t_contains "$err" "big/" "export past the cap names the file"
t_contains "$err" "home size cap" "export past the cap says why"
if err=$(rk import < "$F/over.tar" 2>&1); then
	t_fail "the failed export imported"
fi
t_eq "$(stat -c %s "$WS/big/more")" 2147483648 "workspace after a refusal"
exit 0

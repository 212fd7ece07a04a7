#!/bin/bash
# SPDX-License-Identifier: MIT
# file.* ops (G-27) end to end through rakazoctl: a binary round trip of a
# few MiB (streamed under backpressure), byte ranges, stat, ls, mkdir -p,
# rm -r, atomic writes (a new inode, no temp files left, even after a
# failed write), the empty file, modes kept, parents made on request.
. "$top_srcdir/tests/lib.sh"
t_start_guestd

# expect_code CODE WHAT CMD...: CMD must fail with CODE on stderr.
expect_code() {
	code=$1
	what=$2
	shift 2
	if err=$("$@" 2>&1 >/dev/null); then
		t_fail "$what: succeeded"
	fi
	t_contains "$err" "$code" "$what"
}

no_temps() {
	left=$(find "$WS" -name '*.rakazo-tmp-*')
	t_eq "$left" "" "temp files left ($1)"
}

# ---- round trip ---------------------------------------------------------
head -c 3500000 /dev/urandom > "$T/big"
rk put "$T/big" big.bin || t_fail "put big"
cmp "$T/big" "$WS/big.bin" || t_fail "stored bytes differ"
rk get big.bin "$T/big.back" || t_fail "get big"
cmp "$T/big" "$T/big.back" || t_fail "round trip differs"
rk get big.bin - > "$T/big.stdout" || t_fail "get to stdout"
cmp "$T/big" "$T/big.stdout" || t_fail "get to stdout differs"

# ---- ranges -------------------------------------------------------------
rk get big.bin - --offset 1000 --length 70000 > "$T/range" ||
	t_fail "range"
tail -c +1001 "$T/big" | head -c 70000 > "$T/range.want"
cmp "$T/range" "$T/range.want" || t_fail "range bytes"
rk get big.bin - --offset 3499990 > "$T/tail" || t_fail "tail range"
t_eq "$(stat -c %s "$T/tail")" 10 "range to the end"
rk get big.bin - --offset 3499990 --length 100 > "$T/tail2" ||
	t_fail "range past the end"
t_eq "$(stat -c %s "$T/tail2")" 10 "length clamped at the end"
rk get big.bin - --offset 3500000 > "$T/none" || t_fail "offset == size"
t_eq "$(stat -c %s "$T/none")" 0 "empty range at the end"
rk get big.bin - --length 0 > "$T/none0" || t_fail "length 0"
t_eq "$(stat -c %s "$T/none0")" 0 "length 0"
expect_code RANGE_INVALID "offset past the end" \
    rk get big.bin - --offset 3500001

# ---- stat ---------------------------------------------------------------
out=$(rk stat big.bin) || t_fail "stat"
t_contains "$out" '"type":"file"' "stat type"
t_contains "$out" '"size":3500000' "stat size"
t_contains "$out" '"mode":420' "stat default mode 0644"
t_contains "$out" "\"mtime\":$(stat -c %Y "$WS/big.bin")" "stat mtime"
out=$(rk stat .) || t_fail "stat root"
t_contains "$out" '"type":"dir"' "stat root type"
expect_code NOT_FOUND "stat missing" rk stat missing

# ---- mkdir, ls ----------------------------------------------------------
rk mkdir -p a/b/c || t_fail "mkdir -p"
[ -d "$WS/a/b/c" ] || t_fail "mkdir -p made nothing"
rk mkdir -p a/b/c || t_fail "mkdir -p of an existing dir"
expect_code ALREADY_EXISTS "mkdir existing" rk mkdir a/b
expect_code NOT_FOUND "mkdir without parents" rk mkdir x/y/z
rk mkdir a/b/d || t_fail "mkdir"
rk call file.mkdir '{"path":"a/m","mode":448}' >/dev/null ||
	t_fail "mkdir with a mode"
t_eq "$(stat -c %a "$WS/a/m")" 700 "mkdir mode"
expect_code ALREADY_EXISTS "mkdir -p over a file" rk mkdir -p big.bin

echo hi > "$T/small"
rk put "$T/small" a/b/zz.txt || t_fail "put small"
rk put --mode 0640 "$T/small" a/b/aa.txt || t_fail "put with mode"
ln -s zz.txt "$WS/a/b/ln"
out=$(rk ls a/b) || t_fail "ls"
# Directory sizes depend on the file system: not compared.
out=$(echo "$out" | awk '{ print $1, $2, ($1 == "dir" ? "-" : $3), $4 }')
want="file 0640 3 aa.txt
dir 0755 - c
dir 0755 - d
symlink 0777 6 ln
file 0644 3 zz.txt"
t_eq "$out" "$want" "ls a/b (sorted, typed, modes)"
t_eq "$(stat -c %a "$WS/a/b/aa.txt")" 640 "mode kept on disk"
out=$(rk ls .) || t_fail "ls root"
t_contains "$out" "file 0644 3500000 big.bin" "ls root"
expect_code NOT_A_DIRECTORY "ls of a file" rk ls big.bin
expect_code NOT_FOUND "ls missing" rk ls nope

# Many entries: all listed, in order.
mkdir "$WS/many"
(cd "$WS/many" && seq -w 1 1500 | xargs touch)
out=$(rk ls many) || t_fail "ls many"
t_eq "$(echo "$out" | wc -l)" 1500 "ls many count"
t_eq "$(echo "$out" | awk '{print $4}' | sort -c && echo sorted)" \
    sorted "ls many order"

# ---- atomic writes ------------------------------------------------------
printf 'old contents\n' > "$T/old"
printf 'new contents, longer\n' > "$T/new"
rk put "$T/old" a/f.txt || t_fail "put old"
ino1=$(stat -c %i "$WS/a/f.txt")
rk put "$T/new" a/f.txt || t_fail "put new"
ino2=$(stat -c %i "$WS/a/f.txt")
cmp "$T/new" "$WS/a/f.txt" || t_fail "overwrite contents"
[ "$ino1" != "$ino2" ] || t_fail "overwrite was not a rename (same inode)"
no_temps "after writes"
expect_code IS_A_DIRECTORY "put over a directory" rk put "$T/new" a/b
[ -d "$WS/a/b/c" ] || t_fail "a refused put harmed the directory"
expect_code IS_A_DIRECTORY "put to the root" rk put "$T/new" .
expect_code NOT_FOUND "put without parents" rk put "$T/new" p/q/r.txt
no_temps "after failed writes"
rk put --parents "$T/new" p/q/r.txt || t_fail "put --parents"
cmp "$T/new" "$WS/p/q/r.txt" || t_fail "put --parents contents"
expect_code NOT_A_REGULAR_FILE "get of a directory" rk get a -

# ---- the empty file -----------------------------------------------------
: > "$T/empty"
rk put "$T/empty" empty.txt || t_fail "put empty"
[ -f "$WS/empty.txt" ] || t_fail "empty file not made"
t_eq "$(stat -c %s "$WS/empty.txt")" 0 "empty file size"
rk get empty.txt "$T/empty.back" || t_fail "get empty"
t_eq "$(stat -c %s "$T/empty.back")" 0 "empty file read back"
no_temps "after the empty file"

# ---- announced size (file.write size) ----------------------------------
# A body shorter or longer than its announced size is refused with
# SIZE_MISMATCH, the old file kept and no temp file left; the connection
# lives on.  The exact size is written.
printf 'old' > "$WS/sized.txt"
out=$(printf '%s\n' \
    'text {"id":2,"op":"file.write","args":{"path":"sized.txt","size":10}}' \
    'bin 2 0 1 5' 'expect "id":2' \
    'text {"id":3,"op":"file.write","args":{"path":"sized.txt","size":10}}' \
    'bin 3 0 0 20' 'expect "id":3' 'bin 3 0 1 0' \
    'text {"id":4,"op":"file.write","args":{"path":"sized.txt","size":-1}}' \
    'expect "id":4' \
    'text {"id":5,"op":"file.write","args":{"path":"sized.txt","size":10}}' \
    'bin 5 0 0 4' 'bin 5 0 1 6' 'expect "id":5' |
    "$WSPROBE" --url "$URL" --secret-file "$SECRET" --hello) ||
	t_fail "wsprobe failed: $out"
t_contains "$out" '"id":2,"ok":false,"error":{"code":"SIZE_MISMATCH"' \
    "short body refused"
t_contains "$out" '"id":3,"ok":false,"error":{"code":"SIZE_MISMATCH"' \
    "long body refused"
t_contains "$out" '"id":4,"ok":false,"error":{"code":"BAD_REQUEST"' \
    "negative size refused"
t_contains "$out" '"id":5,"ok":true' "exact size written"
t_eq "$(cat "$WS/sized.txt")" "xxxxxxxxxx" "the exact body landed"
no_temps "after size mismatches"

# ---- rm -----------------------------------------------------------------
rk rm a/f.txt || t_fail "rm file"
[ -e "$WS/a/f.txt" ] && t_fail "rm left the file"
expect_code NOT_FOUND "rm missing" rk rm a/f.txt
expect_code DIRECTORY_NOT_EMPTY "rm of a non-empty dir" rk rm a/b
[ -d "$WS/a/b/c" ] || t_fail "refused rm removed something"
rk rm a/b/c || t_fail "rm of an empty dir"
[ -e "$WS/a/b/c" ] && t_fail "empty dir left"
rk rm -r a || t_fail "rm -r"
[ -e "$WS/a" ] && t_fail "rm -r left the tree"
expect_code PATH_INVALID "rm of the root" rk rm -r .
expect_code PATH_INVALID "rm of the root (empty path)" \
    rk call file.remove '{"path":"","recursive":true}'
[ -f "$WS/big.bin" ] || t_fail "the workspace lost files"

# ---- bot folders (X-1) --------------------------------------------------
"$RAKAZOCTL" guest --url "$URL" --secret-file "$SECRET" --bot alice \
    ls . >/dev/null || t_fail "ls with a bot"
[ -d "$WS/bots/alice" ] && [ -d "$WS/shared" ] ||
	t_fail "bots/alice and shared/ not made"
expect_code INVALID_BOT "a bad bot name" "$RAKAZOCTL" guest --url "$URL" \
    --secret-file "$SECRET" --bot ../x ls .

kill -0 "$GUESTD_PID" || t_fail "guestd died"
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# workspace.import at volume (G-28, C-8): the tar's bytes pass from the
# control channel to the extracting thread through a bounded queue, and
# small files are finished (data, mode, times, close) on a second thread
# while the next ones are created.  Here, through the real channel:
#   - a tree of ~40 MiB (several times the queue) of 2500 small files of
#     every size up to 64 KiB, empty ones, odd modes and old times, and
#     large files comes back identical in content, mode and mtime;
#   - a name twice among the small files is refused as a conflict, in
#     archive order, and the workspace is untouched;
#   - an archive refused at its second entry, followed by 48 MiB more, is
#     answered with the refusal after the whole upload, costs guestd no
#     more memory than the queue, and the next import works;
#   - where the workspace's file system takes direct I/O, large files
#     are written past the page cache (the import leaves none of their
#     data cached but a tail page);
#   - (as root) small files that no longer fit the workspace's disk fail
#     the import with NO_SPACE and leave the workspace as it was; on a
#     small ext4 (direct writes), so do large files, and a tree that fits
#     comes back identical.
. "$top_srcdir/tests/lib.sh"

command -v python3 >/dev/null || { echo "# SKIP: no python3"; exit 77; }
F="$T/files"
SRC="$T/src"
mkdir -p "$F" "$SRC"

python3 - "$SRC" "$F" <<'PY'
import io, os, random, sys, tarfile
src, out = sys.argv[1], sys.argv[2]
rnd = random.Random(7)
modes = [0o644, 0o600, 0o755, 0o640, 0o444]
for d in range(10):
    p = os.path.join(src, "bots", "b%d" % (d % 3), "dir%02d" % d)
    os.makedirs(p)
    for i in range(250):
        n = rnd.choice([0, 1, 511, 512, 513, 4096, rnd.randrange(65537)])
        f = os.path.join(p, "f%03d" % i)
        with open(f, "wb") as fh:
            fh.write(os.urandom(n))
        os.chmod(f, rnd.choice(modes))
        t = 1000000000 + rnd.randrange(10 ** 8)
        os.utime(f, (t, t))
big = os.path.join(src, "shared", "big")
os.makedirs(big)
for i in range(4):
    with open(os.path.join(big, "part%d" % i), "wb") as fh:
        fh.write(os.urandom(5 * 1024 * 1024 + i))

def entry(name, size=0, kind=tarfile.REGTYPE):
    ti = tarfile.TarInfo(name)
    ti.type, ti.size, ti.mode, ti.mtime = kind, size, 0o644, 1700000000
    return ti

# A name twice among small files, with more files after it.
with tarfile.open(os.path.join(out, "twice.tar"), "w",
                  format=tarfile.PAX_FORMAT) as t:
    t.addfile(entry("d", kind=tarfile.DIRTYPE))
    for i in range(300):
        data = os.urandom(3000)
        name = "d/f%03d" % (7 if i == 200 else i)
        t.addfile(entry(name, len(data)), io.BytesIO(data))

# Refused at the second entry, then 48 MiB of data.
with tarfile.open(os.path.join(out, "refused-early.tar"), "w",
                  format=tarfile.PAX_FORMAT) as t:
    t.addfile(entry("ok.txt", 3), io.BytesIO(b"ok\n"))
    t.addfile(entry("../escape", 3), io.BytesIO(b"no\n"))
    blob = os.urandom(1024 * 1024)
    for i in range(48):
        t.addfile(entry("pad%02d" % i, len(blob)), io.BytesIO(blob))

# Large files at odd sizes, for a small ext4: 3 x ~6 MiB, then ~9 MiB.
def big(name, sizes):
    with tarfile.open(os.path.join(out, name), "w",
                      format=tarfile.PAX_FORMAT) as t:
        t.addfile(entry("big", kind=tarfile.DIRTYPE))
        for i, n in enumerate(sizes):
            data = os.urandom(n)
            t.addfile(entry("big/f%d" % i, n), io.BytesIO(data))
big("large-too-big.tar", [6 * 1048576 + 1, 6 * 1048576 + 4095,
                          6 * 1048576 + 511])
big("large-fits.tar", [3 * 1048576 + 1, 4 * 1048576, 1048576 + 4097, 1000])

# 12 MiB of small files, for a disk of 8 MiB.
with tarfile.open(os.path.join(out, "too-big.tar"), "w",
                  format=tarfile.PAX_FORMAT) as t:
    for i in range(400):
        data = os.urandom(30000)
        t.addfile(entry("s%03d" % i, len(data)), io.BytesIO(data))
PY
[ "$(id -u)" -eq 0 ] && chown -R "$T_USER" "$SRC"

snap() {	# DIR: every entry's type, mode, size, mtime, then the hashes
	( cd "$1" &&
	  find . -mindepth 1 -type d -printf '%P %y %m\n'
	  find . -mindepth 1 -type f -printf '%P %y %m %s %Ts\n'
	  find . -type f -print0 | xargs -0 -r sha256sum ) | LC_ALL=C sort
}

# The tree as any tar makes it.
tar -C "$SRC" -cf "$F/tree.tar" bots shared || t_fail "tar -c failed"
t_start_guestd
hwm0=$(t_guestd_hwm_kb)
rk import < "$F/tree.tar" > "$F/out" 2> "$F/err" ||
    t_fail "the import failed: $(cat "$F/err")"
# Before anything reads them: a directly written file has at most its
# tail page cached (a buffered one has all 5 MiB).  An export reads such
# uncached files directly too, leaving them so.
DIO=0
dd if=/dev/zero of="$T/dio-probe" bs=4096 count=1 oflag=direct \
    2>/dev/null && DIO=1
cached_big() {	# WHEN
	local res
	[ "$DIO" = 1 ] || return 0
	res=$(fincore -b -n -o RES "$WS/shared/big/part0" \
	    "$WS/shared/big/part1" | awk '{ s += $1 } END { print s + 0 }')
	[ "$res" -le 8192 ] ||
	    t_fail "$1: large files left $res bytes in the page cache"
	t_note "direct I/O: $res bytes of 10 MiB cached $1"
}
[ "$DIO" = 1 ] || t_note "the workspace's file system takes no direct I/O"
cached_big "after the import"
rk export > "$F/cold.tar" || t_fail "export of the cold tree failed"
cached_big "after an export"
t_eq "$(snap "$WS")" "$(snap "$SRC")" "the imported tree"
grow=$(( $(t_guestd_hwm_kb) - hwm0 ))
t_note "40 MiB import: guestd's peak grew by $grow KiB"
[ "$grow" -lt 40960 ] || t_fail "the import held $grow KiB (the queue: 8 MiB)"

# And back out: our own export of it (the cold one before and a warm
# one now) imports to the same tree again.
rk export > "$F/ours.tar" || t_fail "export failed"
cmp -s "$F/ours.tar" "$F/cold.tar" ||
    t_fail "the exports of a cold and a warm tree differ"
rm -rf "${WS:?}"/*
rk import < "$F/ours.tar" || t_fail "re-import of our export failed"
t_eq "$(snap "$WS")" "$(snap "$SRC")" "the re-imported tree"

before=$(snap "$WS")
expect() {	# archive CODE
	rk import < "$F/$1" > "$F/out" 2> "$F/err"
	t_eq "$?" 1 "$1: exit status"
	t_contains "$(cat "$F/err")" "rakazoctl: $2" "$1: error"
	[ "$(snap "$WS")" = "$before" ] || t_fail "$1: the workspace changed"
	ls -A "$WS" | grep -q '^\.rakazo-' && t_fail "$1: staging left in ws"
	t_note "$1: $(head -c 200 "$F/err")"
}
expect twice.tar TAR_ENTRY_REJECTED
t_contains "$(cat "$F/err")" 'd/f007' "the conflicting entry is named"
hwm0=$(t_guestd_hwm_kb)
expect refused-early.tar TAR_ENTRY_REJECTED
grow=$(( $(t_guestd_hwm_kb) - hwm0 ))
[ "$grow" -lt 20480 ] || t_fail "a refused upload held $grow KiB"
rk import < "$F/tree.tar" || t_fail "an import after the refusals failed"
t_eq "$(snap "$WS")" "$(snap "$SRC")" "the tree after the refusals"

# A full disk under the workspace: root mounts a small one.
[ "$(id -u)" -eq 0 ] || { t_note "full disk: needs root, skipped"; exit 0; }
kill "$GUESTD_PID"
wait "$GUESTD_PID" 2>/dev/null
DISK="$T/disk"
mkdir -p "$DISK"
if ! mount -t tmpfs -o size=8m,mode=0755 tmpfs "$DISK" 2>/dev/null; then
	t_note "full disk: cannot mount a tmpfs here, skipped"
	exit 0
fi
trap 'rc=$?; umount -l "$DISK" 2>/dev/null; (exit $rc); t_cleanup' EXIT
WS="$DISK/ws"
mkdir -p "$WS/bots/a"
echo keep > "$WS/bots/a/keep.txt"
chown -R "$T_USER" "$DISK"
t_start_guestd
before=$(snap "$WS")
expect too-big.tar NO_SPACE

# Large files on a small ext4, which takes direct writes.
kill "$GUESTD_PID"
wait "$GUESTD_PID" 2>/dev/null
umount -l "$DISK"
if ! command -v mkfs.ext4 >/dev/null ||
    ! dd if=/dev/zero of="$T/ext4.img" bs=1M count=16 2>/dev/null ||
    ! mkfs.ext4 -q -F "$T/ext4.img" 2>/dev/null ||
    ! mount -o loop "$T/ext4.img" "$DISK" 2>/dev/null; then
	t_note "small ext4: cannot make or mount one here, skipped"
	exit 0
fi
mkdir -p "$WS/bots/a"
echo keep > "$WS/bots/a/keep.txt"
chown -R "$T_USER" "$DISK"
t_start_guestd
before=$(snap "$WS")
expect large-too-big.tar NO_SPACE
rk import < "$F/large-fits.tar" > "$F/out" 2> "$F/err" ||
    t_fail "large files that fit: $(cat "$F/err")"
mkdir -p "$T/fits"
tar -C "$T/fits" -xf "$F/large-fits.tar"
t_eq "$(cd "$WS" && find . -type f -printf '%P %s\n' | sort)" \
    "$(cd "$T/fits" && find . -type f -printf '%P %s\n' | sort)" \
    "the large files' names and sizes"
t_eq "$(cd "$WS" && sha256sum big/* | sort)" \
    "$(cd "$T/fits" && sha256sum big/* | sort)" "the large files' bytes"
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# workspace import of hostile archives (G-28, X-6): entries that climb out,
# absolute names, links, devices, FIFOs, a size bomb, too many entries, a
# truncated stream and junk are each refused with their own code; the
# workspace stays byte-for-byte as it was, no staging directory is left
# and nothing appears outside the workspace.
. "$top_srcdir/tests/lib.sh"

command -v python3 >/dev/null || { echo "# SKIP: no python3"; exit 77; }
F="$T/files"
mkdir -p "$F"
ABS="/rakazo-hostile-$$"

# The archives, built with python's tarfile (headers written as given).
python3 - "$F" "$ABS" <<'PY' || t_fail "cannot build the archives"
import io, os, sys, tarfile
out, absname = sys.argv[1], sys.argv[2]

def entry(name, typ=tarfile.REGTYPE, data=b"", link="", size=None):
    ti = tarfile.TarInfo(name)
    ti.type, ti.mode, ti.mtime = typ, 0o644, 1700000000
    ti.linkname = link
    if typ == tarfile.CHRTYPE:
        ti.devmajor, ti.devminor = 1, 3
    ti.size = len(data) if typ == tarfile.REGTYPE else 0
    return ti, data

def write(fname, entries, fmt=tarfile.USTAR_FORMAT):
    with tarfile.open(os.path.join(out, fname), "w", format=fmt) as t:
        for ti, data in entries:
            t.addfile(ti, io.BytesIO(data) if data else None)

good = [entry("bots"), entry("bots/ok.txt", data=b"fine\n")]
good[0][0].type = tarfile.DIRTYPE
write("dotdot.tar", good + [entry("../evil", data=b"x")])
write("abs.tar", [entry(absname, data=b"x")])
write("updown.tar", good + [entry("a/../../b", data=b"x")])
write("dot.tar", [entry("./a", data=b"x")])
write("symlink.tar", [entry("link", tarfile.SYMTYPE, link="/etc/passwd")])
write("hardlink.tar", good + [entry("hard", tarfile.LNKTYPE,
                                    link="bots/ok.txt")])
write("chardev.tar", [entry("null", tarfile.CHRTYPE)])
write("fifo.tar", [entry("fifo", tarfile.FIFOTYPE)])
# Rejected first, then ~900 KiB the worker never reads: dropped after EPIPE.
write("reject-then-data.tar", [entry("../evil", data=b"x"),
                               entry("big", data=os.urandom(900 * 1024))])
# Declared 5 GiB, above --import-max-bytes 1M; no data follows.
bomb, _ = entry("bomb")
bomb.size = 5 << 30
with open(os.path.join(out, "bomb.tar"), "wb") as f:
    f.write(bomb.tobuf(tarfile.GNU_FORMAT))
# Three files of 400 KiB: each fits, the sum does not.
write("sum.tar", [entry("f%d" % i, data=os.urandom(400 * 1024))
                  for i in range(3)])
write("many.tar", [entry("f%02d" % i, data=b"x") for i in range(11)])
write("ten.tar", [entry("f%02d" % i, data=b"x") for i in range(10)])
# Cut in the middle of a file's data.
b = io.BytesIO()
with tarfile.open(fileobj=b, mode="w", format=tarfile.PAX_FORMAT) as t:
    ti, data = entry("whole", data=os.urandom(100 * 1024))
    t.addfile(ti, io.BytesIO(data))
with open(os.path.join(out, "truncated.tar"), "wb") as f:
    f.write(b.getvalue()[:512 + 50 * 1024])
with open(os.path.join(out, "junk.tar"), "wb") as f:
    f.write(b"this is not a tar archive\n" * 400)
PY

# The workspace we must not lose.
mkdir -p "$WS/bots/a/sub" "$WS/shared"
echo keep > "$WS/bots/a/keep.txt"
head -c 100000 /dev/urandom > "$WS/shared/blob.bin"
chmod 0600 "$WS/bots/a/keep.txt"
[ "$(id -u)" -eq 0 ] && chown -R "$T_USER" "$WS"

snap() {
	( cd "$WS" &&
	  find . -mindepth 1 -printf '%P %y %m %s %Ts\n'
	  find . -type f -print0 | xargs -0 -r sha256sum ) | LC_ALL=C sort
}
outside() {	# what sits beside the workspace (the log grows: not it)
	ls -A "$T" | grep -v '^guestd\.log$'
}

t_start_guestd --import-max-bytes 1M --import-max-entries 10
before=$(snap)
around=$(outside)

expect() {	# archive CODE
	rk import < "$F/$1" > "$F/out" 2> "$F/err"
	rc=$?
	t_eq "$rc" 1 "$1: exit status"
	t_contains "$(cat "$F/err")" "rakazoctl: $2" "$1: error"
	[ "$(snap)" = "$before" ] || t_fail "$1: the workspace changed"
	t_eq "$(outside)" "$around" "$1: beside the workspace"
	ls -A "$WS" | grep -q '^\.rakazo-' && t_fail "$1: temp dir left in ws"
	[ -e "$ABS" ] && t_fail "$1: $ABS created"
	t_note "$1: $(head -c 200 "$F/err")"
}

expect dotdot.tar TAR_ENTRY_REJECTED
expect abs.tar TAR_ENTRY_REJECTED
expect updown.tar TAR_ENTRY_REJECTED
expect dot.tar TAR_ENTRY_REJECTED
expect symlink.tar TAR_ENTRY_REJECTED
expect hardlink.tar TAR_ENTRY_REJECTED
expect chardev.tar TAR_ENTRY_REJECTED
expect fifo.tar TAR_ENTRY_REJECTED
expect reject-then-data.tar TAR_ENTRY_REJECTED
expect bomb.tar TAR_TOO_LARGE
expect sum.tar TAR_TOO_LARGE
expect many.tar TAR_TOO_MANY_ENTRIES
expect truncated.tar TAR_TRUNCATED
expect junk.tar TAR_INVALID

# The entry named in the error, with the reason.
rk import < "$F/dotdot.tar" 2> "$F/err"
t_contains "$(cat "$F/err")" '../evil' "the rejected entry is named"

# Still healthy, and a good archive at the limit is taken.
rk import < "$F/ten.tar" || t_fail "an archive of 10 entries was refused"
t_eq "$(ls "$WS" | wc -l)" 10 "entries after a good import"
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# A home's checkpoint and restore through the real server and guestd keep
# what export used to drop or inflate: a path over 4095 bytes and one 300
# directories deep come back (a checkpoint left them out and the restore
# deleted them), and a 2 GiB hole stays a hole (a 2 GiB archive and 2 GiB
# of disk before).  A path deeper than a checkpoint may hold fails the
# checkpoint (CHECKPOINT_FAILED with guestd's NAME_TOO_LONG sentence),
# naming it, and leaves no revision; so does a home past the home size cap
# serve hands to guestd (--home-max-bytes, HOME_MAX_BYTES).
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
. "${top_srcdir:-.}/tests/lib-homes.sh"
command -v python3 >/dev/null || { echo "# SKIP: no python3"; exit 77; }

ctl_start
HOME_DIR="$CTL_DATA/computers/team/home"
api POST /v1/computers '{"id":"team"}' >/dev/null
r=$(api POST /v1/tools/write_file '{"computer":"team","bot":"alice","path":"bots/alice/notes.txt","content":"hello"}')
t_contains "$r" "200 " "write as alice"
truncate -s 64M "$HOME_DIR/probe"
[ "$(stat -c %b "$HOME_DIR/probe")" -lt 64 ] ||
	{ echo "# SKIP: no holes in the home"; exit 77; }
rm -f "$HOME_DIR/probe"

# mk DIR NAME LEVELS: nested directories built with openat, "f" at the
# bottom, owned as the home is.
mk() {
	python3 - "$@" "$(stat -c %u:%g "$HOME_DIR")" <<'EOF' || t_fail "mk"
import os, sys
top, name, levels = sys.argv[1], sys.argv[2], int(sys.argv[3])
uid, gid = map(int, sys.argv[4].split(":"))
os.makedirs(top, exist_ok=True)
fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
os.fchown(fd, uid, gid)
for _ in range(levels):
    os.mkdir(name, 0o755, dir_fd=fd)
    nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.fchown(nfd, uid, gid)
    os.close(fd)
    fd = nfd
f = os.open("f", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
os.write(f, ("%s %d\n" % (name[:4], levels)).encode())
os.fchown(f, uid, gid)
os.close(f)
EOF
}

# Every entry: path, mode, size, blocks-are-few, content hash (fwalk:
# paths past PATH_MAX too).
snap() {
	python3 - "$HOME_DIR" <<'EOF' || t_fail "snap"
import hashlib, os, stat, sys
out = []
for d, dirs, files, dfd in os.fwalk(sys.argv[1]):
    rel = os.path.relpath(d, sys.argv[1])
    for n in dirs + files:
        if rel == "." and n.startswith(".rakazo-"):
            continue
        st = os.stat(n, dir_fd=dfd, follow_symlinks=False)
        h = ""
        if stat.S_ISREG(st.st_mode):
            fd = os.open(n, os.O_RDONLY, dir_fd=dfd)
            h = hashlib.sha256(os.read(fd, 1 << 20)).hexdigest()
            os.close(fd)
            h += " %d" % st.st_size
        out.append("%s %o %s" % (os.path.join(rel, n), st.st_mode, h))
print(hashlib.sha256("\n".join(sorted(out)).encode()).hexdigest(), len(out))
EOF
}

L=$(printf 'L%.0s' $(seq 250))
mk "$HOME_DIR/long" "$L" 20
mk "$HOME_DIR/deep" d 300
truncate -s 2G "$HOME_DIR/holes"
chown "$(stat -c %u:%g "$HOME_DIR")" "$HOME_DIR/holes"
BEFORE=$(snap)
t_contains "$(ctl checkpoint team)" "team revision" "checkpoint"
rev=$(ls "$CTL_DATA/homes/team" | sed -n 's/^rev-\([0-9]*\)\.tar$/\1/p' |
    sort -n | tail -1)
size=$(stat -c %s "$CTL_DATA/homes/team/rev-$rev.tar")
t_note "revision $rev: $size bytes"
[ "$size" -lt $((4 * 1024 * 1024)) ] || t_fail "the checkpoint carried the hole"
tar -tf "$CTL_DATA/homes/team/rev-$rev.tar" > "$T/list" ||
	t_fail "GNU tar cannot list the checkpoint"
grep -qxF "long/$(printf "$L/%.0s" $(seq 20))f" "$T/list" ||
	t_fail "the long path is not in the checkpoint"
grep -qxF "deep/$(printf 'd/%.0s' $(seq 300))f" "$T/list" ||
	t_fail "the deep path is not in the checkpoint"

# The machine is gone: the next call restores the home first.
r=$(api POST /v1/computers/team/stop '{}')
t_contains "$r" '"state":"stopped"' "stopped"
rm -rf "$CTL_DATA/computers/team"
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"alice","command":"cat notes.txt"}')
t_contains "$r" 'hello' "restored before the first call"
t_eq "$(snap)" "$BEFORE" "the restored home"
blocks=$(stat -c %b "$HOME_DIR/holes")
[ "$blocks" -lt 64 ] || t_fail "the restored hole takes $blocks blocks"

# Too deep for a checkpoint: it fails, naming the path; no revision.
revs_before=$(revs)
mk "$HOME_DIR/deep" e 520
if out=$(ctl checkpoint team 2>&1); then
	t_fail "a checkpoint of a 521-deep path succeeded: $out"
fi
# The controller's code, with guestd's NAME_TOO_LONG sentence.
t_contains "$out" CHECKPOINT_FAILED "too deep"
t_contains "$out" "deeper than a checkpoint may hold" "too deep: why"
t_contains "$out" "deep/e/e/e/" "too deep: the path"
t_eq "$(revs)" "$revs_before" "no revision from a failed checkpoint"

# serve hands its home size cap (HOME_MAX_BYTES) to the computer's guestd:
# a home past it fails its checkpoint, the file named.
rm -rf "${HOME_DIR:?}/deep/e"
r=$(api POST /v1/computers/team/stop '{}')
t_contains "$r" '"state":"stopped"' "stopped again"
ctl_stop
ctl_start --home-max-bytes 3G
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"alice","command":"cat notes.txt"}')
t_contains "$r" 'hello' "started under the cap"
t_contains "$(tr '\0' '\n' < "/proc/$(guestd_pid)/environ")" \
    "GUESTD_HOME_MAX_BYTES=3221225472" "guestd's cap"
truncate -s 2G "$HOME_DIR/more"
chown "$(stat -c %u:%g "$HOME_DIR")" "$HOME_DIR/more"
revs_before=$(revs)
if out=$(ctl checkpoint team 2>&1); then
	t_fail "a checkpoint past the home size cap succeeded: $out"
fi
t_contains "$out" "home size cap" "past the cap: why"
t_contains "$out" '"more"' "past the cap: the file"
t_eq "$(revs)" "$revs_before" "no revision past the cap"
exit 0

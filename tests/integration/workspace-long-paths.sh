#!/bin/bash
# SPDX-License-Identifier: MIT
# Long and deep paths in a checkpoint (G-28): a file whose path is over
# 4095 bytes (PATH_MAX) and one 300 directories deep are exported (GNU tar
# lists both) and restored, not silently left out.  Past what a checkpoint
# holds (65535 bytes, 512 levels) the export fails NAME_TOO_LONG naming
# the path; an import deeper than that is refused TAR_ENTRY_REJECTED.
. "$top_srcdir/tests/lib.sh"
command -v tar >/dev/null || { echo "# SKIP: no tar"; exit 77; }
command -v python3 >/dev/null || { echo "# SKIP: no python3"; exit 77; }
F="$T/files"
mkdir -p "$F"

# mk DIR NAME LEVELS: LEVELS nested directories NAME below DIR (built
# with openat: no PATH_MAX), a file "f" at the bottom.
mk() {
	python3 - "$@" <<'EOF' || t_fail "mk $*"
import os, sys
top, name, levels = sys.argv[1], sys.argv[2], int(sys.argv[3])
fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
for _ in range(levels):
    os.mkdir(name, 0o755, dir_fd=fd)
    nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    fd = nfd
f = os.open("f", os.O_WRONLY | os.O_CREAT, 0o640, dir_fd=fd)
os.write(f, ("%s x %d\n" % (name[:8], levels)).encode())
os.close(f)
EOF
	[ "$(id -u)" -eq 0 ] && chown -R "$T_USER" "$1"
	return 0
}

# Every entry below the workspace: path, type, mode, size, content hash.
snap() {
	python3 - "$WS" <<'EOF' || t_fail "snap"
import hashlib, os, stat, sys
out = []
for d, dirs, files, dfd in os.fwalk(sys.argv[1]):
    rel = os.path.relpath(d, sys.argv[1])
    for n in dirs + files:
        st = os.stat(n, dir_fd=dfd, follow_symlinks=False)
        h = ""
        if stat.S_ISREG(st.st_mode):
            fd = os.open(n, os.O_RDONLY, dir_fd=dfd)
            h = hashlib.sha256(os.read(fd, 1 << 20)).hexdigest()
            os.close(fd)
        out.append("%s %o %d %s" % (os.path.join(rel, n), st.st_mode,
                                    st.st_size if h else 0, h))
print(hashlib.sha256("\n".join(sorted(out)).encode()).hexdigest(),
      len(out))
EOF
}

t_start_guestd

L=$(printf 'L%.0s' $(seq 250))
mkdir "$WS/long" "$WS/deep"
echo top > "$WS/top"
mk "$WS/long" "$L" 20
mk "$WS/deep" d 300
[ "$(id -u)" -eq 0 ] && chown -R "$T_USER" "$WS"
longpath="long/$(printf "$L/%.0s" $(seq 20))f"
deeppath="deep/$(printf 'd/%.0s' $(seq 300))f"
t_note "paths of ${#longpath} and ${#deeppath} bytes"
want=$(snap)

rk export > "$F/ws.tar" || t_fail "export failed"
tar -tf "$F/ws.tar" > "$F/list" || t_fail "GNU tar cannot list the export"
grep -qxF "$longpath" "$F/list" ||
	t_fail "the ${#longpath}-byte path is not in the export"
grep -qxF "$deeppath" "$F/list" ||
	t_fail "the 300-deep path is not in the export"

rm -rf "${WS:?}/long" "${WS:?}/deep" "$WS/top"
echo stray > "$WS/stray"
rk import < "$F/ws.tar" || t_fail "import failed"
t_eq "$(snap)" "$want" "the restored tree"

# Past a checkpoint's limits the export fails, naming the path.
mk "$WS/deep" e 520
if err=$(rk export 2>&1 >/dev/null); then
	t_fail "a 521-deep path exported"
fi
t_contains "$err" NAME_TOO_LONG "too deep"
t_contains "$err" '"deep/e/e/e/' "too deep: the path"
t_contains "$err" "512 levels" "too deep: why"
rm -rf "${WS:?}/deep/e"
M=$(printf 'M%.0s' $(seq 250))
mk "$WS/long" "$M" 262
if err=$(rk export 2>&1 >/dev/null); then
	t_fail "a path of more than 65535 bytes exported"
fi
t_contains "$err" NAME_TOO_LONG "too long"
t_contains "$err" "\"long/${M:0:100}" "too long: the path"
t_contains "$err" "65535 bytes" "too long: why"
rm -rf "${WS:?}/long/$M"
rk export > /dev/null || t_fail "export after the clean-up"

# An import that deep is refused, and changes nothing.
python3 - "$F/deep.tar" <<'EOF' || t_fail "building deep.tar"
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    ti = tarfile.TarInfo("x/" * 600 + "f")
    ti.size = 2
    t.addfile(ti, io.BytesIO(b"x\n"))
EOF
before=$(snap)
if err=$(rk import < "$F/deep.tar" 2>&1); then
	t_fail "a 600-deep import was accepted"
fi
t_contains "$err" TAR_ENTRY_REJECTED "deep import"
t_eq "$(snap)" "$before" "workspace after the deep import"
exit 0

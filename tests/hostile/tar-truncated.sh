#!/bin/bash
# SPDX-License-Identifier: MIT
# A tar without its end-of-archive marker is not a whole archive: cut at
# an entry boundary (before the zero blocks, or after any entry) or in the
# middle of an entry, workspace.import refuses it with TAR_TRUNCATED and
# the workspace is exactly as before.  guestd's own export ends with the
# marker, so what it exports imports again.
. "$top_srcdir/tests/lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "# no python3"; exit 77; }
t_start_guestd

mkdir -p "$WS/old/d"
echo keep > "$WS/old/d/f"
echo top > "$WS/top"
[ "$(id -u)" -eq 0 ] && chown -R "$T_USER" "$WS"

manifest() {
	(cd "$WS" && find . -mindepth 1 -printf '%P %y %m %s\n' | sort &&
	    find . -type f -print0 | sort -z | xargs -0 -r md5sum)
}
BEFORE=$(manifest)

mkdir -p "$T/src/b"
head -c 2000 /dev/urandom > "$T/src/a"
head -c 100000 /dev/urandom > "$T/src/b/c"
echo z > "$T/src/z"
tar -C "$T/src" -cf "$T/full.tar" a b z

# Cut points from the archive's own layout: after each entry (its data
# padded to 512) and inside the data of b/c.
python3 - "$T/full.tar" "$T" <<'EOF' || t_fail "cutting"
import sys, tarfile
path, out = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
ends, mid = [], None
with tarfile.open(path) as t:
    for m in t.getmembers():
        ends.append(m.offset_data + (m.size + 511) // 512 * 512)
        if m.name == "b/c":
            mid = m.offset_data + m.size // 2
cuts = {"after-first": ends[0], "before-marker": ends[-1],
        "mid-entry": mid, "mid-header": ends[0] + 100}
for name, off in cuts.items():
    open("%s/cut-%s.tar" % (out, name), "wb").write(data[:off])
EOF

for cut in after-first before-marker mid-entry mid-header; do
	if err=$(rk import < "$T/cut-$cut.tar" 2>&1); then
		t_fail "$cut: a truncated tar was imported"
	fi
	t_contains "$err" TAR_TRUNCATED "$cut"
	t_eq "$(manifest)" "$BEFORE" "$cut: workspace changed"
	t_eq "$(ls -A "$WS" | grep '^\.rakazo-')" "" "$cut: leftovers"
done

# The whole archive imports; the export ends with the marker and imports.
rk import < "$T/full.tar" || t_fail "the whole archive"
cmp "$T/src/b/c" "$WS/b/c" || t_fail "imported bytes"
rk export > "$T/exp.tar" || t_fail "export"
python3 - "$T/exp.tar" <<'EOF' || t_fail "export lacks the end marker"
import sys, tarfile
data = open(sys.argv[1], "rb").read()
with tarfile.open(sys.argv[1]) as t:
    last = t.getmembers()[-1]
end = last.offset_data + (last.size + 511) // 512 * 512
assert data[end:end + 1024] == bytes(1024), "no zero blocks after the last entry"
EOF
AFTER=$(manifest)
rk import < "$T/exp.tar" || t_fail "re-import of the export"
t_eq "$(manifest)" "$AFTER" "round trip"

#!/bin/bash
# SPDX-License-Identifier: MIT
# The smaller faults of files, import and the control channel:
#  - a put killed (SIGKILL) mid-body leaves a temp file: export never
#    carries a temp file, and the next start removes it;
#  - an import holding guestd's reserved top-level names (.rakazo-*) is
#    refused TAR_ENTRY_REJECTED; a sparse entry of 20 GiB passes the
#    default home size cap (16G): TAR_TOO_LARGE (tests/hostile/sparse-bomb.sh
#    has more);
#  - file.list reports names that are not UTF-8 (escaped, flagged, hex);
#  - rakazoctl guest ls escapes control characters in names (ls -b);
#  - a binary frame on channel 1 is not written into a file.write body;
#  - a secret file that is a FIFO fails start-up at once, no hang;
#  - more than 4096 fenced bots do not lock out new ones (BUSY).
. "$top_srcdir/tests/lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "# no python3"; exit 77; }
t_start_guestd
export PYTHONPATH="$top_srcdir/tests/hostile"

manifest() {
	(cd "$WS" && find . -mindepth 1 -printf '%P %y %m %s\n' | sort &&
	    find . -type f -print0 | sort -z | xargs -0 -r md5sum)
}

# ---- a put killed mid-body ----------------------------------------------
echo old > "$WS/doc.txt"
[ "$(id -u)" -eq 0 ] && chown "$T_USER" "$WS/doc.txt"
python3 - "$PORT" "$SECRET" "$WS" "$RAKAZOCTL" "$URL" "$T/during.tar" \
    "$GUESTD_PID" <<'EOF' || t_fail "put in progress"
import glob, os, signal, subprocess, sys
import wsctl
port, secret, ws, rk, url, tarpath, pid = sys.argv[1:8]
c = wsctl.connect(port, secret)
c.send_json({"id": 5, "op": "file.write", "args": {"path": "doc.txt"}})
c.send_bin(5, 0, 0, b"half of the new body")
tmp = wsctl.wait_until(lambda: glob.glob(ws + "/.doc.txt.rakazo-tmp-*"))
assert tmp, "no temp file"
# Export while the write is in progress: the temp file is not in it.
with open(tarpath, "wb") as f:
    subprocess.run([rk, "guest", "--url", url, "--secret-file", secret,
                    "export"], stdout=f, check=True)
os.kill(int(pid), signal.SIGKILL)
EOF
wait "$GUESTD_PID" 2>/dev/null
GUESTD_PID=""
t_not_contains "$(tar -tf "$T/during.tar")" "rakazo-tmp" "export of a temp"
ls -A "$WS" | grep -q 'rakazo-tmp' || t_fail "the kill left no temp file"
t_start_guestd
t_eq "$(find "$WS" -name '*.rakazo-tmp-*')" "" "stale temp after restart"
t_eq "$(cat "$WS/doc.txt")" "old" "the file a killed put wrote"

# ---- reserved names and sparse holes in an import ------------------------
BEFORE=$(manifest)
for name in .rakazo-swap .rakazo-old-0123/f .rakazo-import-x/y .rakazo-z; do
	rm -rf "$T/res" && mkdir -p "$T/res/$(dirname "$name")"
	echo x > "$T/res/$name"
	tar -C "$T/res" -cf "$T/res.tar" "${name%%/*}"
	if err=$(rk import < "$T/res.tar" 2>&1); then
		t_fail "reserved $name imported"
	fi
	t_contains "$err" TAR_ENTRY_REJECTED "reserved $name"
	t_eq "$(manifest)" "$BEFORE" "reserved $name: workspace changed"
done
mkdir -p "$T/sp"
truncate -s 20G "$T/sp/huge"
printf 'data' | dd of="$T/sp/huge" bs=1 seek=1000 conv=notrunc 2>/dev/null
tar -C "$T/sp" --sparse -cf "$T/sparse.tar" huge
t_note "sparse tar: $(stat -c %s "$T/sparse.tar") bytes"
if err=$(rk import < "$T/sparse.tar" 2>&1); then
	t_fail "a 20 GiB sparse entry was imported"
fi
t_contains "$err" TAR_TOO_LARGE "sparse entry"
t_contains "$err" "home size cap" "sparse entry's reason"
t_eq "$(manifest)" "$BEFORE" "sparse: workspace changed"

# ---- names that are not UTF-8, and control characters -------------------
mkdir "$WS/names"
: > "$WS/names/$(printf 'caf\351')"
: > "$WS/names/$(printf '\033[31mred\033]0;title\007')"
: > "$WS/names/plain"
out=$(rk ls --json names) || t_fail "ls --json"
t_contains "$out" '"name":"caf\\xe9"' "escaped name"
t_contains "$out" '"name_escaped":true' "escaped flag"
t_contains "$out" '"name_hex":"636166e9"' "raw name in hex"
t_contains "$out" '"truncated":false' "truncated"
t_eq "$(printf '%s' "$out" | grep -o '"name":' | wc -l)" 3 "names listed"
out=$(rk ls names) || t_fail "ls"
case "$out" in
*"$(printf '\033')"*|*"$(printf '\007')"*) t_fail "control bytes reached the terminal" ;;
esac
t_contains "$out" '\033[31mred\033]0;title\a' "escaped control characters"
t_contains "$out" 'caf\351' "byte that is not UTF-8"
t_contains "$out" ' plain' "plain name"

# ---- a frame on another channel, a secret FIFO, many fenced bots ---------
python3 - "$PORT" "$SECRET" <<'EOF' || t_fail "channels and fences"
import sys
import wsctl
c = wsctl.connect(sys.argv[1], sys.argv[2])
c.send_json({"id": 5, "op": "file.write", "args": {"path": "body.txt"}})
c.send_bin(5, 1, 0, b"EVIL")
c.send_bin(5, 0, 1, b"good")
errs = []
while True:
    m = c.recv()
    if m[0] != "text":
        continue
    o = m[1]
    if o.get("id") == 0:
        errs.append(o["error"]["code"])
    elif o.get("id") == 5:
        assert o.get("ok"), o
        break
assert errs == ["PROTOCOL_ERROR"], errs
r = []
c.call(6, "file.read", {"path": "body.txt"}, r)
assert b"".join(r) == b"good", r

# 4200 bots, each with a fence: none is refused BUSY.
N = 4200
c.send_raw(b"".join(c.frame(1, ('{"id":%d,"op":"display.close","args":'
    '{"bot":"b%d","fence":3}}' % (100 + i, i)).encode()) for i in range(N)))
codes = {}
for _ in range(N):
    o = c.reply_any()
    code = "ok" if o.get("ok") else o["error"]["code"]
    codes[code] = codes.get(code, 0) + 1
assert "BUSY" not in codes, codes
# A recent bot's fence still holds.
r = c.call(9000, "display.close", {"bot": "b4199", "fence": 2})
assert r["error"]["code"] == "STALE_FENCE", r
print("# fenced bots:", codes)
EOF
t_eq "$(cat "$WS/body.txt")" "good" "body written"

mkfifo "$T/secret.fifo"
user_args=""
[ "$(id -u)" -eq 0 ] && user_args="--user $T_USER"
# shellcheck disable=SC2086
timeout 20 "$GUESTD" --listen 127.0.0.1:0 --secret-file "$T/secret.fifo" \
    --workspace "$WS" $user_args >"$T/fifo.log" 2>&1
st=$?
[ "$st" -ne 124 ] || t_fail "a FIFO secret hung start-up"
[ "$st" -ne 0 ] || t_fail "a FIFO secret was accepted"
t_contains "$(cat "$T/fifo.log")" "NOT_A_REGULAR_FILE" "FIFO secret error"

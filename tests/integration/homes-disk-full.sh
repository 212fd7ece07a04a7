#!/bin/bash
# SPDX-License-Identifier: MIT
# C-9 under a fault, with the local provider and real guestd: DATA_DIR is
# a small tmpfs made by the test (root only; skipped otherwise) and is
# filled until a checkpoint cannot fit.  The checkpoint fails with
# NO_SPACE and a failed computer.checkpoint event saying so, the previous
# revision stays current and whole, no half archive is left, and the
# computer keeps running (same guestd, tool calls answered); once space
# is freed the next checkpoint succeeds.
. "${top_srcdir:-.}/tests/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "# SKIP: mounting a small data directory needs root"
	exit 77
fi
mkdir -p "$T/data"
if ! mount -t tmpfs -o size=48m,mode=0700 tmpfs "$T/data" 2>/dev/null; then
	echo "# SKIP: cannot mount a tmpfs here"
	exit 77
fi
. "${top_srcdir:-.}/tests/lib-controller.sh"
. "${top_srcdir:-.}/tests/lib-homes.sh"

# Everything that uses the mount ends first, then it goes.
df_cleanup() {
	rc=$?
	ctl_stop
	for d in /proc/[0-9]*; do
		if { tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null |
		    grep -q -- "--workspace $CTL_DATA/computers/"; then
			kill -9 "${d#/proc/}" 2>/dev/null
		fi
	done
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
		echo "---- serve log ----" >&2
		cat "$CTL_LOG" >&2 2>/dev/null
		tail -20 "$CTL_DATA/computers/team/guestd.log" >&2 2>/dev/null
	fi
	umount -l "$CTL_DATA" 2>/dev/null
	(exit "$rc")
	ctl_cleanup
}
trap df_cleanup EXIT

avail() {	# free bytes of the data directory
	df --output=avail -B1 "$CTL_DATA" | tail -1 | tr -d ' '
}

ctl_start
api POST /v1/computers '{"id":"team"}' >/dev/null
r=$(api POST /v1/tools/write_file '{"computer":"team","bot":"alice","path":"a.txt","content":"one"}')
t_contains "$r" "200 " "a first file"
t_contains "$(ctl checkpoint team)" "revision 1" "revision 1 fits"
GP=$(guestd_pid)
[ -n "$GP" ] || t_fail "no guestd"

# A 16 MB file in the workspace, then the disk filled to 4 MB of free
# space: the archive of the next checkpoint cannot fit.
head -c 16000000 /dev/urandom > "$T/big"
r=$(curl -s -o /dev/null -w '%{http_code}' -X PUT \
    -H "Authorization: Bearer $(cat "$CTL_TOKEN")" --data-binary @"$T/big" \
    "$CTL_URL/v1/computers/team/files?bot=alice&path=big.bin")
t_eq "$r" 200 "the large file is written"
fallocate -l $(( $(avail) - 4 * 1024 * 1024 )) "$CTL_DATA/filler" ||
    t_fail "cannot fill the data directory"

out=$(ctl checkpoint team 2>&1) && t_fail "the checkpoint fitted: $out"
t_contains "$out" NO_SPACE "the checkpoint fails with NO_SPACE"
api GET '/v1/computers/team/activity?limit=1000' >/dev/null
python3 - "$T/api.out" <<'PY' || t_fail "no failed checkpoint event naming NO_SPACE"
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["events"]
      if e["kind"] == "computer.checkpoint" and not e["ok"]]
assert ev and "NO_SPACE" in ev[-1]["text"], ev
PY
t_eq "$(revs)" "1:operator" "revision 1 is still the current one"
check_whole "after the full disk"
t_eq "$(ls -a "$CTL_DATA/homes/team" | grep -c '^\.put-')" 0 \
    "no half archive left"
[ "$(avail)" -ge $((3 * 1024 * 1024)) ] || t_fail "the failed put's space was not freed"

# The computer keeps running: the same machine answers.
t_eq "$(guestd_pid)" "$GP" "the same guestd runs"
api GET /v1/computers/team >/dev/null
t_eq "$(api_field state)" running "still running"
r=$(api POST /v1/tools/read_file '{"computer":"team","bot":"alice","path":"a.txt"}')
t_contains "$r" '"content":"one"' "tool calls are answered"

# Space back: the next checkpoint succeeds, with the large file.
rm -f "$CTL_DATA/filler"
t_contains "$(ctl checkpoint team)" "revision 2" "the next checkpoint fits"
check_whole "after space came back"
t_eq "$(guestd_pid)" "$GP" "and the machine was never restarted"

#!/bin/bash
# SPDX-License-Identifier: MIT
# Confinement of file.* paths (G-27, X-6): "..", absolute paths, symlinks
# that lead out (as a directory component and as the final component, for
# read, write, list, mkdir and remove), NUL bytes and over-long names each
# fail with their stable code, links that stay inside work, and nothing
# outside the workspace is read, changed or made.
. "$top_srcdir/tests/lib.sh"

# A directory outside the workspace that guestd's user could write to, so
# a broken confinement would show there.
OUT="$T/outside"
mkdir "$OUT"
chmod 777 "$OUT"
echo canary > "$OUT/canary"
chmod 666 "$OUT/canary"
passwd_sum=$(sha256sum /etc/passwd)

ln -s /etc "$WS/link"
ln -s ../outside "$WS/outdir"
ln -s ../outside/canary "$WS/canlink"
ln -s .. "$WS/up"
echo inside > "$WS/target.txt"
chmod 666 "$WS/target.txt"
ln -s target.txt "$WS/inlink"
mkdir "$WS/sub"
ln -s ../target.txt "$WS/sub/uplink"
t_start_guestd

expect_code() {	# CODE WHAT CMD...
	code=$1
	what=$2
	shift 2
	if err=$("$@" 2>&1 >/dev/null); then
		t_fail "$what: succeeded"
	fi
	t_contains "$err" "rakazoctl: $code" "$what"
}

echo evil > "$T/evil"
PO=PATH_OUTSIDE_WORKSPACE

# ---- lexical ------------------------------------------------------------
for p in ../x a/../../x .. /etc/passwd /x ../outside/canary; do
	expect_code $PO "get $p" rk get "$p" -
	expect_code $PO "put $p" rk put "$T/evil" "$p"
	expect_code $PO "stat $p" rk stat "$p"
done
expect_code $PO "ls /" rk ls /
expect_code $PO "ls .." rk ls ..
expect_code $PO "mkdir ../made" rk mkdir ../made
expect_code $PO "rm -r ../outside" rk rm -r ../outside
expect_code PATH_INVALID "empty segment" rk stat a//b
expect_code PATH_INVALID "dot segment" rk stat ./target.txt

# ---- symlinks that lead out --------------------------------------------
expect_code $PO "get link/passwd" rk get link/passwd -
expect_code $PO "put link/passwd" rk put "$T/evil" link/passwd
expect_code $PO "get link (final)" rk get link -
expect_code $PO "put link (final)" rk put "$T/evil" link
expect_code $PO "ls link" rk ls link
expect_code $PO "ls link/" rk ls link/
expect_code $PO "stat link/passwd" rk stat link/passwd
expect_code $PO "mkdir link/x" rk mkdir link/x
expect_code $PO "rm link/passwd" rk rm link/passwd
expect_code $PO "get canlink" rk get canlink -
expect_code $PO "put canlink" rk put "$T/evil" canlink
expect_code $PO "put outdir/new" rk put "$T/evil" outdir/new
expect_code $PO "put --parents outdir/a/b" rk put --parents "$T/evil" \
    outdir/a/b
expect_code $PO "mkdir -p outdir/x/y" rk mkdir -p outdir/x/y
expect_code $PO "ls outdir" rk ls outdir
expect_code $PO "rm outdir/canary" rk rm outdir/canary
expect_code $PO "get up/outside/canary" rk get up/outside/canary -
expect_code $PO "put up/outside/canary" rk put "$T/evil" up/outside/canary
expect_code $PO "ls up" rk ls up

# stat does not follow the last component: it describes the link.
out=$(rk stat link) || t_fail "stat link"
t_contains "$out" '"type":"symlink"' "stat of a link"

# Removing a link removes the link, never what it points at.
rk rm -r outdir || t_fail "rm -r of a link to a directory"
[ -L "$WS/outdir" ] && t_fail "the link is still there"
rk rm canlink || t_fail "rm of a link to a file"

# ---- symlinks that stay inside -----------------------------------------
out=$(rk get inlink -) || t_fail "get through an inside link"
t_eq "$out" "inside" "read through a link"
out=$(rk get sub/uplink -) || t_fail "get through ../ inside"
t_eq "$out" "inside" "read through a ../ link that stays inside"
printf 'rewritten\n' > "$T/new"
rk put "$T/new" inlink || t_fail "put through an inside link"
[ -L "$WS/inlink" ] || t_fail "the link was replaced"
t_eq "$(cat "$WS/target.txt")" "rewritten" "write through a link"

# ---- NUL bytes and hostile JSON (wsprobe: raw requests) -----------------
out=$(printf '%s\n' \
    'text {"id":2,"op":"file.stat","args":{"path":"a\u0000b"}}' recv \
    'text {"id":3,"op":"file.read","args":{"path":"target.txt\u0000/etc/passwd"}}' recv \
    'text {"id":4,"op":"file.list","args":{"path":["a"]}}' recv \
    'text {"id":5,"op":"file.stat","args":{"path":"target.txt","x":1}}' recv \
    'text {"id":6,"op":"file.stat","args":{}}' recv \
    'text {"id":7,"op":"file.stat","args":{"path":"target.txt"}}' recv |
    "$WSPROBE" --url "$URL" --secret-file "$SECRET" --hello) ||
	t_fail "wsprobe failed: $out"
echo "$out"
# A NUL inside a JSON string is refused by the parser, before any op.
t_eq "$(echo "$out" | grep -c '"ok":false.*"BAD_JSON".*NUL')" 2 \
    "NUL in a path refused"
t_not_contains "$out" '"id":2,"ok":true' "NUL path accepted"
t_not_contains "$out" '"id":3,"ok":true' "NUL path accepted"
for id in 4 5 6; do
	t_contains "$out" "\"id\":$id,\"ok\":false,\"error\":{\"code\":\"BAD_REQUEST\"" \
	    "request $id refused"
done
t_not_contains "$out" "root:" "passwd contents in a reply"
t_contains "$out" '"id":7,"ok":true' "the connection lives on"

# ---- over-long names ----------------------------------------------------
long=$(printf 'n%.0s' $(seq 1 300))
deep=$(printf 'a/%.0s' $(seq 1 2500))x
expect_code NAME_TOO_LONG "300-byte name: get" rk get "$long" -
expect_code NAME_TOO_LONG "300-byte name: put" rk put "$T/evil" "$long"
expect_code NAME_TOO_LONG "300-byte name: mkdir" rk mkdir -p "d/$long"
expect_code NAME_TOO_LONG "5000-byte path: stat" rk stat "$deep"
expect_code NAME_TOO_LONG "5000-byte path: put" rk put --parents \
    "$T/evil" "$deep"
[ -e "$WS/d" ] && t_fail "a refused mkdir -p made a directory"
[ -e "$WS/a" ] && t_fail "a refused put made a directory"

# ---- nothing outside changed --------------------------------------------
t_eq "$(sha256sum /etc/passwd)" "$passwd_sum" "/etc/passwd"
t_eq "$(cat "$OUT/canary")" "canary" "the canary"
t_eq "$(ls -A "$OUT")" "canary" "files made outside"
t_eq "$(ls -A "$T" | grep -c -e '^x$' -e '^made$')" 0 "files made in \$T"
left=$(find "$WS" -name '*.rakazo-tmp-*')
t_eq "$left" "" "temp files left"
kill -0 "$GUESTD_PID" || t_fail "guestd died"
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# A deep TMPDIR (a local computer's lies inside the controller's data
# directory) still leaves room for the screen's capability sockets, whose
# names once were 43-byte tokens and overflowed sun_path's 108 bytes; a
# grant that fails says why, not a stale sentence from its arguments.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
: "${RFBPROBE:?run through make check}"
deep="$T/data/computers/a-computer-id/tmp"
# Deep enough for a token-named socket to overflow, shallow enough for any
# short name to fit.
[ ${#deep} -ge 45 ] && [ ${#deep} -le 80 ] || t_fail "TMPDIR of ${#deep} bytes"
mkdir -p "$deep"
chmod 0777 "$T/data" "$T/data/computers" "$T/data/computers/a-computer-id" "$deep"
TMPDIR=$deep t_start_guestd --gateway 127.0.0.1:0
gw=$(sed -n 's/.*event=gateway.listening .*port=\([0-9]*\).*/\1/p' \
    "$GUESTD_LOG" | head -n 1)

a=$(rk call display.open '{"bot":"alice","width":320,"height":240}') ||
	t_fail "open alice: $a"
g=$(rk call capability.grant '{"bot":"alice","policy":"control"}') ||
	t_fail "grant under a ${#deep}-byte TMPDIR: $g"
t_not_contains "$g" 'Missing field' "no stale detail"
tok=$(printf '%s' "$g" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
[ -n "$tok" ] || t_fail "no token in: $g"

mkfifo "$T/pin" "$T/pout"
"$RFBPROBE" --url "ws://127.0.0.1:$gw/screen/$tok" <"$T/pin" >"$T/pout" 2>&1 &
exec 5>"$T/pin" 6<"$T/pout"
read -r line <&6
printf 'handshake\nupdate\n' >&5
read -r line <&6
read -r line <&6
t_eq "$line" "update 1" "a viewer reaches the screen"
exec 5>&- 6<&-
exit 0

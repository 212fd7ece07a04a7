#!/bin/bash
# SPDX-License-Identifier: MIT
# Teardown (G-5, G-15): closing a display disconnects its viewers first;
# a slot recycled for another bot never accepts the old bot's token.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
: "${RFBPROBE:?run through make check}"
t_start_guestd --gateway 127.0.0.1:0
gw=$(sed -n 's/.*event=gateway.listening .*port=\([0-9]*\).*/\1/p' \
    "$GUESTD_LOG" | head -n 1)
GW="ws://127.0.0.1:$gw"
token_of() {
	printf '%s' "$1" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p'
}
slot_of() {
	printf '%s' "$1" | sed -n 's/.*"slot":\([0-9]*\).*/\1/p'
}

a=$(rk call display.open '{"bot":"alice","width":320,"height":240}') ||
	t_fail "open alice: $a"
sa=$(slot_of "$a")
ta=$(token_of "$(rk call capability.grant \
    '{"bot":"alice","policy":"control"}')")
tv=$(token_of "$(rk call capability.grant '{"bot":"alice","policy":"view"}')")
[ -n "$ta" ] && [ -n "$tv" ] || t_fail "grants"

mkfifo "$T/pin" "$T/pout"
"$RFBPROBE" --url "$GW/screen/$ta" <"$T/pin" >"$T/pout" 2>&1 &
ppid=$!
exec 5>"$T/pin" 6<"$T/pout"
read -r line <&6
printf 'handshake\nupdate\nwait-close 5000\n' >&5
read -r line <&6
read -r line <&6
t_eq "$line" "update 1" "viewer up"
rk call display.close '{"bot":"alice"}' >/dev/null || t_fail "close alice"
read -r line <&6
t_contains "$line" "closed" "viewer disconnected by the close"
exec 5>&- 6<&-
wait "$ppid"
grep -q 'websocket_closed.*closed_by\\":\\"revoked' "$GUESTD_LOG" ||
	t_fail "close did not count as a revocation"
grep -q 'screen.capability.revoked.*reason=display_closed' "$GUESTD_LOG" ||
	t_fail "no display_closed revocation"

b=$(rk call display.open '{"bot":"bob","width":320,"height":240}') ||
	t_fail "open bob: $b"
t_eq "$(slot_of "$b")" "$sa" "bob got alice's old slot"
for t in "$ta" "$tv"; do
	r=$(printf 'handshake\n' | "$RFBPROBE" --url "$GW/screen/$t")
	t_contains "$r" "connect-failed" "old token on a recycled slot"
	r=$(printf 'handshake\n' | "$RFBPROBE" --url "$GW/?token=$t")
	t_contains "$r" "connect-failed" "old token as ?token="
done
tb=$(token_of "$(rk call capability.grant '{"bot":"bob","policy":"view"}')")
r=$(printf 'handshake\nupdate\n' | "$RFBPROBE" --url "$GW/screen/$tb") ||
	t_fail "bob's own token: $r"
t_contains "$r" "init 320 240" "bob's screen"
exit 0

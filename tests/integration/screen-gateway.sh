#!/bin/bash
# SPDX-License-Identifier: MIT
# The screen gateway (G-13 ... G-17, G-34, C-14) with a real Xvfb and our
# RFB-over-websocket client: the test pattern arrives through
# /screen/<token>, /?token= and /websockify?token=; every upgrade carries
# Cache-Control: no-transform; bad paths and tokens are refused before any
# RFB byte with target_rejected; revoke disconnects within 100 ms; expiry
# disconnects and refuses; diagnostics never carry the token.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
: "${RFBPROBE:?run through make check}"
mkdir -p "$T/pages/sub" "$T/novnc/core"
echo '<!doctype html><title>hello</title>' >"$T/pages/sub/hello.html"
echo 'export default 1;' >"$T/novnc/core/rfb.js"
echo 'secret' >"$T/outside"
chmod -R a+rX "$T/pages" "$T/novnc"
t_start_guestd --gateway 127.0.0.1:0 --gateway-pages "$T/pages" \
    --novnc "$T/novnc"
gw=$(sed -n 's/.*event=gateway.listening .*port=\([0-9]*\).*/\1/p' \
    "$GUESTD_LOG" | head -n 1)
[ -n "$gw" ] || t_fail "gateway did not listen"
GW="ws://127.0.0.1:$gw"

# Static pages, with Cache-Control: no-transform; nothing outside them.
if command -v curl >/dev/null 2>&1; then
	h=$(curl -sS -D - -o "$T/got" \
	    "http://127.0.0.1:$gw/embed.html?token=x") || t_fail "embed.html"
	t_contains "$h" "200" "embed.html status"
	t_contains "$(printf '%s' "$h" | tr 'A-Z' 'a-z')" \
	    "cache-control: no-transform" "embed page cache header"
	t_contains "$h" "text/html" "embed page type"
	page=$(cat "$T/got")
	# G-17: no VideoDecoder, state to the parent, noVNC from this port.
	t_contains "$page" "delete window.VideoDecoder" "VideoDecoder removed"
	t_contains "$page" "postMessage" "state reported"
	t_contains "$page" "'loading'" "loading state"
	t_contains "$page" "import('./novnc/core/rfb.js')" "local noVNC"
	t_not_contains "$page" "https://" "no CDN"
	h=$(curl -sS -D - -o "$T/got" "http://127.0.0.1:$gw/novnc/core/rfb.js")
	t_contains "$h" "text/javascript" "noVNC module type"
	t_contains "$(printf '%s' "$h" | tr 'A-Z' 'a-z')" \
	    "cache-control: no-transform" "noVNC cache header"
	cmp -s "$T/got" "$T/novnc/core/rfb.js" || t_fail "noVNC content"
	h=$(curl -sS -D - -o "$T/got" "http://127.0.0.1:$gw/sub/hello.html")
	t_contains "$h" "200" "page directory"
	cmp -s "$T/got" "$T/pages/sub/hello.html" || t_fail "page content"
	for bad in /nope.html /../outside /sub/../../outside /.hidden / \
	    /novnc/../outside /novnc/core/../../../outside /novnc/; do
		c=$(curl -sS --path-as-is -o /dev/null -w '%{http_code}' \
		    "http://127.0.0.1:$gw$bad")
		t_eq "$c" 404 "GET $bad"
	done
fi

out=$(rk call display.open '{"bot":"alice","width":640,"height":480}') ||
	t_fail "open: $out"
dpy=$(printf '%s' "$out" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
xauth=$(printf '%s' "$out" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
mkfifo "$T/xin" "$T/xout"
DISPLAY=$dpy XAUTHORITY=$xauth "$XPATTERN" <"$T/xin" >"$T/xout" 2>&1 &
xpid=$!
exec 7>"$T/xin" 8<"$T/xout"
read -r line <&8
t_eq "$line" "ready 640x480" "xpattern ready"

grant() {	# policy [ttl]
	if [ -n "${2:-}" ]; then
		rk call capability.grant \
		    "{\"bot\":\"alice\",\"policy\":\"$1\",\"ttl\":$2}"
	else
		rk call capability.grant "{\"bot\":\"alice\",\"policy\":\"$1\"}"
	fi
}
token_of() {
	printf '%s' "$1" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p'
}

g=$(grant view) || t_fail "grant: $g"
tok=$(token_of "$g")
[ ${#tok} -ge 22 ] || t_fail "short token: $g"
t_contains "$g" "\"path\":\"/screen/$tok\"" "grant path"
t_contains "$g" '"policy":"view"' "grant policy"
t_contains "$g" '"expires_ms":null' "no expiry without ttl"

# The pattern, three ways (G-34), each with Cache-Control: no-transform.
script='handshake
update
pixel 10 10 ff0000
pixel 630 10 00ff00
pixel 10 470 0000ff
pixel 630 470 ffffff
'
for path in "/screen/$tok" "/?token=$tok" "/websockify?token=$tok"; do
	r=$(printf '%s' "$script" | "$RFBPROBE" --url "$GW$path") ||
		t_fail "pattern via $path: $r"
	t_contains "$r" "open cache-control=no-transform" "cache header $path"
	t_contains "$r" "init 640 480" "server init $path"
	[ "$(printf '%s\n' "$r" | grep -c '^ok$')" -eq 4 ] ||
		t_fail "pixels via $path: $r"
done
# noVNC without a subprotocol works too.
r=$(printf 'handshake\nupdate\npixel 10 10 ff0000\n' |
    "$RFBPROBE" --no-subprotocol --url "$GW/screen/$tok") ||
	t_fail "no subprotocol: $r"

# The X cursor's own shape goes to viewers that take cursor shapes
# (Xvfb's root cursor: 16x16, hotspot 7,7; libvncserver's own is 8x7).
r=$(printf 'handshake cursor\nupdate\npixel 10 10 ff0000\n' |
    "$RFBPROBE" --url "$GW/screen/$tok") || t_fail "cursor viewer: $r"
t_contains "$r" "cursor 16 16 7 7" "X cursor shape"

# A change reaches a connected viewer as an incremental update.
mkfifo "$T/pin" "$T/pout"
"$RFBPROBE" --url "$GW/screen/$tok" <"$T/pin" >"$T/pout" 2>&1 &
ppid=$!
exec 5>"$T/pin" 6<"$T/pout"
read -r line <&6
t_contains "$line" "open" "viewer open"
printf 'handshake\nupdate\n' >&5
read -r line <&6; read -r line <&6
t_eq "$line" "update 1" "first update"
echo "rect 100 100 20 20 123456" >&7
read -r line <&8
printf 'update inc\npixel 105 105 123456\n' >&5
read -r line <&6; read -r line <&6
t_eq "$line" ok "damage reached the viewer"

# Revoke: the connected viewer is gone within 100 ms of the reply.
echo 'wait-close 3000' >&5
before=$(date +%s%3N)
rk call capability.revoke "{\"token\":\"$tok\"}" >"$T/rv" ||
	t_fail "revoke: $(cat "$T/rv")"
after=$(date +%s%3N)
read -r line <&6
closed=${line#closed }
[ "$line" != "$closed" ] || t_fail "viewer not closed: $line"
[ $((closed - after)) -le 100 ] ||
	t_fail "closed $((closed - after)) ms after the revoke returned"
t_note "revoke round trip $((after - before)) ms, closed $((closed - before)) ms after it began"
exec 5>&- 6<&-
wait "$ppid"
grep -q 'websocket_closed.*closed_by\\":\\"revoked' "$GUESTD_LOG" ||
	t_fail "no closed_by revoked event"
r=$(printf 'handshake\n' | "$RFBPROBE" --url "$GW/screen/$tok")
t_contains "$r" "connect-failed" "revoked token refused"
rk call capability.revoke "{\"token\":\"$tok\"}" >"$T/rv" 2>&1 &&
	t_fail "second revoke accepted"
t_contains "$(cat "$T/rv")" NOT_FOUND "second revoke code"

# Refusals: no RFB byte, a target_rejected event with the reason.
rej() {	# path reason
	n0=$(grep -c "target_rejected.*$2" "$GUESTD_LOG")
	r=$(printf 'handshake\n' | "$RFBPROBE" --url "$GW$1")
	t_contains "$r" "connect-failed" "refused $1"
	t_not_contains "$r" "init" "no RFB for $1"
	n1=$(grep -c "target_rejected.*$2" "$GUESTD_LOG")
	[ "$n1" -gt "$n0" ] || t_fail "no target_rejected $2 for $1"
}
rej "/screen/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" authority_rejected
rej "/?token=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" authority_rejected
rej "/screen/short" invalid_path
rej "/screen/$tok/extra" invalid_path
rej "/screen/" invalid_path
rej "/?token=" invalid_path
rej "/nope" invalid_path
rej "/control?token=$tok" invalid_path
g=$(grant control) || t_fail "grant control"
tok2=$(token_of "$g")
rej "/screen/${tok2%?}" invalid_path
rej "/screen/${tok2}x" invalid_path

# A refused upgrade still gets an HTTP status, so a viewer can say why
# (issue 11 item 6): the status line read from a raw socket.
upgrade_status() {	# path
	local line=""
	exec 7<>"/dev/tcp/127.0.0.1/$gw" || t_fail "connect $gw"
	printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n' \
	    "$1" "$gw" >&7
	IFS= read -r -t 10 line <&7 || true
	exec 7<&-
	printf '%s' "${line%$'\r'}"
}
s=$(upgrade_status "/screen/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
t_contains "$s" "HTTP/1.1 403" "unknown token upgrade status"
s=$(upgrade_status "/websockify?token=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
t_contains "$s" "HTTP/1.1 403" "unknown ?token= upgrade status"
s=$(upgrade_status "/screen/short")
t_contains "$s" "HTTP/1.1 404" "malformed token upgrade status"
s=$(upgrade_status "/nope")
t_contains "$s" "HTTP/1.1 404" "no screen path upgrade status"
s=$(upgrade_status "/screen/$tok2")
t_contains "$s" "HTTP/1.1 101" "good token upgrade status"
t_note "refused upgrades: 403 (token), 404 (path); a good token: $s"

# Expiry: a ttl of 1 s disconnects the viewer and refuses the token.
g=$(grant view 1) || t_fail "grant ttl: $g"
tok3=$(token_of "$g")
printf '%s' "$g" | grep -q '"expires_ms":[0-9]' || t_fail "no expires_ms: $g"
r=$(printf 'handshake\nupdate\nwait-close 5000\n' |
    "$RFBPROBE" --url "$GW/screen/$tok3")
t_contains "$r" "closed " "expired viewer closed"
r=$(printf 'handshake\n' | "$RFBPROBE" --url "$GW/screen/$tok3")
t_contains "$r" "connect-failed" "expired token refused"
grep -q 'screen.capability.revoked.*reason=expired' "$GUESTD_LOG" ||
	t_fail "no expiry event"

# Bad grants.
rk call capability.grant '{"bot":"alice","policy":"admin"}' >"$T/r" 2>&1 &&
	t_fail "policy admin accepted"
rk call capability.grant '{"bot":"nobody","policy":"view"}' >"$T/r" 2>&1 &&
	t_fail "grant without a display"
t_contains "$(cat "$T/r")" DISPLAY_NOT_OPEN "no display code"

# Diagnostics carry ids and policies, never a token.
grep -q 'websocket_upgraded.*connection_id' "$GUESTD_LOG" ||
	t_fail "no upgraded event"
for t in "$tok" "$tok2" "$tok3"; do
	grep -q -- "$t" "$GUESTD_LOG" && t_fail "a token reached the log"
done

# The CLI: screen-url prints the raw websocket and the embed page URL on
# the gateway port; revoke takes the token back.
u=$(rk screen-url alice --control --ttl 600) || t_fail "screen-url: $u"
wsu=$(printf '%s\n' "$u" | sed -n 1p)
page=$(printf '%s\n' "$u" | sed -n 2p)
case "$wsu" in
"ws://127.0.0.1:$gw/screen/"*) ;;
*) t_fail "screen-url ws line: $u" ;;
esac
t5=${wsu##*/}
t_eq "$page" "http://127.0.0.1:$gw/embed.html?token=$t5" "embed page URL"
r=$(printf 'handshake\nupdate\npixel 10 10 ff0000\n' | "$RFBPROBE" --url "$wsu") ||
	t_fail "printed URL: $r"
rk screen-url alice --ttl 0 >/dev/null 2>&1 && t_fail "ttl 0 accepted"
rk revoke "$t5" >/dev/null || t_fail "rk revoke"
r=$(printf 'handshake\n' | "$RFBPROBE" --url "$wsu")
t_contains "$r" "connect-failed" "revoked by the CLI"

echo quit >&7
wait "$xpid"
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# The embed page (G-17) and the gateway (G-13 ... G-15, G-34) with real
# clients: stock noVNC from Debian's `novnc` package, served by guestd's
# gateway (its default --novnc directory), in a real headless Chromium driven
# by playwright-core (tests/integration/novnc.mjs).  The page posts
# loading, connecting, connected to its parent; the test pattern's pixels
# arrive; a control token's clicks and keys reach the X client, a view
# token's do not; revoked, expired, recycled, unknown and malformed tokens
# end in `failed`; a revoke while shown ends in `disconnected`; every
# gateway response carries Cache-Control: no-transform.
#
# Skips only without Chromium or Node.  playwright-core comes from
# tests/browser (packaging/install-deps.sh runs `npm ci` there); when that
# tree has no node_modules (a dist tarball), the same lock file is
# installed into the test's temp dir.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
: "${XPATTERN:?run through make check}"
: "${XINPUT_RECORDER:?run through make check}"
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser ||
    true)}
[ -n "$CHROMIUM" ] || { echo "# no chromium"; exit 77; }
command -v node >/dev/null 2>&1 || { echo "# no node"; exit 77; }
NOVNC_DIR=${NOVNC_DIR:-/usr/share/novnc}
[ -f "$NOVNC_DIR/core/rfb.js" ] ||
	t_fail "no noVNC in $NOVNC_DIR (Debian package novnc; see packaging/install-deps.sh)"

t_browser_modules
NOVNC_MODULES=$BROWSER_MODULES


# The parent page: opens embed pages in iframes and records the states
# each one posts, in order.
mkdir -p "$T/pages"
cat >"$T/pages/parent.html" <<'EOF'
<!doctype html>
<html><head><meta charset="utf-8"><title>parent</title></head><body>
<script>
'use strict';
window.states = [];
const frames = [];
addEventListener('message', (e) => {
  const i = frames.findIndex((f) => f.contentWindow === e.source);
  if (i >= 0 && e.data && e.data.source === 'rakazo-screen')
    window.states[i].push({ state: e.data.state, detail: e.data.detail });
});
window.openEmbed = (src) => {
  const f = document.createElement('iframe');
  const i = frames.length;
  // One in view at a time, where the test's clicks land.
  for (const g of frames)
    g.style.display = 'none';
  f.name = 'embed' + i;
  f.width = 700;
  f.height = 520;
  frames.push(f);
  window.states.push([]);
  f.src = src;
  document.body.appendChild(f);
  return i;
};
window.closeEmbed = (i) => {
  const w = frames[i].contentWindow;
  if (w.rakazoScreen)
    w.rakazoScreen.disconnect();
};
</script>
</body></html>
EOF
chmod -R a+rX "$T/pages"
# No --novnc: Debian's package is the default.
t_start_guestd --gateway 127.0.0.1:0 --gateway-pages "$T/pages"
gw=$(sed -n 's/.*event=gateway.listening .*port=\([0-9]*\).*/\1/p' \
    "$GUESTD_LOG" | head -n 1)
[ -n "$gw" ] || t_fail "gateway did not listen"

token_of() {
	printf '%s' "$1" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p'
}
grant() {	# bot policy [ttl]
	if [ -n "${3:-}" ]; then
		rk call capability.grant \
		    "{\"bot\":\"$1\",\"policy\":\"$2\",\"ttl\":$3}"
	else
		rk call capability.grant "{\"bot\":\"$1\",\"policy\":\"$2\"}"
	fi
}
open_display() {	# bot -> "display xauthority"
	o=$(rk call display.open "{\"bot\":\"$1\",\"width\":640,\"height\":480}") ||
		t_fail "open $1: $o"
	printf '%s %s\n' \
	    "$(printf '%s' "$o" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')" \
	    "$(printf '%s' "$o" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')"
}

# A recycled token: granted for a bot whose display was closed.
open_display gone >/dev/null
tgone=$(token_of "$(grant gone control)")
rk call display.close '{"bot":"gone"}' >/dev/null || t_fail "close gone"

# The pattern display (it takes the recycled slot).
read -r dpy xauth <<<"$(open_display pat)"
mkfifo "$T/xin" "$T/xout"
DISPLAY=$dpy XAUTHORITY=$xauth "$XPATTERN" <"$T/xin" >"$T/xout" 2>&1 &
xpid=$!
T_KILL="$T_KILL $xpid"
exec 7>"$T/xin" 8<"$T/xout"
read -r line <&8
t_eq "$line" "ready 640x480" "xpattern ready"

# The input display.
read -r rdpy rxauth <<<"$(open_display rec)"
mkfifo "$T/rec"
DISPLAY=$rdpy XAUTHORITY=$rxauth "$XINPUT_RECORDER" >"$T/rec" 2>&1 &
rpid=$!
T_KILL="$T_KILL $rpid"
exec 9<"$T/rec"
read -r line <&9
t_eq "$line" ready "recorder ready"

TOK_PATTERN=$(token_of "$(grant pat control)")
TOK_REVOKE=$(token_of "$(grant pat view)")
TOK_REC_VIEW=$(token_of "$(grant rec view)")
TOK_REC_CONTROL=$(token_of "$(grant rec control)")
trev=$(token_of "$(grant pat view)")
rk call capability.revoke "{\"token\":\"$trev\"}" >/dev/null ||
	t_fail "revoke"
# Expired: a 1 s ttl, waited out on guestd's own expiry event.
texp=$(token_of "$(grant pat view 1)")
for _ in $(seq 100); do
	grep -q 'screen.capability.revoked.*reason=expired' "$GUESTD_LOG" &&
		break
	sleep 0.1
done
grep -q 'screen.capability.revoked.*reason=expired' "$GUESTD_LOG" ||
	t_fail "the 1 s capability did not expire"
for t in "$TOK_PATTERN" "$TOK_REVOKE" "$TOK_REC_VIEW" "$TOK_REC_CONTROL" \
    "$trev" "$texp" "$tgone"; do
	[ ${#t} -ge 22 ] || t_fail "grant returned no token"
done
# Unknown but well-formed, and malformed ones (short, long, bad alphabet).
BAD_TOKENS="$trev $texp $tgone AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA short \
${TOK_PATTERN}x ${TOK_PATTERN%?}! %2e%2e"

export NOVNC_MODULES CHROMIUM TOK_PATTERN TOK_REVOKE TOK_REC_VIEW \
    TOK_REC_CONTROL BAD_TOKENS
export GW="http://127.0.0.1:$gw"
export REVOKE_CMD="$RAKAZOCTL guest --url $URL --secret-file $SECRET call capability.revoke"
timeout 120 node "$top_srcdir/tests/integration/novnc.mjs" >"$T/node.out" 2>&1
rc=$?
cat "$T/node.out"
[ "$rc" -eq 0 ] || t_fail "novnc.mjs exited $rc"
t_contains "$(tail -n 1 "$T/node.out")" done "browser checks finished"

# What reached the X client: the control viewer's click and "hi", nothing
# of the view viewer's click at 100,100 or its "q".
seen=""
while read -r -t 10 line <&9; do
	case "$line" in
	*"keysym=0x71"*|*"x=100 y=100"*)
		t_fail "view input reached the client: $line" ;;
	"key release keysym=0x69"*)
		seen="$seen|$line"; break ;;
	*) seen="$seen|$line" ;;
	esac
done
t_contains "$seen" "button press 1 x=200 y=150" "control click"
t_contains "$seen" "button release 1 x=200 y=150" "control release"
t_contains "$seen" "key press keysym=0x68 utf8=68" "typed h"
t_contains "$seen" "key press keysym=0x69 utf8=69" "typed i"

# The gateway's own account: refused upgrades, a revocation, no token.
grep -q 'target_rejected.*authority_rejected' "$GUESTD_LOG" ||
	t_fail "no authority_rejected event"
grep -q 'target_rejected.*invalid_path' "$GUESTD_LOG" ||
	t_fail "no invalid_path event"
grep -q 'websocket_closed.*closed_by\\":\\"revoked' "$GUESTD_LOG" ||
	t_fail "no closed_by revoked event"
for t in "$TOK_PATTERN" "$TOK_REVOKE" "$TOK_REC_VIEW" "$TOK_REC_CONTROL"; do
	grep -q -- "$t" "$GUESTD_LOG" && t_fail "a token reached the log"
done

echo quit >&7
wait "$xpid"
exit 0

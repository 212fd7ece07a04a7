#!/bin/bash
# SPDX-License-Identifier: MIT
# The terminal (G-18, G-19, G-35) through our own websocket client: a
# control capability opens a shell as the workspace user in bots/alice/
# with TERM=xterm-256color; commands and output, resize seen by stty size,
# UTF-8 both ways, frames split across messages and several in one; view
# capabilities, unknown tokens and bad paths are refused before the
# upgrade; each connection gets its own shell, a dropped one hangs its
# shell up and a new connection gets a new shell while the others run.
# The page and xterm.js come from the gateway, no CDN.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/integration/term-lib.sh"
term_start
ctl=$(term_grant control)
view=$(term_grant view)

# Commands, environment, cwd, user, resize, UTF-8.
r=$(term_probe "$ctl" <<'SCRIPT'
send echo U""SER=$(id -un) UID=$(id -u)\r
grab USER=
send echo C""WD=$PWD T=$TERM B=$RAKAZO_BOT\r
grab CWD=
resize 123 45
send echo S""IZE=$(stty size)\r
grab SIZE=
send echo "ut""f: h\xc3\xa9llo \xe2\x9c\x93 \xe6\x97\xa5\xe6\x9c\xac"\r
expect utf: h\xc3\xa9llo \xe2\x9c\x93 \xe6\x97\xa5\xe6\x9c\xac\r
split 2 echo SPL""IT-\xc3\xa9\r
expect SPLIT-\xc3\xa9\r
raw 000000000b6563686f204f22224e450d000000000c6563686f2054574f2222580d
expect ONE\r
expect TWOX\r
send echo J""OBS=${-//[^m]/}\r
grab JOBS=
send exit\r
expect-close
SCRIPT
) || t_fail "basic session: $r"
t_contains "$r" "grab USER=$T_USER UID=$(id -u "$T_USER")" "user"
[ "$(id -u "$T_USER")" != 0 ] || t_fail "shell as root"
t_contains "$r" "grab CWD=$WS/bots/alice T=xterm-256color B=alice" "env"
t_contains "$r" "grab SIZE=45 123" "stty size after resize"
t_contains "$r" "grab JOBS=m" "job control (controlling terminal)"
t_contains "$r" "closed 1000 shell exited" "exit closes"
[ "$(printf '%s\n' "$r" | grep -c '^ok$')" -eq 4 ] || t_fail "expects: $r"

# rakazoctl guest term-url TOKEN: the websocket and the page.
r=$(rk term-url "$ctl") || t_fail "term-url: $r"
t_eq "$r" "ws://127.0.0.1:$GW/term/$ctl
http://127.0.0.1:$GW/term.html?token=$ctl" "term-url"
rk term-url 'a/b' >/dev/null 2>&1 && t_fail "term-url took a bad token"

# Refused before the upgrade: view capability, unknown token, bad paths.
r=$(term_probe "$view" </dev/null)
t_contains "$r" "refused" "view capability"
grep -q 'event=term.rejected reason=view_capability' "$GUESTD_LOG" ||
	t_fail "view rejection not logged"
r=$(term_probe "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" </dev/null)
t_contains "$r" "refused" "unknown token"
r=$(term_probe "$ctl/x" </dev/null)
t_contains "$r" "refused" "token with a suffix"
r=$("$TERMPROBE" --url "ws://127.0.0.1:$GW/term/" </dev/null)
t_contains "$r" "refused" "no token"
! grep -q "$ctl" "$GUESTD_LOG" || t_fail "token logged"
# ... with an HTTP status, not an empty reply (issue 11 item 6): the
# status line read from a raw socket.
upgrade_status() {	# path
	local line=""
	exec 7<>"/dev/tcp/127.0.0.1/$GW" || t_fail "connect $GW"
	printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n' \
	    "$1" "$GW" >&7
	IFS= read -r -t 10 line <&7 || true
	exec 7<&-
	printf '%s' "${line%$'\r'}"
}
t_contains "$(upgrade_status "/term/$view")" "HTTP/1.1 403" "view status"
t_contains "$(upgrade_status "/term/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")" \
    "HTTP/1.1 403" "unknown token status"
t_contains "$(upgrade_status "/term/$ctl/x")" "HTTP/1.1 404" "bad path status"

# Two shells at once, independent; a dropped one is hung up; a new
# connection gets a new shell while the other keeps running.
term_open A "$ctl"
term_open B "$ctl"
pa=$(term_pid A)
pb=$(term_pid B)
[ "$pa" != "$pb" ] || t_fail "one shell for two connections"
term_say A 'send cd /; X=only-in-a\r'
term_say B 'send echo "X""=[$X]" D""IR=$PWD\r'
term_say B 'grab X='
t_eq "$(term_line B)" "grab X=[] DIR=$WS/bots/alice" "shells independent"
kill "$A_PID"			# A drops its connection
term_gone "$pa" || t_fail "dropped connection's shell still runs"
kill -0 "$pb" || t_fail "other shell died with A"
term_open C "$ctl"
pc=$(term_pid C)
[ "$pc" != "$pa" ] && [ "$pc" != "$pb" ] || t_fail "no new shell"
kill -0 "$pb" || t_fail "B's shell died when C connected"
term_say B 'send echo A""LIVE\r'
term_say B 'expect ALIVE'
t_eq "$(term_line B)" "ok" "B still works"

# The page and xterm.js from this port, never a CDN.
if command -v curl >/dev/null 2>&1 && [ -f "$TERM_ASSETS/term.html" ]; then
	h=$(curl -sS -D - -o "$T/page" "http://127.0.0.1:$GW/term.html")
	t_contains "$h" "200" "term.html"
	t_contains "$h" "text/html" "term.html type"
	page=$(cat "$T/page")
	t_contains "$page" "xterm/xterm.js" "page loads xterm.js locally"
	t_contains "$page" "'/term/'" "page connects to /term/"
	t_not_contains "$page" "https://" "no CDN"
	if [ -f "$TERM_ASSETS/xterm/xterm.js" ]; then
		c=$(curl -sS -o /dev/null -w '%{http_code}' \
		    "http://127.0.0.1:$GW/xterm/xterm.js")
		t_eq "$c" 200 "xterm.js served"
	fi
	for bad in /xterm/../../../etc/passwd /xterm/.hidden /xterm/ \
	    /term.html/x; do
		c=$(curl -sS --path-as-is -o /dev/null -w '%{http_code}' \
		    "http://127.0.0.1:$GW$bad")
		t_eq "$c" 404 "GET $bad"
	done
fi
exit 0

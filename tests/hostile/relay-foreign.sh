#!/bin/bash
# SPDX-License-Identifier: MIT
# The proxy relay adds the bot's proxy credentials to whatever reaches it,
# and its port is predictable (derived from the profile path), so it must
# serve the bot's own browser and nothing else: a client of another uid,
# and a client of guestd's own uid outside the browser's process tree,
# are refused (403) before anything reaches the upstream proxy, plain
# request or CONNECT; the browser still browses through it.
. "$top_srcdir/tests/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "# needs root (clients as other users)"; exit 77; }
command -v setpriv >/dev/null 2>&1 || { echo "# no setpriv"; exit 77; }
. "$top_srcdir/tests/lib-browser.sh"

# A browser's first start may take long on a loaded machine.
rk() {
	"$RAKAZOCTL" guest --timeout 60000 --url "$URL" --secret-file "$SECRET" "$@"
}

PW="s3cret-pw-$$"
t_start_guestd
tb_fixture proxy proxy "user1:$PW"
out=$(tb_call browser.open "{\"bot\":\"px\",\"proxy\":{\"url\":\"http://127.0.0.1:$proxy_PORT\",\"username\":\"user1\",\"password\":\"$PW\"}}")
t_eq "$(printf '%s' "$out" | jq -r .proxied)" true "proxied"
tb_call page.navigate '{"bot":"px","url":"http://proxied.example/"}' >/dev/null
t_contains "$(tb_call page.snapshot '{"bot":"px"}' | jq -r .text)" \
    "via upstream proxy" "the browser through the relay"
args=$(for p in $(tb_browser_pids px); do tr '\0' ' ' <"/proc/$p/cmdline"; echo; done)
rport=$(printf '%s' "$args" | sed -n 's/.*--proxy-server=http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' | head -1)
[ -n "$rport" ] || t_fail "no relay port"

# as UID GID CMD...: a client as another user, no groups.
as() {
	_u=$1 _g=$2
	shift 2
	setpriv --reuid "$_u" --regid "$_g" --clear-groups "$@"
}
gu=$(id -u "$T_USER")
gg=$(id -g "$T_USER")
other=4243
while getent passwd "$other" >/dev/null || [ "$other" -eq "$gu" ]; do
	other=$((other + 1))
done
try() {	# what, then the client command
	_what=$1
	shift
	code=$("$@" curl -sS -o /dev/null -w '%{http_code}' --max-time 10 \
	    -x "http://127.0.0.1:$rport" http://proxied.example/foreign \
	    2>/dev/null)
	t_eq "$code" 403 "$_what: plain request"
	code=$("$@" curl -sS -o /dev/null -w '%{http_connect}' --max-time 10 \
	    -p -x "http://127.0.0.1:$rport" https://foreign.example/ \
	    2>/dev/null)
	t_eq "$code" 403 "$_what: CONNECT"
}
try "another uid ($other)" as "$other" "$other"
try "root" env
try "guestd's own uid, not the browser" as "$gu" "$gg"
grep -q foreign "$T/proxy.log" &&
	t_fail "a refused client reached the upstream proxy"
n=$(grep -c "event=relay.refused" "$GUESTD_LOG")
[ "$n" -ge 6 ] || t_fail "$n refusals logged"

# The browser still goes through the relay after the refusals.
tb_call page.navigate '{"bot":"px","url":"http://proxied.example/again"}' \
    >/dev/null
tb_wait_log "$T/proxy.log" "proxy GET http://proxied.example/again auth=ok"
t_note "relay-foreign ok"

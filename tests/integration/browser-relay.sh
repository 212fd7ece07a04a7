#!/bin/bash
# SPDX-License-Identifier: MIT
# The proxy relay (G-23): Chromium goes through 127.0.0.1:<derived port>,
# the relay adds Proxy-Authorization for the upstream proxy (a fixture
# that checks it), CONNECT too; loopback stays direct; the credentials
# appear in no log, no process argument and no reply; the relay stops with
# the browser.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-browser.sh"

PW="s3cret-pw-$$"
tb_fixture site site
tb_fixture proxy proxy "user1:$PW"
SITE="http://127.0.0.1:$site_PORT"

# The relay serves only the browser's own processes (relay-foreign.sh), so
# the byte checks below run curl inside the browser's process tree: a
# wrapper starts inside.sh as a child of the browser's main process, then
# becomes Chromium.  inside.sh waits for "go" before the slow transfer.
IN="$T/inside"
mkdir -m 777 "$IN"
CURL=$(command -v curl)
cat >"$T/inside.sh" <<EOF
#!/bin/bash
rp=\$1
$CURL -sS -p -x "http://127.0.0.1:\$rp" "$SITE/big?mb=1" | md5sum >"$IN/t" &&
    mv "$IN/t" "$IN/tunnel"
for i in \$(seq 1200); do [ -e "$IN/go" ] && break; sleep 0.05; done
$CURL -sS -p -x "http://127.0.0.1:\$rp" --limit-rate 16M "$SITE/big?mb=24" |
    wc -c >"$IN/big"
touch "$IN/done"
EOF
cat >"$T/chromium-wrap" <<EOF
#!/bin/bash
for a in "\$@"; do
	case \$a in --proxy-server=http://127.0.0.1:*)
		"$T/inside.sh" "\${a##*:}" >"$IN/log" 2>&1 & ;;
	esac
done
exec "$(command -v "${GUESTD_BROWSER:-chromium}")" "\$@"
EOF
chmod 755 "$T/inside.sh" "$T/chromium-wrap"
GUESTD_BROWSER="$T/chromium-wrap"
export GUESTD_BROWSER
# A browser's first start may take long on a loaded machine.
rk() {
	"$RAKAZOCTL" guest --timeout 60000 --url "$URL" --secret-file "$SECRET" "$@"
}
t_start_guestd

out=$(tb_call browser.open "{\"bot\":\"px\",\"proxy\":{\"url\":\"http://127.0.0.1:$proxy_PORT\",\"username\":\"user1\",\"password\":\"$PW\"}}")
t_eq "$(printf '%s' "$out" | jq -r .proxied)" true "proxied"
t_not_contains "$out" "$PW" "password in the reply"

tb_call page.navigate '{"bot":"px","url":"http://proxied.example/"}' >/dev/null
t_contains "$(tb_call page.snapshot '{"bot":"px"}' | jq -r .text)" \
    "via upstream proxy" "page through the proxy"
grep -q "proxy GET http://proxied.example/ auth=ok" "$T/proxy.log" ||
    t_fail "upstream saw no authorized GET: $(cat "$T/proxy.log")"

# CONNECT is forwarded with the credentials as well.
rk call page.navigate '{"bot":"px","url":"https://secure.example/"}' \
    >/dev/null 2>&1
tb_wait_log "$T/proxy.log" "proxy CONNECT secure.example:443 auth=ok"

# Loopback goes direct: the fixture site answers, the proxy never hears.
tb_call page.navigate "{\"bot\":\"px\",\"url\":\"$SITE/whoami\"}" >/dev/null
tb_wait_log "$T/site.log" "whoami"
grep -q "GET http://127.0.0.1" "$T/proxy.log" &&
    t_fail "loopback went through the proxy"

# Where the relay listens, and that nothing secret is anywhere visible.
args=$(for p in $(tb_browser_pids px); do tr '\0' ' ' <"/proc/$p/cmdline"; echo; done)
rport=$(printf '%s' "$args" | sed -n 's/.*--proxy-server=http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' | head -1)
[ -n "$rport" ] || t_fail "no --proxy-server in $args"
[ "$rport" -ge 20000 ] && [ "$rport" -lt 30000 ] || t_fail "relay port $rport"
t_not_contains "$args" "$PW" "password in process arguments"
t_not_contains "$args" "user1" "user name in process arguments"
b64=$(printf 'user1:%s' "$PW" | base64)
t_not_contains "$(cat "$GUESTD_LOG")" "$PW" "password in the log"
t_not_contains "$(cat "$GUESTD_LOG")" "$b64" "credentials in the log"
t_not_contains "$(tb_call browser.list '{}')" "$PW" "password in browser.list"
ss -ltn | grep -q "127.0.0.1:$rport " || t_fail "relay not on loopback"

# A CONNECT tunnel carries bytes both ways, and a slow reader of a big
# body holds guestd's memory to its fixed buffers (backpressure); the
# reader is the browser's child (inside.sh above).
direct=$(curl -sS "$SITE/big?mb=1" | md5sum)
tb_wait_file "$IN/tunnel" 30
t_eq "$(cat "$IN/tunnel")" "$direct" "body through the CONNECT tunnel"
before=$(t_guestd_hwm_kb)
touch "$IN/go"
tb_wait_file "$IN/done" 120
t_eq "$(cat "$IN/big")" $((24 << 20)) "big body through the relay"
after=$(t_guestd_hwm_kb)
[ $((after - before)) -lt 8192 ] ||
    t_fail "guestd grew by $((after - before)) KiB relaying 24 MiB slowly"
tb_wait_log "$T/proxy.log" "proxy CONNECT 127.0.0.1:$site_PORT auth=ok"

# A proxy URL with credentials in it is refused without echoing them.
err=$(tb_err browser.open "{\"bot\":\"py\",\"proxy\":{\"url\":\"http://u:$PW@127.0.0.1:1\"}}")
t_contains "$err" BAD_REQUEST "credentialed proxy url"
t_not_contains "$err" "$PW" "password echoed"

tb_call browser.close '{"bot":"px"}' >/dev/null
ss -ltn | grep -q "127.0.0.1:$rport " && t_fail "relay outlived the browser"
t_note "browser-relay ok"

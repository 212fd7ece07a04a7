#!/bin/bash
# SPDX-License-Identifier: MIT
# The control channel admits only GET /control with the right bearer secret
# and our subprotocol, binds only the address it was given, requires hello
# first, and never writes the secret anywhere.
. "$top_srcdir/tests/lib.sh"

# No secret at all: guestd refuses to start.
out=$("$GUESTD" --listen 127.0.0.1:0 --workspace "$WS" --user "$T_USER" 2>&1) &&
	t_fail "guestd started without a secret"
t_contains "$out" "no control secret" "missing secret message"

# A secret file others can read is refused.
t_secret
chmod 644 "$SECRET"
out=$("$GUESTD" --listen 127.0.0.1:0 --secret-file "$SECRET" \
    --workspace "$WS" --user "$T_USER" 2>&1) &&
	t_fail "guestd accepted a world-readable secret file"
chmod 600 "$SECRET"

t_start_guestd
secret=$(cat "$SECRET")

out=$(rk health) || t_fail "health failed"
t_contains "$out" '"state":"ok"' "health state"

# Wrong secret: refused before any request.
echo "wrong-secret-0123456789abcdef" > "$T/wrong"
chmod 600 "$T/wrong"
"$RAKAZOCTL" guest --url "$URL" --secret-file "$T/wrong" health \
    >"$T/out" 2>"$T/err"
rc=$?
t_eq "$rc" 3 "exit status with a wrong secret"
t_contains "$(cat "$T/err")" "UNAUTHORIZED" "wrong secret error"

# No Authorization header, wrong path, missing subprotocol.
out=$(echo recv | "$WSPROBE" --url "$URL" --no-auth)
t_contains "$out" "connect-failed" "no credentials"
out=$(echo recv | "$WSPROBE" --url "$URL" --secret-file "$SECRET" \
    --path /other)
t_contains "$out" "connect-failed" "wrong path"
out=$(echo recv | "$WSPROBE" --url "$URL" --secret-file "$SECRET" \
    --no-subprotocol)
t_contains "$out" "connect-failed" "no subprotocol"

# hello comes first, in our version.
out=$(printf '%s\n' 'text {"id":1,"op":"health"}' recv \
    'text {"id":2,"op":"hello","args":{"version":99}}' recv \
    'text {"id":3,"op":"hello","args":{"version":1}}' recv \
    'text {"id":4,"op":"health"}' recv |
    "$WSPROBE" --url "$URL" --secret-file "$SECRET")
t_contains "$out" '"id":1,"ok":false' "request before hello"
t_contains "$out" 'HELLO_REQUIRED' "request before hello"
t_contains "$out" 'UNSUPPORTED_VERSION' "hello with another version"
t_contains "$out" '"id":3,"ok":true' "hello"
t_contains "$out" '"id":4,"ok":true' "health after hello"

# Bound to 127.0.0.1 only: other loopback and non-loopback addresses are
# refused.
if (exec 3<>"/dev/tcp/127.0.0.2/$PORT") 2>/dev/null; then
	t_fail "guestd answers on 127.0.0.2"
fi
for ip in $(hostname -I 2>/dev/null); do
	case "$ip" in
	*:*) continue ;;
	esac
	if (exec 3<>"/dev/tcp/$ip/$PORT") 2>/dev/null; then
		t_fail "guestd answers on $ip"
	fi
done

# Plain HTTP gets a 404, not a crash.
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
printf 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' >&3
read -r status <&3
exec 3>&-
t_contains "$status" "404" "plain HTTP"

# The secret is in no log line.
kill -0 "$GUESTD_PID" || t_fail "guestd died"
if grep -qF "$secret" "$GUESTD_LOG"; then
	t_fail "the secret reached the log"
fi

# The secret from the environment works and commands do not inherit it.
kill "$GUESTD_PID"; wait "$GUESTD_PID" 2>/dev/null; GUESTD_PID=""
env_secret=$(head -c 24 /dev/urandom | base64 | tr '+/' '-_')
rm -f "$T/ready"; mkfifo "$T/ready"
user_args=""; [ "$(id -u)" -eq 0 ] && user_args="--user $T_USER"
GUESTD_SECRET="$env_secret" "$GUESTD" --listen 127.0.0.1:0 \
    --workspace "$WS" --ready-file "$T/ready" $user_args \
    >"$GUESTD_LOG" 2>&1 &
GUESTD_PID=$!
exec 4<>"$T/ready"
read -t 30 -r PORT <&4 || t_fail "guestd did not start"
exec 4<&-
URL="ws://127.0.0.1:$PORT"
out=$(RAKAZO_GUEST_SECRET="$env_secret" "$RAKAZOCTL" guest --url "$URL" \
    exec -- 'echo "secret=${GUESTD_SECRET:-none}"') || t_fail "exec failed"
t_eq "$out" "secret=none" "GUESTD_SECRET inherited by a command"
exit 0

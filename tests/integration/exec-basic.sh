#!/bin/bash
# SPDX-License-Identifier: MIT
# exec (G-26, X-1, X-4): output and exit codes, stderr kept apart, the
# caller's env over a clean one (nothing of guestd's own leaks), the default
# cwd bots/<bot>/ with bots/<bot>/ and shared/ made on the way, confined
# cwd, the unprivileged user, UTF-8 (valid and not) in JSON results, stdin.
. "$top_srcdir/tests/lib.sh"

# Exported into guestd's environment: a command must not see it.
RAKAZO_TEST_LEAK=leaked-$$
export RAKAZO_TEST_LEAK
t_start_guestd
wsreal=$(cd "$WS" && pwd -P)

out=$(rk exec -- echo hello) || t_fail "echo failed"
t_eq "$out" "hello" "echo"

rk exec -- 'exit 7'
t_eq "$?" 7 "exit code"
rk exec -- 'kill -USR1 $$'
t_eq "$?" $((128 + 10)) "exit status of a signalled command"

rk exec -- 'echo to-out; echo to-err >&2' >"$T/out" 2>"$T/err" ||
	t_fail "stdout/stderr command failed"
t_eq "$(cat "$T/out")" "to-out" "stdout alone"
t_contains "$(cat "$T/err")" "to-err" "stderr"
t_not_contains "$(cat "$T/err")" "to-out" "stdout on stderr"

out=$(rk exec --env FOO=bar --env 'SPACED=a b' --env PATH=/x:/y -- \
    'echo "$FOO|$SPACED|$PATH"') || t_fail "env failed"
t_eq "$out" "bar|a b|/x:/y" "caller env"
rk exec --env '1BAD=x' -- true 2>/dev/null && t_fail "bad env name accepted"

out=$(rk exec -- 'echo "${RAKAZO_TEST_LEAK-unset}|$HOME|$USER|$LOGNAME|$LANG|$TERM|$PATH"') ||
	t_fail "clean env failed"
t_eq "$out" "unset|$WS|$T_USER|$T_USER|C.UTF-8|dumb|/usr/local/bin:/usr/bin:/bin" \
    "clean env"
n=$(rk exec -- 'env | grep -c -v "^_="')
[ "$n" -le 12 ] || t_fail "environment has $n variables: $(rk exec -- env)"

# Workspace root by default; bots/<bot>/ with a bot, made with shared/.
t_eq "$(rk exec -- pwd -P)" "$wsreal" "default cwd"
out=$(rk --bot alice exec -- 'pwd -P; echo "$RAKAZO_BOT"') ||
	t_fail "exec as a bot failed"
t_eq "$out" "$wsreal/bots/alice
alice" "bot cwd and RAKAZO_BOT"
[ -d "$WS/shared" ] || t_fail "shared/ not made"
t_eq "$(rk exec --cwd shared -- pwd -P)" "$wsreal/shared" "--cwd"
rk exec --cwd no/such -- true 2>/dev/null && t_fail "missing cwd accepted"
rk exec --cwd ../ -- true 2>/dev/null && t_fail "cwd outside accepted"
rk exec --cwd /etc -- true 2>/dev/null && t_fail "absolute cwd accepted"
ln -s /etc "$WS/out"
rk exec --cwd out -- true 2>/dev/null && t_fail "cwd via an escaping symlink"

# The workspace user, never root.
uid=$(rk exec -- id -u) || t_fail "id failed"
t_eq "$uid" "$(id -u "$T_USER")" "command uid"
[ "$(id -u)" -eq 0 ] && [ "$uid" -eq 0 ] && t_fail "command ran as root"

# Valid UTF-8 passes, invalid bytes become U+FFFD, stderr apart.
out=$(rk exec --json -- "printf 'h\\303\\251llo'; printf 'a\\377b\\300\\257c' >&2") ||
	t_fail "--json failed"
echo "$out"
case "$out" in
*'"stdout":"héllo"'* | *'"stdout":"h\u00e9llo"'*) ;;
*) t_fail "UTF-8 stdout: $out" ;;
esac
case "$out" in
*'"stderr":"a�b��c"'* | *'"stderr":"a\ufffdb\ufffd\ufffdc"'*) ;;
*) t_fail "invalid UTF-8 stderr: $out" ;;
esac
t_contains "$out" '"exit_code":0' "exit_code in --json"
t_contains "$out" '"truncated":false' "truncated in --json"

# NUL bytes: streamed they arrive as they are; in a JSON result (where
# the protocol allows no NUL in a string) each is U+FFFD, and the reply
# is still one the client takes.
rk exec -- "printf 'a\\000b\\000'" >"$T/nul.out" || t_fail "streamed NUL failed"
t_eq "$(od -An -c "$T/nul.out" | tr -d ' ')" 'a\0b\0' "streamed NUL bytes"
out=$(rk exec --json -- "printf 'a\\000b'; printf '\\000c' >&2") ||
	t_fail "NUL in a JSON result: $out"
case "$out" in
*'"stdout":"a�b"'* | *'"stdout":"a\ufffdb"'*) ;;
*) t_fail "NUL in stdout: $out" ;;
esac
case "$out" in
*'"stderr":"�c"'* | *'"stderr":"\ufffdc"'*) ;;
*) t_fail "NUL in stderr: $out" ;;
esac

# stdin with a NUL: the client says so before guestd sees it (guestd
# refuses such a request as bad JSON, whose reply names no id: a client
# that sent it waited for ever).
err=$(printf 'a\000b' | timeout -k 5 60 "$RAKAZOCTL" guest --url "$URL" \
    --secret-file "$SECRET" exec --stdin-file - -- cat 2>&1) &&
	t_fail "stdin with a NUL accepted"
t_contains "$err" "BAD_REQUEST" "stdin with a NUL: $err"
t_contains "$err" "NUL byte" "stdin with a NUL named"

# stdin: the request's string, else /dev/null.
out=$(printf 'qzxw\ndef\n' | rk exec --stdin-file - -- 'tr a-z A-Z; echo end') ||
	t_fail "stdin failed"
t_eq "$out" "QZXW
DEF
end" "stdin"
out=$(echo not-for-the-command | rk exec -- 'cat; echo rc=$?')
t_eq "$out" "rc=0" "no stdin is /dev/null"
head -c 300000 /dev/zero | tr '\0' x > "$T/big"
out=$(rk exec --stdin-file "$T/big" -- 'wc -c') || t_fail "big stdin failed"
t_eq "$out" 300000 "stdin larger than a pipe"

out=$(printf '%s\n' \
    'text {"id":2,"op":"exec","args":{"command":"cat; echo done","stdin":""}}' \
    recv \
    'drain "id":2,"ok"' |
    "$WSPROBE" --url "$URL" --secret-file "$SECRET" --hello) ||
	t_fail "wsprobe failed: $out"
echo "$out"
t_contains "$out" '"event":"exec.started"' "exec.started event"
t_contains "$out" '"stdout":"done\n"' "empty stdin"

grep -q "leaked-$$\\|qzxw" "$GUESTD_LOG" && t_fail "env or stdin in the log"
kill -0 "$GUESTD_PID" || t_fail "guestd died"
exit 0

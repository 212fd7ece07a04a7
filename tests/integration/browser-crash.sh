#!/bin/bash
# SPDX-License-Identifier: MIT
# A killed browser is noticed (event browser.exited, state off) and the
# next browser.open restores its session (G-21).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-browser.sh"

t_start_guestd
tb_fixture site site
SITE="http://127.0.0.1:$site_PORT"

pid=$(tb_call browser.open "{\"bot\":\"cr\",\"url\":\"$SITE/form\"}" | jq -r .pid)
tb_call page.snapshot '{"bot":"cr"}' >/dev/null
# Restoring needs the session on disk: wait (bounded) until Chromium has
# written the tab's URL into its session file, as it does on its own.
i=0
until grep -rqa "$SITE/form" "$WS/.browser-profiles/cr/Default/Sessions" \
    2>/dev/null; do
	i=$((i + 1))
	[ "$i" -lt 300 ] || t_fail "the session was never written"
	sleep 0.05
done

# A second connection waits for the event while we kill the browser.
printf '%s\n' 'text {"id":1,"op":"browser.list","args":{}}' 'expect "id":1' \
    'expect browser.exited' | "$WSPROBE" --url "$URL" --secret-file "$SECRET" \
    --hello >"$T/events" 2>&1 &
probe=$!
tb_wait_log "$T/events" '"id":1'
kill -9 "$pid"
wait "$probe" || t_fail "no browser.exited event: $(cat "$T/events")"
t_contains "$(cat "$T/events")" '"bot":"cr"' "event names the bot"
t_contains "$(cat "$T/events")" '"signal":9' "event carries the signal"
t_eq "$(tb_call browser.list '{}' | jq -r '.browsers[] | select(.bot=="cr") | .state')" \
    off "state after the crash"
err=$(tb_err page.snapshot '{"bot":"cr"}')
t_contains "$err" BROWSER_NOT_RUNNING "page tools after the crash"

out=$(tb_call browser.open '{"bot":"cr"}')
[ "$(printf '%s' "$out" | jq -r .pid)" != "$pid" ] || t_fail "same pid"
t_eq "$(tb_call page.snapshot '{"bot":"cr"}' | jq -r .url)" "$SITE/form" \
    "session restored after the crash"
tb_call browser.close '{"bot":"cr"}' >/dev/null
t_note "browser-crash ok"

#!/bin/bash
# SPDX-License-Identifier: MIT
# Persistent per-bot browsers (G-21, G-25): two bots browse in parallel
# with independent cookies; a bot's login cookie survives browser.close,
# a guestd restart and a slot change; the profile survives the release of
# the desktop; a workspace export closes the browsers first, and they
# reopen with their sessions.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-browser.sh"

t_start_guestd
tb_fixture site site
SITE="http://127.0.0.1:$site_PORT"

# Both at once: the second open is sent while the first is starting.
rk call browser.open "{\"bot\":\"ann\",\"url\":\"$SITE/login?u=ann\"}" \
    >"$T/a.out" 2>&1 &
pa=$!
rk call browser.open "{\"bot\":\"ben\",\"url\":\"$SITE/login?u=ben\"}" \
    >"$T/b.out" 2>&1 &
pb=$!
wait $pa || t_fail "open ann: $(cat "$T/a.out")"
wait $pb || t_fail "open ben: $(cat "$T/b.out")"
da=$(jq -r .display "$T/a.out")
db=$(jq -r .display "$T/b.out")
[ "$da" != "$db" ] || t_fail "both bots on $da"
[ "$(jq -r .port "$T/a.out")" != "$(jq -r .port "$T/b.out")" ] ||
    t_fail "both bots on one DevTools port"

tb_call page.navigate "{\"bot\":\"ann\",\"url\":\"$SITE/whoami\"}" >/dev/null
tb_call page.navigate "{\"bot\":\"ben\",\"url\":\"$SITE/whoami\"}" >/dev/null
t_contains "$(tb_call page.snapshot '{"bot":"ann"}' | jq -r .text)" \
    "user is ann" "ann's cookie"
t_contains "$(tb_call page.snapshot '{"bot":"ben"}' | jq -r .text)" \
    "user is ben" "ben's cookie"

# Opening a running browser focuses it: same process, created false.
pid=$(jq -r .pid "$T/a.out")
out=$(tb_call browser.open '{"bot":"ann"}')
t_eq "$(printf '%s' "$out" | jq -r .created)" false "reopen creates nothing"
t_eq "$(printf '%s' "$out" | jq -r .pid)" "$pid" "same browser"

# Close cleanly, then the login is still there.
t_eq "$(tb_call browser.close '{"bot":"ann"}' | jq -r .how)" cdp "close"
[ -d "$WS/.browser-profiles/ann" ] || t_fail "profile gone after close"
tb_call browser.open "{\"bot\":\"ann\",\"url\":\"$SITE/whoami\"}" >/dev/null
t_contains "$(tb_call page.snapshot '{"bot":"ann"}' | jq -r .text)" \
    "user is ann" "cookie after close"

# Export quiesces: both browsers close before the tar is made (G-25).
rk export >"$T/ws.tar" || t_fail "export failed"
t_eq "$(tb_call browser.list '{}' | jq -r '[.browsers[] | select(.state != "off")] | length')" \
    0 "browsers left running by export"
tar -tf "$T/ws.tar" | grep -q '^\./\.browser-profiles/ann/\|^\.browser-profiles/ann/' ||
    t_fail "profile not exported"
# Session restore: reopened without a URL, ben is back on /whoami.
tb_call browser.open '{"bot":"ben"}' >/dev/null
t_eq "$(tb_call page.snapshot '{"bot":"ben"}' | jq -r .url)" "$SITE/whoami" \
    "ben's session restored"
tb_call browser.close '{"bot":"ben"}' >/dev/null

# Release the desktop: the profile stays (G-21).
rk call display.close '{"bot":"ann"}' >/dev/null 2>&1
[ -f "$WS/.browser-profiles/ann/Default/Cookies" ] ||
    t_fail "profile cookies gone after release"

# guestd restart, and ann lands on another slot.
kill "$GUESTD_PID"
wait "$GUESTD_PID"
[ -z "$(tb_browser_pids ann)$(tb_browser_pids ben)" ] ||
    t_fail "browsers outlived guestd"
t_start_guestd
# Other desktops take the lowest free slots until ann's old one is taken.
for i in 1 2 3 4 5 6; do
	d=$(tb_call display.open "{\"bot\":\"z$i\"}" | jq -r .display)
	[ "$d" = "$da" ] && break
done
out=$(tb_call browser.open "{\"bot\":\"ann\",\"url\":\"$SITE/whoami\"}")
[ "$(printf '%s' "$out" | jq -r .display)" != "$da" ] ||
    t_fail "ann got the same slot $da again"
t_contains "$(tb_call page.snapshot '{"bot":"ann"}' | jq -r .text)" \
    "user is ann" "cookie after restart and slot change"
tb_call browser.close '{"bot":"ann"}' >/dev/null
t_note "browser-persist ok"

#!/bin/bash
# SPDX-License-Identifier: MIT
# Page tools on a real Chromium (G-24, G-36): snapshot lists the fixture's
# elements with masked passwords and bounded text; act types, selects and
# clicks and the fixture server sees the submission; a ref from before a
# DOM replacement is refused, never redirected; javascript: and
# credentialed URLs are refused; act's step bounds hold.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-browser.sh"

t_start_guestd
tb_fixture site site
SITE="http://127.0.0.1:$site_PORT"

out=$(tb_call browser.open "{\"bot\":\"pg\",\"url\":\"$SITE/form\"}")
t_eq "$(printf '%s' "$out" | jq -r .created)" true "first open starts it"
t_eq "$(printf '%s' "$out" | jq -r .profile)" ".browser-profiles/pg" "profile"
port=$(printf '%s' "$out" | jq -r .port)
# G-22: DevTools answers on loopback only.
ss -ltn | grep -q "127.0.0.1:$port " || t_fail "DevTools not on 127.0.0.1:$port"
ss -ltn | grep -q "0.0.0.0:$port " && t_fail "DevTools on every interface"

snap=$(tb_call page.snapshot '{"bot":"pg"}')
t_eq "$(printf '%s' "$snap" | jq -r .title)" "Fixture Form" "title"
t_contains "$(printf '%s' "$snap" | jq -r .text)" "Sign-in fixture" "text"
t_eq "$(printf '%s' "$snap" | jq -r '.elements[] | select(.name=="Password") | .value')" \
    "••••" "password masked"
t_not_contains "$snap" "hunter2" "password value"
t_eq "$(printf '%s' "$snap" | jq -r '.elements[] | select(.name=="User") | .value')" \
    bob "text value"
for n in User Password Colour "Sign in" "Who am I"; do
	[ -n "$(tb_ref "$snap" "$n")" ] || t_fail "no element named $n"
done
ref=$(tb_ref "$snap" "Sign in")
printf '%s' "$ref" | grep -Eq '^[0-9a-f]{32}$' || t_fail "ref is not 128 bits: $ref"

U=$(tb_ref "$snap" User)
C=$(tb_ref "$snap" Colour)
B=$(tb_ref "$snap" "Sign in")
out=$(tb_call page.act "{\"bot\":\"pg\",\"steps\":[
    {\"kind\":\"type\",\"ref\":\"$U\",\"text\":\"alice\",\"clear\":true},
    {\"kind\":\"select\",\"ref\":\"$C\",\"value\":\"Green\"},
    {\"kind\":\"click\",\"ref\":\"$B\"}]}")
t_eq "$(printf '%s' "$out" | jq -r .completed)" 3 "steps completed"
tb_wait_log "$T/site.log" "submit user=alice color=g pw=hunter2"

# The click navigated: every ref of the old document is stale.
err=$(tb_err page.act "{\"bot\":\"pg\",\"steps\":[{\"kind\":\"click\",\"ref\":\"$B\"}]}")
t_contains "$err" "STALE_REF" "old document's ref"

# A DOM replacement inside one document: the old ref is refused, and the
# replacement is not clicked in its place.
tb_call page.navigate "{\"bot\":\"pg\",\"url\":\"$SITE/replace\"}" >/dev/null
snap=$(tb_call page.snapshot '{"bot":"pg"}')
R=$(tb_ref "$snap" "Replace me")
tb_call page.act "{\"bot\":\"pg\",\"steps\":[{\"kind\":\"click\",\"ref\":\"$R\"}]}" >/dev/null
snap2=$(tb_call page.snapshot '{"bot":"pg"}')
[ -n "$(tb_ref "$snap2" Fresh)" ] || t_fail "the replacement did not happen"
err=$(tb_err page.act "{\"bot\":\"pg\",\"steps\":[{\"kind\":\"focus\",\"ref\":\"$(tb_ref "$snap2" Fresh)\"},{\"kind\":\"click\",\"ref\":\"$R\"}]}")
t_contains "$err" "STALE_REF: Stale element ref. Take a fresh snapshot." "stale ref"
# The failure reports progress: the first step was done, nothing uncertain.
out=$(printf '%s\n' "text {\"id\":7,\"op\":\"page.act\",\"args\":{\"bot\":\"pg\",\"steps\":[{\"kind\":\"focus\",\"ref\":\"$(tb_ref "$snap2" Fresh)\"},{\"kind\":\"click\",\"ref\":\"$R\"}]}}" \
    'expect "id":7' | "$WSPROBE" --url "$URL" --secret-file "$SECRET" --hello)
t_contains "$out" '"completed":1' "completed count"
t_contains "$out" '"uncertain":false' "uncertain flag"
t_contains "$out" '"message":"Stale element ref. Take a fresh snapshot."' "exact message"

# An element in a frame is left to the desktop tools.
tb_call page.navigate "{\"bot\":\"pg\",\"url\":\"$SITE/frame\"}" >/dev/null
snap=$(tb_call page.snapshot '{"bot":"pg"}')
F=$(tb_ref "$snap" "Inner form")
t_eq "$(printf '%s' "$snap" | jq -r '.elements[] | select(.name=="Inner form") | .frame')" \
    true "frame listed"
out=$(printf '%s\n' "text {\"id\":8,\"op\":\"page.act\",\"args\":{\"bot\":\"pg\",\"steps\":[{\"kind\":\"click\",\"ref\":\"$F\"}]}}" \
    'expect "id":8' | "$WSPROBE" --url "$URL" --secret-file "$SECRET" --hello)
t_contains "$out" '"code":"PAGE_UNSUPPORTED"' "frame element"
t_contains "$out" '"fallback":"computer_act"' "fallback"
t_contains "$out" '"completed":0' "nothing done"

# Bounded text (G-36).
tb_call page.navigate "{\"bot\":\"pg\",\"url\":\"$SITE/long\"}" >/dev/null
snap=$(tb_call page.snapshot '{"bot":"pg"}')
len=$(printf '%s' "$snap" | jq -r '.text | length')
[ "$len" -le 12000 ] || t_fail "text of $len characters"
t_eq "$(printf '%s' "$snap" | jq -r .truncated)" true "truncated flag"
t_not_contains "$snap" "END-MARK" "text past the bound"
# At most 80 elements.
tb_call page.navigate "{\"bot\":\"pg\",\"url\":\"$SITE/many\"}" >/dev/null
snap=$(tb_call page.snapshot '{"bot":"pg"}')
t_eq "$(printf '%s' "$snap" | jq -r '.elements | length')" 80 "element bound"

# URL rules.
for u in 'javascript:alert(1)' "http://u:p@127.0.0.1:$site_PORT/form" \
    'file:///etc/passwd' "http://x@127.0.0.1:$site_PORT/" 'data:text/html,hi'; do
	err=$(tb_err page.navigate "{\"bot\":\"pg\",\"url\":\"$u\"}")
	t_contains "$err" "URL_REFUSED" "url $u"
	err=$(tb_err browser.open "{\"bot\":\"pg\",\"url\":\"$u\"}")
	t_contains "$err" "URL_REFUSED" "open url $u"
done
t_not_contains "$(cat "$GUESTD_LOG")" "u:p@" "credentialed URL in the log"

# Step bounds: 0 and 25 steps are refused before anything runs.
err=$(tb_err page.act '{"bot":"pg","steps":[]}')
t_contains "$err" "BAD_REQUEST" "no steps"
steps=$(jq -nc --arg r "$B" '[range(25) | {kind:"focus", ref:$r}]')
err=$(tb_err page.act "{\"bot\":\"pg\",\"steps\":$steps}")
t_contains "$err" "BAD_REQUEST" "25 steps"

# A bot without a browser.
err=$(tb_err page.snapshot '{"bot":"nobrowser"}')
t_contains "$err" "BROWSER_NOT_RUNNING" "no browser"

# Another program on the bot's DevTools port: a clear error, no browser.
slot=$(tb_call display.open '{"bot":"busy"}' | jq -r .slot)
bport=$((GUESTD_CDP_BASE + slot))
mkfifo "$T/busy.ready"
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen()
open(sys.argv[2], "w").write("ok\n"); time.sleep(600)' "$bport" \
    "$T/busy.ready" &
T_KILL="$T_KILL $!"
read -r _ <"$T/busy.ready"
err=$(tb_err browser.open '{"bot":"busy"}')
t_contains "$err" BROWSER_PORT_BUSY "busy DevTools port"
[ -z "$(tb_browser_pids busy)" ] || t_fail "a browser started on a busy port"

out=$(tb_call browser.close '{"bot":"pg"}')
t_eq "$(printf '%s' "$out" | jq -r .how)" cdp "closed through CDP"
[ -z "$(tb_browser_pids pg)" ] || t_fail "browser processes left"
t_note "browser-page ok"

#!/bin/bash
# SPDX-License-Identifier: MIT
# The CLI verbs of the browser and page tools: browser BOT [URL],
# page-snapshot BOT, page-act BOT JSON, page-navigate BOT URL.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-browser.sh"

t_start_guestd
tb_fixture site site
SITE="http://127.0.0.1:$site_PORT"

out=$(rk browser cli "$SITE/form") || t_fail "browser: $out"
t_eq "$(printf '%s' "$out" | jq -r .bot)" cli "browser verb"
snap=$(rk page-snapshot cli) || t_fail "page-snapshot: $snap"
t_eq "$(printf '%s' "$snap" | jq -r .title)" "Fixture Form" "page-snapshot"
U=$(tb_ref "$snap" User)
B=$(tb_ref "$snap" "Sign in")
out=$(rk page-act cli "[{\"kind\":\"type\",\"ref\":\"$U\",\"text\":\"carol\",\"clear\":true},{\"kind\":\"press\",\"ref\":\"$U\",\"key\":\"Enter\"}]") ||
    t_fail "page-act: $out"
t_eq "$(printf '%s' "$out" | jq -r .completed)" 2 "page-act steps"
tb_wait_log "$T/site.log" "submit user=carol"
out=$(rk page-navigate cli "$SITE/whoami") || t_fail "page-navigate: $out"
t_eq "$(printf '%s' "$out" | jq -r .title)" Who "page-navigate"
if out=$(rk page-navigate cli 'javascript:alert(1)' 2>&1); then
	t_fail "javascript: accepted"
fi
t_contains "$out" URL_REFUSED "page-navigate refusal"
if out=$(rk page-act cli 'not json' 2>&1); then
	t_fail "bad JSON accepted"
fi
rk call browser.close '{"bot":"cli"}' >/dev/null || t_fail "close"
t_note "browser-cli ok"

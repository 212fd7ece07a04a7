#!/bin/bash
# SPDX-License-Identifier: MIT
# The browser tools of the controller (C-4): browser_navigate starts the
# bot's Chromium on its desktop and loads a page, browser_snapshot reads it
# (no lease, no event), browser_act types and clicks on its refs (recorded
# without the typed text); bad URLs and steps are refused with codes.
# Real Chromium, real guestd, the local provider.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-browser.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

tool() { # TOOL JSON-ARGS: POST with computer team, bot b
	api POST "/v1/tools/$1" "$(printf '%s' "$2" |
	    jq -c '. + {computer: "team", bot: "b"}')"
}

ctl_start
r=$(api POST /v1/computers '{"id":"team"}')
t_contains "$r" "201 " "computer created"
tb_fixture site site
SITE="http://127.0.0.1:$site_PORT"

r=$(api GET /v1/tools)
for name in browser_navigate browser_snapshot browser_act; do
	t_contains "$r" "\"$name\"" "$name is listed"
done

r=$(tool browser_navigate "{\"url\":\"$SITE/form\"}")
t_contains "$r" "200 " "navigate starts the browser"
t_eq "$(jq -r '.result.title // .title' "$T/api.out")" \
    "Fixture Form" "the page loaded"

r=$(tool browser_snapshot '{}')
t_contains "$r" "200 " "snapshot"
SNAP=$(jq -c '.result // .' "$T/api.out")
U=$(tb_ref "$SNAP" User)
B=$(tb_ref "$SNAP" "Sign in")
[ -n "$U" ] && [ -n "$B" ] || t_fail "no refs in $SNAP"
EV0=$(ctl_events team)

r=$(tool browser_act "{\"steps\":[{\"kind\":\"type\",\"ref\":\"$U\",\"text\":\"carol-secret\",\"clear\":true},{\"kind\":\"click\",\"ref\":\"$B\"}]}")
t_contains "$r" "200 " "act"
tb_wait_log "$T/site.log" "submit user=carol-secret"

# A ref of the old document after the submit navigated away.
r=$(tool browser_act "{\"steps\":[{\"kind\":\"click\",\"ref\":\"$B\"}]}")
t_contains "$r" "STALE_REF" "an old ref is refused"

r=$(tool browser_navigate '{"url":"javascript:alert(1)"}')
t_contains "$r" "URL_REFUSED" "javascript: refused"
r=$(tool browser_act '{"steps":[]}')
t_contains "$r" "400 " "empty steps refused"
t_contains "$r" "BAD_REQUEST" "with its code"
r=$(tool browser_navigate '{}')
t_contains "$r" "400 " "navigate without url refused"

# Activity: navigate and act recorded, snapshot not, typed text never.
api GET /v1/computers/team/activity?limit=1000 >/dev/null
t_contains "$(cat "$T/api.out")" "navigate $SITE/form" "navigate recorded"
t_contains "$(cat "$T/api.out")" "browser: 2 step(s)" "act recorded"
t_not_contains "$(cat "$T/api.out")" "carol-secret" "typed text not recorded"
t_not_contains "$(cat "$T/api.out")" "browser_snapshot" "snapshot not recorded"
[ "$(ctl_events team)" -gt "$EV0" ] || t_fail "no new events"

# A run that fails closes its screen (G-4), the browser first and asked
# (through DevTools), so the profile is written whole.
api POST /v1/leases '{"computer":"team","bot":"r","holder":"agent"}' >/dev/null
LEASE=$(api_field id)
r=$(api POST /v1/tools/browser_navigate "{\"computer\":\"team\",\"bot\":\"r\",\"lease\":\"$LEASE\",\"url\":\"$SITE/form\"}")
t_contains "$r" "200 " "the run's browser"
r=$(api POST "/v1/computers/team/runs/$LEASE/end" '{"outcome":"failed"}')
t_contains "$r" '"screen":"closed"' "failed run closes the screen"
t_contains "$(cat "$CTL_DATA/computers/team/guestd.log")" \
    "event=browser.exited bot=r " "the browser ended"
grep "event=browser.exited bot=r " "$CTL_DATA/computers/team/guestd.log" |
    grep -q "asked=1" || t_fail "the browser was killed, not closed"

# Stopping the computer (by hand or idle) closes browsers the same way.
r=$(tool browser_navigate "{\"url\":\"$SITE/form\"}")
t_contains "$r" "200 " "browser again before the stop"
r=$(api POST /v1/computers/team/stop)
t_contains "$r" "200 " "computer stopped"
grep "event=browser.exited bot=b " "$CTL_DATA/computers/team/guestd.log" |
    grep -q "asked=1" || t_fail "the stop killed the browser"
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# G-4 through the real server and guestd: a bot run (its execution lease)
# that ends well loses its control capability but keeps the bot's screen
# and open views for the next run; a failed or cancelled run tears the
# screen down.  display.list and capability.revoke are asked of guestd
# directly.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

run_with_screen() {	# BOT -> LEASE CTOK VTOK
	api POST /v1/leases "{\"computer\":\"team\",\"bot\":\"$1\",\"holder\":\"agent\"}" >/dev/null
	LEASE=$(api_field id)
	r=$(api POST /v1/tools/screen_url "{\"computer\":\"team\",\"bot\":\"$1\",\"lease\":\"$LEASE\",\"policy\":\"control\"}")
	t_contains "$r" "200 " "$1: control screen"
	CTOK=$(api_field token)
	r=$(api POST /v1/tools/screen_url "{\"computer\":\"team\",\"bot\":\"$1\",\"lease\":\"$LEASE\"}")
	t_contains "$r" "200 " "$1: view screen"
	VTOK=$(api_field token)
	t_contains "$(ctl_guest team display.list)" "\"$1\"" "$1: screen open"
}

revoke_at_guestd() {
	ctl_guest team capability.revoke "{\"token\":\"$1\"}"
}

ctl_start
api POST /v1/computers '{"id":"team","start":true}' >/dev/null

# Refusals change nothing.
run_with_screen bot1
r=$(api POST "/v1/computers/team/runs/$LEASE/end" '{"outcome":"fine"}')
t_contains "$r" "400 " "bad outcome"
r=$(api POST "/v1/computers/team/runs/$LEASE/end" '{}')
t_contains "$r" "400 " "no outcome"
r=$(api POST /v1/computers/team/runs/nosuchlease/end '{"outcome":"failed"}')
t_contains "$r" LEASE_EXPIRED "unknown run"
t_contains "$(ctl_guest team display.list)" '"bot1"' "screen still open"

# Succeeded: control revoked, screen and view kept, lease ended.
r=$(api POST "/v1/computers/team/runs/$LEASE/end" '{"outcome":"succeeded"}')
t_contains "$r" "200 " "end succeeded"
t_contains "$r" '"screen":"kept"' "reply says kept"
t_contains "$r" '"revoked":1' "one control capability revoked"
t_contains "$(ctl_guest team display.list)" '"bot1"' "screen kept"
t_contains "$(revoke_at_guestd "$CTOK")" NOT_FOUND "control token dead"
t_contains "$(revoke_at_guestd "$VTOK")" '"revoked"' "view token kept"
t_contains "$(api POST "/v1/leases/$LEASE/heartbeat" '{}')" LEASE_EXPIRED \
    "the run's lease ended"

# Failed: the screen is torn down with every capability on it.
run_with_screen bot1
r=$(api POST "/v1/computers/team/runs/$LEASE/end" '{"outcome":"failed"}')
t_contains "$r" "200 " "end failed"
t_contains "$r" '"screen":"closed"' "reply says closed"
t_not_contains "$(ctl_guest team display.list)" '"bot1"' "screen closed"
t_contains "$(revoke_at_guestd "$CTOK")" NOT_FOUND "control token dead"
t_contains "$(revoke_at_guestd "$VTOK")" NOT_FOUND "view token dead"

# Cancelled: that bot's screen goes, another bot's stays.
run_with_screen bot2
L2=$LEASE
C2=$CTOK
run_with_screen bot3
r=$(api POST "/v1/computers/team/runs/$L2/end" '{"outcome":"cancelled"}')
t_contains "$r" "200 " "end cancelled"
t_contains "$r" '"screen":"closed"' "cancelled closes"
list=$(ctl_guest team display.list)
t_not_contains "$list" '"bot2"' "bot2's screen closed"
t_contains "$list" '"bot3"' "bot3's screen untouched"
t_contains "$(revoke_at_guestd "$C2")" NOT_FOUND "bot2's control token dead"
t_contains "$(revoke_at_guestd "$CTOK")" '"revoked"' "bot3's token alive"
exit 0

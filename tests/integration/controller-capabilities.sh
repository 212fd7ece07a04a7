#!/bin/bash
# SPDX-License-Identifier: MIT
# Capabilities granted with a control lease live in the state store (C-2),
# so they die with the lease whoever runs the controller then: released
# after a restart of rakazoctl serve, revoked when the lease expires (by
# the server's timer, nobody calling), and revoked when a lease lapsed
# while no controller ran.  Each time guestd itself is asked whether the
# token still exists.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

dead_at_guestd() {	# TOKEN WHAT
	t_contains "$(ctl_guest team capability.revoke "{\"token\":\"$1\"}")" \
	    NOT_FOUND "$2"
}

ctl_start
api POST /v1/computers '{"id":"team","start":true}' >/dev/null

# Take control, restart the controller, release: the new process revokes.
r=$(api POST /v1/computers/team/control '{"bot":"b1","holder":"alice","ttl_ms":600000}')
t_contains "$r" "201 " "take control"
CTRL=$(api_field id)
TOK=$(api_field screen.token)
[ -n "$TOK" ] || t_fail "no control token"
t_not_contains "$(cat "$CTL_LOG")" "$TOK" "the token is not logged"
# Only the capability's id is kept: the token is in no state file, and
# the release below revokes it at guestd by that id.
if grep -rqF -- "$TOK" "$CTL_DATA"/state.db*; then
	t_fail "the token was written to the state store"
fi
t_contains "$(ctl_guest team capability.revoke '{"token":"x","id":"y"}')" \
    "BAD_REQUEST" "revoke takes a token or an id, not both"
ctl_stop
ctl_start
r=$(api DELETE "/v1/computers/team/control/$CTRL")
t_contains "$r" "200 " "release after a restart"
t_contains "$r" '"revoked":1' "the restarted controller revoked it"
dead_at_guestd "$TOK" "released token gone at guestd"

# A control lease that expires: the timer revokes its capability.
r=$(api POST /v1/computers/team/control '{"bot":"b2","holder":"alice","ttl_ms":1000}')
t_contains "$r" "201 " "short control lease"
TOK2=$(api_field screen.token)
ctl_wait_log "event=control.revoked.*bot=b2.*reason=expired" 1 15
dead_at_guestd "$TOK2" "expired token gone at guestd"

# A lease that lapses while no controller runs is revoked at start-up.
r=$(api POST /v1/computers/team/control '{"bot":"b3","holder":"alice","ttl_ms":1500}')
t_contains "$r" "201 " "control before the stop"
TOK3=$(api_field screen.token)
EXP=$(api_field expires_ms)
ctl_stop
# Waiting for the lease's time to pass is what is tested here.
while [ "$(date +%s%3N)" -le "$EXP" ]; do sleep 0.1; done
ctl_start
ctl_wait_log "event=control.revoked.*bot=b3.*reason=expired" 1 15
dead_at_guestd "$TOK3" "lapsed token gone at guestd"

# A live control lease is left alone by the timer.
r=$(api POST /v1/computers/team/control '{"bot":"b4","holder":"alice","ttl_ms":600000}')
TOK4=$(api_field screen.token)
t_not_contains "$(cat "$CTL_LOG")" "bot=b4 capability" "live lease untouched"
t_contains "$(ctl_guest team capability.revoke "{\"token\":\"$TOK4\"}")" \
    '"revoked"' "live token still valid at guestd"
exit 0

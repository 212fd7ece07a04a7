#!/bin/bash
# SPDX-License-Identifier: MIT
# Restart of rakazoctl serve while a computer runs: state is reloaded from
# SQLite, the same guestd is reconnected (not restarted) and nothing is
# lost; a guestd that died while the controller was down is reconciled
# (run closed, endReason reconciled); idle computers stop (C-6).
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

ctl_start
ctl computer create team >/dev/null || t_fail create
ctl shell --bot a -- 'echo kept > note' >/dev/null || t_fail "first shell"
n_start=$(grep -c 'event=guestd.listening' "$CTL_DATA/computers/team/guestd.log")
t_eq "$n_start" 1 "one guestd start"

ctl_stop
ctl_start
t_contains "$(ctl computer show team)" running "state reloaded"
t_eq "$(ctl shell --bot a -- 'cat note')" kept "workspace kept"
t_eq "$(grep -c 'event=guestd.listening' "$CTL_DATA/computers/team/guestd.log")" \
    1 "guestd reconnected, not restarted"
r=$(api GET /v1/computers/team/runs)
t_eq "$(api_field runs.0.endReason)" "" "the run is still open"
t_contains "$(ctl activity)" "echo kept" "activity survived the restart"

# guestd dies while the controller is down: the reconciler closes the run.
ctl_stop
for d in /proc/[0-9]*; do
	if { tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null |
	    grep -q -- "--workspace $CTL_DATA/computers/team/home"; then
		kill "${d#/proc/}"
	fi
done
ctl_start
t_contains "$(ctl computer show team)" stopped "reconciled to stopped"
r=$(api GET /v1/computers/team/runs)
t_eq "$(api_field runs.0.endReason)" reconciled "endReason"
# The next call starts it again with the workspace intact.
t_eq "$(ctl shell --bot a -- 'cat note')" kept "restarted with its workspace"
ctl_stop

# Idle stop: no calls, no leases -> stopped, workspace kept.
ctl_start --idle-ms 400
deadline=$((SECONDS + 20))
until ctl computer show team | grep -q stopped; do
	[ $SECONDS -lt $deadline ] || t_fail "idle computer not stopped"
	sleep 0.2
done
r=$(api GET /v1/computers/team/runs)
t_eq "$(api_field runs.1.endReason)" idle "idle endReason"
[ -f "$CTL_DATA/computers/team/home/bots/a/note" ] || t_fail "workspace lost"
exit 0

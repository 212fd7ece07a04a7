#!/bin/bash
# SPDX-License-Identifier: MIT
# When local computers cannot have users of their own (serve is not root,
# or --local-uid-range off), they all run as one user and could read and
# change each other's files: serve says so in /internal/health
# ("isolation":"shared-user") and refuses a second computer (409
# SHARED_USER, at create and at start) unless --allow-shared-user.
. "$top_srcdir/tests/lib.sh"
RAKAZO_ALLOW_SHARED_USER=0
export RAKAZO_ALLOW_SHARED_USER
. "$top_srcdir/tests/lib-controller.sh"

args=()
[ "$(id -u)" -eq 0 ] && args=(--local-uid-range off)
ctl_start "${args[@]}"
h=$(curl -s "$CTL_URL/internal/health")
t_contains "$h" '"isolation":"shared-user"' "health says the user is shared"
r=$(api POST /v1/computers '{"id":"a"}')
t_contains "$r" "201 " "the first computer"
r=$(api POST /v1/computers '{"id":"b"}')
t_contains "$r" "409 " "a second computer is refused"
t_contains "$r" '"code":"SHARED_USER"' "with a stable code"
t_contains "$r" "allow-shared-user" "saying how to accept it"
t_not_contains "$(ctl computer list)" " b" "b was not created"
t_eq "$(ctl shell --computer a --bot ann -- 'echo hi')" "hi" "a works"

# Accepted explicitly: both exist and run.
ctl_stop
ctl_start "${args[@]}" --allow-shared-user
r=$(api POST /v1/computers '{"id":"b"}')
t_contains "$r" "201 " "b with --allow-shared-user"
t_eq "$(ctl shell --computer b --bot bob -- 'echo hi')" "hi" "b works"
ctl computer stop b >/dev/null || t_fail "stop b"

# Without the flag again: the older computer runs, the younger does not.
ctl_stop
ctl_start "${args[@]}"
out=$(ctl shell --computer b --bot bob -- 'echo hi' 2>&1)
t_contains "$out" "SHARED_USER" "b refused at its start"
t_eq "$(ctl shell --computer a --bot ann -- 'echo hi')" "hi" "a still works"
t_note "shared-user ok"

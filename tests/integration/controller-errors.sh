#!/bin/bash
# SPDX-License-Identifier: MIT
# Bad requests to the controller's API: bad JSON, unknown tool, missing or
# malformed fields, oversized bodies, a wrong token.  Each is answered 4xx
# with a stable code, and nothing changes: no computer starts, no event.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

ctl_start
api POST /v1/computers '{"id":"team"}' >/dev/null

check() {	# expected-status expected-code method path [body]
	want_status=$1 want_code=$2
	shift 2
	r=$(api "$@")
	t_eq "${r%% *}" "$want_status" "status of $*"
	t_contains "$r" "\"code\":\"$want_code\"" "code of $*"
}

check 400 BAD_JSON POST /v1/tools/shell '{"computer":"team",'
check 400 BAD_JSON POST /v1/tools/shell '[1,2]'
check 400 BAD_JSON POST /v1/tools/shell '{"computer":"team","computer":"x"}'
check 404 UNKNOWN_TOOL POST /v1/tools/rm_rf '{"computer":"team","bot":"a"}'
check 400 BAD_REQUEST POST /v1/tools/shell '{"bot":"a","command":"true"}'
# An unknown key whose quote in the error is cut inside a UTF-8 character
# (64 bytes): still a JSON answer, and the server lives on.
check 400 BAD_REQUEST POST /v1/tools/shell \
    "{\"computer\":\"team\",\"bot\":\"a\",\"$(printf '%063d' 0)\u00e9\":1}"
check 400 BAD_REQUEST POST /v1/tools/shell '{"computer":"team","bot":"a"}'
check 400 BAD_REQUEST POST /v1/tools/shell '{"computer":"team","bot":"a","command":7}'
check 400 BAD_REQUEST POST /v1/tools/shell '{"computer":"team","bot":"a","command":"true","bogus":1}'
check 400 INVALID_BOT POST /v1/tools/shell '{"computer":"team","bot":"../x","command":"true"}'
check 404 NOT_FOUND POST /v1/tools/shell '{"computer":"nope","bot":"a","command":"true"}'
check 404 NOT_FOUND GET /v1/nothing
check 400 BAD_REQUEST POST /v1/computers '{"id":"a/b"}'
check 409 ALREADY_EXISTS POST /v1/computers '{"id":"team"}'

# Oversized: over 1 MiB, refused before parsing.
python3 -c 'import sys; sys.stdout.write("{\"computer\":\"team\",\"bot\":\"a\",\"command\":\"" + "x"*(1100*1024) + "\"}")' > "$T/big.json"
code=$(curl -s -o "$T/big.out" -w '%{http_code}' \
    -H "Authorization: Bearer $(cat "$CTL_TOKEN")" \
    --data-binary @"$T/big.json" "$CTL_URL/v1/tools/shell")
t_eq "$code" 413 "oversized body status"
t_contains "$(cat "$T/big.out")" '"code":"TOO_LARGE"' "oversized body code"

# Wrong or missing token.
code=$(curl -s -o "$T/auth.out" -w '%{http_code}' -H 'Authorization: Bearer nope' \
    "$CTL_URL/v1/computers")
t_eq "$code" 401 "wrong token"
t_contains "$(cat "$T/auth.out")" UNAUTHORIZED "wrong token code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$CTL_URL/v1/tools")
t_eq "$code" 401 "no token"
out=$(RAKAZO_URL="$CTL_URL" RAKAZO_API_TOKEN=wrong "$RAKAZOCTL" computer list 2>&1)
t_eq "$?" 3 "CLI exit status on UNAUTHORIZED"
t_contains "$out" "UNAUTHORIZED" "CLI prints the code"

# Nothing changed.
t_contains "$(ctl computer show team)" "stopped" "no computer started"
[ -d "$CTL_DATA/computers/team" ] && t_fail "bad requests started a computer"
t_eq "$(ctl_events team)" 0 "bad requests left events"
t_eq "$(ctl health)" "state: ok
sandbox: local" "still healthy"
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# rakazoctl serve with the local provider and a real guestd: start-up
# refuses to run without a token, health answers, a computer starts on the
# first tool call, the CLI's shell/put/get work, mutating calls leave
# redacted computer.command events and read-only calls leave none.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

# No credential: a clear start-up failure, not a silent fallback.
out=$(env -u RAKAZO_API_TOKEN "$RAKAZOCTL" serve --listen 127.0.0.1:0 \
    --data-dir "$T/nodata" 2>&1)
rc=$?
t_eq "$rc" 2 "serve without a token exits"
t_contains "$out" "no API token" "serve without a token says why"

ctl_start
t_eq "$(ctl health)" "state: ok
sandbox: local" "health"
h=$(curl -s "$CTL_URL/internal/health")
t_contains "$h" '"sandbox":"local"' "health JSON"

ctl computer create team >/dev/null || t_fail "computer create"
t_contains "$(ctl computer show team)" "stopped" "not started before use"
[ -d "$CTL_DATA/computers/team" ] && t_fail "started before the first call"

out=$(ctl shell --bot alice -- 'echo hello; pwd')
t_contains "$out" "hello" "shell output"
t_contains "$out" "computers/team/home/bots/alice" "shell runs in the bot dir"
t_contains "$(ctl computer show team)" "running" "started on first call"
ctl shell --bot alice -- 'exit 3' >/dev/null
t_eq "$?" 3 "shell exit status"
# Output with NUL bytes: the shell tool answers (each NUL as U+FFFD, the
# protocol's strings hold none), not a protocol error.
out=$(ctl shell --bot alice -- "printf 'a\\000b'; echo; echo nul-done") ||
	t_fail "shell with NUL output: $out"
t_contains "$out" "a�b" "NUL as U+FFFD"
t_contains "$out" "nul-done" "output after a NUL"

printf 'payload\001\002' > "$T/in.bin"
ctl put --bot alice "$T/in.bin" bots/alice/in.bin >/dev/null || t_fail put
ctl get --bot alice bots/alice/in.bin "$T/out.bin" || t_fail get
cmp -s "$T/in.bin" "$T/out.bin" || t_fail "put/get round trip differs"

# Activity: recorded and redacted.
n0=$(ctl_events team)
ctl shell --bot alice -- 'echo Authorization: Bearer abcdefsecret0123456789' \
    >/dev/null
act=$(ctl activity)
t_contains "$act" "[REDACTED]" "activity redacted"
t_not_contains "$act" "abcdefsecret0123456789" "secret in activity"
t_contains "$act" "put bots/alice/in.bin (9 bytes)" "put recorded"
n1=$(ctl_events team)
t_eq "$n1" "$((n0 + 1))" "one event per mutating call"

# Read-only tools leave no event.
ctl get --bot alice bots/alice/in.bin >/dev/null
r=$(api POST /v1/tools/list_files '{"computer":"team","bot":"alice","path":"bots/alice"}')
t_contains "$r" "200 " "list_files"
t_contains "$r" "in.bin" "list_files lists"
t_eq "$(ctl_events team)" "$n1" "read-only calls leave no event"

# The tool schemas.
r=$(api GET /v1/tools)
for tool in computer_observe computer_act shell read_file write_file \
    list_files attach_file open_path launch_app request_takeover \
    screen_url terminal_url; do
	t_contains "$r" "\"name\":\"$tool\"" "GET /v1/tools lists $tool"
done

ctl computer delete team --force >/dev/null || t_fail "computer delete"
[ -d "$CTL_DATA/computers/team" ] && t_fail "delete left the workspace"
r=$(api GET /v1/computers/team)
t_contains "$r" "404 " "deleted computer is gone"
exit 0

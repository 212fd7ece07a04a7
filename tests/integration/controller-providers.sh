#!/bin/bash
# SPDX-License-Identifier: MIT
# SANDBOX_PROVIDER selects the provider: none answers clearly that
# computers are disabled; fake serves the tools in-process (observe gives
# an image, then the "still valid" marker until an act changes the frame).
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

SANDBOX_PROVIDER=none ctl_start
t_eq "$(ctl health)" "state: ok
sandbox: none" "health names the provider"
r=$(api POST /v1/computers '{"id":"team"}')
t_contains "$r" "503 " "none: create refused"
t_contains "$r" COMPUTERS_DISABLED "none: code"
ctl_stop

# The flag wins over the environment.
SANDBOX_PROVIDER=none ctl_start --provider fake
t_contains "$(ctl health)" "sandbox: fake" "--provider overrides"
ctl computer create team >/dev/null || t_fail create
t_eq "$(ctl shell --bot a -- echo hi)" "echo hi" "fake shell"
r=$(api POST /v1/tools/computer_observe '{"computer":"team","bot":"a"}')
t_contains "$r" '"image":"iVBOR' "observe: image"
f=$(api_field frame)
r=$(api POST /v1/tools/computer_observe "{\"computer\":\"team\",\"bot\":\"a\",\"since_frame\":$f}")
t_contains "$r" "previous screenshot still valid" "observe: unchanged marker"
t_not_contains "$r" '"image"' "observe: no image when unchanged"
r=$(api POST /v1/tools/computer_act '{"computer":"team","bot":"a","actions":[{"type":"move","x":1,"y":1}]}')
t_contains "$r" '"completed":1' "act"
r=$(api POST /v1/tools/computer_observe "{\"computer\":\"team\",\"bot\":\"a\",\"since_frame\":$f}")
t_contains "$r" '"image":"iVBOR' "observe after act: new image"
t_contains "$(ctl activity)" "act: 1 action(s)" "act recorded"

out=$(ctl frobnicate 2>&1)
t_eq "$?" 2 "unknown verb"
out=$(ctl shell -- true 2>&1)
t_eq "$?" 2 "shell without --bot"
exit 0

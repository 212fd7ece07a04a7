#!/bin/bash
# SPDX-License-Identifier: MIT
# Keys go to the window clicked into, through the tools API (issue 26
# item 13): computer_act with a click into the second of two windows
# under twm and text at once sent the text to the first (3 times in 3).
# The computer's guestd runs twm (GUESTD_WM from serve's environment);
# xinput-recorder windows say which window got the keys.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
command -v Xvfb >/dev/null 2>&1 || exit 77
command -v twm >/dev/null 2>&1 || { echo "# no twm"; exit 77; }
: "${XINPUT_RECORDER:?run through make check}"
GUESTD_WM=twm
export GUESTD_WM
ctl_start
ctl computer create team >/dev/null || t_fail "computer create"

tool() {	# TOOL JSON-ARGS (computer and bot added)
	api POST "/v1/tools/$1" "{\"computer\":\"team\",\"bot\":\"alice\"${2:+,$2}}"
}
r=$(tool computer_observe '"max_width":64')
t_contains "$r" "200 " "observe: $r"
o=$(ctl_guest team display.open '{"bot":"alice"}')
slot=$(printf '%s' "$o" | sed -n 's/.*"slot":\([0-9]*\).*/\1/p')
xauth=$(printf '%s' "$o" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
[ -n "$slot" ] && [ -n "$xauth" ] || t_fail "no display: $o"

. "$top_srcdir/tests/integration/focus-lib.sh"
focus_windows ":$slot" "$xauth"

to_left() {
	r=$(tool computer_act '"actions":[{"kind":"move","x":150,"y":200}]')
	t_contains "$r" "200 " "move left: $r"
}

n=0
for acts in \
    '[{"kind":"click","x":550,"y":200},{"kind":"type","text":"hello"}]' \
    '[{"action":"left_click","coordinate":[550,200]},{"action":"type","text":"hello"}]' \
    '[{"type":"click","x":550,"y":200,"button":"left"},{"type":"type","text":"hello"}]'; do
	n=$((n + 1))
	focus_left to_left
	r=$(tool computer_act "\"actions\":$acts")
	t_contains "$r" "200 " "computer_act $n: $r"
	focus_check "computer_act $n" hello
done
echo "ok"

#!/bin/bash
# SPDX-License-Identifier: MIT
# Keys go to the window a batch clicked into (issue 26 item 13): with a
# real window manager (twm: the focus follows the pointer, moved by twm
# when it sees the pointer enter) and two windows, a batch that clicks
# into the second and types at once sent the text to the first, which had
# the focus, 12 times in 12: the keys overtook twm.  Now keys wait
# (bounded) until the focus is in the window under the pointer.  Through
# display.act in the three vocabularies (native, Anthropic, OpenAI) and
# through the /v1/desktop server (xdotool's type, and keydown); the tools
# API is controller-focus.sh.  xinput-recorder windows say which got what.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
command -v twm >/dev/null 2>&1 || { echo "# no twm"; exit 77; }
command -v curl >/dev/null 2>&1 || { echo "# no curl"; exit 77; }
: "${XINPUT_RECORDER:?run through make check}"
GUESTD_WM=twm
export GUESTD_WM
t_start_guestd --compat 127.0.0.1:0
CPORT=""
for _ in $(seq 100); do
	CPORT=$(sed -n 's/.*event=compat.listening .*port=\([0-9]*\).*/\1/p' \
	    "$GUESTD_LOG" | head -n 1)
	[ -n "$CPORT" ] && break
	sleep 0.05
done
[ -n "$CPORT" ] || t_fail "no compat port in the log"

o=$(rk call display.open '{"bot":"alice"}') || t_fail "open: $o"
slot=$(printf '%s' "$o" | sed -n 's/.*"slot":\([0-9]*\).*/\1/p')
xauth=$(printf '%s' "$o" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
[ -n "$slot" ] || t_fail "no slot in $o"

. "$top_srcdir/tests/integration/focus-lib.sh"
focus_windows ":$slot" "$xauth"

# to_left: the pointer into the left window; twm gives it the focus.
to_left() {
	rk act alice '[{"kind":"move","x":150,"y":200}]' >/dev/null ||
		t_fail "move left"
}

n=0
for batch in \
    '[{"kind":"click","x":550,"y":200},{"kind":"type","text":"hello"}]' \
    '[{"action":"left_click","coordinate":[550,200]},{"action":"type","text":"hello"}]' \
    '[{"type":"click","x":550,"y":200,"button":"left"},{"type":"type","text":"hello"}]' \
    '[{"kind":"click","x":550,"y":200},{"kind":"key","keys":"h"},{"kind":"type","text":"ello"}]'; do
	n=$((n + 1))
	focus_left to_left
	out=$(rk act alice "$batch") || t_fail "batch $n: $out"
	focus_check "display.act batch $n" hello
done

# /v1/desktop: xdotool's mousemove click, then type; then keydown/keyup.
desk() {
	curl -sS -o "$T/resp" -w '%{http_code}' --max-time 30 \
	    -H "Authorization: Bearer $(cat "$SECRET")" \
	    -H 'Content-Type: application/json' --data-binary \
	    "{\"display\":$slot,\"steps\":$1}" \
	    "http://127.0.0.1:$CPORT/v1/desktop"
}
focus_left to_left
code=$(desk '[{"argv":["mousemove","550","200","click","1"]},{"argv":["type","hello"]}]')
t_eq "$code" 200 "desktop type: $(cat "$T/resp")"
focus_check "/v1/desktop type" hello
focus_left to_left
code=$(desk '[{"argv":["mousemove","550","200","click","1"]},{"argv":["keydown","h"]},{"argv":["keyup","h"]},{"argv":["type","ello"]}]')
t_eq "$code" 200 "desktop keydown: $(cat "$T/resp")"
focus_check "/v1/desktop keydown" hello
echo "ok"

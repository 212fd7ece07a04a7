#!/bin/bash
# SPDX-License-Identifier: MIT
# The repeat guard (G-12) counts a batch that changed the screen while it
# ran as a change (issue 26 item 15): an identical click whose window
# repaints before the batch's reply (here, within its wait) was refused the
# third time, UNCHANGED_AFTER_REPEAT, though every run changed the screen.
# A repeat that changes nothing is still refused the second time.  The
# recorder (-p) paints itself another colour at every press.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
: "${XINPUT_RECORDER:?run through make check}"
t_start_guestd

o=$(rk call display.open '{"bot":"alice"}') || t_fail "open: $o"
slot=$(printf '%s' "$o" | sed -n 's/.*"slot":\([0-9]*\).*/\1/p')
auth=$(printf '%s' "$o" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
mkfifo "$T/rec"
DISPLAY=":$slot" XAUTHORITY="$auth" "$XINPUT_RECORDER" -p >"$T/rec" \
    2>"$T/rec.err" &
T_KILL="$!"
exec 5<"$T/rec"
read -t 20 -r line <&5 || t_fail "recorder did not start"
t_eq "$line" "ready" "recorder"
# Its lines are not needed: drained, so it never blocks on the FIFO.
cat <&5 >/dev/null &
T_KILL="$T_KILL $!"

frame() {
	printf '%s' "$1" | sed -n 's/.*"frame":\([0-9]*\).*/\1/p'
}

# Each click repaints the window during the batch's wait.
same='[{"kind":"click","x":40,"y":40},{"kind":"wait","ms":300}]'
prev=""
for k in 1 2 3 4 5; do
	out=$(rk act alice "$same" 2>&1) ||
		t_fail "click $k, which changed the screen, refused: $out"
	f=$(frame "$out")
	[ -n "$f" ] && [ "$f" != "$prev" ] ||
		t_fail "click $k: the screen did not change ($out)"
	prev=$f
done

# A move changes nothing: the second identical repeat is refused.
still='[{"kind":"move","x":60,"y":60},{"kind":"wait","ms":50}]'
rk act alice "$still" >/dev/null || t_fail "move"
rk act alice "$still" >/dev/null || t_fail "move repeated"
out=$(rk act alice "$still" 2>&1) && t_fail "an unchanged repeat accepted"
t_contains "$out" UNCHANGED_AFTER_REPEAT "repeat guard"
echo "ok"

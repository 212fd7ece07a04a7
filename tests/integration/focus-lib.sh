# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Two xinput-recorder windows under a window manager, for the tests of
# keys after a click (display-focus.sh, controller-focus.sh; sourced).
# Left at 20,40 and right at 400,40, 300x300 each (plus twm's title bar):
# x=150 is in the left one, x=550 in the right one, at y=200.

# focus_windows DISPLAY XAUTHORITY: start both; wait until mapped.
focus_windows() {
	local side geo
	for side in left right; do
		case $side in
		left) geo=300x300+20+40 ;;
		right) geo=300x300+400+40 ;;
		esac
		# Appended: the records are emptied between tries.
		DISPLAY=$1 XAUTHORITY=$2 "$XINPUT_RECORDER" -g "$geo" \
		    -n "$side" >>"$T/$side.rec" 2>"$T/$side.err" &
		T_KILL="$T_KILL $!"
	done
	for side in left right; do
		focus_wait_line "$side" '^ready$' 1 || t_fail "$side window not mapped"
	done
}

# focus_wait_line SIDE REGEX COUNT: until SIDE's record has COUNT lines
# matching (bounded: 10 s); 1 if not.
focus_wait_line() {
	local i=0
	while [ "$(grep -c -- "$2" "$T/$1.rec")" -lt "$3" ]; do
		i=$((i + 1))
		[ "$i" -le 200 ] || return 1
		sleep 0.05
	done
	return 0
}

# focus_left MOVE-CMD: the focus to the left window by the pointer (twm
# follows it); the records start over.
focus_left() {
	local had
	had=$(grep -c '^focus in$' "$T/left.rec")
	"$1"
	focus_wait_line left '^focus in$' $((had + 1)) ||
		t_fail "the left window never got the focus"
	: >"$T/left.rec"
	: >"$T/right.rec"
}

# focus_check WHAT TEXT: TEXT arrived in the right window, none of it in
# the left one.
focus_check() {
	local want got
	want=$(printf '%s' "$2" | od -An -tx1 | tr -d ' \n')
	focus_wait_line right '^key press ' "${#2}" || {
		t_note "left: $(grep -c '^key press ' "$T/left.rec") key(s)"
		t_fail "$1: the text did not reach the window clicked into"
	}
	got=$(sed -n 's/^key press .* utf8=\([0-9a-f]*\) .*/\1/p' \
	    "$T/right.rec" | tr -d '\n')
	t_eq "$got" "$want" "$1: the text in the right window"
	t_eq "$(grep -c '^key press ' "$T/left.rec")" 0 \
	    "$1: keys in the left window"
}

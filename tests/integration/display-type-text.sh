#!/bin/bash
# SPDX-License-Identifier: MIT
# Typing any text (issue: text off the keymap arrived as NoSymbol in
# clients that had typed before, i.e. had cached the keymap): through
# display.act, in each vocabulary, 2000 mixed characters at full speed
# (ASCII with quotes and backslashes, Latin-1 accents, CJK, symbols, an
# emoji; more distinct characters off the keymap than there are spare
# keycodes) reach a client that already typed, none lost or reordered:
# the xinput-recorder fixture (keysyms and the UTF-8 its input context
# makes) and an xterm running cat into a file.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
command -v xterm >/dev/null 2>&1 || { echo "# no xterm"; exit 77; }
: "${XINPUT_RECORDER:?run through make check}"
export LC_ALL=C.UTF-8
t_start_guestd

o=$(rk call display.open '{"bot":"alice","width":800,"height":600}') ||
	t_fail "open: $o"
dpy=$(printf '%s' "$o" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
auth=$(printf '%s' "$o" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')

act() { rk act alice "$@"; }

# gen SEED: 2000 characters, a newline after every 50th (a tty's line
# holds 4096 bytes); "$T/raw" is the text, "$T/json" its JSON string.
gen() {
	awk -v seed="$1" -v raw="$T/raw" -v json="$T/json" 'BEGIN {
		n = split("a b c x y z A B Q 0 1 9 . , ; ! ? ~ ` | { } < > _ " \
		    "@ # $ % ^ & * ( ) - + = [ ] : / \" \\ \x27 " \
		    "é à ü ñ ç ß ø Å É œ ¿ € " \
		    "中 文 字 日 本 語 한 국 ✓ ✗ → ★ ♥ ∑ π Ω 😀 " \
		    "中 é ✓ a e i o", pool, " ")
		srand(seed)
		r = ""; j = ""
		for (i = 1; i <= 2000; i++) {
			c = pool[1 + int(rand() * n)]
			if (i % 50 == 0) c = " "
			r = r c
			j = j (c == "\"" ? "\\\"" : c == "\\" ? "\\\\" : c)
			if (i % 50 == 0) { r = r "\n"; j = j "\\n" }
		}
		printf "%s", r > raw
		printf "%s", j > json
	}'
}

# ---- the recorder -----------------------------------------------------
# Its lines go to a file, never a pipe: a reader slower than X would make
# the recorder lag behind by a pipe's worth of lines.
# The file is there before the recorder: waits on it never race its start.
: >"$T/rec"
DISPLAY=$dpy XAUTHORITY=$auth "$XINPUT_RECORDER" >"$T/rec" 2>"$T/rec.err" &
REC_PID=$!
T_KILL="$REC_PID"
# wait_rec PATTERN N: until N recorder lines match PATTERN (60 s).
wait_rec() {
	i=0
	while [ "$(grep -c "$1" "$T/rec")" -lt "$2" ]; do
		i=$((i + 1))
		[ "$i" -le 600 ] || t_fail "recorder: no line $2 like '$1'"
		kill -0 "$REC_PID" 2>/dev/null || t_fail "recorder exited"
		sleep 0.1
	done
}
wait_rec '^ready$' 1

# typed_hex N: the utf8 of key presses up to the Nth F12 (the marker).
typed_hex() {
	markers=$1
	wait_rec '^key press keysym=0xffc9 ' "$markers"
	awk -v n="$markers" '
		/^key press keysym=0xffc9 / { if (++m == n) exit; next }
		m == n - 1 && /^key press .*utf8=/ {
			u = $0; sub(/.*utf8=/, "", u); sub(/ .*/, "", u)
			printf "%s", u
		}' "$T/rec"
}

# It types once first, so it holds a keymap of its own from then on.
act '[{"kind":"type","text":"warm"},{"kind":"key","keys":"F12"}]' \
    >/dev/null || t_fail "warm-up"
t_eq "$(typed_hex 1)" "7761726d" "warm-up"

seed=1
for shape in '"kind":"type"' '"action":"type"' '"type":"type"'; do
	gen "$seed"
	seed=$((seed + 1))
	want=$(tr '\n' '\r' <"$T/raw" | od -An -tx1 | tr -d ' \n')
	act "[{$shape,\"text\":\"$(cat "$T/json")\"},{\"kind\":\"key\",\"keys\":\"F12\"}]" \
	    >"$T/act.out" 2>&1 || t_fail "$shape: $(cat "$T/act.out")"
	got=$(typed_hex "$seed")
	[ "$got" = "$want" ] || {
		printf '%s\n' "$want" | fold -w 2 >"$T/want.hex"
		printf '%s\n' "$got" | fold -w 2 >"$T/got.hex"
		t_fail "recorder, $shape: $(diff "$T/want.hex" "$T/got.hex" |
		    head -8 | tr '\n' ' ')"
	}
done
kill "$REC_PID" 2>/dev/null
wait "$REC_PID" 2>/dev/null
T_KILL=""

# ---- an xterm running cat ---------------------------------------------
# Focus follows the pointer (no window manager): keep it on the xterm.
DISPLAY=$dpy XAUTHORITY=$auth xterm -u8 -geometry 80x24+0+0 \
    -e sh -c "exec cat >>'$T/xterm.out'" 2>"$T/xterm.err" &
XT_PID=$!
T_KILL="$XT_PID"

# wait_file FILE TEXT: until FILE ends with the line TEXT (60 s).
wait_file() {
	i=0
	while [ "$(tail -c 1 "$1" 2>/dev/null | od -An -c | tr -d ' ')" != '\n' ] ||
	    [ "$(tail -n 1 "$1")" != "$2" ]; do
		i=$((i + 1))
		[ "$i" -le 600 ] || t_fail "xterm: '$2' not seen in $1"
		kill -0 "$XT_PID" 2>/dev/null || t_fail "xterm exited"
		sleep 0.1
	done
}

# Until the xterm types, the warm-up is sent again (its window may not
# be there yet); then it has typed, and holds its own keymap.
i=0
until grep -q warm "$T/xterm.out" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -le 50 ] || t_fail "xterm never typed: $(cat "$T/xterm.err")"
	act "[{\"kind\":\"move\",\"x\":100,\"y\":100},{\"kind\":\"type\",\"text\":\"warm $i\\n\"}]" \
	    >/dev/null || t_fail "xterm warm-up"
	sleep 0.2
done
act '[{"kind":"type","text":"sync\n"}]' >/dev/null || t_fail "sync"
wait_file "$T/xterm.out" sync
: >"$T/xterm.out"

for shape in '"kind":"type"' '"action":"type"' '"type":"type"'; do
	gen "$seed"
	seed=$((seed + 1))
	act "[{$shape,\"text\":\"$(cat "$T/json")end $seed\\n\"}]" \
	    >"$T/act.out" 2>&1 || t_fail "$shape: $(cat "$T/act.out")"
	printf 'end %s\n' "$seed" >>"$T/raw"
	wait_file "$T/xterm.out" "end $seed"
	cmp -s "$T/raw" "$T/xterm.out" ||
		t_fail "xterm, $shape: $(diff "$T/raw" "$T/xterm.out" | head -5)"
	: >"$T/xterm.out"
done
exit 0

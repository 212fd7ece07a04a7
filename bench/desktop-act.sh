#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Input on a 1280x800 desktop: guestd's display.act through the control
# channel against xdotool, side by side in one run.
#
#   clicks:  one display.act batch of 200 left clicks (bench/act-rtt, one
#            control connection, timed until the reply) against 200
#            `xdotool click --delay 0 1` processes run one after the other
#            from this script.
#   typing:  one batch typing 500 characters (ASCII with a few characters
#            off the keymap: é → 中 ß ñ) against
#            `xdotool type --delay 0 "<same text>"`.  Also one batch of
#            500 ASCII characters only, to show what the off-keymap
#            characters cost (the keymap restore pause).
#
# tests/fixtures/xinput-recorder covers the screen and prints every event
# it gets.  After each measured run (untimed) a right click is sent through
# guestd as an end marker, and the recorder's lines up to it are checked:
# 200 clicks, and for typing the exact text, in order, byte for byte.  A
# guestd run that loses or reorders anything fails the benchmark; for
# xdotool the characters that arrived are reported.  BENCH_RUNS (5) runs
# of each; prints medians (milliseconds) and the ratios xdotool / guestd.
# Needs Xvfb and xdotool (apt-get install xdotool); without xdotool the
# guestd side is still measured and the anchors are skipped.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RUNS=${BENCH_RUNS:-5}
NCLICK=200
XDOTOOL=${XDOTOOL:-xdotool}
command -v Xvfb >/dev/null 2>&1 || b_die "Xvfb not found (apt-get install xvfb)"
HAVE_XDOTOOL=1
if ! command -v "$XDOTOOL" >/dev/null 2>&1; then
	HAVE_XDOTOOL=0
	echo "bench: $XDOTOOL not found (apt-get install xdotool):" \
	    "measuring guestd only, no ratios" >&2
fi

ACT_RTT=${ACT_RTT:-$B_BUILD/bench/act-rtt}
RECORDER=${XINPUT_RECORDER:-$B_BUILD/tests/fixtures/xinput-recorder}
if [ -f "$B_BUILD/Makefile" ]; then
	[ -x "$ACT_RTT" ] && [ -x "$RECORDER" ] ||
	    make -s -C "$B_BUILD" bench/act-rtt \
	    tests/fixtures/xinput-recorder >/dev/null 2>&1 || true
fi
[ -x "$ACT_RTT" ] || b_die "no bench/act-rtt: run make benchmarks"
[ -x "$RECORDER" ] || b_die "no tests/fixtures/xinput-recorder: run make"

export LC_ALL=C.UTF-8	# ${#TEXT} in characters; the recorder decodes UTF-8
# 500 code points: printable ASCII (no newline or tab) and five characters
# that a US keymap lacks, spread through the text.
TEXT=""
base='The quick brown fox jumps over the lazy dog; PACK MY BOX with 5 dozen liquor jugs! 0123456789 ~`@#$%^&*()-_=+[]{}|\:"<>,.?/ '
while [ "${#TEXT}" -lt 500 ]; do
	TEXT+=$base
done
TEXT="${TEXT:0:60}é${TEXT:61:100}→${TEXT:162:100}中${TEXT:263:100}ß${TEXT:364:100}ñ${TEXT:465:35}"
ASCII="${base}${base}${base}${base}${base}"
ASCII="${ASCII:0:500}"
[ "${#TEXT}" -eq 500 ] && [ "${#ASCII}" -eq 500 ] ||
    b_die "text is ${#TEXT} / ${#ASCII} characters, not 500"
printf '%s' "$TEXT" > "$B_T/text"
printf '%s' "$ASCII" > "$B_T/ascii"
hex_of() {
	od -An -tx1 -v | tr -d ' \n'
}
TEXT_HEX=$(hex_of < "$B_T/text")
ASCII_HEX=$(hex_of < "$B_T/ascii")

WS="$B_T/ws"
b_mkdir "$WS"
GUESTD_DISPLAY_FIRST=$((600 + $$ % 300))
export GUESTD_DISPLAY_FIRST
b_start_guestd a "$WS"

out=$(b_rk a open bench --geometry 1280x800) || b_die "open: $out"
dpy=$(printf '%s' "$out" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
XAUTHORITY=$(printf '%s' "$out" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
export XAUTHORITY

mkfifo "$B_T/rec"
DISPLAY=$dpy "$RECORDER" >"$B_T/rec" 2>"$B_T/rec.err" &
B_PID["recorder"]=$!
exec 9<"$B_T/rec"
read -r -t 10 line <&9 || b_die "recorder did not start: $(cat "$B_T/rec.err")"
[ "$line" = ready ] || b_die "recorder: $line"

coproc ART { "$ACT_RTT" "${B_URL[a]}" "$B_SECRET" bench; }
B_PID["act-rtt"]=$ART_PID
ART_IN=${ART[1]}
ART_OUT=${ART[0]}

# art CMD: one act-rtt command; prints its time in microseconds.
art() {
	local reply
	echo "$1" >&"$ART_IN"
	read -r -t 60 reply <&"$ART_OUT" || b_die "act-rtt: no answer to $1"
	case $reply in
	ok\ us=*) reply=${reply#ok us=}; echo "${reply%% *}" ;;
	*) b_die "act-rtt: $1: $reply" ;;
	esac
}

# collect: send the end marker (a right click through guestd, somewhere
# new each time: identical batches on an unchanged screen would meet the
# repeat guard, UNCHANGED_AFTER_REPEAT) and read the
# recorder up to it; sets CLICKS (left releases) and GOT (hex of the text).
collect() {
	local l u
	CLICKS=0
	GOT=""
	MARK=$((MARK + 1))
	art "mark $((100 + MARK % 1000)) 400" >/dev/null
	while read -r -t 20 l <&9; do
		case $l in
		"button release 3 "*) return 0 ;;
		"button release 1 "*) CLICKS=$((CLICKS + 1)) ;;
		"key press "*)
			u=${l#* utf8=}
			GOT+=${u%% *} ;;
		esac
	done
	b_die "the recorder did not see the end marker"
}

# unhex HEX: the bytes; chars HEX: how many UTF-8 characters they are.
unhex() {
	# shellcheck disable=SC2059
	printf "$(printf '%s' "$1" | sed 's/../\\x&/g')"
}
chars() {
	unhex "$1" | wc -m
}

MARK=0
art "move 640 400" >/dev/null
collect

g_click=() g_type=() g_ascii=() x_click=() x_type=() x_lost=()
run_guestd() {
	local us
	us=$(art "clicks $NCLICK")
	collect
	[ "$CLICKS" -eq "$NCLICK" ] ||
	    b_die "guestd: $CLICKS of $NCLICK clicks arrived"
	g_click+=("$us")

	us=$(art "type $B_T/text")
	collect
	[ "$GOT" = "$TEXT_HEX" ] || b_die "guestd typed text differs:" \
	    "$(chars "$GOT") characters arrived: $(unhex "$GOT")"
	g_type+=("$us")

	us=$(art "type $B_T/ascii")
	collect
	[ "$GOT" = "$ASCII_HEX" ] || b_die "guestd ASCII text differs"
	g_ascii+=("$us")
}

run_xdotool() {
	local i t0 t1 n
	t0=${EPOCHREALTIME/./}
	for ((i = 0; i < NCLICK; i++)); do
		DISPLAY=$dpy "$XDOTOOL" click --delay 0 1
	done
	t1=${EPOCHREALTIME/./}
	collect
	[ "$CLICKS" -eq "$NCLICK" ] ||
	    echo "bench: xdotool: $CLICKS of $NCLICK clicks arrived" >&2
	x_click+=($((t1 - t0)))

	t0=${EPOCHREALTIME/./}
	DISPLAY=$dpy "$XDOTOOL" type --delay 0 "$TEXT"
	t1=${EPOCHREALTIME/./}
	collect
	x_type+=($((t1 - t0)))
	if [ "$GOT" = "$TEXT_HEX" ]; then
		x_lost+=(ok)
	else
		n=$(chars "$GOT")
		x_lost+=("$n/500")
		echo "bench: xdotool type: $n characters arrived, text" \
		    "differs" >&2
	fi
}

for ((run = 0; run < RUNS; run++)); do
	run_guestd
	[ "$HAVE_XDOTOOL" -eq 0 ] || run_xdotool
done

exec 9<&-
med() {
	printf '%s\n' "$@" | b_median
}
ms() {
	awk -v u="$1" 'BEGIN { printf "%8.2f", u / 1000 }'
}
gc=$(med "${g_click[@]}")
gt=$(med "${g_type[@]}")
ga=$(med "${g_ascii[@]}")
printf '\ninput on a 1280x800 desktop, median ms of %d runs\n' "$RUNS"
printf '  guestd: 1 batch of %d clicks           %s  (runs: %s)\n' \
    "$NCLICK" "$(ms "$gc")" "${g_click[*]}"
printf '  guestd: type 500 chars (5 off keymap)  %s  (runs: %s)\n' \
    "$(ms "$gt")" "${g_type[*]}"
printf '  guestd: type 500 ASCII chars           %s  (runs: %s)\n' \
    "$(ms "$ga")" "${g_ascii[*]}"
echo "  guestd: every click and character arrived, in order"
if [ "$HAVE_XDOTOOL" -eq 1 ]; then
	xc=$(med "${x_click[@]}")
	xt=$(med "${x_type[@]}")
	printf '  %d x xdotool click --delay 0 1       %s  (runs: %s)\n' \
	    "$NCLICK" "$(ms "$xc")" "${x_click[*]}"
	printf '  xdotool type --delay 0 (500 chars)     %s  (runs: %s)\n' \
	    "$(ms "$xt")" "${x_type[*]}"
	printf '  xdotool type: characters that arrived per run (ok: all, in order): %s\n' \
	    "${x_lost[*]}"
	rc=$(b_ratio "$xc" "$gc")
	rt=$(b_ratio "$xt" "$gt")
	printf 'ratios (xdotool / guestd, medians)\n'
	printf '  clicks  %8.1f   (target >= 50: %s)\n' "$rc" \
	    "$(awk -v r="$rc" 'BEGIN { print (r >= 50) ? "met" : "MISSED" }')"
	printf '  typing  %8.1f   (target >= 5: %s)\n' "$rt" \
	    "$(awk -v r="$rt" 'BEGIN { print (r >= 5) ? "met" : "MISSED" }')"
fi

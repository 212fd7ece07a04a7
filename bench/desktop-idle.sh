#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What do open but idle desktops cost?  BENCH_DESKTOPS (10) desktops of
# 1280x800 are opened on one guestd and left alone for BENCH_IDLE_S (30)
# seconds; the CPU time (user + system clock ticks, /proc/PID/stat) that
# guestd and each Xvfb used over that window is printed, with the tick
# rate and the share of one CPU.  Nothing draws, so an idle desktop should
# cost guestd ~0: its capture waits for XDamage events, with no timer.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ND=${BENCH_DESKTOPS:-10}
S=${BENCH_IDLE_S:-30}
command -v Xvfb >/dev/null 2>&1 || b_die "Xvfb not found (apt-get install xvfb)"
HZ=$(getconf CLK_TCK)

WS="$B_T/ws"
b_mkdir "$WS"
GUESTD_DISPLAY_FIRST=$((300 + $$ % 300))
export GUESTD_DISPLAY_FIRST
b_start_guestd a "$WS"

for ((i = 0; i < ND; i++)); do
	b_rk a open "idle-$i" --geometry 1280x800 >/dev/null ||
	    b_die "open idle-$i failed"
done
mapfile -t xpids < <(b_rk a displays --json | grep -o '"pid":[0-9]*' |
    cut -d: -f2)
[ "${#xpids[@]}" -eq "$ND" ] || b_die "${#xpids[@]} X servers, not $ND"

snapshot() {
	local p
	b_ticks "${B_PID[a]}"
	for p in "${xpids[@]}"; do
		b_ticks "$p"
	done
}

mapfile -t before < <(snapshot)
sleep "$S"	# the measurement window itself, not a synchronisation
mapfile -t after < <(snapshot)

g=$((after[0] - before[0]))
xs=0
per=()
for ((i = 1; i <= ND; i++)); do
	d=$((after[i] - before[i]))
	xs=$((xs + d))
	per+=("$d")
done
pct() {
	awk -v t="$1" -v hz="$HZ" -v s="$S" \
	    'BEGIN { printf "%.3f", t / hz / s * 100 }'
}
printf '\n%d idle 1280x800 desktops over %d s (CPU clock ticks, %d per s)\n' \
    "$ND" "$S" "$HZ"
printf '  guestd                 %6d ticks  (%s%% of one CPU)\n' "$g" \
    "$(pct "$g")"
printf '  %d Xvfb, together      %6d ticks  (%s%% of one CPU)\n' "$ND" \
    "$xs" "$(pct "$xs")"
printf '  per Xvfb               %s\n' "${per[*]}"

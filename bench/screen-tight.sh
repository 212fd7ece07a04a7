#!/usr/bin/env bash
# Screens at the limit: guestd's RFB against x11vnc -xdamage on the same
# 1280x800 Xvfb in one run, both read by the same native viewer asking
# noVNC's encodings (Tight, JPEG quality 6, compression 2, CopyRect) over
# TCP: guestd's debug port (the same gate and fast path as the gateway's
# viewers) and x11vnc's port.  bench/rfb-tight-latency paints and views:
#   - full: the whole screen, a busy picture moving every frame, 30 fps
#   - window: a 384x288 window of the same, 30 fps
# each BENCH_SECONDS.  Prints, per case and side: paint -> viewer latency
# (median, p95), updates/s delivered, CPU of the serving process
# (/proc/PID/stat) and CPU per delivered update, and the ratios.
# Needs Xvfb and x11vnc (apt-get install x11vnc; without it only guestd is
# measured).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

S=${BENCH_SECONDS:-10}
FPS=${BENCH_FPS:-30}
VIEW="$B_BUILD/bench/rfb-tight-latency"
[ -x "$VIEW" ] || b_die "no bench/rfb-tight-latency: run make benchmarks"
command -v Xvfb >/dev/null 2>&1 || b_die "Xvfb not found"
ANCHOR=1
command -v x11vnc >/dev/null 2>&1 || {
	echo "bench: no x11vnc: measuring guestd only" >&2
	ANCHOR=0
}
HZ=$(getconf CLK_TCK)

ticks() {	# PID: utime + stime
	sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# run NAME PID PORT WINDOW: one measured phase; results in R_<NAME>_*.
run() {
	local name=$1 pid=$2 port=$3 win=$4 line tk0=0 t0=0 tk1 t1
	while read -r line; do
		case "$line" in
		paint-start)
			tk0=$(ticks "$pid")
			t0=${EPOCHREALTIME/./}
			;;
		paint-end*)
			tk1=$(ticks "$pid")
			t1=${EPOCHREALTIME/./}
			printf -v "R_${name}_ticks" '%s' $((tk1 - tk0))
			printf -v "R_${name}_us" '%s' $((t1 - t0))
			printf -v "R_${name}" '%s' "$line"
			;;
		connect-failed*)
			b_die "$name: viewer could not connect"
			;;
		esac
	done < <(DISPLAY=$DPY XAUTHORITY=$XAUTH "$VIEW" "127.0.0.1:$port" \
	    "$FPS" "$S" "$win")
}

WS="$B_T/ws"
b_mkdir "$WS"
GUESTD_DISPLAY_FIRST=$((300 + $$ % 300))
export GUESTD_DISPLAY_FIRST
base=$((20000 + $$ % 20000))
b_start_guestd a "$WS" --debug-vnc 127.0.0.1 --debug-vnc-base "$base"
GPID=${B_PID[a]}
out=$(b_rk a call display.open '{"bot":"bench","width":1280,"height":800}') ||
	b_die "display.open: $out"
DPY=$(printf '%s' "$out" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
XAUTH=$(printf '%s' "$out" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
slot=$(printf '%s' "$out" | sed -n 's/.*"slot":\([0-9]*\).*/\1/p')
GPORT=$((base + slot))

echo "guestd: full screen and window at $FPS fps, ${S}s each" >&2
run g_full "$GPID" "$GPORT" 0
run g_win "$GPID" "$GPORT" 1

if [ "$ANCHOR" -eq 1 ]; then
	VP=$(free_port)
	mkfifo "$B_T/vout"
	# As the user Xvfb runs as: its shared memory is that user's.
	AS_USER=(env)
	[ "$(id -u)" -ne 0 ] || AS_USER=(setpriv --reuid "$B_USER" \
	    --regid "$(id -g "$B_USER")" --clear-groups env HOME=/)
	"${AS_USER[@]}" x11vnc -display "$DPY" -auth "$XAUTH" -rfbport "$VP" -localhost \
	    -xdamage -forever -shared -nopw -norc >"$B_T/vout" \
	    2>"$B_T/x11vnc.log" &
	B_PID[x11vnc]=$!
	exec 6<"$B_T/vout"
	while read -r -t 30 line <&6; do
		case "$line" in PORT=*) break ;; esac
	done
	[ "${line#PORT=}" = "$VP" ] ||
	    b_die "x11vnc did not listen: $(tail -3 "$B_T/x11vnc.log")"
	echo "x11vnc: the same" >&2
	run x_full "${B_PID[x11vnc]}" "$VP" 0
	run x_win "${B_PID[x11vnc]}" "$VP" 1
fi

kv() {	# KEY LINE
	printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}
val() {	# name key
	local v="R_$1"
	kv "$2" "${!v:-}"
}
pct() {	# name
	local t="R_$1_ticks" u="R_$1_us"
	awk -v t="${!t:-0}" -v hz="$HZ" -v us="${!u:-1}" \
	    'BEGIN { printf "%.1f", t / hz / (us / 1e6) * 100 }'
}
per_update() {	# name: CPU ms per delivered update
	local t="R_$1_ticks" n
	n=$(val "$1" seen)
	awk -v t="${!t:-0}" -v hz="$HZ" -v n="${n:-0}" \
	    'BEGIN { if (n > 0) printf "%.2f", t / hz * 1000 / n; else print "nan" }'
}
ups() {	# name
	local u="R_$1_us"
	awk -v n="$(val "$1" seen)" -v us="${!u:-1}" \
	    'BEGIN { printf "%.1f", n / (us / 1e6) }'
}
ms() {
	awk -v v="${1:-0}" 'BEGIN { printf "%.2f", v / 1000 }'
}
row() {	# label guestd x11vnc
	local r="-"
	[ "$ANCHOR" -eq 0 ] || r=$(b_ratio "$2" "$3")
	printf '  %-28s %10s %10s %8s\n' "$1" "$2" "${3:--}" "$r"
}
printf '\nguestd vs x11vnc -xdamage, 1280x800, Tight JPEG q6 viewer over TCP, %d fps\n' "$FPS"
printf '  %-28s %10s %10s %8s\n' "" guestd x11vnc ratio
for c in full win; do
	label="whole screen"
	[ "$c" = full ] || label="384x288 window"
	printf '  -- %s (%s paints, %s seen by guestd'"'"'s viewer)\n' \
	    "$label" "$(val "g_$c" paints)" "$(val "g_$c" seen)"
	row "latency median ms" "$(ms "$(val "g_$c" lat_median_us)")" \
	    "$(ms "$(val "x_$c" lat_median_us)")"
	row "latency p95 ms" "$(ms "$(val "g_$c" lat_p95_us)")" \
	    "$(ms "$(val "x_$c" lat_p95_us)")"
	row "updates/s delivered" "$(ups "g_$c")" "$(ups "x_$c")"
	row "CPU % of one core" "$(pct "g_$c")" "$(pct "x_$c")"
	row "CPU ms per update" "$(per_update "g_$c")" "$(per_update "x_$c")"
done
printf '  (ratio = guestd / x11vnc; CPU from %d Hz clock ticks)\n' "$HZ"

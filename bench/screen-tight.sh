#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Screens at the limit: guestd's RFB against x11vnc -xdamage on the same
# 1280x800 Xvfb in one run, both read by the same native viewer asking
# noVNC's encodings (Tight, JPEG quality 6, compression 2, CopyRect), over
# two paths:
#   tcp  guestd's debug port (the same gate and fast path as the
#        gateway's viewers) and x11vnc's port;
#   ws   guestd's gateway websocket and websockify in front of x11vnc,
#        reached through bench/ws-bridge.mjs (a TCP port in front of a
#        websocket, as noVNC's socket is; not counted on either side).
# bench/rfb-tight-latency paints and views, each case BENCH_SECONDS:
#   full     the whole screen, a busy picture moving every frame, 30 fps
#   full10   the same at 10 fps, where both sides deliver every paint:
#            CPU compared at equal delivered updates
#   win      a 384x288 window of the same, 30 fps
#   scroll   text over the screen scrolled a line per frame (XCopyArea),
#            30 fps
#   corners  two 48x48 squares at opposite corners, 30 fps
# With a full-screen case, the floor is measured first in the same run:
# TurboJPEG alone compressing the same frames as libvncserver's Tight
# does for this request (quality 79, 4:4:4, fast DCT), the whole frame
# at once, CPU time on one thread (rfb-tight-latency mode 4), and is
# printed against x11vnc's CPU per update.
# Prints, per case, path and side: paint -> viewer latency (median, p95),
# updates/s delivered, KiB/s to the viewer, CPU of the serving processes
# (/proc/PID/stat: guestd; x11vnc, and websockify on the ws path) and CPU
# per delivered update, and the ratios guestd / x11vnc.
# BENCH_OLD_GUESTD=PATH also measures another guestd build (its own
# display, tcp path, the full, full10 and window cases) in the same run:
# the way to see whether a change made latency or CPU per update worse.
# Anchors that are missing are skipped: without x11vnc only guestd is
# measured, without websockify or Node 20.10+ no ws path.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

S=${BENCH_SECONDS:-10}
CASES=${BENCH_CASES:-"full:30:0 full10:10:0 win:30:1 scroll:30:2 corners:30:3"}
VIEW="$B_BUILD/bench/rfb-tight-latency"
BRIDGE="$(cd "$(dirname "$0")" && pwd)/ws-bridge.mjs"
[ -x "$VIEW" ] || b_die "no bench/rfb-tight-latency: run make benchmarks"
command -v Xvfb >/dev/null 2>&1 || b_die "Xvfb not found"
ANCHOR=1
command -v x11vnc >/dev/null 2>&1 || {
	echo "bench: no x11vnc: measuring guestd only" >&2
	ANCHOR=0
}
WSPATH=1
if ! command -v node >/dev/null 2>&1 ||
    [ "$(node --experimental-websocket -e \
    'console.log(typeof WebSocket)' 2>/dev/null)" != function ]; then
	echo "bench: no Node with a WebSocket client: no ws path" >&2
	WSPATH=0
fi
XWS=$ANCHOR
[ "$WSPATH" -eq 1 ] && command -v websockify >/dev/null 2>&1 || XWS=0
HZ=$(getconf CLK_TCK)

tree_pids() {	# PID: it and all its descendants
	local c
	echo "$1"
	for c in $(pgrep -P "$1"); do
		tree_pids "$c"
	done
}
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# The benchmark user (Xvfb's shared memory is that user's); setpriv and
# env exec, so $! is the daemon's own pid.
AS_USER=(env HOME=/)
[ "$(id -u)" -ne 0 ] || AS_USER=(setpriv --reuid "$B_USER" \
    --regid "$(id -g "$B_USER")" --clear-groups env HOME=/)

# wait_line FD PREFIX: the first line of FD starting with PREFIX (30 s).
wait_line() {
	local line
	while read -r -t 30 line <&"$1"; do
		case "$line" in "$2"*) echo "${line#"$2"}"; return 0 ;; esac
	done
	return 1
}

# bridge NAME URL: a ws-bridge in front of URL; its port in BP_<NAME>.
bridge() {
	mkfifo "$B_T/bout-$1"
	node --experimental-websocket "$BRIDGE" "$2" >"$B_T/bout-$1" \
	    2>"$B_T/bridge-$1.log" &
	B_PID[bridge_$1]=$!
	local fd
	exec {fd}<"$B_T/bout-$1"
	printf -v "BP_$1" '%s' "$(wait_line "$fd" PORT=)" ||
	    b_die "ws-bridge $1 did not listen"
}

# run NAME PORT FPS MODE PIDSF: one measured case; results in R_<NAME>*.
# PIDSF prints the serving processes; it runs once the viewer is
# connected (websockify forks a child per connection).
run() {
	local name=$1 port=$2 fps=$3 mode=$4 pidsf=$5 line tk0=0 t0=0 tk1 t1
	local pids=""
	while read -r line; do
		case "$line" in
		paint-start)
			pids=$($pidsf)
			tk0=$(b_ticks $pids)
			t0=${EPOCHREALTIME/./}
			;;
		paint-end*)
			tk1=$(b_ticks $pids)
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
	    "$fps" "$S" "$mode")
}

# run_cases SIDE PATH PORT PIDSF: every case of CASES.
run_cases() {
	local side=$1 path=$2 port=$3 pidsf=$4 c name fps mode
	for c in $CASES; do
		IFS=: read -r name fps mode <<<"$c"
		run "${side}_${path}_${name}" "$port" "$fps" "$mode" "$pidsf"
	done
}

# open_display NAME: a 1280x800 display of guestd NAME; DPY, XAUTH, SLOT.
open_display() {
	local out
	out=$(b_rk "$1" call display.open \
	    '{"bot":"bench","width":1280,"height":800}') ||
		b_die "display.open: $out"
	DPY=$(printf '%s' "$out" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
	XAUTH=$(printf '%s' "$out" |
	    sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
	SLOT=$(printf '%s' "$out" | sed -n 's/.*"slot":\([0-9]*\).*/\1/p')
}

# ---- the JPEG floor ----------------------------------------------------------

FLOOR=""
case " $CASES " in
*" full:"* | *" full10:"*)
	echo "floor: TurboJPEG alone on the full-screen frames" >&2
	FLOOR=$("$VIEW" 127.0.0.1:0 10 10 4) || b_die "floor: $FLOOR"
	;;
esac

# ---- guestd ----------------------------------------------------------------

WS="$B_T/ws"
b_mkdir "$WS" "$B_T/ws-old"
GUESTD_DISPLAY_FIRST=$((300 + $$ % 300))
export GUESTD_DISPLAY_FIRST
base=$((20000 + $$ % 20000))
b_start_guestd a "$WS" --debug-vnc 127.0.0.1 --debug-vnc-base "$base" \
    --gateway 127.0.0.1:0
GPID=${B_PID[a]}
g_pids() { echo "$GPID"; }
open_display a
GPORT=$((base + SLOT))
echo "guestd: tcp, ${S}s per case" >&2
run_cases g tcp "$GPORT" g_pids
if [ "$WSPATH" -eq 1 ]; then
	GURL=$(b_rk a screen-url bench --control | sed -n 1p)
	case "$GURL" in ws://*) ;; *) b_die "screen-url: $GURL" ;; esac
	bridge g "$GURL"
	echo "guestd: ws (gateway)" >&2
	run_cases g ws "$BP_g" g_pids
fi

# ---- x11vnc ----------------------------------------------------------------

if [ "$ANCHOR" -eq 1 ]; then
	VP=$(free_port)
	mkfifo "$B_T/vout"
	"${AS_USER[@]}" x11vnc -display "$DPY" -auth "$XAUTH" -rfbport "$VP" \
	    -localhost -xdamage -forever -shared -nopw -norc >"$B_T/vout" \
	    2>"$B_T/x11vnc.log" &
	B_PID[x11vnc]=$!
	exec 6<"$B_T/vout"
	[ "$(wait_line 6 PORT=)" = "$VP" ] ||
	    b_die "x11vnc did not listen: $(tail -3 "$B_T/x11vnc.log")"
	x_tcp_pids() { echo "${B_PID[x11vnc]}"; }
	echo "x11vnc: tcp" >&2
	run_cases x tcp "$VP" x_tcp_pids
fi
if [ "$XWS" -eq 1 ]; then
	WP=$(free_port)
	"${AS_USER[@]}" websockify "127.0.0.1:$WP" "127.0.0.1:$VP" \
	    >"$B_T/websockify.log" 2>&1 &
	B_PID[websockify]=$!
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$WP") 2>/dev/null && break
		sleep 0.1	# readiness of a foreign daemon with no signal
	done
	bridge x "ws://127.0.0.1:$WP/"
	# x11vnc, websockify and websockify's per-connection child, as
	# they are when the viewer is connected.
	x_pids() {
		local p c
		for p in $(tree_pids "${B_PID[x11vnc]}") \
		    $(tree_pids "${B_PID[websockify]}"); do
			c=$(cat "/proc/$p/comm" 2>/dev/null) || continue
			case "$c" in
			x11vnc|websockify|python3*) echo "$p" ;;
			esac
		done
	}
	echo "x11vnc: ws (websockify)" >&2
	run_cases x ws "$BP_x" x_pids
fi

# ---- an older guestd, for a regression check ------------------------------

OLD=0
if [ -n "${BENCH_OLD_GUESTD:-}" ]; then
	[ -x "$BENCH_OLD_GUESTD" ] || b_die "BENCH_OLD_GUESTD: not executable"
	OLD=1
	obase=$((base + 1000))
	GUESTD="$BENCH_OLD_GUESTD" b_start_guestd o "$B_T/ws-old" \
	    --debug-vnc 127.0.0.1 --debug-vnc-base "$obase"
	o_pids() { echo "${B_PID[o]}"; }
	open_display o
	echo "older guestd: tcp, full, full10 and window" >&2
	for c in $CASES; do
		IFS=: read -r name fps mode <<<"$c"
		case "$name" in full|full10|win) ;; *) continue ;; esac
		run "o_tcp_${name}" "$((obase + SLOT))" "$fps" "$mode" o_pids
	done
fi

# ---- report ----------------------------------------------------------------

kv() {	# KEY LINE
	printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}
val() {	# name key
	local v="R_$1"
	kv "$2" "${!v:-}"
}
have() {	# name: measured?
	local v="R_$1"
	[ -n "${!v:-}" ]
}
metric() {	# name metric -> value, empty when not measured
	local n=$1 t="R_$1_ticks" u="R_$1_us" seen
	have "$n" || return 0
	seen=$(val "$n" seen)
	case "$2" in
	lat) awk -v v="$(val "$n" lat_median_us)" 'BEGIN { printf "%.2f", v / 1000 }' ;;
	p95) awk -v v="$(val "$n" lat_p95_us)" 'BEGIN { printf "%.2f", v / 1000 }' ;;
	ups) awk -v n="$seen" -v us="${!u}" 'BEGIN { printf "%.1f", n / (us / 1e6) }' ;;
	kbs) awk -v b="$(val "$n" bytes)" -v us="${!u}" 'BEGIN { printf "%.0f", b / 1024 / (us / 1e6) }' ;;
	cpu) awk -v t="${!t}" -v hz="$HZ" -v us="${!u}" 'BEGIN { printf "%.1f", t / hz / (us / 1e6) * 100 }' ;;
	cpu_upd) awk -v t="${!t}" -v hz="$HZ" -v n="$seen" 'BEGIN { if (n > 0) printf "%.2f", t / hz * 1000 / n; else print "nan" }' ;;
	esac
}
ratio() {
	[ -n "$1" ] && [ -n "$2" ] && b_ratio "$1" "$2" || echo -
}
printf '\nguestd vs x11vnc -xdamage, 1280x800, Tight JPEG q6 + CopyRect viewer, %ss per case\n' "$S"
printf '  %-22s %8s %8s %6s | %8s %8s %6s' "" g-tcp x-tcp ratio g-ws x-ws ratio
[ "$OLD" -eq 0 ] || printf ' | %8s' old-tcp
printf '\n'
for c in $CASES; do
	IFS=: read -r name fps mode <<<"$c"
	printf '  -- %s at %s fps (%s paints; delivered g-tcp %s, x-tcp %s, g-ws %s, x-ws %s)\n' \
	    "$name" "$fps" "$(val "g_tcp_$name" paints)" \
	    "$(val "g_tcp_$name" seen)" "$(val "x_tcp_$name" seen)" \
	    "$(val "g_ws_$name" seen)" "$(val "x_ws_$name" seen)"
	for m in lat:"latency median ms" p95:"latency p95 ms" \
	    ups:"updates/s delivered" kbs:"KiB/s to the viewer" \
	    cpu:"CPU % of one core" cpu_upd:"CPU ms per update"; do
		k=${m%%:*}
		gt=$(metric "g_tcp_$name" "$k")
		xt=$(metric "x_tcp_$name" "$k")
		gw=$(metric "g_ws_$name" "$k")
		xw=$(metric "x_ws_$name" "$k")
		printf '  %-22s %8s %8s %6s | %8s %8s %6s' "${m#*:}" \
		    "${gt:--}" "${xt:--}" "$(ratio "$gt" "$xt")" \
		    "${gw:--}" "${xw:--}" "$(ratio "$gw" "$xw")"
		[ "$OLD" -eq 0 ] || printf ' | %8s' "$(metric "o_tcp_$name" "$k")"
		printf '\n'
	done
done
if [ -n "$FLOOR" ]; then
	fm=$(awk -v v="$(kv jpeg_median_us "$FLOOR")" 'BEGIN { printf "%.2f", v / 1000 }')
	fp=$(awk -v v="$(kv jpeg_p95_us "$FLOOR")" 'BEGIN { printf "%.2f", v / 1000 }')
	printf '  -- floor: TurboJPEG alone, q79 4:4:4 fast DCT, the whole frame on one thread (%s frames, %s bytes each)\n' \
	    "$(kv frames "$FLOOR")" "$(kv bytes "$FLOOR")"
	printf '  %-22s %8s %8s %6s | %8s %8s %6s\n' "JPEG CPU ms per frame" \
	    "$fm" "$(metric x_tcp_full10 cpu_upd)" \
	    "$(ratio "$fm" "$(metric x_tcp_full10 cpu_upd)")" "$fm" \
	    "$(metric x_ws_full10 cpu_upd)" \
	    "$(ratio "$fm" "$(metric x_ws_full10 cpu_upd)")"
	printf '  %-22s %8s\n' "JPEG p95 ms" "$fp"
	printf '  (floor ratio = the JPEG alone / x11vnc CPU per update at 10 fps: what guestd cannot go below)\n'
fi
printf '  (ratio = guestd / x11vnc; ws: through the gateway / websockify; CPU from %d Hz clock ticks)\n' "$HZ"

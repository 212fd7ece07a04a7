#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The screen gateway against the stack it replaces, side by side in one run
# on the same Xvfb with the same workload: guestd's gateway (RFB from its
# damage capture, websocket on the one gateway port) against x11vnc
# -xdamage (its defaults otherwise) behind websockify.  One 1280x800 desktop
# is opened by guestd and filled by bench/xnoise; bench/rfb-latency is the
# viewer and the painter in one process (so paint and arrival share one
# clock): it repaints a 320x240 region a new colour at 30 and then 60 fps,
# keeps one incremental request outstanding (Raw pixels, the same for
# both), and reports paint -> viewer latency, updates and bytes.  Measured:
#   - websocket connect -> first RFB byte (BENCH_CONNECTS runs, median)
#   - idle CPU of the serving processes with one viewer (BENCH_IDLE_S)
#   - latency (median, p90), updates/s, bytes/s and CPU (/proc/PID/stat)
#     of the serving processes at 30 and 60 fps (BENCH_SECONDS each)
#   - memory added per display: PSS (/proc/PID/smaps_rollup) guestd gained
#     by opening the display and serving the viewer, against x11vnc +
#     websockify's whole PSS while serving it
# Serving processes: guestd; x11vnc + websockify and its per-connection
# child.  Xvfb is the same for both and not counted.  Anchors that are not
# installed are skipped (apt-get install x11vnc websockify).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

S=${BENCH_SECONDS:-10}
IDLE=${BENCH_IDLE_S:-10}
NC=${BENCH_CONNECTS:-20}
REGION=100,100,320,240
command -v Xvfb >/dev/null 2>&1 || b_die "Xvfb not found (apt-get install xvfb)"
RFBL="$B_BUILD/bench/rfb-latency"
XNOISE="$B_BUILD/bench/xnoise"
[ -x "$RFBL" ] && [ -x "$XNOISE" ] ||
	b_die "no bench/rfb-latency or bench/xnoise: run make benchmarks"
HZ=$(getconf CLK_TCK)
ANCHOR=${BENCH_ANCHOR:-1}	# 0: guestd only
for c in x11vnc websockify; do
	[ "$ANCHOR" -eq 1 ] || break
	if ! command -v "$c" >/dev/null 2>&1; then
		echo "bench: $c not found (apt-get install x11vnc websockify):" \
		    "measuring guestd only" >&2
		ANCHOR=0
	fi
done

# ---- helpers -------------------------------------------------------------

pss_kb() {	# PID...: PSS summed, KiB
	local p k=0
	for p in "$@"; do
		[ -r "/proc/$p/smaps_rollup" ] || continue
		k=$((k + $(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup")))
	done
	echo "$k"
}
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
# The benchmark user without a lingering parent: setpriv and env exec, so
# $! of "${AS_USER[@]}" CMD & is CMD's own pid (b_cleanup kills it).
AS_USER=(env HOME="$B_T/home")
if [ "$(id -u)" -eq 0 ]; then
	AS_USER=(setpriv --reuid "$B_USER" --regid "$(id -g "$B_USER")"
	    --clear-groups env HOME="$B_T/home")
fi
kv() {	# KEY LINE: the value of KEY=value in LINE
	printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# run_viewer NAME URL PIDS-FUNCTION: one rfb-latency run through URL with
# the idle and both paint phases; CPU of the serving processes (listed by
# the function, evaluated at each phase start: children come and go) is
# taken at each phase's start and end.  Results in R_<NAME>_<key>.
run_viewer() {
	local name=$1 url=$2 pidsf=$3 line t0 tk0 pids
	coproc RL { DISPLAY=$DPY XAUTHORITY=$XAUTH "$RFBL" --url "$url" \
	    --region "$REGION" --idle "$IDLE" --paint "30,$S" \
	    --paint "60,$S" 2>&1; }
	local rlpid=$RL_PID fd=${RL[0]}
	local phase=0 keys=(idle p30 p60)
	while read -r line <&"$fd"; do
		case "$line" in
		connect*)
			;;
		idle-start|paint-start)
			pids=$($pidsf)
			t0=${EPOCHREALTIME/./}
			tk0=$(b_ticks $pids)
			if [ "$line" = idle-start ]; then
				printf -v "R_${name}_pss" '%s' "$(pss_kb $pids)"
			fi
			;;
		idle-end*|paint-end*)
			local k=${keys[$phase]} tk1 t1
			tk1=$(b_ticks $pids)
			t1=${EPOCHREALTIME/./}
			printf -v "R_${name}_${k}_ticks" '%s' $((tk1 - tk0))
			printf -v "R_${name}_${k}_us" '%s' $((t1 - t0))
			printf -v "R_${name}_${k}" '%s' "$line"
			phase=$((phase + 1))
			;;
		error*)
			b_die "$name viewer: $line"
			;;
		esac
	done
	wait "$rlpid" || b_die "$name viewer failed"
	[ "$phase" -eq 3 ] || b_die "$name viewer: $phase phases"
}

# connect_median URL: median websocket connect -> first RFB byte, in us.
connect_median() {
	local i
	for ((i = 0; i < NC; i++)); do
		DISPLAY=$DPY XAUTHORITY=$XAUTH "$RFBL" --url "$1" \
		    --region "$REGION" | sed -n 's/^connect .*first_byte_us=\([0-9]*\) .*/\1/p'
	done | b_median
}

# ---- the desktop ---------------------------------------------------------

WS="$B_T/ws"
b_mkdir "$WS" "$B_T/home"
GUESTD_DISPLAY_FIRST=$((300 + $$ % 300))
export GUESTD_DISPLAY_FIRST
b_start_guestd a "$WS" --gateway 127.0.0.1:0
GPID=${B_PID[a]}
pss0=$(pss_kb "$GPID")
out=$(b_rk a call display.open '{"bot":"bench","width":1280,"height":800}') ||
	b_die "display.open: $out"
DPY=$(printf '%s' "$out" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
XAUTH=$(printf '%s' "$out" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
mkfifo "$B_T/nin" "$B_T/nout"
DISPLAY=$DPY XAUTHORITY=$XAUTH "$XNOISE" <"$B_T/nin" >"$B_T/nout" 2>&1 &
B_PID[xnoise]=$!
exec 7>"$B_T/nin" 8<"$B_T/nout"
read -r line <&8
echo "paint 400" >&7
read -r line <&8
[ "$line" = ok ] || b_die "xnoise: $line"

# ---- guestd --------------------------------------------------------------

GURL=$(b_rk a screen-url bench --control | sed -n 1p)
case "$GURL" in ws://*) ;; *) b_die "screen-url: $GURL" ;; esac
guestd_pids() { echo "$GPID"; }
echo "guestd: connect x$NC, idle ${IDLE}s, 30 fps ${S}s, 60 fps ${S}s" >&2
C_g=$(connect_median "$GURL")
run_viewer g "$GURL" guestd_pids
R_g_pss=$((R_g_pss - pss0))

# ---- x11vnc + websockify -------------------------------------------------

if [ "$ANCHOR" -eq 1 ]; then
	VP=$(free_port)
	WP=$(free_port)
	[ "$(id -u)" -ne 0 ] || chown "$B_USER" "$B_T/home"
	mkfifo "$B_T/vout"
	"${AS_USER[@]}" x11vnc -display "$DPY" -auth "$XAUTH" -rfbport "$VP" \
	    -localhost -xdamage -forever -shared -nopw -norc \
	    >"$B_T/vout" 2>"$B_T/x11vnc.log" &
	B_PID[x11vnc]=$!
	exec 6<"$B_T/vout"
	# x11vnc prints PORT=N once it listens.
	while read -r -t 30 line <&6; do
		case "$line" in PORT=*) break ;; esac
	done
	[ "${line#PORT=}" = "$VP" ] || b_die "x11vnc did not listen: $line"
	"${AS_USER[@]}" websockify "127.0.0.1:$WP" "127.0.0.1:$VP" \
	    >"$B_T/websockify.log" 2>&1 &
	B_PID[websockify]=$!
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$WP") 2>/dev/null && break
		sleep 0.1	# readiness of a foreign daemon with no signal
	done
	# x11vnc, websockify and websockify's per-connection child; not the
	# shells and setpriv that started them.
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
	XURL="ws://127.0.0.1:$WP/"
	echo "x11vnc+websockify: the same" >&2
	C_x=$(connect_median "$XURL")
	run_viewer x "$XURL" x_pids
fi
echo quit >&7

# ---- report --------------------------------------------------------------

pct() {	# ticks us
	awk -v t="$1" -v hz="$HZ" -v us="$2" \
	    'BEGIN { printf "%.2f", t / hz / (us / 1e6) * 100 }'
}
per_s() {	# n us
	awk -v n="$1" -v us="$2" 'BEGIN { printf "%.1f", n / (us / 1e6) }'
}
row() {	# label guestd x11vnc [target note]
	local r=""
	[ "$ANCHOR" -eq 0 ] || r=$(b_ratio "$2" "$3")
	printf '  %-30s %12s %12s %8s  %s\n' "$1" "$2" "${3:--}" "${r:--}" \
	    "${4:-}"
}
side() {	# name phase key -> value
	local v="R_$1_$2"
	kv "$3" "${!v:-}"
}
ms_per_update() {	# name phase
	local t="R_$1_$2_ticks" seen
	seen=$(side "$1" "$2" seen)
	awk -v t="${!t}" -v hz="$HZ" -v n="$seen" \
	    'BEGIN { if (n > 0) printf "%.3f", t / hz * 1000 / n; else print "nan" }'
}
x() {	# value for the x11vnc column, or empty
	[ "$ANCHOR" -eq 1 ] && "$@" || true
}

printf '\nscreen gateway: guestd vs x11vnc -xdamage + websockify, 1280x800, region 320x240, Raw\n'
printf '  %-30s %12s %12s %8s  %s\n' "" guestd x11vnc+ws ratio target
row "connect -> first RFB byte ms" "$(awk -v v="$C_g" 'BEGIN{printf "%.2f", v/1000}')" \
    "$(x awk -v v="${C_x:-0}" 'BEGIN{printf "%.2f", v/1000}')" "<= 5 ms"
row "idle CPU, 1 viewer, %" "$(pct "$R_g_idle_ticks" "$R_g_idle_us")" \
    "$(x pct "${R_x_idle_ticks:-0}" "${R_x_idle_us:-1}")" "< 0.1 %"
row "idle updates sent" "$(side g idle updates)" "$(x side x idle updates)"
for f in 30 60; do
	p="p$f"
	for who in g x; do
		[ "$who" = g ] || [ "$ANCHOR" -eq 1 ] || continue
		v="R_${who}_${p}_us"
		printf -v "L_${who}" '%s' "$(awk -v v="$(side "$who" "$p" lat_median_us)" 'BEGIN{printf "%.2f", v/1000}')"
		printf -v "P_${who}" '%s' "$(awk -v v="$(side "$who" "$p" lat_p90_us)" 'BEGIN{printf "%.2f", v/1000}')"
		printf -v "U_${who}" '%s' "$(per_s "$(side "$who" "$p" seen)" "${!v}")"
		printf -v "B_${who}" '%s' "$(awk -v b="$(side "$who" "$p" bytes)" -v us="${!v}" 'BEGIN{printf "%.2f", b/(us/1e6)/1048576}')"
		t="R_${who}_${p}_ticks"
		printf -v "C_${who}_p" '%s' "$(pct "${!t}" "${!v}")"
		printf -v "M_${who}" '%s' "$(ms_per_update "$who" "$p")"
	done
	printf '  -- %d fps (%s paints, %s seen by guestd'"'"'s viewer%s)\n' "$f" \
	    "$(side g "$p" paints)" "$(side g "$p" seen)" \
	    "$(x printf ', %s by x11vnc'"'"'s' "$(side x "$p" seen)")"
	row "latency median ms" "$L_g" "${L_x:-}" "<= 1/3"
	row "latency p90 ms" "$P_g" "${P_x:-}"
	row "updates/s delivered" "$U_g" "${U_x:-}"
	row "MiB/s to the viewer" "$B_g" "${B_x:-}"
	row "CPU % of one core" "$C_g_p" "${C_x_p:-}"
	row "CPU ms per delivered update" "$M_g" "${M_x:-}" "<= 1/3"
done
row "PSS added per display MiB" "$(awk -v k="$R_g_pss" 'BEGIN{printf "%.1f", k/1024}')" \
    "$(x awk -v k="${R_x_pss:-0}" 'BEGIN{printf "%.1f", k/1024}')" "<= 1/10"
printf '  (ratio = guestd / x11vnc+websockify; CPU from %d Hz clock ticks)\n' "$HZ"

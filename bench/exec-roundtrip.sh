#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Exec round trip: what does running `true` through guestd cost, compared
# with spawning `bash -c true` locally?  BENCH_N (default 1000) of each,
# after a short warm-up:
#
#   one connection: N sequential exec requests of `true` on one control
#     connection, as a controller holds it; each is sent after the previous
#     reply arrived.  Measured by bench/exec-rtt (`make benchmarks` builds it),
#     which times every call and also N local `bash -c true` spawns and
#     prints medians and the ratio.  Without it, the test suite's raw client
#     wsprobe runs the same requests and the mean is reported.
#   CLI per call:   N x `rakazoctl guest exec -- true`, each a new process,
#     connection, authentication and hello.  Median.
#   local:          N x `bash -c true` from this script.  Median and mean.
#
# guestd's exec is itself `bash -c COMMAND`, so "one connection / local" is
# the overhead of the control channel, the bookkeeping and the reply on top
# of bash's own start.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

N=${BENCH_N:-1000}
WARM=20
WS="$B_T/ws"
b_mkdir "$WS"
b_start_guestd a "$WS"

# -- one connection -------------------------------------------------------
EXEC_RTT=${EXEC_RTT:-$B_BUILD/bench/exec-rtt}
WSPROBE=${WSPROBE:-$B_BUILD/tests/integration/wsprobe}
if [ -f "$B_BUILD/Makefile" ]; then
	[ -x "$EXEC_RTT" ] ||
	    make -s -C "$B_BUILD" bench/exec-rtt >/dev/null 2>&1 || true
	[ -x "$WSPROBE" ] ||
	    make -s -C "$B_BUILD" tests/integration/wsprobe >/dev/null 2>&1 || true
fi
conn_mean=""
if [ -x "$EXEC_RTT" ]; then
	echo "exec round trip on one connection (bench/exec-rtt, N=$N):"
	"$EXEC_RTT" "${B_URL[a]}" "$B_SECRET" "$N" | sed 's/^/  /'
elif [ -x "$WSPROBE" ]; then
	# probe_script FIRST_ID COUNT
	probe_script() {
		local i
		for ((i = $1; i < $1 + $2; i++)); do
			printf 'text {"id":%d,"op":"exec","args":{"command":"true"}}\nexpect "ok"\n' "$i"
		done
	}
	probe_script 2 "$WARM" > "$B_T/warm.script"
	probe_script 2 "$N" > "$B_T/bench.script"
	"$WSPROBE" --url "${B_URL[a]}" --secret-file "$B_SECRET" --hello \
	    < "$B_T/warm.script" > /dev/null
	t0=${EPOCHREALTIME/./}
	"$WSPROBE" --url "${B_URL[a]}" --secret-file "$B_SECRET" --hello \
	    < "$B_T/bench.script" > "$B_T/bench.out"
	t1=${EPOCHREALTIME/./}
	ok=$(grep -c '"ok":true.*"exit_code":0' "$B_T/bench.out" || true)
	[ "$ok" -eq "$N" ] || b_die "one connection: $ok of $N execs succeeded"
	conn_mean=$(awk -v t=$((t1 - t0)) -v n="$N" 'BEGIN { printf "%.1f", t / n }')
else
	echo "bench: neither bench/exec-rtt nor wsprobe is built (make benchmarks); skipping the one-connection run" >&2
fi

# -- CLI per call ---------------------------------------------------------
cli=()
for ((i = 0; i < WARM; i++)); do
	b_rk a exec -- true
done
for ((i = 0; i < N; i++)); do
	t0=${EPOCHREALTIME/./}
	b_rk a exec -- true
	t1=${EPOCHREALTIME/./}
	cli+=($((t1 - t0)))
done
cli_median=$(printf '%s\n' "${cli[@]}" | b_median)

# -- local ----------------------------------------------------------------
loc=()
for ((i = 0; i < WARM; i++)); do
	bash -c true
done
for ((i = 0; i < N; i++)); do
	t0=${EPOCHREALTIME/./}
	bash -c true
	t1=${EPOCHREALTIME/./}
	loc+=($((t1 - t0)))
done
loc_median=$(printf '%s\n' "${loc[@]}" | b_median)
loc_mean=$(printf '%s\n' "${loc[@]}" | b_mean)

printf '\nexec round trip of "true", N=%d (microseconds per call)\n' "$N"
if [ -n "$conn_mean" ]; then
	printf '  guestd, one connection (mean)   %9.1f\n' "$conn_mean"
fi
printf '  rakazoctl CLI per call (median) %9.1f\n' "$cli_median"
printf '  local bash -c true (median)     %9.1f\n' "$loc_median"
printf '  local bash -c true (mean)       %9.1f\n' "$loc_mean"
if [ -n "$conn_mean" ]; then
	printf '  ratio one connection / local (means)   %6.2f\n' \
	    "$(b_ratio "$conn_mean" "$loc_mean")"
fi
printf '  ratio CLI per call / local (medians)   %6.2f\n' \
    "$(b_ratio "$cli_median" "$loc_median")"

# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Shared helpers for the benchmarks (sourced by bench/*.sh; bash).  Like
# tests/lib.sh: a private temp dir, guestd on ephemeral loopback ports with
# a fresh secret, readiness through a FIFO, everything removed on exit.  As
# root, guestd and the baselines run as an unprivileged user (nobody, or
# BENCH_USER) so both sides pay the same costs.
#
# Binaries: $GUESTD and $RAKAZOCTL, else the first of build/, build-gcc/
# below the source tree that has them.

set -u

BENCH_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

b_die() {
	echo "bench: $*" >&2
	exit 1
}

b_find_bins() {
	local d
	for d in build build-gcc .; do
		if [ -z "${GUESTD:-}" ] && [ -x "$BENCH_TOP/$d/guestd/guestd" ]; then
			GUESTD="$BENCH_TOP/$d/guestd/guestd"
			RAKAZOCTL="$BENCH_TOP/$d/controller/rakazoctl"
			B_BUILD="$BENCH_TOP/$d"
		fi
	done
	if [ -z "${GUESTD:-}" ] || [ ! -x "$GUESTD" ]; then
		b_die "no guestd: build first (./packaging/demo.sh or make) or set GUESTD"
	fi
	if [ -z "${RAKAZOCTL:-}" ] || [ ! -x "$RAKAZOCTL" ]; then
		b_die "no rakazoctl: build first or set RAKAZOCTL"
	fi
	: "${B_BUILD:=$(dirname "$(dirname "$GUESTD")")}"
}
b_find_bins

[ "${BASH_VERSINFO[0]}" -ge 5 ] || b_die "needs bash 5 (EPOCHREALTIME)"

B_T=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/rakazo-bench.XXXXXX")
chmod 755 "$B_T"
B_SECRET="$B_T/secret"
head -c 24 /dev/urandom | base64 | tr '+/' '-_' > "$B_SECRET"
chmod 600 "$B_SECRET"
declare -A B_PID=() B_URL=()

if [ "$(id -u)" -eq 0 ]; then
	B_USER=${BENCH_USER:-nobody}
else
	B_USER=$(id -un)
fi

b_cleanup() {
	local rc=$? n
	for n in "${!B_PID[@]}"; do
		kill "${B_PID[$n]}" 2>/dev/null || true
		wait "${B_PID[$n]}" 2>/dev/null || true
	done
	if [ "$rc" -ne 0 ]; then
		for n in "$B_T"/guestd-*.log; do
			[ -f "$n" ] || continue
			echo "---- $n (last 20 lines) ----" >&2
			tail -n 20 "$n" >&2
		done
	fi
	rm -rf "$B_T"
	exit "$rc"
}
trap b_cleanup EXIT
trap 'exit 1' INT TERM

# b_start_serve: rakazoctl serve with the local provider on a private data
# directory, and a started computer "bench".  Sets URL, TOK, DATA, GPORT
# (that computer's guestd, for the direct side of a comparison) and stops
# the guestds it started on exit.
b_start_serve() {
	DATA="$B_T/data"
	TOK="$B_T/api-token"
	head -c 24 /dev/urandom | base64 | tr '+/' '-_' > "$TOK"
	chmod 600 "$TOK"
	mkfifo "$B_T/ctl-ready"
	"$RAKAZOCTL" serve --listen 127.0.0.1:0 --data-dir "$DATA" \
	    --token-file "$TOK" --guestd "$GUESTD" \
	    --ready-file "$B_T/ctl-ready" --log-level warn \
	    >"$B_T/guestd-serve.log" 2>&1 &
	B_PID[serve]=$!
	exec 5<>"$B_T/ctl-ready"
	read -t 30 -r PORT <&5 || b_die "rakazoctl serve did not start"
	exec 5<&-
	URL="http://127.0.0.1:$PORT"
	curl -s -o /dev/null -H "Authorization: Bearer $(cat "$TOK")" \
	    --data-binary '{"id":"bench","start":true}' "$URL/v1/computers"
	GPORT=$(sed -n 's/.*event=guestd.listening.* port=\([0-9]*\).*/\1/p' \
	    "$DATA/computers/bench/guestd.log" | head -1)
	[ -n "$GPORT" ] || b_die "no guestd port"
	trap 'b_stop_serve_guestds; b_cleanup' EXIT
}

b_stop_serve_guestds() {
	local d
	for d in /proc/[0-9]*; do
		if { tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null |
		    grep -q -- "--workspace $DATA/computers/"; then
			kill "${d#/proc/}" 2>/dev/null
		fi
	done
}

# b_as_user CMD...: run a command as the benchmark user.
b_as_user() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u "$B_USER" -- "$@"
	else
		"$@"
	fi
}

# b_mkdir DIR...: directories owned by the benchmark user.
b_mkdir() {
	mkdir -p "$@"
	[ "$(id -u)" -ne 0 ] || chown "$B_USER" "$@"
}

# b_start_guestd NAME WORKSPACE [guestd args...]: start one guestd and wait
# until it listens; sets B_URL[NAME].  Its log is $B_T/guestd-NAME.log.
b_start_guestd() {
	local name=$1 ws=$2 fifo port watchdog
	shift 2
	local user_args=()
	[ "$(id -u)" -ne 0 ] || user_args=(--user "$B_USER")
	fifo="$B_T/ready-$name"
	rm -f "$fifo"
	mkfifo -m 600 "$fifo"
	# guestd writes it after dropping to the benchmark user.
	[ "$(id -u)" -ne 0 ] || chown "$B_USER" "$fifo"
	"$GUESTD" --listen 127.0.0.1:0 --secret-file "$B_SECRET" \
	    --workspace "$ws" --ready-file "$fifo" --log-level warn \
	    "${user_args[@]}" "$@" >"$B_T/guestd-$name.log" 2>&1 &
	B_PID[$name]=$!
	( while kill -0 "${B_PID[$name]}" 2>/dev/null; do sleep 0.2; done
	  : > "$fifo" ) 2>/dev/null &
	watchdog=$!
	read -r port < "$fifo" || port=""
	kill "$watchdog" 2>/dev/null || true
	wait "$watchdog" 2>/dev/null || true
	[ -n "$port" ] || b_die "guestd $name did not start"
	B_URL[$name]="ws://127.0.0.1:$port"
}

# b_rk NAME ARGS...: rakazoctl guest against guestd NAME.
b_rk() {
	local name=$1
	shift
	"$RAKAZOCTL" guest --url "${B_URL[$name]}" --secret-file "$B_SECRET" "$@"
}

# Time stamps in microseconds without forking: t=${EPOCHREALTIME/./}
# (the scripts run with LC_ALL=C so the separator is a dot).
export LC_ALL=C

# Median of the numbers on stdin (one per line).
b_median() {
	sort -n | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "nan"; exit }
		if (NR % 2) print v[(NR + 1) / 2];
		else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# b_ticks PID...: their CPU (utime + stime) summed, in clock ticks
# (getconf CLK_TCK a second).  The fields are read after the ")" that
# ends comm, which may hold spaces; a process gone meanwhile counts 0.
b_ticks() {
	local p s t=0
	for p in "$@"; do
		s=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null |
		    awk '{ print $12 + $13 }')
		[ -z "$s" ] || t=$((t + s))
	done
	echo "$t"
}

# Mean of the numbers on stdin.
b_mean() {
	awk '{ s += $1 } END { if (NR) printf "%.1f\n", s / NR; else print "nan" }'
}

# b_ratio A B: A / B with two decimals.
b_ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f\n", a / b;
		else print "nan" }'
}

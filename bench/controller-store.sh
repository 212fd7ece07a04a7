#!/bin/bash
# SPDX-License-Identifier: MIT
# The state store's cost (issue 17, item 5): SQLite against PostgreSQL in
# the same run.  For each backend, two `rakazoctl serve` processes on one
# store (local provider, real guestd, one started computer) and at once:
#   - lease acquire+release pairs, one client per process, each on its
#     own bot (pairs/s of both together, and of each);
#   - tool-call overhead: ctl-rtt's overhead run (unchanged
#     computer_observe and shell `true` through the controller against
#     the same calls sent straight to guestd), one client per process.
# PostgreSQL is a throwaway cluster on loopback (tests/lib-postgres.sh),
# fsync off as in the tests: what is measured is the controller's path,
# not a disk.  The timer is bench/ctl-rtt (make benchmarks).  Needs Xvfb
# and the PostgreSQL server (Debian postgresql).
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/lib-postgres.sh
. "$BENCH_TOP/tests/lib-postgres.sh"

N=${BENCH_N:-300}
LEASES=${BENCH_LEASES:-500}
CTLRTT=${CTLRTT:-$B_BUILD/bench/ctl-rtt}
[ -x "$CTLRTT" ] || b_die "no $CTLRTT: run make benchmarks"
command -v Xvfb >/dev/null || b_die "needs Xvfb"
pg_available || b_die "needs the PostgreSQL server (apt-get install postgresql)"

TOK="$B_T/api-token"
head -c 24 /dev/urandom | base64 | tr '+/' '-_' > "$TOK"
chmod 600 "$TOK"
trap 'bs_stop_guestds; pg_stop; b_cleanup' EXIT

bs_stop_guestds() {
	local d
	for d in /proc/[0-9]*; do
		if { tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null |
		    grep -q -- "--workspace $B_T/data-"; then
			kill "${d#/proc/}" 2>/dev/null
		fi
	done
}

# bs_serve NAME DATA STORE: one rakazoctl serve; sets B_URL[NAME].
bs_serve() {
	local name=$1 data=$2 store=$3 port
	mkfifo "$B_T/ready-$name"
	DATABASE_URL=$store "$RAKAZOCTL" serve --listen 127.0.0.1:0 \
	    --data-dir "$data" --token-file "$TOK" --guestd "$GUESTD" \
	    --ready-file "$B_T/ready-$name" --log-level warn \
	    >"$B_T/guestd-serve-$name.log" 2>&1 &
	B_PID[$name]=$!
	exec 5<>"$B_T/ready-$name"
	read -t 30 -r port <&5 || b_die "rakazoctl serve $name did not start"
	exec 5<&-
	B_URL[$name]="http://127.0.0.1:$port"
}

# bs_run BACKEND STORE: both processes, the computer, the two runs.
bs_run() {
	local be=$1 store=$2 data="$B_T/data-$1" a b gport t0 t1
	bs_serve "$be-a" "$data" "$store"
	bs_serve "$be-b" "$data" "$store"
	a=${B_URL[$be-a]}
	b=${B_URL[$be-b]}
	curl -s -o /dev/null -H "Authorization: Bearer $(cat "$TOK")" \
	    --data-binary '{"id":"bench","start":true}' "$a/v1/computers"
	gport=$(sed -n 's/.*event=guestd.listening.* port=\([0-9]*\).*/\1/p' \
	    "$data/computers/bench/guestd.log" | head -1)
	[ -n "$gport" ] || b_die "no guestd port ($be)"

	echo "== $be: lease acquire+release, two processes at once ($LEASES pairs each)"
	t0=${EPOCHREALTIME/./}
	"$CTLRTT" lease "$a" "$TOK" bench lb1 "$LEASES" > "$B_T/$be.l1" &
	local p1=$!
	"$CTLRTT" lease "$b" "$TOK" bench lb2 "$LEASES" > "$B_T/$be.l2" &
	local p2=$!
	wait "$p1" && wait "$p2" || b_die "lease run failed ($be)"
	t1=${EPOCHREALTIME/./}
	sed 's/^/  /' "$B_T/$be.l1" "$B_T/$be.l2"
	awk -v n=$((2 * LEASES)) -v us=$((t1 - t0)) -v be="$be" 'BEGIN {
		printf "  %s both: %d pairs in %.3fs (%.0f pairs/s)\n", be,
		    n, us / 1e6, n / (us / 1e6) }' | tee "$B_T/$be.both"

	echo "== $be: tool-call overhead, one client per process at once (N=$N)"
	"$CTLRTT" overhead "$a" "$TOK" "ws://127.0.0.1:$gport" \
	    "$data/computers/bench/secret" bench "$N" ob1 > "$B_T/$be.oa" &
	p1=$!
	"$CTLRTT" overhead "$b" "$TOK" "ws://127.0.0.1:$gport" \
	    "$data/computers/bench/secret" bench "$N" ob2 > "$B_T/$be.ob" &
	p2=$!
	wait "$p1" && wait "$p2" || b_die "overhead run failed ($be)"
	sed 's/^/  A: /' "$B_T/$be.oa"
	sed 's/^/  B: /' "$B_T/$be.ob"
}

pg_start || b_die "the PostgreSQL cluster did not start"
bs_run sqlite ""
bs_run postgres "$PG_URL"

# The medians side by side: "what n=.. median=..us" lines of ctl-rtt.
med() {	# FILE PATTERN
	grep -- "$2" "$1" | head -1 | sed -n 's/.*median=\([0-9.]*\)us.*/\1/p'
}
echo "== summary (medians of process A's client; lease: both processes)"
for what in "controller computer_observe" "controller shell"; do
	s=$(med "$B_T/sqlite.oa" "$what")
	p=$(med "$B_T/postgres.oa" "$what")
	printf '%-28s sqlite %8sus  postgres %8sus  ratio %s\n' "$what" \
	    "${s:-?}" "${p:-?}" "$(b_ratio "${p:-0}" "${s:-0}")"
done
s=$(sed -n 's/.*(\([0-9]*\) pairs\/s).*/\1/p' "$B_T/sqlite.both")
p=$(sed -n 's/.*(\([0-9]*\) pairs\/s).*/\1/p' "$B_T/postgres.both")
printf '%-28s sqlite %8s/s   postgres %8s/s   ratio %s\n' "lease pairs" \
    "$s" "$p" "$(b_ratio "$p" "$s")"

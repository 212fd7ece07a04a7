#!/bin/bash
# SPDX-License-Identifier: MIT
# The controller's cost (issue 5, item 12): rakazoctl serve with the local
# provider and real guestd, and in the same run the same operations sent
# straight to that computer's guestd over one control connection:
#   - unchanged observe: computer_observe vs display.observe, since_frame;
#   - shell `true` vs exec `true`;
#   - lease acquire+release pairs from two processes at once;
#   - 20 bots acting at once (computer_act move, 20 parallel clients).
# The timer is bench/ctl-rtt (make benchmarks).  Needs Xvfb.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

N=${BENCH_N:-500}
LEASES=${BENCH_LEASES:-500}
BOTS=${BENCH_BOTS:-20}
ACTS=${BENCH_ACTS:-50}
CTLRTT=${CTLRTT:-$B_BUILD/bench/ctl-rtt}
[ -x "$CTLRTT" ] || b_die "no $CTLRTT: run make benchmarks"
command -v Xvfb >/dev/null || b_die "needs Xvfb"

b_start_serve

echo "== per-call overhead (N=$N, one connection each side)"
"$CTLRTT" overhead "$URL" "$TOK" "ws://127.0.0.1:$GPORT" \
    "$DATA/computers/bench/secret" bench "$N" || b_die "overhead run failed"

echo "== lease acquire+release, two processes at once ($LEASES pairs each)"
t0=${EPOCHREALTIME/./}
"$CTLRTT" lease "$URL" "$TOK" bench lb1 "$LEASES" > "$B_T/l1" &
p1=$!
"$CTLRTT" lease "$URL" "$TOK" bench lb2 "$LEASES" > "$B_T/l2" &
p2=$!
wait "$p1" && wait "$p2" || b_die "lease run failed"
t1=${EPOCHREALTIME/./}
cat "$B_T/l1" "$B_T/l2"
awk -v n=$((2 * LEASES)) -v us=$((t1 - t0)) 'BEGIN {
	printf "both: %d pairs in %.3fs (%.0f pairs/s)\n", n, us / 1e6,
	    n / (us / 1e6) }'
"$CTLRTT" lease "$URL" "$TOK" bench lb3 "$LEASES" > "$B_T/l3" ||
    b_die "lease run failed"
printf 'one process alone: '
cat "$B_T/l3"

echo "== $BOTS bots acting at once ($ACTS moves each)"
"$CTLRTT" act "$URL" "$TOK" bench "$BOTS" "$ACTS" || b_die "act run failed"

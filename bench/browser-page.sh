#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Page tools against playwright-core on the same browser, in one run.
#
#   guestd:   bench/page-rtt on one control connection: BENCH_N (30)
#             page.snapshot and BENCH_N page.act clicks on a fixture page of
#             1000 buttons (served on loopback by
#             tests/fixtures/browser-fixture.py).
#   baseline: playwright-core connected over CDP to the same bot browser,
#             same tab: BENCH_N locator('body').ariaSnapshot() and BENCH_N
#             page.click() on the same button.
#   also:     browser.open to ready (a tab exists) and to the fixture's
#             first snapshot, for a fresh profile; memory of the idle bot
#             browser (RSS and PSS summed over its process group).
#
# Prints medians and the ratios baseline / guestd.  Needs Chromium, Xvfb,
# python3, node and the npm packages of tests/browser (npm ci there).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

N=${BENCH_N:-30}
PW_DIR="$BENCH_TOP/tests/browser"
[ -d "$PW_DIR/node_modules/playwright-core" ] ||
    b_die "no playwright-core: (cd tests/browser && npm ci)"
command -v "${GUESTD_BROWSER:-chromium}" >/dev/null || b_die "no chromium"
[ -x "$B_BUILD/bench/page-rtt" ] ||
    b_die "no bench/page-rtt: make bench/page-rtt"
export GUESTD_DISPLAY_FIRST=${GUESTD_DISPLAY_FIRST:-$((100 + $$ % 800))}
export GUESTD_CDP_BASE=${GUESTD_CDP_BASE:-$((30000 + $$ % 20000))}

b_mkdir "$B_T/ws"
b_start_guestd g "$B_T/ws"
mkfifo "$B_T/site.port"
python3 "$BENCH_TOP/tests/fixtures/browser-fixture.py" site \
    "$B_T/site.port" "$B_T/site.log" &
B_PID[site]=$!
read -r sport < "$B_T/site.port"
SITE="http://127.0.0.1:$sport"

t0=${EPOCHREALTIME/./}
out=$(b_rk g call browser.open '{"bot":"bench"}')
t1=${EPOCHREALTIME/./}
b_rk g call page.navigate "{\"bot\":\"bench\",\"url\":\"$SITE/many\"}" >/dev/null
b_rk g call page.snapshot '{"bot":"bench"}' >/dev/null
t2=${EPOCHREALTIME/./}
cdp=$(printf '%s' "$out" | sed -n 's/.*"port":\([0-9]*\).*/\1/p')
pid=$(printf '%s' "$out" | sed -n 's/.*"pid":\([0-9]*\).*/\1/p')

g=$("$B_BUILD/bench/page-rtt" "${B_URL[g]}" "$B_SECRET" bench "$N" |
    tee /dev/stderr | tail -1)
p=$(PW_REQUIRE_FROM="$PW_DIR/package.json" node \
    "$BENCH_TOP/bench/page-playwright.mjs" "$cdp" "$SITE/many" "$N")

# Idle: the fixture page loaded, nothing happening; let it settle.
sleep 3
rss=0
pss=0
for p2 in $(ps -e -o pid=,pgid= | awk -v g="$pid" '$2 == g { print $1 }'); do
	r=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p2/status" 2>/dev/null || echo 0)
	s=$(awk '/^Pss:/ { print $2 }' "/proc/$p2/smaps_rollup" 2>/dev/null ||
	    echo 0)
	rss=$((rss + ${r:-0}))
	pss=$((pss + ${s:-0}))
done

gs=$(printf '%s' "$g" | sed -n 's/.*"snapshot_us":\([0-9]*\).*/\1/p')
ga=$(printf '%s' "$g" | sed -n 's/.*"act_us":\([0-9]*\).*/\1/p')
ps_=$(printf '%s' "$p" | sed -n 's/.*"snapshot_us":\([0-9]*\).*/\1/p')
pa=$(printf '%s' "$p" | sed -n 's/.*"act_us":\([0-9]*\).*/\1/p')
echo "fixture: 1000 buttons; N=$N"
printf 'snapshot  guestd %6.1f ms   playwright ariaSnapshot %6.1f ms   ratio %s\n' \
    "$(awk -v v="$gs" 'BEGIN { print v / 1000 }')" "$(awk -v v="$ps_" 'BEGIN { print v / 1000 }')" \
    "$(b_ratio "$ps_" "$gs")"
printf 'click     guestd %6.1f ms   playwright click        %6.1f ms   ratio %s\n' \
    "$(awk -v v="$ga" 'BEGIN { print v / 1000 }')" "$(awk -v v="$pa" 'BEGIN { print v / 1000 }')" \
    "$(b_ratio "$pa" "$ga")"
printf 'browser.open -> ready %d ms; -> first snapshot of the fixture %d ms\n' \
    $(((t1 - t0) / 1000)) $(((t2 - t0) / 1000))
printf 'idle bot browser: RSS %d MiB (sum over its processes), PSS %d MiB\n' \
    $((rss / 1024)) $((pss / 1024))
b_rk g call browser.close '{"bot":"bench"}' >/dev/null

#!/bin/bash
# SPDX-License-Identifier: MIT
# File transfer through the controller: `rakazoctl put` + `get` of one
# BENCH_MB MiB (default 256) random file via rakazoctl serve (PUT/GET
# /v1/computers/{id}/files, local provider, real guestd), against the same
# file sent straight to that computer's guestd (`rakazoctl guest put/get`)
# and against `cp` in and out of the workspace.  BENCH_REPS (default 3)
# interleaved timed rounds after one untimed warm-up; every controller
# round trip is checked byte for byte.  Prints the medians, MiB/s and the
# ratios, and serve's peak resident memory.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

MB=${BENCH_MB:-256}
REPS=${BENCH_REPS:-3}

b_start_serve
HOME_WS="$DATA/computers/bench/home"

ctl() {
	RAKAZO_URL="$URL" RAKAZO_API_TOKEN_FILE="$TOK" "$RAKAZOCTL" "$@"
}
guest() {
	"$RAKAZOCTL" guest --url "ws://127.0.0.1:$GPORT" \
	    --secret-file "$DATA/computers/bench/secret" "$@"
}

head -c $((MB * 1024 * 1024)) /dev/urandom > "$B_T/src"
sum=$(sha256sum < "$B_T/src")

# Run "$@"; its elapsed microseconds in $LAST.
timed() {
	local t0 t1
	t0=${EPOCHREALTIME/./}
	"$@" >/dev/null || b_die "failed: $*"
	t1=${EPOCHREALTIME/./}
	LAST=$((t1 - t0))
}

declare -A T=()
add() { T[$1]="${T[$1]:-} $2"; }

for i in $(seq 0 "$REPS"); do
	rm -f "$B_T/back"
	timed ctl put --computer bench --bot b "$B_T/src" c.bin
	put=$LAST
	timed ctl get --computer bench --bot b c.bin "$B_T/back"
	get=$LAST
	[ "$(sha256sum < "$B_T/back")" = "$sum" ] || b_die "round trip differs"
	[ "$i" -eq 0 ] || { add ctl_put "$put"; add ctl_get "$get"; }
	timed guest put "$B_T/src" g.bin
	put=$LAST
	timed guest get g.bin "$B_T/back"
	get=$LAST
	[ "$i" -eq 0 ] || { add guest_put "$put"; add guest_get "$get"; }
	timed cp "$B_T/src" "$HOME_WS/p.bin"
	put=$LAST
	timed cp "$HOME_WS/p.bin" "$B_T/back"
	get=$LAST
	[ "$i" -eq 0 ] || { add cp_put "$put"; add cp_get "$get"; }
done

median() {
	tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -n |
	    awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

echo "== $MB MiB, median of $REPS (put = into the workspace, get = out)"
declare -A M=()
for k in ctl_put ctl_get guest_put guest_get cp_put cp_get; do
	M[$k]=$(median "${T[$k]}")
	awk -v k="$k" -v us="${M[$k]}" -v mb="$MB" 'BEGIN {
		printf "%-10s %8.3f s %8.1f MiB/s\n", k, us / 1e6,
		    mb / (us / 1e6) }'
done
awk -v cp="${M[ctl_put]}" -v cg="${M[ctl_get]}" -v gp="${M[guest_put]}" \
    -v gg="${M[guest_get]}" -v pp="${M[cp_put]}" -v pg="${M[cp_get]}" \
    'BEGIN {
	printf "controller/guest: put %.2fx, get %.2fx\n", cp / gp, cg / gg
	printf "controller/cp:    put %.2fx, get %.2fx\n", cp / pp, cg / pg
}'
echo "serve peak memory: $(awk '/^VmHWM:/ {print $2, $3}' \
    "/proc/${B_PID[serve]}/status")"

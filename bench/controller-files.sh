#!/bin/bash
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

DATA="$B_T/data"
TOK="$B_T/api-token"
head -c 24 /dev/urandom | base64 | tr '+/' '-_' > "$TOK"
chmod 600 "$TOK"
mkfifo "$B_T/ctl-ready"
"$RAKAZOCTL" serve --listen 127.0.0.1:0 --data-dir "$DATA" \
    --token-file "$TOK" --guestd "$GUESTD" --ready-file "$B_T/ctl-ready" \
    --log-level warn >"$B_T/serve.log" 2>&1 &
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
HOME_WS="$DATA/computers/bench/home"
stop_guestds() {
	local d
	for d in /proc/[0-9]*; do
		if { tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null |
		    grep -q -- "--workspace $DATA/computers/"; then
			kill "${d#/proc/}" 2>/dev/null
		fi
	done
}
trap 'stop_guestds; b_cleanup' EXIT

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

#!/bin/bash
# SPDX-License-Identifier: MIT
# Computers as containers (issue 15, item 6): rakazoctl serve with the
# docker provider against a real Docker engine, and in the same run the
# engine's own floor:
#   - cold start: a new computer's first computer_observe (create the
#     container, start it, guestd ready, a desktop, the first screenshot),
#     and its first shell `true` (to guestd ready), against `docker run
#     --rm IMAGE true` (with /bin/true as the entrypoint: the image's is
#     guestd);
#   - warm start: the next call after `docker stop` of its container (the
#     provider starts the stopped container again and waits for guestd);
#   - memory (cgroup memory.current) of one idle computer (guestd, no
#     desktop) and with one open desktop, against a container of the same
#     image running `sleep` (the runtime's and the image's own), and the
#     containerd shim's RSS beside it.
# Medians of BENCH_N (10).  The engine is DOCKER_HOST's, or a private one
# through tests/lib-docker.sh (as root); the image is RAKAZO_BENCH_IMAGE, or
# the one tests/lib-docker.sh builds from this tree.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

N=${BENCH_N:-10}
command -v docker >/dev/null || b_die "needs the docker CLI"
command -v jq >/dev/null || b_die "needs jq"
if [ -f "$BENCH_TOP/tests/lib-docker.sh" ]; then
	# shellcheck source=/dev/null
	. "$BENCH_TOP/tests/lib-docker.sh"
	docker_up || b_die "no Docker engine: ${DOCKER_WHY:-}"
	trap 'b_bench_down; b_cleanup' EXIT
fi
b_bench_down() {
	[ -z "${INST:-}" ] || docker ps -aq --filter \
	    "label=rakazo.instance=$INST" | xargs -r docker rm -f >/dev/null
	[ -z "${B_PID[serve]:-}" ] || kill "${B_PID[serve]}" 2>/dev/null
	docker rm -f "rakazo-bench-sleep-$$" >/dev/null 2>&1
	command -v docker_down >/dev/null && docker_down
	true
}
IMAGE=${RAKAZO_BENCH_IMAGE:-}
if [ -z "$IMAGE" ]; then
	command -v docker_image >/dev/null || b_die "set RAKAZO_BENCH_IMAGE"
	IMAGE=$(docker_image 2>"$B_T/build.log") ||
	    b_die "image build: $(tail -n 20 "$B_T/build.log")"
fi
echo "image $IMAGE ($(docker image inspect -f '{{.Size}}' "$IMAGE" |
    awk '{ printf "%.0f MB", $1 / 1e6 }'))"

DATA="$B_T/data"
TOK="$B_T/api-token"
head -c 24 /dev/urandom | base64 | tr '+/' '-_' > "$TOK"
chmod 600 "$TOK"
mkfifo "$B_T/ctl-ready"
"$RAKAZOCTL" serve --listen 127.0.0.1:0 --data-dir "$DATA" \
    --token-file "$TOK" --provider docker --image "${IMAGE%:*}" \
    --image-tag "${IMAGE##*:}" --idle-ms 0 --reconcile-ms 3600000 \
    --ready-file "$B_T/ctl-ready" --log-level warn \
    >"$B_T/guestd-serve.log" 2>&1 &
B_PID[serve]=$!
exec 5<>"$B_T/ctl-ready"
read -t 30 -r PORT <&5 || b_die "rakazoctl serve did not start"
exec 5<&-
URL="http://127.0.0.1:$PORT"

api() { # METHOD PATH [JSON]
	curl -s -f -X "$1" -H "Authorization: Bearer $(cat "$TOK")" \
	    ${3+--data-binary "$3"} "$URL$2"
}
ms_since() { # T0 (EPOCHREALTIME without the dot): ms since, 1 decimal
	local t1=${EPOCHREALTIME/./}
	awk -v d=$((t1 - $1)) 'BEGIN { printf "%.1f\n", d / 1000 }'
}
cgroup_mem() { # CONTAINER: its cgroup's memory.current, bytes
	local id
	id=$(docker inspect -f '{{.Id}}' "$1")
	cat /sys/fs/cgroup/system.slice/docker-"$id".scope/memory.current \
	    2>/dev/null ||
	    cat /sys/fs/cgroup/docker/"$id"/memory.current 2>/dev/null ||
	    docker stats --no-stream --format '{{.MemUsage}}' "$1" |
	    awk '{ v = $1; m = 1; if (v ~ /MiB/) m = 1048576;
		if (v ~ /GiB/) m = 1073741824; if (v ~ /KiB/) m = 1024;
		sub(/[A-Za-z]+/, "", v); printf "%.0f\n", v * m }'
}
shim_rss() { # CONTAINER: the RSS (KiB) of the containerd shim that runs it
	local pid
	pid=$(docker inspect -f '{{.State.Pid}}' "$1")
	pid=$(awk '{ print $4 }' "/proc/$pid/stat")
	awk '/^VmRSS/ { print $2 }' "/proc/$pid/status"
}
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }

echo "== docker run --rm --entrypoint /bin/true IMAGE (N=$N)"
for i in $(seq "$N"); do
	t0=${EPOCHREALTIME/./}
	docker run --rm --entrypoint /bin/true "$IMAGE" >/dev/null ||
	    b_die "docker run failed"
	ms_since "$t0"
done > "$B_T/bare"
bare=$(b_median < "$B_T/bare")
echo "median ${bare} ms"

echo "== cold start: create, start, guestd ready, desktop, first screenshot (N=$N)"
for i in $(seq "$N"); do
	api POST /v1/computers "{\"id\":\"c$i\"}" >/dev/null ||
	    b_die "create c$i"
	t0=${EPOCHREALTIME/./}
	api POST /v1/tools/computer_observe \
	    "{\"computer\":\"c$i\",\"bot\":\"b\"}" >"$B_T/obs" ||
	    b_die "observe c$i"
	ms_since "$t0"
	[ "$(jq -r '.image | length > 0' "$B_T/obs")" = true ] ||
	    b_die "no screenshot"
	[ -n "${INST:-}" ] || INST=$(docker inspect -f \
	    '{{index .Config.Labels "rakazo.instance"}}' \
	    "$(docker ps -q --filter label=rakazo.computer=c1)")
	[ "$i" -eq 1 ] || api DELETE "/v1/computers/c$i" '{"force":true}' >/dev/null
done > "$B_T/cold"
cold=$(b_median < "$B_T/cold")
echo "median ${cold} ms ($(b_ratio "$cold" "$bare") x docker run; goal <= 1.5 x)"

echo "== cold start to guestd ready: a new computer's first shell true (N=$N)"
for i in $(seq "$N"); do
	api POST /v1/computers "{\"id\":\"r$i\"}" >/dev/null ||
	    b_die "create r$i"
	t0=${EPOCHREALTIME/./}
	api POST /v1/tools/shell \
	    "{\"computer\":\"r$i\",\"bot\":\"b\",\"command\":\"true\"}" \
	    >/dev/null || b_die "shell r$i"
	ms_since "$t0"
	api DELETE "/v1/computers/r$i" '{"force":true}' >/dev/null
done > "$B_T/ready"
ready=$(b_median < "$B_T/ready")
echo "median ${ready} ms ($(b_ratio "$ready" "$bare") x docker run)"

echo "== warm start: the next call after docker stop (N=$N)"
C=$(docker ps -q --filter label=rakazo.computer=c1)
for i in $(seq "$N"); do
	docker stop -t 5 "$C" >/dev/null || b_die "docker stop"
	t0=${EPOCHREALTIME/./}
	api POST /v1/tools/shell '{"computer":"c1","bot":"b","command":"true"}' \
	    >/dev/null || b_die "shell after stop"
	ms_since "$t0"
done > "$B_T/warm"
warm=$(b_median < "$B_T/warm")
echo "median ${warm} ms ($(b_ratio "$warm" "$bare") x docker run)"

echo "== memory (cgroup memory.current)"
docker run -d --name "rakazo-bench-sleep-$$" --network none \
    --entrypoint /usr/bin/tini "$IMAGE" -- sleep 3600 >/dev/null ||
    b_die "baseline container"
api POST /v1/computers '{"id":"idle"}' >/dev/null
api POST /v1/tools/shell '{"computer":"idle","bot":"b","command":"true"}' \
    >/dev/null || b_die "idle computer"
I=$(docker ps -q --filter label=rakazo.computer=idle)
base=$(cgroup_mem "rakazo-bench-sleep-$$")
idle=$(cgroup_mem "$I")
api POST /v1/tools/computer_observe '{"computer":"idle","bot":"b"}' \
    >/dev/null || b_die "desktop"
desk=$(cgroup_mem "$I")
echo "baseline container (tini + sleep): $(mib "$base") MiB"
echo "idle computer (guestd, no desktop): $(mib "$idle") MiB," \
    "$(mib $((idle - base))) MiB beyond the baseline (goal <= 15)"
echo "with one open desktop: $(mib "$desk") MiB," \
    "$(mib $((desk - base))) MiB beyond the baseline"
echo "containerd shim RSS: $(shim_rss "$I") KiB"

#!/bin/bash
# SPDX-License-Identifier: MIT
# serve's secrets never reach a docker computer (issue 26, item 1, for the
# docker provider; guest-environ.sh is the local provider's, k8s-create.sh
# the kubernetes one's).  serve runs with the object store's keys, the
# database's password, an API token and a variable of no known name in its
# environment; a computer is made a container and used (its shell, a
# desktop, a command left running).  Then the container's configuration
# (`docker inspect`: Config.Env, labels, command) and every process inside
# it (guestd, the X server, the window manager, the shell, the leftover),
# read by `docker exec` and from the computer's own shell, hold none of
# those values, nor the computer's own control secret, in their
# environment or command line.  Skipped (77) only where no Docker engine
# can run at all, as docker-regression.sh.
. "${top_srcdir:-.}/tests/lib.sh"

# Values unique to this test, so a hit names its variable.
sfx=$$-$T_SLOT
export OBJECT_STORAGE_SECRET_ACCESS_KEY="os-secret-Qd72-$sfx"
export OBJECT_STORAGE_ACCESS_KEY_ID="os-keyid-Lm05-$sfx"
export AWS_SECRET_ACCESS_KEY="aws-secret-Vf63-$sfx"
export AWS_SESSION_TOKEN="aws-session-Ju18-$sfx"
export PGPASSWORD="pg-password-Rb49-$sfx"
export RAKAZO_API_TOKEN="api-token-Xc27-$sfx"
export SOME_DEPLOY_VAR="unlisted-Ny86-$sfx"
SECRETS=(OBJECT_STORAGE_SECRET_ACCESS_KEY OBJECT_STORAGE_ACCESS_KEY_ID
    AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN PGPASSWORD RAKAZO_API_TOKEN
    SOME_DEPLOY_VAR)
. "${top_srcdir:-.}/tests/lib-controller.sh"
[ -f "${top_srcdir:-.}/tests/lib-docker.sh" ] || {
	echo "SKIP: no tests/lib-docker.sh in this tree: the docker" >&2
	echo "SKIP: provider's environment is NOT tested" >&2
	exit 77
}
. "${top_srcdir:-.}/tests/lib-docker.sh"

INST=""
de_cleanup() {
	rc=$?
	if [ -n "$INST" ] && docker_answers; then
		docker ps -aq --filter "label=rakazo.instance=$INST" |
		    xargs -r docker rm -f >/dev/null 2>&1
	fi
	ctl_stop
	docker_down
	(exit "$rc")
	ctl_cleanup
}
trap de_cleanup EXIT

docker_up
case $? in
0) ;;
77)
	echo "SKIP: ****************************************************" >&2
	echo "SKIP: no Docker here: $DOCKER_WHY" >&2
	echo "SKIP: the docker provider's environment is NOT tested" >&2
	echo "SKIP: ****************************************************" >&2
	exit 77
	;;
*) t_fail "Docker: $DOCKER_WHY" ;;
esac
[ "$(id -u)" -eq 0 ] ||
	{ echo "# SKIP: the container's user reads its home as root hands it"; exit 77; }

IMAGE=$(docker_image 2>"$T/build.log") ||
	t_fail "image build: $(tail -n 30 "$T/build.log")"

ctl_start --provider docker --image "${IMAGE%:*}" --image-tag "${IMAGE##*:}" \
    --reconcile-ms 600000
ctl computer create a >/dev/null || t_fail "create a"
A="$CTL_DATA/computers/a"
sh_a() { ctl shell --computer a --bot ann -- "$1"; }

# Use it: a command, a desktop (X server, window manager), a leftover.
t_contains "$(sh_a 'echo hello')" "hello" "a's shell"
ctl screenshot --computer a --bot ann "$T/a.png" >/dev/null ||
	t_fail "a's screenshot"
sh_a 'setsid nohup sleep 1000 >/dev/null 2>&1 & echo started' >/dev/null ||
	t_fail "a's leftover"

# The container of this test's computer: another test on the same engine
# may run an "a" of its own, so it is the one whose mounts come from this
# test's data directory.
C=""
for c in $(docker ps -q --filter "label=rakazo.computer=a"); do
	docker inspect -f '{{range .Mounts}}{{.Source}} {{end}}' "$c" |
	    grep -q -- "$CTL_DATA" && C=$c
done
[ -n "$C" ] || t_fail "no container of a"
INST=$(docker inspect -f '{{index .Config.Labels "rakazo.instance"}}' "$C")

vals=()
for v in "${SECRETS[@]}"; do
	vals+=("${!v}")
done
[ -z "$CTL_STORE" ] || vals+=("$CTL_STORE")
vals+=("$(cat "$A/secret")")

# The container's configuration: its environment is what serve gave it
# (only where guestd finds its secret file) on top of the image's.
docker inspect "$C" >"$T/inspect.json" || t_fail "docker inspect"
docker inspect -f '{{range .Config.Env}}{{println .}}{{end}}' "$C" \
    >"$T/env.config"
t_note "a's container environment: $(tr '\n' ' ' <"$T/env.config")"
t_contains "$(cat "$T/env.config")" "GUESTD_SECRET_FILE=" \
    "guestd's secret file is named"
grep -q '^SOME_DEPLOY_VAR=\|^OBJECT_STORAGE\|^AWS_\|^PG\|^RAKAZO_API' \
    "$T/env.config" && t_fail "a name of serve's in the container's Env"
for v in "${vals[@]}"; do
	grep -qF -- "$v" "$T/inspect.json" &&
		t_fail "docker inspect of a's container holds $v"
done

# scan: each process's pid, name, environment and command line, one
# block per process; run inside the container (expanded there).
# shellcheck disable=SC2016
scan='for d in /proc/[0-9]*; do
	[ -r "$d/environ" ] || continue
	printf "@@ %s %s\n" "${d#/proc/}" "$(cat "$d/comm" 2>/dev/null)"
	tr "\0" "\n" <"$d/environ" 2>/dev/null; echo
	tr "\0" " " <"$d/cmdline" 2>/dev/null; echo
done'
# leaks FILE: "pid (name) holds value" for each value found in FILE.
leaks() {
	for v in "${vals[@]}"; do
		awk -v v="$v" '/^@@ / { p = $2 " (" $3 ")" }
		    index($0, v) { print "pid " p " holds " v; exit }' "$1"
	done
}

# Every process, as docker exec sees them (the container's uid: all of
# its processes are).
docker exec "$C" sh -c "$scan" >"$T/procs.exec" ||
	t_fail "docker exec cannot scan a's processes"
names=$(awk '/^@@ / { printf "%s ", $3 }' "$T/procs.exec")
t_note "a's processes: $names"
leak=$(leaks "$T/procs.exec" | head -n 3)
[ -z "$leak" ] || t_fail "$leak"
n=$(grep -c '^@@ ' "$T/procs.exec")
[ "$n" -ge 4 ] || t_fail "only $n processes in a's container"
t_contains "$names" "guestd" "guestd was scanned"
t_contains "$names" "Xvfb" "the X server was scanned"
t_contains "$names" "sleep" "the leftover was scanned"

# From the computer itself: what its own commands can read.
sh_a "$scan" >"$T/procs.shell" || t_fail "a's shell cannot scan"
grep -q 'guestd' "$T/procs.shell" || t_fail "a's shell sees no guestd"
leak=$(leaks "$T/procs.shell" | head -n 3)
[ -z "$leak" ] || t_fail "seen from a's shell: $leak"

ctl computer delete a --force >/dev/null || t_fail "computer delete"
t_note "docker-environ ok"

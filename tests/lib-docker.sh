#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A Docker engine and the computer image for tests (sourced by tests, and
# run as a command by .ci/run).  Nothing here pulls from a registry (none
# is reachable from CI): the Debian base is made with debootstrap from the
# mirror apt already uses and imported with `docker import`.
#
#   docker_up        use the engine DOCKER_HOST (or the default socket)
#                    names when it answers; else, as root with
#                    /usr/sbin/dockerd installed (packaging/install-deps.sh
#                    --docker), start a private dockerd (no systemd needed)
#                    and export DOCKER_HOST.  Returns 77 where Docker
#                    cannot run at all, with the reason in DOCKER_WHY.
#   docker_down      undo docker_up: the private dockerd stops when its last
#                    user (this or any other process that called docker_up)
#                    is gone; an engine we did not start is left alone.
#   docker_base      the Debian bookworm base image (name on stdout), made
#                    once and cached: the debootstrap tarball in the cache
#                    dir, the image in the engine.
#   docker_image     build image/Dockerfile on that base (the engine's
#                    layer cache makes a rebuild of an unchanged tree a few
#                    seconds); name on stdout, size on stderr.
#
# As a command: tests/lib-docker.sh up|down|base|image|env.  `up [PID]`
# leaves the engine running for PID (default the calling shell; .ci/run
# gives its own) until `down [PID]`;
# `env` prints the DOCKER_HOST line that reaches it; `base` and `image`
# stop an engine they had to start.
#
# Settings:
#   RAKAZO_DOCKER_CACHE   cache dir outside the checkout, kept between runs
#                         (default /var/cache/rakazo-computer): the base
#                         tarball, and the private engine's data root (so
#                         its images and build cache survive it)
#   RAKAZO_DOCKER_RUN     the private engine's sockets, pid file and log
#                         (default /run/rakazo-computer-docker)
#   RAKAZO_BASE_VERSION   the base's cache key; change it to rebuild
#   RAKAZO_IMAGE_TIMEOUT  seconds an image build may take (default 1200)
#   RAKAZO_TEST_IMAGE     the tag tests build and run (rakazo-computer:test)
#   DEBIAN_MIRROR         the archive debootstrap uses (default: the one apt
#                         on this host uses for bookworm)

RAKAZO_DOCKER_CACHE=${RAKAZO_DOCKER_CACHE:-/var/cache/rakazo-computer}
RAKAZO_DOCKER_RUN=${RAKAZO_DOCKER_RUN:-/run/rakazo-computer-docker}
RAKAZO_BASE_VERSION=${RAKAZO_BASE_VERSION:-bookworm-2}
RAKAZO_BASE_IMAGE=rakazo-computer-base:$RAKAZO_BASE_VERSION
RAKAZO_IMAGE_TIMEOUT=${RAKAZO_IMAGE_TIMEOUT:-1200}
RAKAZO_TEST_IMAGE=${RAKAZO_TEST_IMAGE:-rakazo-computer:test}
DOCKER_WHY=""
DOCKER_MINE=0	# 1 once this process registered as a user of our dockerd

_docker_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/lib-apt.sh
. "$_docker_lib_dir/lib-apt.sh"

_docker_say() {
	echo "lib-docker: $*" >&2
}

# Does an engine answer on DOCKER_HOST (or the default socket)?
docker_answers() {
	command -v docker >/dev/null 2>&1 &&
	    timeout 20 docker info >/dev/null 2>&1
}

# _docker_users: prune users that are gone; print how many are left.
_docker_users() {
	local f n=0
	for f in "$RAKAZO_DOCKER_RUN"/users/*; do
		[ -e "$f" ] || continue
		if kill -0 "${f##*/}" 2>/dev/null; then
			n=$((n + 1))
		else
			rm -f "$f"
		fi
	done
	echo "$n"
}

# _docker_start: a private dockerd; called under the lock.
_docker_start() {
	local run=$RAKAZO_DOCKER_RUN
	mkdir -p "$run/exec" "$run/users" "$RAKAZO_DOCKER_CACHE/docker"
	# A dockerd of ours that died left its pid file: dockerd refuses to
	# start over a live one, and a dead one is stale.
	if [ -f "$run/docker.pid" ] && ! kill -0 "$(cat "$run/docker.pid")" \
	    2>/dev/null; then
		rm -f "$run/docker.pid" "$run/docker.sock"
	fi
	_docker_say "starting dockerd (log $run/dockerd.log)"
	# setsid: the engine outlives the test that started it only while
	# other users need it; it must not get the test's Ctrl-C.
	setsid /usr/sbin/dockerd \
	    --data-root "$RAKAZO_DOCKER_CACHE/docker" \
	    --exec-root "$run/exec" \
	    --host "unix://$run/docker.sock" \
	    --pidfile "$run/docker.pid" \
	    >>"$run/dockerd.log" 2>&1 </dev/null &
	echo $! >"$run/started"
	export DOCKER_HOST="unix://$run/docker.sock"
	# Ready: `docker info` answers (about 2 s here); bounded.  A dockerd
	# that exits at once cannot run on this machine at all (no
	# privileges for its mounts, cgroups or network): 77, with its reason.
	for _ in $(seq 1 120); do
		docker_answers && return 0
		if ! kill -0 "$(cat "$run/started")" 2>/dev/null; then
			DOCKER_WHY="dockerd cannot run here: $(tail -n 3 "$run/dockerd.log")"
			rm -f "$run/started" "$run/docker.sock"
			return 77
		fi
		sleep 0.5
	done
	DOCKER_WHY="dockerd did not answer within 60 s: $(tail -n 5 "$run/dockerd.log")"
	_docker_kill
	return 1
}

# _docker_kill: stop the dockerd we started and wait for it (bounded).
_docker_kill() {
	local run=$RAKAZO_DOCKER_RUN pid
	[ -f "$run/started" ] || return 0
	pid=$(cat "$run/started")
	if kill -TERM "$pid" 2>/dev/null; then
		_docker_say "stopping dockerd $pid"
		for _ in $(seq 1 120); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.5
		done
		kill -KILL "$pid" 2>/dev/null
	fi
	# dockerd leaves its default network namespace mounted.
	! mountpoint -q "$run/exec/netns/default" 2>/dev/null ||
		umount "$run/exec/netns/default" 2>/dev/null
	rm -f "$run/started" "$run/docker.sock"
}

docker_up() {
	local rc=0
	if [ -z "${DOCKER_HOST:-}" ] && [ -S "$RAKAZO_DOCKER_RUN/docker.sock" ]; then
		# Ours from another process of this run (.ci/run, a parallel test).
		export DOCKER_HOST="unix://$RAKAZO_DOCKER_RUN/docker.sock"
	fi
	if ! command -v docker >/dev/null 2>&1; then
		DOCKER_WHY="no docker command (packaging/install-deps.sh --docker)"
		return 77
	fi
	if [ "${DOCKER_HOST:-}" != "unix://$RAKAZO_DOCKER_RUN/docker.sock" ] &&
	    docker_answers; then
		return 0	# someone else's engine: use it, never stop it
	fi
	if [ "$(id -u)" -ne 0 ]; then
		DOCKER_WHY="no Docker engine answers and only root can start one"
		return 77
	fi
	if [ ! -x /usr/sbin/dockerd ]; then
		DOCKER_WHY="no engine answers and /usr/sbin/dockerd is not installed (packaging/install-deps.sh --docker)"
		return 77
	fi
	mkdir -p "$RAKAZO_DOCKER_RUN/users"
	exec 8>"$RAKAZO_DOCKER_RUN/lock"
	flock -w 300 8 || { DOCKER_WHY="lock"; exec 8>&-; return 1; }
	export DOCKER_HOST="unix://$RAKAZO_DOCKER_RUN/docker.sock"
	if ! docker_answers; then
		_docker_start || rc=$?
	fi
	if [ "$rc" -eq 0 ]; then
		: >"$RAKAZO_DOCKER_RUN/users/$$"
		DOCKER_MINE=1
	fi
	flock -u 8
	exec 8>&-
	return "$rc"
}

docker_down() {
	[ "$DOCKER_MINE" -eq 1 ] || return 0
	exec 8>"$RAKAZO_DOCKER_RUN/lock"
	flock -w 300 8
	rm -f "$RAKAZO_DOCKER_RUN/users/$$"
	DOCKER_MINE=0
	[ "$(_docker_users)" -ne 0 ] || _docker_kill
	flock -u 8
	exec 8>&-
}

# _docker_debootstrap TAR: a minimal bookworm root, slimmed the way
# debian:bookworm-slim is (no docs, man pages or locales; no apt lists or
# downloaded packages), as a tarball.
_docker_debootstrap() {
	local tar=$1 mirror security root rc
	mirror=${DEBIAN_MIRROR:-$(apt_uri bookworm)}
	mirror=${mirror:-http://deb.debian.org/debian}
	security=${DEBIAN_SECURITY_MIRROR:-$(apt_uri bookworm-security)}
	security=${security:-http://deb.debian.org/debian-security}
	root=$(mktemp -d "$RAKAZO_DOCKER_CACHE/root.XXXXXX")
	_docker_say "debootstrap bookworm from $mirror (a few minutes, once)"
	if ! debootstrap --variant=minbase bookworm "$root" "$mirror" \
	    >"$root.log" 2>&1; then
		_docker_say "debootstrap failed: $(tail -n 5 "$root.log")"
		rm -rf "$root" "$root.log"
		return 1
	fi
	cat >"$root/etc/apt/sources.list" <<-EOF
	deb $mirror bookworm main
	deb $mirror bookworm-updates main
	deb $security bookworm-security main
	EOF
	cat >"$root/etc/dpkg/dpkg.cfg.d/docker-slim" <<-'EOF'
	# As debian:bookworm-slim: no documentation or translations.
	path-exclude /usr/share/doc/*
	path-include /usr/share/doc/*/copyright
	path-exclude /usr/share/man/*
	path-exclude /usr/share/groff/*
	path-exclude /usr/share/info/*
	path-exclude /usr/share/locale/*
	path-exclude /usr/share/lintian/*
	path-exclude /usr/share/linda/*
	EOF
	echo 'Acquire::Languages "none";' \
	    >"$root/etc/apt/apt.conf.d/docker-no-languages"
	# As the official images: downloaded packages go once installed.
	cat >"$root/etc/apt/apt.conf.d/docker-clean" <<-'EOF'
	DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
	APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
	Dir::Cache::pkgcache "";
	Dir::Cache::srcpkgcache "";
	EOF
	find "$root/usr/share/doc" -mindepth 1 -not -name copyright \
	    -not -type d -delete 2>/dev/null
	rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/* \
	    "$root"/usr/share/locale/* "$root"/var/lib/apt/lists/* \
	    "$root"/var/cache/apt/archives/*.deb "$root"/var/log/*.log
	tar -C "$root" --numeric-owner -cf "$tar.tmp" . && mv "$tar.tmp" "$tar"
	rc=$?
	# Bases of other versions are stale now.
	find "$RAKAZO_DOCKER_CACHE" -maxdepth 1 -name 'debian-*.tar' \
	    ! -name "${tar##*/}" -delete
	rm -rf "$root" "$root.log"
	return "$rc"
}

docker_base() {
	local tar="$RAKAZO_DOCKER_CACHE/debian-$RAKAZO_BASE_VERSION.tar" rc=0
	if docker image inspect "$RAKAZO_BASE_IMAGE" >/dev/null 2>&1; then
		echo "$RAKAZO_BASE_IMAGE"
		return 0
	fi
	mkdir -p "$RAKAZO_DOCKER_CACHE"
	exec 9>"$RAKAZO_DOCKER_CACHE/base.lock"
	flock -w 900 9 || { exec 9>&-; return 1; }
	if [ ! -s "$tar" ]; then
		command -v debootstrap >/dev/null 2>&1 ||
			{ _docker_say "debootstrap is not installed"; rc=1; }
		[ "$rc" -ne 0 ] || _docker_debootstrap "$tar" || rc=1
	fi
	if [ "$rc" -eq 0 ] &&
	    ! docker image inspect "$RAKAZO_BASE_IMAGE" >/dev/null 2>&1; then
		docker import -c 'CMD ["bash"]' -c 'ENV LANG=C.UTF-8' \
		    "$tar" "$RAKAZO_BASE_IMAGE" >/dev/null || rc=1
	fi
	flock -u 9
	exec 9>&-
	[ "$rc" -eq 0 ] && echo "$RAKAZO_BASE_IMAGE"
	return "$rc"
}

# docker_image [TAG [docker build args...]]: image/Dockerfile built from
# the source tree this library belongs to, on docker_base.
docker_image() {
	local tag=${1:-$RAKAZO_TEST_IMAGE} base
	[ $# -eq 0 ] || shift
	local rc=0
	base=$(docker_base) || return 1
	# One build at a time on an engine: a prune after one build would
	# remove the untagged layers of another still running.
	exec 7>"$RAKAZO_DOCKER_CACHE/build.lock"
	flock -w "$RAKAZO_IMAGE_TIMEOUT" 7 || { exec 7>&-; return 1; }
	timeout --kill-after=20 "$RAKAZO_IMAGE_TIMEOUT" \
	    "$_docker_lib_dir/../image/build.sh" --base "$base" --tag "$tag" \
	    --stage-tag "${tag%%:*}-build:${tag#*:}" "$@" >&2 || rc=1
	[ "$rc" -ne 0 ] || _docker_prune
	flock -u 7
	exec 7>&-
	[ "$rc" -eq 0 ] && echo "$tag"
	return "$rc"
}

# _docker_prune: in our own engine (everything in it is ours), what no
# later build can use: dangling images (earlier builds; the stages of the
# current one are tagged) and bases of other versions.  An engine we did
# not start is left alone.
_docker_prune() {
	local b
	[ "${DOCKER_HOST:-}" = "unix://$RAKAZO_DOCKER_RUN/docker.sock" ] ||
		return 0
	for b in $(docker images --format '{{.Repository}}:{{.Tag}}' \
	    rakazo-computer-base); do
		[ "$b" = "$RAKAZO_BASE_IMAGE" ] || docker rmi "$b" >/dev/null 2>&1
	done
	docker image prune -f >/dev/null 2>&1
}

# Run as a command.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -u
	case "${1:-}" in
	up)
		# up [PID]: the engine stays up for PID (default: the caller)
		# until `down PID` or PID's exit and the next docker_down.
		owner=${2:-$PPID}
		docker_up
		rc=$?
		[ "$rc" -eq 0 ] || _docker_say "no Docker: $DOCKER_WHY"
		[ "$DOCKER_MINE" -eq 0 ] || mv "$RAKAZO_DOCKER_RUN/users/$$" \
		    "$RAKAZO_DOCKER_RUN/users/$owner"
		exit "$rc"
		;;
	down)
		[ -d "$RAKAZO_DOCKER_RUN/users" ] || exit 0
		rm -f "$RAKAZO_DOCKER_RUN/users/${2:-$PPID}"
		DOCKER_MINE=1
		: >"$RAKAZO_DOCKER_RUN/users/$$"
		docker_down
		;;
	env)
		# After `up`: the line that points a shell at the same engine.
		[ ! -S "$RAKAZO_DOCKER_RUN/docker.sock" ] || [ -n "${DOCKER_HOST:-}" ] ||
			DOCKER_HOST="unix://$RAKAZO_DOCKER_RUN/docker.sock"
		[ -z "${DOCKER_HOST:-}" ] || echo "export DOCKER_HOST=$DOCKER_HOST"
		;;
	base | image)
		cmd=$1
		shift
		docker_up || { _docker_say "no Docker: $DOCKER_WHY"; exit 77; }
		if [ "$cmd" = base ]; then docker_base; else docker_image "$@"; fi
		rc=$?
		docker_down
		exit "$rc"
		;;
	*)
		echo "usage: $0 up|down|env|base|image [TAG [build args]]" >&2
		exit 2
		;;
	esac
fi

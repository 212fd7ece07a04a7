#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's Quick start on a fresh Debian 12 machine, proven from a clean
# state: a new Debian 12 root made with debootstrap, a clean `git clone` of
# this repository's HEAD (committed work only) copied into it, and the two
# README commands run inside it as root, with the root made the root of a
# mount namespace of its own (pivot_root; a chroot would keep Chromium's
# sandbox from its user namespaces):
#
#   1. ./packaging/demo.sh: bounded; it must print the screen URL with a
#      window manager running on alice's desktop and none exited; then it
#      gets a SIGINT to its process group (a terminal's Ctrl-C) and must
#      leave no guestd, Xvfb or window manager behind and remove its temp
#      data dir.
#   2. ./.ci/run: must end "N passed, 0 failed".
#
# The clone is /root/rakazo-computer, where root cloning into its home
# puts it: /root is mode 0700, so nothing the tests give guestd (which
# runs as nobody or the computer's own uid) may be read from the checkout.
#
# Not part of .ci/run (it takes far longer than CI's budget: debootstrap,
# every package, then the whole of .ci/run).  Needs root, network access to
# a Debian mirror, and nothing installed by hand on the host except
# debootstrap (installed here with apt-get when missing) and git (this is a
# checkout).  The mounts (/proc, /sys, /sys/fs/cgroup for dockerd, /dev,
# /dev/pts, /dev/shm) live in a
# private mount namespace, so they vanish with the script.
#
# Settings:
#   DEBIAN_MIRROR           the Debian archive (default: the first one apt
#                           on this host uses for bookworm, else
#                           http://deb.debian.org/debian)
#   DEBIAN_SECURITY_MIRROR  the security archive (same rule, default
#                           http://deb.debian.org/debian-security)
#   RAKAZO_FRESH_CA         PEM files of extra TLS trust anchors for the
#                           root, for a network that re-signs TLS (npm
#                           fails otherwise); default: the ones this host
#                           added in /usr/local/share/ca-certificates;
#                           "none": none
#   RAKAZO_FRESH_DIR        where the root goes (default: a new temp dir
#                           under /var/tmp, removed at the end)
#   RAKAZO_FRESH_KEEP=1     keep the root afterwards
#   RAKAZO_FRESH_REUSE=1    RAKAZO_FRESH_DIR holds a root an earlier run
#                           kept: no debootstrap, its clone is reset to
#                           this checkout's HEAD (its packages and npm
#                           modules stay), and it is kept again
#   RAKAZO_FRESH_STEPS      "demo ci" (default), one of them, or "check":
#                           dependencies, build in build/ and `make check
#                           TESTS="$RAKAZO_FRESH_TESTS"` (a quicker look
#                           at some tests; log check.log)
#   RAKAZO_DEMO_TIMEOUT     seconds the demo may take to print its URL,
#                           dependencies and build included (default 2400)
# Logs: demo.log and ci.log in the fresh dir, and the end of each on failure.
# Exit status 0 only when every step passed.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
CLONE=/root/rakazo-computer
STEPS=${RAKAZO_FRESH_STEPS:-demo ci}
DEMO_TIMEOUT=${RAKAZO_DEMO_TIMEOUT:-2400}

say() {
	printf '\n== fresh-machine: %s\n' "$*"
}

die() {
	printf 'fresh-machine: %s\n' "$*" >&2
	exit 1
}

# apt_uri SUITE: the mirror apt on this host uses.
. "$SRC/tests/lib-apt.sh"

# ---- the inner part: in a private mount namespace --------------------------
if [ "${1:-}" = "--inner" ]; then
	ROOT=$2
	FRESH=$3

	# The root becomes the root of a mount namespace of its own
	# (pivot_root), not a chroot: the kernel refuses user namespaces
	# (unshare(2) CLONE_NEWUSER: EPERM) to a chrooted process, and
	# Chromium's sandbox needs them, as every browser test does.  This
	# script's own namespace keeps the host's view (its logs, /proc of
	# the root's processes); a holder process makes the root's namespace
	# and keeps it alive, and each command enters it with nsenter.
	mount --bind "$ROOT" "$ROOT"
	mount -t proc proc "$ROOT/proc"
	mount -t sysfs sysfs "$ROOT/sys"
	# The host's cgroup tree, which dockerd needs (a new sysfs has none).
	if [ -d /sys/fs/cgroup ] && [ -d "$ROOT/sys/fs/cgroup" ]; then
		mount --rbind /sys/fs/cgroup "$ROOT/sys/fs/cgroup" || true
	fi
	mount --bind /dev "$ROOT/dev"
	if ! mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts \
	    "$ROOT/dev/pts" 2>/dev/null; then
		mount --bind /dev/pts "$ROOT/dev/pts"
	fi
	[ ! -e "$ROOT/dev/pts/ptmx" ] ||
		mount --bind "$ROOT/dev/pts/ptmx" "$ROOT/dev/ptmx"
	mount -t tmpfs -o mode=1777 shm "$ROOT/dev/shm"
	mkdir -p "$ROOT/.oldroot"

	# The holder says "ready" on a FIFO once the root is its namespace's
	# root and the host's tree is gone from it.
	rm -f "$FRESH/holder.ready"
	mkfifo -m 600 "$FRESH/holder.ready"
	exec 5<>"$FRESH/holder.ready"
	unshare --mount --propagation private /bin/sh -c '
	    exec 3>"$2" && cd "$1" && pivot_root . .oldroot &&
	    umount -l /.oldroot && cd / && echo ready >&3 && exec 3>&- &&
	    exec sleep infinity' sh "$ROOT" "$FRESH/holder.ready" &
	HOLDER=$!
	read -t 30 -r line <&5 || line=""
	exec 5<&-
	rm -f "$FRESH/holder.ready"
	[ "$line" = ready ] || die "could not make the root a namespace's root"
	NS=$(readlink "/proc/$HOLDER/ns/mnt")

	ENTER_BARE=(nsenter --target "$HOLDER" --mount --root --wd)

	# Every process still running in the fresh root (its namespace),
	# but the holder.
	# The root's processes: those in its mount namespace, and their
	# descendants in namespaces of their own (a local computer's guestd
	# and its children get one, with a private /proc).
	in_root() {
		local p pid pp n=-1
		local -A in=() parent=()
		for p in /proc/[0-9]*; do
			pid=${p#/proc/}
			[ "$pid" != "$HOLDER" ] || continue
			pp=$(awk '/^PPid:/ { print $2 }' "$p/status" \
			    2>/dev/null) || continue
			[ -n "$pp" ] || continue
			parent[$pid]=$pp
			[ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$NS" ] &&
			    in[$pid]=1
		done
		while [ "${#in[@]}" -ne "$n" ]; do
			n=${#in[@]}
			for pid in "${!parent[@]}"; do
				[ -z "${in[${parent[$pid]}]:-}" ] ||
				    in[$pid]=1
			done
		done
		for pid in "${!in[@]}"; do
			echo "$pid"
		done
		return 0
	}
	stop_root() {
		local pids
		pids=$(in_root)
		[ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
	}
	stop_all() {
		stop_root
		kill -KILL "$HOLDER" 2>/dev/null || true
	}
	trap stop_all EXIT

	# What Chromium's sandbox needs: an unprivileged user may make a
	# user namespace in the root (a chroot fails this).
	if ! "${ENTER_BARE[@]}" runuser -u nobody -- unshare -Ur true; then
		die "unprivileged user namespaces fail in the root"
	fi

	# The site's extra trust anchors, if any, for Node too (npm uses its
	# own list otherwise).
	CA_ENV=()
	[ ! -s "$ROOT/usr/local/share/ca-certificates/fresh-site.crt" ] ||
		CA_ENV=(NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/fresh-site.crt)

	# ENTER CMD...: CMD in the fresh root, as root, with a fresh machine's
	# environment (nothing of ours leaks in).
	ENTER=("${ENTER_BARE[@]}" /usr/bin/env -i HOME=/root LANG=C.UTF-8
	    TERM=dumb SHELL=/bin/bash USER=root LOGNAME=root
	    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	    "${CA_ENV[@]}")
	# run CMD: a shell command in the fresh root, in the clone.
	run() {
		"${ENTER[@]}" /bin/bash -c "cd $CLONE && $1"
	}

	ok=1
	for step in $STEPS; do
		case $step in
		demo)
			say "README command 1: ./packaging/demo.sh (log: $FRESH/demo.log)"
			log=$FRESH/demo.log
			: > "$log"
			# Its own session and process group, as a terminal's
			# foreground job has: the SIGINT below reaches every
			# process of the demo, as Ctrl-C would.  SIGINT not
			# ignored: a script's background jobs start with it
			# ignored, which a shell cannot trap.
			setsid env --default-signal=INT \
			    "${ENTER[@]}" \
			    /bin/bash -c "cd $CLONE && exec ./packaging/demo.sh" \
			    </dev/null >"$log" 2>&1 &
			demo=$!
			end=$((SECONDS + DEMO_TIMEOUT))
			while ! grep -q '^Watch and control alice' "$log"; do
				kill -0 "$demo" 2>/dev/null || break
				[ "$SECONDS" -lt "$end" ] || break
				# Polls a log file written by another root:
				# nothing to wait on but the file.
				sleep 2
			done
			step_ok=1
			if grep -q '^Watch and control alice' "$log"; then
				echo "the demo printed the screen URL:"
				grep -E '^(Watch|A shell)' "$log"
			else
				echo "the demo did not print the screen URL" >&2
				step_ok=0
			fi
			# A window manager on alice's desktop: a child of
			# the computer's guestd, still running, and no
			# display.wm_exited in guestd's log.
			wm=""
			for p in $(in_root); do
				c=$(cat "/proc/$p/comm" 2>/dev/null) || continue
				case $c in twm | openbox | xfwm4 | fluxbox) ;;
				*) continue ;; esac
				pp=$(awk '/^PPid:/ { print $2 }' \
				    "/proc/$p/status" 2>/dev/null)
				[ "$(cat "/proc/$pp/comm" 2>/dev/null)" = \
				    guestd ] || continue
				d=$(tr '\0' '\n' <"/proc/$p/environ" |
				    grep '^DISPLAY=' || true)
				wm="$c (pid $p, $d)"
			done
			if [ -n "$wm" ]; then
				echo "window manager on the desktop: $wm"
			else
				echo "no window manager runs on the desktop" >&2
				step_ok=0
			fi
			glog=$(find "$ROOT"/tmp/rakazo-demo.* -name guestd.log \
			    2>/dev/null | head -n 1 || true)
			if [ -n "$glog" ] &&
			    grep 'display.wm_exited' "$glog" >&2; then
				echo "the window manager exited (above)" >&2
				step_ok=0
			fi
			# Ctrl-C, as a terminal sends it: to the whole group.
			kill -INT -- "-$demo" 2>/dev/null || true
			end=$((SECONDS + 60))
			while kill -0 "$demo" 2>/dev/null &&
			    [ "$SECONDS" -lt "$end" ]; do
				sleep 0.5
			done
			if kill -0 "$demo" 2>/dev/null; then
				echo "the demo still runs 60 s after SIGINT" >&2
				step_ok=0
			fi
			left=""
			for p in $(in_root); do
				c=$(cat "/proc/$p/comm" 2>/dev/null) || continue
				case $c in guestd | Xvfb | twm | openbox | \
				    rakazoctl | xterm | xeyes)
					left="$left $c:$p" ;;
				esac
			done
			if [ -n "$left" ]; then
				echo "left running after Ctrl-C:$left" >&2
				step_ok=0
			fi
			# Its temp data dir (guestd's home and logs) is gone.
			for dd in "$ROOT"/tmp/rakazo-demo.*; do
				[ -e "$dd" ] || continue
				echo "left after Ctrl-C: ${dd#"$ROOT"}" >&2
				step_ok=0
			done
			if [ "$step_ok" -eq 1 ]; then
				echo "demo: PASS"
			else
				echo "demo: FAIL; the end of $log:" >&2
				tail -n 40 "$log" >&2
				[ -z "$glog" ] || tail -n 20 "$glog" >&2
				ok=0
			fi
			stop_root
			;;
		ci)
			say "README command 2: ./.ci/run (log: $FRESH/ci.log)"
			rc=0
			run './.ci/run' >"$FRESH/ci.log" 2>&1 || rc=$?
			tail -n 1 "$FRESH/ci.log"
			if [ "$rc" -eq 0 ] &&
			    tail -n 1 "$FRESH/ci.log" | grep -q ' 0 failed$'; then
				echo "ci: PASS"
			else
				echo "ci: FAIL (status $rc); the end of its log:" >&2
				tail -n 60 "$FRESH/ci.log" >&2
				ok=0
			fi
			stop_root
			;;
		check)
			say "build and make check TESTS=... (log: $FRESH/check.log)"
			rc=0
			run './packaging/install-deps.sh && autoreconf -fi &&
			    mkdir -p build && cd build &&
			    { [ -f Makefile ] || ../configure -q; } &&
			    make -j"$(nproc)" -s &&
			    make check TESTS="'"${RAKAZO_FRESH_TESTS:-}"'"' \
			    >"$FRESH/check.log" 2>&1 || rc=$?
			grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS):' \
			    "$FRESH/check.log" || true
			if [ "$rc" -eq 0 ]; then
				echo "check: PASS"
			else
				echo "check: FAIL (status $rc); the end of its log:" >&2
				tail -n 60 "$FRESH/check.log" >&2
				ok=0
			fi
			stop_root
			;;
		*)
			die "unknown step '$step' in RAKAZO_FRESH_STEPS"
			;;
		esac
	done
	[ "$ok" -eq 1 ]
	exit
fi

# ---- the outer part: the fresh root ----------------------------------------
[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap, mount, pivot_root)"
command -v git >/dev/null 2>&1 || die "git is needed to clone this checkout"
git -C "$SRC" rev-parse --verify -q HEAD >/dev/null ||
	die "$SRC is not a git checkout"

MIRROR=${DEBIAN_MIRROR:-$(apt_uri bookworm)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SECURITY=${DEBIAN_SECURITY_MIRROR:-$(apt_uri bookworm-security)}
SECURITY=${SECURITY:-http://deb.debian.org/debian-security}

if ! command -v debootstrap >/dev/null 2>&1; then
	say "installing debootstrap"
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 \
	    update -q
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 \
	    install -y -q --no-install-recommends debootstrap
fi

if [ -n "${RAKAZO_FRESH_DIR:-}" ]; then
	FRESH=$RAKAZO_FRESH_DIR
	mkdir -p "$FRESH"
else
	FRESH=$(mktemp -d /var/tmp/rakazo-fresh.XXXXXX)
fi
FRESH=$(cd "$FRESH" && pwd)
ROOT=$FRESH/root
REUSE=${RAKAZO_FRESH_REUSE:-0}
if [ "$REUSE" = 1 ]; then
	[ -n "${RAKAZO_FRESH_DIR:-}" ] && [ -x "$ROOT/bin/bash" ] &&
	    [ -d "$ROOT$CLONE/.git" ] ||
		die "RAKAZO_FRESH_REUSE=1: no kept root in RAKAZO_FRESH_DIR"
fi
cleanup() {
	if [ "${RAKAZO_FRESH_KEEP:-0}" = 1 ] || [ "$REUSE" = 1 ]; then
		echo "fresh-machine: kept $FRESH"
	elif [ -z "${RAKAZO_FRESH_DIR:-}" ]; then
		# Only if nothing is mounted there any more.
		grep -q " $ROOT/" /proc/self/mounts || rm -rf "$FRESH"
	else
		grep -q " $ROOT/" /proc/self/mounts || rm -rf "$ROOT"
	fi
}
trap cleanup EXIT

if [ "$REUSE" = 1 ]; then
	say "the kept root in $ROOT, its clone reset to $(git -C "$SRC" \
	    rev-parse --short HEAD)"
	git -C "$ROOT$CLONE" fetch -q "$SRC" HEAD
	git -C "$ROOT$CLONE" checkout -q -f --detach FETCH_HEAD
	git -C "$ROOT$CLONE" clean -q -fdx
else
say "a fresh Debian 12 root in $ROOT (mirror $MIRROR)"
debootstrap bookworm "$ROOT" "$MIRROR" >"$FRESH/debootstrap.log" 2>&1 || {
	tail -n 30 "$FRESH/debootstrap.log" >&2
	die "debootstrap failed"
}
cat >"$ROOT/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb $SECURITY bookworm-security main
EOF
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"
# Extra trust anchors: ca-certificates (installed by install-deps.sh)
# takes whatever is in /usr/local/share/ca-certificates when it is set up.
CA=${RAKAZO_FRESH_CA:-$(ls /usr/local/share/ca-certificates/*.crt \
    2>/dev/null || true)}
if [ "$CA" != none ] && [ -n "$CA" ]; then
	mkdir -p "$ROOT/usr/local/share/ca-certificates"
	# shellcheck disable=SC2086
	cat $CA > "$ROOT/usr/local/share/ca-certificates/fresh-site.crt"
	echo "extra trust anchors:" $CA
fi

say "a clean clone of $(git -C "$SRC" rev-parse --short HEAD)"
git clone -q --no-checkout "$SRC" "$ROOT$CLONE"
git -C "$ROOT$CLONE" checkout -q --detach "$(git -C "$SRC" rev-parse HEAD)"
fi

rc=0
RAKAZO_FRESH_STEPS=$STEPS unshare --mount --propagation private \
    "$0" --inner "$ROOT" "$FRESH" || rc=$?
if [ "$rc" -eq 0 ]; then
	say "PASS"
else
	say "FAIL"
fi
exit "$rc"

# SPDX-License-Identifier: MIT
# Shared helpers for integration tests (sourced).  Each test gets its own
# temp dir, its own guestd on an ephemeral loopback port and its own secret;
# everything is removed on exit, and logs are printed only when the test
# fails.  Readiness is a FIFO that guestd writes its port into: no sleeps.
#
# Environment (set by `make check`): GUESTD, RAKAZOCTL, WSPROBE, top_srcdir.

set -u

: "${GUESTD:?run through make check}"
: "${RAKAZOCTL:?run through make check}"

T=$(mktemp -d "${TMPDIR:-/tmp}/rakazo-test.XXXXXX")
chmod 755 "$T"
WS="$T/ws"
SECRET="$T/secret"
GUESTD_PID=""
GUESTD_LOG="$T/guestd.log"
T_FAILED=0
mkdir -p "$WS"

# Root runs guestd as an unprivileged user, as images do.
if [ "$(id -u)" -eq 0 ]; then
	T_USER=nobody
	chown "$T_USER" "$WS"
else
	T_USER=$(id -un)
fi

T_KILL=""	# more pids for t_cleanup to stop (fixtures a test started)

# A slot of this test's own among the tests running in parallel, held by
# an flock on /tmp/rakazo-test-slots/K for the test's life (the kernel lets
# go when the test ends, however it ends).  Display numbers, local uids and
# loopback ports derive from it, so two tests never pick the same ones;
# a number derived from $$ would, now and then.
T_SLOT_DIR=/tmp/rakazo-test-slots
t_reserve_slot() {
	mkdir -p "$T_SLOT_DIR" 2>/dev/null && chmod 1777 "$T_SLOT_DIR" 2>/dev/null
	for k in $(seq 0 63); do
		f="$T_SLOT_DIR/$k"
		[ -e "$f" ] || : >>"$f" 2>/dev/null
		# The braces keep 2>/dev/null to this exec: on exec alone it
		# would stay on the test's stderr for good.
		{ exec {T_SLOT_FD}<"$f"; } 2>/dev/null || continue
		if flock -n "$T_SLOT_FD"; then
			T_SLOT=$k
			return 0
		fi
		exec {T_SLOT_FD}<&-
	done
	echo "FAIL: no free test slot in $T_SLOT_DIR" >&2
	exit 1
}
t_reserve_slot
# Displays :1000+50K.. (guestd counts up from the first; display-limit
# uses the first 42).  A port base P serves displays on P + display
# number: 20000+50K.. for debug VNC, 24000+50K.. for DevTools, below the
# ephemeral ports (32768 and up).
GUESTD_DISPLAY_FIRST=$((1000 + 50 * T_SLOT))
# What an X server of an earlier holder of the slot left when it was
# killed (-9: no clean-up) would push our displays up a slot: a lock file
# whose process is gone, a socket without a live lock.  Ours to remove,
# as the slot is ours; another user's file stays where we may not.
t_clean_slot_displays() {
	local n lock pid
	for n in $(seq "$GUESTD_DISPLAY_FIRST" $((GUESTD_DISPLAY_FIRST + 49))); do
		lock=/tmp/.X$n-lock
		# Builtins only until something is there: this runs at every
		# test's start.
		[ -e "$lock" ] || [ -e "/tmp/.X11-unix/X$n" ] || continue
		pid=""
		{ read -r pid < "$lock"; } 2>/dev/null
		[ -n "$pid" ] && [ -d "/proc/$pid" ] && continue
		rm -f "$lock" "/tmp/.X11-unix/X$n" 2>/dev/null
	done
	return 0
}
t_clean_slot_displays
T_VNC_BASE=19000
GUESTD_CDP_BASE=23000
export GUESTD_DISPLAY_FIRST GUESTD_CDP_BASE

t_cleanup() {
	rc=$?
	for p in $T_KILL; do
		kill "$p" 2>/dev/null
	done
	if [ -n "$GUESTD_PID" ] && kill -0 "$GUESTD_PID" 2>/dev/null; then
		kill "$GUESTD_PID" 2>/dev/null
		wait "$GUESTD_PID" 2>/dev/null
	fi
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
		echo "---- guestd log ----" >&2
		cat "$GUESTD_LOG" >&2 2>/dev/null
	fi
	rm -rf "$T"
	exit "$rc"
}
trap t_cleanup EXIT
trap 'exit 1' INT TERM

t_fail() {
	echo "FAIL: $*" >&2
	exit 1
}

t_note() {
	echo "# $*"
}

t_eq() {	# actual expected what
	[ "$1" = "$2" ] || t_fail "$3: got '$1', want '$2'"
}

t_contains() {	# haystack needle what
	case "$1" in
	*"$2"*) ;;
	*) t_fail "$3: '$2' not in '$1'" ;;
	esac
}

t_not_contains() {
	case "$1" in
	*"$2"*) t_fail "$3: '$2' unexpectedly in '$1'" ;;
	*) ;;
	esac
}

# A fresh 192-bit secret, mode 0600.
t_secret() {
	head -c 24 /dev/urandom | base64 | tr '+/' '-_' > "$SECRET"
	chmod 600 "$SECRET"
}

# t_start_guestd [extra guestd args...]: start and wait until listening.
t_start_guestd() {
	[ -s "$SECRET" ] || t_secret
	rm -f "$T/ready"
	mkfifo "$T/ready"
	user_args=""
	[ "$(id -u)" -eq 0 ] && user_args="--user $T_USER"
	# shellcheck disable=SC2086
	"$GUESTD" --listen 127.0.0.1:0 --secret-file "$SECRET" \
	    --workspace "$WS" --ready-file "$T/ready" --log-level debug \
	    $user_args "$@" >"$GUESTD_LOG" 2>&1 &
	GUESTD_PID=$!
	# Opened read-write, the FIFO never blocks the open; the read returns
	# as soon as guestd writes its port, or fails after the timeout if
	# guestd died first.
	exec 4<>"$T/ready"
	read -t 30 -r PORT <&4 || PORT=""
	exec 4<&-
	[ -n "$PORT" ] || t_fail "guestd did not start"
	URL="ws://127.0.0.1:$PORT"
	export URL PORT
}

# rk ARGS...: rakazoctl guest against this test's guestd.
rk() {
	"$RAKAZOCTL" guest --url "$URL" --secret-file "$SECRET" "$@"
}

# Peak resident memory of guestd in KiB.
t_guestd_hwm_kb() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$GUESTD_PID/status"
}

# The npm packages of tests/DIR (its package-lock.json), in NPM_MODULES:
# the tree's own node_modules when PACKAGE is installed there
# (packaging/install-deps.sh runs `npm ci` there) or, in a tree without
# them (a dist tarball), the same lock file installed into this test's
# temp dir.
t_npm_modules() {	# DIR PACKAGE
	NPM_MODULES="$top_srcdir/tests/$1"
	[ -f "$NPM_MODULES/node_modules/$2/package.json" ] && return 0
	command -v npm >/dev/null 2>&1 || t_fail "no npm for $2"
	mkdir -p "$T/npm-$1"
	cp "$top_srcdir/tests/$1/package.json" \
	    "$top_srcdir/tests/$1/package-lock.json" "$T/npm-$1/"
	(cd "$T/npm-$1" && npm ci --prefer-offline --no-audit --no-fund \
	    --loglevel=error) >"$T/npm.log" 2>&1 ||
		t_fail "npm ci: $(cat "$T/npm.log")"
	NPM_MODULES="$T/npm-$1"
}

# BROWSER_MODULES: where playwright-core is.
t_browser_modules() {
	t_npm_modules browser playwright-core
	BROWSER_MODULES=$NPM_MODULES
}

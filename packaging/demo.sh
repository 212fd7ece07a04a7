#!/usr/bin/env bash
# The main job on one machine: install the dependencies, build, start a
# local guestd on loopback with a fresh secret and a fresh workspace, show a
# health call, a command and a file round trip through `rakazoctl guest`,
# then keep guestd running in the foreground until Ctrl-C.
#
# As root, guestd is told to become an unprivileged user (nobody, or
# RAKAZO_DEMO_USER); it never runs anything as root.
#
# Environment:
#   RAKAZO_DEMO_DIR    data dir (kept on exit); default: a temp dir, removed
#   RAKAZO_DEMO_PORT   loopback port; default: any free one
#   RAKAZO_DEMO_USER   user guestd becomes when started as root (nobody)
#   RAKAZO_DEMO_GATEWAY_PORT  loopback port of the screen gateway (the
#                      screen and terminal pages); default: any free one
#   RAKAZO_BUILD_DIR   build tree (default build/)
set -euo pipefail

cd "$(dirname "$0")/.."
TOP=$(pwd)
BUILD=${RAKAZO_BUILD_DIR:-$TOP/build}
PORT=${RAKAZO_DEMO_PORT:-0}

say() {
	printf '\n\033[1m== %s\033[0m\n' "$*"
}

say "dependencies"
./packaging/install-deps.sh

say "build ($BUILD)"
[ -x configure ] || autoreconf -fi
mkdir -p "$BUILD"
if [ ! -f "$BUILD/Makefile" ]; then
	(cd "$BUILD" && "$TOP/configure" -q)
fi
make -C "$BUILD" -j"$(nproc)" -s
GUESTD="$BUILD/guestd/guestd"
RAKAZOCTL="$BUILD/controller/rakazoctl"

if [ -n "${RAKAZO_DEMO_DIR:-}" ]; then
	D=$RAKAZO_DEMO_DIR
	KEEP=1
	mkdir -p "$D"
else
	D=$(mktemp -d "${TMPDIR:-/tmp}/rakazo-demo.XXXXXX")
	KEEP=0
fi
chmod 755 "$D"
WS="$D/rakazo-home"
SECRET="$D/secret"
LOG="$D/guestd.log"
mkdir -p "$WS"

USER_ARGS=()
if [ "$(id -u)" -eq 0 ]; then
	RUN_AS=${RAKAZO_DEMO_USER:-nobody}
	chown "$RUN_AS" "$WS"
	USER_ARGS=(--user "$RUN_AS")
else
	RUN_AS=$(id -un)
fi

# A fresh 192-bit secret, readable only by us; guestd reads it at start.
umask 077
head -c 24 /dev/urandom | base64 | tr '+/' '-_' > "$SECRET"
umask 022

GUESTD_PID=""
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	if [ -n "$GUESTD_PID" ] && kill -0 "$GUESTD_PID" 2>/dev/null; then
		kill -TERM "$GUESTD_PID" 2>/dev/null || true
		wait "$GUESTD_PID" 2>/dev/null || true
	fi
	if [ "$KEEP" -eq 0 ]; then
		rm -rf "$D"
	else
		echo "data kept in $D"
	fi
}
trap cleanup EXIT
trap 'echo; echo "stopping guestd"; exit 0' INT TERM

say "start guestd (workspace $WS, user $RUN_AS)"
rm -f "$D/ready"
mkfifo -m 600 "$D/ready"
# guestd writes it after dropping to the workspace user.
[ "$(id -u)" -ne 0 ] || chown "$RUN_AS" "$D/ready"
"$GUESTD" --listen "127.0.0.1:$PORT" --secret-file "$SECRET" \
    --workspace "$WS" --ready-file "$D/ready" --log-level info \
    --gateway "127.0.0.1:${RAKAZO_DEMO_GATEWAY_PORT:-0}" \
    --term-assets "$BUILD/term-assets" \
    "${USER_ARGS[@]}" >"$LOG" 2>&1 &
GUESTD_PID=$!
# guestd writes its port into the FIFO once it listens; if it dies first,
# the watchdog opens the FIFO so the read returns.
( while kill -0 "$GUESTD_PID" 2>/dev/null; do sleep 0.2; done
  : > "$D/ready" ) 2>/dev/null &
WATCHDOG=$!
read -r PORT < "$D/ready" || PORT=""
kill "$WATCHDOG" 2>/dev/null || true
wait "$WATCHDOG" 2>/dev/null || true
if [ -z "$PORT" ]; then
	echo "guestd did not start; its log:" >&2
	cat "$LOG" >&2
	exit 1
fi
URL="ws://127.0.0.1:$PORT"

rk() {
	printf '$ rakazoctl guest %s\n' "$*"
	"$RAKAZOCTL" guest --url "$URL" --secret-file "$SECRET" "$@"
}

say "health"
rk health

say "exec round trip"
rk exec -- 'uname -a; id; pwd'

say "file round trip"
head -c 1048576 /dev/urandom > "$D/upload.bin"
rk put "$D/upload.bin" demo/upload.bin --parents
rk get demo/upload.bin "$D/download.bin"
if cmp -s "$D/upload.bin" "$D/download.bin"; then
	echo "put/get: 1 MiB came back identical"
else
	echo "put/get: the file came back different" >&2
	exit 1
fi
rk ls demo

# Take control of bot alice's screen; the same control token opens shells
# in the browser next to it (the terminal page).
GW_PORT=$(sed -n 's/.*event=gateway.listening .*port=\([0-9]*\).*/\1/p' \
    "$LOG" | head -n 1)
if [ -n "$GW_PORT" ] && command -v Xvfb >/dev/null 2>&1; then
	say "screen and terminal of bot alice (open these in a browser)"
	if rk open alice >/dev/null && urls=$(rk screen-url alice --control)
	then
		# A window to watch and type into: xterm, else xeyes.
		for w in "xterm -geometry 100x30+40+40" xeyes; do
			command -v "${w%% *}" >/dev/null 2>&1 || continue
			rk --bot alice exec -- \
			    "setsid -f $w </dev/null >/dev/null 2>&1" || true
			break
		done
		printf '%s\n' "$urls"
		echo "Watch and control alice's desktop in a browser:" \
		    "$(printf '%s\n' "$urls" | grep '/embed.html?token=')"
		rk term-url "${urls##*token=}"
	fi
fi

say "guestd is running (pid $GUESTD_PID, log $LOG)"
cat <<EOF
Try it from another shell:

  $RAKAZOCTL guest --url $URL --secret-file $SECRET exec -- 'ls -la'
  $RAKAZOCTL guest --url $URL --secret-file $SECRET export > home.tar
  $RAKAZOCTL guest --url $URL --secret-file $SECRET --bot alice exec -- pwd

The workspace is $WS.
Press Ctrl-C to stop guestd$([ "$KEEP" -eq 0 ] && echo " (the temp data dir is removed)").
EOF
rc=0
wait "$GUESTD_PID" || rc=$?
GUESTD_PID=""
echo "guestd exited with status $rc; the end of its log:" >&2
tail -n 20 "$LOG" >&2
exit 1

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's main job: set up, build, and run a local computer with a bot
# desktop you can watch.
#
# It installs the Debian dependencies, builds into build/, starts the
# controller (`rakazoctl serve`) on loopback with the local provider and a
# fresh API token, and then, through the controller's CLI only:
#   - runs a command and a file round trip on bot alice's computer (the
#     computer starts on that first tool call),
#   - opens alice's desktop with a visible window on it,
#   - takes control and prints the URLs of alice's screen (noVNC) and
#     terminal (xterm.js) to open in a browser.
# The controller stays in the foreground; Ctrl-C stops the computer, then
# the controller.

# With RAKAZO_DEMO_PROVIDER=docker the computer is a container of the
# computer image (image/Dockerfile) instead of a local guestd: the script
# also installs the Docker engine and debootstrap (install-deps.sh
# --docker), uses the engine that answers or starts a private one and
# builds the image on a debootstrap base (tests/lib-docker.sh: no registry
# is needed; its layer cache makes a rebuild a few seconds), and starts
# serve with SANDBOX_PROVIDER=docker and that image.  Everything else is the
# same; the screen and terminal URLs are the container's gateway port,
# published on 127.0.0.1.  Ctrl-C removes the container (`computer stop`),
# then stops the controller, then the private engine if no one else uses
# it.  The controller runs in a session of its own, so the
# terminal's SIGINT reaches only this script, which stops things in that
# order (a controller gone first would leave the computer running).
#
# Settings: RAKAZO_DEMO_PROVIDER (local or docker; default local),
# RAKAZO_DEMO_IMAGE (docker: the tag to build and run, default
# rakazo-computer:demo), RAKAZO_BUILD_DIR (build/), RAKAZO_DEMO_PORT (0: any free port),
# RAKAZO_DEMO_DIR (a temp dir, removed at the end), RAKAZO_DEMO_USER (as
# root, the unprivileged user guestd becomes; default nobody),
# RAKAZO_DEMO_SCREENSHOT (where the desktop's screenshot goes; default
# alice.png in the demo's dir; the README's is doc/demo-desktop.png).  RAKAZOCTL
# and GUESTD, both set: prebuilt binaries to run (dependencies and build are
# skipped; the terminal page comes from TERM_ASSETS, default
# $RAKAZO_BUILD_DIR/term-assets), as the tests do; with docker RAKAZOCTL
# alone is enough (the image builds its own guestd).
set -euo pipefail

cd "$(dirname "$0")/.."
TOP=$(pwd)
BUILD=${RAKAZO_BUILD_DIR:-$TOP/build}

say() {
	printf '\n\033[1m== %s\033[0m\n' "$*"
}

PROVIDER=${RAKAZO_DEMO_PROVIDER:-local}
case $PROVIDER in
local) ;;
docker)
	# The container's user (uid 1000) must read its bind-mounted home
	# and secret: serve hands them over as root (rakazoctl(1), Docker).
	if [ "$(id -u)" -ne 0 ] && [ "$(id -u)" -ne 1000 ]; then
		echo "demo: RAKAZO_DEMO_PROVIDER=docker runs as root (or as uid 1000)" >&2
		exit 2
	fi
	;;
*)
	echo "demo: RAKAZO_DEMO_PROVIDER is local or docker, not '$PROVIDER'" >&2
	exit 2
	;;
esac

if [ -n "${RAKAZOCTL:-}" ] &&
    { [ -n "${GUESTD:-}" ] || [ "$PROVIDER" = docker ]; }; then
	say "prebuilt: $RAKAZOCTL${GUESTD:+ and $GUESTD}"
	ASSETS=${TERM_ASSETS:-$BUILD/term-assets}
else
	say "dependencies"
	if [ "$PROVIDER" = docker ]; then
		./packaging/install-deps.sh --docker
	else
		./packaging/install-deps.sh
	fi

	say "build ($BUILD)"
	[ -x configure ] || autoreconf -fi
	mkdir -p "$BUILD"
	if [ ! -f "$BUILD/Makefile" ]; then
		(cd "$BUILD" && "$TOP/configure" -q)
	fi
	make -C "$BUILD" -j"$(nproc)" -s
	RAKAZOCTL="$BUILD/controller/rakazoctl"
	GUESTD="$BUILD/guestd/guestd"
	ASSETS="$BUILD/term-assets"
fi

if [ -n "${RAKAZO_DEMO_DIR:-}" ]; then
	D=$RAKAZO_DEMO_DIR
	KEEP=1
	mkdir -p "$D"
else
	D=$(mktemp -d "${TMPDIR:-/tmp}/rakazo-demo.XXXXXX")
	KEEP=0
fi
chmod 755 "$D"
# guestd serves the terminal page's files as the computer's own user: a
# build tree in a private home (/root is mode 0700) is out of its reach,
# so it gets a copy here, in the demo's dir that user can read.
if [ -d "$ASSETS" ]; then
	rm -rf "$D/term-assets"
	cp -R "$ASSETS" "$D/term-assets"
	chmod -R a+rX "$D/term-assets"
	ASSETS="$D/term-assets"
fi
USER_ARGS=()
# As root the computer gets a uid of its own; RAKAZO_DEMO_USER runs it as
# that existing user instead.
if [ "$(id -u)" -eq 0 ] && [ -n "${RAKAZO_DEMO_USER:-}" ]; then
	USER_ARGS=(--local-uid-range off --guest-user "$RAKAZO_DEMO_USER")
fi

umask 077
head -c 24 /dev/urandom | base64 | tr '+/' '-_' > "$D/api-token"
umask 022

# demo_containers: the containers of this demo's controller (docker):
# team's, with their home under this demo's dir (other controllers on the
# same engine may have a team too).
demo_containers() {
	local c
	for c in $(docker ps -aq --filter label=rakazo.computer=team 2>/dev/null); do
		docker inspect -f '{{range .Mounts}}{{.Source}}{{"\n"}}{{end}}' \
		    "$c" 2>/dev/null | grep -q "^$D/" && echo "$c"
	done
	return 0
}

SERVE_PID=""
DOCKER_USED=0
cleanup() {
	if [ -n "$SERVE_PID" ] && kill -0 "$SERVE_PID" 2>/dev/null; then
		# Stop the computer (its guestd and desktops, or its
		# container) with the controller.
		"$RAKAZOCTL" computer stop team --force >/dev/null 2>&1 || true
		kill -TERM "$SERVE_PID" 2>/dev/null || true
		wait "$SERVE_PID" 2>/dev/null || true
	fi
	if [ "$DOCKER_USED" -eq 1 ]; then
		# A controller that died before the stop leaves its container.
		demo_containers | xargs -r docker rm -f >/dev/null 2>&1 || true
		docker_down || true
	fi
	if [ "$KEEP" -eq 0 ]; then
		rm -rf "$D"
	else
		echo "data kept in $D"
	fi
}
trap cleanup EXIT
trap 'echo; echo "stopping"; exit 0' INT TERM

if [ "$PROVIDER" = docker ]; then
	IMAGE=${RAKAZO_DEMO_IMAGE:-rakazo-computer:demo}
	case $IMAGE in *:*) ;; *) IMAGE=$IMAGE:latest ;; esac
	say "the Docker engine and the computer image $IMAGE"
	# shellcheck source=tests/lib-docker.sh
	. "$TOP/tests/lib-docker.sh"
	rc=0
	docker_up || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "demo: no Docker engine: $DOCKER_WHY" >&2
		exit 1
	fi
	DOCKER_USED=1
	echo "engine: ${DOCKER_HOST:-the default socket}"
	# The build's output goes to a log: the first build takes minutes
	# (debootstrap, Chromium), later ones come from the layer cache.
	if ! docker_image "$IMAGE" 2>"$D/image.log" >/dev/null; then
		echo "demo: the image build failed; the end of its log:" >&2
		tail -n 30 "$D/image.log" >&2
		exit 1
	fi
	grep '^image ' "$D/image.log" || true
fi

say "start the controller (data in $D/data, $PROVIDER provider)"
rm -f "$D/ready"
mkfifo -m 600 "$D/ready"
# setsid: out of the terminal's process group, so Ctrl-C leaves it to
# cleanup() to stop the computer first and the controller after.  (A
# script has no job control: this background child is no group leader, so
# setsid does not fork and $! stays the controller's pid.)
if [ "$PROVIDER" = docker ]; then
	# The engine is DOCKER_HOST's (docker_up exported it for a private
	# one).
	SANDBOX_PROVIDER=docker RAKAZO_COMPUTER_IMAGE="${IMAGE%:*}" \
	RAKAZO_COMPUTER_IMAGE_TAG="${IMAGE##*:}" \
	setsid "$RAKAZOCTL" serve --listen "127.0.0.1:${RAKAZO_DEMO_PORT:-0}" \
	    --data-dir "$D/data" --token-file "$D/api-token" \
	    --ready-file "$D/ready" >"$D/serve.log" 2>&1 &
else
	# guestd serves the terminal page from the copy above.
	GUESTD_TERM_ASSETS="$ASSETS" \
	setsid "$RAKAZOCTL" serve --listen "127.0.0.1:${RAKAZO_DEMO_PORT:-0}" \
	    --data-dir "$D/data" --token-file "$D/api-token" --provider local \
	    --guestd "$GUESTD" --ready-file "$D/ready" \
	    "${USER_ARGS[@]}" >"$D/serve.log" 2>&1 &
fi
SERVE_PID=$!
exec 4<>"$D/ready"
read -t 30 -r PORT <&4 || PORT=""
exec 4<&-
if [ -z "$PORT" ]; then
	echo "the controller did not start; its log:" >&2
	cat "$D/serve.log" >&2
	exit 1
fi
export RAKAZO_URL="http://127.0.0.1:$PORT"
export RAKAZO_API_TOKEN_FILE="$D/api-token"

ctl() {
	printf '$ rakazoctl %s\n' "$*"
	"$RAKAZOCTL" "$@"
}

say "health"
ctl health

say "a computer for the team (it starts on its first tool call)"
ctl computer create team

say "a command on alice's computer"
ctl shell --bot alice -- 'uname -a; id; pwd'

say "file round trip"
head -c 262144 /dev/urandom > "$D/upload.bin"
ctl put --bot alice "$D/upload.bin" upload.bin
ctl get --bot alice upload.bin "$D/download.bin"
if cmp -s "$D/upload.bin" "$D/download.bin"; then
	echo "put/get: 256 KiB came back identical"
else
	echo "put/get: the file came back different" >&2
	exit 1
fi

# has PROGRAM: is PROGRAM installed on alice's computer (this host, or
# the image)?
has() {
	"$RAKAZOCTL" shell --bot alice -- "command -v $1" >/dev/null 2>&1
}

say "alice's desktop"
ctl open alice
names=""
for w in "xterm -geometry 100x30+40+40" "xeyes -geometry 300x200+700+80"; do
	has "${w%% *}" || continue
	ctl shell --bot alice -- "setsid -f $w </dev/null >/dev/null 2>&1"
	names="$names ${w%% *}"
done
# The screenshot once the windows are on screen: each mapped and viewable
# (its WM_NAME is the program's name), at most 10 s each.
if [ -n "$names" ] && has xwininfo; then
	"$RAKAZOCTL" shell --bot alice -- "for w in $names; do i=0
	    until xwininfo -name \$w 2>/dev/null | grep -q IsViewable; do
		i=\$((i + 1)); [ \$i -lt 100 ] ||
		    { echo \"\$w: not on screen after 10 s\"; break; }
		sleep 0.1
	    done; done"
fi
SHOT=${RAKAZO_DEMO_SCREENSHOT:-$D/alice.png}
ctl screenshot --bot alice "$SHOT"
echo "screenshot: $SHOT"

say "watch alice's desktop (view only)"
ctl screen-url --bot alice

say "take control: screen and terminal"
tc=$(ctl take-control --bot alice)
printf '%s\n' "$tc"
screen=$(printf '%s\n' "$tc" | sed -n 's/^screen //p')
token=${screen##*token=}
echo
echo "Watch and control alice's desktop: $screen"
echo "A shell on her computer:           ${screen%%/embed.html*}/term.html?token=$token"

cat <<EOM

Open the two URLs above in a browser on this machine: the first shows
alice's desktop live (noVNC) and takes your mouse and keys, the second is
a terminal (xterm.js) in her computer. The controller API is at $RAKAZO_URL; try, from another shell:

  export RAKAZO_URL=$RAKAZO_URL RAKAZO_API_TOKEN_FILE=$D/api-token
  $RAKAZOCTL computer list
  $RAKAZOCTL activity

Press Ctrl-C to stop the controller and the computer$([ "$KEEP" -eq 0 ] && echo " (the temp data dir is removed)").
EOM
rc=0
wait "$SERVE_PID" || rc=$?
SERVE_PID=""
echo "the controller exited with status $rc; the end of its log:" >&2
tail -n 20 "$D/serve.log" >&2
exit 1

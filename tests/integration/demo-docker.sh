#!/bin/bash
# SPDX-License-Identifier: MIT
# packaging/demo.sh with RAKAZO_DEMO_PROVIDER=docker (issue 15: serve with
# SANDBOX_PROVIDER=docker runs the README's demo with computers as
# containers), with this build's rakazoctl and the computer image built
# from this tree: the demo's computer is one container of that image, its
# desktop runs the xterm and xeyes the demo opened (the screenshot shows
# xterm), the view-only, control and terminal URLs it prints are the
# container's gateway on 127.0.0.1 and answer from this host (the terminal
# runs a shell as uid 1000 in alice's folder), and Ctrl-C (SIGINT to its
# process group, as a terminal sends it) removes the container, stops the
# controller and removes the temp dir.  Skipped (77) only where no Docker
# engine can run.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-docker.sh"
: "${TERMPROBE:?run through make check}"
command -v python3 >/dev/null 2>&1 || { echo "# no python3"; exit 77; }

TAG="rakazo-computer:demo-test-$$"
DEMO=""
C=""
dd_cleanup() {
	rc=$?
	[ -z "$DEMO" ] || kill -KILL -- "-$DEMO" 2>/dev/null
	if [ "${DOCKER_MINE:-0}" -eq 1 ] || docker_answers; then
		if [ -n "$C" ] && docker inspect "$C" >/dev/null 2>&1; then
			if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
				echo "---- container log ----" >&2
				docker logs "$C" 2>&1 | tail -n 30 >&2
			fi
			docker rm -f "$C" >/dev/null 2>&1
		fi
		# Only the tag: its layers are the image other tests use.
		docker rmi "$TAG" >/dev/null 2>&1
	fi
	docker_down
	(exit "$rc")
	t_cleanup
}
trap dd_cleanup EXIT

docker_up
case $? in
0) ;;
77)
	echo "SKIP: ****************************************************" >&2
	echo "SKIP: no Docker here: $DOCKER_WHY" >&2
	echo "SKIP: the docker demo is NOT tested" >&2
	echo "SKIP: ****************************************************" >&2
	exit 77
	;;
*) t_fail "Docker: $DOCKER_WHY" ;;
esac
[ "$(id -u)" -eq 0 ] ||
	{ echo "# SKIP: the docker demo runs as root"; exit 77; }

# The image first, with the test's bound on a build: the demo's own build
# of it is then the layer cache's few seconds.
docker_image "$TAG" >/dev/null 2>"$T/build.log" ||
	t_fail "image build: $(tail -n 30 "$T/build.log")"
t_note "$(grep '^image ' "$T/build.log")"

export RAKAZOCTL
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR"
LOG=$T/demo.log
# Its own session and process group, as a terminal's foreground job, with
# SIGINT not ignored (see demo-ctrl-c.sh).  GUESTD is not needed: the
# image has its own.
setsid env --default-signal=INT -u GUESTD RAKAZO_DEMO_PROVIDER=docker \
    RAKAZO_DEMO_IMAGE="$TAG" bash "$top_srcdir/packaging/demo.sh" \
    </dev/null >"$LOG" 2>&1 &
DEMO=$!

for _ in $(seq 1800); do
	grep -q '^Press Ctrl-C' "$LOG" && break
	kill -0 "$DEMO" 2>/dev/null || break
	sleep 0.1
done
grep -q '^Press Ctrl-C' "$LOG" || { cat "$LOG" >&2; t_fail "the demo did not get ready"; }
D=$(ls -d "$TMPDIR"/rakazo-demo.* 2>/dev/null | head -n 1)
[ -d "$D" ] || t_fail "no demo dir in $TMPDIR"
t_contains "$(cat "$LOG")" "put/get: 256 KiB came back identical" \
    "the file round trip"
t_contains "$(cat "$LOG")" "$TAG" "the demo names its image"

# The computer: one container of the image, its home in the demo's dir.
for c in $(docker ps -q --filter label=rakazo.computer=team); do
	docker inspect -f '{{range .Mounts}}{{.Source}}{{"\n"}}{{end}}' "$c" |
	    grep -q "^$D/" && C="$C $c"
done
C=${C# }
[ -n "$C" ] || t_fail "no container of the demo's computer"
case $C in *" "*) t_fail "more than one container: $C" ;; esac
t_eq "$(docker inspect -f '{{.Config.Image}}' "$C")" "$TAG" "the container's image"
procs=$(docker exec "$C" ps -u user -o comm=)
for p in guestd Xvfb twm xterm xeyes; do
	t_contains "$procs" "$p" "$p in the container"
done
# On this host only the controller: no guestd or desktop of its own.
serve=$(pgrep -f -- "--data-dir $D/data") || t_fail "no controller running"
t_eq "$(pgrep -P "$serve" | wc -l)" 0 "processes the controller started here"

# The screenshot shows xterm at +40+40 (white background; twm's root is
# black): a 20x20 block inside it is all white.
read -r black white < <(python3 "$top_srcdir/tests/fixtures/png-count.py" \
    "$D/alice.png" 300 300 20 20) || t_fail "png-count"
t_eq "$white" 400 "white pixels of xterm in the screenshot ($black black)"

# The URLs it printed: the container's gateway, published on 127.0.0.1.
GW=$(docker port "$C" 6080/tcp | head -n 1)
t_contains "$GW" "127.0.0.1:" "the gateway's published address"
view=$(grep -m1 '^http://.*/embed.html?token=' "$LOG") ||
	t_fail "no view-only URL in the log"
screen=$(sed -n "s/^Watch and control alice's desktop: //p" "$LOG")
term=$(sed -n 's/^A shell on her computer: *//p' "$LOG")
for u in "$view" "$screen" "$term"; do
	t_contains "$u" "http://$GW/" "URL on the container's gateway"
	curl -fsS -m 10 -o "$T/page" "$u" || t_fail "$u does not answer"
done
[ "$view" != "$screen" ] || t_fail "the view-only URL is the control URL"
t_contains "$(curl -fsS -m 10 "$term")" "xterm" "term.html"
t_contains "$(curl -fsS -m 10 "$screen")" "/screen/" "embed.html"
curl -fsS -m 10 -o /dev/null "http://$GW/novnc/core/rfb.js" ||
	t_fail "noVNC through the gateway"
handshake() { # URL: the HTTP status of a websocket handshake to its screen
	curl -s -o /dev/null -w '%{http_code}' -m 5 \
	    -H 'Connection: Upgrade' -H 'Upgrade: websocket' \
	    -H 'Sec-WebSocket-Version: 13' \
	    -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' \
	    "http://$GW/screen/${1##*token=}"
}
t_eq "$(handshake "$view")" 101 "the view-only screen opens"
t_eq "$(handshake "$screen")" 101 "the control screen opens"
r=$("$TERMPROBE" --url "ws://$GW/term/${term##*token=}" <<'SCRIPT'
send echo W""HO=$(id -u)@$PWD\r
grab WHO=
send exit\r
expect-close
SCRIPT
) || t_fail "terminal: $r"
t_contains "$r" "grab WHO=1000@/home/user/rakazo-home/bots/alice" \
    "the terminal's user and folder"

# Ctrl-C: the container, then the controller; the dir goes.
kill -INT -- "-$DEMO"
for _ in $(seq 600); do
	kill -0 "$DEMO" 2>/dev/null || break
	sleep 0.1
done
! kill -0 "$DEMO" 2>/dev/null || t_fail "the demo runs 60 s after SIGINT"
wait "$DEMO" 2>/dev/null
DEMO=""
! docker inspect "$C" >/dev/null 2>&1 ||
	t_fail "the container is left after Ctrl-C: $(docker ps -a --filter "id=$C")"
for p in $serve; do
	[ ! -d "/proc/$p" ] || t_fail "the controller $p runs after Ctrl-C"
done
[ ! -e "$D" ] || t_fail "the demo's data dir $D is still there"
grep -q '^stopping' "$LOG" || t_fail "the demo did not say it was stopping"
docker_answers || t_fail "the demo stopped an engine the test still uses"
echo "ok"

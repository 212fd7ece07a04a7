#!/bin/bash
# SPDX-License-Identifier: MIT
# The computer image (SPEC P-4, issue 15 item 3) really builds and runs:
# image/Dockerfile built on a debootstrap base (tests/lib-docker.sh; cached
# between runs), one container run the way a provider will (the secret a
# read-only file mount, the workspace a named volume, every capability
# dropped, no-new-privileges, a pids limit, guestd's two ports published on
# 127.0.0.1 only), and driven from outside with `rakazoctl guest` only:
# health as uid 1000, exec, a file round trip, a desktop whose window
# manager runs on its display and whose screenshot comes back, an xterm
# whose prompt names the user (uid 1000 through the image's passwd entry;
# a second container as a uid without one through nss_wrapper), a browser
# guestd starts on it, the terminal through the published gateway port,
# the image's HEALTHCHECK going healthy (and unhealthy while guestd is
# stopped), and the workspace surviving a restart.  Every container and volume it made is gone at the end.
# Skipped (77) only where no Docker engine can run at all.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-docker.sh"
: "${TERMPROBE:?run through make check}"
command -v python3 >/dev/null 2>&1 || { echo "# no python3"; exit 77; }

ID="rakazo-test-$$"
LABEL="rakazo-test=$ID"
C="$ID-c"
VOL="$ID-home"

img_cleanup() {
	rc=$?
	if [ "${DOCKER_MINE:-0}" -eq 1 ] || docker_answers; then
		if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
			echo "---- container log ----" >&2
			docker logs "$C" 2>&1 | tail -n 40 >&2
		fi
		docker ps -aq --filter "label=$LABEL" | xargs -r docker rm -f \
		    >/dev/null 2>&1
		docker volume ls -q --filter "label=$LABEL" |
		    xargs -r docker volume rm >/dev/null 2>&1
	fi
	docker_down
	(exit "$rc")
	t_cleanup
}
trap img_cleanup EXIT

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

docker_up
case $? in
0) ;;
77)
	echo "SKIP: ****************************************************" >&2
	echo "SKIP: no Docker here: $DOCKER_WHY" >&2
	echo "SKIP: the computer image is NOT tested" >&2
	echo "SKIP: ****************************************************" >&2
	exit 77
	;;
*) t_fail "Docker: $DOCKER_WHY" ;;
esac

t0=$(now_ms)
IMAGE=$(docker_image 2>"$T/build.log") ||
	t_fail "image build: $(tail -n 30 "$T/build.log")"
t_note "$(grep '^image ' "$T/build.log") ($(($(now_ms) - t0)) ms here)"

# Neither Python nor Node at run time.
r=$(docker run --rm --network none --label "$LABEL" --entrypoint /bin/sh \
    "$IMAGE" -c 'command -v python3 python node nodejs; id -u; echo end')
t_eq "$r" "1000
end" "interpreters or uid in the image"

# The secret: a file only uid 1000 (the workspace user) can read.
t_secret
if [ "$(id -u)" -eq 0 ]; then
	chown 1000:1000 "$SECRET"
	chmod 0400 "$SECRET"
else
	chmod 0444 "$SECRET"	# no chown without root; the test's own dir
fi
docker volume create --label "$LABEL" "$VOL" >/dev/null ||
	t_fail "volume create"

start_ms=$(now_ms)
docker run -d --name "$C" --label "$LABEL" \
    --cap-drop ALL --security-opt no-new-privileges --pids-limit 512 \
    --health-interval 1s --health-start-period 0s --health-timeout 2s \
    --health-retries 1 \
    -p 127.0.0.1::7000 -p 127.0.0.1::6080 \
    -v "$SECRET:/run/secrets/guestd:ro" \
    -v "$VOL:/home/user/rakazo-home" \
    "$IMAGE" >"$T/cid" 2>"$T/run.err" || t_fail "run: $(cat "$T/run.err")"

# Both ports on loopback only.
for p in 7000 6080; do
	b=$(docker port "$C" "$p/tcp") || t_fail "port $p not published"
	t_eq "$(printf '%s\n' "$b" | grep -vc '^127\.0\.0\.1:')" 0 \
	    "port $p bound beyond loopback: $b"
done
CPORT=$(docker port "$C" 7000/tcp | head -n 1 | sed 's/.*://')
GPORT=$(docker port "$C" 6080/tcp | head -n 1 | sed 's/.*://')
URL="ws://127.0.0.1:$CPORT"

# wait_health: guestd answers through the published port (bounded).
wait_health() {
	local _
	for _ in $(seq 1 300); do
		if h=$(rk health 2>/dev/null); then
			return 0
		fi
		[ "$(docker inspect -f '{{.State.Running}}' "$C")" = true ] ||
			t_fail "container exited: $(docker logs "$C" 2>&1 | tail -n 5)"
		sleep 0.1
	done
	t_fail "guestd not ready through 127.0.0.1:$CPORT"
}
wait_health
ready_ms=$(($(now_ms) - start_ms))
t_note "container start to guestd ready: $ready_ms ms"
t_contains "$h" '"state":"ok"' "health"

# exec as the workspace user, in the workspace.
r=$(rk exec -- 'echo "$(id -u):$(id -un):$PWD"') || t_fail "exec: $r"
t_contains "$r" "1000:user:/home/user/rakazo-home" "exec identity"
# uid 1000 has the image's passwd entry: its own name, no nss_wrapper.
r=$(rk exec -- 'echo "$(whoami) $(id -un)"; getent passwd "$(id -u)";
    echo "P=$LD_PRELOAD"') || t_fail "names: $r"
t_eq "$r" "user user
user:x:1000:1000::/home/user:/bin/bash
P=" "names of uid 1000"
r=$(rk exec -- 'grep ^CapEff /proc/self/status') || t_fail "caps: $r"
t_contains "$r" "0000000000000000" "capabilities in the container"

# A file round trip, and the file is in the workspace volume.
head -c 300000 /dev/urandom > "$T/blob"
rk put "$T/blob" data/blob --parents >/dev/null || t_fail "put"
rk get data/blob "$T/blob.back" >/dev/null || t_fail "get"
cmp -s "$T/blob" "$T/blob.back" || t_fail "round trip changed the file"
r=$(rk exec -- sha256sum data/blob | cut -d' ' -f1)
t_eq "$r" "$(sha256sum "$T/blob" | cut -d' ' -f1)" "file inside"

# A desktop: Xvfb and the image's window manager (twm) on it.
r=$(rk open alice) || t_fail "open: $r"
slot=$(printf '%s' "$r" | sed -n 's/.*"slot":\([0-9]*\).*/\1/p')
[ -n "$slot" ] || t_fail "no slot in $r"
wm=""
for _ in $(seq 100); do
	wm=$(rk exec -- "for p in /proc/[0-9]*; do
	    [ \"\$(cat \$p/comm 2>/dev/null)\" = twm ] &&
	    tr '\\0' '\\n' < \$p/environ | grep -qx DISPLAY=:$slot &&
	    echo twm; done; true")
	[ -n "$wm" ] && break
	sleep 0.1
done
t_eq "$wm" "twm" "window manager on :$slot"

# xterm_prompt BOT USER: an xterm on BOT's desktop, started as an agent
# starts one; its print action, bound to F5 (pressed through act), writes
# its screen to screen.txt; prints the first prompt on it (bounded).
xterm_prompt() {
	local _ r
	r=$(rk call exec "{\"bot\":\"$1\",\"command\":\"setsid -f xterm -geometry 80x24+0+0 -xrm 'XTerm*printerCommand: cat >screen.txt' -xrm 'XTerm*printAttributes: 0' -xrm 'XTerm*VT100.translations: #override <Key>F5: print()' >/dev/null 2>&1 </dev/null\"}") ||
		t_fail "xterm: $r"
	for _ in $(seq 100); do
		rk act "$1" '[{"kind":"move","x":200,"y":150},{"kind":"key","keys":"F5"}]' \
		    >/dev/null 2>&1
		r=$(rk exec -- "grep '\\\$ *\$' bots/$1/screen.txt 2>/dev/null" |
		    head -n 1 | sed 's/ *$//')
		[ -n "$r" ] && { printf '%s\n' "$r"; return 0; }
		sleep 0.1
	done
	t_fail "no prompt on $1's xterm"
}
host=$(rk exec -- hostname) || t_fail "hostname"
r=$(xterm_prompt alice)
t_note "xterm's prompt: $r"
t_eq "$r" "user@$host:~/bots/alice\$" "xterm's prompt as uid 1000"

# The browser guestd starts on that desktop (the image's Chromium through
# its wrapper), driven over CDP: it loads Debian's noVNC page from the
# gateway inside the container.  Then the screenshot shows its window in
# twm's frame: twm's title bar (black and white stripes) across the top
# rows, where Chromium alone would draw its light tab strip.
rk screenshot alice -o "$T/empty.png" --png >"$T/shot0.json" ||
	t_fail "screenshot: $(cat "$T/shot0.json")"
r=$(rk browser alice 'http://127.0.0.1:6080/novnc/vnc.html' 2>&1) ||
	t_fail "browser: $r"
r=$(rk page-snapshot alice 2>&1) || t_fail "page-snapshot: $r"
t_contains "$r" '"title":"noVNC"' "page in the container's browser"
rk screenshot alice -o "$T/desk.png" --png >"$T/shot.json" ||
	t_fail "screenshot: $(cat "$T/shot.json")"
t_contains "$(cat "$T/shot.json")" '"width":1280' "screenshot size"
cmp -s "$T/empty.png" "$T/desk.png" && t_fail "browser window not on screen"
read -r black white < <(python3 "$top_srcdir/tests/fixtures/png-count.py" \
    "$T/desk.png" 0 0 400 5) || t_fail "png-count"
t_note "title strip: $black black, $white white pixels"
[ "$black" -ge 100 ] && [ "$white" -ge 100 ] ||
	t_fail "no twm title bar over the browser window ($black black, $white white)"
r=$(rk exec -- 'ps -o args= -u user | grep -c -- "--no-sandbox" || true')
t_note "browser processes with --no-sandbox: $r"

# The terminal, from outside through the published gateway port.
g=$(rk call capability.grant '{"bot":"alice","policy":"control"}') ||
	t_fail "grant: $g"
tok=$(printf '%s' "$g" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
r=$(curl -fsS "http://127.0.0.1:$GPORT/term.html?token=$tok") ||
	t_fail "term.html through 127.0.0.1:$GPORT"
t_contains "$r" "xterm" "term.html"
curl -fsS -o /dev/null "http://127.0.0.1:$GPORT/xterm/xterm.js" ||
	t_fail "xterm.js through the gateway"
curl -fsS -o /dev/null "http://127.0.0.1:$GPORT/novnc/core/rfb.js" ||
	t_fail "Debian's noVNC through the gateway"
r=$("$TERMPROBE" --url "ws://127.0.0.1:$GPORT/term/$tok" <<'SCRIPT'
send echo W""HO=$(id -u)@$(hostname -s)@$PWD\r
grab WHO=
send exit\r
expect-close
SCRIPT
) || t_fail "terminal: $r"
t_contains "$r" "grab WHO=1000@" "terminal user"
t_contains "$r" "/home/user/rakazo-home/bots/alice" "terminal cwd"

# The image's own HEALTHCHECK (its command; interval, timeout and retries
# are the test's, to be quick).
st=""
for _ in $(seq 300); do
	st=$(docker inspect -f '{{.State.Health.Status}}' "$C")
	[ "$st" = healthy ] && break
	sleep 0.1
done
t_eq "$st" healthy "HEALTHCHECK"
# ...and it is honest: a guestd that stops answering makes it unhealthy,
# and healthy again once it answers.
health_is() {	# status: wait (bounded) for it
	for _ in $(seq 300); do
		st=$(docker inspect -f '{{.State.Health.Status}}' "$C")
		[ "$st" = "$1" ] && return 0
		sleep 0.1
	done
	t_fail "HEALTHCHECK: $st, want $1"
}
gpid=$(docker exec "$C" pgrep -x guestd) || t_fail "no guestd in $C"
docker exec "$C" kill -STOP "$gpid" || t_fail "stop guestd"
health_is unhealthy
docker exec "$C" kill -CONT "$gpid" || t_fail "continue guestd"
health_is healthy

# The workspace is the volume: it survives a restart.
docker restart -t 10 "$C" >/dev/null || t_fail "restart"
CPORT=$(docker port "$C" 7000/tcp | head -n 1 | sed 's/.*://')
URL="ws://127.0.0.1:$CPORT"
wait_health
r=$(rk exec -- sha256sum data/blob | cut -d' ' -f1)
t_eq "$r" "$(sha256sum "$T/blob" | cut -d' ' -f1)" "file after restart"

# A uid without a passwd entry (a platform that picks the container's
# uid): guestd names it "rakazo", its home the workspace, through the
# image's nss_wrapper, for commands and for an xterm on the desktop.
U2=4242
cp "$SECRET" "$T/secret-$U2"
if [ "$(id -u)" -eq 0 ]; then
	chown "$U2:$U2" "$T/secret-$U2"
	chmod 0400 "$T/secret-$U2"
else
	chmod 0444 "$T/secret-$U2"
fi
docker run -d --name "$C-u" --label "$LABEL" --user "$U2:$U2" \
    --cap-drop ALL --security-opt no-new-privileges --pids-limit 512 \
    -p 127.0.0.1::7000 \
    --tmpfs "/home/user/rakazo-home:uid=$U2,gid=$U2,mode=0700" \
    -v "$T/secret-$U2:/run/secrets/guestd:ro" \
    "$IMAGE" >/dev/null 2>"$T/run-u.err" ||
	t_fail "run as $U2: $(cat "$T/run-u.err")"
C1=$C URL1=$URL SECRET1=$SECRET
C="$C-u" SECRET="$T/secret-$U2"
URL="ws://127.0.0.1:$(docker port "$C" 7000/tcp | head -n 1 | sed 's/.*://')"
wait_health
r=$(rk exec -- 'echo "$(whoami) $(id -un)"; getent passwd "$(id -u)"') ||
	t_fail "names as $U2: $r"
t_eq "$r" "rakazo rakazo
rakazo:x:$U2:$U2:rakazo:/home/user/rakazo-home:/bin/bash" "names of uid $U2"
r=$(rk open alice) || t_fail "open as $U2: $r"
host=$(rk exec -- hostname) || t_fail "hostname"
r=$(xterm_prompt alice)
t_note "xterm's prompt as $U2: $r"
t_eq "$r" "rakazo@$host:~/bots/alice\$" "xterm's prompt as uid $U2"
docker rm -f "$C" >/dev/null || t_fail "rm $C"
C=$C1 URL=$URL1 SECRET=$SECRET1

# Stop and remove; nothing of ours is left.
docker rm -f "$C" >/dev/null || t_fail "rm"
docker volume rm "$VOL" >/dev/null || t_fail "volume rm"
t_eq "$(docker ps -aq --filter "label=$LABEL")" "" "containers left"
t_eq "$(docker volume ls -q --filter "label=$LABEL")" "" "volumes left"
t_eq "$(docker network ls -q --filter "label=$LABEL")" "" "networks left"
echo "ok: image $IMAGE, ready in $ready_ms ms"

#!/bin/bash
# SPDX-License-Identifier: MIT
# The docker provider against a real Docker engine (SPEC P-2, issue 15 item
# 4): `rakazoctl serve --provider docker` runs computers as containers of
# the computer image, built on the debootstrap base (tests/lib-docker.sh).
# Two bots of one computer open desktops and browsers in parallel with
# independent cookies; a bot's login survives a stop (a new container on
# the same home); an old screen token is refused once its desktop's slot is
# reused; the gateway and the terminal work from outside through the
# published port, on 127.0.0.1 only; the container is uid 1000 without
# capabilities and its secret is nowhere in its environment or labels;
# killing the container by hand is noticed as gone and the next call gets
# a new one; `computer stop` and `computer delete` leave no container,
# volume or network behind; an engine that does not answer is a setup
# failure of /internal/health.  Skipped (77) only where no Docker engine
# can run at all.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-browser.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
[ -f "${top_srcdir:-.}/tests/lib-docker.sh" ] || {
	echo "SKIP: ****************************************************" >&2
	echo "SKIP: no tests/lib-docker.sh in this tree: the docker provider" >&2
	echo "SKIP: is NOT tested" >&2
	echo "SKIP: ****************************************************" >&2
	exit 77
}
. "${top_srcdir:-.}/tests/lib-docker.sh"
: "${TERMPROBE:?run through make check}"

INST=""
dr_cleanup() {
	rc=$?
	if [ -n "$INST" ] && docker_answers; then
		if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
			for c in $(docker ps -aq --filter \
			    "label=rakazo.instance=$INST"); do
				echo "---- docker logs $c ----" >&2
				docker logs "$c" 2>&1 | tail -n 30 >&2
			done
		fi
		docker ps -aq --filter "label=rakazo.instance=$INST" |
		    xargs -r docker rm -f >/dev/null 2>&1
	fi
	ctl_stop
	docker_down
	(exit "$rc")
	ctl_cleanup
}
trap dr_cleanup EXIT

docker_up
case $? in
0) ;;
77)
	echo "SKIP: ****************************************************" >&2
	echo "SKIP: no Docker here: $DOCKER_WHY" >&2
	echo "SKIP: the docker provider is NOT tested" >&2
	echo "SKIP: ****************************************************" >&2
	exit 77
	;;
*) t_fail "Docker: $DOCKER_WHY" ;;
esac
[ "$(id -u)" -eq 0 ] ||
	{ echo "# SKIP: the container's user reads its home as root hands it"; exit 77; }

IMAGE=$(docker_image 2>"$T/build.log") ||
	t_fail "image build: $(tail -n 30 "$T/build.log")"

tool() { # TOOL JSON: POST /v1/tools/TOOL on computer team
	api POST "/v1/tools/$1" "$(printf '%s' "$2" |
	    jq -c '. + {computer: "team"}')"
}
# runs_ended REASON: how many of team's runs ended so.
runs_ended() {
	api GET /v1/computers/team/runs >/dev/null
	jq "[.runs[] | select(.endReason == \"$1\")] | length" "$T/api.out"
}
# ours: our containers (by the instance label), volumes and networks.
ours() {
	docker ps -aq --filter "label=rakazo.instance=$INST"
	docker volume ls -q --filter "name=rakazo-$INST-"
	docker network ls -q --filter "label=rakazo.instance=$INST"
}

# The site the browsers log in to, on the bridge's own address: the
# containers reach it, nothing beyond this host does.
BRIDGE=$(docker network inspect bridge -f '{{range .IPAM.Config}}{{.Gateway}}{{end}}')
if [ -z "$BRIDGE" ]; then
	# An engine that found its bridge already up (Debian's 20.10 after
	# a restart) names no gateway: it is the bridge interface's address.
	dev=$(docker network inspect bridge \
	    -f '{{index .Options "com.docker.network.bridge.name"}}')
	BRIDGE=$(ip -4 -o addr show dev "${dev:-docker0}" 2>/dev/null |
	    awk '{ sub("/.*", "", $4); print $4; exit }')
fi
[ -n "$BRIDGE" ] || t_fail "no address of the bridge network"
FIXTURE_BIND=$BRIDGE tb_fixture site site
SITE="http://$BRIDGE:$site_PORT"

ctl_start --provider docker --image "${IMAGE%:*}" --image-tag "${IMAGE##*:}" \
    --reconcile-ms 600000
h=$(curl -s "$CTL_URL/internal/health")
t_contains "$h" '"sandbox":"docker"' "health names the provider"
t_contains "$h" '"state":"ok"' "health ok with an engine"
t_contains "$h" '"isolation":"container"' "isolation"

r=$(api POST /v1/computers '{"id":"team"}')
t_contains "$r" "201 " "computer created"

# Two bots at once: desktops, browsers, logins of their own.
tool browser_navigate "{\"bot\":\"alice\",\"url\":\"$SITE/login?u=alice\"}" \
    >"$T/a.out" &
pa=$!
tool browser_navigate "{\"bot\":\"bob\",\"url\":\"$SITE/login?u=bob\"}" \
    >"$T/b.out" &
pb=$!
wait $pa
wait $pb
t_contains "$(cat "$T/a.out")" "200 " "alice's browser"
t_contains "$(cat "$T/b.out")" "200 " "bob's browser"
# The container of this test's team computer: other tests on the same
# engine (demo-docker.sh) may run a "team" of their own at the same time,
# so it is the one whose mounts come from this test's data directory.
own_team() {
	for c in $(docker ps -q --filter "label=rakazo.computer=team"); do
		docker inspect -f '{{range .Mounts}}{{.Source}} {{end}}' "$c" |
		    grep -q -- "$CTL_DATA" && { echo "$c"; return; }
	done
}
C=$(own_team)
[ -n "$C" ] || t_fail "no container labelled for team"
INST=$(docker inspect -f '{{index .Config.Labels "rakazo.instance"}}' "$C")
[ "$(docker ps -q --filter "label=rakazo.instance=$INST" | wc -l)" -eq 1 ] ||
	t_fail "two starts at once made two containers"
for b in alice bob; do
	tool browser_navigate "{\"bot\":\"$b\",\"url\":\"$SITE/whoami\"}" \
	    >/dev/null
	r=$(tool browser_snapshot "{\"bot\":\"$b\"}")
	t_contains "$r" "user is $b" "$b's own cookie"
done

# The container: uid 1000, no capabilities, no-new-privileges, limits,
# ports on loopback only, the secret a file and in no env or label.
t_eq "$(docker inspect -f '{{.Config.User}}' "$C")" "1000:1000" "user"
t_eq "$(docker inspect -f '{{json .HostConfig.CapDrop}}' "$C")" '["ALL"]' \
    "capabilities dropped"
t_contains "$(docker inspect -f '{{json .HostConfig.SecurityOpt}}' "$C")" \
    "no-new-privileges" "no-new-privileges"
[ "$(docker inspect -f '{{.HostConfig.PidsLimit}}' "$C")" -gt 0 ] ||
	t_fail "no pids limit"
[ "$(docker inspect -f '{{.HostConfig.Memory}}' "$C")" -gt 0 ] ||
	t_fail "no memory limit"
t_eq "$(docker inspect -f '{{.HostConfig.NetworkMode}}' "$C")" bridge \
    "not the host's network"
for p in 7000 6080; do
	b=$(docker port "$C" "$p/tcp") || t_fail "port $p not published"
	t_eq "$(printf '%s\n' "$b" | grep -vc '^127\.0\.0\.1:')" 0 \
	    "port $p beyond loopback: $b"
done
secret=$(cat "$CTL_DATA/computers/team/secret")
t_eq "$(stat -c '%a %u' "$CTL_DATA/computers/team/secret")" "400 1000" \
    "secret file mode and owner"
t_not_contains "$(docker inspect "$C")" "$secret" "secret in the inspect"
r=$(tool shell '{"bot":"alice","command":"id -u; grep ^CapEff /proc/self/status"}')
t_contains "$r" '1000\n' "commands as uid 1000"
t_contains "$r" "0000000000000000" "no capabilities inside"

# The gateway and the terminal, from outside through the published port.
r=$(tool terminal_url '{"bot":"alice"}')
t_contains "$r" "200 " "terminal_url"
turl=$(api_field terminal_url)
GW=$(docker port "$C" 6080/tcp | head -n 1)
t_contains "$turl" "ws://$GW/term/" "terminal on the published port"
r=$("$TERMPROBE" --url "$turl" <<'SCRIPT'
send echo W""HO=$(id -u)@$PWD\r
grab WHO=
send exit\r
expect-close
SCRIPT
) || t_fail "terminal: $r"
t_contains "$r" "grab WHO=1000@/home/user/rakazo-home/bots/alice" \
    "terminal user and folder"

# An old screen token is refused once its desktop's slot is reused.
r=$(tool screen_url '{"bot":"alice"}')
t_contains "$r" "200 " "screen_url"
old=$(api_field url)
handshake() { # URL: the HTTP status of a websocket handshake to it
	curl -s -o /dev/null -w '%{http_code}' -m 5 \
	    -H 'Connection: Upgrade' -H 'Upgrade: websocket' \
	    -H 'Sec-WebSocket-Version: 13' \
	    -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' \
	    "http${1#ws}"
}
t_eq "$(handshake "$old")" 101 "a live screen token opens"
gcall() { # OP JSON: straight to the container's guestd, as serve does
	"$RAKAZOCTL" guest --timeout 45000 \
	    --url "ws://$(docker port "$C" 7000/tcp | head -n 1)" \
	    --secret-file "$CTL_DATA/computers/team/secret" call "$1" "$2"
}
da=$(gcall display.list '{}' | jq -r '.displays[] | select(.bot == "alice")
    | .display') || t_fail "display.list"
[ -n "$da" ] || t_fail "no desktop of alice's listed"
gcall browser.close '{"bot":"alice"}' >/dev/null || t_fail "browser.close"
gcall display.close '{"bot":"alice"}' >/dev/null || t_fail "display.close"
dc=$(gcall display.open '{"bot":"carol"}' | jq -r .display) ||
	t_fail "carol's desktop"
t_eq "$dc" "$da" "carol's desktop reuses alice's slot"
[ "$(handshake "$old")" != 101 ] || t_fail "the old token opens a reused slot"

# A login survives a stop: a new container on the same home.
ctl computer stop team >/dev/null || t_fail "computer stop"
t_eq "$(ours)" "" "containers, volumes or networks left by a stop"
tool browser_navigate "{\"bot\":\"alice\",\"url\":\"$SITE/whoami\"}" \
    >/dev/null
r=$(tool browser_snapshot '{"bot":"alice"}')
t_contains "$r" "user is alice" "alice's login after a new container"
C2=$(own_team)
[ -n "$C2" ] && [ "$C2" != "$C" ] || t_fail "no new container after stop"

# Killed by hand: the next call notices, the run ends gone and the call
# gets its computer back: the stopped container starts again.  (The
# reconciler would close the run first, as reconciled: its period is long
# here.)
gone0=$(runs_ended gone)
docker kill "$C2" >/dev/null || t_fail "docker kill"
r=$(tool shell '{"bot":"alice","command":"echo back"}')
t_contains "$r" 'back\n' "the next call after the kill"
t_eq "$(runs_ended gone)" $((gone0 + 1)) "the killed container's run ended gone"
C3=$(own_team)
[ -n "$C3" ] || t_fail "no container after the kill"

# Delete: nothing of ours is left, the home neither.
ctl computer delete team --force >/dev/null || t_fail "computer delete"
t_eq "$(ours)" "" "containers, volumes or networks left by a delete"
[ ! -e "$CTL_DATA/computers/team" ] || t_fail "the computer's directory left"

# An engine that does not answer: a setup failure.
ctl_stop
DOCKER_HOST="unix://$T/no-engine.sock" ctl_start --provider docker
r=$(curl -s -w ' %{http_code}' "$CTL_URL/internal/health")
t_contains "$r" '"state":"degraded"' "health without an engine"
t_contains "$r" '"setup":{"code":"CONNECT_FAILED"' "the setup failure"
t_contains "$r" " 503" "health status without an engine"
echo "ok: image $IMAGE"

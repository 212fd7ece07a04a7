# SPDX-License-Identifier: MIT
# Helpers for the browser tests (sourced after tests/lib.sh): a real
# Chromium on a real Xvfb, fixture pages served on loopback by
# tests/fixtures/browser-fixture.py, JSON picked apart with jq.  Readiness
# of the fixtures is a FIFO they write their port into: no sleeps.

command -v "${GUESTD_BROWSER:-chromium}" >/dev/null 2>&1 || {
	echo "# SKIP: no chromium (packaging/install-deps.sh installs it)"
	exit 77
}
command -v Xvfb >/dev/null 2>&1 || { echo "# SKIP: no Xvfb"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "# SKIP: no python3"; exit 77; }
command -v jq >/dev/null 2>&1 || { echo "# SKIP: no jq"; exit 77; }

# guestd gives a browser 30 s to come up (BROWSER_START_MS); the client
# waits longer than that, so a slow first start on a loaded machine is
# guestd's answer, not the client's 10 s default running out.
rk() {
	"$RAKAZOCTL" guest --timeout 45000 --url "$URL" --secret-file "$SECRET" "$@"
}

TB_FIX="$top_srcdir/tests/fixtures/browser-fixture.py"
# Each test uses its own DevTools ports and desktops (GUESTD_CDP_BASE and
# GUESTD_DISPLAY_FIRST from its slot, tests/lib.sh): away from other
# tests', from a browser someone runs by hand on 9222 and from the
# ephemeral ports (32768 and up) that any connection here may hold.

# tb_fixture NAME MODE [ARGS...]: start a fixture; sets NAME_PORT.
tb_fixture() {
	name=$1
	mode=$2
	shift 2
	mkfifo "$T/$name.port"
	python3 "$TB_FIX" "$mode" "$T/$name.port" "$T/$name.log" "$@" &
	T_KILL="$T_KILL $!"
	exec 5<>"$T/$name.port"
	read -t 20 -r port <&5 || port=""
	exec 5<&-
	[ -n "$port" ] || t_fail "fixture $name did not start"
	touch "$T/$name.log"
	eval "${name}_PORT=$port"
}

# Fail the whole test, also from inside $(...): the subshell's exit alone
# would be lost, so the main shell is told as well.
tb_die() {
	echo "FAIL: $*" >&2
	kill -TERM $$
	exit 1
}

# tb_call OP JSON: one request; prints the result, or fails the test.
tb_call() {
	rk call "$1" "$2" 2>"$T/call.err" || tb_die "$1 $2: $(cat "$T/call.err")"
}

# tb_err OP JSON: a request that must fail; prints rakazoctl's error line.
tb_err() {
	if rk call "$1" "$2" >"$T/call.out" 2>"$T/call.err"; then
		tb_die "$1 should have failed: $(cat "$T/call.out")"
	fi
	cat "$T/call.err"
}

# tb_ref SNAPSHOT NAME: the ref of the element with that name.
tb_ref() {
	printf '%s' "$1" | jq -r --arg n "$2" \
	    '[.elements[] | select(.name == $n) | .ref][0] // empty'
}

# tb_wait_log FILE PATTERN: wait (bounded) until FILE has a line matching.
tb_wait_log() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -lt 200 ] || t_fail "no '$2' in $1"
		sleep 0.05
	done
}

# tb_wait_file FILE [SECONDS]: wait until FILE exists (bounded).
tb_wait_file() {
	i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		[ "$i" -lt $(( ${2:-10} * 20 )) ] || t_fail "no $1"
		sleep 0.05
	done
}

# Browser processes of the test user with this test's workspace.
tb_browser_pids() {
	pgrep -f -- "--user-data-dir=$WS/.browser-profiles/$1" || true
}

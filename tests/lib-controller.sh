# SPDX-License-Identifier: MIT
# Controller helpers for integration tests (sourced after lib.sh): a
# private `rakazoctl serve` on an ephemeral loopback port with its own data
# directory and API token, the local provider starting the real guestd.
# Readiness is a FIFO the controller writes its port into: no sleeps.
# On exit the controller and every guestd it started (found by this test's
# private data directory in their command lines) are stopped.
#
# RAKAZO_TEST_STORE=postgres (`make check-postgres`) runs the same test
# against a PostgreSQL cluster of its own (tests/lib-postgres.sh): every
# controller the test starts shares that database (DATABASE_URL, so the
# password stays out of command lines), and the cluster goes at exit.

CTL_DATA="$T/data"
# The guestd the provider starts inherits this test's display slots
# (GUESTD_DISPLAY_FIRST, tests/lib.sh).  As root each computer gets a uid
# of its own: a range of this test's slot, so parallel tests (each with
# its own store) never hand out the same uid.
: "${LOCAL_UID_RANGE:=$((200000 + T_SLOT * 100))-$((200099 + T_SLOT * 100))}"
export LOCAL_UID_RANGE
# Not root: every computer runs as the test's user, which serve refuses
# for a second computer unless told (tests/hostile/shared-user.sh).
if [ "$(id -u)" -ne 0 ]; then
	: "${RAKAZO_ALLOW_SHARED_USER:=1}"
	export RAKAZO_ALLOW_SHARED_USER
fi
CTL_TOKEN="$T/api-token"
CTL_LOG="$T/serve.log"
CTL_PID=""
head -c 24 /dev/urandom | base64 | tr '+/' '-_' > "$CTL_TOKEN"
chmod 600 "$CTL_TOKEN"

ctl_cleanup() {
	rc=$?
	ctl_stop
	for d in /proc/[0-9]*; do
		if { tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null |
		    grep -q -- "--workspace $CTL_DATA/computers/"; then
			kill "${d#/proc/}" 2>/dev/null
		fi
	done
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
		echo "---- serve log ----" >&2
		cat "$CTL_LOG" >&2 2>/dev/null
		for l in "$CTL_DATA"/computers/*/guestd.log; do
			[ -f "$l" ] || continue
			echo "---- $l ----" >&2
			tail -20 "$l" >&2
		done
	fi
	[ -z "${PG_DIR:-}" ] || pg_stop
	(exit "$rc")
	t_cleanup
}
trap ctl_cleanup EXIT

CTL_STORE=""
if [ "${RAKAZO_TEST_STORE:-sqlite}" = postgres ]; then
	. "$top_srcdir/tests/lib-postgres.sh"
	pg_available || {
		echo "# RAKAZO_TEST_STORE=postgres: no PostgreSQL server"
		exit 77
	}
	pg_start || t_fail "the PostgreSQL cluster did not start"
	CTL_STORE=$PG_URL
fi

# ctl_sql SQL: one statement on the state store this test runs against
# (SQLite's state.db, or the PostgreSQL cluster); prints the rows.
ctl_sql() {
	if [ -n "$CTL_STORE" ]; then
		pg_sql "$1"
	else
		sqlite3 "$CTL_DATA/state.db" "$1"
	fi
}

# ctl_serve NAME LOG [serve args...]: a rakazoctl serve on this test's
# data directory (several may share it, C-2); waits until it listens and
# sets SERVE_PID and SERVE_PORT ("" when it did not start).
ctl_serve() {
	_ready="$T/$1-ready"
	_log=$2
	shift 2
	rm -f "$_ready"
	mkfifo "$_ready"
	DATABASE_URL=$CTL_STORE \
	"$RAKAZOCTL" serve --listen 127.0.0.1:0 --data-dir "$CTL_DATA" \
	    --token-file "$CTL_TOKEN" --guestd "$GUESTD" \
	    --ready-file "$_ready" --log-level debug "$@" >>"$_log" 2>&1 &
	SERVE_PID=$!
	exec 5<>"$_ready"
	read -t 30 -r SERVE_PORT <&5 || SERVE_PORT=""
	exec 5<&-
}

# ctl_start [serve args...]: start the controller and wait until it listens.
ctl_start() {
	ctl_serve ctl "$CTL_LOG" "$@"
	CTL_PID=$SERVE_PID
	CTL_PORT=$SERVE_PORT
	[ -n "$CTL_PORT" ] || t_fail "rakazoctl serve did not start"
	CTL_URL="http://127.0.0.1:$CTL_PORT"
	export CTL_URL CTL_PORT
}

ctl_stop() {
	if [ -n "$CTL_PID" ] && kill -0 "$CTL_PID" 2>/dev/null; then
		kill "$CTL_PID" 2>/dev/null
		wait "$CTL_PID" 2>/dev/null
	fi
	CTL_PID=""
}

# ctl ARGS...: a rakazoctl verb against this test's controller.
ctl() {
	RAKAZO_URL="$CTL_URL" RAKAZO_API_TOKEN_FILE="$CTL_TOKEN" \
	    "$RAKAZOCTL" "$@"
}

# api METHOD PATH [JSON]: raw HTTP; prints "STATUS BODY".
api() {
	curl -s -o "$T/api.out" -w '%{http_code}' -X "$1" \
	    -H "Authorization: Bearer $(cat "$CTL_TOKEN")" \
	    -H 'Content-Type: application/json' \
	    ${3+--data-binary "$3"} "$CTL_URL$2" > "$T/api.code"
	printf '%s %s\n' "$(cat "$T/api.code")" "$(cat "$T/api.out")"
}

# A JSON field of the last api reply (jq-free: python3 is in the image).
api_field() {
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d=d[int(k)] if isinstance(d,list) else d.get(k)
print("" if d is None else (json.dumps(d) if isinstance(d,(dict,list)) else d))' "$T/api.out" "$1"
}

# Number of activity events of computer $1.
ctl_events() {
	api GET "/v1/computers/$1/activity?limit=1000" >/dev/null
	python3 -c 'import json,sys
print(len(json.load(open(sys.argv[1]))["events"]))' "$T/api.out"
}

# ctl_guest COMPUTER OP [JSON]: a control-channel call straight to the
# computer's guestd, as the controller makes it; prints the reply or error.
ctl_guest() {
	_gp=$(sed -n 's/.*event=guestd.listening.* port=\([0-9]*\).*/\1/p' \
	    "$CTL_DATA/computers/$1/guestd.log" | tail -1)
	[ -n "$_gp" ] || t_fail "no guestd port in the log of $1"
	"$RAKAZOCTL" guest --url "ws://127.0.0.1:$_gp" \
	    --secret-file "$CTL_DATA/computers/$1/secret" call "$2" \
	    "${3:-{\}}" 2>&1
}

# ctl_wait_log PATTERN COUNT [SECONDS]: wait until the serve log has COUNT
# lines matching PATTERN (a condition, bounded; not a sleep).
ctl_wait_log() {
	_i=0
	while [ "$(grep -c -- "$1" "$CTL_LOG")" -lt "$2" ]; do
		_i=$((_i + 1))
		[ "$_i" -le $(( ${3:-10} * 20 )) ] ||
		    t_fail "no \"$1\" (x$2) in the serve log"
		sleep 0.05
	done
}

# SPDX-License-Identifier: MIT
# A throwaway PostgreSQL cluster for a test (sourced after lib.sh): initdb
# in a private directory, the server on an ephemeral loopback port (no
# other interface, its socket in that directory), password authentication,
# one database.  initdb refuses root, so as root the cluster runs as an
# unprivileged user (PG_TEST_USER, default nobody) through setpriv.
# pg_start sets PG_URL; pg_stop (called by ctl_cleanup, or by the test)
# stops the server and removes everything.  Waits are pg_ctl's own -w
# (it polls the server's readiness, bounded by -t), never sleeps.
#
# pg_available: 0 when the server binaries are installed (else tests exit 77).

PG_BIN=""
for _d in /usr/lib/postgresql/*/bin; do
	[ -x "$_d/initdb" ] && PG_BIN=$_d
done
PG_DIR=""
PG_URL=""
PG_PORT=""
PG_PASS=""
: "${PG_TEST_USER:=nobody}"

pg_available() {
	[ -n "$PG_BIN" ]
}

# pg_as CMD...: run a server binary as the cluster's owner.
pg_as() {
	if [ "$(id -u)" -eq 0 ]; then
		setpriv --reuid "$PG_TEST_USER" --regid \
		    "$(id -g "$PG_TEST_USER")" --clear-groups -- "$@"
	else
		"$@"
	fi
}

# A loopback port nobody listens on now (the kernel's pick).
pg_free_port() {
	python3 -c 'import socket
s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# pg_ctl_start: start the server of PG_DIR on PG_PORT and wait until it
# accepts connections (pg_ctl -w, bounded by -t 60).
pg_ctl_start() {
	pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" \
	    -w -t 60 -o "-c listen_addresses=127.0.0.1 -p $PG_PORT \
	    -c unix_socket_directories=$PG_DIR -c fsync=off \
	    -c max_connections=200" start >/dev/null
}

pg_start() {
	pg_available || return 1
	PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/rakazo-pg.XXXXXX")
	chmod 755 "$PG_DIR"
	PG_PASS=$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')
	printf '%s\n' "$PG_PASS" > "$PG_DIR/pw"
	if [ "$(id -u)" -eq 0 ]; then
		chown "$PG_TEST_USER" "$PG_DIR" "$PG_DIR/pw"
	fi
	chmod 600 "$PG_DIR/pw"
	pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -U rakazo -E UTF8 \
	    --no-sync --auth=scram-sha-256 --pwfile="$PG_DIR/pw" \
	    >"$PG_DIR/initdb.log" 2>&1 || {
		cat "$PG_DIR/initdb.log" >&2
		return 1
	}
	# A port taken between the pick and the bind: pick again.
	_n=0
	while :; do
		PG_PORT=$(pg_free_port)
		pg_ctl_start && break
		_n=$((_n + 1))
		[ "$_n" -lt 3 ] || { cat "$PG_DIR/server.log" >&2; return 1; }
	done
	PGPASSWORD=$PG_PASS "$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" \
	    -U rakazo rakazo || return 1
	PG_URL="postgres://rakazo:$PG_PASS@127.0.0.1:$PG_PORT/rakazo"
	export PG_URL
}

# pg_sql SQL: one statement through psql; prints unaligned rows.
pg_sql() {
	PGPASSWORD=$PG_PASS "$PG_BIN/psql" -X -q -At -h 127.0.0.1 \
	    -p "$PG_PORT" -U rakazo -d rakazo -v ON_ERROR_STOP=1 -c "$1"
}

# pg_reset: an empty database again (the unit tests' fresh store).
pg_reset() {
	pg_sql 'DROP SCHEMA public CASCADE; CREATE SCHEMA public;' >/dev/null
}

# pg_down: stop the server at once (connections see it vanish); pg_up:
# the same cluster again, on the same port.
pg_down() {
	pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop \
	    >/dev/null
}

pg_up() {
	pg_ctl_start
}

pg_stop() {
	[ -n "$PG_DIR" ] || return 0
	if [ -f "$PG_DIR/data/postmaster.pid" ]; then
		pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w \
		    stop >/dev/null 2>&1
	fi
	rm -rf "$PG_DIR"
	PG_DIR=""
}

#!/bin/bash
# SPDX-License-Identifier: MIT
# The SQLite state store on a full disk (C-2, C-3): the database lives on
# a small tmpfs made by the test (root only; skipped otherwise).  A shell
# call without a lease holds the bot's implicit lease while its command
# waits on a FIFO; the disk is filled, the command let go, so the call's
# release cannot be written.  Health must say the store cannot write
# (503, store code NO_SPACE) although reads still work; once space is
# freed the lease is released without any request (bounded wait on the
# database), health is ok again and the bot's next call is not LEASE_HELD.
. "${top_srcdir:-.}/tests/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "# SKIP: mounting a small disk for the database needs root"
	exit 77
fi
DB_DIR="$T/db"
mkdir -p "$DB_DIR"
if ! mount -t tmpfs -o size=8m,mode=0700 tmpfs "$DB_DIR" 2>/dev/null; then
	echo "# SKIP: cannot mount a tmpfs here"
	exit 77
fi
# SQLite's full disk, under `make check-postgres` too.
RAKAZO_TEST_STORE=sqlite
. "${top_srcdir:-.}/tests/lib-controller.sh"
# The controllers this test starts keep their state there.
CTL_STORE="sqlite:$DB_DIR/state.db"

# Everything that uses the mount ends first, then it goes.
full_cleanup() {
	rc=$?
	ctl_stop
	umount -l "$DB_DIR" 2>/dev/null
	(exit "$rc")
	ctl_cleanup
}
trap full_cleanup EXIT

db() {
	sqlite3 "$DB_DIR/state.db" "$1"
}

ctl_start
r=$(api POST /v1/computers '{"id":"team","start":true}')
t_contains "$r" "201 " "create the computer"
r=$(api GET /internal/health)
t_contains "$r" "200 " "health with room on the disk"
t_eq "$(api_field store.state)" ok "the store's state"
GATE="$CTL_DATA/computers/team/home/bots/b/gate"

curl -s -o "$T/call.out" -w '%{http_code}' \
    -H "Authorization: Bearer $(cat "$CTL_TOKEN")" \
    --data-binary '{"computer":"team","bot":"b","command":"mkfifo gate && cat gate"}' \
    "$CTL_URL/v1/tools/shell" > "$T/call.code" &
CALL_PID=$!
T_KILL="$T_KILL $CALL_PID"
i=0
until [ -p "$GATE" ]; do
	i=$((i + 1))
	[ "$i" -le 400 ] || t_fail "the call's command did not start"
	sleep 0.05
done
t_eq "$(db "SELECT count(*) FROM leases WHERE holder LIKE 'call-%'")" 1 \
    "the call holds its lease"

# Fill the disk to the last byte (dd stops at ENOSPC).
dd if=/dev/zero of="$DB_DIR/fill" bs=64k >/dev/null 2>&1
t_eq "$(df --output=avail -B1 "$DB_DIR" | tail -1 | tr -d ' ')" 0 \
    "the disk is full"

r=$(api GET /internal/health)
t_contains "$r" "503 " "health on a full disk"
t_eq "$(api_field store.code)" NO_SPACE "the store's code on a full disk"
t_eq "$(api_field store.state)" failed "the store's state on a full disk"
out=$(ctl health) && t_fail "rakazoctl health exits 0 on a full disk"
t_eq "$out" "state: degraded
sandbox: local
store: failed (NO_SPACE)" "rakazoctl health on a full disk"
r=$(api GET /v1/computers/team)
t_contains "$r" "200 " "reads still work"

echo go > "$GATE"
wait "$CALL_PID"
t_eq "$(cat "$T/call.code")" 200 "the call itself succeeded"
ctl_wait_log 'lease.release_failed.*code=NO_SPACE' 1 10
t_eq "$(db "SELECT count(*) FROM leases WHERE holder LIKE 'call-%'")" 1 \
    "the release could not be written"

rm -f "$DB_DIR/fill"
i=0
until [ "$(db "SELECT count(*) FROM leases")" = 0 ]; do
	i=$((i + 1))
	[ "$i" -le 200 ] || t_fail "the lease was not released within 10 s"
	sleep 0.05
done
r=$(api GET /internal/health)
t_contains "$r" "200 " "health once space is freed"
t_eq "$(api_field store.state)" ok "the store's state once space is freed"
t_eq "$(ctl health)" "state: ok
sandbox: local" "rakazoctl health once space is freed"
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"b","command":"echo next"}')
t_contains "$r" "200 " "the bot's next call"
t_contains "$r" next "the call ran"
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# X-4: guestd never runs as root.  As root it needs --user and becomes that
# user for good; everything it starts runs as that user.
. "$top_srcdir/tests/lib.sh"
t_secret

if [ "$(id -u)" -ne 0 ]; then
	other=$(getent passwd | awk -F: -v me="$(id -u)" '$3 != me { print $1; exit }')
	out=$("$GUESTD" --listen 127.0.0.1:0 --secret-file "$SECRET" \
	    --workspace "$WS" --user "$other" 2>&1) &&
		t_fail "an unprivileged guestd switched users"
	t_contains "$out" "only root can switch users" "user switch refusal"
	t_start_guestd
	out=$(rk exec -- id -u)
	t_eq "$out" "$(id -u)" "command uid"
	exit 0
fi

out=$("$GUESTD" --listen 127.0.0.1:0 --secret-file "$SECRET" \
    --workspace "$WS" 2>&1) && t_fail "guestd ran as root without --user"
t_contains "$out" "refusing to run as root" "root refusal"
out=$("$GUESTD" --listen 127.0.0.1:0 --secret-file "$SECRET" \
    --workspace "$WS" --user root 2>&1) && t_fail "guestd accepted --user root"

t_start_guestd
uid=$(id -u "$T_USER")
# Real, effective, saved and filesystem uids all dropped.
uids=$(awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$GUESTD_PID/status")
t_eq "$uids" "$uid $uid $uid $uid" "guestd uids"
groups=$(awk '/^Groups:/ { $1 = ""; print }' "/proc/$GUESTD_PID/status")
t_not_contains " $groups " " 0 " "guestd kept the root group"

out=$(rk exec -- 'id -u; id -G') || t_fail "exec failed"
t_eq "$(echo "$out" | head -1)" "$uid" "command uid"
t_not_contains " $(echo "$out" | tail -1) " " 0 " "command groups"

echo hi > "$T/hi"
rk put "$T/hi" owned.txt || t_fail "put failed"
t_eq "$(stat -c %u "$WS/owned.txt")" "$uid" "owner of a written file"
exit 0

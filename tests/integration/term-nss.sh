#!/bin/bash
# SPDX-License-Identifier: MIT
# G-19: when guestd's uid has no passwd entry (Docker on macOS hosts), the
# terminal's shell still has a name: nss_wrapper is preloaded with passwd
# and group files of guestd's own, so whoami, id -un and the prompt say
# "rakazo", while /etc/passwd stays as it was; guestd's exit removes the
# files (one pair for all it starts: tests/integration/desktop-nss.sh).
# Needs root (to become a uid without an entry) and libnss-wrapper.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/integration/term-lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "# needs root"; exit 77; }
command -v setpriv >/dev/null 2>&1 || { echo "# no setpriv"; exit 77; }
lib=""
for d in /usr/lib/*-linux-gnu* /usr/lib64 /usr/lib /usr/local/lib; do
	[ -f "$d/libnss_wrapper.so" ] && lib="$d/libnss_wrapper.so" && break
done
[ -n "$lib" ] || { echo "# no libnss_wrapper.so (libnss-wrapper)"; exit 77; }
U=4242
while getent passwd "$U" >/dev/null || getent group "$U" >/dev/null; do
	U=$((U + 1))
done
sum=$(sha256sum /etc/passwd /etc/group)

# guestd as that uid: not root, so no --user.
chown -R "$U:$U" "$WS"
t_secret
chown "$U" "$SECRET"
mkfifo -m 666 "$T/ready"
TMPDIR="$T/tmp" setpriv --reuid "$U" --regid "$U" --clear-groups \
    "$GUESTD" --listen 127.0.0.1:0 --secret-file "$SECRET" \
    --workspace "$WS" --ready-file "$T/ready" --log-level debug \
    --gateway 127.0.0.1:0 >"$GUESTD_LOG" 2>&1 &
GUESTD_PID=$!
exec 4<>"$T/ready"
read -t 30 -r PORT <&4 || t_fail "guestd did not start"
exec 4<&-
URL="ws://127.0.0.1:$PORT"
GW=$(sed -n 's/.*event=gateway.listening .*port=\([0-9]*\).*/\1/p' \
    "$GUESTD_LOG" | head -n 1)
t_contains "$(cat "/proc/$GUESTD_PID/status")" "Uid:	$U" "guestd's uid"
out=$(rk call display.open '{"bot":"alice","width":320,"height":240}') ||
	t_fail "open: $out"
ctl=$(term_grant control)

r=$(term_probe "$ctl" <<'SCRIPT'
send echo W""HO=$(whoami) $(id -un) $(id -u) U=$USER\r
grab WHO=
send echo P""W=$(getent passwd $(id -u))\r
grab PW=
SCRIPT
) || t_fail "session: $r"
t_contains "$r" "grab WHO=rakazo rakazo $U U=rakazo" "the shell's name"
t_contains "$r" "grab PW=rakazo:x:$U:$U:rakazo:$WS:/bin/bash" "passwd entry"
grep -q 'event=term.server_started .*nss_wrapper=yes' "$GUESTD_LOG" ||
	t_fail "nss_wrapper not used"
t_eq "$(sha256sum /etc/passwd /etc/group)" "$sum" "/etc/passwd unchanged"
f=$(find "$T/tmp" -path '*guestd-nss.*/passwd' | wc -l)
t_eq "$f" 1 "guestd's passwd file"
# One pair for the whole guestd: a revoke leaves it, guestd's exit not.
r=$(rk call capability.revoke "{\"token\":\"$ctl\"}") || t_fail "revoke: $r"
t_eq "$(find "$T/tmp" -path '*guestd-nss.*/passwd' | wc -l)" 1 \
    "passwd file after a revoke"
kill "$GUESTD_PID"
wait "$GUESTD_PID"
n=$(find "$T/tmp" -maxdepth 1 -name 'guestd-nss.*' | wc -l)
t_eq "$n" 0 "guestd's files removed at its exit"
exit 0

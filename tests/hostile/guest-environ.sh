#!/bin/bash
# SPDX-License-Identifier: MIT
# serve's secrets never reach a local computer (issue 26, item 1).  serve
# runs with the object store's keys, the database's password, an API
# token and a variable of no known name in its environment; a computer is
# started and used (its shell, a desktop, a terminal, a command left
# running).  Then no process of the computer (its guestd, X server,
# window manager, shell, terminal, leftovers: everything of its uid and
# everything below its guestd) holds any of those values, nor the
# computer's own control secret, in its environment or command line, read
# from the host's /proc and from the computer's own shell.  What guestd
# needs still passes: its settings (GUESTD_DISPLAY_FIRST puts its
# desktops in this test's slot), PATH, LANG, TZ.
. "$top_srcdir/tests/lib.sh"

# Values unique to this test, so a hit names its variable.
sfx=$$-$T_SLOT
export OBJECT_STORAGE_SECRET_ACCESS_KEY="os-secret-Zq81-$sfx"
export OBJECT_STORAGE_ACCESS_KEY_ID="os-keyid-Wr62-$sfx"
export AWS_SECRET_ACCESS_KEY="aws-secret-Kp45-$sfx"
export AWS_SESSION_TOKEN="aws-session-Mn27-$sfx"
export PGPASSWORD="pg-password-Tx93-$sfx"
export RAKAZO_API_TOKEN="api-token-Bv38-$sfx"
export SOME_DEPLOY_VAR="unlisted-Hd14-$sfx"
export TZ=UTC LANG=C.UTF-8
SECRETS=(OBJECT_STORAGE_SECRET_ACCESS_KEY OBJECT_STORAGE_ACCESS_KEY_ID
    AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN PGPASSWORD RAKAZO_API_TOKEN
    SOME_DEPLOY_VAR)
. "$top_srcdir/tests/lib-controller.sh"

ctl_start
ctl computer create a >/dev/null || t_fail "create a"
A="$CTL_DATA/computers/a"
sh_a() { ctl shell --computer a --bot ann -- "$1"; }

# Use it: a desktop (X server, window manager), a terminal, a leftover.
ctl screenshot --computer a --bot ann "$T/a.png" >/dev/null ||
	t_fail "a's screenshot"
r=$(api POST /v1/tools/terminal_url '{"computer":"a","bot":"ann"}')
t_contains "$r" "200 " "a's terminal"
sh_a 'setsid nohup sleep 1000 >/dev/null 2>&1 & echo started' >/dev/null ||
	t_fail "a's leftover"

# With the store in PostgreSQL its URL (and password) is serve's too.
vals=()
for v in "${SECRETS[@]}"; do
	vals+=("${!v}")
done
[ -z "$CTL_STORE" ] || vals+=("$CTL_STORE")
vals+=("$(cat "$A/secret")")

gpid=""
for d in /proc/[0-9]*; do
	if { tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null |
	    grep -q -- "--workspace $A/home"; then
		gpid=${d#/proc/}
	fi
done
[ -n "$gpid" ] || t_fail "no guestd of a"
uid=""
[ "$(id -u)" -ne 0 ] || uid=$(stat -c %u "$A/home")

# The computer's processes: guestd's descendants, and as root every
# process of its uid (setsid leftovers are orphaned to init).  Each one's
# environment and command line are scanned for every value; guestd's
# environment is kept for the checks below.
printf '%s\n' "${vals[@]}" >"$T/values"
names=$(python3 - "$gpid" "${uid:--1}" "$T/values" "$T/env.guestd" <<'PY'
import os, sys
gpid, uid = int(sys.argv[1]), int(sys.argv[2])
vals = [v.encode() for v in open(sys.argv[3]).read().split("\n") if v]
procs = {}
for d in os.listdir("/proc"):
    if not d.isdigit():
        continue
    try:
        st = open(f"/proc/{d}/stat", "rb").read()
        owner = os.stat(f"/proc/{d}").st_uid
    except OSError:
        continue
    procs[int(d)] = (int(st[st.rindex(b")") + 2:].split()[1]), owner)
mine, grew = {gpid}, True
while grew:
    grew = False
    for p, (ppid, owner) in procs.items():
        if p not in mine and (ppid in mine or owner == uid):
            mine.add(p)
            grew = True
names = []
for p in sorted(mine):
    try:
        env = open(f"/proc/{p}/environ", "rb").read()
        cmd = open(f"/proc/{p}/cmdline", "rb").read()
        names.append(open(f"/proc/{p}/comm").read().strip())
    except OSError:
        continue
    if p == gpid:
        open(sys.argv[4], "wb").write(env.replace(b"\0", b"\n"))
    line = cmd.replace(b"\0", b" ").decode(errors="replace")
    for v in vals:
        if v in env or v in cmd:
            print(f"LEAK pid {p} ({line}) holds {v.decode()}")
print(" ".join(names))
PY
) || t_fail "cannot scan a's processes"
leak=$(echo "$names" | grep '^LEAK' | head -3)
[ -z "$leak" ] || t_fail "$leak"
t_note "a's processes: $names"
n=$(echo "$names" | wc -w)
[ "$n" -ge 3 ] || t_fail "only $n processes of a"
t_contains "$names" "guestd" "guestd was scanned"
t_contains "$names" "Xvfb" "the X server was scanned"
[ -z "$uid" ] || t_contains "$names" "sleep" "the leftover was scanned"

# guestd's environment is what it was given, not serve's.
t_contains "$(cat "$T/env.guestd")" "GUESTD_DISPLAY_FIRST=$GUESTD_DISPLAY_FIRST" \
    "guestd's settings pass"
t_contains "$(cat "$T/env.guestd")" "TZ=UTC" "TZ passes"
t_contains "$(cat "$T/env.guestd")" "PATH=" "PATH passes"
grep -q '^SOME_DEPLOY_VAR=\|^OBJECT_STORAGE\|^AWS_\|^PG\|^RAKAZO_API' \
    "$T/env.guestd" && t_fail "a name of serve's in guestd's environment"

# From the computer itself: what its commands can read of its guestd.
out=$(sh_a "tr '\\0' '\\n' </proc/$gpid/environ; echo rc=\$?")
t_contains "$out" "rc=0" "a reads its own guestd's environment"
for v in "${vals[@]}"; do
	t_not_contains "$out" "$v" "a's shell reads a secret of serve's"
done
t_note "guest-environ ok"

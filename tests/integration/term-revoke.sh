#!/bin/bash
# SPDX-License-Identifier: MIT
# G-20: revoking the control capability, its expiry and the display's
# teardown each stop the PTY server: every terminal closes with a reason,
# every shell's session dies (jobs in groups of their own too, and a
# process that ignores SIGHUP after the grace), the session files go,
# and the token opens nothing any more.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/integration/term-lib.sh"
term_start
ctl=$(term_grant control)

term_open A "$ctl"
term_open B "$ctl"
pa=$(term_pid A)
pb=$(term_pid B)
term_say A 'send sleep 1000 & echo B""G=$!\r'
term_say A 'grab BG='
bg=$(term_line A)
bg=${bg#grab BG=}
term_say B "send (trap '' HUP; exec sleep 1001) & echo N\"\"H=\$!\\r"
term_say B 'grab NH='
nh=$(term_line B)
nh=${nh#grab NH=}
kill -0 "$bg" && kill -0 "$nh" || t_fail "jobs did not start: $bg $nh"
# A session makes no directory of its own: the names its shell needs are
# guestd's one nss_wrapper pair (guestd/nss.c, tests/integration/term-nss.sh).
n=$(find "$T/tmp" -maxdepth 1 -name 'guestd-term.*' | wc -l)
t_eq "$n" 0 "no session directory for the sessions"

term_say A expect-close
term_say B expect-close
r=$(rk call capability.revoke "{\"token\":\"$ctl\"}") || t_fail "revoke: $r"
t_eq "$(term_line A)" "closed 1001 control capability ended" "A closed"
t_eq "$(term_line B)" "closed 1001 control capability ended" "B closed"
for p in "$pa" "$pb" "$bg" "$nh"; do
	term_gone "$p" || t_fail "process $p survived the revocation"
done
n=$(find "$T/tmp" -maxdepth 1 -name 'guestd-term.*' | wc -l)
t_eq "$n" 0 "session directory removed"
r=$(term_probe "$ctl" </dev/null)
t_contains "$r" "refused" "revoked token"
grep -q "event=term.shell_killed" "$GUESTD_LOG" ||
	t_fail "the SIGHUP-proof process was not killed by guestd"

# Expiry.
exp=$(term_grant control 2)
term_open C "$exp"
pc=$(term_pid C)
term_say C expect-close
t_eq "$(term_line C)" "closed 1001 control capability ended" "expiry closes"
term_gone "$pc" || t_fail "shell survived expiry"

# Display teardown.
ctl=$(term_grant control)
term_open D "$ctl"
pd=$(term_pid D)
term_say D expect-close
r=$(rk call display.close '{"bot":"alice"}') || t_fail "close: $r"
t_eq "$(term_line D)" "closed 1001 control capability ended" \
    "display teardown closes"
term_gone "$pd" || t_fail "shell survived display teardown"
n=$(find "$T/tmp" -maxdepth 1 -name 'guestd-term.*' | wc -l)
t_eq "$n" 0 "no session directory left"
exit 0

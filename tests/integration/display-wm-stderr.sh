#!/bin/bash
# SPDX-License-Identifier: MIT
# A window manager that exits early says why in guestd's log (issue 11 item
# 1): guestd reads its stderr through a pipe on its loop and, when it exits
# while its desktop is open, logs display.wm_exited at warning level with
# the end of that stderr (bounded, redacted).  The stand-in window manager
# here writes 100 KiB first (more than a pipe holds: it would block forever
# if guestd did not read as it comes), then a secret and its reason, and
# exits 3.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
cat > "$T/badwm" <<'WM'
#!/bin/sh
head -c 102400 /dev/zero | tr '\0' 'x' >&2
printf '\nbadwm: token=s3cretW1ndowT0ken\nbadwm: unable to open fontset "variable"\n' >&2
exit 3
WM
chmod 755 "$T/badwm"
GUESTD_WM=$T/badwm
export GUESTD_WM GUESTD_DISPLAY_FIRST
t_start_guestd

a=$(rk call display.open '{"bot":"alice"}') || t_fail "open: $a"
line=""
for _ in $(seq 200); do
	line=$(grep 'event=display.wm_exited' "$GUESTD_LOG") && break
	sleep 0.05
done
[ -n "$line" ] || t_fail "no display.wm_exited in the log"
t_note "$line"
t_contains "$line" "level=warn" "level"
t_contains "$line" "status=768" "exit status 3"
t_contains "$line" 'badwm: unable to open fontset \"variable\"' \
    "the WM's last words"
t_not_contains "$line" "s3cretW1ndowT0ken" "the secret"
t_contains "$line" "[REDACTED]" "the redaction mask"
# Bounded: the tail of what it wrote, not the 100 KiB.
[ "${#line}" -lt 2048 ] || t_fail "the line is ${#line} bytes"
# The desktop itself carries on without a window manager.
rk call display.close '{"bot":"alice"}' >/dev/null || t_fail "close"
echo "ok"

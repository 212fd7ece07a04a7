#!/bin/bash
# SPDX-License-Identifier: MIT
# A window manager on every desktop when one is installed (issue 3 item 1):
# after display.open one runs as guestd's child with DISPLAY and XAUTHORITY
# naming that display, it manages windows (a client's window gets
# reparented into its frame), and it is gone after display.close.  Xvfb runs
# with only its built-in fonts ("fixed", "cursor"), as on a fresh machine
# without xfonts-base, where twm with no fonts named exits at once (issue 11
# item 1).  Installs nothing: skipped unless twm or openbox is on PATH.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
WM=""
for w in twm openbox; do
	if command -v "$w" >/dev/null 2>&1; then
		WM=$w
		break
	fi
done
[ -n "$WM" ] || { echo "# neither twm nor openbox installed"; exit 77; }
command -v xlogo >/dev/null 2>&1 && command -v xwininfo >/dev/null 2>&1 ||
	{ echo "# no xlogo or xwininfo"; exit 77; }
GUESTD_WM=$WM
# Xvfb's font path: its built-ins only, whatever fonts are installed.
printf '#!/bin/sh\nexec Xvfb "$@" -fp built-ins\n' > "$T/xvfb"
chmod 755 "$T/xvfb"
GUESTD_XVFB=$T/xvfb
export GUESTD_WM GUESTD_DISPLAY_FIRST GUESTD_XVFB
t_start_guestd

val() {	# json key
	printf '%s' "$1" | sed -n "s/.*\"$2\":\"\\{0,1\\}\\([^,\"}]*\\).*/\\1/p"
}

# wm_pid N: the pid of guestd's child running $WM on :N, if any.
wm_pid() {
	local p
	for p in $(pgrep -P "$GUESTD_PID" -x "$WM"); do
		tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null |
		    grep -qx "DISPLAY=:$1" || continue
		echo "$p"
		return 0
	done
	return 1
}

a=$(rk call display.open '{"bot":"alice"}') || t_fail "open: $a"
slot=$(val "$a" slot)
xauth=$(val "$a" xauthority)
# The child is forked before the answer; wait (bounded) for its exec.
pid=""
for _ in $(seq 100); do
	pid=$(wm_pid "$slot") && break
	sleep 0.05
done
[ -n "$pid" ] || t_fail "no $WM on :$slot"
tr '\0' '\n' < "/proc/$pid/environ" | grep -qx "XAUTHORITY=$xauth" ||
	t_fail "$WM has not the display's XAUTHORITY"
[ "$(ps -o sid= -p "$pid" | tr -d ' ')" = "$pid" ] ||
	t_fail "$WM is not in its own session"
t_note "$WM pid $pid on :$slot"

# It manages windows: xlogo's window gets reparented into a frame.
DISPLAY=:$slot XAUTHORITY=$xauth xlogo -geometry 100x100+10+10 \
    >"$T/xlogo.log" 2>&1 &
T_KILL="$T_KILL $!"
managed=0
parent=""
for _ in $(seq 200); do
	parent=$(DISPLAY=:$slot XAUTHORITY=$xauth xwininfo -name xlogo \
	    -tree 2>/dev/null | sed -n 's/^ *Parent window id: //p')
	case $parent in
	"" | *"(the root window)"*) ;;
	*) managed=1; break ;;
	esac
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.05
done
kill -0 "$pid" 2>/dev/null ||
	t_fail "$WM exited: $(grep wm_exited "$GUESTD_LOG")"
[ "$managed" -eq 1 ] || t_fail "$WM did not reparent xlogo's window"
t_note "xlogo's window is in $WM's frame $parent"
! grep -q 'display.wm_exited' "$GUESTD_LOG" || t_fail "the WM exited early"

rk call display.close '{"bot":"alice"}' >/dev/null || t_fail "close"
gone=0
for _ in $(seq 100); do
	if ! kill -0 "$pid" 2>/dev/null ||
	    [ "$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)" = Z ]; then
		gone=1
		break
	fi
	sleep 0.05
done
[ "$gone" -eq 1 ] || t_fail "$WM still runs after display.close"
grep -q 'display.wm_start' "$GUESTD_LOG" || t_fail "no wm_start in the log"
echo "ok"

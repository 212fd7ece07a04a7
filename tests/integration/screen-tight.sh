#!/bin/bash
# SPDX-License-Identifier: MIT
# Screens at the limit (issue 18): a native libvncclient viewer asking
# Tight with JPEG and CopyRect, on the debug port (the same rfb.c gate and
# fast path as the gateway's viewers).
#  - a whole-screen change comes as JPEG bands of the fast path (a few
#    full-width rectangles, not libvncserver's 64 Ki-pixel pieces) and the
#    decoded frame matches the screen within JPEG error;
#  - two small changes at opposite corners are sent as two small boxes,
#    not as the screen between them (capture's damage region);
#  - text scrolled a line at a time (XCopyArea, as a terminal does) comes
#    as CopyRect plus the new line, and the viewer's picture of it matches
#    the screen; a viewer that does not take CopyRect gets it all as
#    pixels, matching too;
#  - after the text area changed all over for a while without scrolling
#    (capture stops hashing its rows then), a scroll still comes right
#    and mostly as copies.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
: "${VNCTIGHT:?run through make check}"

base=$T_VNC_BASE
t_start_guestd --debug-vnc 127.0.0.1 --debug-vnc-base "$base"
out=$(rk call display.open '{"bot":"alice","width":1280,"height":800}') ||
	t_fail "open: $out"
slot=$(printf '%s' "$out" | sed -n 's/.*"slot":\([0-9]*\).*/\1/p')
dpy=$(printf '%s' "$out" | sed -n 's/.*"display":"\([^"]*\)".*/\1/p')
xauth=$(printf '%s' "$out" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
port=$((base + slot))

r=$(DISPLAY=$dpy XAUTHORITY=$xauth "$VNCTIGHT" "127.0.0.1:$port" big \
    corners) || t_fail "viewer: $r"
echo "# $r"
big=$(printf '%s\n' "$r" | sed -n 's/^big //p')
rects=$(printf '%s' "$big" | sed -n 's/.*rects=\([0-9]*\).*/\1/p')
full=$(printf '%s' "$big" | sed -n 's/.*full_width=\([0-9]*\).*/\1/p')
mae=$(printf '%s' "$big" | sed -n 's/.*mae=\([0-9]*\).*/\1/p')
[ -n "$rects" ] && [ -n "$mae" ] || t_fail "no big result: $r"
# libvncserver's Tight cuts 1280 x 800 into 16+ pieces of <= 64 Ki pixels.
[ "$rects" -le 8 ] || t_fail "whole screen in $rects rectangles"
[ "$full" -ge 1 ] || t_fail "no full-width JPEG band"
# Mean absolute error per channel below 3 (x100): JPEG q79 of a busy
# picture, not a wrong one.
[ "$mae" -le 300 ] || t_fail "decoded frame off by $mae/100 per channel"

corners=$(printf '%s\n' "$r" | sed -n 's/^corners //p')
area=$(printf '%s' "$corners" | sed -n 's/.*area=\([0-9]*\).*/\1/p')
center=$(printf '%s' "$corners" | sed -n 's/.*center=\([0-9]*\).*/\1/p')
[ -n "$area" ] || t_fail "no corners result: $r"
[ "$center" = 0 ] || t_fail "corner changes sent the centre"
# Two 40x40 squares, even merged with neighbours: far below the screen.
[ "$area" -le 20000 ] || t_fail "corner changes sent $area pixels"

# scroll FIELD RESULT: one field of a scroll result line.
scroll_field() {
	printf '%s\n' "$2" | sed -n 's/^scroll //p' |
	    sed -n "s/.*$1=\([0-9]*\).*/\1/p"
}
r=$(DISPLAY=$dpy XAUTHORITY=$xauth "$VNCTIGHT" "127.0.0.1:$port" scroll) ||
	t_fail "scroll viewer: $r"
echo "# $r"
copies=$(scroll_field copies "$r")
carea=$(scroll_field copy_area "$r")
parea=$(scroll_field pixel_area "$r")
bad=$(scroll_field bad "$r")
[ -n "$copies" ] && [ -n "$parea" ] && [ -n "$bad" ] ||
	t_fail "no scroll result: $r"
# 12 steps of a 640x312 area: most of each step is copied, not resent.
[ "$copies" -ge 6 ] || t_fail "scroll sent $copies CopyRects"
[ "$carea" -ge $((6 * 600 * 280)) ] || t_fail "scroll copied only $carea"
[ "$parea" -le $((12 * 640 * 312 / 4)) ] ||
	t_fail "scroll sent $parea pixels besides the copies"
[ "$bad" = 0 ] || t_fail "scrolled text: $bad pixels wrong"

r=$(DISPLAY=$dpy XAUTHORITY=$xauth "$VNCTIGHT" -nocopyrect \
    "127.0.0.1:$port" scroll) || t_fail "no-CopyRect viewer: $r"
echo "# $r"
copies=$(scroll_field copies "$r")
bad=$(scroll_field bad "$r")
[ "$copies" = 0 ] || t_fail "a viewer without CopyRect got $copies"
[ "$bad" = 0 ] ||
	t_fail "no-CopyRect viewer's text off: $r"

# An animation first: rows left unhashed must never be copied from, and
# hashing comes back within a few frames of the scroll starting.
r=$(DISPLAY=$dpy XAUTHORITY=$xauth "$VNCTIGHT" "127.0.0.1:$port" \
    churn scroll) || t_fail "churn viewer: $r"
printf '%s\n' "$r" | sed 's/^/# /'
case "$r" in *"churn frames="*) ;; *) t_fail "no churn result: $r" ;; esac
copies=$(scroll_field copies "$r")
bad=$(scroll_field bad "$r")
[ -n "$copies" ] && [ -n "$bad" ] || t_fail "no scroll after churn: $r"
[ "$bad" = 0 ] || t_fail "scroll after churn: $bad pixels wrong"
[ "$copies" -ge 4 ] || t_fail "scroll after churn sent $copies CopyRects"

rk call display.close '{"bot":"alice"}' >/dev/null || t_fail "close"
exit 0

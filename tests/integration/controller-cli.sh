#!/bin/bash
# The operator's verbs on a real desktop (local provider, real guestd and
# Xvfb): open prints a viewer URL on the computer's gateway, screenshot
# writes a PNG, act drives it; take-control gives a user the screen (the
# bot is refused meanwhile with LEASE_HELD) and release-control hands it
# back.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

command -v Xvfb >/dev/null 2>&1 || exit 77
ctl_start

url=$(ctl open alice) || t_fail "open"
t_contains "$url" "/embed.html?token=" "open prints the viewer URL"
ctl screenshot --bot alice "$T/shot.png" >/dev/null || t_fail screenshot
t_eq "$(head -c 4 "$T/shot.png" | tail -c 3)" PNG "screenshot is a PNG"
t_eq "$(ctl act --bot alice '[{"type":"move","x":10,"y":10}]')" \
    "completed 1" "act"
v=$(ctl screen-url --bot alice)
t_contains "$v" "token=" "screen-url"

out=$(ctl take-control --bot alice) || t_fail "take-control"
t_contains "$out" "terminal ws://" "take-control prints a terminal URL"
lease=$(printf '%s\n' "$out" | sed -n 's/^lease //p')
out=$(ctl screenshot --bot alice "$T/x.png" 2>&1)
t_eq "$?" 1 "the bot waits while a user has control"
t_contains "$out" LEASE_HELD "code while controlled"
t_eq "$(ctl release-control "$lease")" released "release-control"
ctl screenshot --bot alice "$T/shot2.png" >/dev/null ||
    t_fail "the bot drives again after release"
out=$(ctl release-control "$lease" 2>&1)
t_contains "$out" LEASE_EXPIRED "released twice"
exit 0

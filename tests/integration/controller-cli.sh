#!/bin/bash
# SPDX-License-Identifier: MIT
# The operator's verbs on a real desktop (local provider, real guestd and
# Xvfb): open prints a viewer URL on the computer's gateway, screenshot
# writes a PNG strict decoders take, or a JPEG when the name says so, act
# drives it (computer_act with observe's scale too); take-control gives a
# user the screen and terminal pages (the bot is refused meanwhile with
# LEASE_HELD) and release-control hands it back.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

command -v Xvfb >/dev/null 2>&1 || exit 77
# The terminal page, for the computer's guestd (serve's environment is
# its own), from a copy any user can read (guestd may run as another).
if [ -f "${TERM_ASSETS:-}/term.html" ]; then
	cp -R "$TERM_ASSETS" "$T/term-assets"
	chmod -R a+rX "$T/term-assets"
	export GUESTD_TERM_ASSETS="$T/term-assets"
fi
ctl_start

url=$(ctl open alice) || t_fail "open"
t_contains "$url" "/embed.html?token=" "open prints the viewer URL"
ctl screenshot --bot alice "$T/shot.png" >/dev/null || t_fail screenshot
t_eq "$(head -c 4 "$T/shot.png" | tail -c 3)" PNG "screenshot is a PNG"
# Strict decoders take it (IEND's CRC once was 0).
if [ -n "${PNG_STRICT:-}" ]; then
	out=$("$PNG_STRICT" "$T/shot.png") || t_fail "libpng: $out"
fi
if command -v pngcheck >/dev/null 2>&1; then
	out=$(pngcheck "$T/shot.png" 2>&1) || t_fail "pngcheck: $out"
fi
if command -v identify >/dev/null 2>&1; then
	out=$(identify -regard-warnings -format '%m %k' "$T/shot.png" 2>&1) ||
		t_fail "ImageMagick: $out"
fi
# The name says JPEG: the bytes are JPEG.
ctl screenshot --bot alice "$T/shot.jpg" >/dev/null || t_fail "screenshot jpg"
t_eq "$(head -c 3 "$T/shot.jpg" | od -An -tx1 | tr -d ' \n')" ffd8ff \
    "screenshot x.jpg is a JPEG"
if command -v identify >/dev/null 2>&1; then
	t_eq "$(identify -regard-warnings -format '%m' "$T/shot.jpg" 2>&1)" \
	    JPEG "ImageMagick reads x.jpg as JPEG"
fi
# computer_act takes the scale computer_observe reports: a point on a
# half-size screenshot lands at twice its coordinates.
r=$(api POST /v1/tools/computer_observe \
    '{"computer":"team","bot":"alice","max_width":640}')
t_contains "$r" '"scale":0.5' "observe scaled by half: $r"
r=$(api POST /v1/tools/computer_act \
    '{"computer":"team","bot":"alice","scale":0.5,"actions":[{"type":"move","x":100,"y":60}]}')
t_contains "$r" "200 " "computer_act with scale: $r"
r=$(api POST /v1/tools/computer_act \
    '{"computer":"team","bot":"alice","actions":[{"action":"cursor_position"}]}')
t_contains "$r" '"cursor":{"x":200,"y":120}' "the scaled point, in screen pixels"
r=$(api POST /v1/tools/computer_act \
    '{"computer":"team","bot":"alice","scale":"half","actions":[{"type":"move","x":1,"y":1}]}')
t_contains "$r" "400 " "a scale that is no number"
t_contains "$r" BAD_REQUEST "its code"
t_eq "$(ctl act --bot alice '[{"type":"move","x":10,"y":10}]')" \
    "completed 1" "act"
v=$(ctl screen-url --bot alice)
t_contains "$v" "token=" "screen-url"

out=$(ctl take-control --bot alice) || t_fail "take-control"
# The terminal as a page a person opens, on the gateway, not the websocket.
term=$(printf '%s\n' "$out" | sed -n 's/^terminal //p')
case $term in
http://*/term.html\?token=*) ;;
*) t_fail "take-control prints no terminal page: $out" ;;
esac
if [ -n "${GUESTD_TERM_ASSETS:-}" ]; then
	t_eq "$(curl -s -o /dev/null -w '%{http_code}' "$term")" 200 \
	    "the terminal page is served"
fi
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

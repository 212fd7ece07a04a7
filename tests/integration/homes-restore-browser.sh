#!/bin/bash
# SPDX-License-Identifier: MIT
# C-8, C-11 under a fault, with the local provider, real guestd and real
# Chromium: a bot logs in on a loopback page (a cookie), the computer is
# checkpointed, then its machine dies (guestd killed -9) and its
# workspace is deleted by hand.  The next tool call starts a machine,
# restores the stored revision before it is answered (files
# byte-identical), and the bot's browser is still logged in: the page
# server sees the cookie again.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-browser.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
. "${top_srcdir:-.}/tests/lib-homes.sh"

tool() { # TOOL JSON-ARGS: POST with computer team, bot ann
	api POST "/v1/tools/$1" "$(printf '%s' "$2" |
	    jq -c '. + {computer: "team", bot: "ann"}')"
}
dead() {	# pid $1 is gone, or a zombie its parent has not reaped yet
	[ ! -e "/proc/$1" ] || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]
}

ctl_start
HOME_DIR="$CTL_DATA/computers/team/home"
api POST /v1/computers '{"id":"team"}' >/dev/null
tb_fixture site site
SITE="http://127.0.0.1:$site_PORT"

r=$(tool browser_navigate "{\"url\":\"$SITE/login?u=ann\"}")
t_contains "$r" "200 " "ann logs in"
r=$(tool browser_navigate "{\"url\":\"$SITE/whoami\"}")
t_contains "$r" "200 " "who am I"
t_contains "$(tool browser_snapshot '{}')" "user is ann" "the cookie is sent"
r=$(tool write_file '{"path":"bots/ann/notes.txt","content":"keep me"}')
t_contains "$r" "200 " "a file beside the profile"
head -c 200000 /dev/urandom > "$T/blob"
curl -s -o /dev/null -H "Authorization: Bearer $(cat "$CTL_TOKEN")" -X PUT \
    --data-binary @"$T/blob" \
    "$CTL_URL/v1/computers/team/files?bot=ann&path=shared/blob.bin"

t_contains "$(ctl checkpoint team)" "revision 1" "checkpoint (browsers quiesced)"
BEFORE=$(tree_sum "$HOME_DIR" bots shared)
t_contains "$BEFORE" "bots/ann/notes.txt" "the digest covers the bot's files"

# The machine dies and its disk goes with it.
GP=$(guestd_pid)
[ -n "$GP" ] || t_fail "no guestd"
kill -9 "$GP"
i=0
until dead "$GP"; do
	i=$((i + 1))
	[ "$i" -le 200 ] || t_fail "guestd did not die"
	sleep 0.05
done
rm -rf "$HOME_DIR"
WHO0=$(grep -c "whoami ann" "$T/site.log")

# The next call: a new machine, restored first, still logged in.
r=$(tool browser_navigate "{\"url\":\"$SITE/whoami\"}")
t_contains "$r" "200 " "the next call works"
t_contains "$(tool browser_snapshot '{}')" "user is ann" \
    "the restored browser is still logged in"
[ "$(grep -c "whoami ann" "$T/site.log")" -gt "$WHO0" ] ||
    t_fail "the page server did not see ann's cookie after the restore"
t_contains "$(api GET '/v1/computers/team/activity?limit=1000')" \
    '"kind":"computer.restore"' "a restore event"
t_eq "$(tree_sum "$HOME_DIR" bots shared)" "$BEFORE" "files byte-identical"
cmp -s "$T/blob" "$HOME_DIR/shared/blob.bin" || t_fail "the blob differs"

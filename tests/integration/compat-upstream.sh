#!/bin/bash
# SPDX-License-Identifier: MIT
# POST /v1/desktop replays the requests of upstream's supervisor byte for
# byte (tests/fixtures/upstream-desktop/*.json; only the display number
# is put in): env DISPLAY=:N prefixes, xdotool forms, the clipboard paste
# of text off ASCII, scrolls, waits, off-screen moves clamped to the edge,
# launches of xterm and of the browser launcher with its profile, and a
# DISPLAY of another desktop.  Input is proven by a real X client
# (xinput-recorder); replies are checked in upstream's shape: completed,
# {error: string, code}, activeWindow {id: string, title?}, no damage when
# nothing changed.  Two requests on one display wait their turn.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
command -v curl >/dev/null 2>&1 || { echo "# no curl"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "# no python3"; exit 77; }
command -v xterm >/dev/null 2>&1 || { echo "# no xterm"; exit 77; }
command -v xwininfo >/dev/null 2>&1 || { echo "# no xwininfo"; exit 77; }
: "${XINPUT_RECORDER:?run through make check}"
: "${XPATTERN:?run through make check}"
FIX="$top_srcdir/tests/fixtures/upstream-desktop"

t_secret
mkfifo "$T/ready"
user_args=""
[ "$(id -u)" -eq 0 ] && user_args="--user $T_USER"
# shellcheck disable=SC2086
"$GUESTD" --listen 127.0.0.1:0 --secret-file "$SECRET" --workspace "$WS" \
    --ready-file "$T/ready" --log-level debug --compat 127.0.0.1:0 \
    $user_args >"$GUESTD_LOG" 2>&1 &
GUESTD_PID=$!
exec 4<>"$T/ready"
read -t 30 -r PORT <&4 || PORT=""
read -t 5 -r cline <&4 || cline=""
exec 4<&-
[ -n "$PORT" ] || t_fail "guestd did not start"
CPORT=${cline#compat=}
[ -n "$CPORT" ] && [ "$CPORT" != "$cline" ] || t_fail "no compat port: '$cline'"
URL="ws://127.0.0.1:$PORT"
CURL_URL="http://127.0.0.1:$CPORT/v1/desktop"
TOKEN=$(cat "$SECRET")

o=$(rk call display.open '{"bot":"alice"}') || t_fail "open: $o"
slot=$(printf '%s' "$o" | sed -n 's/.*"slot":\([0-9]*\).*/\1/p')
auth=$(printf '%s' "$o" | sed -n 's/.*"xauthority":"\([^"]*\)".*/\1/p')
[ -n "$slot" ] || t_fail "no slot in $o"

mkfifo "$T/rec"
DISPLAY=":$slot" XAUTHORITY="$auth" "$XINPUT_RECORDER" >"$T/rec" 2>"$T/rec.err" &
REC_PID=$!
exec 5<"$T/rec"
read -t 20 -r line <&5 || t_fail "recorder did not start"
t_eq "$line" "ready" "recorder"
T_KILL="$REC_PID"

# replay NAME [curl args]: the fixture with our display put in, sent as
# is; CODE gets the status, $T/resp the body.
replay() {
	name=$1
	shift
	sed -e "s/@DISPLAY@/:$slot/g" -e "s/@OTHER@/:$((slot + 1))/g" \
	    "$FIX/$name.json" > "$T/req-$name.json"
	CODE=$(curl -sS -o "${RESP:-$T/resp}" -w '%{http_code}' --max-time 30 \
	    -H "authorization: Bearer $TOKEN" \
	    -H 'content-type: application/json' \
	    --data-binary @"$T/req-$name.json" "$@" "$CURL_URL") ||
	    t_fail "$name: curl failed"
}

jget() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
	    "$T/resp" "$1"
}

ok() {	# what: a 200 whose completed is a number, as upstream's caller wants
	[ "$CODE" = 200 ] || t_fail "$1: status $CODE: $(head -c 400 "$T/resp")"
	t_eq "$(jget 'type(d["completed"]).__name__')" int "$1: completed"
}

next_matching() {
	while read -t 10 -r line <&5; do
		case "$line" in
		$1) echo "$line"; return 0 ;;
		esac
	done
	t_fail "no recorder line like '$1'"
}

# The observation as upstream shapes it.
check_observation() {
	t_eq "$(jget 'd["observation"]["mimeType"]')" image/png "$1: mimeType"
	t_eq "$(jget 'd["observation"]["width"]')" 1280 "$1: width"
	if [ "$(jget '"activeWindow" in d["observation"]')" = True ]; then
		t_eq "$(jget 'd["observation"]["activeWindow"]["id"].isdigit()')" \
		    True "$1: activeWindow.id is a decimal string"
		t_eq "$(jget 'd["observation"]["activeWindow"].get("title", "x") != ""')" \
		    True "$1: no empty title"
	fi
}

# ---- keys through env DISPLAY=:N xdotool key --clearmodifiers -------------
replay key
ok key
t_eq "$(jget 'd["completed"]')" 2 "key: completed"
t_eq "$(jget '"observation" in d')" False "observe false"
next_matching "key press keysym=0xffe3 *" >/dev/null
next_matching "key press keysym=0x61 *" >/dev/null
next_matching "key release keysym=0xffe3 *" >/dev/null
next_matching "key press keysym=0xff0d *" >/dev/null

# ---- pointer forms: mousemove -- X Y click 1 / mousedown 3, mouseup 3 ----
replay pointer
ok pointer
t_eq "$(jget 'd["completed"]')" 3 "pointer: completed"
next_matching "button press 1 x=40 y=50 *" >/dev/null
next_matching "button release 1 x=40 y=50 *" >/dev/null
next_matching "button press 3 x=60 y=70 *" >/dev/null
next_matching "button release 3 x=60 y=70 *" >/dev/null
check_observation pointer
t_eq "$(jget 'd["observation"]["cursor"]')" "{'x': 60, 'y': 70}" "cursor"
# The recorder never repaints: nothing changed, so no damage field.
t_eq "$(jget '"damage" in d["observation"]')" False "no damage"

# ---- off the screen: clamped to the edge, as xdotool's pointer is -------
replay offscreen
ok offscreen
next_matching "motion x=0 y=799 *" >/dev/null
next_matching "button press 1 x=1279 y=0 *" >/dev/null
t_eq "$(jget 'd["observation"]["cursor"]')" "{'x': 1279, 'y': 0}" \
    "clamped cursor"

# ---- type, a wait, scrolls with --repeat -----------------------------------
replay type-scroll
ok type-scroll
got=""
while [ "${#got}" -lt 22 ] && read -t 10 -r line <&5; do
	case "$line" in
	"key press "*utf8=*) u=${line#*utf8=}; u=${u%% *}; got="$got$u" ;;
	esac
done
t_eq "$got" "$(printf 'hello world' | od -An -tx1 | tr -d ' \n')" "typed"
next_matching "button press 5 *" >/dev/null
next_matching "button press 5 *" >/dev/null
next_matching "button press 5 *" >/dev/null
next_matching "button press 4 *" >/dev/null

# ---- the clipboard paste of text off ASCII arrives as that text ---------
replay paste
ok paste
want=$(printf 'héllo 中文 ✓' | od -An -tx1 | tr -d ' \n')
got=""
while [ "${#got}" -lt "${#want}" ] && read -t 10 -r line <&5; do
	case "$line" in
	"key press "*utf8=*) u=${line#*utf8=}; u=${u%% *}; got="$got$u" ;;
	esac
done
t_eq "$got" "$want" "pasted text"

# ---- another desktop's DISPLAY: refused, nothing done ---------------------
replay display-mismatch
[ "$CODE" = 400 ] || t_fail "mismatch: status $CODE"
t_eq "$(jget 'd["code"]')" DISPLAY_MISMATCH "mismatch code"
t_eq "$(jget 'type(d["error"]).__name__')" str "error is a string"
t_contains "$(jget 'd["error"]')" ":$((slot + 1))" "mismatch message"

# ---- the browser launcher: started if installed, else the tool named -----
if ! command -v rakazo-browser >/dev/null 2>&1; then
	replay launch-browser
	[ "$CODE" = 500 ] || t_fail "browser: status $CODE: $(cat "$T/resp")"
	t_eq "$(jget 'd["code"]')" EXEC_SPAWN_FAILED "browser code"
	t_contains "$(jget 'd["error"]')" "launch_app" "names the tool"
	t_eq "$(jget 'd["completed"]')" 0 "browser: completed"
fi

# ---- xterm starts on this desktop as guestd's child ------------------------
replay launch-xterm
ok launch-xterm
check_observation launch-xterm
pid=$(sed -n 's/.*compat.launch.*program=xterm pid=\([0-9]*\).*/\1/p' \
    "$GUESTD_LOG" | tail -1)
[ -n "$pid" ] || t_fail "no launch logged"
T_KILL="$T_KILL $pid"
env=$(tr '\0' '\n' < "/proc/$pid/environ") || t_fail "xterm is not running"
t_contains "$env" "DISPLAY=:$slot" "xterm's DISPLAY"
t_contains "$env" "XAUTHORITY=$auth" "xterm's XAUTHORITY"
found=""
for _ in $(seq 1 100); do
	DISPLAY=":$slot" XAUTHORITY="$auth" xwininfo -root -tree 2>/dev/null |
	    grep -q '"xterm"' && { found=1; break; }
	sleep 0.1
done
[ -n "$found" ] || t_fail "no xterm window on :$slot"
kill "$pid" 2>/dev/null || :

# ---- two requests at once: the second waits its turn -------------------
# Earlier requests logged their own lines: count from here on.
n0=$(grep -c 'compat.begin' "$GUESTD_LOG")
( RESP="$T/resp-first" replay wait; [ "$CODE" = 200 ] ) &
first=$!
for _ in $(seq 1 200); do
	[ "$(grep -c 'compat.begin' "$GUESTD_LOG")" -gt "$n0" ] && break
	sleep 0.05
done
replay key
ok "queued request"
wait "$first" || t_fail "the first request failed"
next_matching "key press keysym=0xff0d *" >/dev/null
# It began only after the first one ended.
set -- $(grep -n 'compat.begin' "$GUESTD_LOG" | sed -n "$((n0 + 1)),$((n0 + 2))p" |
    cut -d: -f1)
[ $# -eq 2 ] || t_fail "two requests did not begin"
e=$(grep -n 'compat.desktop display=' "$GUESTD_LOG" |
    awk -F: -v b="$1" '$1 > b { print $1; exit }')
[ -n "$e" ] && [ "$e" -lt "$2" ] || t_fail "the second began before the first ended"

kill -0 "$GUESTD_PID" || t_fail "guestd died"
exit 0

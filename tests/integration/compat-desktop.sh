#!/bin/bash
# SPDX-License-Identifier: MIT
# The drop-in POST /v1/desktop server (G-33) on a real Xvfb: every xdotool
# argv form reaches an X client as the right events in order; the
# observation carries a valid PNG and its fields (and is there unless
# observe is false); 401/400/404/405 bodies carry a string error and a
# stable code; limits refuse the whole request with nothing applied;
# requests on one display wait their turn, a bounded queue for a bounded
# time; waits and settle are clamped to 5 s.
. "$top_srcdir/tests/lib.sh"
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
command -v curl >/dev/null 2>&1 || { echo "# no curl"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "# no python3"; exit 77; }
: "${XINPUT_RECORDER:?run through make check}"

# Like t_start_guestd, but the ready FIFO has a second line, compat=PORT.
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

# post JSON [curl args...]: CODE gets the status, $T/resp the body.
post() {
	body=$1
	shift
	CODE=$(printf '%s' "$body" | curl -sS -o "$T/resp" -w '%{http_code}' \
	    --max-time 30 -H "Authorization: Bearer $TOKEN" \
	    -H 'Content-Type: application/json' --data-binary @- "$@" \
	    "$CURL_URL") || t_fail "curl failed"
}

# steps 'JSON steps' [extra top-level members]: a request for our display.
steps() {
	post "{\"display\":$slot,\"steps\":$1${2:+,$2}}"
}

# jget EXPR: a Python expression over d, the last answer.
jget() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
	    "$T/resp" "$1"
}

expect() {	# status code-name what
	[ "$CODE" = "$1" ] || t_fail "$3: status $CODE, want $1: $(cat "$T/resp")"
	if [ -n "$2" ]; then
		t_eq "$(jget 'd["code"]')" "$2" "$3 code"
		t_eq "$(jget 'type(d["error"]).__name__')" str "$3: error"
		[ -n "$(jget 'd["error"]')" ] || t_fail "$3: no message"
	fi
}

next_matching() {
	while read -t 10 -r line <&5; do
		case "$line" in
		$1) echo "$line"; return 0 ;;
		esac
	done
	t_fail "no recorder line like '$1'"
}

# marker: key z; the next key or button press must be it.
marker() {
	steps '[{"argv":["key","z"]}]'
	expect 200 "" "marker"
	while read -t 10 -r line <&5; do
		case "$line" in
		"key press keysym=0x7a "*) return 0 ;;
		"key press "*|"button press "*)
			t_fail "$1: unexpected event before the marker: $line" ;;
		esac
	done
	t_fail "$1: marker not seen"
}

# ---- every argv form -------------------------------------------------------

steps '[{"argv":["xdotool","key","--clearmodifiers","--delay","12","ctrl+a","Return"]}]'
expect 200 "" "key"
t_eq "$(jget 'd["completed"]')" 1 "completed"
next_matching "key press keysym=0xffe3 *" >/dev/null
next_matching "key press keysym=0x61 *" >/dev/null
next_matching "key release keysym=0x61 *" >/dev/null
next_matching "key release keysym=0xffe3 *" >/dev/null
next_matching "key press keysym=0xff0d *" >/dev/null

# keydown / keyup around a pointer form: the click carries Shift.
steps '[{"argv":["keydown","shift"]},
        {"argv":["mousemove","50","60","click","1"]},
        {"argv":["keyup","shift"]}]'
expect 200 "" "keydown/keyup"
t_eq "$(jget 'd["completed"]')" 3 "completed"
next_matching "key press keysym=0xffe1 *" >/dev/null
l=$(next_matching "button press 1 x=50 y=60 *")
t_contains "$l" "state=0x1" "shift held during the click"
next_matching "button release 1 x=50 y=60 *" >/dev/null
next_matching "key release keysym=0xffe1 *" >/dev/null
marker "keyup"

# type, text on and off the keymap.
want=$(printf 'hé中' | od -An -tx1 | tr -d ' \n')
steps '[{"argv":["type","--delay","12","--","hé中"]},{"argv":["key","z"]}]'
expect 200 "" "type"
got=""
while read -t 10 -r line <&5; do
	case "$line" in
	"key press keysym=0x7a "*) break ;;
	"key press "*utf8=*) u=${line#*utf8=}; u=${u%% *}; got="$got$u" ;;
	esac
done
t_eq "$got" "$want" "typed text"

# mousemove --sync, then mousemove … click --repeat 2, mousedown/up.
steps '[{"argv":["mousemove","--sync","300","200"]},
        {"argv":["mousemove","310","210","click","--repeat","2","1"]},
        {"argv":["mousedown","3"]},{"argv":["mouseup","3"]}]'
expect 200 "" "pointer forms"
next_matching "motion x=300 y=200 *" >/dev/null
next_matching "button press 1 x=310 y=210 *" >/dev/null
next_matching "button release 1 x=310 y=210 *" >/dev/null
next_matching "button press 1 x=310 y=210 *" >/dev/null
next_matching "button release 1 x=310 y=210 *" >/dev/null
next_matching "button press 3 x=310 y=210 *" >/dev/null
next_matching "button release 3 x=310 y=210 *" >/dev/null

# The wheel: click 4..7, with --repeat.
steps '[{"argv":["click","4"]},{"argv":["click","--repeat","2","5"]},
        {"argv":["click","6"]},{"argv":["click","7"]}]'
expect 200 "" "wheel"
next_matching "button press 4 *" >/dev/null
next_matching "button press 5 *" >/dev/null
next_matching "button press 5 *" >/dev/null
next_matching "button press 6 *" >/dev/null
next_matching "button press 7 *" >/dev/null

# sleep S and waitMs between keys, in order.
steps '[{"argv":["key","b"]},{"argv":["sleep","0.05"]},{"waitMs":20},
        {"argv":["key","c"]}]'
expect 200 "" "sleep and waitMs"
t_eq "$(jget 'd["completed"]')" 4 "completed"
next_matching "key press keysym=0x62 *" >/dev/null
next_matching "key press keysym=0x63 *" >/dev/null

# ---- the observation ------------------------------------------------------

steps '[{"argv":["mousemove","123","45"]}]' '"observe":true,"settleMs":50'
expect 200 "" "observe"
t_eq "$(jget 'd["observation"]["mimeType"]')" "image/png" "mimeType"
t_eq "$(jget 'd["observation"]["width"]')" 1280 "width"
t_eq "$(jget 'd["observation"]["height"]')" 800 "height"
t_eq "$(jget 'd["observation"]["cursor"]["x"]')" 123 "cursor x"
t_eq "$(jget 'd["observation"]["cursor"]["y"]')" 45 "cursor y"
# The recorder holds the focus: its id, as the decimal string upstream
# gets from xdotool getactivewindow.
t_eq "$(jget 'd["observation"]["activeWindow"]["id"].isdigit()')" True \
    "active window id: $(jget 'd["observation"].get("activeWindow")')"
jget 'd["observation"]["image"]' | base64 -d > "$T/shot.png" ||
	t_fail "image is not base64"
t_eq "$(head -c 8 "$T/shot.png" | od -An -tx1 | tr -d ' \n')" \
    "89504e470d0a1a0a" "PNG magic"
ihdr=$(dd if="$T/shot.png" bs=1 skip=12 count=12 2>/dev/null | od -An -tx1 |
    tr -d ' \n')
t_eq "$ihdr" "494844520000050000000320" "IHDR 1280x800"
# observe defaults to true, as upstream; false leaves it out.
steps '[]'
expect 200 "" "no steps"
t_eq "$(jget '"observation" in d')" True "observation by default"
steps '[]' '"observe":false'
expect 200 "" "observe false"
t_eq "$(jget '"observation" in d')" False "observation without observe"

# ---- errors ----------------------------------------------------------------

CODE=$(curl -sS -o "$T/resp" -w '%{http_code}' --data-binary '{}' "$CURL_URL")
expect 401 UNAUTHORIZED "no token"
CODE=$(curl -sS -o "$T/resp" -w '%{http_code}' -H "Authorization: Bearer x$TOKEN" \
    --data-binary "{\"display\":$slot,\"steps\":[{\"argv\":[\"key\",\"a\"]}]}" \
    "$CURL_URL")
expect 401 UNAUTHORIZED "wrong token"
marker "wrong token"
CODE=$(curl -sS -o "$T/resp" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
    "$CURL_URL")
expect 405 METHOD_NOT_ALLOWED "GET"
CODE=$(curl -sS -o "$T/resp" -w '%{http_code}' -X DELETE \
    -H "Authorization: Bearer $TOKEN" "$CURL_URL")
expect 405 METHOD_NOT_ALLOWED "DELETE"
CODE=$(curl -sS -o "$T/resp" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
    --data-binary '{}' "http://127.0.0.1:$CPORT/v1/other")
expect 404 NOT_FOUND "unknown path"
post '{"display":":99","steps":[{"argv":["key","a"]}]}'
expect 404 DISPLAY_NOT_OPEN "unknown display"
# display defaults to ":1" as upstream (ours is another one here).
[ "$slot" != 1 ] || t_fail "the test display must not be :1"
post '{"steps":[{"argv":["key","a"]}]}'
expect 404 DISPLAY_NOT_OPEN "default display"
t_contains "$(jget 'd["error"]')" "display :1 " "defaults to :1"
post '{"display":'
expect 400 BAD_JSON "bad JSON"
post "{\"display\":\":$slot\",\"steps\":[{\"argv\":[\"key\",\"a\"]},{\"argv\":[\"xdotool\",\"windowactivate\",\"1\"]}]}"
expect 400 ACTION_INVALID "unknown form"
t_contains "$(jget 'd["error"]')" "windowactivate" "message"
steps '[{"argv":["key","a"]},{"argv":["key","ctrl+nosuchkey"]}]'
expect 400 KEY_UNKNOWN "unknown key"
# Off the screen lands on its edge, as xdotool's pointer does.
steps '[{"argv":["mousemove","5000","5000"]}]'
expect 200 "" "off screen"
t_eq "$(jget 'd["observation"]["cursor"]')" "{'x': 1279, 'y': 799}" \
    "clamped to the corner"
marker "refused requests"

# ---- limits ------------------------------------------------------------------

a33=$(printf '"a",%.0s' $(seq 1 32))
steps "[{\"argv\":[\"key\",${a33%,}]}]"
expect 400 TOO_LARGE "33 argv entries"
big=$(head -c $((17 * 1024)) /dev/zero | tr '\0' x)
steps "[{\"argv\":[\"key\",\"a\"]},{\"argv\":[\"type\",\"$big\"]}]"
expect 400 TOO_LARGE "17 KiB argv entry"
{
	printf '{"display":%s,"steps":[{"argv":["key","a"]}],"pad":"' "$slot"
	head -c $((300 * 1024)) /dev/zero | tr '\0' x
	printf '"}'
} > "$T/big.json"
CODE=$(curl -sS -o "$T/resp" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
    --data-binary @"$T/big.json" "$CURL_URL")
expect 400 TOO_LARGE "300 KiB body"
marker "limits"

# ---- requests on one display wait their turn, boundedly ------------------

# A request of 30 s (six clamped 5 s pauses) holds the display: the
# waiters below give up after 10 s, so each of them times out even when a
# loaded machine starts it as late as 20 s after the holder began.
( post "{\"display\":$slot,\"steps\":[{\"waitMs\":5000},{\"waitMs\":5000},{\"waitMs\":5000},{\"waitMs\":5000},{\"waitMs\":5000}],\"settleMs\":5000,\"observe\":false}" \
      --max-time 90
  [ "$CODE" = 200 ] ) &
holder=$!
for _ in $(seq 1 200); do
	grep -q 'compat.begin.*steps=5' "$GUESTD_LOG" && break
	sleep 0.05
done
grep -q 'compat.begin.*steps=5' "$GUESTD_LOG" || t_fail "the holder did not begin"
# Nine more at once: eight wait (and give up after 10 s), one is refused
# at once because the queue is full.
pids=""
for k in $(seq 1 9); do
	( CODE=$(curl -sS -o "$T/q$k" -w '%{http_code}' --max-time 30 \
	    -H "Authorization: Bearer $TOKEN" \
	    --data-binary "{\"display\":$slot,\"steps\":[]}" "$CURL_URL")
	  echo "$CODE" > "$T/q$k.code" ) &
	pids="$pids $!"
done
for p in $pids; do wait "$p"; done
full=0
timedout=0
for k in $(seq 1 9); do
	t_eq "$(cat "$T/q$k.code")" 409 "queued request $k"
	case "$(cat "$T/q$k")" in
	*'already wait'*BUSY*) full=$((full + 1)) ;;
	*'stayed busy'*BUSY*) timedout=$((timedout + 1)) ;;
	*) t_fail "request $k: $(cat "$T/q$k")" ;;
	esac
done
t_eq "$full $timedout" "1 8" "one refused at once, eight timed out"
wait "$holder" || t_fail "the holding request failed"

# A display.act batch holds the input too: a request waits for it (it
# was a 409 before), then runs.
( rk act alice '[{"kind":"wait","ms":1500}]' >/dev/null ) &
actp=$!
for _ in $(seq 1 200); do
	grep -q 'op=display.act' "$GUESTD_LOG" && break
	sleep 0.05
done
grep -q 'op=display.act' "$GUESTD_LOG" || t_fail "display.act not seen"
t0=$(date +%s%N)
steps '[{"argv":["env","DISPLAY=:'"$slot"'","xdotool","key","x"]}]' \
    '"observe":false'
t1=$(date +%s%N)
expect 200 "" "after display.act"
[ $(( (t1 - t0) / 1000000 )) -ge 700 ] ||
	t_fail "the request did not wait for display.act"
wait "$actp" || t_fail "display.act failed"
next_matching "key press keysym=0x78 *" >/dev/null
rc=0
curl -sS -o /dev/null --max-time 1 -H "Authorization: Bearer $TOKEN" \
    --data-binary "{\"display\":$slot,\"steps\":[{\"waitMs\":3000},{\"argv\":[\"key\",\"a\"]}]}" \
    "$CURL_URL" 2>/dev/null || rc=$?
t_eq "$rc" 28 "curl timed out"
marker "abandoned request"

# ---- clamping: a 60 s wait and a 60 s settle answer in about 5 s each -----

t0=$(date +%s%N)
steps '[{"waitMs":60000}]'
t1=$(date +%s%N)
expect 200 "" "long wait"
ms=$(( (t1 - t0) / 1000000 ))
[ "$ms" -ge 4900 ] && [ "$ms" -lt 7000 ] || t_fail "60 s wait took $ms ms"
t0=$(date +%s%N)
steps '[]' '"settleMs":60000'
t1=$(date +%s%N)
expect 200 "" "long settle"
ms=$(( (t1 - t0) / 1000000 ))
[ "$ms" -ge 4900 ] && [ "$ms" -lt 7000 ] || t_fail "60 s settle took $ms ms"

kill -0 "$GUESTD_PID" || t_fail "guestd died"
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# Streaming file transfer through the controller (PUT and GET
# /v1/computers/{id}/files, rakazoctl put/get), local provider, real
# guestd: a 50 MiB file goes up and comes back intact while serve's peak
# memory stays far below the file; the put is a mutating call (lease
# refusals as write_file, one activity event), the get is not; a client
# that leaves mid-upload leaves the old file and a usable computer; a slow
# downloader holds no one else up; bad requests get stable codes.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

ctl_start
TOK=$(cat "$CTL_TOKEN")
HOME_WS="$CTL_DATA/computers/fs/home"

# raw METHOD PATH [curl args...]: prints "STATUS BODY" like api.
raw() {
	_m=$1
	_p=$2
	shift 2
	curl -s -o "$T/api.out" -w '%{http_code}' -X "$_m" \
	    -H "Authorization: Bearer $TOK" "$@" "$CTL_URL$_p" > "$T/api.code"
	printf '%s %s\n' "$(cat "$T/api.code")" "$(cat "$T/api.out")"
}

hwm_kb() {
	awk '/^VmHWM:/ {print $2}' "/proc/$CTL_PID/status"
}

sha() {
	sha256sum < "$1" | cut -d' ' -f1
}

# The next activity event of computer fs after id $1 (a long poll).
next_event() {
	api GET "/v1/computers/fs/activity?after=$1&wait_ms=20000" >/dev/null
	python3 -c 'import json,sys
e=json.load(open(sys.argv[1]))["events"]
print(e[0]["text"] if e else "")' "$T/api.out"
}

t_contains "$(api POST /v1/computers '{"id":"fs"}')" "201 " "create"

# ---- 50 MiB up and back, memory bounded --------------------------------
head -c $((50 * 1024 * 1024)) /dev/urandom > "$T/big"
ev0=$(ctl_events fs)
out=$(ctl put --computer fs --bot alice "$T/big" data/big.bin) ||
	t_fail "put: $out"
t_eq "$out" "data/big.bin: 52428800 bytes" "put output"
t_eq "$(sha "$HOME_WS/data/big.bin")" "$(sha "$T/big")" "stored bytes"
t_eq "$(ctl_events fs)" $((ev0 + 1)) "one event for the put"
api GET "/v1/computers/fs/activity?after=0&limit=1000" >/dev/null
t_contains "$(cat "$T/api.out")" '"text":"put data/big.bin (52428800 bytes)"' \
    "the put's event"
ctl get --computer fs --bot alice data/big.bin "$T/big.back" ||
	t_fail "get"
t_eq "$(sha "$T/big.back")" "$(sha "$T/big")" "round trip"
t_eq "$(ctl_events fs)" $((ev0 + 1)) "no event for the get (G-30)"
ls "$T"/big.back.rakazo-part-* >/dev/null 2>&1 &&
	t_fail "get left its temporary file"
ctl get --computer fs --bot alice data/big.bin | cmp - "$T/big" ||
	t_fail "get to stdout"
# The raw routes with curl: Content-Length on the way back.
t_contains "$(raw PUT '/v1/computers/fs/files?bot=alice&path=c/u%20v%26w.bin&parents=1' -T "$T/big")" \
    '200 {"path":"c/u v&w.bin","size":52428800}' "curl PUT, escaped name"
cmp "$T/big" "$HOME_WS/c/u v&w.bin" || t_fail "curl PUT bytes"
len=$(curl -s -D - -o "$T/curl.back" -H "Authorization: Bearer $TOK" \
    "$CTL_URL/v1/computers/fs/files?bot=alice&path=c/u%20v%26w.bin" |
    tr -d '\r' | sed -n 's/^[Cc]ontent-[Ll]ength: //p')
t_eq "$len" 52428800 "GET Content-Length"
cmp "$T/big" "$T/curl.back" || t_fail "curl GET bytes"
hwm=$(hwm_kb)
[ "$hwm" -lt 65536 ] || t_fail "serve peaked at $hwm KiB moving 50 MiB"
t_note "serve VmHWM after 4 x 50 MiB: $hwm KiB"

# ---- lease rules as write_file ----------------------------------------
small="$T/small"
printf 'hello' > "$small"
for l in bogus; do
	api POST /v1/tools/write_file "{\"computer\":\"fs\",\"bot\":\"alice\",\"lease\":\"$l\",\"path\":\"w.txt\",\"content\":\"x\"}" >/dev/null
	want="$(cat "$T/api.code") $(api_field error.code)"
	got=$(raw PUT "/v1/computers/fs/files?bot=alice&path=w.txt&lease=$l" \
	    -T "$small")
	t_eq "${got%% \{*} $(api_field error.code)" "$want" \
	    "a wrong lease is refused as write_file refuses it"
done
api POST /v1/leases '{"computer":"fs","bot":"alice","holder":"run1"}' >/dev/null
lease=$(api_field id)
t_contains "$(raw PUT "/v1/computers/fs/files?bot=alice&path=w.txt&lease=$lease" -T "$small")" \
    "200 " "put under the bot's lease"
t_contains "$(raw PUT '/v1/computers/fs/files?bot=alice&path=w.txt' -T "$small")" \
    "409 " "put without a lease while a run holds the bot"
t_eq "$(api_field error.code)" LEASE_HELD "code while held"
api DELETE "/v1/leases/$lease" >/dev/null
api POST /v1/tools/write_file "{\"computer\":\"fs\",\"bot\":\"alice\",\"lease\":\"$lease\",\"path\":\"w.txt\",\"content\":\"x\"}" >/dev/null
want="$(cat "$T/api.code") $(api_field error.code)"
got=$(raw PUT "/v1/computers/fs/files?bot=alice&path=w.txt&lease=$lease" \
    -T "$small")
t_eq "${got%% \{*} $(api_field error.code)" "$want" \
    "a released lease is refused as write_file refuses it"
out=$(ctl put --computer fs --bot alice --lease "$lease" "$small" w.txt \
    2>&1) && t_fail "rakazoctl put with a stale lease succeeded"
t_contains "$out" "$(echo "$want" | cut -d' ' -f2)" "CLI code, stale lease"

# ---- a client that leaves mid-upload ------------------------------------
old=$(sha "$HOME_WS/data/big.bin")
head -c $((50 * 1024 * 1024)) /dev/urandom > "$T/big2"
api GET "/v1/computers/fs/activity?after=0&limit=1000" >/dev/null
last=$(python3 -c 'import json,sys
print(json.load(open(sys.argv[1]))["next"])' "$T/api.out")
rc=0
curl -s -o /dev/null -H "Authorization: Bearer $TOK" -T "$T/big2" \
    --limit-rate 4M --max-time 2 \
    "$CTL_URL/v1/computers/fs/files?bot=alice&path=data/big.bin" || rc=$?
t_eq "$rc" 28 "curl was cut off by --max-time"
text=$(next_event "$last")
t_contains "$text" "put data/big.bin failed" "the cut put is recorded"
t_eq "$(sha "$HOME_WS/data/big.bin")" "$old" "the old file is unchanged"
t_eq "$(find "$HOME_WS" -name '*.rakazo-tmp-*')" "" "no temp file left"
out=$(ctl put --computer fs --bot alice "$small" after.txt) ||
	t_fail "the next put on the same bot: $out"
t_eq "$(ctl get --computer fs --bot alice after.txt)" hello \
    "the computer is usable after a cut upload"

# ---- a slow downloader holds no one up ---------------------------------
curl -s -o "$T/slow.out" -H "Authorization: Bearer $TOK" --limit-rate 1M \
    "$CTL_URL/v1/computers/fs/files?bot=alice&path=data/big.bin" &
slow=$!
# Its first bytes arrived: the download is under way.
i=0
while [ ! -s "$T/slow.out" ]; do
	i=$((i + 1))
	[ "$i" -le 200 ] || t_fail "the slow download did not start"
	sleep 0.05
done
out=$(ctl put --computer fs --bot bob "$T/big" bob.bin) ||
	t_fail "another bot's put during a slow download: $out"
ctl get --computer fs --bot bob bob.bin | cmp - "$T/big" ||
	t_fail "another bot's get during a slow download"
kill -0 "$slow" 2>/dev/null || t_fail "the slow download ended early"
kill "$slow" 2>/dev/null
wait "$slow" 2>/dev/null
hwm=$(hwm_kb)
[ "$hwm" -lt 65536 ] || t_fail "serve peaked at $hwm KiB with a slow reader"

# ---- refusals ---------------------------------------------------------
t_contains "$(raw PUT '/v1/computers/fs/files?path=x' -T "$small")" \
    '400 {"error":{"code":"BAD_REQUEST"' "PUT without bot"
t_contains "$(raw PUT '/v1/computers/fs/files?bot=alice' -T "$small")" \
    '400 {"error":{"code":"BAD_REQUEST"' "PUT without path"
t_contains "$(raw PUT '/v1/computers/fs/files?bot=a/b&path=x' -T "$small")" \
    '400 {"error":{"code":"INVALID_BOT"' "PUT with a bad bot"
t_contains "$(raw PUT '/v1/computers/fs/files?bot=alice&path=x&what=1' -T "$small")" \
    '400 {"error":{"code":"BAD_REQUEST"' "PUT with an unknown argument"
t_contains "$(raw GET '/v1/computers/fs/files?path=x')" \
    '400 {"error":{"code":"BAD_REQUEST"' "GET without bot"
t_contains "$(raw GET '/v1/computers/fs/files?bot=alice')" \
    '400 {"error":{"code":"BAD_REQUEST"' "GET without path"
t_contains "$(raw PUT '/v1/computers/nope/files?bot=alice&path=x' -T "$small")" \
    '404 {"error":{"code":"NOT_FOUND"' "PUT to no computer"
t_contains "$(raw GET '/v1/computers/nope/files?bot=alice&path=x')" \
    '404 {"error":{"code":"NOT_FOUND"' "GET from no computer"
t_contains "$(raw GET '/v1/computers/fs/files?bot=alice&path=missing')" \
    '404 {"error":{"code":"NOT_FOUND"' "GET of a missing file"
t_contains "$(raw GET '/v1/computers/fs/files?bot=alice&path=data')" \
    '400 {"error":{"code":"NOT_A_REGULAR_FILE"' "GET of a directory"
t_contains "$(printf 'abc' | raw PUT '/v1/computers/fs/files?bot=alice&path=x' \
    -H 'Transfer-Encoding: chunked' --data-binary @-)" \
    '411 {"error":{"code":"LENGTH_REQUIRED"' "PUT without Content-Length"
t_contains "$(curl -s -w ' %{http_code}' -T "$small" \
    "$CTL_URL/v1/computers/fs/files?bot=alice&path=x")" \
    '"code":"UNAUTHORIZED"' "PUT without the token"
[ -e "$HOME_WS/x" ] && t_fail "a refused put wrote"
out=$(ctl get --computer fs --bot alice missing "$T/m.out" 2>&1) &&
	t_fail "get of a missing file succeeded"
t_contains "$out" NOT_FOUND "CLI get of a missing file"
[ -e "$T/m.out" ] && t_fail "a failed get left its output"
kill -0 "$CTL_PID" || t_fail "serve died"
exit 0

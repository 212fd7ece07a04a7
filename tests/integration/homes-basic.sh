#!/bin/bash
# SPDX-License-Identifier: MIT
# C-8, C-9, C-11, C-5 through the real server and guestd: a run's end
# (deferred while another bot's run is live), a stop and an idle suspend
# each leave a new home revision; the machine deleted by hand, the next
# tool call brings the workspace back byte-identical; the operator's
# checkpoint, restore --revision (itself a new revision), computer show
# and homes verbs; only the newest HOME_KEEP_REVISIONS stay.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
. "${top_srcdir:-.}/tests/lib-homes.sh"


ctl_start --home-keep 4
HOME_DIR="$CTL_DATA/computers/team/home"
api POST /v1/computers '{"id":"team"}' >/dev/null

# Two bots run; the first to end defers, the last one saves.
api POST /v1/leases '{"computer":"team","bot":"alice","holder":"agent"}' >/dev/null
LA=$(api_field id)
api POST /v1/leases '{"computer":"team","bot":"bob","holder":"agent"}' >/dev/null
LB=$(api_field id)
r=$(api POST /v1/tools/write_file "{\"computer\":\"team\",\"bot\":\"alice\",\"lease\":\"$LA\",\"path\":\"bots/alice/notes.txt\",\"content\":\"hello\"}")
t_contains "$r" "200 " "write as alice"
head -c 3000000 /dev/urandom > "$T/blob"
r=$(curl -s -o /dev/null -w '%{http_code}' -X PUT \
    -H "Authorization: Bearer $(cat "$CTL_TOKEN")" --data-binary @"$T/blob" \
    "$CTL_URL/v1/computers/team/files?bot=bob&lease=$LB&path=shared/blob.bin")
t_eq "$r" 200 "upload a binary file as bob"
r=$(api POST "/v1/computers/team/runs/$LA/end" '{"outcome":"succeeded"}')
t_contains "$r" '"checkpoint":"deferred"' "alice's end defers: bob still runs"
t_eq "$(revs)" "" "no revision yet"
r=$(api POST "/v1/computers/team/runs/$LB/end" '{"outcome":"failed"}')
t_contains "$r" '"checkpoint":{"revision":1}' "bob's end (the last) saves"
t_eq "$(revs)" "1:run:bob/failed" "revision 1, caused by bob's run"
t_contains "$(cat "$CTL_DATA/home-revisions/team/rev-1.json")" '"revision": 1' \
    "metadata mirrored"
t_eq "$(readlink "$CTL_DATA/homes/team/latest")" "rev-1.tar" "latest names it"
# The archive's recorded hash is the file's.
api GET /v1/computers/team/homes >/dev/null
t_eq "$(api_field revisions.0.sha256)" \
    "$(sha256sum < "$CTL_DATA/homes/team/rev-1.tar" | cut -c1-64)" "sha256 recorded"

# An explicit stop saves first.
BEFORE=$(tree_sum "$HOME_DIR")
r=$(api POST /v1/computers/team/stop '{}')
t_contains "$r" '"state":"stopped"' "stopped"
t_eq "$(revs)" "2:stopped 1:run:bob/failed" "the stop left revision 2"
t_contains "$(ctl computer show team)" "home: revision 2" "computer show names it"
t_contains "$(ctl homes team)" "stopped" "homes lists it"
ev=$(api GET '/v1/computers/team/activity?limit=1000')
t_contains "$ev" '"kind":"computer.checkpoint"' "checkpoint event"
t_contains "$ev" 'revision 2, ' "event carries the revision"

# The machine is gone (deleted by hand): a read is answered from the
# store (C-15), the next call that needs the machine restores it first.
rm -rf "$CTL_DATA/computers/team"
r=$(api POST /v1/tools/read_file '{"computer":"team","bot":"alice","path":"bots/alice/notes.txt"}')
t_contains "$r" '"content":"hello"' "a stopped computer read from its store"
t_contains "$r" '"stored":{"revision":2' "from its newest revision"
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"alice","command":"cat notes.txt"}')
t_contains "$r" 'hello' "restored before the first call"
t_eq "$(tree_sum "$HOME_DIR")" "$BEFORE" "workspace byte-identical"
t_contains "$(api GET '/v1/computers/team/activity?limit=1000')" \
    '"kind":"computer.restore"' "restore event"

# Operator verbs: checkpoint, then restore an older revision as a new one.
r=$(api POST /v1/tools/write_file '{"computer":"team","bot":"alice","path":"bots/alice/notes.txt","content":"changed"}')
t_contains "$r" "200 " "change a file"
t_contains "$(ctl checkpoint team)" "team revision 3" "rakazoctl checkpoint"
t_contains "$(ctl restore team --revision 2)" "now revision 4" \
    "rakazoctl restore --revision 2"
r=$(api POST /v1/tools/read_file '{"computer":"team","bot":"alice","path":"bots/alice/notes.txt"}')
t_contains "$r" '"content":"hello"' "revision 2's file is back"
t_eq "$(revs)" "4:restore:2 3:operator 2:stopped 1:run:bob/failed" "nothing lost"
r=$(api POST /v1/computers/team/restore '{"revision":99}')
t_contains "$r" NO_SUCH_REVISION "an unknown revision"
r=$(api POST /v1/computers/team/restore '{"revision":"x"}')
t_contains "$r" "400 " "a bad revision"

# Idle suspend saves too; then only the newest four stay.
ctl_stop
ctl_start --home-keep 4 --idle-ms 600
ctl_wait_log "event=computer.idle_stop" 1 20
t_eq "$(revs)" "5:idle 4:restore:2 3:operator 2:stopped" \
    "idle suspend left revision 5; revision 1 pruned"
t_eq "$(ls "$CTL_DATA/homes/team" | tr '\n' ' ')" \
    "latest rev-2.tar rev-3.tar rev-4.tar rev-5.tar " "archives pruned alike"
t_eq "$(ls "$CTL_DATA/home-revisions/team" | tr '\n' ' ')" \
    "rev-2.json rev-3.json rev-4.json rev-5.json " "mirror pruned alike"
t_contains "$(api POST /v1/leases '{"computer":"team","bot":"alice","holder":"a"}')" \
    "201 " "no reservation left behind"

# Deleting the computer drops its home.
api DELETE "/v1/leases/$(api_field id)" >/dev/null
r=$(api DELETE /v1/computers/team '{"force":true}')
t_contains "$r" '"deleted":true' "deleted"
t_eq "$(ls "$CTL_DATA/homes/team" 2>/dev/null | grep -c rev-)" 0 "home gone"

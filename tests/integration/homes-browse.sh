#!/bin/bash
# SPDX-License-Identifier: MIT
# C-15 through the real tools API (real serve, local provider, real
# guestd): a stopped computer's files are listed, read and previewed from
# its newest stored revision without starting it (no guestd process, no
# new run row, state still stopped); paths are confined as guestd confines
# them (stable codes), a hostile revision's links and escaping names are
# never followed; a download starts the computer; attachments are capped
# by --attach-max and land under the bot's own folder.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

tool() {	# tool NAME JSON-ARGS (computer team, bot alice)
	api POST "/v1/tools/$1" "{\"computer\":\"team\",\"bot\":\"alice\",$2}"
}
guestd_running() {	# 1 when a guestd of team's workspace is alive
	for d in /proc/[0-9]*; do
		if { tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null |
		    grep -q -- "--workspace $CTL_DATA/computers/team/"; then
			echo 1
			return
		fi
	done
	echo 0
}
runs() {	# computer_runs rows of team
	ctl_sql "SELECT count(*) FROM computer_runs WHERE computer='team'"
}

ctl_start --attach-max 1000
api POST /v1/computers '{"id":"team"}' >/dev/null
r=$(tool write_file '"path":"bots/alice/notes.txt","content":"hello, stored"')
t_contains "$r" "200 " "write a text file"
python3 -c 'import sys; sys.stdout.write("é" * 40000)' > "$T/long.txt"
curl -s -o /dev/null -H "Authorization: Bearer $(cat "$CTL_TOKEN")" -X PUT \
    --data-binary @"$T/long.txt" \
    "$CTL_URL/v1/computers/team/files?bot=alice&path=bots/alice/long.txt"
head -c 5000 /dev/urandom > "$T/bin"
curl -s -o /dev/null -H "Authorization: Bearer $(cat "$CTL_TOKEN")" -X PUT \
    --data-binary @"$T/bin" \
    "$CTL_URL/v1/computers/team/files?bot=alice&path=shared/data.bin"
printf 'a\000b' > "$T/nul"
curl -s -o /dev/null -H "Authorization: Bearer $(cat "$CTL_TOKEN")" -X PUT \
    --data-binary @"$T/nul" \
    "$CTL_URL/v1/computers/team/files?bot=alice&path=shared/nul.txt"
r=$(api POST /v1/computers/team/stop '{}')
t_contains "$r" '"state":"stopped"' "stopped (revision 1 saved)"
t_eq "$(guestd_running)" 0 "no machine after the stop"
RUNS=$(runs)
STARTS=$(grep -c "event=computer.started" "$CTL_LOG")

# Browsing: from the stored revision, the machine left alone.
r=$(tool list_files '"path":"."')
t_contains "$r" "200 " "list the root of a stopped computer"
t_contains "$r" '"name":"bots"' "bots listed"
t_contains "$r" '"name":"shared"' "shared listed"
t_contains "$r" '"stored":{' "the answer names its revision"
r=$(tool list_files '"path":"bots/alice/"')
t_contains "$r" '"name":"notes.txt"' "a bot's folder"
t_contains "$r" '"size":13' "with the file's size"
r=$(tool read_file '"path":"bots/alice/notes.txt"')
t_contains "$r" '"content":"hello, stored"' "read a stored file"
t_contains "$r" '"revision":1' "from revision 1"
r=$(tool read_file '"path":"bots/alice/notes.txt","offset":7,"length":3')
t_contains "$r" '"content":"sto"' "a byte range"
r=$(tool read_file '"path":"bots/alice/long.txt","preview":true')
t_contains "$r" '"truncated":true' "a preview of a long text is cut"
api_field length > "$T/len"
t_eq "$(cat "$T/len")" 65536 "at 64 KiB, a whole character"
r=$(tool read_file '"path":"shared/data.bin","preview":true')
t_contains "$r" '"binary":true' "no preview of bytes"
t_not_contains "$r" '"content' "and no content"
r=$(tool read_file '"path":"shared/data.bin"')
api_field content_base64 | base64 -d > "$T/bin.back"
cmp -s "$T/bin" "$T/bin.back" || t_fail "binary read differs"
# A NUL byte is valid UTF-8 but no string of ours holds one: bytes.
r=$(tool read_file '"path":"shared/nul.txt"')
t_not_contains "$r" '"content"' "NUL bytes as text"
api_field content_base64 | base64 -d > "$T/nul.back"
cmp -s "$T/nul" "$T/nul.back" || t_fail "NUL read differs"
r=$(tool read_file '"path":"shared/nul.txt","preview":true')
t_contains "$r" '"binary":true' "no preview of NUL bytes"

# Confinement, with the codes a running machine gives.
r=$(tool read_file '"path":"../data/state.db"')
t_contains "$r" PATH_OUTSIDE_WORKSPACE "\"..\" refused"
r=$(tool read_file '"path":"/etc/passwd"')
t_contains "$r" PATH_OUTSIDE_WORKSPACE "an absolute path refused"
r=$(tool list_files '"path":"bots/../../"')
t_contains "$r" PATH_OUTSIDE_WORKSPACE "an escape in a listing refused"
r=$(tool read_file '"path":"bots//alice"')
t_contains "$r" PATH_INVALID "an empty segment refused"
r=$(tool read_file '"path":"bots/alice/nope"')
t_contains "$r" NOT_FOUND "a missing file"
r=$(tool read_file '"path":"bots/alice"')
t_contains "$r" NOT_A_REGULAR_FILE "a directory is not read"
r=$(tool list_files '"path":"bots/alice/notes.txt"')
t_contains "$r" NOT_A_DIRECTORY "a file is not listed"

# A hostile revision: a link out and names that climb are never followed.
python3 - "$T/evil.tar" <<'EOF'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    def add(name, data=b"", kind=tarfile.REGTYPE, link=""):
        i = tarfile.TarInfo(name); i.type = kind; i.linkname = link
        i.size = len(data); t.addfile(i, io.BytesIO(data))
    add("bots", kind=tarfile.DIRTYPE)
    add("bots/alice/passwd", kind=tarfile.SYMTYPE, link="/etc/passwd")
    add("bots/alice/hard", kind=tarfile.LNKTYPE, link="../../etc/passwd")
    add("../escaped.txt", b"out")
    add("/abs.txt", b"abs")
    add("bots/alice/ok.txt", b"fine")
EOF
cp "$T/evil.tar" "$CTL_DATA/homes/team/rev-2.tar"
ctl_sql "INSERT INTO home_revisions (computer, revision,
    created_ms, bytes, files, sha256, cause) VALUES ('team', 2, 1,
    $(stat -c %s "$T/evil.tar"), 6,
    '$(sha256sum < "$T/evil.tar" | cut -c1-64)', 'test')"
r=$(tool list_files '"path":"bots/alice"')
t_contains "$r" '"revision":2' "the newest revision is browsed"
t_contains "$r" '"type":"symlink","size":0' "a link is listed as one"
t_contains "$r" '"name":"passwd"' "by its name"
t_contains "$r" '"name":"ok.txt"' "a plain file beside it"
r=$(tool read_file '"path":"bots/alice/passwd"')
t_contains "$r" NOT_A_REGULAR_FILE "a symlink is not followed"
r=$(tool read_file '"path":"bots/alice/hard"')
t_contains "$r" NOT_A_REGULAR_FILE "a hard link is not followed"
r=$(tool read_file '"path":"bots/alice/passwd/x"')
t_contains "$r" NOT_FOUND "nor is a path through it"
r=$(tool list_files '"path":"."')
t_not_contains "$r" escaped "a climbing name is passed over"
t_not_contains "$r" abs.txt "an absolute name is passed over"
ctl_sql \
    "DELETE FROM home_revisions WHERE computer='team' AND revision=2"
rm -f "$CTL_DATA/homes/team/rev-2.tar"

# None of that started the computer.
t_eq "$(guestd_running)" 0 "no guestd was started"
t_eq "$(runs)" "$RUNS" "no run row was opened"
t_eq "$(grep -c "event=computer.started" "$CTL_LOG")" "$STARTS" \
    "no start in the log"
api GET /v1/computers/team >/dev/null
t_eq "$(api_field state)" stopped "still stopped"
t_eq "$(api_field run)" "" "no current run"

# A download of a whole file needs the machine: it starts.
code=$(curl -s -o "$T/got" -w '%{http_code}' \
    -H "Authorization: Bearer $(cat "$CTL_TOKEN")" \
    "$CTL_URL/v1/computers/team/files?bot=alice&path=shared/data.bin")
t_eq "$code" 200 "a download"
cmp -s "$T/bin" "$T/got" || t_fail "the download differs"
t_eq "$(guestd_running)" 1 "the download started the machine"
r=$(tool list_files '"path":"bots/alice"')
t_not_contains "$r" '"stored"' "a running computer is listed by its machine"

# Uploads: under the bot's own folder, capped by --attach-max.
r=$(tool attach_file '"name":"small.txt","content":"tiny"')
t_contains "$r" "200 " "an attachment under the cap"
t_eq "$(cat "$CTL_DATA/computers/team/home/bots/alice/attachments/small.txt")" \
    tiny "lands in bots/alice/attachments"
big=$(head -c 1500 /dev/zero | tr '\0' x)
r=$(tool attach_file "\"name\":\"big.txt\",\"content\":\"$big\"")
t_contains "$r" TOO_LARGE "an attachment over --attach-max"
r=$(tool attach_file '"name":"../x","content":"x"')
t_contains "$r" PATH_INVALID "an attachment name is not a path"

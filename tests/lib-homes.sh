# SPDX-License-Identifier: MIT
# Helpers of the home store tests (sourced after tests/lib-controller.sh):
# what the store says of computer "team" and what its machine runs.

# The revisions of team, newest first, one line of REV:CAUSE words.
revs() {
	api GET /v1/computers/team/homes >/dev/null
	python3 -c 'import json,sys
print(" ".join(str(r["revision"])+":"+r["cause"] for r in
    json.load(open(sys.argv[1]))["revisions"]))' "$T/api.out"
}

# Every revision row's sha256 is its archive's; $1 names the step.
check_whole() {
	api GET /v1/computers/team/homes >/dev/null
	python3 - "$T/api.out" "$CTL_DATA/homes/team" <<'PY' || t_fail "$1: a revision is not whole"
import hashlib, json, sys
for r in json.load(open(sys.argv[1]))["revisions"]:
    p = "%s/rev-%d.tar" % (sys.argv[2], r["revision"])
    h = hashlib.sha256(open(p, "rb").read()).hexdigest()
    assert h == r["sha256"], (p, h, r["sha256"])
PY
}

# The pid of team's guestd (the local provider's), or nothing.
guestd_pid() {
	for d in /proc/[0-9]*; do
		if { tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null |
		    grep -q -- "--workspace $CTL_DATA/computers/team/"; then
			echo "${d#/proc/}"
			return
		fi
	done
}

# Path, mode and sha256 of every file under the workspace $1, one line
# each, sorted; guestd's own .rakazo-* entries left out.  More arguments
# name the top folders to look at instead of the whole tree.
tree_sum() {
	python3 - "$@" <<'PY'
import hashlib, os, sys
root = sys.argv[1]
tops = sys.argv[2:] or sorted(e for e in os.listdir(root)
                              if not e.startswith(".rakazo-"))
for top in tops:
    for d, dirs, files in sorted(os.walk(os.path.join(root, top))):
        dirs[:] = sorted(e for e in dirs if not e.startswith(".rakazo-"))
        for f in sorted(files):
            p = os.path.join(d, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            print(os.path.relpath(p, root), oct(os.stat(p).st_mode),
                  hashlib.sha256(open(p, "rb").read()).hexdigest())
PY
}

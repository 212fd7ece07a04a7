#!/bin/bash
# SPDX-License-Identifier: MIT
# An import killed (SIGKILL) at any step of its swap ends, once guestd
# starts again, as exactly the old or exactly the new workspace, with no
# .rakazo-* leftovers inside it and no staging directory beside it, and
# workspace.imported names the import's tag exactly when the new tree is
# the one in place (a client whose import died asks it).  Both
# swaps are tried: moving entries through a journal (the workspace's parent
# is not writable, as when the workspace is a mount point) and exchanging
# a sibling staging directory (parent writable).  GUESTD_TEST_CRASH_AT is
# guestd's test hook that kills it at the named step.
. "$top_srcdir/tests/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	# A parent we cannot write (chmod) must become writable for cleanup.
	trap 'rc=$?; chmod -R u+w "$T" 2>/dev/null; (exit $rc); t_cleanup' EXIT
fi

head -c 70000 /dev/urandom > "$T/blob"
# The old workspace: nested directories, modes, a hidden file.
make_old() {
	mkdir -p "$1/a/b" "$1/keep"
	echo one > "$1/a/x"
	echo two > "$1/a/b/y"
	echo same > "$1/f1"
	echo hidden > "$1/.hidden"
	cp "$T/blob" "$1/keep/blob"
	chmod 750 "$1/a/b"
	chmod 600 "$1/f1"
	[ "$(id -u)" -eq 0 ] && chown -R "$T_USER" "$1"
	return 0
}

# The new one, as a tar: some names shared with different content.
mkdir -p "$T/new/n/m" "$T/new/keep"
echo new > "$T/new/f1"
echo zz > "$T/new/n/m/z"
head -c 90000 /dev/urandom > "$T/new/keep/blob"
head -c 5000 /dev/urandom > "$T/new/g2"
tar -C "$T/new" -cf "$T/new.tar" f1 n keep g2

manifest() {	# type, mode, size and content of every entry below $1
	# (but the import's tag, which workspace.imported reads)
	(cd "$1" && find . -mindepth 1 ! -path ./.rakazo-imported \
	    -printf '%P %y %m %s\n' | sort &&
	    find . -type f ! -path ./.rakazo-imported -print0 | sort -z |
	    xargs -0 -r md5sum)
}

leftovers() {	# $1 workspace: guestd's names in or beside it
	ls -A "$1" | grep '^\.rakazo-' | grep -v '^\.rakazo-imported$'
	ls -A "$(dirname "$1")" | grep "^\.$(basename "$1")\.import-"
}

stop_guestd() {
	kill "$GUESTD_PID" 2>/dev/null
	wait "$GUESTD_PID" 2>/dev/null
	GUESTD_PID=""
}

# setup_ws MODE: a fresh workspace whose parent guestd can (beside) or
# cannot (inside) write, holding the old tree.
n=0
setup_ws() {
	n=$((n + 1))
	P="$T/p$n"
	mkdir -p "$P"
	WS="$P/ws"
	mkdir "$WS"
	make_old "$WS"
	if [ "$1" = beside ]; then
		[ "$(id -u)" -eq 0 ] && chown "$T_USER" "$P"
	else
		[ "$(id -u)" -eq 0 ] || chmod 555 "$P"
	fi
	return 0
}

# The two trees to expect, from a clean import.
setup_ws inside
OLD=$(manifest "$WS")
t_start_guestd
rk import < "$T/new.tar" || t_fail "clean import"
NEW=$(manifest "$WS")
stop_guestd
[ "$OLD" != "$NEW" ] || t_fail "old and new trees are the same"
t_eq "$(leftovers "$WS")" "" "leftovers of a clean import"

# crash MODE STEP WANT: kill at STEP of an import, restart, expect WANT.
crash() {
	setup_ws "$1"
	GUESTD_TEST_CRASH_AT=$2
	export GUESTD_TEST_CRASH_AT
	t_start_guestd
	unset GUESTD_TEST_CRASH_AT
	rk import --tag "t-$n" < "$T/new.tar" >/dev/null 2>&1 &&
		t_fail "$1/$2: import ok"
	wait "$GUESTD_PID"
	st=$?
	GUESTD_PID=""
	t_eq "$st" 137 "$1/$2: guestd killed at the step"
	grep -q "workspace.test_crash step=$2" "$GUESTD_LOG" ||
		t_fail "$1/$2: step not reached"
	if [ "$1" = inside ] && [ "$2" != staged ]; then
		[ -e "$WS/.rakazo-swap" ] || t_fail "$1/$2: no journal"
	fi
	t_start_guestd
	got=$(manifest "$WS")
	if [ "$3" = old ]; then
		[ "$got" = "$OLD" ] || t_fail "$1/$2: not the old tree:
$got"
	else
		[ "$got" = "$NEW" ] || t_fail "$1/$2: not the new tree:
$got"
	fi
	t_eq "$(leftovers "$WS")" "" "$1/$2: leftovers"
	tag=$(rk call workspace.imported '{}')
	if [ "$3" = old ]; then
		t_contains "$tag" '"tag":""' "$1/$2: the old tree has no tag"
	else
		t_contains "$tag" "\"tag\":\"t-$n\"" "$1/$2: the new tree's tag"
	fi
	# And the workspace still imports and exports.
	rk export > "$T/after.tar" || t_fail "$1/$2: export after"
	stop_guestd
	t_note "$1 $2: $3"
}

crash inside staged old
crash inside journal old
crash inside moving-out old
crash inside moved-out new
crash inside moving-in new
crash inside moved-in new
crash beside staged old
crash beside exchanged new

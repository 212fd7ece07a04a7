#!/bin/bash
# SPDX-License-Identifier: MIT
# workspace export and import (G-28, X-3): a mixed tree goes out as one tar
# of directories and regular files (symlinks, FIFOs and the browser
# profiles' cache/lock files left out, same-named project files kept) and
# comes back with the same content and modes.  Done twice: staging inside
# the workspace (parent not writable) and beside it (renameat2 exchange).
. "$top_srcdir/tests/lib.sh"

command -v tar >/dev/null || { echo "# SKIP: no tar"; exit 77; }
F="$T/files"
mkdir -p "$F"
P=.browser-profiles/a/Default

mk_tree() {
	rm -rf "${WS:?}"/* "$WS"/.[!.]* 2>/dev/null
	mkdir -p "$WS/bots/a/Cache" "$WS/bots/b/deep/er/est" \
	    "$WS/shared/empty-dir" "$WS/$P/Cache" "$WS/$P/Code Cache/js" \
	    "$WS/$P/Service Worker/CacheStorage" "$WS/$P/Service Worker/Database"
	echo keep > "$WS/bots/a/Cache/x"
	printf '#!/bin/sh\necho hi\n' > "$WS/bots/a/run.sh"
	chmod 0755 "$WS/bots/a/run.sh"
	echo private > "$WS/bots/a/private"
	chmod 0600 "$WS/bots/a/private"
	head -c 3000000 /dev/urandom > "$WS/bots/b/deep/er/est/blob.bin"
	head -c 777 /dev/urandom > "$WS/shared/small.bin"
	: > "$WS/shared/empty"
	echo t > "$WS/shared/build.tmp"
	echo SingletonLock > "$WS/bots/a/SingletonLock"
	chmod 0700 "$WS/bots/b"
	echo lock > "$WS/.browser-profiles/a/SingletonLock"
	echo c > "$WS/$P/Cache/data_0"
	echo js > "$WS/$P/Code Cache/js/index"
	echo sw > "$WS/$P/Service Worker/CacheStorage/k"
	echo db > "$WS/$P/Service Worker/Database/000001.log"
	echo t > "$WS/$P/x.tmp"
	echo cookies > "$WS/$P/Cookies"
	chmod 0600 "$WS/$P/Cookies"
	ln -s /etc/passwd "$WS/shared/link"
	mkfifo "$WS/shared/fifo"
	touch -d '2001-02-03 04:05:06' "$WS/shared/small.bin"
	[ "$(id -u)" -eq 0 ] && chown -R "$T_USER" "$WS"
	return 0
}

# path type mode size (+ mtime for files), then a hash of every file.
snap() {
	( cd "$WS" &&
	  find . -mindepth 1 -type d -printf '%P %y %m\n'
	  find . -mindepth 1 -type f -printf '%P %y %m %s %Ts\n'
	  find . -type f -print0 | xargs -0 -r sha256sum ) | LC_ALL=C sort
}

roundtrip() {	# label
	mk_tree
	rk export > "$F/ws.tar" || t_fail "$1: export failed"
	tar -tf "$F/ws.tar" > "$F/list" || t_fail "$1: export is not a tar"
	list=$(cat "$F/list")
	for p in bots/a/Cache/x bots/a/SingletonLock shared/build.tmp \
	    shared/empty bots/b/deep/er/est/blob.bin "$P/Cookies" \
	    "$P/Service Worker/Database/000001.log"; do
		grep -qxF "$p" "$F/list" || t_fail "$1: $p missing from the tar"
	done
	for p in .browser-profiles/a/SingletonLock "$P/Cache/" "$P/Code Cache/" \
	    "$P/Service Worker/CacheStorage/" "$P/x.tmp" shared/link \
	    shared/fifo; do
		t_not_contains "$list" "$p" "$1: export"
	done
	grep -q '^\./' "$F/list" && t_fail "$1: names start with ./"
	tar -tvf "$F/ws.tar" | grep -q '^[^d-]' && t_fail "$1: non-file entry"

	# What import must restore: the tree without what export leaves out.
	rm -rf "$WS/.browser-profiles/a/SingletonLock" "$WS/$P/Cache" \
	    "$WS/$P/Code Cache" "$WS/$P/Service Worker/CacheStorage" \
	    "$WS/$P/x.tmp" "$WS/shared/link" "$WS/shared/fifo"
	want=$(snap)

	# Alter the workspace: everything below it must be replaced.
	rm -rf "$WS/bots"
	echo stray > "$WS/stray"
	echo changed > "$WS/shared/empty"
	chmod 0644 "$WS/stray" "$WS/shared/empty"
	[ "$(id -u)" -eq 0 ] && chown -R "$T_USER" "$WS"

	rk import < "$F/ws.tar" || t_fail "$1: import failed"
	got=$(snap)
	[ "$got" = "$want" ] || {
		diff <(echo "$want") <(echo "$got") >&2
		t_fail "$1: imported tree differs"
	}
	ls -A "$T" | grep -q '^\.ws\.import-' && t_fail "$1: staging dir left"
	ls -A "$WS" | grep -q '^\.rakazo-' && t_fail "$1: temp dir left in ws"
	t_note "$1: ok"
}

t_start_guestd

# 1. The parent of the workspace is not writable by guestd's user: the
# staging dir goes inside the workspace and entries are moved.
ino_before=$(stat -c %i "$WS")
if [ "$(id -u)" -ne 0 ]; then
	chmod 0555 "$T"
	roundtrip "staged inside"
	chmod 0755 "$T"
else
	roundtrip "staged inside"
fi
t_eq "$(stat -c %i "$WS")" "$ino_before" "workspace inode after moving"

# 2. A writable parent: staging beside the workspace, one exchange.
[ "$(id -u)" -eq 0 ] && chown "$T_USER" "$T"
chmod 0751 "$WS"
ino_before=$(stat -c %i "$WS")
roundtrip "staged beside"
[ "$(stat -c %i "$WS")" != "$ino_before" ] ||
	t_fail "the exchange did not replace the workspace directory"
t_eq "$(stat -c %a "$WS")" 751 "workspace root mode"

# 3. The exported tar is what plain tar extracts too.
mkdir "$F/x"
tar -xf "$F/ws.tar" -C "$F/x" || t_fail "tar cannot extract the export"
cmp "$F/x/bots/b/deep/er/est/blob.bin" "$WS/bots/b/deep/er/est/blob.bin" ||
	t_fail "blob differs"

# 4. An empty workspace exports to an empty archive, which imports.
rm -rf "${WS:?}"/* "$WS"/.[!.]* 2>/dev/null
rk export > "$F/empty.tar" || t_fail "empty export failed"
t_eq "$(tar -tf "$F/empty.tar" | wc -l)" 0 "entries of the empty export"
echo x > "$WS/x"
[ "$(id -u)" -eq 0 ] && chown "$T_USER" "$WS/x"
rk import < "$F/empty.tar" || t_fail "empty import failed"
t_eq "$(ls -A "$WS")" "" "workspace after an empty import"
exit 0

#!/bin/bash
# SPDX-License-Identifier: MIT
# Every source file of the tree says its license in an SPDX line near its
# top, LICENSE holds the MIT text, and the Debian copyright files say it,
# with guestd's own saying that the binary, which links libvncserver
# (GPL-2.0-or-later), is distributed under the GPL's terms.  The file list
# is git's: a release tarball (make distcheck) is no checkout, and the
# test skips there (77) once the files it has are checked.
set -u
: "${top_srcdir:?run through make check}"
cd "$top_srcdir" || exit 1
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }

grep -q '^MIT License$' LICENSE 2>/dev/null || bad "LICENSE is not the MIT text"
grep -q '^License: MIT$' packaging/debian/copyright ||
    bad "packaging/debian/copyright names no MIT license"
grep -qi 'no license has been chosen' packaging/debian/copyright &&
    bad "packaging/debian/copyright still says no license was chosen"
grep -q '^License: GPL-2+$' packaging/debian/guestd.copyright ||
    bad "guestd.copyright does not put the guestd binary under GPL-2+"
grep -q 'libvncserver' packaging/debian/guestd.copyright ||
    bad "guestd.copyright does not say guestd links libvncserver"

# The tree must be a checkout's top, not a tarball unpacked inside one
# (make distcheck's, under a git-ignored build directory).
top=$(git rev-parse --show-toplevel 2>/dev/null || true)
if [ -z "$top" ] || [ "$(cd "$top" && pwd -P)" != "$(pwd -P)" ]; then
	[ "$fail" -eq 0 ] || exit 1
	echo "# not a git checkout: the per-file SPDX check skipped"
	exit 77
fi

# Source files: C, shell, Python, JavaScript, the build files, man pages,
# the pages we serve.  Seed corpora and data files carry no comments.
n=0
while IFS= read -r f; do
	case "$f" in
	*/corpus/*) continue ;;
	*.c|*.h|*.sh|*.py|*.mjs|*.js|*.html|*.service) ;;
	Makefile.am|configure.ac|.ci/run|image/Dockerfile) ;;
	image/rakazo-browser|packaging/debian/rules) ;;
	man/*.[1-9]) ;;
	*) continue ;;
	esac
	[ -f "$f" ] || continue
	n=$((n + 1))
	head -n 4 "$f" | grep -q 'SPDX-License-Identifier: MIT' ||
	    bad "$f has no SPDX-License-Identifier line in its first 4 lines"
done < <(git ls-files)
[ "$n" -gt 100 ] || bad "only $n source files found"
[ "$fail" -eq 0 ] || exit 1
echo "ok: $n source files carry an SPDX line; LICENSE and copyright agree"

# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Which Debian archive this host's apt uses (sourced by
# tests/fresh-machine.sh and tests/lib-docker.sh, which both make a Debian
# root with debootstrap from the same mirror apt already reaches).

# apt_uri SUITE: the URI apt on this host uses for SUITE (deb822 or
# one-line format), or nothing.
apt_uri() {
	local f
	{
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v suite="$1" '
		    /^$/ { if (ok && uri != "") { print uri; exit } ok = 0; uri = "" }
		    /^URIs:/ { uri = $2 }
		    /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) ok = 1 }
		    END { if (ok && uri != "") print uri }' "$f"
	done | head -n 1
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v suite="$1" '$1 == "deb" {
		    for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) break
		    if ($(i + 1) == suite) print $i }' "$f"
	done | head -n 1
	} | head -n 1
}

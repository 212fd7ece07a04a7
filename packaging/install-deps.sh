#!/bin/sh
# Install everything needed to build, run and test rakazo-computer on
# Debian 12.  Idempotent: packages already present are left alone, so the
# README's commands and .ci/run can all call it.
set -eu

PKGS="
autoconf automake libtool pkg-config make gcc clang libclang-rt-14-dev
libwebsockets-dev libjansson-dev libcmocka-dev libarchive-dev libssl-dev
mandoc bash coreutils procps tar xz-utils ca-certificates
"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done

if [ -n "$missing" ]; then
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO="sudo"
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
	# shellcheck disable=SC2086
	$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q \
	    --no-install-recommends $missing
fi

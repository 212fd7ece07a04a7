#!/bin/sh
# SPDX-License-Identifier: MIT
# Install everything needed to build, run and test rakazo-computer on
# Debian 12.  Idempotent: packages already present are left alone and apt is
# not even called then, so the README's commands and .ci/run can all call it
# on every run.  As a normal user it uses sudo; as root it needs nothing.
#
#   --docker   also the Docker engine and debootstrap, for the image test
#              (tests/integration/image-docker.sh) and tests/lib-docker.sh;
#              .ci/run passes it.  RAKAZO_DEPS_DOCKER=1 does the same.
set -eu

want_docker=${RAKAZO_DEPS_DOCKER:-0}
for a in "$@"; do
	case "$a" in
	--docker) want_docker=1 ;;
	*) echo "usage: $0 [--docker]" >&2; exit 2 ;;
	esac
done

# Build: the autotools chain and the libraries configure checks for.
# Tests: cmocka (unit), clang + compiler-rt (ASan/UBSan, libFuzzer),
# llvm-14 for llvm-symbolizer (readable sanitizer stacks), mandoc (man page
# lint in `make check`), and the plain tools the integration scripts use;
# twm so tests/integration/display-wm.sh has a window manager to start,
# and xfonts-base, the bitmap fonts X clients (xterm, xlogo) name by
# default: a fresh machine has none, and Xvfb alone has only "fixed" and
# "cursor".  (twm's own default, "variable", needs more than this: the
# twmrc guestd writes names "fixed", which every Xvfb has.)
# imagemagick and pngcheck: strict decoders every PNG we write must pass
# (tests/integration/png-strict.sh).
PKGS="
autoconf automake libtool pkg-config make gcc libc6-dev build-essential
clang libclang-rt-14-dev llvm-14
libwebsockets-dev libjansson-dev libcmocka-dev libarchive-dev libssl-dev
libx11-dev libxext-dev libxdamage-dev libxfixes-dev libxtst-dev
libturbojpeg0-dev libjpeg62-turbo-dev zlib1g-dev libpng-dev xvfb x11-utils x11-apps
twm xfonts-base imagemagick pngcheck
novnc xterm
chromium jq
libvncserver-dev
libnss-wrapper
libsqlite3-dev sqlite3 libcurl4-openssl-dev curl python3 file
libyaml-dev openssl
libpq-dev postgresql
mandoc bash coreutils findutils diffutils grep sed procps psmisc
util-linux passwd tar xz-utils gzip ca-certificates
dpkg-dev debhelper lintian
"
# Packaging: dpkg-dev, debhelper and lintian for .ci/run's
# `dpkg-buildpackage -us -uc -b` step (packaging/debian).
# Docker: the engine (dockerd; tests start it themselves where no systemd
# runs one) and debootstrap, which makes the Debian base image the tests
# build the computer image on (no registry is reachable from CI); iproute2
# for the tests that read the bridge's own address off its interface.
if [ "$want_docker" = 1 ]; then
	PKGS="$PKGS docker.io debootstrap iproute2"
fi

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done

# Node for the browser tests (tests/integration/screen-novnc.sh): any
# node and npm on PATH will do (NodeSource's included); Debian's otherwise.
# Debian 12's is Node 18, so tests/browser pins the newest playwright-core
# that still runs on it (1.61.x; 1.62 and later need Node 20).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	missing="$missing nodejs npm"
fi

# The npm packages the tests and the terminal page need, each pinned by
# its directory's package-lock.json and installed into its node_modules as
# the user running this script; skipped when that is already newer than
# the lock file:
#   tests/browser  playwright-core for the browser tests
#   tests/s3       s3rver for the object store tests (tests/fixtures/
#                  s3-front.mjs puts a SigV4 verifier in front of it)
#   tests/k8s      kubernetes-models (the official schemas) and yaml for
#                  the kubernetes provider's tests
#   term           xterm.js for the terminal page (term/term.html): `make`
#                  copies it into term-assets/ and `make install` under the
#                  package data directory; guestd serves it, never a CDN
npm_modules() {	# DIR, relative to the tree
	d="$(dirname "$0")/../$1"
	[ -f "$d/package-lock.json" ] || return 0
	[ "$d/node_modules/.package-lock.json" -nt "$d/package-lock.json" ] &&
		return 0
	echo "install-deps: npm ci in $1" >&2
	(cd "$d" && npm ci --no-audit --no-fund --loglevel=error)
}

all_npm_modules() {
	for m in tests/browser tests/s3 tests/k8s term; do
		npm_modules "$m" || return 1
	done
}

[ -n "$missing" ] || { all_npm_modules; exit; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "install-deps: missing packages:$missing" >&2
		echo "install-deps: run this script as root (no sudo found)" >&2
		exit 1
	fi
	SUDO="sudo"
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# Another process may hold the dpkg lock on a fresh machine: wait for it.
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
# shellcheck disable=SC2086
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q \
    --no-install-recommends $missing
all_npm_modules

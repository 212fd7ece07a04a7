#!/bin/sh
# SPDX-License-Identifier: MIT
# Build the computer image (image/Dockerfile) from this source tree and
# print its size.
#
#   image/build.sh [--tag NAME] [--base IMAGE] [--browser chromium|brave]
#                  [--brave-deb FILE] [--stage-tag NAME]
#                  [-- more docker build args]
#
# The build context is a fresh directory holding only what the Dockerfile
# copies (the sources but no tests, term/node_modules' xterm.js files,
# image/), so build
# trees, an in-tree configure or other node_modules in the checkout never
# reach the image and the context stays small, whichever builder runs.
# --base is the DEBIAN_IMAGE build arg (default debian:bookworm-slim);
# tests use a debootstrap image of their own (tests/lib-docker.sh), as no
# registry is reachable there.  --brave-deb copies Brave's .deb into the
# context's image/brave/ (see image/README.md).  --stage-tag also tags the
# build stage (all of it from the layer cache by then), so that pruning
# dangling images keeps what the next build can reuse.  The build uses the host's
# network (--network host): the only thing it fetches is Debian packages.
# Needs term/node_modules (packaging/install-deps.sh fills it).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
tag=rakazo-computer
base=""
browser=chromium
brave_deb=""
stage_tag=""
while [ $# -gt 0 ]; do
	case "$1" in
	--tag) tag=$2; shift 2 ;;
	--base) base=$2; shift 2 ;;
	--browser) browser=$2; shift 2 ;;
	--brave-deb) brave_deb=$2; shift 2 ;;
	--stage-tag) stage_tag=$2; shift 2 ;;
	--) shift; break ;;
	*)
		echo "usage: $0 [--tag NAME] [--base IMAGE] [--browser chromium|brave] [--brave-deb FILE] [--stage-tag NAME] [-- docker build args]" >&2
		exit 2
		;;
	esac
done
case "$browser" in
chromium | brave) ;;
*) echo "build.sh: --browser wants chromium or brave, not '$browser'" >&2; exit 2 ;;
esac
if [ ! -f "$top/term/node_modules/@xterm/xterm/lib/xterm.js" ]; then
	echo "build.sh: term/node_modules is missing: run packaging/install-deps.sh first" >&2
	exit 1
fi

ctx=$(mktemp -d "${TMPDIR:-/tmp}/rakazo-image.XXXXXX")
trap 'rm -rf "$ctx"' EXIT
trap 'exit 1' INT TERM
(cd "$top" && tar -cf - \
    --exclude='*.o' --exclude='*.a' --exclude=.deps --exclude=.dirstamp \
    --exclude=node_modules --exclude='image/brave/*.deb' \
    configure.ac Makefile.am common guestd controller man \
    term image) | tar -C "$ctx" -xf -
(cd "$top" && tar -cf - term/node_modules/@xterm) | tar -C "$ctx" -xf -
if [ -n "$brave_deb" ]; then
	cp "$brave_deb" "$ctx/image/brave/"
fi

set -- --network host -f "$ctx/image/Dockerfile" \
    --build-arg BROWSER="$browser" "$@"
[ -z "$base" ] || set -- --build-arg DEBIAN_IMAGE="$base" "$@"
# The classic builder unless the caller chose: it needs no buildx plugin
# and honours --network host on every engine version.
: "${DOCKER_BUILDKIT:=0}"
export DOCKER_BUILDKIT
start=$(date +%s)
docker build -t "$tag" "$@" "$ctx"
end=$(date +%s)
if [ -n "$stage_tag" ]; then
	docker build -q --target build -t "$stage_tag" "$@" "$ctx" >/dev/null
fi
size=$(docker image inspect -f '{{.Size}}' "$tag")
echo "image $tag: $((size / 1048576)) MiB ($size bytes), built in $((end - start)) s"

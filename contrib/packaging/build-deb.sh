#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# build-deb.sh — build the agentrun .deb from a `make dist` tarball.
#
# Usage: contrib/packaging/build-deb.sh TARBALL [WORKDIR]
#
# Unpacks TARBALL (agentrun-VERSION.tar.xz) in WORKDIR (default: a new
# directory under /tmp), copies contrib/packaging/debian/ into place as
# debian/ (the tree keeps it under contrib/ so that the repository stays a
# plain upstream tree) and runs `dpkg-buildpackage -us -uc -b`. The .deb
# lands in WORKDIR; its path is printed last. Build dependencies:
# `dpkg-checkbuilddeps` in the unpacked tree lists what is missing
# (contrib/install-deps.sh installs them). DEB_BUILD_OPTIONS is passed on
# (e.g. DEB_BUILD_OPTIONS="nocheck parallel=2").
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	sed -n '4,16p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
fi
tarball=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=${2:-$(mktemp -d /tmp/agentrun-deb.XXXXXX)}
mkdir -p "$work"
work=$(cd "$work" && pwd)

name=$(basename "$tarball")
case $name in
agentrun-*.tar.xz) version=${name#agentrun-} version=${version%.tar.xz} ;;
*)
	echo "build-deb.sh: $name is not an agentrun-VERSION.tar.xz" >&2
	exit 2
	;;
esac

src=$work/agentrun-$version
rm -rf "$src"
tar -C "$work" -xf "$tarball"
[ -d "$src/contrib/packaging/debian" ] || {
	echo "build-deb.sh: $name has no contrib/packaging/debian" >&2
	exit 1
}
cp -a "$src/contrib/packaging/debian" "$src/debian"
# the upstream version of debian/changelog must be the tarball's
deb_version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
if [ "${deb_version%-*}" != "$version" ]; then
	echo "build-deb.sh: debian/changelog has $deb_version, the tarball is $version: add a changelog entry (dch -v $version-1)" >&2
	exit 1
fi
# 3.0 (quilt) wants the orig tarball next to the tree
ln -sf "$tarball" "$work/agentrun_$version.orig.tar.xz"
(cd "$src" && dpkg-checkbuilddeps) || {
	echo "build-deb.sh: missing build dependencies (above); run contrib/install-deps.sh" >&2
	exit 1
}
(cd "$src" && dpkg-buildpackage -us -uc -b)
ls "$work"/agentrun_"$deb_version"_*.deb

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Packaging: the .deb builds from the dist tarball with
# contrib/packaging/build-deb.sh (dpkg-buildpackage -us -uc -b, debian/
# from contrib/packaging/debian/), holds every installed file, unpacks into
# a scratch root and `agentrun --version` runs from there; the rpm spec
# parses (rpmspec -P), has the tarball's version, and its %files cover what
# `make install` installs. Work happens in $TOP_BUILDDIR/tests/work/packaging.
. "$(dirname "$0")/../lib.sh"

[ -f "$TOP_BUILDDIR/Makefile" ] || skip "no Makefile in $TOP_BUILDDIR"
VERSION=$(sed -n 's/^VERSION = //p' "$TOP_BUILDDIR/Makefile")
[ -n "$VERSION" ] || skip "no VERSION in $TOP_BUILDDIR/Makefile"
WORK=$TOP_BUILDDIR/tests/work/packaging
PKG=$TOP_SRCDIR/contrib/packaging

do_make()
{
	# not the jobserver or flags of an outer `make check`
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP_BUILDDIR" "$@"
}

# The dist tarball: `make dist` is `make distdir` + tar; distdir= keeps the
# build tree free of a tarball of ours.
make_tarball()
{
	rm -rf "$WORK"
	mkdir -p "$WORK"
	do_make distdir distdir="$WORK/agentrun-$VERSION" >/dev/null
	tar -C "$WORK" -cJf "$WORK/agentrun-$VERSION.tar.xz" \
		"agentrun-$VERSION"
	rm -rf "${WORK:?}/agentrun-$VERSION"
}

t_deb_builds_and_runs()
{
	local deb root missing start
	require_cmd dpkg-buildpackage dpkg-checkbuilddeps dpkg-parsechangelog
	missing=$(dpkg-checkbuilddeps "$PKG/debian/control" 2>&1) ||
		skip "build dependencies missing (contrib/install-deps.sh installs them): $missing"
	assert_eq "$(dpkg-parsechangelog -l "$PKG/debian/changelog" -S Version)" \
		"$VERSION-1" "debian/changelog version (add an entry: dch -v $VERSION-1)"
	start=$(date +%s)
	make_tarball
	DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
		"$PKG/build-deb.sh" "$WORK/agentrun-$VERSION.tar.xz" "$WORK" \
		>"$WORK/build.log" 2>&1 || {
		tail -n 40 "$WORK/build.log"
		fail "build-deb.sh failed (log: $WORK/build.log)"
	}
	echo "# .deb built in $(($(date +%s) - start)) s"
	deb=$(ls "$WORK"/agentrun_"$VERSION"-1_*.deb)
	[ -f "$deb" ] || fail "no .deb in $WORK"
	assert_status 0 dpkg-deb -f "$deb" Package Version Depends
	assert_contains "$OUT" "Version: $VERSION-1"
	assert_contains "$OUT" "libseccomp2"
	root=$WORK/root
	assert_status 0 dpkg -x "$deb" "$root"
	assert_status 0 "$root/usr/bin/agentrun" --version
	assert_contains "$OUT" "agentrun version $VERSION"
	assert_status 0 "$root/usr/bin/agentrun" help run
	assert_contains "$OUT" "--bundle"
	for f in etc/containers/containers.conf.d/agentrun.conf \
		usr/share/agentrun/seccomp/agent-default.json \
		usr/share/bash-completion/completions/agentrun \
		usr/share/zsh/vendor-completions/_agentrun \
		usr/share/man/man1/agentrun.1.gz \
		usr/share/man/man1/agentrun-sandbox.1.gz \
		usr/share/doc/agentrun/copyright; do
		[ -f "$root/$f" ] || fail "the .deb lacks /$f"
	done
	for f in "$TOP_SRCDIR"/contrib/profiles/*.json; do
		[ -f "$root/usr/share/agentrun/profiles/${f##*/}" ] ||
			fail "the .deb lacks profiles/${f##*/}"
	done
	for f in "$TOP_SRCDIR"/docs/man/*.1.md; do
		f=${f##*/}
		[ -f "$root/usr/share/man/man1/${f%.md}.gz" ] ||
			fail "the .deb lacks the man page ${f%.md}"
	done
	# the podman drop-in is a conffile
	assert_status 0 dpkg-deb --ctrl-tarfile "$deb"
	dpkg-deb -e "$deb" "$WORK/control"
	assert_contains "$(cat "$WORK/control/conffiles")" \
		/etc/containers/containers.conf.d/agentrun.conf
	rm -rf "$WORK"
}

t_rpm_spec()
{
	local spec=$PKG/agentrun.spec parsed f pat ok d=$TEST_TMP/inst
	local -a pats=()
	require_cmd rpmspec
	assert_status 0 rpmspec -P "$spec"
	parsed=$OUT
	assert_eq "$(rpmspec -q --srpm --qf '%{version}' "$spec" 2>/dev/null)" \
		"$VERSION" "agentrun.spec Version"
	# %files patterns (without %dir/%config/%license/%doc lines' macros)
	while read -r line; do
		case $line in
		%files*) continue ;;
		%license* | %doc* | %dir*) continue ;;
		%config*) line=${line##* } ;;
		/*) ;;
		*) continue ;;
		esac
		[[ $line == */ ]] && line="$line*"
		pats+=("$line")
	done < <(sed -n '/^%files/,/^%changelog/p' <<<"$parsed" | sed '$d')
	[ ${#pats[@]} -gt 0 ] || fail "no %files entries"
	# what make install installs with the spec's layout
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP_BUILDDIR" \
		prefix=/usr sysconfdir=/etc DESTDIR="$d" install >/dev/null
	while read -r f; do
		ok=0
		for pat in "${pats[@]}"; do
			# shellcheck disable=SC2053
			[[ $f == $pat ]] && ok=1 && break
		done
		[ "$ok" = 1 ] || fail "agentrun.spec %files does not cover $f"
	done < <(cd "$d" && find . -type f | sed 's/^\.//')
}

run_test "packaging: the .deb builds from the dist tarball and runs" \
	t_deb_builds_and_runs
run_test "packaging: the rpm spec parses and covers make install" t_rpm_spec
finish

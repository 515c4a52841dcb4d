#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `make install DESTDIR=...` puts everything in its FHS place under the
# prefix (binary, man pages, bash and zsh completion, the seccomp profile,
# the agent profiles, the user docs the man pages name), the podman
# containers.conf drop-in where podman reads it whatever the prefix
# (/etc/containers/containers.conf.d, naming the installed binary first),
# the installed binary runs, and `make uninstall` removes every file again.
. "$(dirname "$0")/../lib.sh"

[ -f "$TOP_BUILDDIR/Makefile" ] || skip "no Makefile in $TOP_BUILDDIR"
command -v make >/dev/null || skip "make is not installed"

P=/opt/agentrun-test
D=$TEST_TMP/destdir
PODMANCONFDIR=$(sed -n 's/^podmanconfdir = //p' "$TOP_BUILDDIR/Makefile")

do_make()
{
	# not the jobserver or flags of an outer `make check`
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP_BUILDDIR" \
		prefix=$P sysconfdir=$P/etc DESTDIR="$D" "$@"
}

configured_docdir()
{
	# shellcheck disable=SC2016 # make's $(docdir)
	(cd "$TOP_BUILDDIR" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s \
		--no-print-directory -f Makefile -f - print-docdir \
		<<<'print-docdir: ; @echo $(docdir)')
}

expected_files()
{
	local f
	echo "$P/bin/agentrun"
	echo "$PODMANCONFDIR/agentrun.conf"
	echo "$P/share/doc/agentrun/sandbox.md"
	echo "$P/share/doc/agentrun/audit.md"
	echo "$P/share/doc/agentrun/vm.md"
	# the guest's side of `sandbox --vm`
	echo "$P/share/agentrun/vm/agentrun-vm"
	echo "$P/share/agentrun/vm/vm-init.sh"
	echo "$P/share/agentrun/seccomp/agent-default.json"
	for f in "$TOP_SRCDIR"/contrib/profiles/*.json; do
		echo "$P/share/agentrun/profiles/${f##*/}"
	done
	echo "$P/share/zsh/site-functions/_agentrun"
	# the web dashboard's page (agentrun ui)
	for f in "$TOP_SRCDIR"/contrib/ui/*; do
		echo "$P/share/agentrun/ui/${f##*/}"
	done
	# the AppArmor profile where AppArmor is and its parser takes it
	if [ -d /etc/apparmor.d ] && { ! command -v apparmor_parser >/dev/null ||
		sed "s|^profile agentrun /usr/bin/agentrun |profile agentrun $P/bin/agentrun |" \
			"$TOP_SRCDIR/contrib/apparmor/agentrun" |
		apparmor_parser -Q -K /dev/stdin >/dev/null 2>&1; }; then
		echo /etc/apparmor.d/agentrun
	fi
	# shellcheck disable=SC2016 # a literal ${datadir}
	if grep -q '^bashcompletiondir = ${datadir}' "$TOP_BUILDDIR/Makefile"; then
		echo "$P/share/bash-completion/completions/agentrun"
	fi
	if grep -q '^GO_MD2MAN = .' "$TOP_BUILDDIR/Makefile"; then
		for f in "$TOP_SRCDIR"/docs/man/*.1.md; do
			f=${f##*/}
			echo "$P/share/man/man1/${f%.md}"
		done
	fi
}

t_install_lists_all_files()
{
	local got want
	rm -rf "$D"
	assert_status 0 do_make install
	got=$(cd "$D" && find . -type f | sed 's/^\.//' | sort)
	want=$(expected_files | sort)
	assert_eq "$got" "$want" "installed files"
	# the completion goes where bash-completion looks when installed
	# under its own prefix
	# shellcheck disable=SC2016 # a literal ${datadir}
	if ! grep -q '^bashcompletiondir = ${datadir}' "$TOP_BUILDDIR/Makefile"; then
		[ -n "$(find "$D" -path '*/completions/agentrun')" ] ||
			fail "no bash completion installed"
	fi
	# data files are copies of the sources
	cmp "$D$P/share/agentrun/seccomp/agent-default.json" \
		"$TOP_SRCDIR/contrib/seccomp/agent-default.json"
	cmp "$D$P/share/doc/agentrun/sandbox.md" "$TOP_SRCDIR/docs/sandbox.md"
	# the drop-in: the shipped one with the installed binary first
	assert_eq "$(diff "$TOP_SRCDIR/contrib/podman/containers.conf.d/agentrun.conf" \
		"$D$PODMANCONFDIR/agentrun.conf" | grep '^[<>]')" "> 	\"$P/bin/agentrun\","
	assert_eq "$(stat -c %a "$D$PODMANCONFDIR/agentrun.conf")" 644
	assert_status 0 "$D$P/bin/agentrun" --version
	assert_contains "$OUT" "agentrun version"
	# the man pages are installed where man finds them
	if [ -f "$D$P/share/man/man1/agentrun.1" ] && command -v man >/dev/null; then
		assert_status 0 env MANPATH="$D$P/share/man" MANWIDTH=80 \
			man agentrun-sandbox
		assert_contains "$OUT" "--overlay"
		# (paths are the configured ones, as in the binary)
		assert_contains "$OUT" "$(configured_docdir)/sandbox.md" "the man page names the installed doc"
		assert_not_contains "$OUT" " docs/sandbox.md"
		assert_not_contains "$OUT" '$(datadir)' "a make variable left in the man page"
	fi
	assert_status 0 do_make uninstall
	got=$(cd "$D" && find . -type f)
	assert_eq "$got" "" "files left after make uninstall"
}

# The default: podman's own directory, whatever the prefix.
t_podman_confdir_default()
{
	grep -q -- '--with-podman-confdir' "$TOP_BUILDDIR/config.log" &&
		skip "configured with --with-podman-confdir"
	assert_eq "$PODMANCONFDIR" /etc/containers/containers.conf.d
	assert_not_contains "$(cat "$TOP_SRCDIR/README.md")" "--sysconfdir=/etc" "the README asks for no --sysconfdir"
}

# prefix /usr/local: the installed binary is one of the drop-in's paths
# already, listed once
t_podman_dropin_once()
{
	local f
	rm -rf "$D"
	assert_status 0 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP_BUILDDIR" \
		prefix=/usr/local DESTDIR="$D" install-data-local
	f=$D$PODMANCONFDIR/agentrun.conf
	assert_eq "$(grep -c '"/usr/local/bin/agentrun",' "$f")" 1 "/usr/local/bin/agentrun listed once"
	assert_eq "$(sed -n '/^agentrun = \[/{n;p}' "$f")" '	"/usr/local/bin/agentrun",' "first"
	assert_contains "$(cat "$f")" '"/usr/bin/agentrun",'
	rm -rf "$D"
}

# a runtime message names the installed doc, not the source tree's
t_messages_name_installed_docs()
{
	local h=$TEST_TMP/mh
	require_root
	mkdir -p "$h/.ssh" "$h/w"
	assert_status '!0' env HOME="$h" "$AGENTRUN" --root "$AR_ROOT" sandbox --no-tty --workspace "$h/w" --ro '~/.ssh' -- true
	assert_contains "$ERR" "$(configured_docdir)/sandbox.md"
	assert_not_contains "$ERR" "see docs/sandbox.md"
}

# --help names the installed doc
t_help_names_installed_docs()
{
	assert_status 0 "$AGENTRUN" sandbox --help
	assert_contains "$OUT" "$(configured_docdir)/sandbox.md"
}

run_test "install: make install DESTDIR puts every file in place" \
	t_install_lists_all_files
run_test "install: the podman drop-in goes to /etc/containers/containers.conf.d by default" \
	t_podman_confdir_default
run_test "sandbox --help names the installed docs" t_help_names_installed_docs
run_test "install: prefix /usr/local lists the binary once in the podman drop-in" t_podman_dropin_once
run_test "sandbox: a runtime message names the installed docs" t_messages_name_installed_docs
finish

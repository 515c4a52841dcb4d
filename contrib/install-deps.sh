#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# install-deps.sh — install what agentrun needs to build and to run its tests.
#
# Usage: sudo contrib/install-deps.sh [--no-vm] [--dry-run]
#
#   --no-vm     skip the packages for the VM tests (qemu, a guest kernel)
#   --dry-run   print the package manager command instead of running it
#
# Supported: Debian 12+ / Ubuntu 22.04+ (apt-get), Fedora (dnf).
# Safe to run again: already installed packages are left as they are.
set -eu

vm=1
dry=0
for arg in "$@"; do
	case "$arg" in
	--no-vm) vm=0 ;;
	--dry-run) dry=1 ;;
	-h | --help)
		sed -n '4,12p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "install-deps.sh: unknown option: $arg (try --help)" >&2
		exit 2
		;;
	esac
done

say() { echo "install-deps.sh: $*"; }
die() { echo "install-deps.sh: error: $*" >&2; exit 1; }

run() {
	if [ "$dry" = 1 ]; then
		echo "+ $*"
	else
		"$@"
	fi
}

if [ "$dry" = 0 ] && [ "$(id -u)" != 0 ]; then
	die "must run as root (try: sudo $0 $*)"
fi

if [ ! -r /etc/os-release ]; then
	die "cannot identify the distribution (/etc/os-release missing); install the packages listed in $0 by hand"
fi
# shellcheck disable=SC1091
. /etc/os-release
family="${ID:-} ${ID_LIKE:-}"

install_debian() {
	# Build.
	pkgs="build-essential autoconf automake libtool pkg-config
	      libyajl-dev libseccomp-dev libcap-dev libssl-dev libmicrohttpd-dev libsystemd-dev
	      clang clang-format git"
	# Tests.
	pkgs="$pkgs jq busybox-static uidmap crun runc podman bubblewrap
	      slirp4netns fuse-overlayfs python3 python3-jsonschema iproute2
	      tmux util-linux procps psmisc"
	pkgs="$pkgs valgrind" # tests/integration/test_valgrind.sh
	pkgs="$pkgs strace gdb" # tests/integration/test_sandbox_debug.sh
	pkgs="$pkgs catatonit" # podman's pods (infra container's init): tests/conformance/podman-system.sh 200-pod
	pkgs="$pkgs openssl nodejs" # test_egress_secret (test CA), test_egress_transparent (fetch)
	pkgs="$pkgs cppcheck clang-tidy clang-tools" # make static (tests/static/run-static.sh)
	pkgs="$pkgs apparmor" # apparmor_parser: test_apparmor (-Q), test_apparmor_vm (loads profiles in the VM)
	# test_selinux_vm: the policy, semodule (builds the test policy into a
	# copy of the store), load_policy, setenforce (in the VM only). They do
	# not enable SELinux here: Debian's kernel boots AppArmor unless given
	# security=selinux, and nothing of them touches the boot configuration
	pkgs="$pkgs selinux-policy-default policycoreutils selinux-utils"
	pkgs="$pkgs chromium chromium-driver" # test_sandbox_ui_browser (with playwright-core from npm)
	pkgs="$pkgs socat" # test_sandbox_claude: Claude Code's own sandbox (bubblewrap + socat)
	pkgs="$pkgs direnv" # test_protect: the host's direnv loads none of the agent's files
	pkgs="$pkgs go-md2man bash-completion zsh debhelper dh-autoreconf dpkg-dev fakeroot rpm" # man pages, completion, packaging
	# Packages that only some releases have (sanitizer runtime for clang
	# on Debian 12).
	optional="libclang-rt-14-dev"
	if [ "$vm" = 1 ]; then
		arch=$(dpkg --print-architecture)
		case "$arch" in
		# tests/vm/run-in-vm boots linux-image-amd64 (the kernel and its
		# modules) under qemu-system-x86, unpacked with xz-utils (and
		# busybox-static, uidmap, util-linux above); docker.io,
		# containerd: started only inside the VM tests (no_autostart);
		# systemd, dbus-user-session: PID 1 of run-in-vm --systemd and the
		# user instance of test_systemd_vm
		amd64) pkgs="$pkgs qemu-system-x86 linux-image-amd64 xz-utils docker.io containerd systemd dbus-user-session" ;;
		*) say "VM tests need an amd64 host; skipping the VM packages on $arch" ;;
		esac
	fi

	say "updating the package lists (apt-get update)"
	DEBIAN_FRONTEND=noninteractive run apt-get update -q
	for p in $optional; do
		if apt-cache show "$p" >/dev/null 2>&1; then
			pkgs="$pkgs $p"
		else
			say "optional package $p is not available here; skipping it"
		fi
	done
	# shellcheck disable=SC2086
	say "installing:" $pkgs
	no_autostart
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive run apt-get install -y -q \
		--no-install-recommends $pkgs
	autostart_done
	if command -v npm >/dev/null 2>&1; then run npm install -g --no-audit --no-fund @devcontainers/cli || say "npm could not install @devcontainers/cli: test_devcontainer skips its CLI case"; else say "npm not found: test_devcontainer skips its Dev Containers CLI case"; fi
	# test_sandbox_ui_browser drives Debian's chromium with playwright-core
	# (no browser download: PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD)
	if command -v npm >/dev/null 2>&1; then PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 run npm install -g --no-audit --no-fund playwright-core || say "npm could not install playwright-core: test_sandbox_ui_browser skips"; fi
	claude_code
}

# test_sandbox_claude runs the real Claude Code CLI end to end (against a
# local mock of the API): a system-wide npm install, measured at 7 s and
# 235 MB (version 2.1.197, a native binary per platform).
claude_code() {
	if command -v npm >/dev/null 2>&1; then run npm install -g --no-audit --no-fund @anthropic-ai/claude-code || say "npm could not install @anthropic-ai/claude-code: test_sandbox_claude skips its end-to-end case"; else say "npm not found: test_sandbox_claude skips its end-to-end case"; fi
}

# The postinst of docker.io and containerd starts (and enables) the daemons
# when systemd runs. They must never run on a test host: they would create
# cgroups in its cgroup v1 hierarchies; the tests start them inside
# tests/vm/run-in-vm only. So, for this install, deny service starts with a
# policy-rc.d (unless one exists), and disable the units we newly installed.
no_autostart() {
	rc_added=0
	new_units=""
	case " $pkgs " in
	*" docker.io "*)
		dpkg -s docker.io >/dev/null 2>&1 || new_units="docker.service docker.socket"
		dpkg -s containerd >/dev/null 2>&1 || new_units="$new_units containerd.service"
		;;
	esac
	[ "$dry" = 0 ] || return 0
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\n# install-deps.sh: no service starts\nexit 101\n' \
			>/usr/sbin/policy-rc.d
		chmod 0755 /usr/sbin/policy-rc.d
		rc_added=1
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
}

autostart_done() {
	if [ "$rc_added" = 1 ]; then
		rm -f /usr/sbin/policy-rc.d
		trap - EXIT
	fi
	if [ -n "$new_units" ] && [ -d /run/systemd/system ]; then
		say "disabling $new_units (started only inside the VM tests)"
		# shellcheck disable=SC2086
		run systemctl disable $new_units || true
	fi
}

install_fedora() {
	pkgs="gcc make autoconf automake libtool pkgconf-pkg-config
	      yajl-devel libseccomp-devel libcap-devel openssl-devel libmicrohttpd-devel systemd-devel
	      clang clang-tools-extra compiler-rt libasan libubsan git
	      jq busybox shadow-utils crun runc podman bubblewrap slirp4netns
	      fuse-overlayfs python3 python3-jsonschema iproute tmux
	      util-linux procps-ng psmisc findutils diffutils"
	pkgs="$pkgs valgrind" # tests/integration/test_valgrind.sh
	pkgs="$pkgs strace gdb" # tests/integration/test_sandbox_debug.sh
	pkgs="$pkgs catatonit" # podman's pods (infra container's init): tests/conformance/podman-system.sh 200-pod
	pkgs="$pkgs openssl nodejs" # test_egress_secret (test CA), test_egress_transparent (fetch)
	pkgs="$pkgs cppcheck clang-analyzer" # make static (clang-tidy: clang-tools-extra)
	pkgs="$pkgs golang-github-cpuguy83-md2man bash-completion zsh rpm-build" # man pages, completion, packaging
	pkgs="$pkgs chromium" # test_sandbox_ui_browser (with playwright-core from npm)
	pkgs="$pkgs socat" # test_sandbox_claude: Claude Code's own sandbox (bubblewrap + socat)
	pkgs="$pkgs direnv" # test_protect: the host's direnv loads none of the agent's files
	if [ "$vm" = 1 ]; then
		pkgs="$pkgs qemu-system-x86 kernel-core xz moby-engine containerd"
	fi
	# shellcheck disable=SC2086
	say "installing:" $pkgs
	# shellcheck disable=SC2086
	run dnf install -y $pkgs
	claude_code
}

case " $family " in
*" debian "* | *" ubuntu "*)
	command -v apt-get >/dev/null 2>&1 || die "apt-get not found"
	install_debian
	;;
*" fedora "*)
	command -v dnf >/dev/null 2>&1 || die "dnf not found"
	install_fedora
	;;
*)
	die "unsupported distribution '${PRETTY_NAME:-$ID}'. Supported: Debian, Ubuntu, Fedora. Install by hand: a C compiler, autoconf, automake, libtool, pkg-config, the yajl, libseccomp and libcap development files, jq, a static busybox, newuidmap/newgidmap (uidmap), and for the VM tests qemu-system-x86 and a kernel image."
	;;
esac

say "done"

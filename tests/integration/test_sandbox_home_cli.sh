#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Agent CLIs installed under the home (nvm's node and an npm global,
# ~/.local/bin, ~/.cargo/bin): with a profile the executable the caller's
# PATH finds is shown read-only inside, its install and, for a
# `#!/usr/bin/env node` script, the interpreter PATH finds; without one
# the start says the command is under the hidden home and names --ro.
# A fake install in a test home; nothing else of the home is shown.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

# A fake nvm: ~/.nvm/versions/node/v22.0.0/bin/{node,agentcli}, the CLI a
# link to a node script in lib/node_modules; node a shell script.
nvm_setup()
{
	sb_home "$1"
	local v=$H/.nvm/versions/node/v22.0.0
	mkdir -p "$v/bin" "$v/lib/node_modules/agentcli/bin" "$H/.nvm/other" "$H/.local/bin" "$H/.ssh"
	printf '#!/bin/sh\n# fake node: runs the script as sh\nscript=$1; shift; exec /bin/sh "$script" "$@"\n' >"$v/bin/node"
	printf '#!/usr/bin/env node\necho agentcli-ran "$@"; cat "$HOME/.nvm/other/secret-ish" 2>/dev/null || echo other-hidden\n' >"$v/lib/node_modules/agentcli/bin/cli.js"
	echo '{"name":"agentcli"}' >"$v/lib/node_modules/agentcli/package.json"
	chmod 0755 "$v/bin/node" "$v/lib/node_modules/agentcli/bin/cli.js"
	ln -s ../lib/node_modules/agentcli/bin/cli.js "$v/bin/agentcli"
	echo not-for-the-agent >"$H/.nvm/other/secret-ish"
	printf '#!/bin/sh\necho localcli-ran\n' >"$H/.local/bin/localcli"
	chmod 0755 "$H/.local/bin/localcli"
	echo KEY >"$H/.ssh/id_rsa"
	printf '{"description": "test agent"}\n' >"$H/agent.json"
	sb_home_own
	NVM_PATH=$v/bin:$H/.local/bin:/usr/local/bin:/usr/bin:/bin
}

# sb_run with the caller's PATH
path_run()
{
	if [ "$MODE" = root ]; then
		(cd "$WS" && HOME=$H PATH=$NVM_PATH "$AGENTRUN" --root "$AR_ROOT" sandbox --no-tty "$@")
	else
		as_test_user env HOME="$H" PATH="$NVM_PATH" \
			bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
			"$AGENTRUN" --root "$AR_USER_ROOT" sandbox --no-tty "$@"
	fi
}

t_profile_shows_install()
{
	nvm_setup "$1"
	assert_status 0 path_run --profile "$H/agent.json" -- agentcli hello
	assert_contains "$OUT" "agentcli-ran hello"
	assert_contains "$OUT" "other-hidden" "only that install, not the rest of ~/.nvm"
	assert_contains "$ERR" "v22.0.0"
	assert_status 0 path_run --profile "$H/agent.json" -- sh -c 'echo x >"$HOME/.nvm/versions/node/v22.0.0/bin/new" && echo WROTE; cat ~/.ssh/id_rsa 2>&1; true'
	assert_not_contains "$OUT" "WROTE"
	assert_not_contains "$OUT" "KEY"
	assert_status 0 path_run --profile "$H/agent.json" -- localcli
	assert_contains "$OUT" "localcli-ran"
}

t_miss_says_why()
{
	nvm_setup "$1"
	assert_status '!0' path_run -- agentcli hello
	assert_contains "$ERR" "agentcli not found inside: it is under your home"
	assert_contains "$ERR" "--ro $H/.nvm/versions/node/v22.0.0 shows it"
	assert_status 0 path_run --ro "$H/.nvm/versions/node/v22.0.0" -- agentcli hi
	assert_contains "$OUT" "agentcli-ran hi"
}

# Never a never-share path: ~/.cargo is shown (the CLI's prefix) without
# its credentials; a CLI inside a secret store is not shown at all.
t_never_share()
{
	nvm_setup "$1"
	mkdir -p "$H/.cargo/bin" "$H/.docker/bin"
	printf '#!/bin/sh\necho rusttool-ran; cat ~/.cargo/credentials.toml 2>&1\n' >"$H/.cargo/bin/rusttool"
	printf '#!/bin/sh\necho dockertool-ran\n' >"$H/.docker/bin/dockertool"
	echo CARGO-TOKEN >"$H/.cargo/credentials.toml"
	chmod 0755 "$H/.cargo/bin/rusttool" "$H/.docker/bin/dockertool"
	sb_home_own
	NVM_PATH=$H/.cargo/bin:$H/.docker/bin:$NVM_PATH
	assert_status 0 path_run --profile "$H/agent.json" -- rusttool
	assert_contains "$OUT" "rusttool-ran"
	assert_not_contains "$OUT" "CARGO-TOKEN"
	assert_status '!0' path_run --profile "$H/agent.json" -- dockertool
	assert_not_contains "$OUT" "dockertool-ran"
}

for mode in root user; do
	run_test "home CLI ($mode): a profile shows the CLI's install and its interpreter, only those" t_profile_shows_install $mode
	run_test "home CLI ($mode): never a never-share path" t_never_share $mode
	run_test "home CLI ($mode): without a profile the miss names the hidden home and --ro" t_miss_says_why $mode
done
finish

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guest agent of `sandbox --vm` (docs/vm.md, "The guest agent"): three
 * hidden commands of the agentrun binary, the frames of vm_proto.h
 * between them.
 *
 *   vm-host  (vm_host.c)  in the sandbox, the sandbox's command after
 *            agentrun-vm has prepared the guest: runs QEMU with one end
 *            of a socket pair as the virtio-serial port "agent", relays
 *            the command's stdin, stdout, stderr, terminal and signals,
 *            serves `sandbox exec` on AR_VM_EXEC_GLOB's socket, exits
 *            with the command's status.
 *   vm-guest (vm_guest.c) in the guest, as its root: runs the sessions.
 *   vm-exec  (vm_exec.c)  the process `sandbox exec` starts in the
 *            sandbox: one session in the guest, relayed.
 */
#ifndef AGENTRUN_SANDBOX_VM_AGENT_H
#define AGENTRUN_SANDBOX_VM_AGENT_H

#include <stdint.h>
#include <sys/types.h>

struct ar_vm_user;

/* where vm-host listens (its directory is agentrun-vm's mktemp one) */
#define AR_VM_EXEC_GLOB "/tmp/agentrun-vm.*/exec.sock"

struct ar_vm_host_opts {
	const char *ctl; /* the control share: "status", "error" */
	const char *console; /* the guest console's file */
	const char *cleanup; /* a directory to remove at the end */
	const char *exec_socket; /* where `sandbox exec` connects */
	const char *cwd; /* the command's directory (the main session) */
	const char *proxy_gateway; /* rewrite 127.0.0.1: in an exec's
				    * proxy variables to this address */
	int start_timeout; /* seconds until the guest agent is READY */
	/* a plain bundle's command: NUL-separated files of its argv and
	 * environment, sent as session 0 in cwd (NULL: ctl/cmd through the
	 * guest's /bin/sh, the sandbox's) */
	const char *main_argv;
	const char *main_env;
	char **qemu; /* QEMU's argv (its port "agent" on fd 3) */
};

int ar_vm_host_main(const struct ar_vm_host_opts *o);
/* user: the sessions' default (--user); root: NULL, or the sessions'
 * root directory (a plain bundle's) */
int ar_vm_guest_main(const char *port, const struct ar_vm_user *user,
		     const char *root);
/* dir: the session's directory in the guest (NULL: this process's);
 * user: the session's user in the guest (NULL: the guest agent's --user) */
int ar_vm_exec_main(const char *dir, const struct ar_vm_user *user,
		    char **argv);

#endif

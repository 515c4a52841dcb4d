/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun sandbox --vm` (docs/vm.md): the sandbox's command runs in a
 * guest kernel under QEMU, and QEMU runs inside the prepared sandbox as
 * its command. This file finds what the VM needs on the host (QEMU, the
 * guest kernel and its modules, static busybox, the helper scripts of
 * runtime/sandbox/vm/) and picks the accelerator; the plan
 * (sandbox_plan.c) binds what it found into the sandbox and makes the
 * helper the command.
 */
#ifndef AGENTRUN_SANDBOX_VM_H
#define AGENTRUN_SANDBOX_VM_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

struct ar_vm_user; /* vm_proto.h */

/* where the plan shows the helper directory and the kernel inside */
#define AR_VM_LIB_DEST "/run/agentrun-vm"
#define AR_VM_KERNEL_DEST "/run/agentrun-vm-kernel"
#define AR_VM_VMLINUX_DEST "/run/agentrun-vm-vmlinux"
/* agentrun's own binary: vm-host in the sandbox, vm-guest in the guest
 * (through the guest's view of the sandbox's root), vm-exec */
#define AR_VM_AGENT_DEST "/run/agentrun-vm-agent"

struct ar_vm {
	char *qemu; /* qemu-system-x86_64 (a host path visible inside) */
	char *kernel; /* the guest kernel, host path */
	char *kver; /* its version: /lib/modules/KVER */
	char *lib; /* the helper directory (agentrun-vm, vm-init.sh) */
	char *agent; /* agentrun's binary, host path (the guest agent) */
	char *vmlinux; /* the cached unpacked kernel (vm_cache.c) or NULL */
	char vmlinux_sha256[65]; /* what it must hash to */
	const char *net; /* NULL (no NIC), "allow" or "host": the guest's
			  * NIC, user-mode (slirp) in the sandbox's netns */
	char **rw; /* the sandbox's other writable directories (--rw, a
		    * profile's "rw"), each exported read-write at its path */
	size_t n_rw;
	unsigned short *publish; /* --publish's inside ports: forwarded
				  * from the sandbox's loopback into the
				  * guest (slirp hostfwd) */
	size_t n_publish;
	bool kvm; /* else TCG */
	char why_tcg[160]; /* why not KVM */
};

/* Find QEMU, the guest kernel (`kernel`: a file, NULL: the newest
 * /boot/vmlinuz-* with modules), busybox and the helpers; fail with the
 * reason and the fix (never a fallback to no VM; the caller prefixes
 * what asked for the VM). */
int ar_vm_probe(struct ar_vm *vm, const char *kernel, struct ar_error *err);
void ar_vm_release(struct ar_vm *vm);

/* The cached vmlinux of vm->kernel (vm_cache.c): unpacked once into
 * $XDG_CACHE_HOME/agentrun/vm (else HOME/.cache/agentrun/vm), its sha256,
 * inode, size and ctime kept in state_root/vm-cache; sets vm->vmlinux
 * and vm->vmlinux_sha256 while the file is still what agentrun wrote,
 * unpacks it again otherwise. Any failure leaves vm->vmlinux NULL (the
 * helper unpacks in the run, as without a cache). */
void ar_vm_cache(struct ar_vm *vm, const char *state_root, const char *home);

/* Whether `name` is one of the kernel cache's files: KEY.vmlinux or an
 * unpack's .KEY.PID (*partial), KEY being KVER-DEV-INO-SIZE-SEC.NSEC;
 * KEY into key (keysz bytes). */
bool ar_vm_cache_name(const char *name, char *key, size_t keysz, bool *partial);

/* Export the sandbox's writable directory `path` (a bind) to the guest
 * read-write at the same path (without it the guest sees it read-only
 * through the root, its writes in the guest's memory). */
void ar_vm_add_rw(struct ar_vm *vm, const char *path);

/* Forward the sandbox's 127.0.0.1:port (where agentrun's --publish relay
 * connects) to the guest's port: the guest gets a NIC on QEMU's user-mode
 * network, restricted (no way out) when there is no --net. */
void ar_vm_add_publish(struct ar_vm *vm, unsigned short port);

/* "vm(kvm)" or "vm(tcg, slow)" */
const char *ar_vm_mode(const struct ar_vm *vm);

/* The sandbox's command: the helper with its options (--user from
 * `user`, --share workspace unless NULL, then the NULL-ended `extra`
 * options, which may be NULL), then CMD. Each string malloc'd, the
 * vector NULL-ended; free with ar_vm_argv_free. */
char **ar_vm_argv(const struct ar_vm *vm, const struct ar_vm_user *user,
		  const char *workspace, char *const *extra, char *const *cmd);
void ar_vm_argv_free(char **v);

/* The kernel version of a /boot/vmlinuz-KVER name (NULL if not one);
 * malloc'd. */
char *ar_vm_kernel_version(const char *path);

#endif

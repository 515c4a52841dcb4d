/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun sandbox --vm`: what the host must have (vm.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exe_protect.h"
#include "utils.h"
#include "vm/vm.h"
#include "vm/vm_proto.h"

#ifndef AGENTRUN_VM_DIR
#define AGENTRUN_VM_DIR "/usr/local/share/agentrun/vm"
#endif
#ifndef AGENTRUN_VM_SRCDIR
#define AGENTRUN_VM_SRCDIR AGENTRUN_VM_DIR
#endif

/* the directories the sandbox shows from the host (system_mounts) */
static const char *const visible_dirs[] = { "/usr/bin", "/usr/sbin", "/bin",
					    "/sbin", NULL };

static char *find_program(const char *name)
{
	for (const char *const *d = visible_dirs; *d; d++) {
		char *p = ar_xasprintf("%s/%s", *d, name);

		if (access(p, X_OK) == 0)
			return p;
		free(p);
	}
	return NULL;
}

char *ar_vm_kernel_version(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (strncmp(base, "vmlinuz-", 8) != 0 || !base[8] ||
	    strchr(base + 8, '/'))
		return NULL;
	return ar_xstrdup(base + 8);
}

static bool has_modules(const char *kver)
{
	_cleanup_free_ char *dep =
		ar_xasprintf("/lib/modules/%s/modules.dep", kver);

	return access(dep, R_OK) == 0;
}

/* the newest /boot/vmlinuz-KVER with /lib/modules/KVER (strverscmp) */
static char *newest_kernel(void)
{
	DIR *d = opendir("/boot");
	struct dirent *e;
	char *best = NULL;

	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		_cleanup_free_ char *kver = ar_vm_kernel_version(e->d_name);

		if (!kver || !has_modules(kver))
			continue;
		if (!best || strverscmp(kver, best) > 0) {
			free(best);
			best = ar_steal_ptr(&kver);
		}
	}
	closedir(d);
	if (!best)
		return NULL;
	{
		char *p = ar_xasprintf("/boot/vmlinuz-%s", best);

		free(best);
		return p;
	}
}

static void kvm_check(struct ar_vm *vm)
{
	vm->kvm = false;
	if (access("/dev/kvm", F_OK) < 0)
		snprintf(vm->why_tcg, sizeof(vm->why_tcg),
			 "there is no /dev/kvm");
	else if (access("/dev/kvm", R_OK | W_OK) < 0)
		snprintf(vm->why_tcg, sizeof(vm->why_tcg),
			 "/dev/kvm is not read-writable by uid %u (group kvm)",
			 (unsigned)getuid());
	else if (access("/sys/module/kvm_intel", F_OK) < 0 &&
		 access("/sys/module/kvm_amd", F_OK) < 0)
		snprintf(vm->why_tcg, sizeof(vm->why_tcg),
			 "neither kvm_intel nor kvm_amd is loaded");
	else
		vm->kvm = true;
}

int ar_vm_probe(struct ar_vm *vm, const char *kernel, struct ar_error *err)
{
	const char *lib = getenv("AGENTRUN_VM_DIR");
	_cleanup_free_ char *busybox = NULL, *helper = NULL, *init = NULL;

	memset(vm, 0, sizeof(*vm));
	vm->qemu = find_program("qemu-system-x86_64");
	if (!vm->qemu)
		return ar_error_set_plain(
			err, ENOENT,
			"qemu-system-x86_64 is not installed in /usr/bin or /bin (apt-get install qemu-system-x86)");
	busybox = find_program("busybox");
	if (!busybox)
		return ar_error_set_plain(
			err, ENOENT,
			"busybox is not installed (apt-get install busybox-static: the guest's initramfs)");
	/* the guest agent is this binary (vm_agent.h) */
	vm->agent = ar_exe_path();
	if (!vm->agent)
		return ar_error_set_plain(
			err, ENOENT,
			"cannot find agentrun's own binary (/proc/self/exe): the guest agent is agentrun itself");
	if (!kernel)
		kernel = getenv("AGENTRUN_VM_KERNEL");
	if (kernel && *kernel) {
		vm->kernel = ar_xstrdup(kernel);
	} else {
		vm->kernel = newest_kernel();
		if (!vm->kernel)
			return ar_error_set_plain(
				err, ENOENT,
				"no guest kernel: no /boot/vmlinuz-* with modules in /lib/modules (apt-get install linux-image-amd64)");
	}
	vm->kver = ar_vm_kernel_version(vm->kernel);
	if (!vm->kver)
		return ar_error_set_plain(
			err, EINVAL,
			"the guest kernel `%s` is not named vmlinuz-VERSION (its modules are looked up in /lib/modules/VERSION)",
			vm->kernel);
	if (access(vm->kernel, R_OK) < 0)
		return ar_error_set(
			err, errno,
			"the guest kernel `%s` is not readable by uid %u",
			vm->kernel, (unsigned)getuid());
	if (!has_modules(vm->kver))
		return ar_error_set_plain(
			err, ENOENT,
			"no /lib/modules/%s/modules.dep for the guest kernel `%s` (the guest loads its 9p and virtio modules from there)",
			vm->kver, vm->kernel);
	/* AGENTRUN_VM_DIR, else the installed helpers, else (a build that
	 * is not installed) the source tree's */
	{
		const char *dirs[] = { lib && *lib ? lib : AGENTRUN_VM_DIR,
				       lib && *lib ? NULL :
						     AGENTRUN_VM_SRCDIR };

		for (size_t i = 0; i < 2 && dirs[i] && !vm->lib; i++) {
			free(helper);
			free(init);
			helper = ar_xasprintf("%s/agentrun-vm", dirs[i]);
			init = ar_xasprintf("%s/vm-init.sh", dirs[i]);
			if (access(helper, R_OK) == 0 &&
			    access(init, R_OK) == 0)
				vm->lib = ar_xstrdup(dirs[i]);
		}
	}
	if (!vm->lib)
		return ar_error_set_plain(
			err, ENOENT,
			"the helper scripts agentrun-vm and vm-init.sh are not in `%s` (reinstall agentrun, or set AGENTRUN_VM_DIR to runtime/sandbox/vm of the source tree)",
			lib && *lib ? lib : AGENTRUN_VM_DIR);
	kvm_check(vm);
	return 0;
}

void ar_vm_release(struct ar_vm *vm)
{
	free(vm->qemu);
	free(vm->kernel);
	free(vm->kver);
	free(vm->lib);
	free(vm->agent);
	free(vm->vmlinux);
	for (size_t i = 0; i < vm->n_rw; i++)
		free(vm->rw[i]);
	free(vm->rw);
	free(vm->publish);
	memset(vm, 0, sizeof(*vm));
}

void ar_vm_add_rw(struct ar_vm *vm, const char *path)
{
	vm->rw = ar_xrealloc(vm->rw, (vm->n_rw + 1) * sizeof(char *));
	vm->rw[vm->n_rw++] = ar_xstrdup(path);
}

void ar_vm_add_publish(struct ar_vm *vm, unsigned short port)
{
	for (size_t i = 0; i < vm->n_publish; i++)
		if (vm->publish[i] == port)
			return;
	vm->publish = ar_xrealloc(vm->publish,
				  (vm->n_publish + 1) * sizeof(*vm->publish));
	vm->publish[vm->n_publish++] = port;
}

const char *ar_vm_mode(const struct ar_vm *vm)
{
	return vm->kvm ? "vm(kvm)" : "vm(tcg, slow)";
}

char **ar_vm_argv(const struct ar_vm *vm, const struct ar_vm_user *user,
		  const char *workspace, char *const *extra, char *const *cmd)
{
	size_t n = 0, k = 0, ne = 0;
	char **v;

	while (cmd[n])
		n++;
	while (extra && extra[ne])
		ne++;
	v = ar_xcalloc(n + ne + 20 + 2 * vm->n_rw + 2 * vm->n_publish,
		       sizeof(char *));
	v[k++] = ar_xstrdup("/bin/bash");
	v[k++] = ar_xstrdup(AR_VM_LIB_DEST "/agentrun-vm");
	v[k++] = ar_xstrdup("--accel");
	v[k++] = ar_xstrdup(vm->kvm ? "kvm" : "tcg");
	v[k++] = ar_xstrdup("--kernel");
	v[k++] = ar_xstrdup(AR_VM_KERNEL_DEST);
	v[k++] = ar_xstrdup("--kver");
	v[k++] = ar_xstrdup(vm->kver);
	v[k++] = ar_xstrdup("--user");
	v[k++] = ar_vm_user_format(user->uid, user->gid, user->groups,
				   user->n_groups);
	if (workspace) {
		v[k++] = ar_xstrdup("--share");
		v[k++] = ar_xstrdup(workspace);
	}
	for (size_t i = 0; i < vm->n_rw; i++) {
		v[k++] = ar_xstrdup("--rw");
		v[k++] = ar_xstrdup(vm->rw[i]);
	}
	if (vm->net) {
		v[k++] = ar_xstrdup("--net");
		v[k++] = ar_xstrdup(vm->net);
	}
	for (size_t i = 0; i < vm->n_publish; i++) {
		v[k++] = ar_xstrdup("--publish");
		v[k++] = ar_xasprintf("%u", (unsigned)vm->publish[i]);
	}
	if (vm->vmlinux) {
		v[k++] = ar_xstrdup("--vmlinux");
		v[k++] = ar_xstrdup(AR_VM_VMLINUX_DEST);
		v[k++] = ar_xstrdup("--vmlinux-sha256");
		v[k++] = ar_xstrdup(vm->vmlinux_sha256);
	}
	for (size_t i = 0; i < ne; i++)
		v[k++] = ar_xstrdup(extra[i]);
	v[k++] = ar_xstrdup("--");
	for (size_t i = 0; i < n; i++)
		v[k++] = ar_xstrdup(cmd[i]);
	return v;
}

void ar_vm_argv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

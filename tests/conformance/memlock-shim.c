/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * LD_PRELOAD shim for crun on a host without CAP_SYS_RESOURCE
 * (tests/conformance/run.sh, podman-system.sh): crun raises
 * RLIMIT_MEMLOCK before loading its eBPF device filter, which no kernel
 * since 5.11 needs (BPF memory is charged to the memory cgroup); that
 * one EPERM becomes success, so a comparison measures crun, not the host.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/resource.h>

int setrlimit(__rlimit_resource_t res, const struct rlimit *lim)
{
	int (*real)(__rlimit_resource_t, const struct rlimit *) =
		(int (*)(__rlimit_resource_t,
			 const struct rlimit *))dlsym(RTLD_NEXT, "setrlimit");
	int ret = real(res, lim);

	if (ret < 0 && errno == EPERM && res == RLIMIT_MEMLOCK)
		return 0;
	return ret;
}

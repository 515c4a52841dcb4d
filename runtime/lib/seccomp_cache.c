/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A cache of compiled seccomp BPF programs, keyed by the profile.
 *
 * Entry file <cache_dir>/<fnv1a64 of key>.bpf:
 *   "agentrun-seccomp-bpf 1\n"
 *   u32 key_len, key bytes            (the canonical profile, see below)
 *   u32 flags, u32 notify, u32 bpf_len, bpf bytes
 * Integers in host byte order (the cache never leaves the host).
 *
 * The key is a canonical text form of everything that decides the
 * program: the profile (without listenerPath/listenerMetadata), the
 * libseccomp version, the kernel release, the native architecture, the
 * version of the compact generator (seccomp_bpf.h) and, on x86_64,
 * whether the kernel runs x32 syscalls (a program without the x32
 * section must not be used on a boot where x32 works).
 * An entry is used only when its key equals ours byte for byte, so a hash
 * collision costs a recompile, never a wrong filter.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <libseccomp.h>

#include "generate.h"
#include "log.h"
#include "profile.h"
#include "seccomp_bpf.h"
#include "seccomp_internal.h"
#include "seccomp_refusal.h"
#include "utils.h"

#define CACHE_MAGIC "agentrun-seccomp-bpf 1\n"
#define CACHE_MAX_FILE (16u * 1024 * 1024)

/* The key is built in a plain growing buffer: stdio (fprintf into a
 * memory stream) cost ~0.5 M instructions per start for the agent
 * profile, a quarter of `agentrun sandbox`'s own work. */
struct keybuf {
	char *p;
	size_t n, cap;
};

static void put_mem(struct keybuf *k, const void *s, size_t len)
{
	if (k->n + len + 1 > k->cap) {
		while (k->n + len + 1 > k->cap)
			k->cap = k->cap ? k->cap * 2 : 4096;
		k->p = ar_xrealloc(k->p, k->cap);
	}
	memcpy(k->p + k->n, s, len);
	k->n += len;
	k->p[k->n] = '\0';
}

static void put_lit(struct keybuf *k, const char *s)
{
	put_mem(k, s, strlen(s));
}

static void put_u64(struct keybuf *k, unsigned long long v)
{
	char buf[24];
	size_t i = sizeof(buf);

	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put_mem(k, buf + i, sizeof(buf) - i);
}

static void put_int(struct keybuf *k, int v)
{
	if (v < 0) {
		put_lit(k, "-");
		put_u64(k, (unsigned long long)-(long long)v);
	} else {
		put_u64(k, (unsigned long long)v);
	}
}

/* "LEN:STRING;" or "-;" for NULL */
static void put_str(struct keybuf *k, const char *s)
{
	size_t len;

	if (!s) {
		put_lit(k, "-;");
		return;
	}
	len = strlen(s);
	put_u64(k, len);
	put_lit(k, ":");
	put_mem(k, s, len);
	put_lit(k, ";");
}

static void put_strv(struct keybuf *k, const struct oci_strv *v)
{
	put_lit(k, "[");
	put_u64(k, v->n);
	for (size_t i = 0; i < v->n; i++)
		put_str(k, v->v[i]);
	put_lit(k, "]");
}

static void put_opt(struct keybuf *k, const struct oci_opt_u32 *o)
{
	if (o->set) {
		put_lit(k, "=");
		put_u64(k, o->v);
		put_lit(k, ";");
	} else {
		put_lit(k, "-;");
	}
}

/* What the program depends on besides the profile. */
static void put_platform(struct keybuf *k)
{
	struct utsname u;

	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	put_lit(k, "libseccomp ");
	put_str(k, ar_seccomp_lib_version());
	put_lit(k, "\nkernel ");
	put_str(k, u.release);
	put_lit(k, "\nnative ");
	put_u64(k, seccomp_arch_native());
	/* the program's generator, and whether x32 goes into it */
	put_lit(k, "\nbpfgen " AR_SBPF_VERSION "\nx32 ");
	put_u64(k, ar_seccomp_x32_in_filter(seccomp_arch_native()));
}

/* The canonical key of a profile; malloc'ed, *len set. */
static char *profile_key(const struct oci_seccomp *sc, size_t *len)
{
	struct keybuf k = { NULL, 0, 0 };

	put_platform(&k);
	put_lit(&k, "\ndefault ");
	put_int(&k, (int)sc->default_action);
	put_opt(&k, &sc->default_errno_ret);
	put_lit(&k, "\narchs ");
	put_strv(&k, &sc->architectures);
	put_lit(&k, "\nflags ");
	put_strv(&k, &sc->flags);
	put_lit(&k, "\nsyscalls ");
	put_u64(&k, sc->n_syscalls);
	put_lit(&k, "\n");
	for (size_t i = 0; i < sc->n_syscalls; i++) {
		const struct oci_seccomp_syscall *s = &sc->syscalls[i];

		put_int(&k, (int)s->action);
		put_opt(&k, &s->errno_ret);
		put_strv(&k, &s->names);
		put_lit(&k, "(");
		put_u64(&k, s->n_args);
		for (size_t j = 0; j < s->n_args; j++) {
			const struct oci_seccomp_arg *a = &s->args[j];

			put_lit(&k, " ");
			put_u64(&k, a->index);
			put_lit(&k, ",");
			put_int(&k, (int)a->op);
			put_lit(&k, ",");
			put_u64(&k, (unsigned long long)a->value);
			put_lit(&k, ",");
			put_u64(&k, (unsigned long long)a->value_two);
		}
		put_lit(&k, ")\n");
	}
	*len = k.n;
	return k.p;
}

static uint64_t fnv1a64(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

/* The same job for the long key of the embedded profile (20 kB of JSON),
 * 8 bytes a step: fnv1a64 above costs ~4 instructions a byte. Only names
 * the file: the whole key is compared on a hit. */
static uint64_t hash_words(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = UINT64_C(0xcbf29ce484222325) ^ len, w;
	size_t i = 0;

	for (; i + sizeof(w) <= len; i += sizeof(w)) {
		memcpy(&w, p + i, sizeof(w));
		h = (h ^ w) * UINT64_C(0x9e3779b97f4a7c15);
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * UINT64_C(0x100000001b3);
	return h;
}

/* Open (creating it if needed) the cache directory; -1 when it must not be
 * used. */
static int open_cache_dir(const char *dir)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* not the state root: a command refused before it makes
		 * the root leaves nothing behind (the next run caches) */
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			ar_debug("seccomp cache: mkdir %s: %m", dir);
			return -1;
		}
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		ar_debug("seccomp cache: open %s: %m", dir);
		return -1;
	}
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		ar_debug("seccomp cache: %s is not private to uid %u: not used",
			 dir, (unsigned)geteuid());
		return -1;
	}
	return ar_steal_fd(&fd);
}

static bool take_u32(const char **p, const char *end, uint32_t *v)
{
	if ((size_t)(end - *p) < sizeof(*v))
		return false;
	memcpy(v, *p, sizeof(*v));
	*p += sizeof(*v);
	return true;
}

/* The cached filter for key, or NULL. */
static struct ar_seccomp_filter *cache_read(int dirfd, const char *name,
					    const char *key, size_t key_len)
{
	_cleanup_free_ char *data = NULL;
	_cleanup_close_ int fd = -1;
	struct ar_seccomp_filter *f;
	uint32_t klen, flags, notify, blen;
	const char *p, *end;
	struct stat st;
	ssize_t n;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 022) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > CACHE_MAX_FILE)
		return NULL;
	data = ar_xmalloc((size_t)st.st_size);
	n = ar_read_all(fd, data, (size_t)st.st_size);
	if (n != st.st_size)
		return NULL;
	p = data;
	end = data + n;
	if ((size_t)n < strlen(CACHE_MAGIC) ||
	    memcmp(p, CACHE_MAGIC, strlen(CACHE_MAGIC)) != 0)
		return NULL;
	p += strlen(CACHE_MAGIC);
	if (!take_u32(&p, end, &klen) || klen != key_len ||
	    (size_t)(end - p) < klen || memcmp(p, key, klen) != 0)
		return NULL;
	p += klen;
	if (!take_u32(&p, end, &flags) || !take_u32(&p, end, &notify) ||
	    !take_u32(&p, end, &blen))
		return NULL;
	if (blen == 0 || blen > AR_SECCOMP_BPF_MAX ||
	    blen % sizeof(struct sock_filter) != 0 || (size_t)(end - p) != blen)
		return NULL;
	f = ar_xcalloc(1, sizeof(*f));
	f->bpf = ar_xmalloc(blen);
	memcpy(f->bpf, p, blen);
	f->bpf_len = blen;
	f->flags = flags;
	f->notify = notify != 0;
	f->from_cache = true;
	return f;
}

static void cache_write(int dirfd, const char *name, const char *key,
			size_t key_len, const struct ar_seccomp_filter *f)
{
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_free_ char *data = NULL;
	uint32_t v[3] = { f->flags, f->notify, (uint32_t)f->bpf_len };
	uint32_t klen = (uint32_t)key_len;
	size_t mlen = strlen(CACHE_MAGIC), len, off = 0;

	len = mlen + sizeof(klen) + key_len + sizeof(v) + f->bpf_len;
	if (len > CACHE_MAX_FILE)
		return;
	data = ar_xmalloc(len);
	memcpy(data + off, CACHE_MAGIC, mlen);
	off += mlen;
	memcpy(data + off, &klen, sizeof(klen));
	off += sizeof(klen);
	memcpy(data + off, key, key_len);
	off += key_len;
	memcpy(data + off, v, sizeof(v));
	off += sizeof(v);
	memcpy(data + off, f->bpf, f->bpf_len);
	if (ar_write_file_atomic_at(dirfd, name, data, len, 0600, &err) < 0)
		ar_debug("seccomp cache: %s", err.msg);
}

/* compile(arg): the profile's program, on a cache miss (or no cache). */
typedef int (*compile_fn)(const void *arg, struct ar_seccomp_filter **out,
			  struct ar_error *err);

static int lookup_or_compile(const char *key, size_t key_len, bool long_key,
			     const char *cache_dir, compile_fn compile,
			     const void *arg, struct ar_seccomp_filter **out,
			     struct ar_error *err)
{
	_cleanup_close_ int dirfd = -1;
	char name[32];

	*out = NULL;
	if (!cache_dir || !key || key_len > UINT32_MAX)
		return compile(arg, out, err);
	dirfd = open_cache_dir(cache_dir);
	if (dirfd < 0)
		return compile(arg, out, err);
	snprintf(name, sizeof(name), "%016llx.bpf",
		 (unsigned long long)(long_key ? hash_words(key, key_len) :
						 fnv1a64(key, key_len)));

	*out = cache_read(dirfd, name, key, key_len);
	if (*out) {
		ar_debug("seccomp: compiled filter from cache %s/%s", cache_dir,
			 name);
		return 0;
	}
	if (compile(arg, out, err) < 0)
		return -1;
	if (*out) /* compile() is a callback: say what it guarantees */
		cache_write(dirfd, name, key, key_len, *out);
	return 0;
}

static int compile_profile(const void *arg, struct ar_seccomp_filter **out,
			   struct ar_error *err)
{
	return ar_seccomp_compile(arg, out, err);
}

int ar_seccomp_compile_cached(const struct oci_seccomp *sc,
			      const char *cache_dir,
			      struct ar_seccomp_filter **out,
			      struct ar_error *err)
{
	_cleanup_free_ char *key = NULL;
	size_t key_len = 0;

	if (cache_dir)
		key = profile_key(sc, &key_len);
	return lookup_or_compile(key, key_len, false, cache_dir,
				 compile_profile, sc, out, err);
}

/* The embedded agent profile, parsed only here, on a miss. */
static int compile_default(const void *arg, struct ar_seccomp_filter **out,
			   struct ar_error *err)
{
	struct ar_arena a = { 0 };
	struct oci_seccomp *sc;
	int r;

	r = oci_seccomp_default(&a, &sc, err);
	if (r == 0 && *(const bool *)arg)
		ar_seccomp_refusal_rules(sc, &a);
	if (r == 0)
		r = ar_seccomp_compile(sc, out, err);
	oci_arena_free(&a);
	return r;
}

int ar_seccomp_compile_default_cached(const char *cache_dir, bool refusals,
				      struct ar_seccomp_filter **out,
				      struct ar_error *err)
{
	struct keybuf k = { NULL, 0, 0 };
	int r;

	if (cache_dir) {
		/* The JSON text itself, and the version of the code that
		 * parses and compiles it (see seccomp.h). */
		put_platform(&k);
		put_lit(&k, "\nagentrun " PACKAGE_VERSION
			    "\nembedded default profile ");
		put_u64(&k, oci_default_seccomp_json_len);
		put_lit(&k, ":");
		put_mem(&k, oci_default_seccomp_json,
			oci_default_seccomp_json_len);
		if (refusals)
			put_lit(&k, "\nwith the namespace refusals notified");
	}
	r = lookup_or_compile(k.p, k.n, true, cache_dir, compile_default,
			      &refusals, out, err);
	free(k.p);
	return r;
}

bool ar_seccomp_filter_from_cache(const struct ar_seccomp_filter *f)
{
	return f && f->from_cache;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The guest agent's frames (vm_proto.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "utils.h"
#include "vm/vm_proto.h"

size_t ar_vm_buf_pending(const struct ar_vm_buf *b)
{
	return b->len - b->off;
}

void ar_vm_buf_append(struct ar_vm_buf *b, const void *p, size_t n)
{
	if (b->off > 0 && b->off == b->len)
		b->off = b->len = 0;
	if (b->len + n > b->cap) {
		/* move the pending part down before growing */
		if (b->off > 0) {
			memmove(b->data, b->data + b->off, b->len - b->off);
			b->len -= b->off;
			b->off = 0;
		}
		if (b->len + n > b->cap) {
			size_t cap = b->cap ? b->cap : 4096;

			while (cap < b->len + n)
				cap *= 2;
			b->data = ar_xrealloc(b->data, cap);
			b->cap = cap;
		}
	}
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
}

void ar_vm_buf_free(struct ar_vm_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

ssize_t ar_vm_buf_fill(int fd, struct ar_vm_buf *b)
{
	char tmp[65536];
	ssize_t n;

	do
		n = read(fd, tmp, sizeof(tmp));
	while (n < 0 && errno == EINTR);
	if (n > 0)
		ar_vm_buf_append(b, tmp, (size_t)n);
	return n;
}

int ar_vm_buf_flush(int fd, struct ar_vm_buf *b)
{
	while (b->off < b->len) {
		ssize_t n = write(fd, b->data + b->off, b->len - b->off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		b->off += (size_t)n;
	}
	b->off = b->len = 0;
	return 0;
}

static void put_u32(char *p, uint32_t v)
{
	p[0] = (char)(v >> 24);
	p[1] = (char)(v >> 16);
	p[2] = (char)(v >> 8);
	p[3] = (char)v;
}

static uint32_t get_u32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;

	return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 |
	       (uint32_t)u[2] << 8 | u[3];
}

void ar_vm_frame_put(struct ar_vm_buf *out, uint8_t type, uint32_t session,
		     const void *payload, size_t len)
{
	char h[AR_VM_FRAME_HDR];

	put_u32(h, (uint32_t)len);
	h[4] = (char)type;
	put_u32(h + 5, session);
	ar_vm_buf_append(out, h, sizeof(h));
	ar_vm_buf_append(out, payload, len);
}

int ar_vm_frame_next(struct ar_vm_buf *in, struct ar_vm_frame *f)
{
	const char *h = in->data + in->off;
	uint32_t len;

	if (ar_vm_buf_pending(in) < AR_VM_FRAME_HDR)
		return 0;
	len = get_u32(h);
	if (len > AR_VM_MAX_PAYLOAD)
		return -1;
	if (ar_vm_buf_pending(in) < AR_VM_FRAME_HDR + (size_t)len)
		return 0;
	f->type = (uint8_t)h[4];
	f->session = get_u32(h + 5);
	f->payload = h + AR_VM_FRAME_HDR;
	f->len = len;
	in->off += AR_VM_FRAME_HDR + (size_t)len;
	return 1;
}

int ar_vm_user_parse(const char *spec, struct ar_vm_user *u)
{
	_cleanup_free_ char *s = ar_xstrdup(spec);
	char *gid_at, *groups_at, *tok, *save = NULL;
	unsigned long long v;

	memset(u, 0, sizeof(*u));
	gid_at = strchr(s, ':');
	if (!gid_at)
		return -1;
	*gid_at++ = '\0';
	groups_at = strchr(gid_at, ':');
	if (groups_at)
		*groups_at++ = '\0';
	if (ar_parse_u64(s, &v) < 0 || v > UINT32_MAX)
		return -1;
	u->uid = (uint32_t)v;
	if (ar_parse_u64(gid_at, &v) < 0 || v > UINT32_MAX)
		return -1;
	u->gid = (uint32_t)v;
	if (!groups_at)
		return 0;
	for (tok = strtok_r(groups_at, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (ar_parse_u64(tok, &v) < 0 || v > UINT32_MAX ||
		    u->n_groups == AR_VM_MAX_GROUPS) {
			ar_vm_user_free(u);
			return -1;
		}
		u->groups = ar_xrealloc(u->groups,
					(u->n_groups + 1) * sizeof(*u->groups));
		u->groups[u->n_groups++] = (uint32_t)v;
	}
	return 0;
}

char *ar_vm_user_format(uint32_t uid, uint32_t gid, const uint32_t *groups,
			size_t n_groups)
{
	struct ar_vm_buf b = { 0 };
	char num[32];
	int n = snprintf(num, sizeof(num), "%u:%u", (unsigned)uid,
			 (unsigned)gid);

	ar_vm_buf_append(&b, num, (size_t)n);
	for (size_t i = 0; i < n_groups; i++) {
		n = snprintf(num, sizeof(num), "%c%u", i ? ',' : ':',
			     (unsigned)groups[i]);
		ar_vm_buf_append(&b, num, (size_t)n);
	}
	ar_vm_buf_append(&b, "", 1);
	return b.data;
}

void ar_vm_user_free(struct ar_vm_user *u)
{
	free(u->groups);
	memset(u, 0, sizeof(*u));
}

/* SPAWN: u8 flags (1: tty, 2: a user, 4: groups), u16 rows, u16 cols,
 * u32 argc, u32 envc, [u32 uid, u32 gid, [u32 n, n u32 groups]], then
 * cwd, argv and env as NUL-terminated strings, nothing after */
void ar_vm_spawn_put(struct ar_vm_buf *out, uint32_t session,
		     const struct ar_vm_spawn *s)
{
	struct ar_vm_buf p = { 0 };
	char h[25];
	uint32_t argc = 0, envc = 0;
	bool groups = s->has_user && s->user.n_groups > 0;

	while (s->argv[argc])
		argc++;
	while (s->env && s->env[envc])
		envc++;
	h[0] = (char)((s->tty ? 1 : 0) | (s->has_user ? 2 : 0) |
		      (groups ? 4 : 0));
	h[1] = (char)(s->rows >> 8);
	h[2] = (char)s->rows;
	h[3] = (char)(s->cols >> 8);
	h[4] = (char)s->cols;
	put_u32(h + 5, argc);
	put_u32(h + 9, envc);
	put_u32(h + 13, s->user.uid);
	put_u32(h + 17, s->user.gid);
	put_u32(h + 21, s->user.n_groups);
	ar_vm_buf_append(&p, h, groups ? 25 : s->has_user ? 21 : 13);
	for (uint32_t i = 0; groups && i < s->user.n_groups; i++) {
		char g[4];

		put_u32(g, s->user.groups[i]);
		ar_vm_buf_append(&p, g, sizeof(g));
	}
	ar_vm_buf_append(&p, s->cwd ? s->cwd : "",
			 strlen(s->cwd ? s->cwd : "") + 1);
	for (uint32_t i = 0; i < argc; i++)
		ar_vm_buf_append(&p, s->argv[i], strlen(s->argv[i]) + 1);
	for (uint32_t i = 0; i < envc; i++)
		ar_vm_buf_append(&p, s->env[i], strlen(s->env[i]) + 1);
	ar_vm_frame_put(out, AR_VM_SPAWN, session, p.data + p.off,
			ar_vm_buf_pending(&p));
	ar_vm_buf_free(&p);
}

/* the next NUL-terminated string of [*p, end), or NULL */
static char *take_string(const char **p, const char *end)
{
	const char *nul = memchr(*p, '\0', (size_t)(end - *p));
	char *s;

	if (!nul)
		return NULL;
	s = ar_xstrdup(*p);
	*p = nul + 1;
	return s;
}

static int take_vector(const char **p, const char *end, uint32_t n, char ***out)
{
	char **v = ar_xcalloc((size_t)n + 1, sizeof(char *));

	*out = v;
	for (uint32_t i = 0; i < n; i++) {
		v[i] = take_string(p, end);
		if (!v[i])
			return -1;
	}
	return 0;
}

int ar_vm_spawn_parse(const char *p, size_t len, struct ar_vm_spawn *s)
{
	const char *end = p + len;
	uint32_t argc, envc, n;
	unsigned char flags;

	memset(s, 0, sizeof(*s));
	if (len < 13)
		return -1;
	flags = (unsigned char)p[0];
	s->tty = (flags & 1) != 0;
	s->has_user = (flags & 2) != 0;
	s->rows = (uint16_t)((unsigned char)p[1] << 8 | (unsigned char)p[2]);
	s->cols = (uint16_t)((unsigned char)p[3] << 8 | (unsigned char)p[4]);
	argc = get_u32(p + 5);
	envc = get_u32(p + 9);
	if (argc == 0 || argc > AR_VM_MAX_STRINGS ||
	    envc > AR_VM_MAX_STRINGS - argc)
		return -1;
	if ((flags & 4) && !s->has_user)
		return -1;
	p += 13;
	if (s->has_user) {
		if ((size_t)(end - p) < 8)
			return -1;
		s->user.uid = get_u32(p);
		s->user.gid = get_u32(p + 4);
		p += 8;
	}
	if (flags & 4) {
		if ((size_t)(end - p) < 4)
			return -1;
		n = get_u32(p);
		p += 4;
		if (n == 0 || n > AR_VM_MAX_GROUPS ||
		    (size_t)(end - p) < (size_t)n * 4)
			return -1;
		s->user.groups = ar_xcalloc(n, sizeof(*s->user.groups));
		for (uint32_t i = 0; i < n; i++, p += 4)
			s->user.groups[i] = get_u32(p);
		s->user.n_groups = n;
	}
	s->cwd = take_string(&p, end);
	if (!s->cwd || take_vector(&p, end, argc, &s->argv) < 0 ||
	    take_vector(&p, end, envc, &s->env) < 0 || p != end) {
		ar_vm_spawn_free(s);
		return -1;
	}
	return 0;
}

void ar_vm_spawn_free(struct ar_vm_spawn *s)
{
	ar_vm_user_free(&s->user);
	free(s->cwd);
	ar_strv_free(s->argv);
	ar_strv_free(s->env);
	memset(s, 0, sizeof(*s));
}

void ar_vm_resize_put(struct ar_vm_buf *out, uint32_t session, uint16_t rows,
		      uint16_t cols)
{
	char p[4] = { (char)(rows >> 8), (char)rows, (char)(cols >> 8),
		      (char)cols };

	ar_vm_frame_put(out, AR_VM_RESIZE, session, p, sizeof(p));
}

int ar_vm_resize_parse(const struct ar_vm_frame *f, uint16_t *rows,
		       uint16_t *cols)
{
	const unsigned char *u = (const unsigned char *)f->payload;

	if (f->len != 4)
		return -1;
	*rows = (uint16_t)(u[0] << 8 | u[1]);
	*cols = (uint16_t)(u[2] << 8 | u[3]);
	return 0;
}

int ar_vm_exit_code(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 125;
}

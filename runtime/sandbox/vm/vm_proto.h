/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The frames between `agentrun vm-host` (in the sandbox, beside QEMU) and
 * `agentrun vm-guest` (in the guest, the guest agent), over one
 * virtio-serial port, and between vm-host and `agentrun vm-exec` (the
 * process of `sandbox exec` in the sandbox) over a unix socket:
 *
 *   u32 payload length (big-endian) | u8 type | u32 session | payload
 *
 * The guest is untrusted: whatever it sends is parsed with bounds
 * (ar_vm_frame_next refuses a length over AR_VM_MAX_PAYLOAD, a SPAWN
 * whose counts or strings do not fill its payload exactly), and a
 * frame for a session that does not exist is dropped by the caller.
 */
#ifndef AGENTRUN_SANDBOX_VM_PROTO_H
#define AGENTRUN_SANDBOX_VM_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define AR_VM_FRAME_HDR 9
#define AR_VM_MAX_PAYLOAD (1u << 20) /* a SPAWN's argv and environment */
#define AR_VM_MAX_DATA 65536 /* one STDIN/STDOUT/STDERR frame */
#define AR_VM_MAX_STRINGS 65536 /* argv + env of a SPAWN */
/* a session's additional groups: what one argument (MAX_ARG_STRLEN,
 * 128 KiB) holds as "UID:GID:G,G,..." with room to spare */
#define AR_VM_MAX_GROUPS 4096

enum ar_vm_frame_type {
	/* to the guest */
	AR_VM_SPAWN = 1, /* a new session: see struct ar_vm_spawn */
	AR_VM_STDIN = 2, /* bytes for its stdin (or terminal) */
	AR_VM_EOF = 3, /* its stdin ended */
	AR_VM_RESIZE = 4, /* u16 rows, u16 cols: its terminal's size */
	AR_VM_SIGNAL = 5, /* u8 signal: to its process group */
	/* from the guest */
	AR_VM_READY = 16, /* the guest agent runs (session 0) */
	AR_VM_STDOUT = 17,
	AR_VM_STDERR = 18,
	AR_VM_EXIT = 19, /* u8 exit status (128+N: killed by signal N) */
};

/* A byte queue: data[off, len) is what is still to send or parse. */
struct ar_vm_buf {
	char *data;
	size_t off, len, cap;
};

struct ar_vm_frame {
	uint8_t type;
	uint32_t session;
	const char *payload; /* valid until the next call on the buffer */
	size_t len;
};

/* A session's user: uid, gid and the additional groups (process.user's
 * additionalGids). As an argument (vm-guest --user, vm-exec --user):
 * "UID:GID" or "UID:GID:G1,G2,...". */
struct ar_vm_user {
	uint32_t uid, gid;
	uint32_t n_groups;
	uint32_t *groups; /* n_groups of them, owned */
};

struct ar_vm_spawn {
	bool tty;
	uint16_t rows, cols;
	/* the session's user (flag bit 1, then u32 uid and gid after the
	 * counts; flag bit 2: then u32 n and n u32 groups); without it the
	 * guest agent's own --user */
	bool has_user;
	struct ar_vm_user user;
	char *cwd; /* "" = the guest agent's default */
	char **argv; /* NULL-ended, at least one */
	char **env; /* NULL-ended */
};

size_t ar_vm_buf_pending(const struct ar_vm_buf *b);
void ar_vm_buf_append(struct ar_vm_buf *b, const void *p, size_t n);
void ar_vm_buf_free(struct ar_vm_buf *b);
/* read what `fd` has (up to 64 KiB) into b: bytes read, 0 at end of
 * file, -1 with errno (EAGAIN: nothing now) */
ssize_t ar_vm_buf_fill(int fd, struct ar_vm_buf *b);
/* write what b holds to `fd`, as much as it takes now: 0 when some is
 * left or all went, -1 with errno on an error other than EAGAIN */
int ar_vm_buf_flush(int fd, struct ar_vm_buf *b);

/* queue one frame */
void ar_vm_frame_put(struct ar_vm_buf *out, uint8_t type, uint32_t session,
		     const void *payload, size_t len);
/* the next whole frame of `in`: 1 (f filled), 0 (not whole yet), -1 (a
 * length over AR_VM_MAX_PAYLOAD: the peer is broken or hostile) */
int ar_vm_frame_next(struct ar_vm_buf *in, struct ar_vm_frame *f);

/* "UID:GID[:G1,G2,...]" into u: 0, or -1 when malformed (numbers over
 * 32 bits, more than AR_VM_MAX_GROUPS groups) */
int ar_vm_user_parse(const char *spec, struct ar_vm_user *u);
/* the argument for uid, gid and groups (malloc'd) */
char *ar_vm_user_format(uint32_t uid, uint32_t gid, const uint32_t *groups,
			size_t n_groups);
void ar_vm_user_free(struct ar_vm_user *u);

void ar_vm_spawn_put(struct ar_vm_buf *out, uint32_t session,
		     const struct ar_vm_spawn *s);
/* parse a SPAWN payload: 0, or -1 when malformed (no argv, counts over
 * AR_VM_MAX_STRINGS, strings that do not fill the payload exactly) */
int ar_vm_spawn_parse(const char *p, size_t len, struct ar_vm_spawn *s);
void ar_vm_spawn_free(struct ar_vm_spawn *s);

/* RESIZE, SIGNAL, EXIT payloads */
void ar_vm_resize_put(struct ar_vm_buf *out, uint32_t session, uint16_t rows,
		      uint16_t cols);
int ar_vm_resize_parse(const struct ar_vm_frame *f, uint16_t *rows,
		       uint16_t *cols);
/* a wait status as a shell's exit status: the code, or 128 + signal */
int ar_vm_exit_code(int wstatus);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the guest agent's frames (runtime/sandbox/vm/vm_proto.h)
 * as vm-host reads them from a hostile guest: the bytes arrive in
 * pieces, each whole frame is parsed as its type says. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fuzz.h"

#include "vm/vm_proto.h"

int FUZZ_ENTRY(const uint8_t *data, size_t size);
int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct ar_vm_buf in = { 0 };
	size_t at = 0, piece = size ? (size_t)data[0] % 61 + 1 : 1;

	while (at < size) {
		struct ar_vm_frame f;
		size_t n = size - at < piece ? size - at : piece;
		int r;

		ar_vm_buf_append(&in, data + at, n);
		at += n;
		while ((r = ar_vm_frame_next(&in, &f)) > 0) {
			struct ar_vm_spawn sp;
			uint16_t rows, cols;

			FUZZ_CHECK(f.len <= AR_VM_MAX_PAYLOAD);
			if (f.type == AR_VM_SPAWN &&
			    ar_vm_spawn_parse(f.payload, f.len, &sp) == 0) {
				/* a parsed SPAWN always has a command */
				FUZZ_CHECK(sp.argv && sp.argv[0] && sp.env &&
					   sp.cwd);
				ar_vm_spawn_free(&sp);
			}
			if (f.type == AR_VM_RESIZE)
				(void)ar_vm_resize_parse(&f, &rows, &cols);
		}
		if (r < 0)
			break; /* vm-host stops the VM here */
	}
	ar_vm_buf_free(&in);
	return 0;
}

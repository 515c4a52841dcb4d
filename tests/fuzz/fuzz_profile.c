/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: sandbox profile files (`agentrun sandbox --profile FILE`,
 * oci_profile_parse). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fuzz.h"

#include "error.h"
#include "profile.h"

int FUZZ_ENTRY(const uint8_t *data, size_t size);
int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct ar_error err = { 0 };
	struct oci_profile *p = NULL;

	if (oci_profile_parse((const char *)data, size, "profile.json", &p,
			      &err) < 0) {
		FUZZ_CHECK(p == NULL);
		FUZZ_CHECK(err.msg[0] != '\0');
		return 0;
	}
	FUZZ_CHECK(p != NULL);
	FUZZ_CHECK(!p->net || strcmp(p->net, "none") == 0 ||
		   strcmp(p->net, "host") == 0);
	oci_profile_free(p);
	return 0;
}

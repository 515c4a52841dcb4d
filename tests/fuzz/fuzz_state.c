/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: state.json as read back from the state directory
 * (ar_state_json_parse). The state root may be shared, or damaged by a
 * crash; nothing in it may crash the runtime. What parses must write back
 * (ar_state_json_generate) to JSON that parses to the same state.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fuzz.h"

#include "error.h"
#include "state.h"
#include "state_json.h"

static char *fuzz_state_write(const struct ar_state *st)
{
	struct ar_error err = { 0 };
	char *json = NULL;
	size_t len = 0;

	FUZZ_CHECK(ar_state_json_generate(st, NULL, true, true, &json, &len,
					  &err) == 0);
	FUZZ_CHECK(json && strlen(json) == len);
	/* The OCI form (what `agentrun state` prints) too. */
	{
		char *oci = NULL;
		size_t olen = 0;

		FUZZ_CHECK(ar_state_json_generate(st, "running", true, false,
						  &oci, &olen, &err) == 0);
		free(oci);
	}
	return json;
}

int FUZZ_ENTRY(const uint8_t *data, size_t size);
int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct ar_error err = { 0 };
	struct ar_state *st = NULL, *st2 = NULL;
	char *s = fuzz_strndup(data, size);
	char *json, *json2;

	if (ar_state_json_parse(s, "state.json", &st, &err) < 0) {
		FUZZ_CHECK(st == NULL);
		FUZZ_CHECK(err.msg[0] != '\0');
		free(s);
		return 0;
	}
	FUZZ_CHECK(st && st->id && st->bundle);
	json = fuzz_state_write(st);
	if (ar_state_json_parse(json, "again.json", &st2, &err) < 0) {
		fprintf(stderr, "re-parse failed: %s\n%s\n", err.msg, json);
		abort();
	}
	json2 = fuzz_state_write(st2);
	if (strcmp(json, json2) != 0) {
		fprintf(stderr, "round trip differs:\n%s\n---\n%s\n", json,
			json2);
		abort();
	}
	free(json);
	free(json2);
	ar_state_free(st);
	ar_state_free(st2);
	free(s);
	return 0;
}

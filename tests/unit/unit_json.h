/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small helpers for unit tests that look into parsed JSON (yajl trees).
 */
#ifndef AGENTRUN_UNIT_JSON_H
#define AGENTRUN_UNIT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <yajl/yajl_tree.h>

/* arr is a JSON array holding the string s. */
static inline bool unit_json_array_has(yajl_val arr, const char *s)
{
	if (!arr || !YAJL_IS_ARRAY(arr))
		return false;
	for (size_t i = 0; i < arr->u.array.len; i++) {
		const char *v = YAJL_GET_STRING(arr->u.array.values[i]);

		if (v && strcmp(v, s) == 0)
			return true;
	}
	return false;
}

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun features: print the runtime-spec features document (JSON). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "oci_features.h"
#include "utils.h"

static void features_usage(FILE *out)
{
	fprintf(out,
		"Usage: agentrun features\n"
		"\n"
		"Print the features this build and the running kernel support,\n"
		"as the OCI runtime-spec features JSON document.\n"
		"\n"
		"Options:\n"
		"  -h, --help   this help\n");
}

int cmd_features(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_free_ char *json = NULL;
	size_t len = 0;
	int c;

	(void)g;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			features_usage(stdout);
			return 0;
		default:
			features_usage(stderr);
			return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "agentrun features: unexpected argument `%s`\n",
			argv[optind]);
		features_usage(stderr);
		return 1;
	}
	if (ar_features_json(&json, &len, &err) < 0)
		return cli_fail(&err);
	if (fwrite(json, 1, len, stdout) != len || fflush(stdout) != 0) {
		ar_error_set(&err, errno ? errno : EIO,
			     "features: write to stdout");
		return cli_fail(&err);
	}
	return 0;
}

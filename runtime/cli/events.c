/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun events [--stats] [--interval DURATION] <id>: stats and OOM
 * events of a container as JSON lines (runc's format). */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_container.h"
#include "cli.h"

#define EVENTS_USAGE                                                             \
	"Usage: agentrun events [OPTIONS] ID\n"                                  \
	"\n"                                                                     \
	"Print the container's stats and OOM events as JSON lines.\n"            \
	"\n"                                                                     \
	"Options:\n"                                                             \
	"  -s, --stats         print the stats once and exit\n"                  \
	"  -i, --interval 5s   how often to print them (ms, s, m; default 5s)\n" \
	"  -h, --help          this help\n"

/* "5s", "500ms", "1m", "2" (seconds) -> milliseconds; -1 when invalid. */
static long parse_duration(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v <= 0)
		return -1;
	if (strcmp(end, "ms") == 0)
		;
	else if (*end == '\0' || strcmp(end, "s") == 0)
		v *= 1000;
	else if (strcmp(end, "m") == 0)
		v *= 60000;
	else
		return -1;
	if (v < 1 || v > 86400000)
		return -1;
	return (long)v;
}

int cmd_events(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "stats", no_argument, NULL, 's' },
		{ "interval", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	bool stats = false;
	long interval = 5000;
	int c;

	while ((c = getopt_long(argc, argv, "si:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			stats = true;
			break;
		case 'i':
			interval = parse_duration(optarg);
			if (interval < 0) {
				fprintf(stderr,
					"agentrun events: --interval: invalid duration `%s`\n",
					optarg);
				return 1;
			}
			break;
		default:
			return cli_usage(EVENTS_USAGE, c == 'h' ? 0 : 1);
		}
	}
	if (argc - optind != 1)
		return cli_usage(EVENTS_USAGE, 1);
	ar_log_set_container_id(argv[optind]);
	if (ar_cgroup_container_events(cli_state_root(g), argv[optind], stats,
				       (int)interval, stdout, &err) < 0)
		return cli_fail(&err);
	return 0;
}

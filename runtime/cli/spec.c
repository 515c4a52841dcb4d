/* placeholder, replaced by the spec command */
#include "cli.h"
int cmd_spec(struct ar_global_opts *g, int argc, char **argv) { (void)g; (void)argc; (void)argv; return 1; }

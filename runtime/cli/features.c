/* placeholder, replaced by the features command */
#include "cli.h"
int cmd_features(struct ar_global_opts *g, int argc, char **argv) { (void)g; (void)argc; (void)argv; return 1; }

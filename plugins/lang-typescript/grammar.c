/* SPDX-License-Identifier: Apache-2.0 */
/* The tree-sitter-typescript grammar (typescript dialect), compiled into the
 * plugin.  Built with -I<grammar>/typescript/src and warnings disabled; it
 * defines tree_sitter_typescript(). */
#include "parser.c"
#include "scanner.c"

/* SPDX-License-Identifier: Apache-2.0 */
/* The tree-sitter-typescript grammar, tsx dialect, compiled into the plugin.
 * Built with -I<grammar>/tsx/src and warnings disabled; it defines
 * tree_sitter_tsx(). */
#include "parser.c"
#include "scanner.c"

/* SPDX-License-Identifier: Apache-2.0 */
/* The tree-sitter-go grammar, compiled into the plugin.  Built with
 * -I<grammar>/src and warnings disabled; it defines tree_sitter_go(). */
#include "parser.c"

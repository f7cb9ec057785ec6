/* SPDX-License-Identifier: Apache-2.0 */
/* The tree-sitter-cpp grammar, compiled into the plugin.  Built with
 * -I<grammar>/src and warnings disabled; it defines tree_sitter_cpp(). */
#include "parser.c"
#include "scanner.c"

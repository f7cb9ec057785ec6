/* SPDX-License-Identifier: Apache-2.0 */
/* The tree-sitter-java grammar, compiled into the plugin.  Built with
 * -I<grammar>/src and warnings disabled; it defines tree_sitter_java(). */
#include "parser.c"

/* SPDX-License-Identifier: Apache-2.0 */
/* The tree-sitter C grammar (tree-sitter-c 0.23.6, ABI 14), compiled in
 * from the fetched grammar sources: build with -I<grammar>/src and with
 * warnings off.  The grammar has no external scanner (no scanner.c). */
#include "parser.c"

/* SPDX-License-Identifier: Apache-2.0 */
/* cn_pp_split: joins a C or C++ function header that preprocessor
 * branches split, so that tree-sitter sees one definition.
 *
 * Portable code often writes one header per platform and shares the body:
 *
 *     #ifdef WIN32
 *     int umain(int argc, char *argv[]) {
 *     #else
 *     int main(int argc, char *argv[]) {
 *     #endif
 *       ...body...
 *     }
 *
 * tree-sitter keeps each branch inside its #if node, so the header ends
 * at the #endif and the body is a stray block: the function is lost (at
 * best a prototype).  A conditional whose branches (two or more) all open
 * the same number of braces more than they close is such a split: its
 * directive lines are blanked, and so is every branch but the last from
 * the end of its last complete statement on (the `int umain(...) {` above;
 * what comes before, complete, stays).  The last branch is kept: it is
 * usually the portable default (#else).  Blanking replaces bytes by
 * spaces and keeps newlines, so offsets, lines and columns stay valid.
 * Braces are counted outside comments, strings, character literals and
 * directive lines.
 *
 * Compiled into the C and C++ plugins (not exported). */
#ifndef CN_PP_SPLIT_H
#define CN_PP_SPLIT_H

#include <stdbool.h>
#include <stddef.h>

/* Blanks the split headers of src[0, len).  *copy is NULL or a malloc'ed,
 * writable copy of src (len + 1 bytes, NUL-terminated; src may be *copy
 * itself); when something is to be blanked and *copy is NULL, it is
 * allocated first.  Returns false only when out of memory (then *copy is
 * as it was). */
bool cn_pp_join_split_headers(const char *src, size_t len, char **copy);

#endif /* CN_PP_SPLIT_H */

/* SPDX-License-Identifier: Apache-2.0 */
/* Skipping what carries no code in C and C++ text: a // or block comment
 * or a string or character literal.  Shared by the C-family backends'
 * preprocessor pass (cn_pp_split.c) and the compiler's choice of a
 * header's language (core/index/cn_header_lang.c), which must agree on
 * what is code.  Header-only: the compiler links no plugin code. */
#ifndef CN_C_SKIP_H
#define CN_C_SKIP_H

#include <stddef.h>

/* When src[i] starts a comment or a literal, the index just past it (a //
 * comment ends before its newline; a literal that is not closed ends at its
 * line's end, as the compiler would give up on it; an open block comment
 * runs to len); otherwise i itself. */
static inline size_t cn_c_skip_comment_or_string(const char *src, size_t len, size_t i)
{
    char c = src[i];
    if (c == '/' && i + 1 < len && src[i + 1] == '/') {
        while (i < len && src[i] != '\n') i++;
        return i;
    }
    if (c == '/' && i + 1 < len && src[i + 1] == '*') {
        size_t k = i + 2;
        while (k + 1 < len && !(src[k] == '*' && src[k + 1] == '/')) k++;
        return k + 1 < len ? k + 2 : len;
    }
    if (c == '"' || c == '\'') {
        size_t k = i + 1;
        while (k < len && src[k] != c && src[k] != '\n') k += src[k] == '\\' ? 2 : 1;
        return k < len ? k + 1 : len;
    }
    return i;
}

#endif /* CN_C_SKIP_H */

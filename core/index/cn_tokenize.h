/* SPDX-License-Identifier: Apache-2.0 */
/* Code-aware tokenizer shared by the BM25 builder and its queries (both
 * sides must cut text the same way, or nothing matches).
 *
 * Rules:
 *   - A word is a maximal run of [A-Za-z0-9_] and bytes >= 0x80, so UTF-8
 *     sequences stay inside words.  Everything else separates words.
 *   - Each word is emitted whole first, ASCII lowercased, underscores kept:
 *     "get_user_id" -> "get_user_id".
 *   - Then its parts, left to right.  Parts are cut at underscores (which
 *     are dropped), at camelCase boundaries (fooBar -> foo|bar,
 *     HTTPServer -> http|server, parseJSONValue -> parse|json|value) and at
 *     letter/digit boundaries (utf8Decode -> utf|8|decode, v2 -> v|2).
 *     Bytes >= 0x80 count as caseless letters: an uppercase letter after
 *     one starts a part as after a lowercase letter (caféBar -> café|bar),
 *     a digit next to one is a letter/digit boundary (naïve2 -> naïve|2),
 *     and they never start a part on case grounds.
 *   - Parts are skipped when they would only repeat the whole word: a word
 *     with a single part equal to itself ("foo", "FOO") yields one token.
 *     A single part that differs from the word is emitted ("__init__" ->
 *     "__init__", "init"), so a search for "init" finds it.
 *   - Tokens of length 1 are kept ("x", "8", "v"): in code they are real
 *     identifiers and digits; BM25's idf already weighs them down.  Only
 *     empty tokens are dropped (a word made of underscores has no parts).
 *   - A token longer than CN_TOKEN_MAX bytes is truncated to at most
 *     CN_TOKEN_MAX bytes, backing off (by up to 3 bytes) so as not to cut a
 *     UTF-8 sequence in half.
 *
 * The tokenizer allocates nothing: each token is lowercased into a stack
 * buffer and handed to the callback, which must copy it if it keeps it
 * (the pointer is valid only during the call; the token is not
 * NUL-terminated).  Output is deterministic: it depends only on the bytes. */
#ifndef CN_TOKENIZE_H
#define CN_TOKENIZE_H

#include <stddef.h>

#define CN_TOKEN_MAX 256

/* Called once per token; a non-zero return stops tokenizing and is passed
 * back by cn_tokenize. */
typedef int (*cn_token_fn)(const char *tok, size_t len, void *data);

/* Tokenizes text[0, len) (NUL bytes are separators, not terminators).
 * Returns 0, or the first non-zero value fn returned. */
int cn_tokenize(const char *text, size_t len, cn_token_fn fn, void *data);

#endif /* CN_TOKENIZE_H */

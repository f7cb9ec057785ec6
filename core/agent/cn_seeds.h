/* SPDX-License-Identifier: Apache-2.0 */
/* Symbol seeds: the code names a task text mentions, which the LSP route
 * startup context and the offline planner start from.
 *
 * The extractor is conservative on purpose: it only reads the text (never
 * the repository), keeps what a user or benchmark passed explicitly first,
 * then backtick-quoted code, stack-trace frames and code-shaped tokens, and
 * drops English and general programming words. */
#ifndef CN_SEEDS_H
#define CN_SEEDS_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/cn_util.h"

/* The seeds of `text` (NULL is ""), into *out (initialised here): the
 * explicit seeds first (trimmed, empty ones skipped), then backtick-quoted
 * code names, then stack-trace frames (`File "a/b.py", line 12, in func`
 * gives a/b.py and func; `at pkg.Class.method(File.java:12)` gives
 * pkg.Class.method and File.java), then code-like tokens (snake_case,
 * CamelCase, dotted.names, path/like.py, func(), ALLCAPS of 3+ letters,
 * letters with digits), stopwords removed, deduplicated case-insensitively
 * keeping the first spelling, at most `limit` of them (0 means the default,
 * 8).  Returns the number of seeds, or CN_ENOMEM (then *out is empty). */
int cn_seeds_extract(const char *text, const cn_strv *explicit_seeds, size_t limit, cn_strv *out);

/* Whether `seed` is specific enough for gated startup routing: a path, a
 * `::` or `#` name, a dotted name with a specific part (not a domain like
 * example.com), snake_case, camelCase/CamelCase, ALLCAPS of 3+, or letters
 * mixed with digits that are not all lower case.  A trailing "()" and
 * surrounding quotes/backticks are ignored.  NULL and "" are false. */
bool cn_seed_is_specific(const char *seed);

/* Applies a seed policy keeping the order: "all" copies every seed,
 * "specific" only those cn_seed_is_specific accepts (case and surrounding
 * blanks of the policy are ignored; NULL is "all").  *out is initialised
 * here.  Returns the number kept, CN_EINVAL for another policy (the
 * message lists the supported ones), or CN_ENOMEM. */
int cn_seeds_filter(const cn_strv *in, const char *policy, cn_strv *out);

/* The normalised policy name ("all" or "specific") or NULL when `policy`
 * is not one (NULL is "all"). */
const char *cn_seeds_policy_name(const char *policy);

/* Error strings of a task text, for lexical search: quoted messages of
 * 3+ characters with at least one blank or punctuation inside ("..." and
 * '...' and the text after `SomeError: ` on a traceback's last line),
 * trimmed, deduplicated case-insensitively, at most `limit` (0: 8).
 * *out is initialised here.  Returns the count or CN_ENOMEM. */
int cn_seeds_error_strings(const char *text, size_t limit, cn_strv *out);

#endif /* CN_SEEDS_H */

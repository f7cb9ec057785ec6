/* SPDX-License-Identifier: Apache-2.0 */
/* cn_ts_guard: keeps libtree-sitter 0.20 from crashing on hostile input.
 *
 * libtree-sitter 0.20.7 stores a node's child count in 16 bits.  When
 * error recovery builds an ERROR node with 65536 children or more, the
 * count wraps and freeing the tree corrupts the heap: the process aborts.
 * Two kinds of input get there:
 *
 *  - deep nesting: tens of thousands of unclosed brackets (or, in C and
 *    C++, #if blocks) leave a parse stack that the ERROR node at the end
 *    of the file wraps whole.  cn_ts_blank_deep_nesting() turns whatever
 *    is nested deeper than a limit into spaces before the parse;
 *
 *  - long runs of junk, of unary operators or of unfinished
 *    right-recursive constructs (`x = x = x = ...`), which need no
 *    brackets at all.  cn_ts_parse_guarded() follows the parser's log to
 *    keep an upper bound on the size of any ERROR node and, when the bound
 *    gets too high, cancels the parse and parses again only the input up
 *    to the last position where it was small.
 *
 * The blanking is a quick pre-scan, then one pass over the bytes that
 * allocates nothing unless something is blanked.  The guard only watches
 * inputs of at least opts->min_bytes (64 KiB by default), but there it
 * costs: tree-sitter formats a log line for every parse action (the lexer's
 * lines, one per character, are switched off while the grammar lexes),
 * which makes such a parse about twice as slow; an input too sparse in
 * tokens to get there (cn_ts_token_bound) is parsed unguarded.  Its bound is
 * loose on files with many small, unrelated syntax errors (48,801 for the
 * 13,000 lines of GL/glext.h parsed as C, whose widest node has 1,280
 * children), so such a file can be cut although it would not crash.
 *
 * This file is compiled into each language plugin; its functions carry
 * the cn_ts_ prefix and are not exported (the plugins are linked with
 * -fvisibility=hidden and an export list). */
#ifndef CN_TS_GUARD_H
#define CN_TS_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tree_sitter/api.h>

/* Default nesting limit for cn_ts_blank_deep_nesting(). */
#define CN_TS_MAX_NESTING 4096

/* Defaults of cn_ts_guard_opts (a field left 0 takes its default). */
/* An ERROR node needs 65,536 children to overflow, and every child that
 * error recovery keeps covers at least one byte of input: a shorter input
 * cannot get there, and the guard's cost (tree-sitter formats a log line
 * per parse action once a logger is set) is paid only by files this
 * large. */
#define CN_TS_GUARD_MIN_BYTES 65536u
#define CN_TS_GUARD_HIGH 30000L      /* bound at which a parse is canceled */
#define CN_TS_GUARD_LOW 20000L       /* bound under which a position is safe */
#define CN_TS_GUARD_RETRIES 4        /* shorter parses before giving up */
/* At most this many tokens (cn_ts_token_bound) cannot make an ERROR node of
 * 65,536 children: each token is at most one child and one MISSING token
 * before it (see cn_ts_guard.c), so such inputs are parsed unguarded. */
#define CN_TS_GUARD_SAFE_TOKENS 32767L
/* The time a parse may take: error recovery on some inputs is worse than
 * quadratic (96 KB of "1a 1a 1a ..." keeps libtree-sitter 0.20 busy for
 * minutes), so a parse that overruns this is given up.  Real code parses
 * at some 100 ns a byte: 5 s plus 10 us a byte leaves a margin of fifty
 * and more.  The environment variable CODENIB_PARSE_TIMEOUT_SCALE
 * multiplies it (a slow machine, valgrind). */
#define CN_TS_PARSE_TIMEOUT_BASE_US 5000000ull
#define CN_TS_PARSE_TIMEOUT_US_PER_BYTE 10ull

typedef struct cn_ts_guard_opts {
    uint32_t min_bytes; /* inputs shorter than this are parsed unguarded */
    long high;          /* cancel when the bound exceeds this (< 65536) */
    long low;           /* a position is safe while the bound is under this */
    int retries;        /* after this many cut parses, parse nothing */
    long max_safe_tokens; /* inputs with a token bound of at most this are parsed
                           * unguarded; < 0: guard every input of min_bytes */
    uint64_t timeout_us; /* every attempt together (rounded up to whole seconds
                          * for each); 0: cn_ts_parse_budget_us(len) */
} cn_ts_guard_opts;

typedef struct cn_ts_guard_result {
    bool guarded;    /* the parse ran under the guard (len >= min_bytes) */
    bool cut;        /* only src[0, parsed_len) is in the tree */
    uint32_t parsed_len; /* bytes parsed: len unless cut */
    uint32_t cut_row;    /* when cut: where the parsed prefix ends, */
    uint32_t cut_col;    /* 0-based line and byte column */
    int attempts;        /* parses run (canceled ones included) */
    bool timed_out;      /* no tree: the parse overran its time (or had no language) */
    double seconds;      /* when timed out: how long it ran */
} cn_ts_guard_result;

/* The time a parse of len bytes is given, in microseconds (see
 * CN_TS_PARSE_TIMEOUT_BASE_US). */
uint64_t cn_ts_parse_budget_us(uint32_t len);

/* What to say of a parse that returned no tree, in buf: that it gave up
 * after its time (res->timed_out), or that tree-sitter returned none. */
const char *cn_ts_no_tree_reason(const cn_ts_guard_result *res, char *buf, size_t size);

/* Parses src[0, len) with parser, like ts_parser_parse_string(parser,
 * NULL, src, len), under the guard when len >= opts->min_bytes.  A parse
 * that trips the guard is canceled and retried on a prefix of src ending
 * at the last safe position (the rest of the input is left out of the
 * tree); after opts->retries such attempts the tree of an empty input is
 * returned.  Only input with thousands of syntax errors, or a parse stack
 * thousands of entries deep, is ever cut.
 *
 * opts may be NULL (all defaults); res may be NULL, else it is filled in
 * whatever the outcome.  The parser's logger and cancellation flag are
 * replaced during the call and restored before it returns, and so is its
 * timeout, which bounds every attempt together.  Returns the tree, or NULL
 * when tree-sitter returns none (res->timed_out: the parse took too long;
 * else a reason of its own, no language); the parser is then reset. */
TSTree *cn_ts_parse_guarded(TSParser *parser, const char *src, uint32_t len, const cn_ts_guard_opts *opts,
                            cn_ts_guard_result *res);

/* An upper bound on the tokens any grammar can lex from src[0, len): the
 * words ([A-Za-z0-9_] runs; in a word that starts with a digit, also each
 * later run of digits and its first non-digit, as "1a" lexes as a number
 * and a name), every other byte that is not blank, and three per newline
 * for zero-width tokens (newline, indent, dedent). */
uint32_t cn_ts_token_bound(const char *src, uint32_t len);

/* What cn_ts_blank_deep_nesting() counts (flags, or-ed). */
#define CN_TS_BLANK_BRACKETS 0x1u   /* ( [ { against ) ] } */
#define CN_TS_BLANK_DIRECTIVES 0x2u /* #if/#ifdef/#ifndef against #endif */

/* Returns a malloc'ed copy of src[0, len) (NUL-terminated) in which every
 * bracket nested deeper than max_depth (0: CN_TS_MAX_NESTING) is replaced
 * by a space, and with CN_TS_BLANK_DIRECTIVES every conditional directive
 * line (with its backslash continuations) nested deeper than that is
 * replaced by spaces, newlines kept: byte offsets, lines and columns stay
 * valid.  Brackets are counted everywhere, strings and comments included;
 * a directive is a line whose first non-blank character is '#'.
 *
 * Returns NULL when nothing is nested that deep (src is fine as it is),
 * or when out of memory: then *failed is set (it is cleared otherwise). */
char *cn_ts_blank_deep_nesting(const char *src, size_t len, unsigned flags, size_t max_depth, bool *failed);

#endif /* CN_TS_GUARD_H */

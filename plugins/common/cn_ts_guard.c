/* SPDX-License-Identifier: Apache-2.0 */
/* cn_ts_guard: keeps libtree-sitter 0.20 from crashing on hostile input
 * (see cn_ts_guard.h). */
#include "cn_ts_guard.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The layout of a grammar's TSLanguage, as libtree-sitter reads it. */
#include <tree_sitter/parser.h>

/* ------------------------------------------------------------------ */
/* The parse guard                                                     */

/* When error recovery gives up on a stretch of input, it wraps the parse
 * stack entries above the state it returns to into one ERROR node, taking
 * in the children of an ERROR node found right below them, and at the end
 * of the input it wraps the whole stack.  With 65536 children or more,
 * libtree-sitter 0.20's 16-bit child count overflows and freeing the tree
 * corrupts the heap; long runs of junk, of unary operators or of
 * unfinished right-recursive constructs get there without deep brackets.
 *
 * An ERROR node's children were all popped by some recovery, or are on
 * the stack at the end: their number is at most the entries popped by
 * recoveries so far plus the stack's depth.  For inputs large enough to
 * reach the limit, the parser's log is followed to keep that bound; past
 * `high` the parse is canceled and the input parsed again up to the last
 * position where the bound was under `low` (the rest of the file is lost:
 * only inputs with thousands of syntax errors or stacks thousands of
 * levels deep come to that).  tree-sitter checks the cancellation flag
 * every hundred or so operations, far within the margin left by `high`.
 *
 * Following the log is what costs, so it is skipped where the input
 * cannot hold enough tokens.  Every stack entry is a token shifted (or
 * skipped into an error), a MISSING token inserted in front of a token
 * that is then shifted, or a reduction of at least one entry: so an ERROR
 * node has at most two children per token of the input, plus one.  The
 * tokens are bounded by cn_ts_token_bound(): a token starts a word (or,
 * in a word that starts with a digit, at any digit after a non-digit and
 * at the first non-digit: "1a" is two tokens, "0b12a" three), or at a byte
 * that is neither a word character nor blank, or it is one of the
 * zero-width tokens an external scanner emits (newline, indent, dedent,
 * automatic semicolon), of which a line gets at most three counting each
 * dedent against its indent.  An input of at most 32,767 such tokens can
 * therefore not build a node of 65,536 children. */

typedef struct guard_state {
    long high, low;
    long depth;                  /* of the parse stack */
    long popped;                 /* entries popped by error recoveries */
    uint32_t safe_row, safe_col; /* last position with a small bound */
    bool tripped;
    size_t cancel; /* tree-sitter's cancellation flag */
} guard_state;

static unsigned long log_number(const char *msg, const char *key)
{
    const char *p = strstr(msg, key);
    return p ? strtoul(p + strlen(key), NULL, 10) : 0;
}

static void guard_log(void *payload, TSLogType type, const char *msg)
{
    guard_state *g = payload;
    if (type != TSLogTypeParse || msg == NULL) return;
    switch (msg[0]) {
    case 's': /* shift state:, shift_extra, skip_token */
        if (strncmp(msg, "shift", 5) == 0 || strncmp(msg, "skip_token", 10) == 0) g->depth++;
        break;
    case 'r':
        if (strncmp(msg, "reduce ", 7) == 0) {
            g->depth -= (long)log_number(msg, "child_count:") - 1;
        } else if (strncmp(msg, "recover_to_previous", 19) == 0) {
            long k = (long)log_number(msg, "depth:");
            g->popped += k;
            g->depth -= k - 1;
        } else if (strncmp(msg, "recover_with_missing", 20) == 0) {
            g->depth++;
        }
        break;
    case 'p':
        if (strncmp(msg, "process ", 8) == 0 && g->popped + g->depth < g->low) {
            g->safe_row = (uint32_t)log_number(msg, "row:");
            g->safe_col = (uint32_t)log_number(msg, "col:");
        }
        break;
    default:
        break;
    }
    if (g->depth < 0) g->depth = 0;
    if (g->popped + g->depth > g->high && !g->tripped) {
        g->tripped = true;
        g->cancel = 1;
    }
}

/* ------------------------------------------------------------------ */
/* A quiet lexer                                                       */

/* Most of what the logger costs is the lexer's: a line formatted for every
 * character consumed or skipped, none of which the guard reads (it follows
 * parse actions only).  All of those lines are written while the grammar's
 * lexing functions run, so the guarded parse uses a copy of the grammar
 * whose lexing functions detach the logger for their duration.  The copy is
 * made once per grammar and kept for the life of the plugin: trees parsed
 * with it refer to it. */

#define QUIET_MAX 8 /* grammars per plugin (one or two in practice) */

typedef struct quiet_language {
    const TSLanguage *orig;
    TSLanguage lang;
} quiet_language;

static quiet_language quiet_table[QUIET_MAX];
static size_t quiet_count;
static pthread_mutex_t quiet_mutex = PTHREAD_MUTEX_INITIALIZER;

/* The guarded parse running on this thread.  A parser has the copy only
 * inside cn_ts_parse_guarded(), so the copy's lexing functions run only
 * there, with both set. */
static _Thread_local struct {
    TSParser *parser;
    const TSLanguage *orig;
} quiet_now;

static TSLogger mute(void)
{
    TSLogger saved = ts_parser_logger(quiet_now.parser);
    ts_parser_set_logger(quiet_now.parser, (TSLogger){NULL, NULL});
    return saved;
}

static void unmute(TSLogger saved) { ts_parser_set_logger(quiet_now.parser, saved); }

static bool quiet_lex(TSLexer *lexer, TSStateId state)
{
    TSLogger saved = mute();
    bool r = quiet_now.orig->lex_fn(lexer, state);
    unmute(saved);
    return r;
}

static bool quiet_keyword_lex(TSLexer *lexer, TSStateId state)
{
    TSLogger saved = mute();
    bool r = quiet_now.orig->keyword_lex_fn(lexer, state);
    unmute(saved);
    return r;
}

static bool quiet_scan(void *payload, TSLexer *lexer, const bool *valid)
{
    TSLogger saved = mute();
    bool r = quiet_now.orig->external_scanner.scan(payload, lexer, valid);
    unmute(saved);
    return r;
}

/* The quiet copy of lang (made on first use), or NULL when the table is
 * full or lang is itself a copy: then the parse logs as before. */
static const TSLanguage *quiet_language_of(const TSLanguage *lang)
{
    const TSLanguage *q = NULL;
    if (lang == NULL || lang->lex_fn == quiet_lex) return NULL;
    pthread_mutex_lock(&quiet_mutex);
    for (size_t i = 0; i < quiet_count && q == NULL; i++)
        if (quiet_table[i].orig == lang) q = &quiet_table[i].lang;
    if (q == NULL && quiet_count < QUIET_MAX) {
        quiet_language *e = &quiet_table[quiet_count];
        e->orig = lang;
        e->lang = *lang;
        e->lang.lex_fn = quiet_lex;
        if (lang->keyword_lex_fn != NULL) e->lang.keyword_lex_fn = quiet_keyword_lex;
        if (lang->external_scanner.scan != NULL) e->lang.external_scanner.scan = quiet_scan;
        quiet_count++;
        q = &e->lang;
    }
    pthread_mutex_unlock(&quiet_mutex);
    return q;
}

/* Byte offset of (row, col) in src, at most len. */
static uint32_t offset_of(const char *src, uint32_t len, uint32_t row, uint32_t col)
{
    uint32_t i = 0;
    for (uint32_t r = 0; r < row && i < len; r++) {
        const char *nl = memchr(src + i, '\n', len - i);
        if (nl == NULL) return len;
        i = (uint32_t)(nl - src) + 1;
    }
    return col > len - i ? len : i + col;
}

/* The 0-based line and byte column of offset off in src. */
static void position_of(const char *src, uint32_t off, uint32_t *row, uint32_t *col)
{
    uint32_t r = 0, line = 0;
    const char *p = src, *end = src + off, *nl;
    while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        r++;
        p = nl + 1;
        line = (uint32_t)(p - src);
    }
    *row = r;
    *col = off - line;
}

uint32_t cn_ts_token_bound(const char *src, uint32_t len)
{
    uint64_t n = 0;
    bool in_word = false, number = false, named = false, digit_before = false;
    for (uint32_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)src[i];
        bool digit = c >= '0' && c <= '9';
        bool word = digit || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (word && !in_word) {
            n++;
            number = digit;   /* a word that starts with a digit may split */
            named = false;
        } else if (word && number) {
            /* "1a" is a number and a name, "0b12" two numbers: another
             * token may start at each digit after a non-digit, and at the
             * first non-digit (a name then takes the rest) */
            if (digit && !digit_before) n++;
            if (!digit && !named) {
                n++;
                named = true;
            }
        } else if (word) {
            /* inside a name: the same token */
        } else if (c == '\n') {
            n += 3;
        } else if (c != ' ' && c != '\t' && c != '\r' && c != '\f' && c != '\v') {
            n++;
        }
        in_word = word;
        digit_before = digit;
    }
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

uint64_t cn_ts_parse_budget_us(uint32_t len)
{
    const char *env = getenv("CODENIB_PARSE_TIMEOUT_SCALE");
    double scale = env && *env ? strtod(env, NULL) : 1.0, us;
    if (!(scale > 0) || scale > 1e6) scale = 1.0;   /* nonsense: the default */
    us = (double)(CN_TS_PARSE_TIMEOUT_BASE_US + CN_TS_PARSE_TIMEOUT_US_PER_BYTE * (uint64_t)len) * scale;
    return us < 1 ? 1 : (uint64_t)us;
}

const char *cn_ts_no_tree_reason(const cn_ts_guard_result *res, char *buf, size_t size)
{
    if (res != NULL && res->timed_out)
        snprintf(buf, size, "parsing gave up after %.1f s: error recovery this slow means hostile or badly "
                            "broken input (CODENIB_PARSE_TIMEOUT_SCALE gives it more time)", res->seconds);
    else
        snprintf(buf, size, "tree-sitter returned no tree");
    return buf;
}

static uint64_t now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

/* One parse within what is left of the time; *left shrinks by what it took
 * and is 0 once the time is up (a parse without a tree, other than one
 * canceled by the guard, ran out of it).  libtree-sitter 0.20 adds the
 * timeout's fraction of a second to the clock without carrying into the
 * seconds, and then finds the time up as soon as the next second begins:
 * it is given whole seconds. */
static TSTree *parse_timed(TSParser *parser, const char *src, uint32_t len, uint64_t *left)
{
    uint64_t t0 = now_us(), spent;
    TSTree *tree;
    ts_parser_set_timeout_micros(parser, (*left + 999999u) / 1000000u * 1000000u);
    tree = ts_parser_parse_string(parser, NULL, src, len);
    spent = now_us() - t0;
    *left = spent >= *left ? 0 : *left - spent;
    return tree;
}

TSTree *cn_ts_parse_guarded(TSParser *parser, const char *src, uint32_t len, const cn_ts_guard_opts *opts,
                            cn_ts_guard_result *res)
{
    cn_ts_guard_opts o = {0, 0, 0, 0, 0, 0};
    cn_ts_guard_result r = {false, false, len, 0, 0, 0, false, 0};
    TSTree *tree = NULL;
    uint64_t old_timeout = ts_parser_timeout_micros(parser), started = now_us(), left;

    if (opts != NULL) o = *opts;
    if (o.min_bytes == 0) o.min_bytes = CN_TS_GUARD_MIN_BYTES;
    if (o.high <= 0) o.high = CN_TS_GUARD_HIGH;
    if (o.low <= 0 || o.low > o.high) o.low = o.high < CN_TS_GUARD_LOW ? o.high : CN_TS_GUARD_LOW;
    if (o.retries <= 0) o.retries = CN_TS_GUARD_RETRIES;
    if (o.max_safe_tokens == 0) o.max_safe_tokens = CN_TS_GUARD_SAFE_TOKENS;
    left = o.timeout_us ? o.timeout_us : cn_ts_parse_budget_us(len);

    if (len < o.min_bytes || (o.max_safe_tokens > 0 && cn_ts_token_bound(src, len) <= (uint32_t)o.max_safe_tokens)) {
        r.attempts = 1;
        tree = parse_timed(parser, src, len, &left);
        if (tree == NULL) {
            ts_parser_reset(parser);
            r.timed_out = true;
        }
    } else {
        TSLogger old_logger = ts_parser_logger(parser);
        const size_t *old_flag = ts_parser_cancellation_flag(parser);
        const TSLanguage *lang = ts_parser_language(parser);
        const TSLanguage *quiet = quiet_language_of(lang);
        guard_state g;
        r.guarded = true;
        if (quiet != NULL && ts_parser_set_language(parser, quiet)) {
            quiet_now.parser = parser;
            quiet_now.orig = lang;
        } else {
            quiet = NULL;
        }
        for (int attempt = 0; attempt <= o.retries; attempt++) {
            memset(&g, 0, sizeof g);
            g.high = o.high;
            g.low = o.low;
            if (attempt == o.retries) len = 0; /* give up on the input */
            ts_parser_set_cancellation_flag(parser, &g.cancel);
            ts_parser_set_logger(parser, (TSLogger){&g, guard_log});
            r.attempts++;
            tree = left > 0 ? parse_timed(parser, src, len, &left) : NULL;
            ts_parser_set_logger(parser, (TSLogger){NULL, NULL});
            ts_parser_set_cancellation_flag(parser, NULL);
            if (tree != NULL && !g.tripped) break;
            if (tree != NULL) ts_tree_delete(tree);
            tree = NULL;
            ts_parser_reset(parser);
            if (!g.tripped) { /* not the guard: out of time */
                r.timed_out = true;
                break;
            }
            uint32_t cut = offset_of(src, len, g.safe_row, g.safe_col);
            len = cut < len ? cut : len / 2;
        }
        ts_parser_set_logger(parser, old_logger);
        ts_parser_set_cancellation_flag(parser, old_flag);
        if (quiet != NULL) {
            /* the tree keeps the copy, which outlives it */
            quiet_now.parser = NULL;
            quiet_now.orig = NULL;
            ts_parser_set_language(parser, lang);
        }
        if (tree != NULL && len < r.parsed_len) {
            r.cut = true;
            r.parsed_len = len;
            position_of(src, len, &r.cut_row, &r.cut_col);
        }
    }
    ts_parser_set_timeout_micros(parser, old_timeout);
    if (r.timed_out) r.seconds = (double)(now_us() - started) / 1e6;
    if (res != NULL) *res = r;
    return tree;
}

/* ------------------------------------------------------------------ */
/* Blanking deep nesting                                               */

/* +1 for a line (starting at i) that is #if, #ifdef or #ifndef, -1 for
 * #endif, 0 otherwise; *hash receives the offset of its '#'. */
static int directive_delta(const char *s, size_t len, size_t i, size_t *hash)
{
    size_t w;
    while (i < len && (s[i] == ' ' || s[i] == '\t')) i++;
    if (i >= len || s[i] != '#') return 0;
    *hash = i++;
    while (i < len && (s[i] == ' ' || s[i] == '\t')) i++;
    for (w = i; w < len && s[w] >= 'a' && s[w] <= 'z'; w++) {
    }
    if ((w - i == 2 && memcmp(s + i, "if", 2) == 0) || (w - i == 5 && memcmp(s + i, "ifdef", 5) == 0) ||
        (w - i == 6 && memcmp(s + i, "ifndef", 6) == 0))
        return 1;
    if (w - i == 5 && memcmp(s + i, "endif", 5) == 0) return -1;
    return 0;
}

/* The copy, made on first use; NULL when out of memory. */
static char *copy_of(char **copy, const char *src, size_t len)
{
    if (*copy == NULL && (*copy = malloc(len + 1)) != NULL) {
        memcpy(*copy, src, len);
        (*copy)[len] = '\0';
    }
    return *copy;
}

/* +1 for an opening bracket, -1 for a closing one. */
static const signed char bracket_delta[256] = {
    ['('] = 1, ['['] = 1, ['{'] = 1, [')'] = -1, [']'] = -1, ['}'] = -1,
};

/* Nothing nested deeper than max_depth?  One branch-free pass for the
 * brackets and, for directives, a count of the '#' bytes (each directive
 * line has one, so nesting cannot go deeper than there are): the common
 * case, where cn_ts_blank_deep_nesting() has nothing to do, costs little. */
static bool shallow(const char *src, size_t len, unsigned flags, size_t max_depth)
{
    if (flags & CN_TS_BLANK_BRACKETS) {
        long depth = 0, deepest = 0;
        for (size_t i = 0; i < len; i++) {
            depth += bracket_delta[(unsigned char)src[i]];
            depth &= ~(depth >> (sizeof depth * 8 - 1)); /* a stray closer: back to 0 */
            deepest = depth > deepest ? depth : deepest;
        }
        if ((size_t)deepest > max_depth) return false;
    }
    if (flags & CN_TS_BLANK_DIRECTIVES) {
        size_t hashes = 0;
        for (const char *p = src, *end = src + len; p < end && (p = memchr(p, '#', (size_t)(end - p))) != NULL; p++)
            if (++hashes > max_depth) return false;
    }
    return true;
}

char *cn_ts_blank_deep_nesting(const char *src, size_t len, unsigned flags, size_t max_depth, bool *failed)
{
    size_t depth = 0, pdepth = 0;
    char *copy = NULL;

    *failed = false;
    if (max_depth == 0) max_depth = CN_TS_MAX_NESTING;
    if (shallow(src, len, flags, max_depth)) return NULL;
    for (size_t i = 0; i < len; i++) {
        char ch = src[i];
        if ((flags & CN_TS_BLANK_DIRECTIVES) && (i == 0 || src[i - 1] == '\n')) {
            size_t hash = 0, j;
            int d = directive_delta(src, len, i, &hash);
            bool blank = false;
            if (d > 0) {
                blank = ++pdepth > max_depth;
            } else if (d < 0) {
                blank = pdepth > max_depth;
                if (pdepth > 0) pdepth--;
            }
            if (blank) {
                /* the whole directive line, continuations included */
                if (copy_of(&copy, src, len) == NULL) goto nomem;
                for (j = hash; j < len && copy[j] != '\n'; j++) {
                    if (copy[j] == '\\' && j + 1 < len && copy[j + 1] == '\n') {
                        copy[j++] = ' '; /* keep the newline, go on with the next line */
                        continue;
                    }
                    copy[j] = ' ';
                }
                i = j - 1; /* j > hash >= i: resume at the newline */
                continue;
            }
        }
        if (!(flags & CN_TS_BLANK_BRACKETS)) continue;
        if (ch == '(' || ch == '[' || ch == '{') {
            if (++depth <= max_depth) continue;
        } else if (ch == ')' || ch == ']' || ch == '}') {
            bool deep = depth > max_depth;
            if (depth > 0) depth--;
            if (!deep) continue;
        } else {
            continue;
        }
        if (copy_of(&copy, src, len) == NULL) goto nomem;
        copy[i] = ' ';
    }
    return copy;

nomem:
    *failed = true;
    return NULL;
}

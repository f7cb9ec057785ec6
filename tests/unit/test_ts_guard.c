/* SPDX-License-Identifier: Apache-2.0 */
/* The tree-sitter crash guard (plugins/common/cn_ts_guard.h): its token
 * bound, and which inputs it watches -- small ones and large ones too
 * sparse in tokens are parsed plainly, dense large ones under the guard,
 * which cuts a parse that would overflow a 16-bit child count. */
#include <stdlib.h>
#include <string.h>

#include "cn_ts_guard.h"
#include "tap.h"

const TSLanguage *tree_sitter_python(void);

/* `unit` n times, after `head` */
static char *repeat(const char *head, const char *unit, size_t n, uint32_t *len)
{
    size_t h = strlen(head), u = strlen(unit);
    char *s = malloc(h + u * n + 1);
    if (s == NULL) return NULL;
    memcpy(s, head, h);
    for (size_t i = 0; i < n; i++) memcpy(s + h + i * u, unit, u);
    s[h + u * n] = '\0';
    *len = (uint32_t)(h + u * n);
    return s;
}

static void test_bound(void)
{
    is_int(cn_ts_token_bound("", 0), 0, "bound: nothing in, no token");
    is_int(cn_ts_token_bound("foo_bar1 baz", 12), 2, "bound: a word is one token");
    is_int(cn_ts_token_bound("a.b(c)", 6), 6, "bound: every other non-blank byte is one");
    is_int(cn_ts_token_bound("1a 42", 5), 3, "bound: a word starting with a digit may be a number and a name");
    is_int(cn_ts_token_bound("0b12a", 5), 3, "bound: or two numbers and a name");
    is_int(cn_ts_token_bound("a1b2 _9", 7), 2, "bound: a word starting with a letter is one token");
    is_int(cn_ts_token_bound("x\n\ny", 4), 8, "bound: a newline counts three (newline, indent, dedent)");
    is_int(cn_ts_token_bound(" \t\r\f\v", 5), 0, "bound: blanks count nothing");
    is_int(cn_ts_token_bound("\x01\xc3\xa9", 3), 3, "bound: control and non-ASCII bytes count one each");
}

static void parse(TSParser *p, const char *src, uint32_t len, cn_ts_guard_result *r)
{
    TSTree *t = cn_ts_parse_guarded(p, src, len, NULL, r);
    ok(t != NULL, "a tree comes back");
    if (t) ts_tree_delete(t);
}

int main(void)
{
    TSParser *p = ts_parser_new();
    cn_ts_guard_result r;
    uint32_t len;
    char *s;

    test_bound();
    if (p == NULL || !ts_parser_set_language(p, tree_sitter_python())) {
        printf("Bail out! no python parser\n");
        return 1;
    }
    parse(p, "def f(x):\n    return -x\n", 25, &r);
    ok(!r.guarded && !r.cut, "a small input is parsed plainly");

    s = repeat("x = ", "-       ", 32000, &len);   /* 256 KB, 32,002 tokens */
    parse(p, s, len, &r);
    ok(!r.guarded && !r.cut && r.parsed_len == len, "256 KB of 32,002 tokens: parsed plainly, whole");
    free(s);

    s = repeat("def f(x):\n", "    y = x  # a comment, with words\n", 4000, &len);   /* 140 KB, 48,000 tokens */
    parse(p, s, len, &r);
    ok(r.guarded && !r.cut, "140 KB of clean code over the bound: guarded, not cut");
    free(s);

    s = repeat("x = ", "- ", 100000, &len);   /* the overflow */
    parse(p, s, len, &r);
    ok(r.guarded && r.cut && r.parsed_len < len, "100,000 unary minuses: guarded and cut short");
    free(s);

    ts_parser_delete(p);
    return tap_done();
}

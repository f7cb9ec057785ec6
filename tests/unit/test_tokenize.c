/* SPDX-License-Identifier: Apache-2.0 */
/* Code-aware tokenizer: every rule of cn_tokenize.h with exact token lists
 * (tokens joined with spaces, in emission order). */
#include <string.h>

#include "index/cn_tokenize.h"
#include "util/cn_util.h"
#include "tap.h"

typedef struct collect {
    cn_buf out;
    size_t count;
    size_t stop_after;  /* 0 = never stop */
    size_t max_len;
} collect;

static int collect_fn(const char *tok, size_t len, void *data)
{
    collect *c = data;
    if (c->out.len) cn_buf_putc(&c->out, ' ');
    cn_buf_append(&c->out, tok, len);
    c->count++;
    if (len > c->max_len) c->max_len = len;
    if (c->stop_after && c->count == c->stop_after) return 7;
    return 0;
}

/* Tokenizes text and compares the space-joined tokens with want. */
static void check(const char *text, const char *want)
{
    collect c = {CN_BUF_INIT, 0, 0, 0};
    char what[300];
    int rc = cn_tokenize(text, strlen(text), collect_fn, &c);

    snprintf(what, sizeof what, "tokens of \"%s\"", text);
    /* keep the TAP line on one line */
    for (char *p = what; *p; p++)
        if (*p == '\n' || *p == '\t') *p = ' ';
    ok(rc == 0, what);
    is_str(c.out.data ? c.out.data : "", want, what);
    cn_buf_free(&c.out);
}

static void test_rules(void)
{
    /* whole word first, lowercased, underscores kept; then parts */
    check("get_user_id", "get_user_id get user id");
    check("fooBar", "foobar foo bar");
    check("HTTPServer", "httpserver http server");
    check("parseJSONValue", "parsejsonvalue parse json value");
    check("XMLHttpRequest", "xmlhttprequest xml http request");
    check("getX", "getx get x");
    check("ABC", "abc");
    /* letter/digit boundaries */
    check("utf8Decode", "utf8decode utf 8 decode");
    check("v2", "v2 v 2");
    check("x86_64", "x86_64 x 86 64");
    check("3D", "3d 3 d");
    check("sha256", "sha256 sha 256");
    /* single-part words are not repeated */
    check("foo", "foo");
    check("FOO", "foo");
    check("Foo", "foo");
    check("A", "a");
    check("Ab", "ab");
    check("42", "42");
    /* a capital or digit after the first letter starts looking for parts */
    check("fooB", "foob foo b");
    check("aBc", "abc a bc");
    check("ab1", "ab1 ab 1");
    /* length-1 tokens are kept */
    check("a", "a");
    check("x = y+1;", "x y 1");
    /* a single part different from the word is emitted */
    check("__init__", "__init__ init");
    check("_private", "_private private");
    check("MAX_", "max_ max");
    /* only underscores: the word, no (empty) parts */
    check("_", "_");
    check("a__b", "a__b a b");
    /* separators */
    check("foo.bar(baz)", "foo bar baz");
    check("  \t\n", "");
    check("", "");
    check("--->", "");
    check("a-b c/d", "a b c d");
    /* UTF-8 stays inside words, only ASCII is lowercased */
    check("h\xc3\xa9llo W\xc3\xb6rld", "h\xc3\xa9llo w\xc3\xb6rld");
    check("caf\xc3\xa9" "Bar", "caf\xc3\xa9" "bar caf\xc3\xa9 bar");
    check("\xc3\x89t\xc3\xa9", "\xc3\x89t\xc3\xa9");
    check("na\xc3\xafve2", "na\xc3\xafve2 na\xc3\xafve 2");
    /* mixed */
    check("def parse_HTTPHeader(self):",
          "def parse_httpheader parse http header self");
    check("IOError", "ioerror io error");
}

static void test_len_and_nul(void)
{
    collect c = {CN_BUF_INIT, 0, 0, 0};
    const char text[] = "foo bar\0baz qux";

    ok(cn_tokenize(text, 3, collect_fn, &c) == 0, "prefix tokenizes");
    is_str(c.out.data, "foo", "only len bytes are read");
    cn_buf_free(&c.out);

    memset(&c, 0, sizeof c);
    ok(cn_tokenize(text, sizeof text - 1, collect_fn, &c) == 0, "embedded NUL");
    is_str(c.out.data, "foo bar baz qux", "NUL is a separator, not the end");
    cn_buf_free(&c.out);

    memset(&c, 0, sizeof c);
    ok(cn_tokenize(NULL, 10, collect_fn, &c) == 0 && c.count == 0, "NULL text: no tokens");
}

static void test_stop(void)
{
    collect c = {CN_BUF_INIT, 0, 2, 0};
    int rc = cn_tokenize("alpha betaGamma delta", 21, collect_fn, &c);

    is_int(rc, 7, "callback's non-zero is passed back");
    is_int(c.count, 2, "tokenizing stops at once");
    is_str(c.out.data, "alpha betagamma", "tokens before the stop");
    cn_buf_free(&c.out);

    memset(&c, 0, sizeof c);
    c.stop_after = 3;
    rc = cn_tokenize("alpha betaGamma delta", 21, collect_fn, &c);
    is_int(rc, 7, "stop inside the parts");
    is_str(c.out.data, "alpha betagamma beta", "stopped after the first part");
    cn_buf_free(&c.out);
}

static void test_long(void)
{
    char text[700], want[700];
    collect c = {CN_BUF_INIT, 0, 0, 0};

    /* 300 letters: truncated to CN_TOKEN_MAX */
    memset(text, 'A', 300);
    text[300] = '\0';
    memset(want, 'a', CN_TOKEN_MAX);
    want[CN_TOKEN_MAX] = '\0';
    cn_tokenize(text, 300, collect_fn, &c);
    is_int(c.count, 1, "long word: one token");
    is_int(c.max_len, CN_TOKEN_MAX, "truncated to CN_TOKEN_MAX");
    is_str(c.out.data, want, "truncated bytes lowercased");
    cn_buf_free(&c.out);

    /* long first part plus a short one: both the word and the long part
     * are truncated, the short part is intact */
    memset(&c, 0, sizeof c);
    memset(text, 'a', 300);
    memcpy(text + 300, "_b", 3);
    cn_tokenize(text, 302, collect_fn, &c);
    is_int(c.count, 3, "long word with two parts: three tokens");
    is_int(c.max_len, CN_TOKEN_MAX, "every token at most CN_TOKEN_MAX");
    has_str(c.out.data, " b", "short part emitted");
    cn_buf_free(&c.out);

    /* a 2-byte UTF-8 character straddling the limit is not cut in half */
    memset(&c, 0, sizeof c);
    memset(text, 'a', CN_TOKEN_MAX - 1);
    memcpy(text + CN_TOKEN_MAX - 1, "\xc3\xa9zz", 5);
    cn_tokenize(text, CN_TOKEN_MAX + 3, collect_fn, &c);
    is_int(c.count, 1, "utf-8 long word: one token");
    is_int(c.max_len, CN_TOKEN_MAX - 1, "cut before the split character");
    cn_buf_free(&c.out);
}

static void test_deterministic(void)
{
    const char *text = "static int cn_bm25_open(const char *path, cn_bm25 **out)";
    collect a = {CN_BUF_INIT, 0, 0, 0}, b = {CN_BUF_INIT, 0, 0, 0};

    cn_tokenize(text, strlen(text), collect_fn, &a);
    cn_tokenize(text, strlen(text), collect_fn, &b);
    is_str(a.out.data, b.out.data, "same text, same tokens");
    is_str(a.out.data,
           "static int cn_bm25_open cn bm 25 open const char path cn_bm25 cn bm 25 out",
           "C declaration");
    cn_buf_free(&a.out);
    cn_buf_free(&b.out);
}

int main(void)
{
    test_rules();
    test_len_and_nul();
    test_stop();
    test_long();
    test_deterministic();
    return tap_done();
}

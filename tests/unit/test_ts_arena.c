/* SPDX-License-Identifier: Apache-2.0 */
/* The parse arena (plugins/common/cn_ts_arena.h): its blocks behave as
 * malloc's do, a parse in it gives the tree a parse with libc gives, past
 * its cap it hands out libc memory and says the tree must be deleted, and
 * closing it takes everything back.  Run under ASan and valgrind too, which
 * see each arena block as a heap block. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tree_sitter/parser.h> /* TSLanguage's layout */

#include "cn_ts_arena.h"
#include "cn_ts_guard.h"
#include "tap.h"

const TSLanguage *tree_sitter_python(void);

#ifdef CN_TS_ARENA /* else (libtree-sitter linked shared) there are no arenas to test */

/* A Python module of n small classes (some 150 bytes each). */
static char *module(size_t n, uint32_t *len)
{
    size_t cap = n * 200 + 64, at = 0;
    char *s = malloc(cap);
    if (s == NULL) return NULL;
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(s + at, cap - at,
                               "class C%zu(Base):\n    def m(self, x=%zu):\n"
                               "        return helper(x, [self.a, {'k': x}])\n\n",
                               i, i);
    *len = (uint32_t)at;
    return s;
}

/* The tree's S-expression, in libc memory. */
static char *sexp(TSTree *t)
{
    char *s = ts_node_string(ts_tree_root_node(t)), *copy = s ? strdup(s) : NULL;
    cn_ts_arena_release(s); /* ts_node_string allocates with tree-sitter's allocator */
    return copy;
}

/* The tree of src from a long-lived parser and libc memory. */
static char *plain_sexp(const char *src, uint32_t len)
{
    TSParser *p = ts_parser_new();
    TSTree *t;
    char *s = NULL;
    ts_parser_set_language(p, tree_sitter_python());
    t = cn_ts_parse_guarded(p, src, len, NULL, NULL);
    if (t != NULL) s = sexp(t);
    ts_tree_delete(t);
    ts_parser_delete(p);
    return s;
}

static void test_blocks(cn_ts_arena *a)
{
    unsigned char *p, *q, *r;
    TSParser *parser = cn_ts_arena_open(a, tree_sitter_python());
    bool aligned = true, zero = true, kept = true;
    ok(parser != NULL, "blocks: the arena opens with a parser");
    ok(cn_ts_arena_droppable(a), "blocks: droppable while everything is in the arena");
    ok(cn_ts_arena_held(a) >= ((size_t)1 << 20), "blocks: a first chunk of 1 MiB");

    for (size_t n = 1; n < 200; n += 7) {
        p = cn_ts_arena_malloc(n);
        if (((uintptr_t)p & 15u) != 0) aligned = false;
        memset(p, 0xab, n);
    }
    ok(aligned, "blocks: every block is 16-byte aligned");

    p = cn_ts_arena_malloc(64);
    memset(p, 0xcd, 64);
    cn_ts_arena_release(p);
    q = cn_ts_arena_calloc(8, 8);
    ok(q == p, "blocks: the newest block's room is given back when it is freed");
    for (int i = 0; i < 64; i++) zero = zero && q[i] == 0;
    ok(zero, "blocks: calloc zeroes reused memory");

    for (int i = 0; i < 64; i++) q[i] = (unsigned char)i;
    r = cn_ts_arena_realloc(q, 4096);
    ok(r == q, "blocks: the newest block grows where it is");
    p = cn_ts_arena_malloc(16);
    r = cn_ts_arena_realloc(q, 8192);
    ok(r != q, "blocks: an older block grows by moving");
    for (int i = 0; i < 64; i++) kept = kept && r[i] == (unsigned char)i;
    ok(kept, "blocks: and keeps its contents");
    cn_ts_arena_release(p);
    cn_ts_arena_release(r);
    ok(cn_ts_arena_realloc(NULL, 32) != NULL, "blocks: realloc(NULL) allocates");

    /* a block larger than a chunk gets a chunk of its own */
    p = cn_ts_arena_malloc((size_t)3 << 20);
    memset(p, 1, (size_t)3 << 20);
    ok(cn_ts_arena_held(a) >= ((size_t)4 << 20), "blocks: a 3 MiB block maps a chunk for it");
    ok(cn_ts_arena_droppable(a), "blocks: still all in the arena");
    cn_ts_arena_close(a, parser);
    ok(!cn_ts_arena_droppable(a), "blocks: nothing to drop once closed");
    ok(cn_ts_arena_held(a) <= CN_TS_ARENA_KEEP, "blocks: at most CN_TS_ARENA_KEEP bytes kept");

    /* closed: libc's memory, which free() takes */
    p = cn_ts_arena_malloc(100);
    ok(p != NULL, "blocks: closed, the allocator is libc's");
    free(p);
}

static void test_parse(cn_ts_arena *a, size_t classes, const char *what)
{
    uint32_t len;
    char *src = module(classes, &len), *want = plain_sexp(src, len), *got = NULL;
    TSParser *parser = cn_ts_arena_parser(a, NULL, tree_sitter_python());
    TSTree *t = parser ? cn_ts_parse_guarded(parser, src, len, NULL, NULL) : NULL;
    char msg[128];
    ok(t != NULL, what);
    if (t != NULL) {
        TSTreeCursor c = ts_tree_cursor_new(ts_tree_root_node(t));
        ts_tree_cursor_goto_first_child(&c);
        ts_tree_cursor_delete(&c);
        got = sexp(t);
    }
    snprintf(msg, sizeof msg, "%s: the same tree as with libc", what);
    ok(want != NULL && got != NULL && strcmp(want, got) == 0, msg);
    snprintf(msg, sizeof msg, "%s: the tree can be dropped", what);
    ok(cn_ts_arena_droppable(a), msg);
    cn_ts_arena_done(a, parser, t);
    snprintf(msg, sizeof msg, "%s: closed, at most CN_TS_ARENA_KEEP bytes kept", what);
    ok(!cn_ts_arena_droppable(a) && cn_ts_arena_held(a) <= CN_TS_ARENA_KEEP, msg);
    free(want);
    free(got);
    free(src);
}

/* Past the cap, libc memory: the tree is made of both and must be deleted,
 * which cn_ts_arena_done() does (ASan and valgrind check every free). */
static void test_cap(size_t classes)
{
    uint32_t len;
    char *src = module(classes, &len), *want = plain_sexp(src, len), *got = NULL;
    cn_ts_arena *a = cn_ts_arena_new();
    TSParser *parser;
    TSTree *t;
    cn_ts_arena_set_cap(a, (size_t)4 << 20);
    parser = cn_ts_arena_parser(a, NULL, tree_sitter_python());
    t = parser ? cn_ts_parse_guarded(parser, src, len, NULL, NULL) : NULL;
    ok(t != NULL, "cap: a large module parses with a 4 MiB cap");
    ok(!cn_ts_arena_droppable(a), "cap: past the cap the tree must be deleted");
    ok(cn_ts_arena_held(a) <= ((size_t)4 << 20), "cap: the arena holds no more than its cap");
    if (t != NULL) got = sexp(t);
    ok(want != NULL && got != NULL && strcmp(want, got) == 0, "cap: the same tree as with libc");
    cn_ts_arena_done(a, parser, t);
    cn_ts_arena_set_cap(a, 0);
    ok(cn_ts_arena_held(a) <= ((size_t)4 << 20), "cap: closed, the blocks kept are within the cap");
    cn_ts_arena_free(a);
    free(want);
    free(got);
    free(src);
}

static void test_nested(cn_ts_arena *a, cn_ts_arena *b)
{
    TSParser *keep = ts_parser_new();
    TSParser *pa = cn_ts_arena_parser(a, keep, tree_sitter_python());
    TSParser *pb = cn_ts_arena_parser(b, keep, tree_sitter_python());
    TSLanguage bad = *tree_sitter_python();
    void *x;
    size_t held;
    ok(pa != keep, "nested: the first arena opens");
    ok(pb == keep, "nested: a second one on the same thread does not: the long-lived parser");
    x = cn_ts_arena_malloc(24); /* libc's, or free() aborts */
    free(x);
    ok(x != NULL, "nested: the inner parse allocates from libc, not the outer arena");
    cn_ts_arena_done(b, pb, NULL); /* not b's: nothing closed */
    ok(cn_ts_arena_droppable(a), "nested: the first is still open");
    held = cn_ts_arena_held(a);
    x = cn_ts_arena_malloc((size_t)20 << 20); /* more than any chunk kept */
    ok(cn_ts_arena_held(a) > held, "nested: and allocates again");
    cn_ts_arena_release(x);
    cn_ts_arena_done(a, pa, NULL);
    ok(!cn_ts_arena_droppable(a), "nested: then closed");
    ok(cn_ts_arena_open(a, NULL) == NULL && !cn_ts_arena_droppable(a), "nested: no language, no parser");
    bad.version = 1; /* an ABI libtree-sitter refuses */
    ok(cn_ts_arena_open(a, &bad) == NULL && !cn_ts_arena_droppable(a),
       "nested: a language refused closes the arena again");
    pa = cn_ts_arena_open(a, tree_sitter_python());
    ok(pa != NULL, "nested: and it opens after that");
    cn_ts_arena_close(a, pa);
    ts_parser_delete(keep);
}

typedef struct job {
    uint32_t len;
    const char *src;
    const char *want;
    int same;
} job;

static void *parse_on_thread(void *arg)
{
    job *j = arg;
    cn_ts_arena *a = cn_ts_arena_new();
    j->same = a != NULL;
    for (int i = 0; i < 20 && a != NULL; i++) {
        TSParser *parser = cn_ts_arena_parser(a, NULL, tree_sitter_python());
        TSTree *t = parser ? cn_ts_parse_guarded(parser, j->src, j->len, NULL, NULL) : NULL;
        char *got = t ? sexp(t) : NULL;
        if (got == NULL || strcmp(got, j->want) != 0) j->same = 0;
        free(got);
        cn_ts_arena_done(a, parser, t);
    }
    cn_ts_arena_free(a);
    return NULL;
}

static void test_threads(void)
{
    job jobs[2];
    pthread_t th[2];
    uint32_t len;
    char *src = module(300, &len), *want = plain_sexp(src, len);
    for (int i = 0; i < 2; i++) {
        jobs[i] = (job){len, src, want, 0};
        pthread_create(&th[i], NULL, parse_on_thread, &jobs[i]);
    }
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    ok(jobs[0].same && jobs[1].same, "threads: two threads, an arena each, the same trees");
    free(want);
    free(src);
}

#endif /* CN_TS_ARENA */

int main(void)
{
#ifdef CN_TS_ARENA
    cn_ts_arena *a, *b;
    /* a module of 440 KB (its tree some 25 MB, in five chunks), under
     * valgrind (CN_VALGRIND set) of 175 KB (10 MB, four chunks) */
    const char *vg = getenv("CN_VALGRIND");
    size_t large = vg != NULL && *vg != '\0' ? 2000 : 5000;
    setenv("CODENIB_TS_ARENA", "0", 1);
    ok(cn_ts_arena_new() == NULL, "CODENIB_TS_ARENA=0 turns arenas off");
    unsetenv("CODENIB_TS_ARENA");
    a = cn_ts_arena_new();
    b = cn_ts_arena_new();
    ok(a != NULL && b != NULL, "arenas are available (libtree-sitter linked statically)");
    if (a != NULL && b != NULL) {
        test_blocks(a);
        test_parse(a, 50, "small module");
        test_parse(a, large, "large module");
        test_parse(a, 50, "small module again");
        test_cap(large);
        test_parse(a, 50, "after the cap");
        test_nested(a, b);
        test_threads();
    }
    cn_ts_arena_free(a);
    cn_ts_arena_free(b);
#else
    TSParser *keep = ts_parser_new();
    ok(cn_ts_arena_new() == NULL, "libtree-sitter linked shared: no arenas");
    ok(cn_ts_arena_parser(NULL, keep, tree_sitter_python()) == keep, "the long-lived parser is used");
    ts_parser_delete(keep);
#endif
    return tap_done();
}

/* SPDX-License-Identifier: Apache-2.0 */
/* BM25 index: scores checked against the formula on a hand-made corpus,
 * ranking and tie order, k and filter, builder rules, byte-identical
 * output, the reader's accessors, every kind of damaged file, and a
 * randomized comparison with a brute-force scorer. */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "index/cn_bm25.h"
#include "index/cn_idxfile.h"
#include "index/cn_tokenize.h"
#include "util/cn_util.h"
#include "tap.h"

static char tmpdir[64];

static char *tmp_path(const char *name)
{
    return cn_path_join(tmpdir, name);
}

static void remove_tmpdir(void)
{
    DIR *d = opendir(tmpdir);
    struct dirent *e;

    if (d == NULL) return;
    while ((e = readdir(d)) != NULL) {
        char *p;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        p = tmp_path(e->d_name);
        unlink(p);
        free(p);
    }
    closedir(d);
    rmdir(tmpdir);
}

static int read_all(const char *path, char **data, size_t *len)
{
    return cn_file_read(path, (size_t)1 << 30, data, len);
}

static int same_bytes(const char *a, const char *b)
{
    char *da = NULL, *db = NULL;
    size_t la = 0, lb = 0;
    int same = read_all(a, &da, &la) == 0 && read_all(b, &db, &lb) == 0 && la == lb &&
               memcmp(da, db, la) == 0;
    free(da);
    free(db);
    return same;
}

static int write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    int good;
    if (f == NULL) return -1;
    good = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && good ? 0 : -1;
}

static int add_str(cn_bm25_builder *b, uint32_t doc, const char *s)
{
    return cn_bm25_add(b, doc, s, strlen(s));
}

/* ---- the hand-made corpus ------------------------------------------------
 * Single-part lowercase words, so each word is exactly one token:
 *   doc 0 "apple banana apple"        dl 3
 *   doc 1 "banana cherry"             dl 2
 *   doc 2 "cherry cherry cherry date" dl 4
 *   doc 3 "apple"                     dl 1
 *   doc 4 never added                 dl 0
 *   doc 5 "date" + "banana" (2 calls) dl 2
 *   doc 6 "elder fig"                 dl 2
 *   doc 7 "fig elder"                 dl 2
 * N = 8, total 16, avgdl 2.  df: apple 2, banana 3, cherry 2, date 2,
 * elder 2, fig 2. */
#define K1 1.2
#define B 0.75
#define N_DOCS 8
#define AVGDL 2.0

static double expect(double tf, double df, double dl)
{
    double idf = log(1.0 + (N_DOCS - df + 0.5) / (df + 0.5));
    return idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / AVGDL));
}

static int build_corpus(double k1, double b, uint32_t n_docs, const char *path)
{
    cn_bm25_builder *bld = NULL;
    int rc = cn_bm25_builder_new(k1, b, &bld);

    if (rc == 0) rc = add_str(bld, 0, "apple banana apple");
    if (rc == 0) rc = add_str(bld, 1, "banana cherry");
    if (rc == 0) rc = add_str(bld, 2, "cherry cherry cherry date");
    if (rc == 0) rc = add_str(bld, 3, "apple");
    if (rc == 0) rc = add_str(bld, 5, "date");
    if (rc == 0) rc = add_str(bld, 5, "banana");
    if (rc == 0) rc = add_str(bld, 6, "elder fig");
    if (rc == 0) rc = add_str(bld, 7, "fig elder");
    if (rc == 0) rc = cn_bm25_write(bld, n_docs, path);
    cn_bm25_builder_free(bld);
    return rc;
}

/* Field by field: the struct has padding that memcmp would compare. */
static bool same_hits(const cn_bm25_hit *a, const cn_bm25_hit *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].doc != b[i].doc || a[i].score != b[i].score) return false;
    return true;
}

static bool no_doc3(uint32_t doc, void *data)
{
    int *calls = data;
    (*calls)++;
    return doc != 3;
}

static bool none(uint32_t doc, void *data)
{
    (void)doc;
    (void)data;
    return false;
}

static void near(double got, double want, const char *what)
{
    ok(fabs(got - want) < 1e-9, what);
    if (fabs(got - want) >= 1e-9) diag("got %.17g want %.17g", got, want);
}

static void test_scores(void)
{
    char *path = tmp_path("corpus.idx");
    cn_bm25 *idx = NULL;
    cn_bm25_hit hits[10];
    size_t n = 99;
    int calls = 0;

    is_int(build_corpus(K1, B, N_DOCS, path), 0, "corpus builds");
    is_int(cn_bm25_open(path, &idx), 0, "corpus opens");
    if (idx == NULL) {
        diag("%s", cn_error_last()->message);
        free(path);
        return;
    }

    /* accessors */
    is_int(cn_bm25_doc_count(idx), 8, "doc_count");
    ok(cn_bm25_k1(idx) == K1, "k1 round trip");
    ok(cn_bm25_b(idx) == B, "b round trip");
    ok(cn_bm25_avgdl(idx) == 2.0, "avgdl = 16 / 8");
    is_int(cn_bm25_term_count(idx), 6, "six terms");
    is_int(cn_bm25_df(idx, "apple"), 2, "df apple");
    is_int(cn_bm25_df(idx, "banana"), 3, "df banana (doc 5's second call counted)");
    is_int(cn_bm25_df(idx, "cherry"), 2, "df cherry");
    is_int(cn_bm25_df(idx, "date"), 2, "df date");
    is_int(cn_bm25_df(idx, "elder"), 2, "df elder");
    is_int(cn_bm25_df(idx, "fig"), 2, "df fig");
    is_int(cn_bm25_df(idx, "zebra"), 0, "df of an absent term");
    is_int(cn_bm25_df(idx, ""), 0, "df of the empty term");
    is_int(cn_bm25_df(idx, "appl"), 0, "df of a prefix");
    is_int(cn_bm25_doc_len(idx, 0), 3, "doc 0 length");
    is_int(cn_bm25_doc_len(idx, 2), 4, "doc 2 length");
    is_int(cn_bm25_doc_len(idx, 4), 0, "never-added doc has length 0");
    is_int(cn_bm25_doc_len(idx, 5), 2, "doc over two calls: length 2");
    is_int(cn_bm25_doc_len(idx, 8), 0, "out-of-range doc length 0");

    /* one term: short doc 3 (tf 1, dl 1) beats doc 0 (tf 2, dl 3) */
    is_int(cn_bm25_search(idx, "apple", 10, NULL, NULL, hits, &n), 0, "search apple");
    is_int(n, 2, "apple: 2 hits");
    is_int(hits[0].doc, 3, "apple: doc 3 first");
    near(hits[0].score, expect(1, 2, 1), "apple: doc 3 score");
    is_int(hits[1].doc, 0, "apple: doc 0 second");
    near(hits[1].score, expect(2, 2, 3), "apple: doc 0 score");

    /* two terms summed */
    is_int(cn_bm25_search(idx, "banana cherry", 10, NULL, NULL, hits, &n), 0, "search banana cherry");
    is_int(n, 4, "banana cherry: 4 hits");
    is_int(hits[0].doc, 1, "doc 1 first (both terms)");
    near(hits[0].score, expect(1, 3, 2) + expect(1, 2, 2), "doc 1 score is the sum");
    is_int(hits[1].doc, 2, "doc 2 second (cherry x3)");
    near(hits[1].score, expect(3, 2, 4), "doc 2 score");
    is_int(hits[2].doc, 5, "doc 5 third (banana added in a second call)");
    near(hits[2].score, expect(1, 3, 2), "doc 5 score");
    is_int(hits[3].doc, 0, "doc 0 last");
    near(hits[3].score, expect(1, 3, 3), "doc 0 score");

    /* a repeated query token counts once per occurrence; case folds */
    is_int(cn_bm25_search(idx, "apple APPLE", 10, NULL, NULL, hits, &n), 0, "search apple APPLE");
    is_int(n, 2, "repeated token: 2 hits");
    near(hits[0].score, 2 * expect(1, 2, 1), "repeated token doubles the score");

    /* ties: equal scores come back by doc ascending, every time */
    for (int round = 0; round < 3; round++) {
        is_int(cn_bm25_search(idx, "fig elder", 10, NULL, NULL, hits, &n), 0, "search tie");
        ok(n == 2 && hits[0].doc == 6 && hits[1].doc == 7 && hits[0].score == hits[1].score,
           "tie broken by doc ascending");
    }
    is_int(cn_bm25_search(idx, "fig", 1, NULL, NULL, hits, &n), 0, "search tie, k=1");
    ok(n == 1 && hits[0].doc == 6, "k=1 keeps the lower doc of a tie");

    /* k */
    is_int(cn_bm25_search(idx, "banana cherry", 2, NULL, NULL, hits, &n), 0, "search k=2");
    ok(n == 2 && hits[0].doc == 1 && hits[1].doc == 2, "k=2: the best two, in order");
    is_int(cn_bm25_search(idx, "banana cherry", 0, NULL, NULL, NULL, &n), 0, "k=0");
    is_int(n, 0, "k=0: no hits");

    /* filter */
    is_int(cn_bm25_search(idx, "apple", 10, no_doc3, &calls, hits, &n), 0, "search with filter");
    ok(n == 1 && hits[0].doc == 0, "filter removes doc 3");
    ok(calls >= 1 && calls <= 2, "filter called per candidate");
    is_int(cn_bm25_search(idx, "apple banana", 10, none, NULL, hits, &n), 0, "reject-all filter");
    is_int(n, 0, "reject-all filter: no hits");

    /* nothing to find is not an error */
    n = 99;
    is_int(cn_bm25_search(idx, "zebra", 10, NULL, NULL, hits, &n), 0, "unknown term: rc 0");
    is_int(n, 0, "unknown term: 0 hits");
    n = 99;
    is_int(cn_bm25_search(idx, "", 10, NULL, NULL, hits, &n), 0, "empty query: rc 0");
    is_int(n, 0, "empty query: 0 hits");
    n = 99;
    is_int(cn_bm25_search(idx, "+-*/ ()", 10, NULL, NULL, hits, &n), 0, "punctuation query");
    is_int(n, 0, "punctuation query: 0 hits");
    n = 99;
    is_int(cn_bm25_search(idx, NULL, 10, NULL, NULL, hits, &n), 0, "NULL query");
    is_int(n, 0, "NULL query: 0 hits");

    /* scratch: same answers, reusable */
    {
        cn_bm25_scratch *s = NULL;
        cn_bm25_hit h2[10];
        size_t n2 = 0;
        is_int(cn_bm25_scratch_new(&s), 0, "scratch");
        for (int round = 0; round < 2; round++) {
            cn_bm25_search(idx, "banana cherry", 10, NULL, NULL, hits, &n);
            is_int(cn_bm25_search_scratch(idx, s, "banana cherry", 10, NULL, NULL, h2, &n2), 0,
                   "search with scratch");
            ok(n == n2 && same_hits(hits, h2, n), "scratch gives the same hits");
            cn_bm25_search_scratch(idx, s, "apple", 10, NULL, NULL, h2, &n2);
            ok(n2 == 2 && h2[0].doc == 3 && fabs(h2[0].score - expect(1, 2, 1)) < 1e-9,
               "scratch left clean for the next query");
        }
        cn_bm25_scratch_free(s);
    }
    cn_bm25_close(idx);
    free(path);
}

static void test_builder_rules(void)
{
    cn_bm25_builder *bld = NULL;
    char *a = tmp_path("a.idx"), *b = tmp_path("b.idx"), *c = tmp_path("c.idx");
    char *big = tmp_path("big.idx"), *empty = tmp_path("empty.idx");
    cn_bm25 *idx = NULL;
    cn_bm25_hit hits[4];
    size_t n;

    is_int(cn_bm25_builder_new(-1, 0.5, &bld), CN_EINVAL, "negative k1 rejected");
    is_int(cn_bm25_builder_new(1.2, 1.5, &bld), CN_EINVAL, "b > 1 rejected");
    is_int(cn_bm25_builder_new(NAN, 0.5, &bld), CN_EINVAL, "NaN k1 rejected");

    is_int(cn_bm25_builder_new(1.2, 0.75, &bld), 0, "builder");
    is_int(add_str(bld, 3, "x"), 0, "doc 3");
    is_int(add_str(bld, 3, "y"), 0, "doc 3 again");
    is_int(add_str(bld, 2, "z"), CN_EINVAL, "doc 2 after doc 3 rejected");
    has_str(cn_error_last()->message, "non-decreasing", "out-of-order message says why");
    is_int(add_str(bld, UINT32_MAX, "z"), CN_EINVAL, "doc UINT32_MAX rejected");
    is_int(cn_bm25_write(bld, 3, a), CN_EINVAL, "n_docs not covering doc 3 rejected");
    is_int(cn_bm25_write(bld, 4, a), 0, "n_docs 4 written");
    cn_bm25_builder_free(bld);

    /* identical input, identical bytes: same builder twice, and a second
     * builder fed the same documents */
    is_int(build_corpus(K1, B, N_DOCS, b), 0, "corpus to b");
    bld = NULL;
    cn_bm25_builder_new(K1, B, &bld);
    add_str(bld, 0, "apple banana apple");
    add_str(bld, 1, "banana cherry");
    add_str(bld, 2, "cherry cherry cherry date");
    add_str(bld, 3, "apple");
    add_str(bld, 5, "date");
    add_str(bld, 5, "banana");
    add_str(bld, 6, "elder fig");
    add_str(bld, 7, "fig elder");
    is_int(cn_bm25_write(bld, N_DOCS, a), 0, "write a");
    is_int(cn_bm25_write(bld, N_DOCS, c), 0, "write c from the same builder");
    cn_bm25_builder_free(bld);
    ok(same_bytes(a, c), "writing twice gives identical bytes");
    ok(same_bytes(a, b), "a second build of the same input gives identical bytes");

    /* n_docs beyond the added documents */
    is_int(build_corpus(K1, B, 20, big), 0, "corpus with n_docs 20");
    is_int(cn_bm25_open(big, &idx), 0, "opens");
    if (idx != NULL) {
        is_int(cn_bm25_doc_count(idx), 20, "doc_count 20");
        ok(cn_bm25_avgdl(idx) == 16.0 / 20.0, "avgdl over all 20 docs");
        is_int(cn_bm25_doc_len(idx, 19), 0, "trailing doc empty");
        is_int(cn_bm25_search(idx, "fig", 4, NULL, NULL, hits, &n), 0, "search");
        ok(n == 2 && hits[0].doc == 6 && hits[1].doc == 7, "hits unchanged in order");
        cn_bm25_close(idx);
    }

    /* nothing at all */
    bld = NULL;
    cn_bm25_builder_new(0.9, 0.4, &bld);
    is_int(cn_bm25_write(bld, 0, empty), 0, "empty index written");
    cn_bm25_builder_free(bld);
    idx = NULL;
    is_int(cn_bm25_open(empty, &idx), 0, "empty index opens");
    if (idx != NULL) {
        ok(cn_bm25_doc_count(idx) == 0 && cn_bm25_term_count(idx) == 0 &&
               cn_bm25_avgdl(idx) == 0 && cn_bm25_k1(idx) == 0.9 && cn_bm25_b(idx) == 0.4,
           "empty index accessors");
        n = 9;
        is_int(cn_bm25_search(idx, "anything", 4, NULL, NULL, hits, &n), 0, "search empty index");
        is_int(n, 0, "no hits");
        cn_bm25_close(idx);
    }
    free(a);
    free(b);
    free(c);
    free(big);
    free(empty);
}

/* ---- damaged files -------------------------------------------------------- */

static void expect_open_error(const char *path, int code, const char *needle, const char *what)
{
    cn_bm25 *idx = (cn_bm25 *)1;
    int rc = cn_bm25_open(path, &idx);
    char w[200];

    snprintf(w, sizeof w, "%s: code", what);
    is_int(rc, code, w);
    ok(idx == NULL, what);
    snprintf(w, sizeof w, "%s: message names the path", what);
    has_str(cn_error_last()->message, path, w);
    if (needle != NULL) {
        snprintf(w, sizeof w, "%s: message says %s", what, needle);
        has_str(cn_error_last()->message, needle, w);
    }
    if (rc == 0) cn_bm25_close(idx);
}

/* A hand-built two-term, three-doc index whose parts a test can spoil
 * before writing: "alpha" in docs 0 (tf 2) and 2 (tf 1), "beta" in doc 1. */
typedef struct craft {
    unsigned char meta[CN_BM25_META_SIZE];
    uint32_t term_offs[3];
    char terms[9];
    uint64_t post_offs[3];
    uint32_t docs[3];
    uint8_t tfs[3];
    cn_bm25_tf_big big[1];
    size_t n_big;
    uint32_t doc_len[3];
    size_t meta_size;
    bool skip_meta;
} craft;

static void craft_init(craft *c)
{
    uint32_t n_docs = 3;
    uint64_t n_terms = 2, n_post = 3, total = 6;
    double k1 = 1.2, b = 0.75, avgdl = 2.0;
    static const uint32_t docs[3] = {0, 2, 1};
    static const uint8_t tfs[3] = {2, 1, 1};

    memset(c, 0, sizeof *c);
    memcpy(c->meta, &n_docs, 4);
    memcpy(c->meta + 8, &n_terms, 8);
    memcpy(c->meta + 16, &n_post, 8);
    memcpy(c->meta + 24, &total, 8);
    memcpy(c->meta + 32, &k1, 8);
    memcpy(c->meta + 40, &b, 8);
    memcpy(c->meta + 48, &avgdl, 8);
    c->meta_size = CN_BM25_META_SIZE;
    c->term_offs[0] = 0;
    c->term_offs[1] = 5;
    c->term_offs[2] = 9;
    memcpy(c->terms, "alphabeta", 9);
    c->post_offs[0] = 0;
    c->post_offs[1] = 2;
    c->post_offs[2] = 3;
    memcpy(c->docs, docs, sizeof docs);
    memcpy(c->tfs, tfs, sizeof tfs);
    c->doc_len[0] = 2;
    c->doc_len[1] = 1;
    c->doc_len[2] = 3;
}

static int craft_write(const craft *c, const char *path)
{
    cn_idx_writer *w = NULL;
    int rc = cn_idx_writer_new(CN_BM25_MAGIC, CN_BM25_VERSION, &w);

    if (rc == 0 && !c->skip_meta) rc = cn_idx_writer_add(w, CN_BM25_SEC_META, c->meta, c->meta_size);
    if (rc == 0) rc = cn_idx_writer_add(w, CN_BM25_SEC_TERM_OFFS, c->term_offs, sizeof c->term_offs);
    if (rc == 0) rc = cn_idx_writer_add(w, CN_BM25_SEC_TERMS, c->terms, sizeof c->terms);
    if (rc == 0) rc = cn_idx_writer_add(w, CN_BM25_SEC_POST_OFFS, c->post_offs, sizeof c->post_offs);
    if (rc == 0) rc = cn_idx_writer_add(w, CN_BM25_SEC_POSTINGS, c->docs, sizeof c->docs);
    if (rc == 0) rc = cn_idx_writer_add(w, CN_BM25_SEC_TFS, c->tfs, sizeof c->tfs);
    if (rc == 0 && c->n_big) rc = cn_idx_writer_add(w, CN_BM25_SEC_TF_BIG, c->big, c->n_big * sizeof *c->big);
    if (rc == 0) rc = cn_idx_writer_add(w, CN_BM25_SEC_DOC_LEN, c->doc_len, sizeof c->doc_len);
    if (rc == 0) rc = cn_idx_writer_write(w, path);
    cn_idx_writer_free(w);
    return rc;
}

static void test_crafted(void)
{
    char *path = tmp_path("craft.idx");
    craft c;
    cn_bm25 *idx = NULL;
    cn_bm25_hit hits[4];
    size_t n = 0;

    /* the control: the hand-built file is valid */
    craft_init(&c);
    is_int(craft_write(&c, path), 0, "crafted file written");
    is_int(cn_bm25_open(path, &idx), 0, "valid crafted file opens");
    if (idx != NULL) {
        is_int(cn_bm25_df(idx, "alpha"), 2, "crafted df alpha");
        cn_bm25_search(idx, "alpha", 4, NULL, NULL, hits, &n);
        ok(n == 2 && hits[0].doc == 0, "crafted search");
        cn_bm25_close(idx);
    }

    craft_init(&c);
    c.skip_meta = true;
    craft_write(&c, path);
    expect_open_error(path, CN_ECORRUPT, "META", "META missing");

    craft_init(&c);
    c.meta_size = 56;
    craft_write(&c, path);
    expect_open_error(path, CN_ECORRUPT, "META", "META short");

    craft_init(&c);
    memcpy(c.terms, "betaalpha", 9);
    c.term_offs[1] = 4;
    craft_write(&c, path);
    expect_open_error(path, CN_ECORRUPT, "sorted", "terms out of order");

    craft_init(&c);
    c.term_offs[1] = 12;
    craft_write(&c, path);
    expect_open_error(path, CN_ECORRUPT, "term", "term offset beyond TERMS");

    craft_init(&c);
    c.term_offs[2] = 8;
    craft_write(&c, path);
    expect_open_error(path, CN_ECORRUPT, "term offsets", "term offsets short of TERMS");

    craft_init(&c);
    c.post_offs[1] = 7;
    craft_write(&c, path);
    expect_open_error(path, CN_ECORRUPT, "posting offsets", "posting offset out of bounds");

    craft_init(&c);
    c.post_offs[1] = 0;
    craft_write(&c, path);
    expect_open_error(path, CN_ECORRUPT, "posting offsets", "term without postings");

    craft_init(&c);
    {
        uint64_t np = 4;
        memcpy(c.meta + 16, &np, 8);
    }
    craft_write(&c, path);
    expect_open_error(path, CN_ECORRUPT, "POSTINGS", "posting count disagrees with section");

    craft_init(&c);
    {
        uint32_t nd = 4;
        memcpy(c.meta, &nd, 4);
    }
    craft_write(&c, path);
    expect_open_error(path, CN_ECORRUPT, "DOC_LEN", "doc count disagrees with DOC_LEN");

    craft_init(&c);
    c.doc_len[2] = 4;
    craft_write(&c, path);
    expect_open_error(path, CN_ECORRUPT, "document lengths", "lengths do not add up");

    craft_init(&c);
    {
        double avgdl = 2.5;
        memcpy(c.meta + 48, &avgdl, 8);
    }
    craft_write(&c, path);
    expect_open_error(path, CN_ECORRUPT, "avgdl", "avgdl wrong");

    craft_init(&c);
    {
        double b = 2.0;
        memcpy(c.meta + 40, &b, 8);
    }
    craft_write(&c, path);
    expect_open_error(path, CN_ECORRUPT, "k1 or b", "b out of range");

    craft_init(&c);
    {
        uint64_t nt = UINT64_MAX;
        memcpy(c.meta + 8, &nt, 8);
    }
    craft_write(&c, path);
    expect_open_error(path, CN_ECORRUPT, "count", "absurd term count");

    /* Postings themselves are checked as they are read: a doc beyond
     * n_docs and a zero tf are skipped, not followed. */
    craft_init(&c);
    c.docs[0] = 1000000;
    c.tfs[2] = 0;
    craft_write(&c, path);
    idx = NULL;
    is_int(cn_bm25_open(path, &idx), 0, "file with bad postings opens");
    if (idx != NULL) {
        cn_bm25_search(idx, "alpha beta", 4, NULL, NULL, hits, &n);
        ok(n == 1 && hits[0].doc == 2, "bad postings skipped at search");
        cn_bm25_close(idx);
    }

    /* A frequency of 255 or more: marked in TFS, given in TF_BIG. */
    craft_init(&c);
    c.tfs[0] = 255;
    c.big[0] = (cn_bm25_tf_big){0, 300, 0};
    c.n_big = 1;
    craft_write(&c, path);
    idx = NULL;
    is_int(cn_bm25_open(path, &idx), 0, "a crafted file with a large frequency opens");
    if (idx != NULL) {
        cn_bm25__view v;
        cn_bm25__view_of(idx, &v);
        ok(cn_bm25__tf(&v, 0) == 300 && cn_bm25__tf(&v, 1) == 1, "... and reads it from TF_BIG");
        cn_bm25_close(idx);
    }
    c.tfs[0] = 2;
    craft_write(&c, path);
    expect_open_error(path, CN_ECORRUPT, "TF_BIG", "a TF_BIG entry for a posting not marked");
    c.tfs[0] = 255;
    c.big[0].tf = 7;
    craft_write(&c, path);
    expect_open_error(path, CN_ECORRUPT, "TF_BIG", "a TF_BIG entry under 255");
    c.big[0] = (cn_bm25_tf_big){3, 300, 0};
    craft_write(&c, path);
    expect_open_error(path, CN_ECORRUPT, "TF_BIG", "a TF_BIG entry beyond the postings");
    free(path);
}

/* Frequencies of 255 and more round-trip exactly, score as themselves,
 * and survive a merge (the kept blocks' entries move with them). */
static void test_big_tf(void)
{
    static const uint32_t tfs[8] = {300, 254, 255, 70000, 1, 0, 256, 2};
    char *path = tmp_path("big.idx"), *full = tmp_path("bigfull.idx"), *inc = tmp_path("biginc.idx");
    cn_bm25_builder *bld = NULL;
    cn_bm25 *idx = NULL;
    cn_bm25_hit hits[8];
    size_t n = 0;
    int good = 0;

    cn_bm25_builder_new(1.2, 0.75, &bld);
    for (uint32_t d = 0; d < 8; d++) {
        cn_bm25_add_term(bld, d, "zeta", 4, tfs[d]);
        cn_bm25_add_term(bld, d, "other", 5, 1 + d);
    }
    ok(cn_bm25_write(bld, 8, path) == 0 && cn_bm25_open(path, &idx) == 0, "an index with large frequencies");
    cn_bm25_builder_free(bld);
    if (idx == NULL) return;
    cn_bm25_search(idx, "zeta", 8, NULL, NULL, hits, &n);
    is_int(n, 7, "every document with the term is found");
    for (size_t i = 0; i < n; i++) {
        uint32_t d = hits[i].doc;
        double df = 7, dl = cn_bm25_doc_len(idx, d), avgdl = cn_bm25_avgdl(idx);
        double idf = log(1.0 + (8 - df + 0.5) / (df + 0.5));
        double want = idf * tfs[d] * 2.2 / (tfs[d] + 1.2 * (1 - 0.75 + 0.75 * dl / avgdl));
        good += d < 8 && fabs(hits[i].score - want) < 1e-9;
    }
    is_int(good, 7, "each scores with its exact frequency (254, 255, 256, 300, 70000 among them)");
    {
        cn_idx_file *f = NULL;
        size_t size = 0;
        if (cn_idx_open(path, CN_BM25_MAGIC, CN_BM25_VERSION, &f) == 0) cn_idx_section(f, CN_BM25_SEC_TF_BIG, 0, &size);
        is_int(size / sizeof(cn_bm25_tf_big), 4, "four of them are in TF_BIG");
        cn_idx_close(f);
    }
    /* doc 2 changed (its frequency now 1000), the others kept in place */
    {
        uint32_t remap[8] = {0, 1, UINT32_MAX, 3, 4, 5, 6, 7};
        cn_bm25_builder *fb = NULL, *ib = NULL;
        cn_bm25_builder_new(1.2, 0.75, &fb);
        cn_bm25_builder_new(1.2, 0.75, &ib);
        for (uint32_t d = 0; d < 8; d++) {
            uint32_t tf = d == 2 ? 1000 : tfs[d];
            cn_bm25_add_term(fb, d, "zeta", 4, tf);
            cn_bm25_add_term(fb, d, "other", 5, 1 + d);
        }
        cn_bm25_add_term(ib, 2, "zeta", 4, 1000);
        cn_bm25_add_term(ib, 2, "other", 5, 3);
        ok(cn_bm25_write(fb, 8, full) == 0 && cn_bm25_write_merged(ib, idx, remap, 8, inc) == 0 &&
               same_bytes(full, inc),
           "merged around large frequencies: the bytes of a full build");
        cn_bm25_builder_free(fb);
        cn_bm25_builder_free(ib);
    }
    cn_bm25_close(idx);
    free(path);
    free(full);
    free(inc);
}

static void test_damaged(void)
{
    char *good = tmp_path("good.idx"), *path = tmp_path("bad.idx");
    char *data = NULL;
    size_t len = 0;

    build_corpus(K1, B, N_DOCS, good);
    is_int(read_all(good, &data, &len), 0, "read the good file");
    if (data == NULL) return;

    data[len / 2] ^= 0x20;
    write_bytes(path, data, len);
    expect_open_error(path, CN_ECORRUPT, "checksum", "one flipped byte");
    data[len / 2] ^= 0x20;

    /* A file this process verified once is not hashed again while it is
     * the same (inode, size, mtime, ctime): a byte changed in place, even
     * with its mtime put back, changes the ctime and is caught. */
    {
        cn_bm25 *idx = NULL;
        struct stat st;
        int fd;
        char c;
        /* only a file a second old is known by its times */
        sleep(2);
        is_int(cn_bm25_open(good, &idx), 0, "verified once: opens");
        cn_bm25_close(idx);
        if ((fd = open(good, O_RDWR)) >= 0 && fstat(fd, &st) == 0) {
            struct timespec times[2] = {st.st_atim, st.st_mtim};
            c = (char)(data[len / 2] ^ 0x20);
            ok(pwrite(fd, &c, 1, (off_t)(len / 2)) == 1, "a byte changed in place");
            ok(futimens(fd, times) == 0, "... its mtime put back");
            close(fd);
            expect_open_error(good, CN_ECORRUPT, "checksum", "changed in place after a good open");
            if ((fd = open(good, O_RDWR)) >= 0) {
                c = data[len / 2];
                ok(pwrite(fd, &c, 1, (off_t)(len / 2)) == 1, "the byte put back");
                close(fd);
            }
            is_int(cn_bm25_open(good, &idx), 0, "put back: opens again");
            cn_bm25_close(idx);
            is_int(cn_bm25_open(good, &idx), 0, "and again, from what was verified");
            cn_bm25_close(idx);
        } else {
            ok(0, "open the good file for writing");
        }
    }

    write_bytes(path, data, len - 1);
    expect_open_error(path, CN_ECORRUPT, "truncated", "one byte short");

    write_bytes(path, data, 10);
    expect_open_error(path, CN_ECORRUPT, NULL, "only ten bytes");

    {
        cn_idx_writer *w = NULL;
        cn_idx_writer_new("CNOTHER\0", CN_BM25_VERSION, &w);
        cn_idx_writer_add(w, CN_BM25_SEC_META, data, 64);
        cn_idx_writer_write(w, path);
        cn_idx_writer_free(w);
        expect_open_error(path, CN_ECORRUPT, "magic", "wrong magic");

        w = NULL;
        cn_idx_writer_new(CN_BM25_MAGIC, CN_BM25_VERSION + 1, &w);
        cn_idx_writer_add(w, CN_BM25_SEC_META, data, 64);
        cn_idx_writer_write(w, path);
        cn_idx_writer_free(w);
        expect_open_error(path, CN_EUNSUPPORTED, NULL, "another format version");
    }
    unlink(path);
    expect_open_error(path, CN_ENOTFOUND, NULL, "missing file");
    free(data);
    free(good);
    free(path);
}

/* ---- randomized comparison with a brute-force scorer ---------------------- */

#define R_DOCS 2000

static const char *vocab[] = {
    "alpha", "beta", "gamma", "delta", "parse", "json", "value", "getUser", "user_id",
    "HTTPServer", "read", "write", "file", "path", "open", "close", "index", "token",
    "utf8Decode", "v2", "x", "err", "buf", "len", "size", "node", "tree", "walk",
    "parseJSONValue", "get_user_id", "init", "__init__", "self", "return", "rare1", "rare2",
};
#define N_VOCAB (sizeof vocab / sizeof vocab[0])

static int push_tok(const char *tok, size_t len, void *data)
{
    return cn_strv_push_owned(data, cn_strndup(tok, len));
}

typedef struct ref_hit {
    uint32_t doc;
    double score;
} ref_hit;

static int cmp_ref(const void *pa, const void *pb)
{
    const ref_hit *a = pa, *b = pb;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    return (a->doc > b->doc) - (a->doc < b->doc);
}

static bool even_only(uint32_t doc, void *data)
{
    (void)data;
    return doc % 2 == 0;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

/* Top hits by the formula, computed document by document in the same
 * operation order as the index (query tokens left to right). */
static size_t brute_force(cn_strv *docs, uint32_t n_docs, double k1, double b, cn_strv *q,
                          cn_bm25_filter filter, ref_hit *out)
{
    uint64_t total = 0;
    double avgdl;
    size_t n = 0;
    uint32_t *df = calloc(q->len ? q->len : 1, sizeof *df);

    for (uint32_t d = 0; d < n_docs; d++) total += docs[d].len;
    avgdl = (double)total / n_docs;
    for (size_t t = 0; t < q->len; t++)
        for (uint32_t d = 0; d < n_docs; d++)
            if (cn_strv_contains(&docs[d], q->items[t])) df[t]++;
    for (uint32_t d = 0; d < n_docs; d++) {
        double score = 0, dl = (double)docs[d].len;
        double norm = k1 * (1.0 - b + b * dl / avgdl);
        for (size_t t = 0; t < q->len; t++) {
            double tf = 0, idf;
            for (size_t i = 0; i < docs[d].len; i++)
                if (strcmp(docs[d].items[i], q->items[t]) == 0) tf++;
            if (tf == 0) continue;
            idf = log(1.0 + ((double)n_docs - df[t] + 0.5) / (df[t] + 0.5));
            score += idf * (tf * (k1 + 1.0)) / (tf + norm);
        }
        if (score > 0 && (filter == NULL || filter(d, NULL))) {
            out[n].doc = d;
            out[n].score = score;
            n++;
        }
    }
    free(df);
    qsort(out, n, sizeof *out, cmp_ref);
    return n;
}

static void test_random(void)
{
    char *path = tmp_path("random.idx");
    cn_strv *docs = calloc(R_DOCS, sizeof *docs);
    ref_hit *ref = malloc(R_DOCS * sizeof *ref);
    cn_bm25_builder *bld = NULL;
    cn_bm25 *idx = NULL;
    cn_bm25_scratch *s = NULL;
    int mismatches = 0, compared = 0, nonempty = 0;
    double k1 = 1.5, b = 0.6;

    cn_bm25_builder_new(k1, b, &bld);
    for (uint32_t d = 0; d < R_DOCS; d++) {
        uint32_t calls = rnd(10) == 0 ? 0 : 1 + rnd(2);  /* some docs never added */
        for (uint32_t c = 0; c < calls; c++) {
            cn_buf text = CN_BUF_INIT;
            uint32_t words = rnd(12);
            for (uint32_t w = 0; w < words; w++) {
                /* skewed: the first words are common, the "rare" ones rare */
                uint32_t v = rnd(4) == 0 ? rnd(N_VOCAB) : rnd(8);
                cn_buf_printf(&text, "%s%s", w ? (rnd(3) ? " " : "(") : "", vocab[v]);
            }
            cn_bm25_add(bld, d, text.data ? text.data : "", text.len);
            cn_tokenize(text.data, text.len, push_tok, &docs[d]);
            cn_buf_free(&text);
        }
    }
    is_int(cn_bm25_write(bld, R_DOCS, path), 0, "random corpus written");
    cn_bm25_builder_free(bld);
    is_int(cn_bm25_open(path, &idx), 0, "random corpus opens");
    cn_bm25_scratch_new(&s);
    for (int qi = 0; idx != NULL && qi < 300; qi++) {
        cn_buf qt = CN_BUF_INIT;
        cn_strv q = CN_STRV_INIT;
        uint32_t words = 1 + rnd(4);
        cn_bm25_hit hits[10], hits2[10];
        size_t n = 0, n2 = 0, nref;
        cn_bm25_filter filter = qi % 5 == 4 ? even_only : NULL;

        for (uint32_t w = 0; w < words; w++)
            cn_buf_printf(&qt, "%s%s", w ? " " : "", rnd(10) ? vocab[rnd(N_VOCAB)] : "nosuchword");
        cn_tokenize(qt.data, qt.len, push_tok, &q);
        nref = brute_force(docs, R_DOCS, k1, b, &q, filter, ref);
        cn_bm25_search(idx, qt.data, 10, filter, NULL, hits, &n);
        cn_bm25_search_scratch(idx, s, qt.data, 10, filter, NULL, hits2, &n2);
        compared++;
        if (n > 0) nonempty++;
        if (n != (nref < 10 ? nref : 10) || n2 != n ||
            !same_hits(hits, hits2, n)) {
            mismatches++;
            diag("query \"%s\": %zu hits, scratch %zu, reference %zu", qt.data, n, n2, nref);
        } else {
            for (size_t i = 0; i < n; i++) {
                if (hits[i].doc != ref[i].doc || fabs(hits[i].score - ref[i].score) > 1e-9) {
                    mismatches++;
                    diag("query \"%s\" rank %zu: doc %u %.17g, reference doc %u %.17g", qt.data,
                         i, hits[i].doc, hits[i].score, ref[i].doc, ref[i].score);
                    break;
                }
            }
        }
        cn_buf_free(&qt);
        cn_strv_free(&q);
    }
    is_int(compared, 300, "300 random queries compared");
    ok(nonempty > 200, "most random queries have hits");
    is_int(mismatches, 0, "top-10 equals the brute-force scorer");
    cn_bm25_scratch_free(s);
    cn_bm25_close(idx);
    for (uint32_t d = 0; d < R_DOCS; d++) cn_strv_free(&docs[d]);
    free(docs);
    free(ref);
    free(path);
}

/* Incremental writes: an old corpus, then a new one made of some of its
 * documents (kept, renumbered), changed and inserted ones; merging the old
 * index with a builder of only the new documents must give the bytes of a
 * full build of the new corpus. */
static char *random_text(void)
{
    cn_buf t = CN_BUF_INIT;
    uint32_t words = rnd(10);
    for (uint32_t w = 0; w < words; w++)
        cn_buf_printf(&t, "%s%s", w ? " " : "", vocab[rnd(4) == 0 ? rnd(N_VOCAB) : rnd(8)]);
    if (rnd(20) == 0) {   /* a frequency about TFS's limit: 250-269 */
        const char *word = vocab[rnd(8)];
        for (uint32_t k = 250 + rnd(20); k > 0; k--) cn_buf_printf(&t, " %s", word);
    }
    return t.data ? cn_buf_steal(&t) : strdup("");
}

static void test_merged(void)
{
    char *old_path = tmp_path("old.idx"), *full_path = tmp_path("full.idx"), *inc_path = tmp_path("inc.idx");
    int same = 0, rounds = 40;
    for (int round = 0; round < rounds; round++) {
        /* even rounds are large enough for posting lists long enough to be
         * merged by runs of kept documents */
        uint32_t n_old = round % 2 ? 1 + rnd(60) : 200 + rnd(200), n_new = 0, remap[400], kept = 0;
        char *old_docs[400], *new_docs[800];
        bool is_new[800];
        cn_bm25_builder *ob = NULL, *fb = NULL, *ib = NULL;
        cn_bm25 *old = NULL;
        for (uint32_t d = 0; d < n_old; d++) old_docs[d] = rnd(8) ? random_text() : NULL;   /* some never added */
        for (uint32_t d = 0; d < n_old; d++) {
            /* even rounds: a few edits (a handful of runs of kept
             * documents: the merge copies blocks); odd: many (it goes
             * posting by posting) */
            uint32_t what = round % 2 ? rnd(6) : rnd(40);
            /* every fourth: documents changed in place only, so no number
             * moves and the kept blocks are written from the old index */
            if (round % 4 == 2 && what < 2) what = 2;
            if (what == 0) {            /* inserted before it */
                new_docs[n_new] = random_text();
                is_new[n_new++] = true;
            }
            if (what == 1) {            /* removed */
                remap[d] = UINT32_MAX;
            } else if (what == 2) {     /* changed */
                remap[d] = UINT32_MAX;
                new_docs[n_new] = random_text();
                is_new[n_new++] = true;
            } else {                    /* kept */
                remap[d] = n_new;
                new_docs[n_new] = old_docs[d] ? strdup(old_docs[d]) : NULL;
                is_new[n_new++] = false;
                kept++;
            }
        }
        cn_bm25_builder_new(1.2, 0.75, &ob);
        cn_bm25_builder_new(1.2, 0.75, &fb);
        cn_bm25_builder_new(1.2, 0.75, &ib);
        for (uint32_t d = 0; d < n_old; d++)
            if (old_docs[d]) add_str(ob, d, old_docs[d]);
        for (uint32_t d = 0; d < n_new; d++)
            if (new_docs[d]) {
                add_str(fb, d, new_docs[d]);
                if (is_new[d]) add_str(ib, d, new_docs[d]);
            }
        if (cn_bm25_write(ob, n_old, old_path) == 0 && cn_bm25_open(old_path, &old) == 0 &&
            cn_bm25_write(fb, n_new, full_path) == 0 && cn_bm25_write_merged(ib, old, remap, n_new, inc_path) == 0 &&
            same_bytes(full_path, inc_path))
            same++;
        else
            diag("round %d: %u old documents, %u new, %u kept: the merged index differs", round, n_old, n_new, kept);
        if (round == 0) {
            cn_bm25_builder *other = NULL;
            cn_bm25_builder_new(1.5, 0.75, &other);
            is_int(cn_bm25_write_merged(other, old, remap, n_new, inc_path), CN_EINVAL,
                   "merged: another k1 than the old index's is refused");
            cn_bm25_builder_free(other);
            if (kept > 0) {
                cn_bm25_builder *clash = NULL;
                uint32_t d = 0;
                while (remap[d] == UINT32_MAX || old_docs[d] == NULL) d = (d + 1) % n_old;
                cn_bm25_builder_new(1.2, 0.75, &clash);
                add_str(clash, remap[d], old_docs[d]);
                is_int(cn_bm25_write_merged(clash, old, remap, n_new, inc_path), CN_ECORRUPT,
                       "merged: a new document that is also a kept one is refused");
                cn_bm25_builder_free(clash);
            }
        }
        cn_bm25_close(old);
        cn_bm25_builder_free(ob);
        cn_bm25_builder_free(fb);
        cn_bm25_builder_free(ib);
        for (uint32_t d = 0; d < n_old; d++) free(old_docs[d]);
        for (uint32_t d = 0; d < n_new; d++) free(new_docs[d]);
    }
    is_int(same, rounds, "merged: 40 random incremental writes, few edits and many, equal full builds, byte for byte");
    free(old_path);
    free(full_path);
    free(inc_path);
}

/* The checksum in pieces equals the checksum in one go (the index writer
 * streams sections through it). */
static void test_hash_stream(void)
{
    unsigned char data[1000];
    int same = 0, tries = 200;
    for (size_t i = 0; i < sizeof data; i++) data[i] = (unsigned char)rnd(256);
    for (int t = 0; t < tries; t++) {
        size_t len = rnd(sizeof data + 1), off = 0;
        uint64_t seed = rnd(1000);
        cn_hash64_state st;
        cn_hash64_init(&st, seed);
        while (off < len) {
            size_t piece = rnd(3) == 0 ? 0 : 1 + rnd(70);
            if (piece > len - off) piece = len - off;
            cn_hash64_update(&st, data + off, piece);
            off += piece;
        }
        same += cn_hash64_final(&st) == cn_hash64(data, len, seed);
    }
    is_int(same, tries, "streamed checksums equal one-go checksums");
}

int main(void)
{
    strcpy(tmpdir, "/tmp/cn_bm25_test_XXXXXX");
    if (mkdtemp(tmpdir) == NULL) {
        ok(0, "mkdtemp");
        return tap_done();
    }
    test_scores();
    test_builder_rules();
    test_crafted();
    test_damaged();
    test_random();
    test_merged();
    test_big_tf();
    test_hash_stream();
    remove_tmpdir();
    return tap_done();
}

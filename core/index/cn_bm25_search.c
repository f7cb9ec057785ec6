/* SPDX-License-Identifier: Apache-2.0 */
/* BM25 index reader and top-k search (API in cn_bm25.h, layout in
 * cn_bm25_build.c).
 *
 * Safety: cn_bm25_open checks every offset table against its section
 * sizes, so a term's posting range is always inside POSTINGS and TFS,
 * and TF_BIG's entries are in order and in bounds; the only value search
 * still trusts nothing about is each posting's doc (checked against n_docs
 * before use) and tf (0 is skipped).  A file that passes
 * the checksum but was crafted badly therefore yields wrong scores at
 * worst, never an out-of-bounds read. */
#include "cn_bm25.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn_idxfile.h"
#include "cn_tokenize.h"

struct cn_bm25 {
    cn_idx_file *file;
    uint32_t n_docs;
    size_t n_terms;
    uint64_t n_postings;
    double k1, b, avgdl;
    const uint32_t *term_offs;   /* n_terms + 1 */
    const unsigned char *terms;
    const uint64_t *post_offs;   /* n_terms + 1 */
    const uint32_t *postings;    /* n_postings documents */
    const uint8_t *tfs;          /* n_postings frequencies, CN_BM25_TF_BIG: in tf_big */
    const cn_bm25_tf_big *tf_big;
    size_t n_tf_big;
    const uint32_t *doc_len;     /* n_docs */
    double *norm;                /* per doc: k1 * (1 - b + b * dl / avgdl) */
};

struct cn_bm25_scratch {
    double *score;      /* all zero between searches */
    uint32_t *touched;  /* docs whose score is non-zero during a search */
    size_t cap;
};

static int corrupt(const char *path, const char *what)
{
    return cn_error_set(CN_ECORRUPT,
                        "%s: corrupt BM25 index (%s); recompile with `codenib compile --rebuild`",
                        path, what);
}

static uint32_t get32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static double getf64(const unsigned char *p) { double v; memcpy(&v, p, 8); return v; }

/* Posting p's term frequency: in tfs, or in big (by posting) when marked
 * so.  Out of line: the search loop's rare path. */
static size_t big_from(const cn_bm25_tf_big *big, size_t n_big, uint64_t p)
{
    size_t lo = 0, hi = n_big;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (big[mid].at < p) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

__attribute__((noinline)) static uint32_t tf_at(const uint8_t *tfs, const cn_bm25_tf_big *big, size_t n_big, uint64_t p)
{
    size_t i;
    if (tfs[p] < CN_BM25_TF_BIG) return tfs[p];
    i = big_from(big, n_big, p);
    /* every marked posting has an entry (checked at open) */
    return i < n_big && big[i].at == p ? big[i].tf : CN_BM25_TF_BIG;
}

/* Bytewise order with a prefix first; the builder sorts the same way. */
static int term_cmp(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c != 0) return c;
    return (alen > blen) - (alen < blen);
}

/* Fetches a section that must exist with exactly `want` bytes. */
static const void *section_exact(cn_idx_file *f, uint32_t id, const char *name, uint64_t want,
                                 int *rc)
{
    size_t size;
    const void *p = cn_idx_section(f, id, 0, &size);
    char what[160];

    if (*rc != 0) return NULL;
    if (p == NULL) {
        snprintf(what, sizeof what, "%s section missing", name);
        *rc = corrupt(cn_idx_path(f), what);
        return NULL;
    }
    if ((uint64_t)size != want) {
        snprintf(what, sizeof what, "%s section is %zu bytes, expected %llu", name, size,
                 (unsigned long long)want);
        *rc = corrupt(cn_idx_path(f), what);
        return NULL;
    }
    return p;
}

/* The format's own consistency, beyond what the container checks. */
static int validate(cn_bm25 *idx)
{
    cn_idx_file *f = idx->file;
    const char *path = cn_idx_path(f);
    const unsigned char *meta;
    size_t terms_size;
    uint64_t total = 0, n_terms;
    char what[200];
    int rc = 0;

    meta = section_exact(f, CN_BM25_SEC_META, "META", CN_BM25_META_SIZE, &rc);
    if (rc < 0) return rc;
    idx->n_docs = get32(meta);
    n_terms = get64(meta + 8);
    idx->n_postings = get64(meta + 16);
    idx->k1 = getf64(meta + 32);
    idx->b = getf64(meta + 40);
    idx->avgdl = getf64(meta + 48);
    if (!isfinite(idx->k1) || idx->k1 < 0 || !isfinite(idx->b) || idx->b < 0 || idx->b > 1)
        return corrupt(path, "k1 or b out of range");
    /* Bounding the counts first keeps the size products below from
     * overflowing. */
    if (n_terms >= SIZE_MAX / 16 || idx->n_postings >= SIZE_MAX / 16)
        return corrupt(path, "term or posting count out of range");
    idx->n_terms = (size_t)n_terms;

    idx->doc_len = section_exact(f, CN_BM25_SEC_DOC_LEN, "DOC_LEN", (uint64_t)idx->n_docs * 4, &rc);
    idx->term_offs = section_exact(f, CN_BM25_SEC_TERM_OFFS, "TERM_OFFS", (n_terms + 1) * 4, &rc);
    idx->post_offs = section_exact(f, CN_BM25_SEC_POST_OFFS, "POST_OFFS", (n_terms + 1) * 8, &rc);
    idx->postings = section_exact(f, CN_BM25_SEC_POSTINGS, "POSTINGS", idx->n_postings * 4, &rc);
    idx->tfs = section_exact(f, CN_BM25_SEC_TFS, "TFS", idx->n_postings, &rc);
    if (rc < 0) return rc;
    {
        size_t big_size;
        idx->tf_big = cn_idx_section(f, CN_BM25_SEC_TF_BIG, sizeof *idx->tf_big, &big_size);
        if (idx->tf_big == NULL && big_size != 0) return corrupt(path, "TF_BIG section size");
        idx->n_tf_big = big_size / sizeof *idx->tf_big;
        for (size_t i = 0; i < idx->n_tf_big; i++) {
            const cn_bm25_tf_big *x = &idx->tf_big[i];
            if (x->at >= idx->n_postings || (i > 0 && x->at <= idx->tf_big[i - 1].at) ||
                x->tf < CN_BM25_TF_BIG || idx->tfs[x->at] != CN_BM25_TF_BIG)
                return corrupt(path, "TF_BIG entries out of order, out of bounds or not marked in TFS");
        }
    }
    idx->terms = cn_idx_section(f, CN_BM25_SEC_TERMS, 0, &terms_size);
    if (idx->terms == NULL) return corrupt(path, "TERMS section missing");

    if (idx->term_offs[0] != 0 || idx->term_offs[n_terms] != terms_size)
        return corrupt(path, "term offsets do not span the TERMS section");
    if (idx->post_offs[0] != 0 || idx->post_offs[n_terms] != idx->n_postings)
        return corrupt(path, "posting offsets do not span the POSTINGS section");
    for (size_t i = 0; i < idx->n_terms; i++) {
        uint32_t a = idx->term_offs[i], e = idx->term_offs[i + 1];
        uint64_t pa = idx->post_offs[i], pe = idx->post_offs[i + 1];
        if (e <= a || e > terms_size) {
            snprintf(what, sizeof what, "term %zu: offsets not increasing or out of bounds", i);
            return corrupt(path, what);
        }
        if (i > 0) {
            uint32_t pa0 = idx->term_offs[i - 1];
            if (term_cmp(idx->terms + pa0, a - pa0, idx->terms + a, e - a) >= 0) {
                snprintf(what, sizeof what, "term %zu: terms not sorted or duplicated", i);
                return corrupt(path, what);
            }
        }
        if (pe <= pa || pe > idx->n_postings || pe - pa > idx->n_docs) {
            snprintf(what, sizeof what,
                     "term %zu: posting offsets not increasing, out of bounds or df > n_docs", i);
            return corrupt(path, what);
        }
    }
    for (uint32_t d = 0; d < idx->n_docs; d++) total += idx->doc_len[d];
    if (total != get64(meta + 24))
        return corrupt(path, "document lengths do not add up to the recorded total");
    {
        double avgdl = idx->n_docs ? (double)total / (double)idx->n_docs : 0.0;
        if (avgdl != idx->avgdl) return corrupt(path, "avgdl disagrees with the document lengths");
    }
    return 0;
}

int cn_bm25_open(const char *path, cn_bm25 **out)
{
    cn_bm25 *idx;
    int rc;

    *out = NULL;
    idx = calloc(1, sizeof *idx);
    if (idx == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    rc = cn_idx_open(path, CN_BM25_MAGIC, CN_BM25_VERSION, &idx->file);
    if (rc == 0) rc = validate(idx);
    if (rc == 0 && idx->n_docs > 0) {
        /* The length normalisation depends only on the document, so it is
         * computed once here instead of once per posting per query. */
        idx->norm = malloc((size_t)idx->n_docs * sizeof *idx->norm);
        if (idx->norm == NULL) {
            rc = cn_error_set(CN_ENOMEM, "%s: out of memory", path);
        } else {
            for (uint32_t d = 0; d < idx->n_docs; d++) {
                double dl = (double)idx->doc_len[d];
                /* avgdl is 0 only when every document is empty, and then
                 * no posting exists to use the value. */
                idx->norm[d] = idx->avgdl > 0 ? idx->k1 * (1.0 - idx->b + idx->b * dl / idx->avgdl)
                                              : idx->k1 * (1.0 - idx->b);
            }
        }
    }
    if (rc < 0) {
        cn_bm25_close(idx);
        return rc;
    }
    *out = idx;
    return 0;
}

void cn_bm25_close(cn_bm25 *idx)
{
    if (idx == NULL) return;
    cn_idx_close(idx->file);
    free(idx->norm);
    free(idx);
}

uint32_t cn_bm25_doc_count(const cn_bm25 *idx) { return idx->n_docs; }
double cn_bm25_k1(const cn_bm25 *idx) { return idx->k1; }
double cn_bm25_b(const cn_bm25 *idx) { return idx->b; }
double cn_bm25_avgdl(const cn_bm25 *idx) { return idx->avgdl; }
size_t cn_bm25_term_count(const cn_bm25 *idx) { return idx->n_terms; }

void cn_bm25__view_of(const cn_bm25 *idx, cn_bm25__view *v)
{
    v->n_docs = idx->n_docs;
    v->n_terms = idx->n_terms;
    v->k1 = idx->k1;
    v->b = idx->b;
    v->term_offs = idx->term_offs;
    v->terms = idx->terms;
    v->post_offs = idx->post_offs;
    v->postings = idx->postings;
    v->tfs = idx->tfs;
    v->tf_big = idx->tf_big;
    v->n_tf_big = idx->n_tf_big;
    v->doc_len = idx->doc_len;
}

uint32_t cn_bm25__tf(const cn_bm25__view *v, uint64_t p)
{
    return tf_at(v->tfs, v->tf_big, v->n_tf_big, p);
}

size_t cn_bm25__big_from(const cn_bm25__view *v, uint64_t p)
{
    return big_from(v->tf_big, v->n_tf_big, p);
}

uint32_t cn_bm25_doc_len(const cn_bm25 *idx, uint32_t doc)
{
    return doc < idx->n_docs ? idx->doc_len[doc] : 0;
}

/* Index of the term, or SIZE_MAX. */
static size_t find_term(const cn_bm25 *idx, const char *s, size_t len)
{
    size_t lo = 0, hi = idx->n_terms;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t a = idx->term_offs[mid], e = idx->term_offs[mid + 1];
        int c = term_cmp(idx->terms + a, e - a, (const unsigned char *)s, len);
        if (c == 0) return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return SIZE_MAX;
}

bool cn_bm25__term_range(const cn_bm25 *idx, const char *term, size_t len, uint64_t *lo, uint64_t *hi)
{
    size_t t = find_term(idx, term, len);
    if (t == SIZE_MAX) return false;
    *lo = idx->post_offs[t];
    *hi = idx->post_offs[t + 1];
    return true;
}

uint32_t cn_bm25_df(const cn_bm25 *idx, const char *term)
{
    size_t t;

    if (term == NULL) return 0;
    t = find_term(idx, term, strlen(term));
    if (t == SIZE_MAX) return 0;
    return (uint32_t)(idx->post_offs[t + 1] - idx->post_offs[t]);
}

int cn_bm25_scratch_new(cn_bm25_scratch **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : cn_error_set(CN_ENOMEM, "out of memory");
}

void cn_bm25_scratch_free(cn_bm25_scratch *s)
{
    if (s == NULL) return;
    free(s->score);
    free(s->touched);
    free(s);
}

static int scratch_reserve(cn_bm25_scratch *s, size_t n)
{
    double *score;
    uint32_t *touched;

    if (s->cap >= n) return 0;
    score = calloc(n, sizeof *score);
    touched = malloc(n * sizeof *touched);
    if (score == NULL || touched == NULL) {
        free(score);
        free(touched);
        return cn_error_set(CN_ENOMEM, "bm25: out of memory (search scratch)");
    }
    free(s->score);
    free(s->touched);
    s->score = score;
    s->touched = touched;
    s->cap = n;
    return 0;
}

typedef struct query_ctx {
    const cn_bm25 *idx;
    cn_bm25_scratch *s;
    size_t n_touched;
} query_ctx;

/* Term-at-a-time accumulation: one tight pass over each query token's
 * postings into the dense score array. */
static int query_token(const char *tok, size_t len, void *data)
{
    query_ctx *q = data;
    const cn_bm25 *idx = q->idx;
    double *score = q->s->score;
    uint32_t *touched = q->s->touched;
    size_t t = find_term(idx, tok, len), n_touched = q->n_touched;
    uint64_t lo, hi;
    double df, idf, k1p1 = idx->k1 + 1.0;
    uint32_t n_docs = idx->n_docs;

    if (t == SIZE_MAX) return 0;
    lo = idx->post_offs[t];
    hi = idx->post_offs[t + 1];
    df = (double)(hi - lo);
    idf = log(1.0 + ((double)n_docs - df + 0.5) / (df + 0.5));
    for (uint64_t p = lo; p < hi; p++) {
        uint32_t doc = idx->postings[p], tfi = idx->tfs[p];
        double tf, w;
        if (doc >= n_docs || tfi == 0) continue;
        if (__builtin_expect(tfi == CN_BM25_TF_BIG, 0)) tfi = tf_at(idx->tfs, idx->tf_big, idx->n_tf_big, p);
        tf = (double)tfi;
        w = idf * (tf * k1p1) / (tf + idx->norm[doc]);
        /* Only positive weights, so a zero score reliably means "not yet
         * touched" and the touched list holds each doc at most once (it
         * has room for n_docs). */
        if (!(w > 0)) continue;
        if (score[doc] == 0) touched[n_touched++] = doc;
        score[doc] += w;
    }
    q->n_touched = n_touched;
    return 0;
}

/* Heap order: a is worse than b (lower score, or equal score and higher
 * doc).  The heap keeps the worst of the current top k at the root. */
static inline int worse(const cn_bm25_hit *a, const cn_bm25_hit *b)
{
    return a->score < b->score || (a->score == b->score && a->doc > b->doc);
}

static void sift_down(cn_bm25_hit *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        cn_bm25_hit tmp;
        if (l < n && worse(&h[l], &h[m])) m = l;
        if (r < n && worse(&h[r], &h[m])) m = r;
        if (m == i) return;
        tmp = h[i];
        h[i] = h[m];
        h[m] = tmp;
        i = m;
    }
}

static void sift_up(cn_bm25_hit *h, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        cn_bm25_hit tmp;
        if (!worse(&h[i], &h[p])) return;
        tmp = h[i];
        h[i] = h[p];
        h[p] = tmp;
        i = p;
    }
}

int cn_bm25_search_scratch(const cn_bm25 *idx, cn_bm25_scratch *s, const char *query, size_t k,
                           cn_bm25_filter filter, void *fdata, cn_bm25_hit *hits,
                           size_t *n_hits)
{
    query_ctx q;
    size_t n = 0;
    int rc;

    *n_hits = 0;
    if (query == NULL || k == 0 || idx->n_docs == 0 || idx->n_terms == 0) return 0;
    rc = scratch_reserve(s, idx->n_docs);
    if (rc < 0) return rc;
    q.idx = idx;
    q.s = s;
    q.n_touched = 0;
    cn_tokenize(query, strlen(query), query_token, &q);

    for (size_t i = 0; i < q.n_touched; i++) {
        cn_bm25_hit c;
        c.doc = s->touched[i];
        c.score = s->score[c.doc];
        s->score[c.doc] = 0;  /* restores the all-zero invariant as we go */
        /* The filter is consulted only for a doc that would enter the top
         * k, which keeps an expensive filter off the long tail. */
        if (n == k && !worse(&hits[0], &c)) continue;
        if (filter != NULL && !filter(c.doc, fdata)) continue;
        if (n < k) {
            hits[n] = c;
            sift_up(hits, n++);
        } else {
            hits[0] = c;
            sift_down(hits, n, 0);
        }
    }
    /* Heap-sort in place: repeatedly move the worst to the end, which
     * leaves the array best first. */
    for (size_t m = n; m > 1; m--) {
        cn_bm25_hit tmp = hits[0];
        hits[0] = hits[m - 1];
        hits[m - 1] = tmp;
        sift_down(hits, m - 1, 0);
    }
    *n_hits = n;
    return 0;
}

int cn_bm25_search(const cn_bm25 *idx, const char *query, size_t k, cn_bm25_filter filter,
                   void *fdata, cn_bm25_hit *hits, size_t *n_hits)
{
    cn_bm25_scratch s = {NULL, NULL, 0};
    int rc;

    *n_hits = 0;
    if (query == NULL || k == 0 || idx->n_docs == 0 || idx->n_terms == 0) return 0;
    rc = cn_bm25_search_scratch(idx, &s, query, k, filter, fdata, hits, n_hits);
    free(s.score);
    free(s.touched);
    return rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* Latent semantic analysis for embed-local (see cn_lsa.h).
 *
 * fit():
 *   1. one tokenizing pass interns every token and records, per document,
 *      its distinct terms with their counts, and each term's document
 *      frequency (df);
 *   2. the vocabulary keeps terms with min_df <= df <= max_df_ratio * N,
 *      the max_terms most frequent of them, sorted by their bytes;
 *   3. A (CSR, float): (1 + ln tf) * idf per cell, rows L2-normalised,
 *      idf = ln((1 + N) / (1 + df)) + 1; and its transpose;
 *   4. randomized SVD: Y = A Omega (Omega: l = dim + 10 random columns),
 *      q times (Z = A^T Q, Y = A Z), each product re-orthonormalised
 *      (Cholesky QR, or SVQB when columns are nearly dependent); then
 *      Z = A^T Q = B^T, Z = Q2 R, and the SVD of the small R by one-sided
 *      Jacobi gives V = Q2 U_R and S;
 *   5. the projection V S^-1 and the idf, as floats.
 *
 * Dense matrices are row-major doubles whose rows are padded with zeros to
 * a multiple of 8, and every inner loop runs over whole blocks of 8: gcc -O2
 * vectorises a loop only when no scalar remainder is left over.
 *
 * Parallel work is cut into items whose results do not depend on which
 * thread computes them or in which order (a row of a product, a fixed
 * slice of a Gram matrix summed in slice order), so the model is the same
 * for any thread count. */
#include "cn_lsa.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn_bytes.h"

#define NO_COL UINT32_MAX

#if defined(__GNUC__)
#define LSA_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LSA_PRINTF(a, b)
#endif

static int lsa_fail(cn_error *err, int code, const char *fmt, ...) LSA_PRINTF(3, 4);
static int lsa_fail(cn_error *err, int code, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        err->code = code;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

static int oom(cn_error *err, const char *what)
{
    return lsa_fail(err, CN_ENOMEM, "embed-local: out of memory (%s)", what);
}

/* ---- hashing ----------------------------------------------------------- */

static uint64_t term_hash(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Each step is a bijection of the word for a fixed state and of the state
 * for a fixed word, so changing any one word always changes the result. */
static uint64_t mix_word(uint64_t h, uint64_t w)
{
    return cn_rotl64(h ^ (w * 0x9e3779b97f4a7c15ull), 29) * 0xbf58476d1ce4e5b9ull;
}

uint64_t cn_lsa_checksum(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    size_t i = 0;

    for (; i + 8 <= len; i += 8) {
        uint64_t w = 0;
        for (int b = 0; b < 8; b++) w |= (uint64_t)p[i + (size_t)b] << (8 * b);
        h = mix_word(h, w);
    }
    if (i < len) {
        uint64_t w = 0;
        for (int b = 0; i + (size_t)b < len; b++) w |= (uint64_t)p[i + (size_t)b] << (8 * b);
        h = mix_word(h, w ^ ((uint64_t)(len - i) << 56));
    }
    return mix_word(h, (uint64_t)len);
}

/* ---- threads ----------------------------------------------------------- */

typedef void (*par_fn)(void *ctx, size_t begin, size_t end);

typedef struct par_job {
    par_fn fn;
    void *ctx;
    size_t n, chunk;
    atomic_size_t next;
} par_job;

static void *par_worker(void *arg)
{
    par_job *job = arg;
    for (;;) {
        size_t b = atomic_fetch_add(&job->next, job->chunk);
        if (b >= job->n) break;
        job->fn(job->ctx, b, b + job->chunk < job->n ? b + job->chunk : job->n);
    }
    return NULL;
}

/* Runs fn over [0, n) in chunks on up to `threads` threads (the caller is
 * one of them).  A thread that cannot be started leaves its share to the
 * others. */
static void par_run(unsigned threads, size_t n, size_t chunk, par_fn fn, void *ctx)
{
    pthread_t tid[CN_LSA_MAX_THREADS];
    unsigned started = 0;
    par_job job;

    job.fn = fn;
    job.ctx = ctx;
    job.n = n;
    job.chunk = chunk ? chunk : 1;
    atomic_init(&job.next, 0);
    if (threads > CN_LSA_MAX_THREADS) threads = CN_LSA_MAX_THREADS;
    if ((size_t)threads > (n + job.chunk - 1) / job.chunk) threads = (unsigned)((n + job.chunk - 1) / job.chunk);
    for (unsigned t = 1; t < threads; t++)
        if (pthread_create(&tid[started], NULL, par_worker, &job) == 0) started++;
    par_worker(&job);
    for (unsigned t = 0; t < started; t++) pthread_join(tid[t], NULL);
}

/* ---- pass 1: interning and per-document term counts --------------------- */

typedef struct term_rec {
    size_t off;         /* in the pool */
    uint64_t hash;
    uint32_t len;
    uint32_t df;
    uint32_t last_doc;  /* document + 1 that saw it last */
    size_t pos;         /* its pair in that document */
} term_rec;

typedef struct doc_pair {
    uint32_t term;
    uint32_t tf;
} doc_pair;

typedef struct corpus {
    char *pool;
    size_t pool_len, pool_cap;
    term_rec *terms;
    size_t n_terms, terms_cap;
    uint32_t *slots;
    size_t slot_mask;
    doc_pair *pairs;
    size_t n_pairs, pairs_cap;
    size_t *doc_start;  /* [n_docs + 1] into pairs */
    uint32_t doc;       /* current document */
    int oom;
} corpus;

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    size_t n = *cap ? *cap : 64;
    void *q;
    if (need <= *cap) return 0;
    while (n < need) {
        if (n > SIZE_MAX / 2 / elem) return -1;
        n *= 2;
    }
    q = realloc(*p, n * elem);
    if (q == NULL) return -1;
    *p = q;
    *cap = n;
    return 0;
}

static int slots_rehash(corpus *c)
{
    size_t n = c->slot_mask ? (c->slot_mask + 1) * 2 : 1024;
    uint32_t *s = calloc(n, sizeof *s);
    if (s == NULL) return -1;
    for (size_t i = 0; i < c->n_terms; i++) {
        size_t j = (size_t)c->terms[i].hash & (n - 1);
        while (s[j]) j = (j + 1) & (n - 1);
        s[j] = (uint32_t)i + 1;
    }
    free(c->slots);
    c->slots = s;
    c->slot_mask = n - 1;
    return 0;
}

/* The id of a token, added when new; -1 when out of memory. */
static long corpus_intern(corpus *c, const char *tok, size_t len)
{
    uint64_t h = term_hash(tok, len);
    size_t j;
    term_rec *t;

    if (c->slot_mask == 0 || (c->n_terms + 1) * 2 > c->slot_mask + 1) {
        if (c->n_terms >= UINT32_MAX - 1 || slots_rehash(c) < 0) return -1;
    }
    for (j = (size_t)h & c->slot_mask; c->slots[j]; j = (j + 1) & c->slot_mask) {
        t = &c->terms[c->slots[j] - 1];
        if (t->hash == h && t->len == len && memcmp(c->pool + t->off, tok, len) == 0) return c->slots[j] - 1;
    }
    if (grow((void **)&c->terms, &c->terms_cap, c->n_terms + 1, sizeof *c->terms) < 0 ||
        grow((void **)&c->pool, &c->pool_cap, c->pool_len + len + 1, 1) < 0)
        return -1;
    t = &c->terms[c->n_terms];
    t->off = c->pool_len;
    t->hash = h;
    t->len = (uint32_t)len;
    t->df = 0;
    t->last_doc = 0;
    t->pos = 0;
    memcpy(c->pool + c->pool_len, tok, len);
    c->pool[c->pool_len + len] = '\0';
    c->pool_len += len + 1;
    c->slots[j] = (uint32_t)c->n_terms + 1;
    return (long)c->n_terms++;
}

static int pass1_token(const char *tok, size_t len, void *data)
{
    corpus *c = data;
    long id = corpus_intern(c, tok, len);
    term_rec *t;

    if (id < 0) {
        c->oom = 1;
        return 1;
    }
    t = &c->terms[id];
    if (t->last_doc == c->doc + 1) {
        if (c->pairs[t->pos].tf < UINT32_MAX) c->pairs[t->pos].tf++;
        return 0;
    }
    if (grow((void **)&c->pairs, &c->pairs_cap, c->n_pairs + 1, sizeof *c->pairs) < 0) {
        c->oom = 1;
        return 1;
    }
    t->last_doc = c->doc + 1;
    t->pos = c->n_pairs;
    t->df++;
    c->pairs[c->n_pairs].term = (uint32_t)id;
    c->pairs[c->n_pairs].tf = 1;
    c->n_pairs++;
    return 0;
}

static void corpus_free(corpus *c)
{
    free(c->pool);
    free(c->terms);
    free(c->slots);
    free(c->pairs);
    free(c->doc_start);
    memset(c, 0, sizeof *c);
}

static int corpus_read(corpus *c, cn_lsa_tokenize_fn tokenize, const char *const *docs, size_t n,
                       cn_error *err)
{
    if ((c->doc_start = malloc((n + 1) * sizeof *c->doc_start)) == NULL) return oom(err, "document table");
    for (size_t d = 0; d < n; d++) {
        const char *text = docs[d] ? docs[d] : "";
        c->doc = (uint32_t)d;
        c->doc_start[d] = c->n_pairs;
        if (tokenize(text, strlen(text), pass1_token, c) != 0 || c->oom)
            return oom(err, "vocabulary of the documents");
    }
    c->doc_start[n] = c->n_pairs;
    return 0;
}

/* ---- pass 2: the vocabulary --------------------------------------------- */

typedef struct cand {
    uint32_t id, df;
    const char *s;
} cand;

static int cand_by_df(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->df != y->df) return x->df > y->df ? -1 : 1;
    return strcmp(x->s, y->s);
}

static int cand_by_term(const void *a, const void *b)
{
    return strcmp(((const cand *)a)->s, ((const cand *)b)->s);
}

/* Chooses the vocabulary: colmap[term id] = its column or NO_COL; fills
 * the model's terms and idf. */
static int vocab_choose(const corpus *c, const cn_lsa_params *p, size_t n_docs, uint32_t *colmap,
                        cn_lsa_model *m, cn_error *err)
{
    cand *cs = malloc((c->n_terms ? c->n_terms : 1) * sizeof *cs);
    size_t nc = 0, pool_len = 0;
    double max_df = p->max_df_ratio * (double)n_docs;

    if (cs == NULL) return oom(err, "vocabulary");
    for (int pass = 0; pass < 2 && nc == 0; pass++) {
        uint32_t min_df = pass ? 1 : p->min_df;
        if (pass) {
            if (!p->relax_df) break;
            max_df = (double)n_docs;
        }
        for (size_t i = 0; i < c->n_terms; i++) {
            colmap[i] = NO_COL;
            if (c->terms[i].df >= min_df && (double)c->terms[i].df <= max_df) {
                cs[nc].id = (uint32_t)i;
                cs[nc].df = c->terms[i].df;
                cs[nc].s = c->pool + c->terms[i].off;
                nc++;
            }
        }
    }
    if (nc == 0) {
        free(cs);
        return lsa_fail(err, CN_EINVAL,
                        "embed-local: none of the %zu distinct terms of the %zu documents occurs in at least "
                        "min_df=%u documents and at most max_df_ratio=%g of them, so there is nothing to learn; "
                        "for a corpus this small set the embedder options min_df to 1 and max_df_ratio to 1",
                        c->n_terms, n_docs, p->min_df, p->max_df_ratio);
    }
    if (nc > p->max_terms) {
        qsort(cs, nc, sizeof *cs, cand_by_df);
        nc = p->max_terms;
    }
    qsort(cs, nc, sizeof *cs, cand_by_term);
    for (size_t i = 0; i < nc; i++) pool_len += c->terms[cs[i].id].len + 1;
    m->n_terms = (uint32_t)nc;
    m->pool_len = pool_len;
    m->pool = malloc(pool_len);
    m->term_off = malloc(nc * sizeof *m->term_off);
    m->idf = malloc(nc * sizeof *m->idf);
    if (m->pool == NULL || m->term_off == NULL || m->idf == NULL) {
        free(cs);
        return oom(err, "vocabulary");
    }
    pool_len = 0;
    for (size_t i = 0; i < nc; i++) {
        const term_rec *t = &c->terms[cs[i].id];
        colmap[cs[i].id] = (uint32_t)i;
        m->term_off[i] = (uint32_t)pool_len;
        memcpy(m->pool + pool_len, c->pool + t->off, t->len + 1);
        pool_len += t->len + 1;
        m->idf[i] = (float)(log((1.0 + (double)n_docs) / (1.0 + (double)t->df)) + 1.0);
    }
    free(cs);
    return 0;
}

/* ---- pass 3: the tf-idf matrix ------------------------------------------ */

typedef struct csr {
    size_t rows, cols;
    size_t *start;      /* [rows + 1] */
    uint32_t *idx;
    float *val;
} csr;

static void csr_free(csr *a)
{
    free(a->start);
    free(a->idx);
    free(a->val);
    memset(a, 0, sizeof *a);
}

static int pair_by_term(const void *a, const void *b)
{
    uint32_t x = ((const doc_pair *)a)->term, y = ((const doc_pair *)b)->term;
    return x < y ? -1 : x > y;
}

/* Rows of A from the documents' pairs (rewritten in place to columns). */
static int matrix_build(corpus *c, const uint32_t *colmap, const cn_lsa_model *m, size_t n_docs, csr *a,
                        cn_error *err)
{
    size_t nnz = 0;

    for (size_t i = 0; i < c->n_pairs; i++) nnz += colmap[c->pairs[i].term] != NO_COL;
    a->rows = n_docs;
    a->cols = m->n_terms;
    a->start = malloc((n_docs + 1) * sizeof *a->start);
    a->idx = malloc((nnz ? nnz : 1) * sizeof *a->idx);
    a->val = malloc((nnz ? nnz : 1) * sizeof *a->val);
    if (a->start == NULL || a->idx == NULL || a->val == NULL) return oom(err, "term-document matrix");
    nnz = 0;
    for (size_t d = 0; d < n_docs; d++) {
        doc_pair *row = c->pairs + c->doc_start[d];
        size_t len = 0, first = nnz;
        double norm = 0;

        for (size_t i = 0; i < c->doc_start[d + 1] - c->doc_start[d]; i++) {
            uint32_t col = colmap[row[i].term];
            if (col == NO_COL) continue;
            row[len].term = col;
            row[len].tf = row[i].tf;
            len++;
        }
        if (len > 1) qsort(row, len, sizeof *row, pair_by_term);
        a->start[d] = first;
        for (size_t i = 0; i < len; i++) {
            double w = (1.0 + log((double)row[i].tf)) * (double)m->idf[row[i].term];
            a->idx[nnz] = row[i].term;
            a->val[nnz] = (float)w;
            norm += w * w;
            nnz++;
        }
        norm = sqrt(norm);
        for (size_t i = first; norm > 0 && i < nnz; i++) a->val[i] = (float)((double)a->val[i] / norm);
    }
    a->start[n_docs] = nnz;
    return 0;
}

/* at = a^T, each row's entries in increasing column order. */
static int matrix_transpose(const csr *a, csr *at, cn_error *err)
{
    size_t nnz = a->start[a->rows];
    size_t *fill;

    at->rows = a->cols;
    at->cols = a->rows;
    at->start = calloc(a->cols + 1, sizeof *at->start);
    at->idx = malloc((nnz ? nnz : 1) * sizeof *at->idx);
    at->val = malloc((nnz ? nnz : 1) * sizeof *at->val);
    fill = malloc((a->cols ? a->cols : 1) * sizeof *fill);
    if (at->start == NULL || at->idx == NULL || at->val == NULL || fill == NULL) {
        free(fill);
        return oom(err, "transposed term-document matrix");
    }
    for (size_t i = 0; i < nnz; i++) at->start[a->idx[i] + 1]++;
    for (size_t t = 0; t < a->cols; t++) at->start[t + 1] += at->start[t];
    memcpy(fill, at->start, a->cols * sizeof *fill);
    for (size_t d = 0; d < a->rows; d++)
        for (size_t i = a->start[d]; i < a->start[d + 1]; i++) {
            size_t k = fill[a->idx[i]]++;
            at->idx[k] = (uint32_t)d;
            at->val[k] = a->val[i];
        }
    free(fill);
    return 0;
}

/* ---- dense kernels --------------------------------------------------------- */

/* Row-major; the first `cols` of each row are live, up to pad8(cols) are
 * zeros, ld (a multiple of 8) is the row stride. */
typedef struct dmat {
    double *a;
    size_t rows, cols, ld;
} dmat;

static size_t pad8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* y[0, n8) += a * x[0, n8), n8 a multiple of 8. */
static void axpy8(double *restrict y, double a, const double *restrict x, size_t n8)
{
    for (size_t i = 0; i < n8; i += 8)
        for (size_t j = 0; j < 8; j++) y[i + j] += a * x[i + j];
}

typedef struct spmm_job {
    const csr *a;
    const dmat *x;
    dmat *y;
} spmm_job;

static void spmm_rows(void *ctx, size_t begin, size_t end)
{
    const spmm_job *j = ctx;
    size_t w = pad8(j->x->cols);

    for (size_t i = begin; i < end; i++) {
        double *y = j->y->a + i * j->y->ld;
        memset(y, 0, w * sizeof *y);
        for (size_t k = j->a->start[i]; k < j->a->start[i + 1]; k++)
            axpy8(y, (double)j->a->val[k], j->x->a + (size_t)j->a->idx[k] * j->x->ld, w);
    }
}

/* y = a x (y->rows = a->rows, y->cols = x->cols). */
static void spmm(unsigned threads, const csr *a, const dmat *x, dmat *y)
{
    spmm_job j = {a, x, y};
    y->rows = a->rows;
    y->cols = x->cols;
    par_run(threads, a->rows, 256, spmm_rows, &j);
}

/* Cross products x^T y are summed over a fixed number of row slices, each
 * into its own partial, then the partials in slice order: the rounding is
 * the same whatever the thread count. */
#define SLICES 16

typedef struct cross_job {
    const dmat *x, *y;
    double *part;       /* SLICES * x->cols * pad8(y->cols) */
    int upper;          /* x == y: the upper triangle (and a little more) only */
} cross_job;

/* g[0, n8) += x0 y0 + x1 y1 + x2 y2 + x3 y3: four rank-1 updates for one
 * pass over g, which is what bounds the speed of a Gram matrix (g lives
 * in L2 while the rows stream by). */
static void axpy8x4(double *restrict g, const double x[4], const double *restrict y0, const double *restrict y1,
                    const double *restrict y2, const double *restrict y3, size_t n8)
{
    double x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
    for (size_t i = 0; i < n8; i += 8)
        for (size_t j = 0; j < 8; j++)
            g[i + j] += x0 * y0[i + j] + x1 * y1[i + j] + x2 * y2[i + j] + x3 * y3[i + j];
}

static void cross4(double *g, size_t cx, size_t wy, int upper, const double *const xr[4],
                   const double *const yr[4])
{
    for (size_t a = 0; a < cx; a++) {
        size_t from = upper ? (a & ~(size_t)7) : 0;
        double x[4] = {xr[0][a], xr[1][a], xr[2][a], xr[3][a]};
        axpy8x4(g + a * wy + from, x, yr[0] + from, yr[1] + from, yr[2] + from, yr[3] + from, wy - from);
    }
}

static void cross_slices(void *ctx, size_t begin, size_t end)
{
    const cross_job *j = ctx;
    size_t cx = j->x->cols, wy = pad8(j->y->cols), rows = j->x->rows;

    for (size_t s = begin; s < end; s++) {
        double *g = j->part + s * cx * wy;
        size_t i = rows * s / SLICES, stop = rows * (s + 1) / SLICES;
        memset(g, 0, cx * wy * sizeof *g);
        for (; i + 4 <= stop; i += 4) {
            const double *xr[4], *yr[4];
            for (int r = 0; r < 4; r++) {
                xr[r] = j->x->a + (i + (size_t)r) * j->x->ld;
                yr[r] = j->y->a + (i + (size_t)r) * j->y->ld;
            }
            cross4(g, cx, wy, j->upper, xr, yr);
        }
        for (; i < stop; i++) {
            const double *xr = j->x->a + i * j->x->ld, *yr = j->y->a + i * j->y->ld;
            for (size_t a = 0; a < cx; a++) {
                size_t from = j->upper ? (a & ~(size_t)7) : 0;
                axpy8(g + a * wy + from, xr[a], yr + from, wy - from);
            }
        }
    }
}

/* out[cx * cy] (row-major, stride cy) = x^T y; x and y have the same rows. */
static int cross(unsigned threads, const dmat *x, const dmat *y, double *out, cn_error *err)
{
    size_t cx = x->cols, cy = y->cols, wy = pad8(cy);
    cross_job j = {x, y, malloc(SLICES * (cx ? cx : 1) * wy * sizeof(double)), x == y};

    if (j.part == NULL) return oom(err, "Gram matrix");
    par_run(threads, SLICES, 1, cross_slices, &j);
    for (size_t a = 0; a < cx; a++)
        for (size_t b = j.upper ? a : 0; b < cy; b++) {
            double s = 0;
            for (size_t p = 0; p < SLICES; p++) s += j.part[p * cx * wy + a * wy + b];
            out[a * cy + b] = s;
            if (j.upper) out[b * cy + a] = s;
        }
    free(j.part);
    return 0;
}

typedef struct rmul_job {
    dmat *y;
    const double *m;    /* y->cols x r, stride pad8(r), zero padded */
    size_t r;
    int upper;          /* m is upper triangular: skip its zeros */
} rmul_job;

#define MAX_LD pad8_const(CN_LSA_MAX_DIM + CN_LSA_OVERSAMPLE)
#define pad8_const(n) (((n) + 7) / 8 * 8)

/* Four rows times eight columns of the product at a time: 32 independent
 * sums that stay in registers while the rows of m stream by (as separate
 * scalars, which gcc keeps in registers and pairs into vector operations;
 * an accumulator array would be spilled to memory at every step). */
static void rmul4(double *const y[4], const double *m, size_t c, size_t wr, int upper, double (*tmp)[MAX_LD])
{
    const double *restrict y0 = y[0], *restrict y1 = y[1], *restrict y2 = y[2], *restrict y3 = y[3];

    for (size_t b = 0; b < wr; b += 4) {
        double s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
        double s20 = 0, s21 = 0, s22 = 0, s23 = 0, s30 = 0, s31 = 0, s32 = 0, s33 = 0;
        size_t stop = upper && b + 4 < c ? b + 4 : c;
        for (size_t a = 0; a < stop; a++) {
            const double *restrict ma = m + a * wr + b;
            double m0 = ma[0], m1 = ma[1], m2 = ma[2], m3 = ma[3];
            s00 += y0[a] * m0; s01 += y0[a] * m1; s02 += y0[a] * m2; s03 += y0[a] * m3;
            s10 += y1[a] * m0; s11 += y1[a] * m1; s12 += y1[a] * m2; s13 += y1[a] * m3;
            s20 += y2[a] * m0; s21 += y2[a] * m1; s22 += y2[a] * m2; s23 += y2[a] * m3;
            s30 += y3[a] * m0; s31 += y3[a] * m1; s32 += y3[a] * m2; s33 += y3[a] * m3;
        }
        tmp[0][b] = s00; tmp[0][b + 1] = s01; tmp[0][b + 2] = s02; tmp[0][b + 3] = s03;
        tmp[1][b] = s10; tmp[1][b + 1] = s11; tmp[1][b + 2] = s12; tmp[1][b + 3] = s13;
        tmp[2][b] = s20; tmp[2][b + 1] = s21; tmp[2][b + 2] = s22; tmp[2][b + 3] = s23;
        tmp[3][b] = s30; tmp[3][b + 1] = s31; tmp[3][b + 2] = s32; tmp[3][b + 3] = s33;
    }
    for (int r = 0; r < 4; r++) memcpy(y[r], tmp[r], wr * sizeof **tmp);
}

static void rmul_rows(void *ctx, size_t begin, size_t end)
{
    const rmul_job *j = ctx;
    size_t c = j->y->cols, wr = pad8(j->r), i = begin;
    double tmp[4][MAX_LD];

    for (; i + 4 <= end; i += 4) {
        double *y[4];
        for (int r = 0; r < 4; r++) y[r] = j->y->a + (i + (size_t)r) * j->y->ld;
        rmul4(y, j->m, c, wr, j->upper, tmp);
    }
    for (; i < end; i++) {
        double *y = j->y->a + i * j->y->ld;
        memset(tmp[0], 0, wr * sizeof *tmp[0]);
        for (size_t a = 0; a < c; a++) axpy8(tmp[0], y[a], j->m + a * wr, wr);
        memcpy(y, tmp[0], wr * sizeof *tmp[0]);
    }
}

/* y = y m, in place (m is y->cols x r with r <= y->cols). */
static void rmul(unsigned threads, dmat *y, const double *m, size_t r, int upper)
{
    rmul_job j = {y, m, r, upper};
    par_run(threads, y->rows, 256, rmul_rows, &j);
    y->cols = r;
}

/* ---- small dense eigen and singular value problems ----------------------- */

/* Cyclic Jacobi for the symmetric s[n * n] (destroyed): eigenvalues on its
 * diagonal, eigenvectors in the columns of w[n * n]. */
static void eig_jacobi(double *s, double *w, size_t n)
{
    double scale = 0;

    for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(s[i * n + i]));
    for (size_t i = 0; i < n * n; i++) w[i] = 0;
    for (size_t i = 0; i < n; i++) w[i * n + i] = 1;
    for (int sweep = 0; sweep < 100; sweep++) {
        int rotated = 0;
        for (size_t p = 0; p + 1 < n; p++)
            for (size_t q = p + 1; q < n; q++) {
                double apq = s[p * n + q], app = s[p * n + p], aqq = s[q * n + q], theta, t, c, sn;
                /* negligible next to both diagonal entries, or next to the
                 * whole matrix (eigenvalues below RANK_TOL are dropped anyway) */
                if (fabs(apq) <= 1e-17 * sqrt(fabs(app * aqq)) || fabs(apq) <= 1e-20 * scale) continue;
                theta = (aqq - app) / (2 * apq);
                t = fabs(theta) > 1e150 ? 0.5 / theta
                                        : (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
                c = 1 / sqrt(t * t + 1);
                sn = t * c;
                for (size_t k = 0; k < n; k++) {
                    double kp = s[k * n + p], kq = s[k * n + q];
                    s[k * n + p] = c * kp - sn * kq;
                    s[k * n + q] = sn * kp + c * kq;
                }
                for (size_t k = 0; k < n; k++) {
                    double pk = s[p * n + k], qk = s[q * n + k];
                    s[p * n + k] = c * pk - sn * qk;
                    s[q * n + k] = sn * pk + c * qk;
                }
                s[p * n + q] = s[q * n + p] = 0;
                for (size_t k = 0; k < n; k++) {
                    double kp = w[k * n + p], kq = w[k * n + q];
                    w[k * n + p] = c * kp - sn * kq;
                    w[k * n + q] = sn * kp + c * kq;
                }
                rotated = 1;
            }
        if (!rotated) break;
    }
}

/* One-sided (Hestenes) Jacobi: rotates the columns of r (rows x cols,
 * column-major) until they are mutually orthogonal; their norms are then
 * the singular values and the normalised columns the left singular
 * vectors. */
static void svd_jacobi(double *r, size_t rows, size_t cols)
{
    double total = 0;

    for (size_t i = 0; i < rows * cols; i++) total += r[i] * r[i];
    for (int sweep = 0; sweep < 100; sweep++) {
        int rotated = 0;
        for (size_t p = 0; p + 1 < cols; p++)
            for (size_t q = p + 1; q < cols; q++) {
                double *cp = r + p * rows, *cq = r + q * rows, al = 0, be = 0, ga = 0, zeta, t, c, sn;
                for (size_t k = 0; k < rows; k++) {
                    al += cp[k] * cp[k];
                    be += cq[k] * cq[k];
                    ga += cp[k] * cq[k];
                }
                if (fabs(ga) <= 1e-15 * sqrt(al * be) || fabs(ga) <= 1e-30 * total) continue;
                zeta = (be - al) / (2 * ga);
                t = fabs(zeta) > 1e150 ? 0.5 / zeta
                                       : (zeta >= 0 ? 1 : -1) / (fabs(zeta) + sqrt(zeta * zeta + 1));
                c = 1 / sqrt(t * t + 1);
                sn = t * c;
                for (size_t k = 0; k < rows; k++) {
                    double x = cp[k], y = cq[k];
                    cp[k] = c * x - sn * y;
                    cq[k] = sn * x + c * y;
                }
                rotated = 1;
            }
        if (!rotated) break;
    }
}

typedef struct ranked {
    double v;
    size_t i;
} ranked;

static int ranked_desc(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->v != y->v) return x->v > y->v ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* ---- orthonormalisation ------------------------------------------------------ */

/* Directions weaker than this (eigenvalue of the Gram matrix relative to
 * the largest) are numerically absent and dropped. */
#define RANK_TOL 1e-10
/* Squared condition estimate above which a second pass is made. */
#define REORTH_COND2 1e4
/* Singular values below this share of the largest are not kept. */
#define SIGMA_TOL 1e-4

/* Cholesky G = R^T R with R upper triangular (row-major n x n).  -1 when
 * a pivot is not clearly positive: the columns are (nearly) dependent and
 * need the rank-revealing SVQB instead. */
static int cholesky_upper(const double *g, double *r, size_t n)
{
    double dmax = 0;

    for (size_t i = 0; i < n; i++) dmax = fmax(dmax, g[i * n + i]);
    memset(r, 0, n * n * sizeof *r);
    for (size_t i = 0; i < n; i++) {
        double d = g[i * n + i];
        for (size_t k = 0; k < i; k++) d -= r[k * n + i] * r[k * n + i];
        if (!(d > dmax * RANK_TOL)) return -1;   /* also refuses NaN */
        r[i * n + i] = sqrt(d);
        for (size_t j = i + 1; j < n; j++) {
            double t = g[i * n + j];
            for (size_t k = 0; k < i; k++) t -= r[k * n + i] * r[k * n + j];
            r[i * n + j] = t / r[i * n + i];
        }
    }
    return 0;
}

/* m (n x n, stride pad8(n)) = r^-1 for the upper triangular r; returns
 * (max r_ii / min r_ii)^2, a lower bound of the squared condition number. */
static double upper_inverse(const double *r, double *m, size_t n)
{
    size_t w = pad8(n);
    double dmin = r[0], dmax = r[0];

    for (size_t j = 0; j < n; j++) {
        dmin = fmin(dmin, r[j * n + j]);
        dmax = fmax(dmax, r[j * n + j]);
        m[j * w + j] = 1 / r[j * n + j];
        for (size_t i = j; i-- > 0;) {
            double s = 0;
            for (size_t k = i + 1; k <= j; k++) s += r[i * n + k] * m[k * w + j];
            m[i * w + j] = -s / r[i * n + i];
        }
    }
    return (dmax / dmin) * (dmax / dmin);
}

/* One SVQB pass (G = W L W^T, y <- y W L^-1/2), dropping the directions
 * whose eigenvalue is below RANK_TOL of the largest.  g is destroyed;
 * *cond2 receives lmax / lmin of what was kept. */
static int svqb_pass(unsigned threads, dmat *y, double *g, double *w, double *m, double *cond2, cn_error *err)
{
    size_t c = y->cols, r = 0, wr;
    ranked *ev = malloc(c * sizeof *ev);

    if (ev == NULL) return oom(err, "orthonormalisation");
    eig_jacobi(g, w, c);
    for (size_t i = 0; i < c; i++) {
        ev[i].v = g[i * c + i];
        ev[i].i = i;
    }
    qsort(ev, c, sizeof *ev, ranked_desc);
    while (r < c && ev[0].v > 0 && isfinite(ev[0].v) && ev[r].v > ev[0].v * RANK_TOL) r++;
    if (r == 0) {
        free(ev);
        return lsa_fail(err, CN_EINVAL, "embed-local: the term-document matrix is zero; nothing to learn");
    }
    wr = pad8(r);
    memset(m, 0, c * pad8(c) * sizeof *m);
    for (size_t a = 0; a < c; a++)
        for (size_t k = 0; k < r; k++) m[a * wr + k] = w[a * c + ev[k].i] / sqrt(ev[k].v);
    *cond2 = ev[0].v / ev[r - 1].v;
    free(ev);
    rmul(threads, y, m, r, 0);
    return 0;
}

/* Replaces y by an orthonormal basis of its column space.  Cholesky QR
 * (y <- y R^-1 with G = y^T y = R^T R) when the columns are clearly
 * independent: cheap even at high rank.  Otherwise SVQB, which drops the
 * numerically dependent directions (y->cols shrinks).  A pass loses about
 * eps * cond^2 of orthogonality, so an ill-conditioned y gets a second
 * pass, which then starts from a nearly orthonormal basis. */
static int orthonormalize(unsigned threads, dmat *y, cn_error *err)
{
    for (int pass = 0; pass < 3; pass++) {
        size_t c = y->cols;
        double *g = malloc(c * c * sizeof *g), *w = malloc(c * c * sizeof *w);
        double *m = calloc(c * pad8(c), sizeof *m), cond2 = 1;
        int rc;

        if (g == NULL || w == NULL || m == NULL) rc = oom(err, "orthonormalisation");
        else if ((rc = cross(threads, y, y, g, err)) == 0) {
            if (cholesky_upper(g, w, c) == 0) {
                cond2 = upper_inverse(w, m, c);
                rmul(threads, y, m, c, 1);
            } else {
                rc = svqb_pass(threads, y, g, w, m, &cond2, err);
            }
        }
        free(g);
        free(w);
        free(m);
        if (rc < 0) return rc;
        if (cond2 < REORTH_COND2) break;
    }
    return 0;
}

/* ---- the randomized SVD ------------------------------------------------------ */

/* splitmix64 seeds xoshiro256**; the test matrix is uniform on [-1, 1)
 * (any zero-mean i.i.d. entries serve the range finder, and these need no
 * libm, so the same seed gives the same matrix everywhere). */
typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void rng_seed(rng *g, uint64_t seed)
{
    for (int i = 0; i < 4; i++) g->s[i] = splitmix64(&seed);
}

static uint64_t rng_next(rng *g)
{
    uint64_t *s = g->s, r = cn_rotl64(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = cn_rotl64(s[3], 45);
    return r;
}

typedef struct svd_out {
    double *v;          /* n_terms x k, row stride ld */
    double *sigma;      /* [k] */
    size_t k, ld;
} svd_out;

static void fill_random(dmat *z, size_t cols, uint64_t seed)
{
    rng g;
    rng_seed(&g, seed);
    z->cols = cols;
    for (size_t i = 0; i < z->rows; i++) {
        double *row = z->a + i * z->ld;
        memset(row, 0, z->ld * sizeof *row);
        for (size_t j = 0; j < cols; j++) row[j] = (double)(rng_next(&g) >> 11) * 0x1p-52 - 1.0;
    }
}

/* From Z = A^T Q (n x r): Z = Q2 R, R's SVD by one-sided Jacobi, and the
 * leading k left singular vectors V = Q2 U_R with their singular values.
 * zc (as many rows as z) receives a copy of Z. */
static int svd_finish(unsigned threads, dmat *z, dmat *zc, size_t k, svd_out *out, cn_error *err)
{
    size_t r = z->cols, r2, kk = 0;
    double *rm = NULL, *rc_ = NULL, *u = NULL;
    ranked *sv = NULL;
    int rc;

    zc->rows = z->rows;
    zc->cols = z->cols;
    for (size_t i = 0; i < z->rows; i++) memcpy(zc->a + i * zc->ld, z->a + i * z->ld, pad8(r) * sizeof(double));
    if ((rc = orthonormalize(threads, z, err)) < 0) return rc;
    r2 = z->cols;
    rm = malloc(r2 * r * sizeof *rm);
    rc_ = malloc(r2 * r * sizeof *rc_);
    sv = malloc(r * sizeof *sv);
    if (rm == NULL || rc_ == NULL || sv == NULL) {
        rc = oom(err, "SVD");
        goto done;
    }
    if ((rc = cross(threads, z, zc, rm, err)) < 0) goto done;   /* R = Q2^T Z, r2 x r */
    for (size_t a = 0; a < r2; a++)
        for (size_t b = 0; b < r; b++) rc_[b * r2 + a] = rm[a * r + b];
    svd_jacobi(rc_, r2, r);
    for (size_t b = 0; b < r; b++) {
        double s = 0;
        for (size_t a = 0; a < r2; a++) s += rc_[b * r2 + a] * rc_[b * r2 + a];
        sv[b].v = sqrt(s);
        sv[b].i = b;
    }
    qsort(sv, r, sizeof *sv, ranked_desc);
    /* The projection divides by the singular values: a direction far weaker
     * than the first is mostly rounding noise and would be amplified. */
    while (kk < k && kk < r && sv[0].v > 0 && sv[kk].v > sv[0].v * SIGMA_TOL) kk++;
    if (kk == 0) {
        rc = lsa_fail(err, CN_EINVAL, "embed-local: the term-document matrix is zero; nothing to learn");
        goto done;
    }
    if ((u = calloc(r2 * pad8(kk), sizeof *u)) == NULL || (out->sigma = malloc(kk * sizeof *out->sigma)) == NULL) {
        rc = oom(err, "SVD");
        goto done;
    }
    for (size_t j = 0; j < kk; j++) {
        out->sigma[j] = sv[j].v;
        for (size_t a = 0; a < r2; a++) u[a * pad8(kk) + j] = rc_[sv[j].i * r2 + a] / sv[j].v;
    }
    rmul(threads, z, u, kk, 0);
    out->v = z->a;
    out->k = kk;
    out->ld = z->ld;
    z->a = NULL;   /* handed to out */
done:
    free(rm);
    free(rc_);
    free(u);
    free(sv);
    return rc;
}

static int dmat_alloc(dmat *m, size_t rows, size_t ld, cn_error *err)
{
    void *p = NULL;
    m->rows = rows;
    m->cols = 0;
    m->ld = ld;
    if (rows > SIZE_MAX / sizeof(double) / ld || posix_memalign(&p, 64, (rows ? rows : 1) * ld * sizeof(double)) != 0)
        return oom(err, "dense factor matrices");
    m->a = p;
    return 0;
}

static int rsvd(const cn_lsa_params *p, const csr *a, const csr *at, svd_out *out, cn_error *err)
{
    size_t m = a->rows, n = a->cols, k = p->dim, l = k + CN_LSA_OVERSAMPLE;
    dmat y = {0}, z = {0};
    int rc;

    if (l > m) l = m;
    if (l > n) l = n;
    if (k > l) k = l;
    /* y serves as Q (m rows) and later as the copy of Z (n rows) */
    if ((rc = dmat_alloc(&y, m > n ? m : n, pad8(l), err)) < 0 || (rc = dmat_alloc(&z, n, pad8(l), err)) < 0)
        goto done;
    fill_random(&z, l, p->seed);
    spmm(p->threads, a, &z, &y);
    if ((rc = orthonormalize(p->threads, &y, err)) < 0) goto done;
    for (uint32_t it = 0; it < p->power_iters; it++) {
        spmm(p->threads, at, &y, &z);
        if ((rc = orthonormalize(p->threads, &z, err)) < 0) goto done;
        spmm(p->threads, a, &z, &y);
        if ((rc = orthonormalize(p->threads, &y, err)) < 0) goto done;
    }
    spmm(p->threads, at, &y, &z);
    rc = svd_finish(p->threads, &z, &y, k, out, err);
done:
    free(y.a);
    free(z.a);
    return rc;
}

/* ---- the model ------------------------------------------------------------------ */

/* Stores the projection P = V S^-1, so that a text's embedding x P is, for
 * a document of the corpus, its row of U: every latent direction weighs
 * the same in the cosine, instead of the few strongest ones (which in code
 * are shared by nearly everything: self, return, def...) dominating it.
 * On a docstring -> function retrieval check over the Python standard
 * library this ranked better than x V at 64, 128 and 256 dimensions.
 * Each factor's sign is chosen so that it points towards the bulk of the
 * documents (the column sums of A load it positively), which makes the
 * model independent of the solver's arbitrary signs. */
static int model_set_factors(cn_lsa_model *m, const csr *a, const svd_out *s, cn_error *err)
{
    size_t k = s->k, wk = s->ld;
    double *colsum = calloc(a->cols ? a->cols : 1, sizeof *colsum);

    m->dim = (uint32_t)k;
    m->sigma = malloc(k * sizeof *m->sigma);
    m->proj = malloc((size_t)m->n_terms * k * sizeof *m->proj);
    if (colsum == NULL || m->sigma == NULL || m->proj == NULL) {
        free(colsum);
        return oom(err, "projection matrix");
    }
    for (size_t i = 0; i < a->start[a->rows]; i++) colsum[a->idx[i]] += a->val[i];
    for (size_t j = 0; j < k; j++) {
        double dot = 0, scale;
        for (size_t t = 0; t < a->cols; t++) dot += colsum[t] * s->v[t * wk + j];
        scale = (dot < 0 ? -1.0 : 1.0) / s->sigma[j];
        m->sigma[j] = (float)s->sigma[j];
        for (size_t t = 0; t < a->cols; t++) m->proj[t * k + j] = (float)(scale * s->v[t * wk + j]);
    }
    free(colsum);
    return 0;
}

int cn_lsa_fit(const cn_lsa_params *p, cn_lsa_tokenize_fn tokenize, const char *const *docs, size_t n,
               cn_lsa_model **out, cn_error *err)
{
    corpus c;
    csr a, at;
    svd_out s = {NULL, NULL, 0, 0};
    uint32_t *colmap = NULL;
    cn_lsa_model *m;
    int rc;

    *out = NULL;
    memset(&c, 0, sizeof c);
    memset(&a, 0, sizeof a);
    memset(&at, 0, sizeof at);
    if (n == 0)
        return lsa_fail(err, CN_EINVAL, "embed-local cannot learn from 0 documents: the index has no node text");
    if (n >= UINT32_MAX)
        return lsa_fail(err, CN_EINVAL, "embed-local: %zu documents are more than it can learn from (at most %u)",
                        n, UINT32_MAX - 1);
    if ((m = calloc(1, sizeof *m)) == NULL) return oom(err, "model");
    m->n_docs = (uint32_t)n;
    if ((rc = corpus_read(&c, tokenize, docs, n, err)) < 0) goto done;
    if (c.n_terms == 0) {
        rc = lsa_fail(err, CN_EINVAL, "embed-local: the %zu documents contain no words to learn from", n);
        goto done;
    }
    if ((colmap = malloc(c.n_terms * sizeof *colmap)) == NULL) {
        rc = oom(err, "vocabulary");
        goto done;
    }
    if ((rc = vocab_choose(&c, p, n, colmap, m, err)) < 0 || (rc = matrix_build(&c, colmap, m, n, &a, err)) < 0)
        goto done;
    corpus_free(&c);   /* before the dense matrices: keeps the peak down */
    free(colmap);
    colmap = NULL;
    if ((rc = matrix_transpose(&a, &at, err)) < 0 || (rc = rsvd(p, &a, &at, &s, err)) < 0 ||
        (rc = model_set_factors(m, &a, &s, err)) < 0 || (rc = cn_lsa_model_index(m, err)) < 0)
        goto done;
    *out = m;
    m = NULL;
done:
    corpus_free(&c);
    free(colmap);
    csr_free(&a);
    csr_free(&at);
    free(s.v);
    free(s.sigma);
    cn_lsa_model_free(m);
    return rc;
}

int cn_lsa_model_index(cn_lsa_model *m, cn_error *err)
{
    size_t n = 16;

    while (n < (size_t)m->n_terms * 2) n *= 2;
    free(m->slots);
    if ((m->slots = calloc(n, sizeof *m->slots)) == NULL) return oom(err, "term lookup table");
    m->slot_mask = n - 1;
    for (uint32_t i = 0; i < m->n_terms; i++) {
        const char *s = m->pool + m->term_off[i];
        size_t j = (size_t)term_hash(s, strlen(s)) & m->slot_mask;
        while (m->slots[j]) j = (j + 1) & m->slot_mask;
        m->slots[j] = i + 1;
    }
    return 0;
}

long cn_lsa_term_find(const cn_lsa_model *m, const char *tok, size_t len)
{
    size_t j;

    if (m->slots == NULL) return -1;
    for (j = (size_t)term_hash(tok, len) & m->slot_mask; m->slots[j]; j = (j + 1) & m->slot_mask) {
        const char *s = m->pool + m->term_off[m->slots[j] - 1];
        if (strncmp(s, tok, len) == 0 && s[len] == '\0') return (long)m->slots[j] - 1;
    }
    return -1;
}

/* ---- embedding ----------------------------------------------------------------- */

typedef struct embed_ctx {
    const cn_lsa_model *m;
    uint32_t *cols;
    size_t n, cap;
} embed_ctx;

static int embed_token(const char *tok, size_t len, void *data)
{
    embed_ctx *e = data;
    long t = cn_lsa_term_find(e->m, tok, len);

    if (t < 0) return 0;
    if (grow((void **)&e->cols, &e->cap, e->n + 1, sizeof *e->cols) < 0) return 1;
    e->cols[e->n++] = (uint32_t)t;
    return 0;
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int cn_lsa_embed(const cn_lsa_model *m, cn_lsa_tokenize_fn tokenize, const char *text, size_t len,
                 float *out, cn_error *err)
{
    embed_ctx e = {m, NULL, 0, 0};
    double *acc = calloc(m->dim ? m->dim : 1, sizeof *acc), norm = 0;

    if (acc == NULL || tokenize(text ? text : "", text ? len : 0, embed_token, &e) != 0) {
        free(acc);
        free(e.cols);
        return oom(err, "embedding");
    }
    if (e.n > 1) qsort(e.cols, e.n, sizeof *e.cols, u32_cmp);
    for (size_t i = 0; i < e.n;) {
        size_t run = 1;
        const float *row = m->proj + (size_t)e.cols[i] * m->dim;
        double w;
        while (i + run < e.n && e.cols[i + run] == e.cols[i]) run++;
        w = (1.0 + log((double)run)) * (double)m->idf[e.cols[i]];
        for (uint32_t j = 0; j < m->dim; j++) acc[j] += w * (double)row[j];
        i += run;
    }
    for (uint32_t j = 0; j < m->dim; j++) norm += acc[j] * acc[j];
    norm = sqrt(norm);
    for (uint32_t j = 0; j < m->dim; j++) out[j] = norm > 1e-300 && isfinite(norm) ? (float)(acc[j] / norm) : 0.0f;
    free(acc);
    free(e.cols);
    return 0;
}

typedef struct batch_job {
    const cn_lsa_model *m;
    cn_lsa_tokenize_fn tokenize;
    const char *const *texts;
    float *out;
    atomic_int failed;
} batch_job;

static void embed_items(void *ctx, size_t begin, size_t end)
{
    batch_job *j = ctx;
    for (size_t i = begin; i < end; i++) {
        const char *t = j->texts[i] ? j->texts[i] : "";
        if (cn_lsa_embed(j->m, j->tokenize, t, strlen(t), j->out + i * j->m->dim, NULL) < 0)
            atomic_store(&j->failed, 1);
    }
}

int cn_lsa_embed_batch(const cn_lsa_model *m, cn_lsa_tokenize_fn tokenize, const char *const *texts, size_t n,
                       float *out, unsigned threads, cn_error *err)
{
    batch_job j;

    j.m = m;
    j.tokenize = tokenize;
    j.texts = texts;
    j.out = out;
    atomic_init(&j.failed, 0);
    par_run(n >= 64 ? threads : 1, n, 16, embed_items, &j);
    return atomic_load(&j.failed) ? oom(err, "embedding") : 0;
}

void cn_lsa_model_free(cn_lsa_model *m)
{
    if (m == NULL) return;
    free(m->pool);
    free(m->term_off);
    free(m->idf);
    free(m->sigma);
    free(m->proj);
    free(m->slots);
    free(m);
}

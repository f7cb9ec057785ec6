/* SPDX-License-Identifier: Apache-2.0 */
/* BM25 over groups of documents (cn_bm25_group_scores in cn_bm25.h).
 *
 * The index holds one document per node (a function's name, path and
 * lines); a question about a whole file is better matched against the
 * whole file, whose words are spread over its nodes.  A file's counts are
 * the sums of its nodes' counts, so the file-level ranking comes from the
 * same postings, read once per distinct query token, with no second index
 * to build or keep in step. */
#include "cn_bm25.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cn_util.h"
#include "cn_tokenize.h"

typedef struct range {
    uint64_t lo, hi;         /* a token's postings */
} range;

typedef struct token_ctx {
    const cn_bm25 *idx;
    range *r;
    size_t n, cap;
    int oom;
} token_ctx;

static int collect_token(const char *tok, size_t len, void *data)
{
    token_ctx *t = data;
    uint64_t lo, hi;
    if (!cn_bm25__term_range(t->idx, tok, len, &lo, &hi) || lo == hi) return 0;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        range *r = realloc(t->r, cap * sizeof *r);
        if (r == NULL) {
            t->oom = 1;
            return 1;   /* stops the tokenizer */
        }
        t->r = r;
        t->cap = cap;
    }
    t->r[t->n].lo = lo;
    t->r[t->n++].hi = hi;
    return 0;
}

static int cmp_range(const void *a, const void *b)
{
    const range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Adds one token's weight to every group holding it.  tf is all zero on
 * entry and on return. */
static void score_token(const cn_bm25__view *v, range r, const uint32_t *group_of, uint32_t n_groups,
                        const double *norm, uint32_t *tf, uint32_t *touched, double *scores)
{
    size_t n_touched = 0;
    double df, idf, k1p1 = v->k1 + 1.0;

    for (uint64_t p = r.lo; p < r.hi; p++) {
        uint32_t doc = v->postings[p], grp, f;
        if (doc >= v->n_docs || (grp = group_of[doc]) >= n_groups) continue;
        if ((f = cn_bm25__tf(v, p)) == 0) continue;
        if (tf[grp] == 0) touched[n_touched++] = grp;
        tf[grp] = tf[grp] > UINT32_MAX - f ? UINT32_MAX : tf[grp] + f;
    }
    df = (double)n_touched;
    idf = log(1.0 + ((double)n_groups - df + 0.5) / (df + 0.5));
    for (size_t i = 0; i < n_touched; i++) {
        uint32_t grp = touched[i];
        double f = (double)tf[grp];
        scores[grp] += idf * (f * k1p1) / (f + norm[grp]);
        tf[grp] = 0;
    }
}

int cn_bm25_group_scores(const cn_bm25 *idx, const char *query, const uint32_t *group_of, uint32_t n_groups,
                         double *scores)
{
    cn_bm25__view v;
    token_ctx t = {idx, NULL, 0, 0, 0};
    double *norm = NULL, total = 0, avg;
    uint32_t *tf = NULL, *touched = NULL;
    int rc = 0;

    if (n_groups == 0) return 0;
    memset(scores, 0, n_groups * sizeof *scores);
    if (query == NULL || idx == NULL || group_of == NULL) return 0;
    cn_bm25__view_of(idx, &v);
    cn_tokenize(query, strlen(query), collect_token, &t);
    if (t.oom) {
        rc = cn_error_set(CN_ENOMEM, "bm25: out of memory (query tokens)");
        goto out;
    }
    if (t.n == 0) goto out;
    norm = calloc(n_groups, sizeof *norm);
    tf = calloc(n_groups, sizeof *tf);
    touched = malloc(n_groups * sizeof *touched);
    if (norm == NULL || tf == NULL || touched == NULL) {
        rc = cn_error_set(CN_ENOMEM, "bm25: out of memory (scores of %u groups)", n_groups);
        goto out;
    }
    for (uint32_t d = 0; d < v.n_docs; d++) {
        if (group_of[d] >= n_groups) continue;
        norm[group_of[d]] += v.doc_len[d];
        total += v.doc_len[d];
    }
    avg = total > 0 ? total / n_groups : 1.0;
    for (uint32_t i = 0; i < n_groups; i++) norm[i] = v.k1 * (1.0 - v.b + v.b * norm[i] / avg);
    /* a token met twice has the same posting range: scored once */
    qsort(t.r, t.n, sizeof *t.r, cmp_range);
    for (size_t i = 0; i < t.n; i++)
        if (i == 0 || t.r[i].lo != t.r[i - 1].lo) score_token(&v, t.r[i], group_of, n_groups, norm, tf, touched, scores);
out:
    free(t.r);
    free(norm);
    free(tf);
    free(touched);
    return rc;
}

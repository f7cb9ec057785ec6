/* SPDX-License-Identifier: Apache-2.0 */
/* hybrid_search: BM25 (host->index) and embedding (host->vectors)
 * rankings fused with reciprocal rank fusion,
 *     score(node) = sum over retrievers r of weight_r / (rrf_k + rank_r),
 * ranks 1-based, ties broken by node id.  RRF needs no score calibration
 * between the two retrievers (BM25 scores and cosine similarities are not
 * on one scale), only their orders. */
#include <stdlib.h>
#include <string.h>

#include <codenib/index.h>
#include <codenib/skill.h>
#include <codenib/vectors.h>

#include "cn_skill_util.h"

#define MAX_TOP_K 500
#define MAX_CANDIDATES 1000
#define MAX_RRF_K 100000

typedef struct fused {
    uint32_t node;
    uint32_t bm25_rank;        /* 1-based; 0: not returned by BM25 */
    uint32_t embedding_rank;   /* 1-based; 0: not returned by the embedding search */
    double score;
} fused;

typedef struct params {
    cn_su_search_args a;   /* query, top_k, filter, output options */
    size_t candidates;
    double bm25_weight, embedding_weight, rrf_k;
} params;

static int read_params(const cn_host *h, const cn_json *args, params *p, cn_error *err)
{
    int64_t k;
    int rc;

    memset(p, 0, sizeof *p);
    if ((rc = cn_su_read_search_args(h, args, MAX_TOP_K, &p->a, err)) < 0) return rc;
    if ((rc = cn_su_arg_top_k(h, args, "candidates", MAX_CANDIDATES, &p->candidates, err)) < 0) return rc;
    p->bm25_weight = cn_su_arg_double(h, args, "bm25_weight", 1.0);
    p->embedding_weight = cn_su_arg_double(h, args, "embedding_weight", 0.5);
    if (!(p->bm25_weight >= 0 && p->bm25_weight <= 1e6) || !(p->embedding_weight >= 0 && p->embedding_weight <= 1e6))
        return h->error_set(err, CN_EINVAL, "arguments 'bm25_weight' and 'embedding_weight' must be from 0 to "
                                            "1000000, got %g and %g", p->bm25_weight, p->embedding_weight);
    if (p->bm25_weight == 0 && p->embedding_weight == 0)
        return h->error_set(err, CN_EINVAL, "'bm25_weight' and 'embedding_weight' are both 0: nothing would be "
                                            "ranked; give one of them a positive weight");
    k = cn_su_arg_int(h, args, "rrf_k", 60);
    if (k < 0 || k > MAX_RRF_K)
        return h->error_set(err, CN_EINVAL, "argument 'rrf_k' must be from 0 to %d, got %lld", MAX_RRF_K,
                            (long long)k);
    p->rrf_k = (double)k;
    return 0;
}

/* The entry of `node` in f[0..*n), appended when absent. */
static fused *entry(fused *f, size_t *n, uint32_t node)
{
    for (size_t i = 0; i < *n; i++)
        if (f[i].node == node) return &f[i];
    memset(&f[*n], 0, sizeof f[*n]);
    f[*n].node = node;
    return &f[(*n)++];
}

static int by_score(const void *a, const void *b)
{
    const fused *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

/* Fuses the two rankings into f (room for n_bm25 + n_emb); returns the
 * number of distinct nodes, sorted best first. */
static size_t fuse(const params *p, const cn_search_hit *bm25, size_t n_bm25, const cn_search_hit *emb,
                   size_t n_emb, fused *f)
{
    size_t n = 0;
    for (size_t i = 0; i < n_bm25; i++) {
        fused *e = entry(f, &n, bm25[i].node);
        if (e->bm25_rank == 0) e->bm25_rank = (uint32_t)(i + 1);
    }
    for (size_t i = 0; i < n_emb; i++) {
        fused *e = entry(f, &n, emb[i].node);
        if (e->embedding_rank == 0) e->embedding_rank = (uint32_t)(i + 1);
    }
    /* BM25 first, then the embedding term: one order of addition for
     * every node, so equal inputs give equal scores */
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        if (f[i].bm25_rank) s += p->bm25_weight / (p->rrf_k + f[i].bm25_rank);
        if (f[i].embedding_rank) s += p->embedding_weight / (p->rrf_k + f[i].embedding_rank);
        f[i].score = s;
    }
    qsort(f, n, sizeof *f, by_score);
    return n;
}

static cn_json *rank_json(const cn_json_services *J, uint32_t rank)
{
    return rank ? J->new_int(rank) : J->new_null();
}

static int emit(const cn_host *h, const cn_skill_context *ctx, const params *p, const fused *f, size_t n,
                char **result_json, cn_error *err)
{
    const cn_json_services *J = h->json;
    cn_json *out = J->new_array();
    if (out == NULL) return h->error_set(err, CN_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && i < p->a.top_k; i++) {
        cn_json *node = cn_su_node_json(h, ctx->index, f[i].node, f[i].score, &p->a.opts, err);
        if (node == NULL) {
            J->put(out);
            return err->code;
        }
        J->object_set(node, "bm25_rank", rank_json(J, f[i].bm25_rank));
        J->object_set(node, "embedding_rank", rank_json(J, f[i].embedding_rank));
        J->array_append(out, node);
    }
    return cn_su_emit(h, out, result_json, err);
}

static int x_run(const cn_host *h, const cn_skill_context *ctx, const cn_json *args, char **result_json,
                 cn_error *err)
{
    const cn_index_services *I;
    cn_search_hit *bm25 = NULL, *emb = NULL;
    fused *f = NULL;
    size_t n_bm25 = 0, n_emb = 0, n;
    params p;
    int rc;

    if ((rc = cn_su_require_index(h, ctx, CN_NEEDS_REPO | CN_NEEDS_VECTORS, &I, err)) < 0) return rc;
    if (!CN_HOST_HAS(h, vectors) || h->vectors == NULL)
        return h->error_set(err, CN_EUNSUPPORTED, "this codenib offers no vector search service");
    if ((rc = read_params(h, args, &p, err)) < 0) return rc;
    bm25 = h->alloc(p.candidates * sizeof *bm25);
    emb = h->alloc(p.candidates * sizeof *emb);
    f = h->alloc(2 * p.candidates * sizeof *f);
    if (bm25 == NULL || emb == NULL || f == NULL) {
        rc = h->error_set(err, CN_ENOMEM, "out of memory");
        goto out;
    }
    /* a retriever with weight 0 cannot change the order: not run */
    if (p.bm25_weight > 0 &&
        (rc = I->bm25_search(ctx->index, p.a.query, p.candidates, &p.a.filter, bm25, &n_bm25, err)) < 0)
        goto out;
    if (p.embedding_weight > 0 &&
        (rc = h->vectors->search(h, ctx->vectors, p.a.query, p.candidates, &p.a.filter, emb, &n_emb, err)) < 0)
        goto out;
    n = fuse(&p, bm25, n_bm25, emb, n_emb, f);
    rc = emit(h, ctx, &p, f, n, result_json, err);
out:
    h->free(bm25);
    h->free(emb);
    h->free(f);
    return rc;
}

static int x_create(const cn_host *host, const cn_skill_context *ctx, cn_executor **out, cn_error *err)
{
    return cn_su_simple_executor(host, ctx, x_run, out, err);
}

CN_SKILL_DEFINE(hybrid_search, "hybrid_search", "0.1.0", x_create);

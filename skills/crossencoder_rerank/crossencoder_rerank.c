/* SPDX-License-Identifier: Apache-2.0 */
/* crossencoder_rerank: reranks candidate nodes with a cross-encoder served
 * at a /rerank endpoint (TEI, Jina, Cohere or vLLM shape), through
 * host->model->rerank.  Candidates are the caller's `nodes` or the BM25 top
 * `candidates` for the query; each becomes one document made of its
 * qualified name and its (possibly cut) source. */
#include <math.h>
#include <string.h>

#include <codenib/index.h>
#include <codenib/model.h>
#include <codenib/skill.h>

#include "cn_skill_cands.h"
#include "cn_skill_util.h"

/* ------------------------------------------------------------ scoring --- */

/* "qualname\n<source>": the name carries the path, which a cross-encoder
 * can match as well as the code. */
static char *document(const cn_host *h, const struct cn_index *idx, const cn_sc_cand *c, size_t max_chars)
{
    cn_node_info nd;
    size_t nlen, shown = cn_sc_shown_len(c, max_chars);
    char *doc;
    memset(&nd, 0, sizeof nd);
    nd.struct_size = (uint32_t)sizeof nd;
    if (h->index->node(idx, c->node, &nd, NULL) < 0) nd.qualname = "";
    nlen = strlen(nd.qualname);
    if ((doc = h->alloc(nlen + 1 + shown + 1)) == NULL) return NULL;
    memcpy(doc, nd.qualname, nlen);
    doc[nlen] = '\n';
    memcpy(doc + nlen + 1, c->text, shown);
    doc[nlen + 1 + shown] = '\0';
    return doc;
}

static int score_all(const cn_host *h, const cn_skill_context *ctx, const char *query, cn_sc_cands *cs,
                     size_t max_chars, cn_error *err)
{
    char **docs = h->alloc(cs->n * sizeof *docs);
    double *scores = h->alloc(cs->n * sizeof *scores);
    int rc = 0;

    if (docs == NULL || scores == NULL) rc = h->error_set(err, CN_ENOMEM, "out of memory");
    else memset(docs, 0, cs->n * sizeof *docs);
    for (size_t i = 0; rc == 0 && i < cs->n; i++)
        if ((docs[i] = document(h, ctx->index, &cs->v[i], max_chars)) == NULL)
            rc = h->error_set(err, CN_ENOMEM, "out of memory");
    if (rc == 0)
        rc = h->model->rerank(h, ctx->reranker, query, (const char *const *)docs, cs->n, scores, err);
    for (size_t i = 0; rc == 0 && i < cs->n; i++) cs->v[i].score = scores[i];
    for (size_t i = 0; docs != NULL && i < cs->n; i++) h->free(docs[i]);
    h->free(docs);
    h->free(scores);
    return rc;
}

/* Documents the endpoint left out (score -inf, or not a number) are
 * dropped: it said nothing about them. */
static void drop_unscored(const cn_host *h, cn_sc_cands *cs)
{
    size_t kept = 0;
    for (size_t i = 0; i < cs->n; i++) {
        if (isfinite(cs->v[i].score)) cs->v[kept++] = cs->v[i];
        else h->free(cs->v[i].text);
    }
    cs->n = kept;
}

/* ------------------------------------------------------------ the run --- */

static int check_args(const cn_host *h, const cn_json *args, size_t *top_k, size_t *max_chars, cn_error *err)
{
    if (cn_su_arg_str(h, args, "query") == NULL)
        return h->error_set(err, CN_EINVAL, "argument 'query' must be a string");
    return cn_sc_arg_limits(h, args, top_k, max_chars, err);
}

static int ce_run(const cn_host *h, const cn_skill_context *ctx, const cn_json *args, char **result_json,
                  cn_error *err)
{
    size_t top_k = SIZE_MAX, max_chars = 0;
    const char *query;
    cn_sc_cands cs;
    int rc;

    if ((rc = cn_sc_require(h, ctx, CN_NEEDS_RERANKER, err)) < 0) return rc;
    if ((rc = check_args(h, args, &top_k, &max_chars, err)) < 0) return rc;
    query = cn_su_arg_str(h, args, "query");
    if (cn_su_is_blank(query, strlen(query))) return cn_su_emit(h, h->json->new_array(), result_json, err);
    memset(&cs, 0, sizeof cs);
    rc = cn_sc_collect(h, ctx, args, query, &cs, err);
    if (rc == 0 && cs.n > 0) {
        rc = score_all(h, ctx, query, &cs, max_chars, err);
        if (cn_sc_rerank_recoverable(rc)) {
            /* The candidates are still worth having: keep their order, say why. */
            char why[sizeof err->message];
            memcpy(why, err->message, sizeof why);
            memset(err, 0, sizeof *err);
            rc = cn_sc_emit_unranked(h, ctx->index, &cs, top_k, cn_su_arg_bool(h, args, "return_content", 0), why,
                                     result_json, err);
            cn_sc_free(h, &cs);
            return rc;
        }
    }
    if (rc == 0) {
        drop_unscored(h, &cs);
        rc = cn_sc_emit(h, ctx->index, &cs, top_k, cn_su_arg_bool(h, args, "return_content", 0), result_json, err);
    }
    cn_sc_free(h, &cs);
    return rc;
}

static int ce_create(const cn_host *host, const cn_skill_context *ctx, cn_executor **out, cn_error *err)
{
    return cn_su_simple_executor(host, ctx, ce_run, out, err);
}

CN_SKILL_DEFINE(crossencoder_rerank, "crossencoder_rerank", "0.1.0", ce_create);

/* SPDX-License-Identifier: Apache-2.0 */
/* embedding_search: top-k nodes by cosine similarity between the query's
 * embedding and the nodes' (host->vectors over the context's vector
 * index).  Results are ranked nodes; lines are 0-based here and become
 * 1-based at the host boundary (outputs.line_fields). */
#include <codenib/index.h>
#include <codenib/skill.h>
#include <codenib/vectors.h>

#include "cn_skill_util.h"

#define MAX_TOP_K 500

static int e_run(const cn_host *h, const cn_skill_context *ctx, const cn_json *args, char **result_json,
                 cn_error *err)
{
    const cn_index_services *I;
    cn_su_search_args a;
    cn_search_hit *hits;
    size_t n_hits = 0;
    int rc;

    if ((rc = cn_su_require_index(h, ctx, CN_NEEDS_REPO | CN_NEEDS_VECTORS, &I, err)) < 0) return rc;
    if (!CN_HOST_HAS(h, vectors) || h->vectors == NULL)
        return h->error_set(err, CN_EUNSUPPORTED, "this codenib offers no vector search service");
    if ((rc = cn_su_read_search_args(h, args, MAX_TOP_K, &a, err)) < 0) return rc;
    if ((hits = h->alloc(a.top_k * sizeof *hits)) == NULL) return h->error_set(err, CN_ENOMEM, "out of memory");
    rc = h->vectors->search(h, ctx->vectors, a.query, a.top_k, &a.filter, hits, &n_hits, err);
    if (rc == 0) rc = cn_su_hits_emit(h, ctx->index, hits, n_hits, &a.opts, result_json, err);
    h->free(hits);
    return rc;
}

static int e_create(const cn_host *host, const cn_skill_context *ctx, cn_executor **out, cn_error *err)
{
    return cn_su_simple_executor(host, ctx, e_run, out, err);
}

CN_SKILL_DEFINE(embedding_search, "embedding_search", "0.1.0", e_create);

/* embedding_search: top-k nodes by cosine similarity between the query's
 * embedding and the nodes' (host->vectors over the context's vector
 * index).  Results are ranked nodes; lines are 0-based here and become
 * 1-based at the host boundary (outputs.line_fields). */
#include <string.h>

#include <codenib/index.h>
#include <codenib/skill.h>
#include <codenib/vectors.h>

#include "cn_skill_util.h"

#define MAX_TOP_K 500

static int e_run(const cn_host *h, const cn_skill_context *ctx, const cn_json *args, char **result_json,
                 cn_error *err)
{
    const cn_json_services *J = h->json;
    const cn_index_services *I;
    cn_search_filter filter;
    cn_search_hit *hits = NULL;
    cn_su_node_opts o;
    cn_json *out;
    size_t n_hits = 0, top_k;
    const char *query;
    int rc;

    if ((rc = cn_su_require_index(h, ctx, CN_NEEDS_REPO | CN_NEEDS_VECTORS, &I, err)) < 0) return rc;
    if (!CN_HOST_HAS(h, vectors) || h->vectors == NULL)
        return h->error_set(err, CN_EUNSUPPORTED, "this codenib offers no vector search service");
    query = cn_su_arg_str(h, args, "query");
    if (query == NULL) return h->error_set(err, CN_EINVAL, "argument 'query' must be a string");
    if ((rc = cn_su_arg_top_k(h, args, "top_k", MAX_TOP_K, &top_k, err)) < 0) return rc;
    memset(&o, 0, sizeof o);
    o.names_only = cn_su_arg_bool(h, args, "names_only", 0);
    o.content = cn_su_arg_bool(h, args, "return_content", 1);
    o.gutter = cn_su_arg_bool(h, args, "wrap_with_line_numbers", 0);
    memset(&filter, 0, sizeof filter);
    filter.struct_size = (uint32_t)sizeof filter;
    filter.exclude_tests = cn_su_arg_bool(h, args, "filter_test", 0);
    filter.path_prefix = cn_su_arg_str(h, args, "path_prefix");
    if ((rc = cn_su_kinds_filter(h, J->object_get(args, "kinds"), "kinds", &filter.kinds, err)) < 0)
        return rc;
    if ((hits = h->alloc(top_k * sizeof *hits)) == NULL) return h->error_set(err, CN_ENOMEM, "out of memory");
    if ((rc = h->vectors->search(h, ctx->vectors, query, top_k, &filter, hits, &n_hits, err)) < 0) {
        h->free(hits);
        return rc;
    }
    out = J->new_array();
    for (size_t i = 0; i < n_hits; i++) {
        cn_json *node = cn_su_node_json(h, ctx->index, hits[i].node, hits[i].score, &o, err);
        if (node == NULL) {
            J->put(out);
            h->free(hits);
            return err->code;
        }
        J->array_append(out, node);
    }
    h->free(hits);
    return cn_su_emit(h, out, result_json, err);
}

static int e_create(const cn_host *host, const cn_skill_context *ctx, cn_executor **out, cn_error *err)
{
    return cn_su_simple_executor(host, ctx, e_run, out, err);
}

CN_SKILL_DEFINE(embedding_search, "embedding_search", "0.1.0", e_create);

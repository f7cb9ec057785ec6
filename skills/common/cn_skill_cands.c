/* SPDX-License-Identifier: Apache-2.0 */
/* Candidates of the rerank skills (see cn_skill_cands.h). */
#include "cn_skill_cands.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cn_skill_util.h"

#define MAX_CANDIDATES 500
#define MAX_NODES 1000
#define MAX_CHARS 1000000

void cn_sc_free(const cn_host *h, cn_sc_cands *cs)
{
    for (size_t i = 0; i < cs->n; i++) h->free(cs->v[i].text);
    h->free(cs->v);
}

int cn_sc_require(const cn_host *h, const cn_skill_context *ctx, unsigned needs, cn_error *err)
{
    const cn_index_services *I;
    int rc = cn_su_require_index(h, ctx, needs, &I, err);
    return rc < 0 ? rc : cn_su_require_model(h, err);
}

int cn_sc_arg_limits(const cn_host *h, const cn_json *args, size_t *top_k, size_t *max_chars, cn_error *err)
{
    int64_t k = cn_su_arg_int(h, args, "top_k", -1), mc = cn_su_arg_int(h, args, "max_chars_per_node", 2000);
    if (h->json->object_get(args, "top_k") != NULL && k < 1)
        return h->error_set(err, CN_EINVAL, "argument 'top_k' must be at least 1 (or null for all), got %lld",
                            (long long)k);
    *top_k = k < 1 ? SIZE_MAX : (size_t)k;
    if (mc < 1 || mc > MAX_CHARS)
        return h->error_set(err, CN_EINVAL, "argument 'max_chars_per_node' must be between 1 and %d, got %lld",
                            MAX_CHARS, (long long)mc);
    *max_chars = (size_t)mc;
    return 0;
}

/* ------------------------------------------------------------ collect --- */

/* Takes `text` over.  Nodes without content are left out, as are repeats
 * (a list merged from two retrievers may name a node twice).  `first` is
 * the first-stage score (NaN: unknown). */
static int cands_add(const cn_host *h, cn_sc_cands *cs, uint32_t node, char *text, size_t len, double first,
                     cn_error *err)
{
    int seen = 0;
    for (size_t i = 0; i < cs->n && !seen; i++) seen = cs->v[i].node == node;
    if (seen || text == NULL || cn_su_is_blank(text, len)) {
        h->free(text);
        return 0;
    }
    if (cs->n == cs->cap) {
        size_t cap = cs->cap ? cs->cap * 2 : 16;
        cn_sc_cand *v = h->realloc(cs->v, cap * sizeof *v);
        if (v == NULL) {
            h->free(text);
            return h->error_set(err, CN_ENOMEM, "out of memory");
        }
        cs->v = v;
        cs->cap = cap;
    }
    memset(&cs->v[cs->n], 0, sizeof cs->v[cs->n]);
    cs->v[cs->n].node = node;
    cs->v[cs->n].text = text;
    cs->v[cs->n].len = len;
    cs->v[cs->n].first = first;
    cs->v[cs->n].has_first = isfinite(first);
    cs->n++;
    return 0;
}

/* The node's source from the index; NULL (logged) when it cannot be read,
 * e.g. a file deleted since the compile: that candidate is skipped. */
static char *read_node_text(const cn_host *h, const struct cn_index *idx, uint32_t node, size_t *len)
{
    char *text = NULL;
    cn_error e;
    memset(&e, 0, sizeof e);
    if (h->index->node_text(h, idx, node, &text, len, &e) < 0) {
        h->log(h, CN_LOG_WARNING, "node %u left out: %s", node, e.message);
        return NULL;
    }
    return text;
}

/* A whole number in the node id range; JSON writers may give 3 as 3.0. */
static int node_id_of(const cn_host *h, const cn_json *item, int64_t *id)
{
    const cn_json *v = h->json->object_get(item, "node_id");
    cn_json_type t = h->json->type(v);
    double d = h->json->get_double(v);
    if (t == CN_JSON_INT) *id = h->json->get_int(v);
    else if (t == CN_JSON_DOUBLE && d == floor(d) && fabs(d) < 9e15) *id = (int64_t)d;
    else return -1;
    return *id >= 0 && *id <= (int64_t)UINT32_MAX ? 0 : -1;
}

/* The item's own content when it has one (what the caller wants read),
 * else the node's source. */
static int given_text(const cn_host *h, const struct cn_index *idx, const cn_json *item, uint32_t node,
                      char **text, size_t *len, cn_error *err)
{
    const char *content = h->json->get_string(h->json->object_get(item, "content"));
    if (content == NULL) {
        *text = read_node_text(h, idx, node, len);
        return 0;
    }
    *len = strlen(content);
    if ((*text = h->alloc(*len + 1)) == NULL) return h->error_set(err, CN_ENOMEM, "out of memory");
    memcpy(*text, content, *len + 1);
    return 0;
}

/* The item's own "score" (what the retrieval skill gave it), NaN when it
 * has none. */
static double given_score(const cn_host *h, const cn_json *item)
{
    const cn_json *v = h->json->object_get(item, "score");
    cn_json_type t = h->json->type(v);
    return t == CN_JSON_INT || t == CN_JSON_DOUBLE ? h->json->get_double(v) : NAN;
}

/* One item of `nodes`: a result object of a retrieval skill, checked
 * against this index so results of another compile are not misread. */
static int add_given(const cn_host *h, const struct cn_index *idx, const cn_json *item, size_t i,
                     cn_sc_cands *cs, cn_error *err)
{
    const cn_json_services *J = h->json;
    cn_node_info nd;
    const char *name;
    char *text = NULL;
    size_t len = 0;
    int64_t id;
    int rc;

    if (J->type(item) != CN_JSON_OBJECT || node_id_of(h, item, &id) < 0)
        return h->error_set(err, CN_EINVAL,
                            "argument 'nodes': item %zu has no integer node_id (pass the results of a "
                            "retrieval skill such as bm25_search unchanged)",
                            i);
    memset(&nd, 0, sizeof nd);
    nd.struct_size = (uint32_t)sizeof nd;
    if (h->index->node(idx, (uint32_t)id, &nd, err) < 0)
        return h->error_set(err, CN_EINVAL,
                            "argument 'nodes': item %zu: node_id %lld is not in this repository's index "
                            "(were the results made with another compile?)",
                            i, (long long)id);
    name = J->get_string(J->object_get(item, "node_name"));
    if (name != NULL && strcmp(name, nd.qualname) != 0)
        return h->error_set(err, CN_EINVAL,
                            "argument 'nodes': item %zu names '%s' but node_id %lld is '%s' in this index "
                            "(were the results made with another compile?)",
                            i, name, (long long)id, nd.qualname);
    if ((rc = given_text(h, idx, item, nd.id, &text, &len, err)) < 0) return rc;
    return cands_add(h, cs, nd.id, text, len, given_score(h, item), err);
}

static int collect_given(const cn_host *h, const struct cn_index *idx, const cn_json *nodes, cn_sc_cands *cs,
                         cn_error *err)
{
    size_t n = h->json->array_length(nodes);
    if (n > MAX_NODES)
        return h->error_set(err, CN_EINVAL, "argument 'nodes' holds %zu items; at most %d can be reranked", n,
                            MAX_NODES);
    for (size_t i = 0; i < n; i++) {
        int rc = add_given(h, idx, h->json->array_get(nodes, i), i, cs, err);
        if (rc < 0) return rc;
    }
    return 0;
}

static int collect_bm25(const cn_host *h, const struct cn_index *idx, const char *query, size_t k,
                        cn_sc_cands *cs, cn_error *err)
{
    cn_search_filter filter;
    cn_search_hit *hits = h->alloc(k * sizeof *hits);
    size_t n_hits = 0;
    int rc;

    if (hits == NULL) return h->error_set(err, CN_ENOMEM, "out of memory");
    memset(&filter, 0, sizeof filter);
    filter.struct_size = (uint32_t)sizeof filter;
    rc = h->index->bm25_search(idx, query, k, &filter, hits, &n_hits, err);
    for (size_t i = 0; rc == 0 && i < n_hits; i++) {
        size_t len = 0;
        char *text = read_node_text(h, idx, hits[i].node, &len);
        rc = cands_add(h, cs, hits[i].node, text, len, hits[i].score, err);
    }
    h->free(hits);
    return rc;
}

int cn_sc_collect(const cn_host *h, const cn_skill_context *ctx, const cn_json *args, const char *query,
                  cn_sc_cands *cs, cn_error *err)
{
    const cn_json *nodes = h->json->object_get(args, "nodes");
    size_t k;
    int rc;
    if (nodes != NULL) {
        if (h->json->type(nodes) != CN_JSON_ARRAY)
            return h->error_set(err, CN_EINVAL, "argument 'nodes' must be a list of result objects");
        return collect_given(h, ctx->index, nodes, cs, err);
    }
    if ((rc = cn_su_arg_top_k(h, args, "candidates", MAX_CANDIDATES, &k, err)) < 0) return rc;
    return collect_bm25(h, ctx->index, query, k, cs, err);
}

size_t cn_sc_shown_len(const cn_sc_cand *c, size_t max_chars)
{
    size_t chars = 0;
    for (size_t i = 0; i < c->len; i++)
        if (((unsigned char)c->text[i] & 0xC0u) != 0x80u && chars++ == max_chars) return i;
    return c->len;
}

/* ------------------------------------------------------------ results --- */

/* Highest score first; equal scores keep the candidates' order, which is
 * their order in the one array the pointers point into. */
static int by_score(const void *a, const void *b)
{
    const cn_sc_cand *x = *(const cn_sc_cand *const *)a, *y = *(const cn_sc_cand *const *)b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x < y ? -1 : x > y;
}

int cn_sc_emit(const cn_host *h, const struct cn_index *idx, const cn_sc_cands *cs, size_t top_k,
               int with_content, char **result_json, cn_error *err)
{
    const cn_json_services *J = h->json;
    const cn_sc_cand **order = h->alloc((cs->n ? cs->n : 1) * sizeof *order);
    cn_su_node_opts o;
    cn_json *out;

    if (order == NULL) return h->error_set(err, CN_ENOMEM, "out of memory");
    for (size_t i = 0; i < cs->n; i++) order[i] = &cs->v[i];
    qsort(order, cs->n, sizeof *order, by_score);
    memset(&o, 0, sizeof o);
    out = J->new_array();
    for (size_t i = 0; i < cs->n && i < top_k; i++) {
        cn_json *node = cn_su_node_json(h, idx, order[i]->node, order[i]->score, &o, err);
        if (node == NULL) {
            J->put(out);
            h->free(order);
            return err->code;
        }
        if (with_content) J->object_set(node, "content", J->new_string_len(order[i]->text, order[i]->len));
        J->array_append(out, node);
    }
    h->free(order);
    return cn_su_emit(h, out, result_json, err);
}

int cn_sc_rerank_recoverable(int code)
{
    return code < 0 && code != CN_ENOMEM;
}

int cn_sc_emit_unranked(const cn_host *h, const struct cn_index *idx, const cn_sc_cands *cs, size_t top_k,
                        int with_content, const char *why, char **result_json, cn_error *err)
{
    const cn_json_services *J = h->json;
    cn_su_node_opts o;
    cn_json *out = J->new_array();

    h->log(h, CN_LOG_WARNING, "the rerank failed, so the %zu candidate%s keep%s the first-stage order: %s", cs->n,
           cs->n == 1 ? "" : "s", cs->n == 1 ? "s" : "", why);
    for (size_t i = 0; i < cs->n && i < top_k; i++) {
        const cn_sc_cand *c = &cs->v[i];
        cn_json *node;
        memset(&o, 0, sizeof o);
        o.no_score = !c->has_first;
        if ((node = cn_su_node_json(h, idx, c->node, c->first, &o, err)) == NULL) {
            J->put(out);
            return err->code;
        }
        if (with_content) J->object_set(node, "content", J->new_string_len(c->text, c->len));
        J->object_set(node, "rerank_error", J->new_string(why));
        J->array_append(out, node);
    }
    return cn_su_emit(h, out, result_json, err);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* lsp-static: codenib's route extension ("codenib/route").
 *
 * Symbol seeds become anchors (each resolved like a definition request,
 * exact matches only, in seed order), then the anchors' one-hop
 * neighbours over calls, references, inherits and imports in both
 * directions fill the rest of top_k.  A neighbour scores
 *     weight(edge) / (1 + rank of its anchor)
 * with weights calls 1, inherits 0.875, references 0.75, imports 0.5, so
 * the first anchor's callers and callees come before a later anchor's, and
 * calls before imports.  Ties go to the outgoing direction, then the use
 * site's line, then the node id: the same request always gives the same
 * order.  A seed brings its best-matching definitions only (not a
 * prototype next to its definition, at most MAX_PER_SEED of an ambiguous
 * name).  When no seed resolves, BM25 over the query text supplies the
 * anchors instead (half of top_k when neighbours are wanted).
 *
 * metadata.fallback_reason: query_text_bm25 (anchors from the query),
 * query_text_bm25_unavailable (no seed resolved and the index has no
 * BM25 part), no_seed_resolved (no seed resolved, no query);
 * metadata.unresolved_seeds lists the seeds that matched nothing. */
#include <stdlib.h>
#include <string.h>

#include "cn_lsp_static.h"

#define MAX_PER_SEED 4   /* anchors one seed may bring */

typedef struct anchor {
    uint32_t node;
    double score;
    const char *seed;   /* borrowed from the request; NULL for BM25 anchors */
} anchor;

typedef struct neighbor {
    uint32_t node;
    double score;
    size_t rank;        /* of its anchor */
    int type, out;
    uint32_t line;
} neighbor;

typedef struct route {
    const cn_lsp_static *p;
    anchor *anchors;
    size_t n_anchors, cap_anchors;
    neighbor *nbrs;
    size_t n_nbrs, cap_nbrs;
} route;

static double edge_weight(int type)
{
    switch (type) {
    case CN_EDGE_CALLS: return 1.0;
    case CN_EDGE_INHERITS: return 0.875;
    case CN_EDGE_REFERENCES: return 0.75;
    case CN_EDGE_IMPORTS: return 0.5;
    }
    return 0.25;
}

static int is_anchor(const route *r, uint32_t node)
{
    for (size_t i = 0; i < r->n_anchors; i++)
        if (r->anchors[i].node == node) return 1;
    return 0;
}

static int add_anchor(route *r, uint32_t node, double score, const char *seed)
{
    if (is_anchor(r, node)) return 0;
    if (r->n_anchors == r->cap_anchors) {
        size_t cap = r->cap_anchors ? r->cap_anchors * 2 : 16;
        anchor *n = r->p->host->realloc(r->anchors, cap * sizeof *n);
        if (n == NULL) return CN_ENOMEM;
        r->anchors = n;
        r->cap_anchors = cap;
    }
    r->anchors[r->n_anchors].node = node;
    r->anchors[r->n_anchors].score = score;
    r->anchors[r->n_anchors].seed = seed;
    r->n_anchors++;
    return 1;
}

static int add_neighbor(route *r, const neighbor *nb)
{
    if (r->n_nbrs == r->cap_nbrs) {
        size_t cap = r->cap_nbrs ? r->cap_nbrs * 2 : 32;
        neighbor *n = r->p->host->realloc(r->nbrs, cap * sizeof *n);
        if (n == NULL) return CN_ENOMEM;
        r->nbrs = n;
        r->cap_nbrs = cap;
    }
    r->nbrs[r->n_nbrs++] = *nb;
    return 0;
}

static int nbr_cmp(const void *a, const void *b)
{
    const neighbor *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    if (x->out != y->out) return x->out ? -1 : 1;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* Each seed's definitions, in seed order; unresolved seeds are listed. */
static int seed_anchors(route *r, const cn_json *symbols, size_t top_k, cn_json *unresolved, cn_error *err)
{
    const cn_lsp_static *p = r->p;
    const cn_json_services *J = p->J;
    size_t n = J->array_length(symbols);

    for (size_t i = 0; i < n; i++) {
        const char *seed = J->get_string(J->array_get(symbols, i));
        cn_lsp_cands c = {0};
        int fz, rc;
        if (seed == NULL)
            return p->host->error_set(err, CN_EINVAL, "LSP route request: 'symbols' must be a list of strings "
                                                      "(item %zu is not a string)", i);
        rc = cn_lsp_resolve_symbol(p, seed, NULL, 0, &c, &fz, err);
        if (rc == 0 && c.len == 0) J->array_append(unresolved, J->new_string(seed));
        /* the best matches of the seed only: a definition, not also its
         * prototype; an ambiguous name brings a few of its definitions */
        for (size_t k = 0; rc == 0 && k < c.len && k < MAX_PER_SEED && r->n_anchors < top_k; k++)
            if (c.items[k].score > c.items[0].score - CN_LSP_PENALTY_PROTOTYPE &&
                add_anchor(r, c.items[k].node, c.items[k].score, seed) < 0)
                rc = p->host->error_set(err, CN_ENOMEM, "out of memory");
        cn_lsp_cands_free(p, &c);
        if (rc < 0) return rc;
    }
    return 0;
}

/* BM25 over the query text when no seed resolved. */
static int query_anchors(route *r, const char *query, size_t k, const char **fallback, cn_error *err)
{
    const cn_lsp_static *p = r->p;
    cn_search_hit *hits = p->host->alloc(k * sizeof *hits);
    size_t n = 0;
    cn_error e2;
    int rc = 0;

    if (hits == NULL) return p->host->error_set(err, CN_ENOMEM, "out of memory");
    memset(&e2, 0, sizeof e2);
    if (p->I->bm25_search(p->idx, query, k, NULL, hits, &n, &e2) < 0) {
        p->host->free(hits);
        if (e2.code != CN_EUNSUPPORTED) return p->host->error_set(err, e2.code, "%s", e2.message);
        *fallback = "query_text_bm25_unavailable";
        return 0;
    }
    *fallback = "query_text_bm25";
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (add_anchor(r, hits[i].node, hits[i].score, NULL) < 0)
            rc = p->host->error_set(err, CN_ENOMEM, "out of memory");
    p->host->free(hits);
    return rc;
}

static int collect_neighbors(route *r, cn_error *err)
{
    const cn_lsp_static *p = r->p;
    for (size_t a = 0; a < r->n_anchors; a++) {
        for (int out = 1; out >= 0; out--) {
            cn_edge_info *es = NULL;
            size_t n = 0;
            int rc = cn_lsp_edges(p, r->anchors[a].node, CN_LSP_USE_MASK, out ? CN_EDGES_OUT : CN_EDGES_IN, &es,
                                  &n, err);
            if (rc < 0) return rc;
            for (size_t i = 0; rc == 0 && i < n; i++) {
                neighbor nb;
                if (!es[i].resolved || es[i].node == UINT32_MAX || is_anchor(r, es[i].node)) continue;
                nb.node = es[i].node;
                nb.rank = a;
                nb.score = edge_weight(es[i].type) / (double)(1 + a);
                nb.type = es[i].type;
                nb.out = out;
                nb.line = es[i].line;
                if (add_neighbor(r, &nb) < 0) rc = p->host->error_set(err, CN_ENOMEM, "out of memory");
            }
            p->host->free(es);
            if (rc < 0) return rc;
        }
    }
    if (r->n_nbrs > 1) qsort(r->nbrs, r->n_nbrs, sizeof *r->nbrs, nbr_cmp);
    return 0;
}

static int emit_anchor(const route *r, const anchor *a, cn_json *nodes, cn_error *err)
{
    const cn_json_services *J = r->p->J;
    cn_json *o = cn_lsp_node_json(r->p, a->node, a->score, err);
    if (o == NULL) return err->code ? err->code : CN_ENOMEM;
    J->object_set(o, "role", J->new_string("anchor"));
    J->object_set(o, "seed", a->seed ? J->new_string(a->seed) : J->new_null());
    J->array_append(nodes, o);
    return 0;
}

static int emit_neighbor(const route *r, const neighbor *nb, cn_json *nodes, cn_error *err)
{
    const cn_lsp_static *p = r->p;
    const cn_json_services *J = p->J;
    const anchor *from = &r->anchors[nb->rank];
    cn_node_info fn;
    cn_json *o, *via;

    memset(&fn, 0, sizeof fn);
    fn.struct_size = (uint32_t)sizeof fn;
    if (p->I->node(p->idx, from->node, &fn, err) < 0) return err->code;
    if ((o = cn_lsp_node_json(p, nb->node, nb->score, err)) == NULL) return err->code ? err->code : CN_ENOMEM;
    if ((via = J->new_object()) == NULL) {
        J->put(o);
        return p->host->error_set(err, CN_ENOMEM, "out of memory");
    }
    J->object_set(via, "edge", J->new_string(cn_lsp_edge_name(nb->type)));
    J->object_set(via, "direction", J->new_string(nb->out ? "out" : "in"));
    J->object_set(via, "from", J->new_int(from->node));
    J->object_set(via, "from_name", J->new_string(fn.qualname));
    J->object_set(via, "line", J->new_int(nb->line));
    J->object_set(o, "role", J->new_string("neighbor"));
    J->object_set(o, "via", via);
    J->array_append(nodes, o);
    return 0;
}

static int route_emit(route *r, size_t top_k, cn_json *nodes, cn_error *err)
{
    size_t emitted = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < r->n_anchors && emitted < top_k; i++, emitted++)
        rc = emit_anchor(r, &r->anchors[i], nodes, err);
    for (size_t i = 0; rc == 0 && i < r->n_nbrs && emitted < top_k; i++) {
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++) seen = r->nbrs[k].node == r->nbrs[i].node;
        if (seen) continue;   /* reached again by a weaker edge */
        rc = emit_neighbor(r, &r->nbrs[i], nodes, err);
        emitted++;
    }
    return rc;
}

int cn_lsp_route(const cn_lsp_static *p, const cn_json *req, cn_json *nodes, cn_json *meta, const char **fallback,
                 cn_error *err)
{
    const cn_json_services *J = p->J;
    const cn_json *symbols = J->object_get(req, "symbols");
    cn_json *unresolved;
    const char *query;
    size_t top_k;
    int neighbors, rc;
    route r;

    *fallback = NULL;
    if ((rc = cn_lsp_req_top_k(p, req, 12, &top_k, err)) < 0) return rc;
    if ((rc = cn_lsp_req_bool(p, req, "include_neighbors", 1, &neighbors, err)) < 0) return rc;
    if ((rc = cn_lsp_req_str(p, req, "query", &query, err)) < 0) return rc;
    if (symbols != NULL && J->type(symbols) != CN_JSON_ARRAY)
        return p->host->error_set(err, CN_EINVAL, "LSP route request: 'symbols' must be a list of strings");
    if ((symbols == NULL || J->array_length(symbols) == 0) && (query == NULL || *query == '\0'))
        return p->host->error_set(err, CN_EINVAL, "LSP route request: give 'symbols' (names to start from) "
                                                  "or a 'query' text");
    if ((unresolved = J->new_array()) == NULL) return p->host->error_set(err, CN_ENOMEM, "out of memory");
    J->object_set(meta, "unresolved_seeds", unresolved);
    memset(&r, 0, sizeof r);
    r.p = p;
    if (symbols != NULL) rc = seed_anchors(&r, symbols, top_k, unresolved, err);
    if (rc == 0 && r.n_anchors == 0) {
        if (query != NULL && *query != '\0')
            rc = query_anchors(&r, query, neighbors ? (top_k + 1) / 2 : top_k, fallback, err);
        else
            *fallback = "no_seed_resolved";
    }
    if (rc == 0 && neighbors && r.n_anchors < top_k) rc = collect_neighbors(&r, err);
    if (rc == 0) rc = route_emit(&r, top_k, nodes, err);
    p->host->free(r.anchors);
    p->host->free(r.nbrs);
    return rc;
}

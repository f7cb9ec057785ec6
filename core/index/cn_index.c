/* Opened indexes and the index services of the host table. */
#include "cn_index.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <codenib/lang.h>

#include "../plugin/cn_backends.h"
#include "../plugin/cn_host.h"
#include "cn_compile.h"

int cn_index_open(const char *dir, const char *repo_root, struct cn_index **out)
{
    struct cn_index *x = calloc(1, sizeof *x);
    char *p = NULL;
    int rc;

    *out = NULL;
    if (x == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    pthread_mutex_init(&x->lsp_lock, NULL);
    x->dir = cn_strdup(dir);
    x->repo_root = cn_strdup(repo_root);
    p = cn_path_join(dir, CN_NODES_FILE);
    if (x->dir == NULL || x->repo_root == NULL || p == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = cn_nodes_open(p, &x->nodes)) < 0) goto fail;
    free(p);
    p = cn_path_join(dir, CN_BM25_INDEX_FILE);
    if (p == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto fail;
    }
    rc = cn_bm25_open(p, &x->bm25);
    if (rc == CN_ENOTFOUND) {
        cn_error_clear();   /* compiled without --index bm25 */
    } else if (rc < 0) {
        goto fail;
    } else if (cn_bm25_doc_count(x->bm25) != cn_nodes_count(x->nodes)) {
        rc = cn_error_set(CN_ECORRUPT, "%s: the BM25 index has %u documents for %u nodes; "
                                       "recompile with `codenib compile --rebuild`",
                          dir, cn_bm25_doc_count(x->bm25), cn_nodes_count(x->nodes));
        goto fail;
    }
    free(p);
    p = cn_path_join(dir, CN_GRAPH_FILE);
    if (p == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto fail;
    }
    rc = cn_graph_open(p, &x->graph);
    if (rc == CN_ENOTFOUND) {
        cn_error_clear();   /* compiled without the graph */
    } else if (rc < 0) {
        goto fail;
    } else if (cn_graph_node_count(x->graph) != cn_nodes_count(x->nodes)) {
        rc = cn_error_set(CN_ECORRUPT, "%s: the graph has %u nodes for %u in the nodes index; "
                                       "recompile with `codenib compile --rebuild`",
                          dir, cn_graph_node_count(x->graph), cn_nodes_count(x->nodes));
        goto fail;
    }
    free(p);
    *out = x;
    return 0;
fail:
    free(p);
    cn_index_close(x);
    return rc;
}

int cn_index_open_repo(const char *repo, const char *cache_dir, struct cn_index **out)
{
    char *cache = NULL, *dir = NULL, *root = realpath(repo, NULL);
    int rc;

    *out = NULL;
    if (root == NULL) return cn_error_set(CN_ENOTFOUND, "repository %s does not exist", repo);
    if (cache_dir) cache = cn_strdup(cache_dir);
    else if ((rc = cn_cache_dir_for(root, &cache)) < 0) goto out;
    if ((rc = cn_cache_current(cache, &dir)) == CN_ENOTFOUND) {
        rc = cn_error_set(CN_ENOTFOUND, "%s has not been compiled (no index in %s): run `codenib "
                                        "compile %s`", repo, cache, repo);
        goto out;
    }
    if (rc < 0) goto out;   /* a damaged or refused cache says so itself */
    rc = cn_index_open(dir, root, out);
out:
    free(root);
    free(cache);
    free(dir);
    return rc;
}

void cn_index_close(struct cn_index *x)
{
    if (x == NULL) return;
    cn_nodes_close(x->nodes);
    cn_bm25_close(x->bm25);
    cn_graph_close(x->graph);
    cn_backend_instance_free(x->lsp);
    free(x->lsp_error);
    pthread_mutex_destroy(&x->lsp_lock);
    free(x->dir);
    free(x->repo_root);
    free(x);
}

/* ---- services ----------------------------------------------------------- */

static uint32_t svc_node_count(const struct cn_index *x)
{
    return x && x->nodes ? cn_nodes_count(x->nodes) : 0;
}

static void to_info(const cn_node_view *v, cn_node_info *out)
{
    out->struct_size = (uint32_t)sizeof *out;
    out->id = v->id;
    out->kind = v->kind;
    out->flags = v->flags;
    out->start_line = v->start_line - 1;   /* skills count from 0 */
    out->end_line = v->end_line - 1;
    out->parent = v->parent;
    out->name = v->name;
    out->qualname = v->qualname;
    out->path = v->path;
    out->language = v->language;
    out->is_test = v->is_test;
}

static int svc_node(const struct cn_index *x, uint32_t id, cn_node_info *out, cn_error *err)
{
    cn_node_view v;
    if (cn_nodes_get(x->nodes, id, &v) < 0) return cn_error_export(err);
    to_info(&v, out);
    return 0;
}

static int svc_node_by_qualname(const struct cn_index *x, const char *q, uint32_t *id, cn_error *err)
{
    if (cn_nodes_find_qualname(x->nodes, q, id) < 0) return cn_error_export(err);
    return 0;
}

static size_t svc_nodes_by_name(const struct cn_index *x, const char *name, uint32_t *ids, size_t max)
{
    return cn_nodes_find_name(x->nodes, name, ids, max);
}

static int svc_node_at(const struct cn_index *x, const char *path, uint32_t line, uint32_t *id,
                       cn_error *err)
{
    if (cn_nodes_at(x->nodes, path, line + 1, id) < 0) return cn_error_export(err);
    return 0;
}

typedef struct filter_ctx {
    const cn_nodes *nodes;
    const cn_search_filter *f;
    size_t prefix_len;
} filter_ctx;

static bool accept(uint32_t doc, void *data)
{
    filter_ctx *c = data;
    cn_node_view v;
    if (cn_nodes_get(c->nodes, doc, &v) < 0) return false;
    if (c->f->exclude_tests && (v.is_test || (v.flags & CN_NODE_F_TEST))) return false;
    if (c->f->kinds && !(c->f->kinds & (1u << (v.kind & 31)))) return false;
    if (c->f->path_prefix && strncmp(v.path, c->f->path_prefix, c->prefix_len) != 0) return false;
    return true;
}

static int svc_bm25_search(const struct cn_index *x, const char *query, size_t k,
                           const cn_search_filter *f, cn_search_hit *hits, size_t *n_hits, cn_error *err)
{
    cn_bm25_hit *tmp;
    filter_ctx fc;
    size_t n = 0;
    int rc;

    *n_hits = 0;
    if (x->bm25 == NULL)
        return cn_error_fill(err, CN_EUNSUPPORTED, "this index has no BM25 part: compile with "
                                                   "`codenib compile --index bm25`");
    if (k == 0) return 0;
    tmp = malloc(k * sizeof *tmp);
    if (tmp == NULL) return cn_error_fill(err, CN_ENOMEM, "out of memory");
    fc.nodes = x->nodes;
    fc.f = f;
    fc.prefix_len = f && f->path_prefix ? strlen(f->path_prefix) : 0;
    rc = cn_bm25_search(x->bm25, query, k, f ? accept : NULL, &fc, tmp, &n);
    if (rc < 0) {
        free(tmp);
        return cn_error_export(err);
    }
    for (size_t i = 0; i < n; i++) {
        hits[i].node = tmp[i].doc;
        hits[i].score = tmp[i].score;
    }
    *n_hits = n;
    free(tmp);
    return 0;
}

static int svc_node_text(const cn_host *host, const struct cn_index *x, uint32_t id, char **text,
                         size_t *len, cn_error *err)
{
    cn_node_view v;
    char *src = NULL, *out;
    size_t n = 0, a = 0, b;
    uint32_t line = 1;
    int rc;

    *text = NULL;
    if (len) *len = 0;
    if (cn_nodes_get(x->nodes, id, &v) < 0) return cn_error_export(err);
    if ((rc = cn_confined_read(x->repo_root, v.path, 0, &src, &n)) < 0) return cn_error_export(err);
    while (a < n && line < v.start_line) {
        if (src[a++] == '\n') line++;
    }
    b = a;
    while (b < n && line <= v.end_line) {
        if (src[b++] == '\n') line++;
    }
    out = host->alloc(b - a + 1);
    if (out == NULL) {
        free(src);
        return cn_error_fill(err, CN_ENOMEM, "out of memory");
    }
    memcpy(out, src + a, b - a);
    out[b - a] = '\0';
    free(src);
    *text = out;
    if (len) *len = b - a;
    return 0;
}

static void to_edge(const cn_graph_edge *e, cn_edge_info *out)
{
    out->struct_size = (uint32_t)sizeof *out;
    out->node = e->node;
    out->type = e->type;
    out->resolved = e->resolved;
    out->line = e->line ? e->line - 1 : UINT32_MAX;   /* skills count from 0 */
    out->column = e->column;
    out->name = e->name ? e->name : "";
}

/* Copies graph edges out through a bounded temporary array. */
static size_t convert(size_t total, const cn_graph_edge *tmp, size_t got, cn_edge_info *out)
{
    for (size_t i = 0; i < got; i++) to_edge(&tmp[i], &out[i]);
    return total;
}

static size_t svc_edges(const struct cn_index *x, uint32_t node, uint32_t mask, int direction,
                        cn_edge_info *out, size_t max)
{
    cn_graph_edge *tmp;
    size_t total;
    if (x->graph == NULL) return 0;
    tmp = max ? malloc(max * sizeof *tmp) : NULL;
    if (max && tmp == NULL) return 0;
    total = cn_graph_edges(x->graph, node, mask, direction == CN_EDGES_IN ? CN_GRAPH_IN : CN_GRAPH_OUT, tmp, max);
    convert(total, tmp, total < max ? total : max, out);
    free(tmp);
    return total;
}

static size_t svc_unresolved(const struct cn_index *x, const char *name, uint32_t mask, cn_edge_info *out,
                             size_t max)
{
    cn_graph_edge *tmp;
    size_t total;
    if (x->graph == NULL || name == NULL) return 0;
    tmp = max ? malloc(max * sizeof *tmp) : NULL;
    if (max && tmp == NULL) return 0;
    total = cn_graph_unresolved(x->graph, name, mask, tmp, max);
    convert(total, tmp, total < max ? total : max, out);
    free(tmp);
    return total;
}

static int svc_edge_at(const struct cn_index *x, const char *path, uint32_t line, uint32_t column,
                       uint32_t *from_node, cn_edge_info *out, cn_error *err)
{
    cn_graph_edge e;
    uint32_t node;
    if (x->graph == NULL)
        return cn_error_fill(err, CN_EUNSUPPORTED, "this index has no symbol graph: compile with "
                                                   "`codenib compile --index graph`");
    if (cn_nodes_at(x->nodes, path, line + 1, &node) < 0) return cn_error_export(err);
    /* the innermost node first, then its ancestors: a use site in a
     * decorator or a default belongs to an outer node */
    for (;;) {
        cn_node_view v;
        if (cn_graph_at(x->graph, node, line + 1, column, &e) == 0) {
            if (from_node) *from_node = node;
            to_edge(&e, out);
            return 0;
        }
        if (cn_nodes_get(x->nodes, node, &v) < 0 || v.parent < 0) break;
        node = (uint32_t)v.parent;
    }
    return cn_error_fill(err, CN_ENOTFOUND, "no use of a symbol at %s:%u:%u", path, line + 1, column + 1);
}

static int svc_has_graph(const struct cn_index *x)
{
    return x->graph != NULL;
}

static const cn_index_services index_services = {
    (uint32_t)sizeof(cn_index_services),
    svc_node_count, svc_node, svc_node_by_qualname, svc_nodes_by_name, svc_node_at,
    svc_bm25_search, svc_node_text,
    svc_edges, svc_unresolved, svc_edge_at, svc_has_graph,
};

const cn_index_services *cn_host_index_services(void)
{
    return &index_services;
}

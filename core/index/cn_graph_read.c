/* SPDX-License-Identifier: Apache-2.0 */
/* Symbol graph reader (API in cn_graph.h, layout in cn_graph_build.c).
 * Everything is validated at open, so queries index the mapped arrays
 * without further checks. */
#include <stdlib.h>
#include <string.h>

#include "cn_graph.h"
#include "cn_idxfile.h"

#define NONE UINT32_MAX

struct cn_graph {
    cn_idx_file *f;
    const cn_graph__edge_disk *edges;
    const uint32_t *out_offs, *in_offs, *in_edges, *unres_name;
    const cn_graph__unres_disk *unres_last;
    const char *strtab;
    size_t strtab_size;
    uint32_t n_nodes, n_edges, n_in, n_unres;
};

static int bad(const char *path, const char *what)
{
    return cn_error_set(CN_ECORRUPT, "%s: corrupt symbol graph (%s); recompile with "
                                     "`codenib compile --rebuild`", path, what);
}

static bool offs_ok(const uint32_t *offs, uint32_t n_nodes, uint32_t total)
{
    if (offs[0] != 0 || offs[n_nodes] != total) return false;
    for (uint32_t v = 0; v < n_nodes; v++)
        if (offs[v] > offs[v + 1]) return false;
    return true;
}

static int cmp_edge_site(const cn_graph__edge_disk *a, const cn_graph__edge_disk *b)
{
    if (a->type != b->type) return a->type < b->type ? -1 : 1;
    if (a->line != b->line) return a->line < b->line ? -1 : 1;
    if (a->column != b->column) return a->column < b->column ? -1 : 1;
    return 0;
}

static int validate(cn_graph *g, const char *path)
{
    size_t resolved = 0;
    if (!offs_ok(g->out_offs, g->n_nodes, g->n_edges)) return bad(path, "out-edge offsets");
    if (!offs_ok(g->in_offs, g->n_nodes, g->n_in)) return bad(path, "in-edge offsets");
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        for (uint32_t i = g->out_offs[v]; i < g->out_offs[v + 1]; i++) {
            const cn_graph__edge_disk *e = &g->edges[i];
            if (e->src != v) return bad(path, "edge source disagrees with its row");
            if (e->type < CN_EDGE_CONTAINS || e->type > CN_EDGE_TYPE_MAX) return bad(path, "edge type");
            if (e->resolved > 1 || (e->resolved && e->dst >= g->n_nodes) ||
                (!e->resolved && (e->dst != NONE || e->type == CN_EDGE_CONTAINS)))
                return bad(path, "edge target out of range");
            if (e->name >= g->strtab_size) return bad(path, "edge name out of bounds");
            if (i > g->out_offs[v]) {
                const cn_graph__edge_disk *p = &g->edges[i - 1];
                int d = cmp_edge_site(p, e);
                if (d > 0 || (d == 0 && p->dst > e->dst)) return bad(path, "edges out of order");
            }
            resolved += e->resolved;
        }
    }
    if (resolved != g->n_in || g->n_edges - resolved != g->n_unres)
        return bad(path, "edge counts disagree");
    for (uint32_t v = 0; v < g->n_nodes; v++)
        for (uint32_t i = g->in_offs[v]; i < g->in_offs[v + 1]; i++) {
            uint32_t x = g->in_edges[i];
            if (x >= g->n_edges || g->edges[x].dst != v) return bad(path, "in-edge index");
        }
    for (uint32_t i = 0; i < g->n_unres; i++) {
        uint32_t x = g->unres_name[i];
        const cn_graph__unres_disk *u = &g->unres_last[i];
        if (x >= g->n_edges || g->edges[x].resolved || u->edge >= g->n_edges ||
            g->edges[u->edge].resolved || u->key >= g->strtab_size)
            return bad(path, "unresolved-name index");
        /* neighbours often share one string: no need to read it then */
        if (i > 0) {
            uint32_t pn = g->edges[g->unres_name[i - 1]].name, pk = g->unres_last[i - 1].key;
            if ((pn != g->edges[x].name && strcmp(g->strtab + pn, g->strtab + g->edges[x].name) > 0) ||
                (pk != u->key && strcmp(g->strtab + pk, g->strtab + u->key) > 0))
                return bad(path, "unresolved-name index out of order");
        }
    }
    return 0;
}

int cn_graph_open(const char *path, cn_graph **out)
{
    cn_graph *g;
    const uint32_t *meta;
    size_t msz, osz, esz, isz, iesz, unsz, ulsz;
    int rc;

    *out = NULL;
    g = calloc(1, sizeof *g);
    if (g == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    if ((rc = cn_idx_open(path, CN_GRAPH_MAGIC, CN_GRAPH_VERSION, &g->f)) < 0) {
        free(g);
        return rc;
    }
    meta = cn_idx_section(g->f, CN_GRAPH__META, 4, &msz);
    g->out_offs = cn_idx_section(g->f, CN_GRAPH__OUT_OFFS, 4, &osz);
    g->edges = cn_idx_section(g->f, CN_GRAPH__EDGES, sizeof(cn_graph__edge_disk), &esz);
    g->in_offs = cn_idx_section(g->f, CN_GRAPH__IN_OFFS, 4, &isz);
    g->in_edges = cn_idx_section(g->f, CN_GRAPH__IN_EDGES, 4, &iesz);
    g->unres_name = cn_idx_section(g->f, CN_GRAPH__UNRES_NAME, 4, &unsz);
    g->unres_last = cn_idx_section(g->f, CN_GRAPH__UNRES_LAST, sizeof(cn_graph__unres_disk), &ulsz);
    g->strtab = cn_idx_section(g->f, CN_GRAPH__STRTAB, 0, &g->strtab_size);
    if (meta == NULL || msz != 32 || g->out_offs == NULL || g->in_offs == NULL ||
        g->strtab == NULL || g->strtab_size == 0 || g->strtab[g->strtab_size - 1] != '\0') {
        rc = bad(path, "missing sections");
        goto fail;
    }
    g->n_nodes = meta[0];
    g->n_edges = meta[1];
    g->n_in = meta[2];
    g->n_unres = meta[3];
    if (g->n_nodes == UINT32_MAX || osz != ((size_t)g->n_nodes + 1) * 4 ||
        isz != ((size_t)g->n_nodes + 1) * 4 || esz != (size_t)g->n_edges * sizeof(cn_graph__edge_disk) ||
        iesz != (size_t)g->n_in * 4 || unsz != (size_t)g->n_unres * 4 ||
        ulsz != (size_t)g->n_unres * sizeof(cn_graph__unres_disk) ||
        (g->n_edges && g->edges == NULL) || (g->n_in && g->in_edges == NULL) ||
        (g->n_unres && (g->unres_name == NULL || g->unres_last == NULL))) {
        rc = bad(path, "section sizes disagree with the counts");
        goto fail;
    }
    if ((rc = validate(g, path)) < 0) goto fail;
    *out = g;
    return 0;
fail:
    cn_idx_close(g->f);
    free(g);
    return rc;
}

void cn_graph__raw_of(const cn_graph *g, cn_graph__raw *r)
{
    r->edges = g->edges;
    r->out_offs = g->out_offs;
    r->in_offs = g->in_offs;
    r->in_edges = g->in_edges;
    r->n_in = g->n_in;
    r->unres_last = g->unres_last;
    r->unres_name = g->unres_name;
    r->strtab = g->strtab;
    r->strtab_size = g->strtab_size;
    r->n_nodes = g->n_nodes;
    r->n_edges = g->n_edges;
    r->n_unres = g->n_unres;
}

void cn_graph_close(cn_graph *g)
{
    if (g == NULL) return;
    cn_idx_close(g->f);
    free(g);
}

uint32_t cn_graph_node_count(const cn_graph *g)
{
    return g->n_nodes;
}

size_t cn_graph_edge_count(const cn_graph *g)
{
    return g->n_edges;
}

static void fill(const cn_graph *g, const cn_graph__edge_disk *e, uint32_t other, cn_graph_edge *out)
{
    out->node = other;
    out->type = e->type;
    out->resolved = e->resolved;
    out->line = e->line;
    out->column = e->column;
    out->name = g->strtab + e->name;
}

size_t cn_graph_edges(const cn_graph *g, uint32_t node, uint32_t type_mask, int direction,
                      cn_graph_edge *out, size_t max)
{
    size_t total = 0;
    if (node >= g->n_nodes) return 0;
    if (direction == CN_GRAPH_IN) {
        for (uint32_t i = g->in_offs[node]; i < g->in_offs[node + 1]; i++) {
            const cn_graph__edge_disk *e = &g->edges[g->in_edges[i]];
            if (!(type_mask & CN_EDGE_BIT(e->type))) continue;
            if (total < max) fill(g, e, e->src, &out[total]);
            total++;
        }
    } else {
        for (uint32_t i = g->out_offs[node]; i < g->out_offs[node + 1]; i++) {
            const cn_graph__edge_disk *e = &g->edges[i];
            if (!(type_mask & CN_EDGE_BIT(e->type))) continue;
            if (total < max) fill(g, e, e->dst, &out[total]);
            total++;
        }
    }
    return total;
}

/* [*lo, *hi) of the unresolved edges named exactly `name`. */
static void range_name(const cn_graph *g, const char *name, size_t *lo_out, size_t *hi_out)
{
    size_t lo = 0, hi = g->n_unres, start;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(g->strtab + g->edges[g->unres_name[mid]].name, name) < 0) lo = mid + 1;
        else hi = mid;
    }
    start = lo;
    hi = g->n_unres;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(g->strtab + g->edges[g->unres_name[mid]].name, name) <= 0) lo = mid + 1;
        else hi = mid;
    }
    *lo_out = start;
    *hi_out = lo;
}

static void range_last(const cn_graph *g, const char *name, size_t *lo_out, size_t *hi_out)
{
    size_t lo = 0, hi = g->n_unres, start;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(g->strtab + g->unres_last[mid].key, name) < 0) lo = mid + 1;
        else hi = mid;
    }
    start = lo;
    hi = g->n_unres;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(g->strtab + g->unres_last[mid].key, name) <= 0) lo = mid + 1;
        else hi = mid;
    }
    *lo_out = start;
    *hi_out = lo;
}

size_t cn_graph_unresolved(const cn_graph *g, const char *name, uint32_t type_mask,
                           cn_graph_edge *out, size_t max)
{
    size_t alo, ahi, blo, bhi, total = 0;
    if (name == NULL) return 0;
    range_name(g, name, &alo, &ahi);
    range_last(g, name, &blo, &bhi);
    /* both ranges list edges in increasing index: merge them */
    while (alo < ahi || blo < bhi) {
        uint32_t a = alo < ahi ? g->unres_name[alo] : NONE;
        uint32_t b = blo < bhi ? g->unres_last[blo].edge : NONE;
        uint32_t x = a < b ? a : b;
        const cn_graph__edge_disk *e = &g->edges[x];
        if (a == x) alo++;
        if (b == x) blo++;
        if (!(type_mask & CN_EDGE_BIT(e->type))) continue;
        if (total < max) fill(g, e, e->src, &out[total]);
        total++;
    }
    return total;
}

int cn_graph_at(const cn_graph *g, uint32_t node, uint32_t line, uint32_t column,
                cn_graph_edge *out)
{
    const cn_graph__edge_disk *best = NULL;
    if (node < g->n_nodes) {
        for (uint32_t i = g->out_offs[node]; i < g->out_offs[node + 1]; i++) {
            const cn_graph__edge_disk *e = &g->edges[i];
            if (e->type == CN_EDGE_CONTAINS || e->line != line || e->column > column) continue;
            if ((size_t)column - e->column > strlen(g->strtab + e->name)) continue;
            if (best == NULL || e->column > best->column ||
                (e->column == best->column && e->resolved && !best->resolved))
                best = e;
        }
    }
    if (best == NULL)
        return cn_error_set(CN_ENOTFOUND, "no reference at %u:%u in node %u", line, column, node);
    fill(g, best, best->dst, out);
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* Symbol graph writer (API in cn_graph.h; name resolution in
 * cn_graph_resolve.c).
 *
 * File: a cn_idxfile container, magic "CNGRAPH\0", format version 1,
 * integers in host order (like every codenib index).  The layout is CSR
 * (compressed sparse rows): the edges sorted by source, one offset per
 * node into them, plus index arrays for the other direction and for
 * unresolved names.  Sections:
 *
 *   1 META        32 bytes: u32 n_nodes, u32 n_edges, u32 n_in (resolved
 *                 edges), u32 n_unres (unresolved edges), 16 bytes zero.
 *   2 OUT_OFFS    u32 x (n_nodes + 1): node v's out-edges are
 *                 EDGES[offs[v], offs[v+1]); offs[0] = 0, non-decreasing,
 *                 offs[n_nodes] = n_edges.
 *   3 EDGES       n_edges x 24 bytes:
 *                   0 u32 src      4 u32 dst (UINT32_MAX: unresolved)
 *                   8 u32 line    12 u32 column
 *                  16 u32 name (STRTAB offset: the name as written)
 *                  20 u8 type     21 u8 resolved   22 u16 zero
 *                 sorted by (src, type, line, column, dst, name), so each
 *                 node's out-edges come in the order the API promises;
 *                 no two edges share (src, type, dst, line, column) (and
 *                 name, when unresolved).  CONTAINS edges have line 0,
 *                 column 0, name "".
 *   4 IN_OFFS     u32 x (n_nodes + 1): node v's in-edges are
 *                 IN_EDGES[offs[v], offs[v+1]) (same rules, ends at n_in).
 *   5 IN_EDGES    u32 x n_in: indexes into EDGES of every resolved edge,
 *                 sorted by (dst, type, line, column, src, index).
 *   6 UNRES_NAME  u32 x n_unres: indexes of the unresolved edges sorted by
 *                 (name bytes, index), for exact lookups.
 *   7 UNRES_LAST  n_unres x {u32 key, u32 edge}: key is the STRTAB offset
 *                 of the last component of the edge's name (after the
 *                 last '.', "->" or "::"; a suffix of the name, so it
 *                 shares its bytes; C include targets are not split),
 *                 sorted by (key bytes, edge).
 *   8 STRTAB      NUL-terminated strings, each stored once, starting with
 *                 "" at offset 0, in order of first use by EDGES.
 *
 * Determinism: the resolver walks records in order and only uses sorted
 * tables; here every sort has a total order and the string table is laid
 * out in edge order, so identical records give identical bytes. */
#include <stdlib.h>
#include <string.h>

#include "cn_graph.h"
#include "cn_idxfile.h"
#include "cn_strsort.h"

#define NONE UINT32_MAX

const char *cn_edge_type_name(int type)
{
    switch (type) {
    case CN_EDGE_CONTAINS: return "contains";
    case CN_EDGE_CALLS: return "calls";
    case CN_EDGE_REFERENCES: return "references";
    case CN_EDGE_IMPORTS: return "imports";
    case CN_EDGE_INHERITS: return "inherits";
    default: return "unknown";
    }
}

static int cmp_u32(uint32_t a, uint32_t b)
{
    return (a > b) - (a < b);
}

static inline int cmp_tmp_edge(const cn_graph_tmp_edge *x, const cn_graph_tmp_edge *y)
{
    int d = cmp_u32(x->src, y->src);
    if (!d) d = cmp_u32(x->type, y->type);
    if (!d) d = cmp_u32(x->line, y->line);
    if (!d) d = cmp_u32(x->column, y->column);
    if (!d) d = cmp_u32(x->dst, y->dst);
    if (!d && x->name != y->name) d = strcmp(x->name, y->name);
    return d;
}

static int cmp_tmp(const void *a, const void *b)
{
    return cmp_tmp_edge(a, b);
}

static inline int cmp_in_edge(const cn_graph__edge_disk *e, uint32_t a, uint32_t b)
{
    const cn_graph__edge_disk *x = &e[a], *y = &e[b];
    int d = cmp_u32(x->dst, y->dst);
    if (!d) d = cmp_u32(x->type, y->type);
    if (!d) d = cmp_u32(x->line, y->line);
    if (!d) d = cmp_u32(x->column, y->column);
    if (!d) d = cmp_u32(x->src, y->src);
    return d ? d : cmp_u32(a, b);
}

static int cmp_in(const void *a, const void *b, void *arg)
{
    return cmp_in_edge(arg, *(const uint32_t *)a, *(const uint32_t *)b);
}

/* Runs shorter than this are sorted by insertion, inline, rather than by
 * qsort through a comparison function. */
#define SHORT_RUN 24

/* ---- string table with interning ------------------------------------------ */

typedef struct strtab {
    cn_buf buf;
    uint32_t *slots;   /* offset + 1; 0 = empty */
    size_t n_slots, n_used;
    bool oom;
} strtab;

/* FNV-1a of a NUL-terminated string, and its length: names are short, so
 * one pass over the bytes beats a wide hash's setup. */
static uint32_t st_hash(const char *s, size_t *len)
{
    uint32_t h = 2166136261u;
    const char *p = s;
    for (; *p; p++) h = (h ^ (unsigned char)*p) * 16777619u;
    *len = (size_t)(p - s);
    return h;
}

static bool st_grow(strtab *t)
{
    size_t ns = t->n_slots ? t->n_slots * 2 : 4096;
    uint32_t *slots = calloc(ns, sizeof *slots);
    if (slots == NULL) return false;
    for (size_t i = 0; i < t->n_slots; i++) {
        uint32_t v = t->slots[i];
        size_t h, len;
        if (!v) continue;
        h = st_hash(t->buf.data + v - 1, &len) & (ns - 1);
        while (slots[h]) h = (h + 1) & (ns - 1);
        slots[h] = v;
    }
    free(t->slots);
    t->slots = slots;
    t->n_slots = ns;
    return true;
}

static uint32_t st_intern(strtab *t, const char *s)
{
    size_t n, h;
    uint32_t off;
    if (t->oom) return 0;
    if ((t->n_used + 1) * 2 > t->n_slots && !st_grow(t)) {
        t->oom = true;
        return 0;
    }
    h = st_hash(s, &n) & (t->n_slots - 1);
    while (t->slots[h]) {
        const char *x = t->buf.data + t->slots[h] - 1;
        if (strcmp(x, s) == 0) return t->slots[h] - 1;
        h = (h + 1) & (t->n_slots - 1);
    }
    if (t->buf.len + n + 1 >= UINT32_MAX) {
        t->oom = true;
        return 0;
    }
    off = (uint32_t)t->buf.len;
    if (cn_buf_append(&t->buf, s, n + 1) < 0) {
        t->oom = true;
        return 0;
    }
    t->slots[h] = off + 1;
    t->n_used++;
    return off;
}

/* ---- sorting ------------------------------------------------------------------ */

/* Sorts items[0, n) by `src` with a counting sort (stable), then each run
 * of one source: sources are many and their runs short, so this does a
 * fraction of the comparisons of one qsort over everything.  A run already
 * in order (a kept file's edges, taken from the previous graph) is left as
 * it is, a short one sorted by insertion. */
static int sort_tmp(cn_graph_tmp_edges *t, uint32_t n_nodes)
{
    size_t n = t->len, i = 1;
    uint32_t *off = calloc((size_t)n_nodes + 2, sizeof *off);
    cn_graph_tmp_edge *out = t->items;
    if (off == NULL) return CN_ENOMEM;
    for (size_t k = 0; k < n; k++) off[t->items[k].src + 1]++;
    for (uint32_t v = 0; v <= n_nodes; v++) off[v + 1] += off[v];
    /* edges already by source (a graph assembled from a previous one) are
     * sorted in place; others are moved into a new array */
    while (i < n && t->items[i - 1].src <= t->items[i].src) i++;
    if (i < n) {
        if ((out = malloc(n * sizeof *out)) == NULL) {
            free(off);
            return CN_ENOMEM;
        }
        for (size_t k = 0; k < n; k++) out[off[t->items[k].src]++] = t->items[k];
    } else {
        for (uint32_t v = 0; v <= n_nodes; v++) off[v] = off[v + 1];
    }
    /* off[v] is now where v's run ends */
    for (uint32_t v = 0, start = 0; v <= n_nodes; start = off[v], v++) {
        cn_graph_tmp_edge *run = out + start;
        size_t len = off[v] - start, k = 1;
        while (k < len && cmp_tmp_edge(&run[k - 1], &run[k]) <= 0) k++;
        if (k >= len) continue;
        if (len > SHORT_RUN) {
            qsort(run, len, sizeof *run, cmp_tmp);
            continue;
        }
        for (; k < len; k++) {   /* [0, k) is in order */
            cn_graph_tmp_edge x = run[k];
            size_t j = k;
            while (j > 0 && cmp_tmp_edge(&run[j - 1], &x) > 0) {
                run[j] = run[j - 1];
                j--;
            }
            run[j] = x;
        }
    }
    if (out != t->items) {
        free(t->items);
        t->items = out;
        t->cap = n;
    }
    free(off);
    return 0;
}

/* One destination's in-edges (indexes into edges) in order: by insertion
 * when short, else with qsort_r. */
static void sort_in_run(const cn_graph__edge_disk *edges, uint32_t *run, uint32_t len)
{
    if (len > SHORT_RUN) {
        qsort_r(run, len, sizeof *run, cmp_in, (void *)edges);
        return;
    }
    for (uint32_t k = 1; k < len; k++) {
        uint32_t x = run[k], j = k;
        while (j > 0 && cmp_in_edge(edges, run[j - 1], x) > 0) {
            run[j] = run[j - 1];
            j--;
        }
        run[j] = x;
    }
}

/* The resolved edges' indexes by (dst, type, line, column, src, index):
 * a counting sort by dst, then each destination's run: by insertion when
 * short, else with qsort_r. */
static int sort_in(const cn_graph__edge_disk *edges, size_t ne, uint32_t n_nodes, const uint32_t *in_offs,
                   uint32_t *in_edges)
{
    uint32_t *fill = malloc(((size_t)n_nodes + 1) * sizeof *fill);
    if (fill == NULL) return CN_ENOMEM;
    memcpy(fill, in_offs, ((size_t)n_nodes + 1) * sizeof *fill);
    for (size_t i = 0; i < ne; i++)
        if (edges[i].resolved) in_edges[fill[edges[i].dst]++] = (uint32_t)i;
    for (uint32_t v = 0; v < n_nodes; v++) sort_in_run(edges, in_edges + in_offs[v], in_offs[v + 1] - in_offs[v]);
    free(fill);
    return 0;
}

/* The previous graph, when edges were taken from it (its names then point
 * into its string table), and a scratch array with one entry per byte of
 * that table. */
typedef struct old_graph {
    const cn_graph__raw *g;
    uint32_t *scratch;
} old_graph;

/* rank[k] for the unresolved edges idx[0, n) from the previous graph's
 * order of their names (last components: `last`), where those edges came
 * from it, merged with the others'.  The previous graph's names are
 * interned (one offset per string); its last components are not.
 * CN_ECORRUPT when an edge taken from it is not in its tables. */
static int ranks_from_old(const old_graph *old, const cn_graph_tmp_edges *tmp, const uint32_t *idx, uint32_t n,
                          bool last, uint32_t *rank, uint32_t *n_ranks)
{
    const cn_graph__raw *g = old->g;
    uintptr_t lo = (uintptr_t)g->strtab, hi = lo + g->strtab_size;
    uint32_t *at = old->scratch, na = 0, nf = 0, prev = NONE;
    const char **olds = malloc((g->n_unres ? g->n_unres : 1) * sizeof *olds);
    const char **fresh = malloc((n ? n : 1) * sizeof *fresh);
    uint32_t *orank = malloc((g->n_unres ? g->n_unres : 1) * sizeof *orank);
    uint32_t *frank = malloc((n ? n : 1) * sizeof *frank);
    int rc = CN_ENOMEM;

    if (olds == NULL || fresh == NULL || orank == NULL || frank == NULL) goto done;
    /* the old distinct strings in order; at[offset] = 1 + their index */
    for (uint32_t u = 0; u < g->n_unres; u++) {
        uint32_t off = last ? g->unres_last[u].key : g->edges[g->unres_name[u]].name;
        if (off != prev && (!last || na == 0 || strcmp(olds[na - 1], g->strtab + off) != 0))
            olds[na++] = g->strtab + off;
        at[off] = na;
        prev = off;
    }
    for (uint32_t k = 0; k < n; k++) {
        const cn_graph_tmp_edge *e = &tmp->items[idx[k]];
        uintptr_t p = (uintptr_t)e->name;
        if (p >= lo && p < hi) {
            size_t off = (size_t)(p - lo) + (last ? e->key : 0);
            if (off >= g->strtab_size || at[off] == 0 || at[off] > na) {
                rc = CN_ECORRUPT;
                goto done;
            }
            rank[k] = at[off] - 1;   /* an index into olds, for now */
        } else {
            rank[k] = NONE;
            fresh[nf++] = e->name + (last ? e->key : 0);
        }
    }
    if ((rc = cn_str_ranks_merge(olds, na, fresh, nf, orank, frank, n_ranks)) < 0) goto done;
    nf = 0;
    for (uint32_t k = 0; k < n; k++) rank[k] = rank[k] == NONE ? frank[nf++] : orank[rank[k]];
    rc = 0;
done:
    free(olds);
    free(fresh);
    free(orank);
    free(frank);
    return rc;
}

/* UNRES_NAME and UNRES_LAST: the unresolved edges by (name bytes, index)
 * and by (last component bytes, index); with `old`, ranked from the
 * previous graph's order (see ranks_from_old).  CN_ENOMEM, or CN_ECORRUPT
 * when `old` does not hold what its edges need. */
static int sort_unresolved(const cn_graph__edge_disk *edges, size_t ne, const cn_graph_tmp_edges *tmp,
                           const char *tab, uint32_t n_unres, const old_graph *old, uint32_t *unres_name,
                           cn_graph__unres_disk *unres_last)
{
    size_t m = n_unres ? n_unres : 1;
    uint32_t *idx = malloc(m * sizeof *idx), *rank = malloc(m * sizeof *rank), *sorted = malloc(m * sizeof *sorted);
    const char **key = malloc(m * sizeof *key);
    uint32_t b = 0, nr = 0;
    int rc = CN_ENOMEM;
    if (idx == NULL || rank == NULL || sorted == NULL || key == NULL) goto done;
    for (size_t i = 0; i < ne; i++)
        if (!edges[i].resolved) {
            idx[b] = (uint32_t)i;
            key[b++] = tab + edges[i].name;
        }
    /* edge names are interned in the string table: one pointer per string */
    rc = old ? ranks_from_old(old, tmp, idx, n_unres, false, rank, &nr) : cn_str_ranks(key, n_unres, true, rank, &nr);
    if (rc == 0) rc = cn_rank_order(rank, n_unres, nr, idx, unres_name);
    if (rc < 0) goto done;
    for (uint32_t k = 0; k < n_unres; k++) key[k] += tmp->items[idx[k]].key;
    rc = old ? ranks_from_old(old, tmp, idx, n_unres, true, rank, &nr) : cn_str_ranks(key, n_unres, false, rank, &nr);
    if (rc == 0) rc = cn_rank_order(rank, n_unres, nr, idx, sorted);
    if (rc < 0) goto done;
    for (uint32_t k = 0; k < n_unres; k++) {
        unres_last[k].edge = sorted[k];
        unres_last[k].key = edges[sorted[k]].name + tmp->items[sorted[k]].key;
    }
    rc = 0;
done:
    free(idx);
    free(rank);
    free(sorted);
    free(key);
    return rc;
}

/* ---- writer ----------------------------------------------------------------- */

/* Counts one edge in the stats. */
static void tally(cn_graph_stats *s, uint8_t type, bool resolved)
{
    s->by_type[type]++;
    if (resolved) {
        s->resolved_by_type[type]++;
        if (type != CN_EDGE_CONTAINS) s->resolved++;
    } else {
        s->unresolved++;
    }
}

/* Drops the duplicates of sorted edges (same src, type, dst, line, column;
 * and name when unresolved: they are adjacent), keeping the first; returns
 * how many are left. */
static size_t dedupe_sorted(cn_graph_tmp_edges *t)
{
    size_t ne = 0;
    for (size_t i = 0; i < t->len; i++) {
        const cn_graph_tmp_edge *e = &t->items[i];
        if (ne > 0) {
            const cn_graph_tmp_edge *p = &t->items[ne - 1];
            if (p->src == e->src && p->type == e->type && p->dst == e->dst && p->line == e->line &&
                p->column == e->column && (e->dst != NONE || strcmp(p->name, e->name) == 0))
                continue;
        }
        t->items[ne++] = *e;
    }
    return ne;
}

/* Sorts, deduplicates and writes the edges of tmp (which it frees).  With
 * `old` (the previous graph some edges were taken from): names that point
 * into its string table (each string there once) are interned once per
 * distinct string, and the unresolved names keep its order. */
static int write_edges(cn_graph_tmp_edges tmp, uint32_t n_nodes, const cn_graph__raw *old, const char *path,
                       cn_graph_stats *stats)
{
    strtab st;
    cn_graph__edge_disk *edges = NULL;
    uint32_t *out_offs = NULL, *in_offs = NULL, *in_edges = NULL, *unres_name = NULL, meta[8];
    cn_graph__unres_disk *unres_last = NULL;
    uint32_t n_in = 0, n_unres = 0, *memo = NULL;   /* old offset -> new offset + 1 */
    uintptr_t old_lo = old ? (uintptr_t)old->strtab : 0, old_hi = old ? old_lo + old->strtab_size : 0;
    old_graph og;
    size_t ne = 0;
    cn_idx_writer *w = NULL;
    cn_graph_stats s;
    int rc = 0;

    memset(&st, 0, sizeof st);
    memset(&s, 0, sizeof s);
    if (tmp.len > 1 && sort_tmp(&tmp, n_nodes) < 0) {
        rc = cn_error_set(CN_ENOMEM, "out of memory writing the symbol graph");
        goto out;
    }
    ne = tmp.len = dedupe_sorted(&tmp);
    if (ne >= UINT32_MAX) {
        rc = cn_error_set(CN_EINVAL, "too many edges for the symbol graph (%zu)", ne);
        goto out;
    }
    edges = calloc(ne ? ne : 1, sizeof *edges);
    out_offs = calloc((size_t)n_nodes + 1, sizeof *out_offs);
    in_offs = calloc((size_t)n_nodes + 1, sizeof *in_offs);
    if (old != NULL && (memo = calloc(old->strtab_size ? old->strtab_size : 1, sizeof *memo)) == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory writing the symbol graph");
        goto out;
    }
    if (edges == NULL || out_offs == NULL || in_offs == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory writing the symbol graph");
        goto out;
    }
    st_intern(&st, "");
    for (size_t i = 0; i < ne; i++) {
        const cn_graph_tmp_edge *e = &tmp.items[i];
        cn_graph__edge_disk *d = &edges[i];
        d->src = e->src;
        d->dst = e->dst;
        d->line = e->line;
        d->column = e->column;
        if (memo != NULL && (uintptr_t)e->name >= old_lo && (uintptr_t)e->name < old_hi) {
            uint32_t *m = &memo[(uintptr_t)e->name - old_lo];
            if (*m == 0) *m = st_intern(&st, e->name) + 1;
            d->name = *m - 1;
        } else {
            d->name = st_intern(&st, e->name);
        }
        d->type = e->type;
        d->resolved = e->dst != NONE;
        out_offs[e->src + 1]++;
        tally(&s, e->type, e->dst != NONE);
        if (e->dst != NONE) {
            in_offs[e->dst + 1]++;
            n_in++;
        } else {
            n_unres++;
        }
    }
    if (st.oom || st.buf.oom) {
        rc = cn_error_set(CN_ENOMEM, "out of memory writing the symbol graph");
        goto out;
    }
    for (uint32_t v = 0; v < n_nodes; v++) {
        out_offs[v + 1] += out_offs[v];
        in_offs[v + 1] += in_offs[v];
    }
    in_edges = malloc((n_in ? n_in : 1) * sizeof *in_edges);
    unres_name = malloc((n_unres ? n_unres : 1) * sizeof *unres_name);
    unres_last = malloc((n_unres ? n_unres : 1) * sizeof *unres_last);
    if (in_edges == NULL || unres_name == NULL || unres_last == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory writing the symbol graph");
        goto out;
    }
    og.g = old;
    og.scratch = memo;   /* done with as a memo: the unresolved names' scratch */
    if (sort_in(edges, ne, n_nodes, in_offs, in_edges) < 0 ||
        (rc = sort_unresolved(edges, ne, &tmp, st.buf.data, n_unres, old ? &og : NULL, unres_name, unres_last)) < 0) {
        rc = rc == CN_ECORRUPT ? cn_error_set(CN_ECORRUPT, "%s: the previous graph does not hold the edges taken from it", path)
                               : cn_error_set(CN_ENOMEM, "out of memory writing the symbol graph");
        goto out;
    }
    memset(meta, 0, sizeof meta);
    meta[0] = n_nodes;
    meta[1] = (uint32_t)ne;
    meta[2] = n_in;
    meta[3] = n_unres;
    if ((rc = cn_idx_writer_new(CN_GRAPH_MAGIC, CN_GRAPH_VERSION, &w)) < 0) goto out;
    if ((rc = cn_idx_writer_add_ref(w, CN_GRAPH__META, meta, sizeof meta)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, CN_GRAPH__OUT_OFFS, out_offs, ((size_t)n_nodes + 1) * sizeof *out_offs)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, CN_GRAPH__EDGES, edges, ne * sizeof *edges)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, CN_GRAPH__IN_OFFS, in_offs, ((size_t)n_nodes + 1) * sizeof *in_offs)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, CN_GRAPH__IN_EDGES, in_edges, (size_t)n_in * sizeof *in_edges)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, CN_GRAPH__UNRES_NAME, unres_name, (size_t)n_unres * sizeof *unres_name)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, CN_GRAPH__UNRES_LAST, unres_last, (size_t)n_unres * sizeof *unres_last)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, CN_GRAPH__STRTAB, st.buf.data, st.buf.len)) < 0)
        goto out;
    if ((rc = cn_idx_writer_write(w, path)) < 0) goto out;
    s.nodes = n_nodes;
    s.edges = ne;
    if (stats) *stats = s;
out:
    cn_idx_writer_free(w);
    free(tmp.items);
    free(st.slots);
    cn_buf_free(&st.buf);
    free(memo);
    free(edges);
    free(out_offs);
    free(in_offs);
    free(in_edges);
    free(unres_name);
    free(unres_last);
    return rc;
}

int cn_graph_write(const cn_file_rec *recs, size_t n, const char *path, cn_graph_stats *stats)
{
    cn_graph_tmp_edges tmp = {NULL, 0, 0};
    uint32_t n_nodes = 0;
    int rc = cn_graph_resolve(recs, n, NULL, &tmp, &n_nodes);
    if (rc < 0) {
        free(tmp.items);
        return rc;
    }
    return write_edges(tmp, n_nodes, NULL, path, stats);
}

/* Appends the old graph's out-edges of nodes [lo, hi) to tmp; their names
 * point into the old graph's string table. */
static void copy_old_edges(const cn_graph__raw *g, const uint32_t *key, uint32_t lo, uint32_t hi,
                           cn_graph_tmp_edges *tmp)
{
    for (uint32_t i = g->out_offs[lo]; i < g->out_offs[hi]; i++) {
        const cn_graph__edge_disk *e = &g->edges[i];
        tmp->items[tmp->len++] = (cn_graph_tmp_edge){e->src, e->resolved ? e->dst : NONE, e->line,
                                                     e->column, g->strtab + e->name, e->resolved ? 0 : key[i], e->type};
    }
}

/* ---- patching the previous graph -------------------------------------------- */

/* When every re-resolved file's edges (fresh: sorted, without duplicates)
 * pair up one to one, in order, with its old ones on source, type, target
 * and name -- the usual edit: lines added or removed, names untouched --
 * the new graph is the old one with those edges' lines and columns: the
 * string table (laid out by first use, in the same order), the offsets and
 * the unresolved tables are the same bytes, and only the in-edges of the
 * nodes the moved edges point to may come in another order.  So it is
 * written from the old sections, by reference.  Returns 1 when written,
 * 0 when the edges do not pair up (nothing written: the caller assembles
 * the graph), < 0 on error. */
static int write_patched(const cn_graph__raw *g, const cn_graph_tmp_edges *fresh, const cn_file_rec *recs,
                         size_t n, const bool *keep, const char *path, cn_graph_stats *stats)
{
    cn_graph__edge_disk *edges = NULL;
    uint32_t *in_edges = NULL, meta[8], base = 0;
    bool *touched = NULL;
    size_t f = 0, moved = 0;
    cn_idx_writer *w = NULL;
    cn_graph_stats st;
    int rc;

    /* pass 1: do they pair up, and how many moved */
    for (size_t i = 0; i < n; i++) {
        uint32_t count, lo, hi;
        if (recs[i].status != CN_REC_PARSED) continue;
        count = (uint32_t)recs[i].n_nodes + 1;
        if (f < fresh->len && fresh->items[f].src < base) return 0;   /* outside its file */
        if (!keep[i]) {
            if ((uint64_t)base + count > g->n_nodes) return 0;
            lo = g->out_offs[base];
            hi = g->out_offs[base + count];
            for (uint32_t k = lo; k < hi; k++, f++) {
                const cn_graph__edge_disk *o = &g->edges[k];
                const cn_graph_tmp_edge *e = &fresh->items[f];
                if (f >= fresh->len || e->src != o->src || e->type != o->type ||
                    e->dst != (o->resolved ? o->dst : NONE) || strcmp(e->name, g->strtab + o->name) != 0)
                    return 0;
                moved += e->line != o->line || e->column != o->column;
            }
            if (f < fresh->len && fresh->items[f].src < base + count) return 0;   /* more than before */
        }
        base += count;
    }
    if (f != fresh->len || base != g->n_nodes) return 0;

    /* pass 2: the moved edges, and the order of their targets' in-edges */
    if (moved > 0) {
        edges = malloc(((size_t)g->n_edges ? g->n_edges : 1) * sizeof *edges);
        in_edges = malloc(((size_t)g->n_in ? g->n_in : 1) * sizeof *in_edges);
        touched = calloc((size_t)g->n_nodes + 1, sizeof *touched);
        if (edges == NULL || in_edges == NULL || touched == NULL) {
            rc = cn_error_set(CN_ENOMEM, "out of memory writing the symbol graph");
            goto out;
        }
        memcpy(edges, g->edges, (size_t)g->n_edges * sizeof *edges);
        memcpy(in_edges, g->in_edges, (size_t)g->n_in * sizeof *in_edges);
        /* a source's fresh edges pair with its old ones in order (pass 1) */
        for (size_t k = 0; k < fresh->len;) {
            uint32_t src = fresh->items[k].src, at = g->out_offs[src];
            for (; k < fresh->len && fresh->items[k].src == src; k++, at++) {
                const cn_graph_tmp_edge *e = &fresh->items[k];
                if (edges[at].line == e->line && edges[at].column == e->column) continue;
                edges[at].line = e->line;
                edges[at].column = e->column;
                if (e->dst != NONE) touched[e->dst] = true;
            }
        }
        for (uint32_t v = 0; v < g->n_nodes; v++)
            if (touched[v]) sort_in_run(edges, in_edges + g->in_offs[v], g->in_offs[v + 1] - g->in_offs[v]);
    }

    memset(&st, 0, sizeof st);
    for (uint32_t k = 0; k < g->n_edges; k++) tally(&st, g->edges[k].type, g->edges[k].resolved);
    st.nodes = g->n_nodes;
    st.edges = g->n_edges;
    memset(meta, 0, sizeof meta);
    meta[0] = g->n_nodes;
    meta[1] = g->n_edges;
    meta[2] = g->n_in;
    meta[3] = g->n_unres;
    if ((rc = cn_idx_writer_new(CN_GRAPH_MAGIC, CN_GRAPH_VERSION, &w)) < 0) goto out;
    if ((rc = cn_idx_writer_add_ref(w, CN_GRAPH__META, meta, sizeof meta)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, CN_GRAPH__OUT_OFFS, g->out_offs, ((size_t)g->n_nodes + 1) * 4)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, CN_GRAPH__EDGES, edges ? edges : g->edges,
                                    (size_t)g->n_edges * sizeof *edges)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, CN_GRAPH__IN_OFFS, g->in_offs, ((size_t)g->n_nodes + 1) * 4)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, CN_GRAPH__IN_EDGES, in_edges ? in_edges : g->in_edges,
                                    (size_t)g->n_in * 4)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, CN_GRAPH__UNRES_NAME, g->unres_name, (size_t)g->n_unres * 4)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, CN_GRAPH__UNRES_LAST, g->unres_last,
                                    (size_t)g->n_unres * sizeof *g->unres_last)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, CN_GRAPH__STRTAB, g->strtab, g->strtab_size)) < 0 ||
        (rc = cn_idx_writer_write(w, path)) < 0)
        goto out;
    if (stats) *stats = st;
    rc = 1;
out:
    cn_idx_writer_free(w);
    free(edges);
    free(in_edges);
    free(touched);
    return rc;
}

int cn_graph_write_reusing(const cn_file_rec *recs, size_t n, const bool *keep, const cn_graph *prev,
                           const char *path, cn_graph_stats *stats)
{
    cn_graph__raw g;
    cn_graph_tmp_edges tmp = {NULL, 0, 0}, fresh = {NULL, 0, 0};
    uint32_t n_nodes = 0, base = 0, *key = NULL;
    size_t f = 0;
    bool *only = calloc(n ? n : 1, sizeof *only);
    int rc;

    if (only == NULL) return cn_error_set(CN_ENOMEM, "out of memory writing the symbol graph");
    for (size_t i = 0; i < n; i++) only[i] = !keep[i];
    cn_graph__raw_of(prev, &g);
    if ((rc = cn_graph_resolve(recs, n, only, &fresh, &n_nodes)) < 0) goto out;
    if (n_nodes != g.n_nodes) {
        rc = cn_error_set(CN_EINVAL, "%s: the previous graph has %u nodes, this build %u", path, g.n_nodes, n_nodes);
        goto out;
    }
    if (fresh.len > 1 && sort_tmp(&fresh, n_nodes) < 0) {
        rc = cn_error_set(CN_ENOMEM, "out of memory writing the symbol graph");
        goto out;
    }
    fresh.len = dedupe_sorted(&fresh);
    if ((rc = write_patched(&g, &fresh, recs, n, keep, path, stats)) != 0) goto out;
    /* the last-component offsets of the old unresolved edges */
    if ((key = calloc(g.n_edges ? g.n_edges : 1, sizeof *key)) == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory writing the symbol graph");
        goto out;
    }
    for (uint32_t u = 0; u < g.n_unres; u++) {
        const cn_graph__unres_disk *x = &g.unres_last[u];
        if (x->key < g.edges[x->edge].name) {
            rc = cn_error_set(CN_ECORRUPT, "%s: in the previous graph, an unresolved name's last part is not in the name", path);
            goto out;
        }
        key[x->edge] = x->key - g.edges[x->edge].name;
    }
    /* the edges in source order: each kept file's from the old graph, each
     * other's from the fresh ones (sorted and without duplicates), so that
     * write_edges finds them in order and sorts nothing more.  At most every
     * old edge and every fresh one: the array is allocated once (out_offs
     * ends at n_edges, as cn_graph_open checked). */
    if ((tmp.items = malloc((g.n_edges + fresh.len + 1) * sizeof *tmp.items)) == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory writing the symbol graph");
        goto out;
    }
    tmp.cap = g.n_edges + fresh.len + 1;
    for (size_t i = 0; i < n; i++) {
        uint32_t count;
        if (recs[i].status != CN_REC_PARSED) continue;
        count = (uint32_t)recs[i].n_nodes + 1;
        if (keep[i]) copy_old_edges(&g, key, base, base + count, &tmp);
        for (; !keep[i] && f < fresh.len && fresh.items[f].src < base + count && fresh.items[f].src >= base; f++)
            tmp.items[tmp.len++] = fresh.items[f];
        base += count;
    }
    if (f != fresh.len)
        rc = cn_error_set(CN_EINVAL, "%s: an edge of a re-resolved file starts outside it", path);
    if (rc == 0) {
        rc = write_edges(tmp, n_nodes, &g, path, stats);
        tmp.items = NULL;   /* write_edges took it */
    }
out:
    free(tmp.items);
    free(fresh.items);
    free(key);
    free(only);
    return rc;
}

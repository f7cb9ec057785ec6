/* SPDX-License-Identifier: Apache-2.0 */
/* Graph navigation shared by find_callers, find_callees and trace (see
 * cn_skill_graph.h): symbol resolution, the breadth-first neighbour walk
 * and bounded path search, all through the host's index services. */
#include "cn_skill_graph.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <codenib/lang.h>

#include "cn_skill_util.h"

#define MAX_SYMBOL 1024     /* longer "symbols" are not names */
#define MAX_CANDIDATES 50   /* candidates listed for an ambiguous name */
#define MAX_SUGGESTIONS 5
#define NB_BUDGET 200000    /* use sites collected by one neighbour walk */

/* ---- small utilities ----------------------------------------------------- */

static int grow(const cn_host *h, void **v, size_t *cap, size_t need, size_t elem)
{
    size_t nc = *cap ? *cap : 16;
    void *p;
    if (need <= *cap) return 0;
    while (nc < need) nc *= 2;
    if (nc > SIZE_MAX / elem || (p = h->realloc(*v, nc * elem)) == NULL) return CN_ENOMEM;
    *v = p;
    *cap = nc;
    return 0;
}

typedef struct idlist {
    uint32_t *v;
    size_t n, cap;
} idlist;

static int ids_push(const cn_host *h, idlist *l, uint32_t id)
{
    if (grow(h, (void **)&l->v, &l->cap, l->n + 1, sizeof *l->v) < 0) return CN_ENOMEM;
    l->v[l->n++] = id;
    return 0;
}

static int node_get(const cn_index_services *I, const struct cn_index *idx, uint32_t id, cn_node_info *nd)
{
    memset(nd, 0, sizeof *nd);
    nd->struct_size = (uint32_t)sizeof *nd;
    return I->node(idx, id, nd, NULL);
}

static const char *node_qualname(const cn_index_services *I, const struct cn_index *idx, uint32_t id)
{
    cn_node_info nd;
    return node_get(I, idx, id, &nd) == 0 ? nd.qualname : "";
}

const char *cn_sg_edge_name(int type)
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

int cn_sg_require_graph(const cn_host *h, const cn_skill_context *ctx, const cn_index_services **svc,
                        cn_error *err)
{
    const cn_index_services *I;
    int rc = cn_su_require_index(h, ctx, 0, &I, err);
    if (rc < 0) return rc;
    /* has_graph is the last slot of the table: an older host lacks it */
    if (I->struct_size < offsetof(cn_index_services, has_graph) + sizeof I->has_graph ||
        I->edges == NULL || I->has_graph == NULL)
        return h->error_set(err, CN_EUNSUPPORTED, "this codenib offers no symbol-graph services");
    if (!I->has_graph(ctx->index))
        return h->error_set(err, CN_EUNSUPPORTED,
                            "the compiled index of this repository has no symbol graph (it was "
                            "compiled without it, e.g. with `--index bm25`); compile it with the "
                            "graph index: `codenib compile REPO --index bm25,graph`");
    *svc = I;
    return 0;
}

int cn_sg_edges(const cn_host *h, const struct cn_index *idx, uint32_t node, uint32_t mask, int direction,
                cn_edge_info **out, size_t *n, cn_error *err)
{
    const cn_index_services *I = h->index;
    size_t total = I->edges(idx, node, mask, direction, NULL, 0), got;
    *out = NULL;
    *n = 0;
    if (total == 0) return 0;
    if ((*out = h->alloc(total * sizeof **out)) == NULL)
        return h->error_set(err, CN_ENOMEM, "out of memory");
    got = I->edges(idx, node, mask, direction, *out, total);
    *n = got < total ? got : total;
    return 0;
}

/* ---- guessed edges ------------------------------------------------------- */

/* Whether `written` ("p.prepare", "self.x.prepare", ".prepare",
 * "obj->prepare") is a call of member m on some receiver. */
static int member_use(const char *written, const char *m)
{
    size_t wl = strlen(written), ml = strlen(m);
    if (ml == 0 || wl <= ml || strcmp(written + wl - ml, m) != 0) return 0;
    if (written[wl - ml - 1] == '.') return 1;
    return wl >= ml + 3 && written[wl - ml - 1] == '>' && written[wl - ml - 2] == '-';
}

/* The methods named m (ids in index order) into *out (host->alloc'd);
 * returns how many there are, or a negative code. */
static long methods_named(const cn_host *h, const struct cn_index *idx, const char *m, uint32_t **out)
{
    const cn_index_services *I = h->index;
    size_t total = I->nodes_by_name(idx, m, NULL, 0), got, o = 0;
    uint32_t *ids;
    *out = NULL;
    if (total == 0) return 0;
    if ((ids = h->alloc(total * sizeof *ids)) == NULL) return CN_ENOMEM;
    got = I->nodes_by_name(idx, m, ids, total);
    for (size_t i = 0; i < got && i < total; i++) {
        cn_node_info nd;
        if (node_get(I, idx, ids[i], &nd) == 0 && nd.kind == CN_NODE_METHOD) ids[o++] = ids[i];
    }
    if (o == 0) {
        h->free(ids);
        return 0;
    }
    *out = ids;
    return (long)o;
}

int cn_sg_guessed_edges(const cn_host *h, const struct cn_index *idx, uint32_t node, uint32_t mask, int direction,
                        size_t max_methods, cn_edge_info **out, size_t *n, cn_error *err)
{
    const cn_index_services *I = h->index;
    cn_edge_info *v = NULL, *e = NULL;
    size_t len = 0, cap = 0, ne = 0;
    int rc = 0;
    *out = NULL;
    *n = 0;
    mask &= CN_SG_CALLS;   /* only calls name a member on a receiver */
    if (mask == 0) return 0;
    if (direction == CN_EDGES_IN) {
        cn_node_info nd;
        uint32_t *ids;
        long nm;
        size_t total;
        if (node_get(I, idx, node, &nd) < 0 || nd.kind != CN_NODE_METHOD) return 0;
        if ((nm = methods_named(h, idx, nd.name, &ids)) < 0) return h->error_set(err, CN_ENOMEM, "out of memory");
        h->free(ids);
        if (nm == 0 || (max_methods && (size_t)nm > max_methods)) return 0;
        total = I->unresolved(idx, nd.name, mask, NULL, 0);
        if (total == 0) return 0;
        if ((e = h->alloc(total * sizeof *e)) == NULL) return h->error_set(err, CN_ENOMEM, "out of memory");
        ne = I->unresolved(idx, nd.name, mask, e, total);
        if (ne > total) ne = total;
        for (size_t i = 0; i < ne && len < CN_SG_GUESS_MAX_USES; i++) {
            if (!member_use(e[i].name, nd.name)) continue;
            if (grow(h, (void **)&v, &cap, len + 1, sizeof *v) < 0) {
                rc = CN_ENOMEM;
                break;
            }
            v[len] = e[i];   /* node: the caller */
            v[len++].resolved = 2;
        }
    } else {
        if ((rc = cn_sg_edges(h, idx, node, mask, CN_EDGES_OUT, &e, &ne, err)) < 0) return rc;
        for (size_t i = 0; i < ne && rc == 0; i++) {
            const char *w = e[i].name, *m = w;
            uint32_t *ids;
            long nm;
            if (e[i].resolved && e[i].node != CN_SG_NONE) continue;
            for (const char *p = w; *p; p++)
                if (*p == '.' || (*p == '>' && p > w && p[-1] == '-')) m = p + 1;
            if (m == w || !member_use(w, m)) continue;
            if ((nm = methods_named(h, idx, m, &ids)) < 0) {
                rc = CN_ENOMEM;
                break;
            }
            for (long k = 0; (!max_methods || (size_t)nm <= max_methods) && k < nm; k++) {
                if (grow(h, (void **)&v, &cap, len + 1, sizeof *v) < 0) {
                    rc = CN_ENOMEM;
                    break;
                }
                v[len] = e[i];
                v[len].node = ids[k];
                v[len++].resolved = 2;
            }
            h->free(ids);
        }
    }
    h->free(e);
    if (rc < 0) {
        h->free(v);
        return h->error_set(err, CN_ENOMEM, "out of memory");
    }
    *out = v;
    *n = len;
    return 0;
}

static char lc(char c)
{
    return (char)tolower((unsigned char)c);
}

/* Levenshtein distance ignoring case; cap + 1 once it exceeds cap. */
static unsigned edit_distance(const char *a, size_t la, const char *b, size_t lb, unsigned cap)
{
    unsigned rows[2][129];
    unsigned *prev = rows[0], *cur = rows[1];
    if (la > 128 || lb > 128) return cap + 1;
    if ((la > lb ? la - lb : lb - la) > cap) return cap + 1;
    for (size_t j = 0; j <= lb; j++) prev[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        unsigned best;
        cur[0] = (unsigned)i;
        best = cur[0];
        for (size_t j = 1; j <= lb; j++) {
            unsigned d = prev[j - 1] + (lc(a[i - 1]) != lc(b[j - 1]));
            if (prev[j] + 1 < d) d = prev[j] + 1;
            if (cur[j - 1] + 1 < d) d = cur[j - 1] + 1;
            cur[j] = d;
            if (d < best) best = d;
        }
        if (best > cap) return cap + 1;
        {
            unsigned *t = prev;
            prev = cur;
            cur = t;
        }
    }
    return prev[lb] > cap ? cap + 1 : prev[lb];
}

static int ci_contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && lc(hay[i]) == lc(needle[i])) i++;
        if (i == n) return 1;
    }
    return n == 0;
}

static int ci_equal(const char *a, const char *b)
{
    while (*a && lc(*a) == lc(*b)) a++, b++;
    return *a == '\0' && *b == '\0';
}

/* ---- symbol resolution --------------------------------------------------- */

typedef struct resolver {
    const cn_host *h;
    const cn_index_services *I;
    const struct cn_index *idx;
    char sym[MAX_SYMBOL + 1];   /* normalized: '.' between components */
    const char *last;           /* last component, inside sym */
    unsigned comps;
    const char *file;           /* file filter, or NULL */
} resolver;

/* "pkg/pool.py" matches filter "pkg/pool.py", "pool.py" and "./pkg/pool.py". */
static int path_matches(const char *path, const char *filter)
{
    size_t lp, lf;
    if (filter == NULL) return 1;
    while (filter[0] == '.' && filter[1] == '/') filter += 2;
    lp = strlen(path);
    lf = strlen(filter);
    if (lf == 0 || lf > lp) return lf == 0;
    return strcmp(path + lp - lf, filter) == 0 && (lf == lp || path[lp - lf - 1] == '/');
}

static int is_candidate(const resolver *r, const cn_node_info *nd)
{
    return nd->kind != CN_NODE_FILE && nd->kind != CN_NODE_BLOCK && path_matches(nd->path, r->file);
}

/* The last `comps` components of the node's dotted name: its module path
 * without extension, '/' as '.', then its qualified name ("::" as '.').
 * NULL when the node has fewer components or the name does not fit. */
static const char *dotted_tail(const cn_node_info *nd, unsigned comps, char *buf, size_t cap)
{
    size_t lp = strlen(nd->path), o = 0, stop = lp;
    const char *q = nd->qualname;
    if (strncmp(q, nd->path, lp) != 0 || q[lp] != ':') return NULL;
    q += lp + 1;
    for (size_t i = lp; i > 0 && nd->path[i - 1] != '/'; i--)
        if (nd->path[i - 1] == '.') {
            stop = i - 1;
            break;
        }
    if (stop + strlen(q) + 2 > cap) return NULL;
    for (size_t i = 0; i < stop; i++) buf[o++] = nd->path[i] == '/' ? '.' : nd->path[i];
    if (o) buf[o++] = '.';
    for (; *q; q++) {
        if (q[0] == ':' && q[1] == ':') q++;
        buf[o++] = *q == ':' ? '.' : *q;
    }
    buf[o] = '\0';
    for (size_t i = o; i > 0; i--) {
        if (buf[i - 1] == '.' && --comps == 0) return buf + i;
    }
    return comps == 1 ? buf : NULL;
}

/* Copies the symbol as written into r->sym: trimmed, a trailing "()"
 * dropped, "::" and "->" as '.'. */
static int normalize(resolver *r, const char *s, size_t len)
{
    size_t o = 0;
    while (len && isspace((unsigned char)*s)) s++, len--;
    while (len && isspace((unsigned char)s[len - 1])) len--;
    if (len >= 2 && s[len - 2] == '(' && s[len - 1] == ')') len -= 2;
    if (len == 0 || len > MAX_SYMBOL) return -1;
    for (size_t i = 0; i < len; i++) {
        if ((s[i] == ':' && i + 1 < len && s[i + 1] == ':') || (s[i] == '-' && i + 1 < len && s[i + 1] == '>')) {
            r->sym[o++] = '.';
            i++;
        } else {
            r->sym[o++] = s[i];
        }
    }
    r->sym[o] = '\0';
    r->comps = 1;
    r->last = r->sym;
    for (size_t i = 0; i < o; i++)
        if (r->sym[i] == '.' && i + 1 < o) {
            r->comps++;
            r->last = r->sym + i + 1;
        }
    return 0;
}

/* Rules 2 and 3: nodes named `last`; with comps > 1 only those whose
 * dotted tail is the symbol. */
static int by_name(resolver *r, idlist *out)
{
    const cn_host *h = r->h;
    size_t total = r->I->nodes_by_name(r->idx, r->last, NULL, 0), got;
    uint32_t *ids;
    int rc = 0;
    if (total == 0) return 0;
    if ((ids = h->alloc(total * sizeof *ids)) == NULL) return CN_ENOMEM;
    got = r->I->nodes_by_name(r->idx, r->last, ids, total);
    for (size_t i = 0; i < got && i < total && rc == 0; i++) {
        cn_node_info nd;
        char buf[2 * MAX_SYMBOL];
        const char *tail;
        if (node_get(r->I, r->idx, ids[i], &nd) < 0 || !is_candidate(r, &nd)) continue;
        if (r->comps > 1 && ((tail = dotted_tail(&nd, r->comps, buf, sizeof buf)) == NULL ||
                             strcmp(tail, r->sym) != 0))
            continue;
        rc = ids_push(h, out, ids[i]);
    }
    h->free(ids);
    return rc;
}

static unsigned fuzzy_limit(size_t len)
{
    return len >= 8 ? 2 : len >= 4 ? 1 : 0;
}

/* Rule 5: one pass over every node; tier A (equal ignoring case) beats
 * tier B (close or containing). */
static int fuzzy(resolver *r, idlist *out)
{
    const cn_host *h = r->h;
    uint32_t count = r->I->node_count(r->idx);
    size_t slen = strlen(r->sym);
    unsigned lim = fuzzy_limit(slen);
    idlist b = {NULL, 0, 0};
    int rc = 0;

    for (uint32_t id = 0; id < count && rc == 0; id++) {
        cn_node_info nd;
        char buf[2 * MAX_SYMBOL];
        const char *tail;
        if (node_get(r->I, r->idx, id, &nd) < 0 || !is_candidate(r, &nd)) continue;
        if ((tail = dotted_tail(&nd, r->comps, buf, sizeof buf)) == NULL) continue;
        if (ci_equal(tail, r->sym))
            rc = ids_push(h, out, id);
        else if (out->n == 0 && ((lim && edit_distance(tail, strlen(tail), r->sym, slen, lim) <= lim) ||
                                 (slen >= 3 && ci_contains(tail, r->sym))))
            rc = ids_push(h, &b, id);
    }
    if (rc == 0 && out->n == 0) {
        h->free(out->v);
        *out = b;
    } else {
        h->free(b.v);
    }
    return rc;
}

typedef struct named_id {
    uint32_t id;
    unsigned rank;
    const char *name;
} named_id;

static int cmp_named(const void *a, const void *b)
{
    const named_id *x = a, *y = b;
    int c;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    if ((c = strcmp(x->name, y->name)) != 0) return c;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Sorts ids by (rank, qualname) and drops repeated ids. */
static int sort_ids(resolver *r, idlist *l, const unsigned *ranks)
{
    named_id *t;
    size_t o = 0;
    if (l->n < 2) return 0;
    if ((t = r->h->alloc(l->n * sizeof *t)) == NULL) return CN_ENOMEM;
    for (size_t i = 0; i < l->n; i++) {
        t[i].id = l->v[i];
        t[i].rank = ranks ? ranks[i] : 0;
        t[i].name = node_qualname(r->I, r->idx, l->v[i]);
    }
    qsort(t, l->n, sizeof *t, cmp_named);
    for (size_t i = 0; i < l->n; i++)
        if (o == 0 || t[i].id != l->v[o - 1]) l->v[o++] = t[i].id;
    l->n = o;
    r->h->free(t);
    return 0;
}

/* A C prototype next to the definition of the same name is the same
 * function: keep the definitions. */
static void drop_prototypes(resolver *r, idlist *l)
{
    size_t defs = 0, o = 0;
    for (size_t i = 0; i < l->n; i++) {
        cn_node_info nd;
        defs += node_get(r->I, r->idx, l->v[i], &nd) == 0 && nd.kind != CN_NODE_PROTOTYPE;
    }
    if (defs == 0 || defs == l->n) return;
    for (size_t i = 0; i < l->n; i++) {
        cn_node_info nd;
        if (node_get(r->I, r->idx, l->v[i], &nd) == 0 && nd.kind != CN_NODE_PROTOTYPE) l->v[o++] = l->v[i];
    }
    l->n = o;
}

static int settle(resolver *r, idlist *l, const char *how, cn_sg_match *out)
{
    int rc;
    drop_prototypes(r, l);
    if ((rc = sort_ids(r, l, NULL)) < 0) return rc;
    out->status = l->n == 1 ? CN_SG_FOUND : CN_SG_AMBIGUOUS;
    out->how = how;
    out->ids = l->v;
    out->n = l->n;
    l->v = NULL;
    return 0;
}

/* Rule 4: use sites of the name that the graph could not resolve. */
static int unresolved_uses(resolver *r, uint32_t mask, size_t *n_uses)
{
    const cn_host *h = r->h;
    size_t total, got;
    cn_edge_info *e;
    *n_uses = 0;
    if (r->I->unresolved == NULL || mask == 0) return 0;
    total = r->I->unresolved(r->idx, r->sym, mask, NULL, 0);
    if (total == 0 || r->file == NULL) {
        *n_uses = total;
        return 0;
    }
    if ((e = h->alloc(total * sizeof *e)) == NULL) return CN_ENOMEM;
    got = r->I->unresolved(r->idx, r->sym, mask, e, total);
    for (size_t i = 0; i < got && i < total; i++) {
        cn_node_info nd;
        if (node_get(r->I, r->idx, e[i].node, &nd) == 0 && path_matches(nd.path, r->file)) (*n_uses)++;
    }
    h->free(e);
    return 0;
}

/* Names closest to the symbol's last component, in any file. */
static int suggest(resolver *r, idlist *out)
{
    const cn_host *h = r->h;
    uint32_t count = r->I->node_count(r->idx);
    size_t len = strlen(r->last);
    unsigned cap = len / 2 > 2 ? (unsigned)(len / 2) : 2;
    unsigned *ranks = NULL;
    size_t rcap = 0, o = 0;
    int rc = 0;

    for (uint32_t id = 0; id < count && rc == 0; id++) {
        cn_node_info nd;
        unsigned d;
        if (node_get(r->I, r->idx, id, &nd) < 0 || nd.kind == CN_NODE_FILE || nd.kind == CN_NODE_BLOCK) continue;
        if ((d = edit_distance(nd.name, strlen(nd.name), r->last, len, cap)) > cap) continue;
        if ((rc = ids_push(h, out, id)) < 0 ||
            (rc = grow(h, (void **)&ranks, &rcap, out->n, sizeof *ranks)) < 0)
            break;
        ranks[out->n - 1] = d;
    }
    if (rc == 0) rc = sort_ids(r, out, ranks);
    /* sort_ids leaves distinct ids; keep one per qualname */
    for (size_t i = 0; rc == 0 && i < out->n && o < MAX_SUGGESTIONS; i++) {
        const char *q = node_qualname(r->I, r->idx, out->v[i]);
        int dup = 0;
        for (size_t j = 0; j < o && !dup; j++) dup = strcmp(node_qualname(r->I, r->idx, out->v[j]), q) == 0;
        if (!dup) out->v[o++] = out->v[i];
    }
    if (rc == 0) out->n = o;
    h->free(ranks);
    return rc < 0 ? CN_ENOMEM : 0;
}

/* Rule 1 and the split of "path:qualified" into a file filter and a name. */
static int exact_qualname(resolver *r, const char *symbol, const char **rest, idlist *l)
{
    size_t len = strlen(symbol);
    char q[MAX_SYMBOL + 1];
    uint32_t id;
    *rest = symbol;
    while (len && isspace((unsigned char)*symbol)) symbol++, len--;
    while (len && isspace((unsigned char)symbol[len - 1])) len--;
    if (len >= 2 && symbol[len - 2] == '(' && symbol[len - 1] == ')') len -= 2;
    if (len == 0 || len > MAX_SYMBOL) return 0;
    memcpy(q, symbol, len);
    q[len] = '\0';
    if (r->I->node_by_qualname(r->idx, q, &id, NULL) == 0) {
        cn_node_info nd;
        if (node_get(r->I, r->idx, id, &nd) == 0 && path_matches(nd.path, r->file)) return ids_push(r->h, l, id);
    }
    /* "pkg/pool.py:ConnectionPool.get" that is no node: look the
     * qualified part up within that file */
    for (size_t i = 0; i + 1 < len; i++) {
        if (q[i] != ':') continue;
        if (q[i + 1] == ':') {
            i++;
            continue;
        }
        if (i == 0) break;
        *rest = symbol + i + 1;
        return 1;   /* caller sets the filter from symbol[0, i) */
    }
    return 0;
}

static int resolve_steps(resolver *r, const char *symbol, uint32_t use_mask, cn_sg_match *out)
{
    idlist l = {NULL, 0, 0};
    const char *rest;
    int rc = exact_qualname(r, symbol, &rest, &l);
    if (rc < 0) return rc;
    if (l.n) return settle(r, &l, "qualname", out);
    if (rc == 1) {
        /* the filter's text lives in out->file, owned by the match */
        size_t plen = (size_t)(rest - symbol) - 1;
        while (plen && isspace((unsigned char)*symbol)) symbol++, plen--;
        r->h->free(out->file);
        if ((out->file = r->h->alloc(plen + 1)) == NULL) return CN_ENOMEM;
        memcpy(out->file, symbol, plen);
        out->file[plen] = '\0';
        r->file = out->file;
    }
    if (normalize(r, rest, strlen(rest)) < 0) return CN_EINVAL;
    if ((out->name = r->h->strdup(r->sym)) == NULL) return CN_ENOMEM;
    if ((rc = by_name(r, &l)) < 0) goto fail;
    if (l.n) return settle(r, &l, r->comps > 1 ? "qualified" : "name", out);
    if ((rc = unresolved_uses(r, use_mask, &out->n_uses)) < 0) goto fail;
    if (out->n_uses) {
        out->status = CN_SG_UNRESOLVED;
        out->how = "unresolved";
        return 0;
    }
    if ((rc = fuzzy(r, &l)) < 0) goto fail;
    if (l.n) return settle(r, &l, "fuzzy", out);
    if ((rc = suggest(r, &l)) < 0) goto fail;
    out->status = CN_SG_NOT_FOUND;
    out->ids = l.v;
    out->n = l.n;
    return 0;
fail:
    r->h->free(l.v);
    return rc;
}

int cn_sg_resolve(const cn_host *h, const struct cn_index *idx, const char *symbol, const char *file_path,
                  uint32_t use_mask, cn_sg_match *out, cn_error *err)
{
    resolver rs, *r = &rs;
    int rc;

    memset(out, 0, sizeof *out);
    out->status = CN_SG_NOT_FOUND;
    if (symbol == NULL || strspn(symbol, " \t\r\n") == strlen(symbol))
        return h->error_set(err, CN_EINVAL, "the symbol to look up is empty: pass a name such as "
                                            "\"acquire\", \"ConnectionPool.acquire\" or "
                                            "\"pkg/pool.py:ConnectionPool.acquire\"");
    if (strlen(symbol) > MAX_SYMBOL)
        return h->error_set(err, CN_EINVAL, "the symbol to look up is %zu characters long; a name is at "
                                            "most %d", strlen(symbol), MAX_SYMBOL);
    if (file_path != NULL && *file_path && (out->file = h->strdup(file_path)) == NULL)
        return h->error_set(err, CN_ENOMEM, "out of memory");
    memset(r, 0, sizeof *r);
    r->h = h;
    r->I = h->index;
    r->idx = idx;
    r->file = out->file;
    rc = resolve_steps(r, symbol, use_mask, out);
    if (rc == CN_EINVAL) {
        cn_sg_match_free(h, out);
        return h->error_set(err, CN_EINVAL, "'%s' is not a symbol name: pass a name such as \"acquire\", "
                                            "\"ConnectionPool.acquire\" or "
                                            "\"pkg/pool.py:ConnectionPool.acquire\"", symbol);
    }
    if (rc < 0) {
        cn_sg_match_free(h, out);
        return h->error_set(err, CN_ENOMEM, "out of memory");
    }
    if (out->name == NULL && (out->name = h->strdup(symbol)) == NULL) {
        cn_sg_match_free(h, out);
        return h->error_set(err, CN_ENOMEM, "out of memory");
    }
    return 0;
}

void cn_sg_match_free(const cn_host *h, cn_sg_match *m)
{
    h->free(m->ids);
    h->free(m->name);
    h->free(m->file);
    memset(m, 0, sizeof *m);
}

cn_json *cn_sg_node_json(const cn_host *h, const struct cn_index *idx, uint32_t node, int content, int gutter,
                         cn_error *err)
{
    cn_su_node_opts o;
    memset(&o, 0, sizeof o);
    o.content = content;
    o.gutter = gutter;
    o.no_score = 1;
    return cn_su_node_json(h, idx, node, 0.0, &o, err);
}

static cn_json *oom(const cn_host *h, cn_json *v, cn_error *err)
{
    h->json->put(v);
    h->error_set(err, CN_ENOMEM, "out of memory");
    return NULL;
}

static int hint(const cn_host *h, cn_json *obj, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int hint(const cn_host *h, cn_json *obj, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return h->json->object_set(obj, "hint", h->json->new_string(buf));
}

cn_json *cn_sg_match_json(const cn_host *h, const struct cn_index *idx, const cn_sg_match *m, const char *role,
                          cn_error *err)
{
    const cn_json_services *J = h->json;
    cn_json *obj = J->new_object(), *list = J->new_array();
    int ambiguous = m->status == CN_SG_AMBIGUOUS;
    char in_file[600] = "";

    if (obj == NULL || list == NULL) {
        J->put(list);
        return oom(h, obj, err);
    }
    if (m->file) snprintf(in_file, sizeof in_file, " in '%s'", m->file);
    J->object_set(obj, "status", J->new_string(ambiguous ? "ambiguous" : "not_found"));
    J->object_set(obj, role, J->new_string(m->name));
    for (size_t i = 0; i < m->n && i < MAX_CANDIDATES; i++) {
        cn_json *c = ambiguous ? cn_sg_node_json(h, idx, m->ids[i], 0, 0, err)
                               : J->new_string(node_qualname(h->index, idx, m->ids[i]));
        if (c == NULL) {
            J->put(list);
            J->put(obj);
            return NULL;
        }
        J->array_append(list, c);
    }
    J->object_set(obj, ambiguous ? "candidates" : "suggestions", list);
    if (ambiguous) {
        J->object_set(obj, "total_candidates", J->new_int((int64_t)m->n));
        int by_file = strcmp(role, "symbol") == 0;   /* only find_callers/callees take file_path */
        hint(h, obj, "'%s'%s %s %zu symbols; no guess was made. Call again with %s set to one "
                     "candidate's node_name (\"path:Class.method\")%s a qualified name such as "
                     "\"Class.method\"%s.",
             m->name, in_file, strcmp(m->how, "fuzzy") == 0 ? "matches no symbol exactly but resembles"
                                                            : "names",
             m->n, role, by_file ? "," : " or", by_file ? ", or with file_path to narrow to one file" : "");
    } else if (m->status == CN_SG_UNRESOLVED) {
        hint(h, obj, "'%s' is not defined in the repository; it is used at %zu place(s) that the graph "
                     "could not resolve (a library or builtin). find_callers '%s' lists those uses.",
             m->name, m->n_uses, m->name);
    } else {
        hint(h, obj, "no symbol matches '%s'%s, exactly or approximately.%s Check the spelling, or "
                     "search the code with a text search first.",
             m->name, in_file, m->n ? " The closest names are in suggestions." : "");
    }
    return obj;
}

/* ---- find_callers / find_callees ---------------------------------------- */

typedef struct nb_entry {
    uint32_t node;           /* the result; CN_SG_NONE: an unresolved callee */
    uint32_t via;            /* the node at depth - 1 it connects to, or
                                CN_SG_NONE (uses of an unresolved name) */
    uint32_t line, column;
    int type;
    unsigned depth;
    int guess;               /* an unresolved call that may be this one */
    const char *name;        /* as written at the use site */
    const char *site;        /* file of the use site (ordering) */
    const char *key;         /* node qualname, or the written name */
} nb_entry;

typedef struct nb_walk {
    const cn_host *h;
    const cn_index_services *I;
    const struct cn_index *idx;
    int direction;
    uint32_t mask;
    int filter_test;
    int guess;               /* find_callers: add the guessed callers */
    unsigned max_depth;
    uint8_t *depth_of;       /* per node: 0 unseen, else depth + 1 */
    nb_entry *v;
    size_t n, cap;
    int truncated;
} nb_walk;

static int is_test_node(const cn_node_info *nd)
{
    return nd->is_test || (nd->flags & CN_NODE_F_TEST);
}

static int nb_add(nb_walk *w, const nb_entry *e)
{
    if (w->n >= NB_BUDGET) {
        w->truncated = 1;
        return 0;
    }
    if (grow(w->h, (void **)&w->v, &w->cap, w->n + 1, sizeof *w->v) < 0) return CN_ENOMEM;
    w->v[w->n++] = *e;
    return 0;
}

/* The use sites of one node of the frontier at depth d - 1.  A node reached
 * at this depth joins the next frontier. */
static int nb_expand(nb_walk *w, uint32_t from, unsigned d, idlist *next, cn_error *err)
{
    cn_edge_info *edges;
    cn_node_info fromnd;
    size_t n;
    int rc = cn_sg_edges(w->h, w->idx, from, w->mask, w->direction, &edges, &n, err);
    if (rc < 0) return rc;
    if (node_get(w->I, w->idx, from, &fromnd) < 0) fromnd.path = "";
    for (size_t i = 0; i < n && rc == 0 && !w->truncated; i++) {
        nb_entry e;
        cn_node_info nd;
        memset(&e, 0, sizeof e);
        e.via = from;
        e.line = edges[i].line;
        e.column = edges[i].column;
        e.type = edges[i].type;
        e.depth = d;
        e.name = edges[i].name;
        if (!edges[i].resolved || edges[i].node == CN_SG_NONE) {
            /* only outgoing edges can lack a target */
            e.node = CN_SG_NONE;
            e.site = fromnd.path;
            e.key = e.name;
            rc = nb_add(w, &e);
            continue;
        }
        e.node = edges[i].node;
        if (node_get(w->I, w->idx, e.node, &nd) < 0) continue;
        if (w->filter_test && is_test_node(&nd)) continue;
        e.site = w->direction == CN_EDGES_IN ? nd.path : fromnd.path;
        e.key = nd.qualname;
        /* depth 1 lists every direct use, recursion included; deeper
         * levels only nodes not met closer to the symbol */
        if (d > 1 && w->depth_of[e.node] && w->depth_of[e.node] != d + 1) continue;
        if ((rc = nb_add(w, &e)) < 0) break;
        if (!w->depth_of[e.node]) {
            w->depth_of[e.node] = (uint8_t)(d + 1);
            rc = ids_push(w->h, next, e.node);
        }
    }
    w->h->free(edges);
    return rc < 0 ? w->h->error_set(err, CN_ENOMEM, "out of memory") : 0;
}

/* A depth-1 entry for the use site e in node nd, connected to via
 * (CN_SG_NONE: an unresolved name), guessed or not. */
static void nb_from_use(nb_entry *x, const cn_edge_info *e, const cn_node_info *nd, uint32_t via, int guess)
{
    memset(x, 0, sizeof *x);
    x->node = e->node;
    x->via = via;
    x->line = e->line;
    x->column = e->column;
    x->type = e->type;
    x->depth = 1;
    x->guess = guess;
    x->name = e->name;
    x->site = nd->path;
    x->key = nd->qualname;
}

/* Depth 1 of an unresolved name: its use sites, from unresolved(). */
static int nb_unresolved_seed(nb_walk *w, const char *name, const char *file, idlist *next, cn_error *err)
{
    size_t total = w->I->unresolved(w->idx, name, w->mask, NULL, 0), got;
    cn_edge_info *e;
    int rc = 0;
    if (total == 0) return 0;
    if ((e = w->h->alloc(total * sizeof *e)) == NULL) return w->h->error_set(err, CN_ENOMEM, "out of memory");
    got = w->I->unresolved(w->idx, name, w->mask, e, total);
    for (size_t i = 0; i < got && i < total && rc == 0; i++) {
        nb_entry x;
        cn_node_info nd;
        if (node_get(w->I, w->idx, e[i].node, &nd) < 0 || !path_matches(nd.path, file)) continue;
        if (w->filter_test && is_test_node(&nd)) continue;
        nb_from_use(&x, &e[i], &nd, CN_SG_NONE, 0);
        if ((rc = nb_add(w, &x)) == 0 && !w->depth_of[x.node]) {
            w->depth_of[x.node] = 2;
            rc = ids_push(w->h, next, x.node);
        }
    }
    w->h->free(e);
    return rc < 0 ? w->h->error_set(err, CN_ENOMEM, "out of memory") : 0;
}

static int cmp_entry(const void *a, const void *b)
{
    const nb_entry *x = a, *y = b;
    int c;
    if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
    if (x->guess != y->guess) return x->guess - y->guess;
    if ((c = strcmp(x->site, y->site)) != 0) return c;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    if (x->column != y->column) return x->column < y->column ? -1 : 1;
    if ((c = strcmp(x->key, y->key)) != 0) return c;
    if (x->type != y->type) return x->type < y->type ? -1 : 1;
    return x->via < y->via ? -1 : x->via > y->via;
}

/* The order that puts copies of one use next to each other: the same
 * (depth, site, line, node, via, type) -- and name, for an unresolved
 * callee -- with the first column first. */
static int cmp_same_use(const void *a, const void *b)
{
    const nb_entry *x = a, *y = b;
    int c;
    if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
    if ((c = strcmp(x->site, y->site)) != 0) return c;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    if (x->via != y->via) return x->via < y->via ? -1 : 1;
    if (x->type != y->type) return x->type < y->type ? -1 : 1;
    if (x->guess != y->guess) return x->guess - y->guess;
    if (x->node == CN_SG_NONE && (c = strcmp(x->name, y->name)) != 0) return c;
    return x->column < y->column ? -1 : x->column > y->column;
}

/* Sorted; one entry per (node, via, line, type): two uses on one line
 * ("f(f(x))") read as one, the first column kept.  Copies are found next
 * to each other in a sort of their own, not by scanning the line's other
 * entries: one generated line can hold a hundred thousand uses. */
static void nb_sort(nb_walk *w)
{
    size_t o = 0;
    if (w->n == 0) return;   /* qsort wants a real array even for none */
    qsort(w->v, w->n, sizeof *w->v, cmp_same_use);
    for (size_t i = 0; i < w->n; i++) {
        const nb_entry *p = o ? &w->v[o - 1] : NULL, *e = &w->v[i];
        if (p && p->depth == e->depth && p->line == e->line && p->node == e->node && p->via == e->via &&
            p->type == e->type && p->guess == e->guess && strcmp(p->site, e->site) == 0 &&
            (e->node != CN_SG_NONE || strcmp(p->name, e->name) == 0))
            continue;
        w->v[o++] = w->v[i];
    }
    w->n = o;
    qsort(w->v, w->n, sizeof *w->v, cmp_entry);
}

/* "candidates": the methods a call written "x.m" on an unknown receiver
 * may reach (at most CN_SG_GUESS_MAX_METHODS, with candidates_total when
 * there are more); nothing for a name without a receiver or no method. */
static int nb_candidates(nb_walk *w, cn_json *obj, const char *written, cn_error *err)
{
    const cn_json_services *J = w->h->json;
    const char *m = written;
    uint32_t *ids;
    long nm;
    cn_json *list;
    for (const char *p = written; *p; p++)
        if (*p == '.' || (*p == '>' && p > written && p[-1] == '-')) m = p + 1;
    if (m == written || !member_use(written, m)) return 0;
    if ((nm = methods_named(w->h, w->idx, m, &ids)) <= 0) return nm < 0 ? CN_ENOMEM : 0;
    if ((list = J->new_array()) == NULL) {
        w->h->free(ids);
        return CN_ENOMEM;
    }
    for (long k = 0; k < nm && k < CN_SG_GUESS_MAX_METHODS; k++)
        J->array_append(list, J->new_string(node_qualname(w->I, w->idx, ids[k])));
    w->h->free(ids);
    J->object_set(obj, "candidates", list);
    if (nm > CN_SG_GUESS_MAX_METHODS) J->object_set(obj, "candidates_total", J->new_int(nm));
    (void)err;
    return 0;
}

static cn_json *nb_entry_json(nb_walk *w, const nb_entry *e, int content, int gutter, uint32_t symbol,
                              cn_error *err)
{
    const cn_json_services *J = w->h->json;
    cn_json *obj;
    if (e->node == CN_SG_NONE) {
        if ((obj = J->new_object()) == NULL) return oom(w->h, NULL, err);
        J->object_set(obj, "resolved", J->new_bool(0));
        J->object_set(obj, "name", J->new_string(e->name));
        if (nb_candidates(w, obj, e->name, err) < 0) return oom(w->h, obj, err);
    } else if (e->guess) {
        if ((obj = cn_sg_node_json(w->h, w->idx, e->node, content, gutter, err)) == NULL) return NULL;
        J->object_set(obj, "resolved", J->new_bool(0));
        J->object_set(obj, "name", J->new_string(e->name));
        if (nb_candidates(w, obj, e->name, err) < 0) return oom(w->h, obj, err);
    } else {
        if ((obj = cn_sg_node_json(w->h, w->idx, e->node, content, gutter, err)) == NULL) return NULL;
        J->object_set(obj, "resolved", J->new_bool(1));
        if (e->via == CN_SG_NONE) J->object_set(obj, "name", J->new_string(e->name));
    }
    J->object_set(obj, "edge", J->new_string(cn_sg_edge_name(e->type)));
    J->object_set(obj, "line", J->new_int(e->line));
    J->object_set(obj, "depth", J->new_int(e->depth));
    if (e->via != CN_SG_NONE && e->via != symbol)
        J->object_set(obj, "via", J->new_string(node_qualname(w->I, w->idx, e->via)));
    return obj;
}

typedef struct nb_args {
    const char *symbol, *file_path;
    uint32_t mask;
    unsigned depth;
    size_t top_k;
    int content, gutter, filter_test, guess;
} nb_args;

static int nb_parse(const cn_host *h, const cn_json *args, nb_args *a, cn_error *err)
{
    int64_t depth = cn_su_arg_int(h, args, "depth", 1);
    int rc;
    memset(a, 0, sizeof *a);
    a->symbol = cn_su_arg_str(h, args, "symbol");
    if (a->symbol == NULL) return h->error_set(err, CN_EINVAL, "argument 'symbol' must be a string");
    a->file_path = cn_su_arg_str(h, args, "file_path");
    a->mask = CN_SG_CALLS | (cn_su_arg_bool(h, args, "include_references", 1) ? CN_SG_REFS : 0);
    if (depth < 1 || depth > 3)
        return h->error_set(err, CN_EINVAL, "argument 'depth' must be between 1 and 3, got %lld",
                            (long long)depth);
    a->depth = (unsigned)depth;
    if ((rc = cn_su_arg_top_k(h, args, "top_k", 500, &a->top_k, err)) < 0) return rc;
    a->content = cn_su_arg_bool(h, args, "return_content", 0);
    a->gutter = cn_su_arg_bool(h, args, "wrap_with_line_numbers", 0);
    a->filter_test = cn_su_arg_bool(h, args, "filter_test", 0);
    a->guess = cn_su_arg_bool(h, args, "include_unresolved", 1);
    return 0;
}

/* The unresolved calls that may be calls of method `symbol` (depth 1,
 * not walked further). */
static int nb_guesses(nb_walk *w, uint32_t symbol, cn_error *err)
{
    cn_edge_info *e;
    size_t n;
    int rc = cn_sg_guessed_edges(w->h, w->idx, symbol, w->mask, CN_EDGES_IN, 0, &e, &n, err);
    for (size_t i = 0; i < n && rc == 0; i++) {
        nb_entry x;
        cn_node_info nd;
        if (node_get(w->I, w->idx, e[i].node, &nd) < 0) continue;
        if (w->filter_test && is_test_node(&nd)) continue;
        nb_from_use(&x, &e[i], &nd, symbol, 1);
        if (nb_add(w, &x) < 0) rc = w->h->error_set(err, CN_ENOMEM, "out of memory");
    }
    if (n >= CN_SG_GUESS_MAX_USES) w->truncated = 1;
    /* the names are the index's: e itself can go */
    w->h->free(e);
    return rc;
}

static int nb_walk_all(nb_walk *w, const cn_sg_match *m, cn_error *err)
{
    idlist frontier = {NULL, 0, 0}, next = {NULL, 0, 0};
    int rc = 0;
    if (m->status == CN_SG_UNRESOLVED) {
        rc = nb_unresolved_seed(w, m->name, m->file, &frontier, err);
    } else {
        w->depth_of[m->ids[0]] = 1;
        rc = ids_push(w->h, &frontier, m->ids[0]) < 0 ? w->h->error_set(err, CN_ENOMEM, "out of memory") : 0;
    }
    for (unsigned d = m->status == CN_SG_UNRESOLVED ? 2 : 1; rc == 0 && d <= w->max_depth; d++) {
        for (size_t i = 0; i < frontier.n && rc == 0 && !w->truncated; i++)
            rc = nb_expand(w, frontier.v[i], d, &next, err);
        {
            idlist t = frontier;
            frontier = next;
            next = t;
            next.n = 0;
        }
    }
    w->h->free(frontier.v);
    w->h->free(next.v);
    if (rc == 0 && w->guess && m->status == CN_SG_FOUND && w->direction == CN_EDGES_IN)
        rc = nb_guesses(w, m->ids[0], err);
    return rc;
}

static int nb_result(nb_walk *w, const nb_args *a, const cn_sg_match *m, char **result_json, cn_error *err)
{
    const cn_json_services *J = w->h->json;
    cn_json *out = J->new_object(), *list = J->new_array(), *sym;
    uint32_t symbol = m->status == CN_SG_FOUND ? m->ids[0] : CN_SG_NONE;

    if (out == NULL || list == NULL) {
        J->put(list);
        oom(w->h, out, err);
        return CN_ENOMEM;
    }
    if (symbol != CN_SG_NONE) {
        if ((sym = cn_sg_node_json(w->h, w->idx, symbol, 0, 0, err)) == NULL) goto fail;
    } else {
        sym = J->new_object();
        J->object_set(sym, "name", J->new_string(m->name));
        J->object_set(sym, "resolved", J->new_bool(0));
    }
    J->object_set(out, "status", J->new_string("ok"));
    J->object_set(out, "symbol", sym);
    J->object_set(out, "match", J->new_string(m->how));
    for (size_t i = 0; i < w->n && i < a->top_k; i++) {
        cn_json *e = nb_entry_json(w, &w->v[i], a->content, a->gutter, symbol, err);
        if (e == NULL) goto fail;
        J->array_append(list, e);
    }
    J->object_set(out, "results", list);
    J->object_set(out, "total", J->new_int((int64_t)w->n));
    {
        size_t guessed = 0;
        for (size_t i = 0; i < w->n; i++) guessed += w->v[i].guess != 0;
        if (guessed) J->object_set(out, "unresolved", J->new_int((int64_t)guessed));
    }
    J->object_set(out, "truncated", J->new_bool(w->truncated || w->n > a->top_k));
    return cn_su_emit(w->h, out, result_json, err);
fail:
    J->put(list);
    J->put(out);
    return err->code < 0 ? err->code : CN_ENOMEM;
}

int cn_sg_neighbours_run(const cn_host *h, const cn_skill_context *ctx, const cn_json *args, int direction,
                         char **result_json, cn_error *err)
{
    const cn_index_services *I;
    nb_args a;
    nb_walk w;
    cn_sg_match m;
    uint32_t count;
    int rc;

    if ((rc = nb_parse(h, args, &a, err)) < 0) return rc;
    if ((rc = cn_sg_require_graph(h, ctx, &I, err)) < 0) return rc;
    if ((rc = cn_sg_resolve(h, ctx->index, a.symbol, a.file_path, a.mask, &m, err)) < 0) return rc;
    /* an undefined name has users but no body: no callees */
    if (m.status == CN_SG_AMBIGUOUS || m.status == CN_SG_NOT_FOUND ||
        (m.status == CN_SG_UNRESOLVED && direction == CN_EDGES_OUT)) {
        cn_json *v = cn_sg_match_json(h, ctx->index, &m, "symbol", err);
        cn_sg_match_free(h, &m);
        return v ? cn_su_emit(h, v, result_json, err) : err->code;
    }
    memset(&w, 0, sizeof w);
    w.h = h;
    w.I = I;
    w.idx = ctx->index;
    w.direction = direction;
    w.mask = a.mask;
    w.filter_test = a.filter_test;
    w.guess = a.guess;
    w.max_depth = a.depth;
    count = I->node_count(ctx->index);
    if ((w.depth_of = h->alloc(count ? count : 1)) == NULL) {
        cn_sg_match_free(h, &m);
        return h->error_set(err, CN_ENOMEM, "out of memory");
    }
    memset(w.depth_of, 0, count);
    rc = nb_walk_all(&w, &m, err);
    if (rc == 0) {
        nb_sort(&w);
        rc = nb_result(&w, &a, &m, result_json, err);
    }
    h->free(w.depth_of);
    h->free(w.v);
    cn_sg_match_free(h, &m);
    return rc;
}

/* ---- path search --------------------------------------------------------- */

/* Shortest paths first without enumerating every prefix: the fewest hops
 * from each node to a target are computed once (a BFS from the targets
 * against the search direction); then, for H = shortest, shortest + 1, ...
 * max_depth, a depth-first walk in edge order lists the cycle-free paths of
 * exactly H hops, following only nodes that can still reach a target within
 * H.  Each round therefore explores little more than the paths it finds;
 * the budget bounds the rest (cycles, huge fan-in). */

#define DIST_INF UINT16_MAX

typedef struct ps_frame {
    uint32_t node;
    uint32_t line;       /* use site of the edge that reached this node */
    int type;
    int guessed;         /* that edge is a guess (cn_sg_guessed_edges) */
} ps_frame;

typedef struct ps_cand {
    uint32_t node, line;
    int type, guessed;
} ps_cand;

typedef struct ps_state {
    const cn_host *h;
    const cn_index_services *I;
    const struct cn_index *idx;
    const cn_sg_path_query *q;
    uint32_t count;
    unsigned extra;        /* 1: an unresolved target name ends each path */
    unsigned max_hops;     /* max_depth - extra */
    unsigned round;        /* H: the length listed now */
    uint16_t *dist;        /* hops to the nearest target; DIST_INF: none */
    uint8_t *target;       /* per node: 1 when a path may end there */
    uint8_t *onpath;
    uint32_t *stamp;       /* per node: the expansion that last saw it */
    uint32_t serial;
    ps_frame *stk;         /* the path being walked, source first */
    cn_edge_info *uses;    /* unresolved target: use sites, by source node */
    size_t n_uses;
    size_t work;           /* expansions, against q->budget */
    int stop;
    cn_sg_paths *out;
} ps_state;

static int ps_oom(ps_state *s, cn_error *err)
{
    return s->h->error_set(err, CN_ENOMEM, "out of memory");
}

/* The edges of `node` the search follows: the graph's, then (q->guess)
 * the guessed calls on receivers of unknown type. */
static int ps_edges(ps_state *s, uint32_t node, int direction, cn_edge_info **out, size_t *n, cn_error *err)
{
    cn_edge_info *g, *all;
    size_t ng;
    int rc = cn_sg_edges(s->h, s->idx, node, s->q->mask, direction, out, n, err);
    if (rc < 0 || !s->q->guess) return rc;
    if ((rc = cn_sg_guessed_edges(s->h, s->idx, node, s->q->mask, direction, CN_SG_GUESS_MAX_METHODS, &g, &ng,
                                  err)) < 0) {
        s->h->free(*out);
        *out = NULL;
        return rc;
    }
    if (ng == 0) return 0;
    if ((all = s->h->realloc(*out, (*n + ng) * sizeof *all)) == NULL) {
        s->h->free(g);
        s->h->free(*out);
        *out = NULL;
        return ps_oom(s, err);
    }
    memcpy(all + *n, g, ng * sizeof *g);
    s->h->free(g);
    *out = all;
    *n += ng;
    return 0;
}

/* Up without a target: the entry points above the source (nothing calls
 * them with the edges followed, or they run on their own: tests,
 * module-level blocks, files) become the targets.  dist serves as the
 * visited mark here; ps_distances resets it. */
static int ps_entry_points(ps_state *s, cn_error *err)
{
    idlist queue = {NULL, 0, 0};
    int rc = ids_push(s->h, &queue, s->q->source) < 0 ? ps_oom(s, err) : 0;
    memset(s->dist, 0xff, s->count * sizeof *s->dist);
    if (rc == 0) s->dist[s->q->source] = 0;
    for (size_t i = 0; i < queue.n && rc == 0; i++) {
        uint32_t node = queue.v[i];
        cn_node_info nd;
        cn_edge_info *e;
        size_t n;
        if (node_get(s->I, s->idx, node, &nd) == 0 &&
            (nd.kind == CN_NODE_FILE || nd.kind == CN_NODE_BLOCK || is_test_node(&nd))) {
            s->target[node] = 1;
            continue;
        }
        if ((rc = ps_edges(s, node, CN_EDGES_IN, &e, &n, err)) < 0) break;
        if (n == 0) s->target[node] = 1;
        for (size_t k = 0; k < n && rc == 0; k++) {
            uint32_t o = e[k].node;
            if (o >= s->count || s->dist[o] == 0) continue;
            s->dist[o] = 0;
            if (ids_push(s->h, &queue, o) < 0) rc = ps_oom(s, err);
        }
        s->h->free(e);
    }
    s->h->free(queue.v);
    return rc;
}

/* The target node, or the nodes that use the unresolved target name. */
static int ps_targets(ps_state *s, cn_error *err)
{
    const cn_sg_path_query *q = s->q;
    size_t total;
    if (!q->has_target) return ps_entry_points(s, err);
    if (q->target != CN_SG_NONE) {
        if (q->target < s->count) s->target[q->target] = 1;
        return 0;
    }
    total = s->I->unresolved(s->idx, q->target_name, q->mask, NULL, 0);
    s->extra = 1;
    if (total == 0) return 0;
    if ((s->uses = s->h->alloc(total * sizeof *s->uses)) == NULL) return ps_oom(s, err);
    s->n_uses = s->I->unresolved(s->idx, q->target_name, q->mask, s->uses, total);
    if (s->n_uses > total) s->n_uses = total;
    for (size_t i = 0; i < s->n_uses; i++)
        if (s->uses[i].node < s->count) s->target[s->uses[i].node] = 1;
    return 0;
}

/* Multi-source BFS from the targets against the search direction. */
static int ps_distances(ps_state *s, cn_error *err)
{
    int rev = s->q->direction == CN_EDGES_OUT ? CN_EDGES_IN : CN_EDGES_OUT;
    idlist cur = {NULL, 0, 0}, next = {NULL, 0, 0};
    int rc = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        s->dist[i] = DIST_INF;
        if (s->target[i]) {
            s->dist[i] = 0;
            if (ids_push(s->h, &cur, i) < 0) rc = ps_oom(s, err);
        }
    }
    for (uint16_t d = 1; rc == 0 && cur.n && d < DIST_INF - 1; d++) {
        for (size_t i = 0; i < cur.n && rc == 0; i++) {
            cn_edge_info *e;
            size_t n;
            if ((rc = ps_edges(s, cur.v[i], rev, &e, &n, err)) < 0) break;
            for (size_t k = 0; k < n && rc == 0; k++) {
                uint32_t o = e[k].node;
                if (!e[k].resolved || o >= s->count || s->dist[o] != DIST_INF) continue;
                s->dist[o] = d;
                if (ids_push(s->h, &next, o) < 0) rc = ps_oom(s, err);
            }
            s->h->free(e);
        }
        {
            idlist t = cur;
            cur = next;
            next = t;
            next.n = 0;
        }
    }
    s->h->free(cur.v);
    s->h->free(next.v);
    return rc;
}

/* The first use site of the unresolved target name in `node`. */
static uint32_t ps_use_line(const ps_state *s, uint32_t node, int *type)
{
    for (size_t i = 0; i < s->n_uses; i++)
        if (s->uses[i].node == node) {
            *type = s->uses[i].type;
            return s->uses[i].line;
        }
    *type = CN_EDGE_CALLS;
    return UINT32_MAX;
}

/* Records the walked path stk[0, len], in call order: each hop but the
 * last carries the use site in it that leads to the next hop. */
static int ps_emit(ps_state *s, unsigned len)
{
    cn_sg_paths *o = s->out;
    size_t n = (size_t)len + 1;
    cn_sg_hop *hops;
    cn_sg_path *p;
    if ((hops = s->h->alloc((n + s->extra) * sizeof *hops)) == NULL) return CN_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if (s->q->direction == CN_EDGES_OUT) {
            /* walked along the calls: stk[i] calls stk[i + 1] */
            hops[i].node = s->stk[i].node;
            hops[i].line = i + 1 < n ? s->stk[i + 1].line : UINT32_MAX;
            hops[i].type = i + 1 < n ? s->stk[i + 1].type : 0;
            hops[i].guessed = i + 1 < n ? s->stk[i + 1].guessed : 0;
        } else {
            /* walked against them: stk[j] calls stk[j - 1] at its line */
            size_t j = n - 1 - i;
            hops[i].node = s->stk[j].node;
            hops[i].line = j > 0 ? s->stk[j].line : UINT32_MAX;
            hops[i].type = j > 0 ? s->stk[j].type : 0;
            hops[i].guessed = j > 0 ? s->stk[j].guessed : 0;
        }
    }
    if (s->extra) {
        hops[n - 1].line = ps_use_line(s, hops[n - 1].node, &hops[n - 1].type);
        hops[n].node = CN_SG_NONE;
        hops[n].line = UINT32_MAX;
        hops[n].type = 0;
        hops[n].guessed = 0;
        hops[n - 1].guessed = 0;
    }
    if ((p = s->h->realloc(o->v, (o->n + 1) * sizeof *p)) == NULL) {
        s->h->free(hops);
        return CN_ENOMEM;
    }
    o->v = p;
    o->v[o->n].hops = hops;
    o->v[o->n].n = n + s->extra;
    o->n++;
    return 0;
}

/* A path of `len` hops ends on the stack: record it, or stop when
 * max_paths are already there (one more exists: truncated). */
static int ps_found(ps_state *s, unsigned len)
{
    if (s->out->n >= s->q->max_paths) {
        s->out->truncated = 1;
        s->stop = 1;
        return 0;
    }
    return ps_emit(s, len);
}

/* The next hops from stk[d] that can still end a path of `round` hops,
 * each neighbour once (its first use site), in edge order. */
static int ps_candidates(ps_state *s, unsigned d, ps_cand **out, size_t *n_out, cn_error *err)
{
    cn_edge_info *e;
    size_t n, o = 0;
    uint32_t serial = ++s->serial;
    int rc = ps_edges(s, s->stk[d].node, s->q->direction, &e, &n, err);
    *out = NULL;
    *n_out = 0;
    if (rc < 0 || n == 0) return rc;
    if ((*out = s->h->alloc(n * sizeof **out)) == NULL) {
        s->h->free(e);
        return ps_oom(s, err);
    }
    for (size_t k = 0; k < n; k++) {
        uint32_t v = e[k].node;
        if (!e[k].resolved || v >= s->count || s->stamp[v] == serial) continue;
        s->stamp[v] = serial;
        if (s->onpath[v] || s->dist[v] == DIST_INF) continue;
        if (d + 1 + (unsigned)s->dist[v] > s->max_hops) {
            s->out->truncated = 1;   /* a longer way exists */
            continue;
        }
        if (d + 1 + (unsigned)s->dist[v] > s->round) continue;
        (*out)[o].node = v;
        (*out)[o].line = e[k].line;
        (*out)[o].type = e[k].type;
        (*out)[o].guessed = e[k].resolved == 2;
        o++;
    }
    s->h->free(e);
    *n_out = o;
    return 0;
}

static int ps_walk(ps_state *s, unsigned d, cn_error *err)
{
    ps_cand *c;
    size_t n;
    int rc;
    if (++s->work > s->q->budget) {
        s->out->truncated = 1;
        s->stop = 1;
        return 0;
    }
    if ((rc = ps_candidates(s, d, &c, &n, err)) < 0) return rc;
    for (size_t i = 0; i < n && rc == 0 && !s->stop; i++) {
        s->stk[d + 1].node = c[i].node;
        s->stk[d + 1].line = c[i].line;
        s->stk[d + 1].type = c[i].type;
        s->stk[d + 1].guessed = c[i].guessed;
        if (s->target[c[i].node]) {
            /* paths end at the first target; shorter ones were listed in
             * an earlier round */
            if (d + 1 == s->round && ps_found(s, d + 1) < 0) rc = ps_oom(s, err);
            continue;
        }
        s->onpath[c[i].node] = 1;
        rc = ps_walk(s, d + 1, err);
        s->onpath[c[i].node] = 0;
    }
    s->h->free(c);
    return rc;
}

static int ps_search(ps_state *s, cn_error *err)
{
    uint32_t src = s->q->source;
    int rc = 0;
    s->stk[0].node = src;
    s->stk[0].line = UINT32_MAX;
    s->stk[0].type = 0;
    s->stk[0].guessed = 0;
    if (s->target[src]) {
        /* the source is the target, uses the target name, or is an entry
         * point: the shortest path, and paths end at a target */
        return s->extra <= s->q->max_depth && ps_emit(s, 0) < 0 ? ps_oom(s, err) : 0;
    }
    if (s->dist[src] == DIST_INF) return 0;
    s->onpath[src] = 1;
    for (s->round = s->dist[src]; s->round <= s->max_hops && rc == 0 && !s->stop; s->round++)
        rc = ps_walk(s, 0, err);
    s->onpath[src] = 0;
    if (rc == 0 && s->out->n == 0 && s->dist[src] > s->max_hops) {
        s->out->truncated = 1;
        s->out->shortest = s->dist[src] + s->extra;
    }
    return rc;
}

int cn_sg_find_paths(const cn_host *h, const struct cn_index *idx, const cn_sg_path_query *q, cn_sg_paths *out,
                     cn_error *err)
{
    ps_state s;
    int rc = 0;

    memset(out, 0, sizeof *out);
    memset(&s, 0, sizeof s);
    s.h = h;
    s.I = h->index;
    s.idx = idx;
    s.q = q;
    s.out = out;
    s.count = s.I->node_count(idx);
    if (q->source >= s.count) return h->error_set(err, CN_ENOTFOUND, "no node %u in the index", q->source);
    if (q->max_depth < 1 || q->max_depth > 64 || q->max_paths < 1)
        return h->error_set(err, CN_EINVAL, "path search limits out of range (max_depth %u, max_paths %zu)",
                            q->max_depth, q->max_paths);
    s.dist = h->alloc(s.count * sizeof *s.dist);
    s.target = h->alloc(s.count);
    s.onpath = h->alloc(s.count);
    s.stamp = h->alloc(s.count * sizeof *s.stamp);
    s.stk = h->alloc((q->max_depth + 2) * sizeof *s.stk);
    if (s.dist == NULL || s.target == NULL || s.onpath == NULL || s.stamp == NULL || s.stk == NULL) {
        rc = ps_oom(&s, err);
        goto done;
    }
    memset(s.target, 0, s.count);
    memset(s.onpath, 0, s.count);
    memset(s.stamp, 0, s.count * sizeof *s.stamp);
    if ((rc = ps_targets(&s, err)) < 0 || (rc = ps_distances(&s, err)) < 0) goto done;
    if (s.extra > q->max_depth) goto done;
    s.max_hops = q->max_depth - s.extra;
    rc = ps_search(&s, err);
done:
    h->free(s.dist);
    h->free(s.target);
    h->free(s.onpath);
    h->free(s.stamp);
    h->free(s.stk);
    h->free(s.uses);
    if (rc < 0) cn_sg_paths_free(h, out);
    return rc;
}

void cn_sg_paths_free(const cn_host *h, cn_sg_paths *p)
{
    for (size_t i = 0; i < p->n; i++) h->free(p->v[i].hops);
    h->free(p->v);
    memset(p, 0, sizeof *p);
}

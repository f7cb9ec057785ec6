/* SPDX-License-Identifier: Apache-2.0 */
/* lsp-static: definition and references served from the compiled index.
 *
 * Everything goes through the host's index services: names resolve over
 * the nodes index, positions over the use sites the symbol graph recorded
 * (edge_at), and references are the graph's incoming use-site edges plus
 * the unresolved use sites written with the same name.  The route
 * extension lives in cn_lsp_route.c.
 *
 * Metadata: behavior_contract is "static-symbol-graph" for name requests
 * and route, "static-symbol-graph-position" for positions with a
 * character, "static-node-names" when the index has no graph (definition
 * is still served from the nodes index: names resolve, a position gives
 * the definition named there or definitions of the identifier under it;
 * references and route then answer status "unavailable").
 * fallback_reason marks every answer that is a guess or empty:
 *   fuzzy_name_match, symbol_not_found (by name);
 *   unresolved_use_site_name_match (the graph did not resolve the use
 *     site: definitions by its name; for references, uses written with the
 *     name that the graph could not resolve, listed with resolved:false);
 *   identifier_name_match (no use site at the position: definitions of
 *     the identifier there), declaration_name_match (a C prototype: the
 *     functions of its name with a body, static ones of other files left
 *     out), no_symbol_at_position;
 *   symbol_graph_unavailable; route's own reasons in cn_lsp_route.c.
 * index_snapshot is a fingerprint of the nodes and edges (make_snapshot).
 *
 * Thread safety: the provider's state is fixed at create() and every
 * index service only reads, so one provider serves several threads at
 * once.  (The host still serialises calls; see core/plugin/cn_host_lsp.c.) */
#include "cn_lsp_static.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <codenib/backend.h>
#include <codenib/lang.h>
#include <codenib/skill.h>

#define MAX_TARGETS 16      /* definitions whose references one request collects */
#define MAX_FUZZY 2000      /* fuzzy candidates kept before ranking */
#define NAME_MAX_LEN 512

/* ---- small helpers ------------------------------------------------------ */

static const char *const kind_names[] = {
    "file", "class", "function", "method", "block", "struct", "union", "enum",
    "typedef", "macro", "prototype", "variable", "module",
};

static const char *kind_name(int kind)
{
    return kind >= 0 && (size_t)kind < sizeof kind_names / sizeof kind_names[0] ? kind_names[kind] : "unknown";
}

const char *cn_lsp_edge_name(int type)
{
    switch (type) {
    case CN_EDGE_CONTAINS: return "contains";
    case CN_EDGE_CALLS: return "calls";
    case CN_EDGE_REFERENCES: return "references";
    case CN_EDGE_IMPORTS: return "imports";
    case CN_EDGE_INHERITS: return "inherits";
    }
    return "unknown";
}

static int oom(const cn_lsp_static *p, cn_error *err)
{
    return p->host->error_set(err, CN_ENOMEM, "out of memory");
}

static int get_node(const cn_lsp_static *p, uint32_t id, cn_node_info *nd, cn_error *err)
{
    memset(nd, 0, sizeof *nd);
    nd->struct_size = (uint32_t)sizeof *nd;
    return p->I->node(p->idx, id, nd, err);
}

static int is_ident_char(int c)
{
    return isalnum(c) || c == '_' || c == '$';
}

/* ---- candidates --------------------------------------------------------- */

void cn_lsp_cands_free(const cn_lsp_static *p, cn_lsp_cands *c)
{
    p->host->free(c->items);
    memset(c, 0, sizeof *c);
}

int cn_lsp_cands_add(const cn_lsp_static *p, cn_lsp_cands *c, uint32_t node, double score)
{
    for (size_t i = 0; i < c->len; i++) {
        if (c->items[i].node == node) {
            if (score > c->items[i].score) c->items[i].score = score;
            return 0;
        }
    }
    if (c->len == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        cn_lsp_cand *n = p->host->realloc(c->items, cap * sizeof *n);
        if (n == NULL) return CN_ENOMEM;
        c->items = n;
        c->cap = cap;
    }
    c->items[c->len].node = node;
    c->items[c->len].score = score;
    c->len++;
    return 0;
}

/* Ranking needs qualnames; they are looked up once into a side array. */
typedef struct ranked {
    cn_lsp_cand c;
    const char *qualname;
} ranked;

static int ranked_cmp(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->c.score != y->c.score) return x->c.score > y->c.score ? -1 : 1;
    return strcmp(x->qualname, y->qualname);
}

/* Best first: score, then qualified name, so equal matches come in a
 * stable, readable order. */
static int cands_sort(const cn_lsp_static *p, cn_lsp_cands *c, cn_error *err)
{
    ranked *r;
    if (c->len < 2) return 0;
    r = p->host->alloc(c->len * sizeof *r);
    if (r == NULL) return oom(p, err);
    for (size_t i = 0; i < c->len; i++) {
        cn_node_info nd;
        if (get_node(p, c->items[i].node, &nd, err) < 0) {
            p->host->free(r);
            return err->code;
        }
        r[i].c = c->items[i];
        r[i].qualname = nd.qualname;
    }
    qsort(r, c->len, sizeof *r, ranked_cmp);
    for (size_t i = 0; i < c->len; i++) c->items[i] = r[i].c;
    p->host->free(r);
    return 0;
}

/* ---- index access ------------------------------------------------------- */

int cn_lsp_edges(const cn_lsp_static *p, uint32_t node, uint32_t mask, int direction, cn_edge_info **out,
                 size_t *n, cn_error *err)
{
    size_t total, got;
    cn_edge_info *e;

    *out = NULL;
    *n = 0;
    total = p->I->edges(p->idx, node, mask, direction, NULL, 0);
    if (total == 0) return 0;
    e = p->host->alloc(total * sizeof *e);
    if (e == NULL) return oom(p, err);
    got = p->I->edges(p->idx, node, mask, direction, e, total);
    *out = e;
    *n = got < total ? got : total;
    return 0;
}

cn_json *cn_lsp_node_json(const cn_lsp_static *p, uint32_t node, double score, cn_error *err)
{
    const cn_json_services *J = p->J;
    cn_node_info nd;
    cn_json *o;

    if (get_node(p, node, &nd, err) < 0) return NULL;
    if ((o = J->new_object()) == NULL) {
        oom(p, err);
        return NULL;
    }
    J->object_set(o, "node_id", J->new_int(nd.id));
    J->object_set(o, "node_name", J->new_string(nd.qualname));
    J->object_set(o, "type", J->new_string(kind_name(nd.kind)));
    J->object_set(o, "file", J->new_string(nd.path));
    J->object_set(o, "start_line", J->new_int(nd.start_line));
    J->object_set(o, "end_line", J->new_int(nd.end_line));
    J->object_set(o, "score", J->new_double(score));
    return o;
}

/* FNV-1a over the shape of the index: the node count, each node's kind,
 * lines and qualified name, and how many edges leave it.  The provider
 * cannot see the generation directory through the index services; this
 * fingerprint is equal for equal indexes and changes with any node or
 * edge, which is what a trace needs to tell snapshots apart. */
static void make_snapshot(cn_lsp_static *p)
{
    uint64_t h = 1469598103934665603ull;
    uint32_t n = p->I->node_count(p->idx);
#define MIX(byte) (h = (h ^ (uint8_t)(byte)) * 1099511628211ull)
    for (int k = 0; k < 4; k++) MIX(n >> (8 * k));
    for (uint32_t id = 0; id < n; id++) {
        cn_node_info nd;
        cn_error e;
        uint32_t v[4];
        if (get_node(p, id, &nd, &e) < 0) continue;
        v[0] = (uint32_t)nd.kind;
        v[1] = nd.start_line;
        v[2] = nd.end_line;
        v[3] = p->has_graph ? (uint32_t)p->I->edges(p->idx, id, CN_LSP_USE_MASK, CN_EDGES_OUT, NULL, 0) : 0;
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 4; k++) MIX(v[i] >> (8 * k));
        for (const char *s = nd.qualname; s && *s; s++) MIX(*s);
        MIX(0);
    }
#undef MIX
    snprintf(p->snapshot, sizeof p->snapshot, "nodes-%" PRIu32 "-%016" PRIx64, n, h);
}

/* ---- request members ---------------------------------------------------- */

int cn_lsp_req_str(const cn_lsp_static *p, const cn_json *req, const char *key, const char **out,
                   cn_error *err)
{
    const cn_json *v = p->J->object_get(req, key);
    *out = NULL;
    if (v == NULL) return 0;
    if (p->J->type(v) != CN_JSON_STRING)
        return p->host->error_set(err, CN_EINVAL, "LSP request: '%s' must be a string or null", key);
    *out = p->J->get_string(v);
    return 0;
}

int cn_lsp_req_bool(const cn_lsp_static *p, const cn_json *req, const char *key, int dflt, int *out,
                    cn_error *err)
{
    const cn_json *v = p->J->object_get(req, key);
    *out = dflt;
    if (v == NULL) return 0;
    if (p->J->type(v) != CN_JSON_BOOL)
        return p->host->error_set(err, CN_EINVAL, "LSP request: '%s' must be true or false", key);
    *out = p->J->get_bool(v);
    return 0;
}

int cn_lsp_req_top_k(const cn_lsp_static *p, const cn_json *req, size_t dflt, size_t *out, cn_error *err)
{
    const cn_json *v = p->J->object_get(req, "top_k");
    int64_t k;
    *out = dflt;
    if (v == NULL) return 0;
    k = p->J->get_int(v);
    if (p->J->type(v) != CN_JSON_INT || k < 1 || k > CN_LSP_MAX_TOP_K)
        return p->host->error_set(err, CN_EINVAL, "LSP request: 'top_k' must be an integer from 1 to %d",
                                  CN_LSP_MAX_TOP_K);
    *out = (size_t)k;
    return 0;
}

/* A 0-based line or character: absent/null, or an integer >= 0. */
static int req_count(const cn_lsp_static *p, const cn_json *req, const char *key, int64_t *out, int *has,
                     cn_error *err)
{
    const cn_json *v = p->J->object_get(req, key);
    *has = 0;
    *out = 0;
    if (v == NULL) return 0;
    if (p->J->type(v) != CN_JSON_INT)
        return p->host->error_set(err, CN_EINVAL, "LSP request: '%s' must be an integer or null", key);
    *out = p->J->get_int(v);
    if (*out < 0 || *out > (int64_t)UINT32_MAX - 1)
        return p->host->error_set(err, CN_EINVAL,
                                  "LSP request: '%s' must be 0 or more (provider requests count from 0), "
                                  "got %" PRId64, key, *out);
    *has = 1;
    return 0;
}

/* ---- names -------------------------------------------------------------- */

static const char *const source_exts[] = {
    "py", "pyi", "c", "h", "cc", "cpp", "cxx", "hh", "hpp", "hxx", "js", "jsx", "mjs", "cjs",
    "ts", "tsx", "go", "java", "rs", "rb", "php", "cs", "kt", "swift", "m", "scala", NULL,
};

static int is_source_ext(const char *ext, size_t n)
{
    for (size_t i = 0; source_exts[i]; i++)
        if (strlen(source_exts[i]) == n && strncmp(source_exts[i], ext, n) == 0) return 1;
    return 0;
}

static const char *const receivers[] = {"self.", "cls.", "this.", "self->", "this->", "this::"};

/* The name as a user wrote it, without decoration: blanks, backticks or
 * quotes around it, a call's "(...)", a leading "./". */
static void clean_symbol(const char *in, char *out, size_t cap)
{
    size_t a = 0, b = strlen(in), n;
    char *paren;
    while (a < b && (isspace((unsigned char)in[a]) || in[a] == '`' || in[a] == '\'' || in[a] == '"')) a++;
    while (b > a && (isspace((unsigned char)in[b - 1]) || in[b - 1] == '`' || in[b - 1] == '\'' ||
                     in[b - 1] == '"'))
        b--;
    n = b - a < cap - 1 ? b - a : cap - 1;
    memcpy(out, in + a, n);
    out[n] = '\0';
    if ((paren = strchr(out, '(')) != NULL && paren != out) *paren = '\0';
    while (strncmp(out, "./", 2) == 0) memmove(out, out + 2, strlen(out + 2) + 1);
    /* "self.close" means the method close: the receiver names no scope */
    for (size_t i = 0; i < sizeof receivers / sizeof receivers[0]; i++) {
        size_t rl = strlen(receivers[i]);
        if (strncmp(out, receivers[i], rl) == 0 && out[rl] != '\0') {
            memmove(out, out + rl, strlen(out + rl) + 1);
            break;
        }
    }
}

/* Whether s names a file: it has a '/' and no ':' after it, or its last
 * component ends with a source extension ("pool.py"). */
static int looks_like_path(const char *s)
{
    const char *dot = strrchr(s, '.'), *slash = strrchr(s, '/');
    if (strchr(s, ':') != NULL) return 0;
    if (slash != NULL) return 1;
    return dot != NULL && dot != s && is_source_ext(dot + 1, strlen(dot + 1));
}

/* Dotted form for comparing names across notations: "pkg/base.py:Base.m",
 * "pkg.base.Base.m", "ns::Base::m" and "Base#m" all become
 * "pkg.base.Base.m" (or its suffix).  The extension is dropped from the
 * path part when `path_part` says where the path ends (a qualname's ':'
 * or, for a path, its end). */
static void dotted(const char *s, int strip_ext, char *out, size_t cap)
{
    const char *colon = strchr(s, ':');
    size_t path_end = colon && colon[1] != ':' ? (size_t)(colon - s) : (strip_ext ? strlen(s) : 0);
    size_t o = 0, i = 0;

    if (path_end > 0) {
        const char *slash = NULL, *dot = NULL;
        for (size_t k = 0; k < path_end; k++) {
            if (s[k] == '/') slash = s + k;
            if (s[k] == '.') dot = s + k;
        }
        if (dot != NULL && (slash == NULL || dot > slash) && dot != s &&
            is_source_ext(dot + 1, (size_t)(s + path_end - dot - 1)))
            path_end = (size_t)(dot - s);
        for (; i < path_end && o + 1 < cap; i++) out[o++] = s[i] == '/' ? '.' : s[i];
        i = colon && colon[1] != ':' ? (size_t)(colon - s) : strlen(s);
    }
    while (s[i] && o + 1 < cap) {
        if (s[i] == ':' && s[i + 1] == ':') {
            out[o++] = '.';
            i += 2;
        } else if (s[i] == '-' && s[i + 1] == '>') {
            out[o++] = '.';
            i += 2;
        } else {
            out[o++] = s[i] == ':' || s[i] == '#' || s[i] == '/' ? '.' : s[i];
            i++;
        }
    }
    out[o] = '\0';
}

/* The last identifier of a name ("Class.method" -> "method"). */
static const char *last_component(const char *s)
{
    const char *last = s;
    for (const char *q = s; *q; q++)
        if (*q == '.' || *q == ':' || *q == '/' || *q == '#' || (*q == '>' && q > s && q[-1] == '-'))
            last = q + 1;
    return last;
}

static int ends_with_component(const char *hay, const char *needle)
{
    size_t h = strlen(hay), n = strlen(needle);
    if (n == 0 || n > h) return 0;
    if (strcmp(hay + h - n, needle) != 0) return 0;
    return n == h || hay[h - n - 1] == '.';
}

/* Lower scores for what is less likely the definition meant: a
 * declaration without a body, a module-level block, a test. */
static double rank_penalty(const cn_node_info *nd, const char *prefer_path)
{
    double pen = 0;
    if (nd->kind == CN_NODE_PROTOTYPE) pen += CN_LSP_PENALTY_PROTOTYPE;
    if (nd->kind == CN_NODE_BLOCK) pen += CN_LSP_PENALTY_BLOCK;
    if (nd->is_test || (nd->flags & CN_NODE_F_TEST)) pen += CN_LSP_PENALTY_TEST;
    if (prefer_path != NULL && strcmp(nd->path, prefer_path) != 0) pen += CN_LSP_PENALTY_ELSEWHERE;
    return pen;
}

/* How well node nd matches the cleaned symbol; 0 when it does not. */
static double match_score(const cn_node_info *nd, const char *sym, const char *sym_dotted, int path_like,
                          int has_sep)
{
    char qd[NAME_MAX_LEN];
    if (strcmp(nd->qualname, sym) == 0) return CN_LSP_SCORE_QUALNAME;
    if (path_like) {
        size_t pl = strlen(nd->path), sl = strlen(sym);
        if (nd->kind != CN_NODE_FILE) return 0;
        if (sl < pl && nd->path[pl - sl - 1] == '/' && strcmp(nd->path + pl - sl, sym) == 0)
            return CN_LSP_SCORE_SUFFIX;
        return 0;
    }
    if (!has_sep) return strcmp(nd->name, sym) == 0 ? CN_LSP_SCORE_NAME : 0;
    dotted(nd->qualname, nd->kind == CN_NODE_FILE, qd, sizeof qd);
    if (strcmp(qd, sym_dotted) == 0) return CN_LSP_SCORE_DOTTED;
    return ends_with_component(qd, sym_dotted) ? CN_LSP_SCORE_SUFFIX : 0;
}

typedef struct name_query {
    const char *sym;        /* cleaned */
    char dotted[NAME_MAX_LEN];
    const char *last;       /* last identifier */
    int path_like, has_sep;
    const char *prefer_path;
} name_query;

/* Scores every node named `name` against q into out. */
static int scan_named(const cn_lsp_static *p, const name_query *q, const char *name, cn_lsp_cands *out,
                     cn_error *err)
{
    size_t n = p->I->nodes_by_name(p->idx, name, NULL, 0), got;
    uint32_t *ids;
    int rc = 0;

    if (n == 0) return 0;
    if ((ids = p->host->alloc(n * sizeof *ids)) == NULL) return oom(p, err);
    got = p->I->nodes_by_name(p->idx, name, ids, n);
    for (size_t i = 0; rc == 0 && i < got && i < n; i++) {
        cn_node_info nd;
        double s;
        if (get_node(p, ids[i], &nd, err) < 0) {
            rc = err->code;
            break;
        }
        s = match_score(&nd, q->sym, q->dotted, q->path_like, q->has_sep);
        if (s > 0 && cn_lsp_cands_add(p, out, ids[i], s - rank_penalty(&nd, q->prefer_path)) < 0)
            rc = oom(p, err);
    }
    p->host->free(ids);
    return rc;
}

/* Adds the members of class `cls` named `name`; 1 when there was one. */
static int member_named(const cn_lsp_static *p, uint32_t cls, const name_query *q, cn_lsp_cands *out,
                        cn_error *err)
{
    cn_edge_info *kids = NULL;
    size_t n = 0;
    int found = 0;
    if (cn_lsp_edges(p, cls, 1u << CN_EDGE_CONTAINS, CN_EDGES_OUT, &kids, &n, err) < 0) return err->code;
    for (size_t k = 0; k < n; k++) {
        cn_node_info nd;
        cn_error e2;
        if (kids[k].node == UINT32_MAX || get_node(p, kids[k].node, &nd, &e2) < 0) continue;
        if (strcmp(nd.name, q->last) != 0) continue;
        if (cn_lsp_cands_add(p, out, nd.id, CN_LSP_SCORE_SUFFIX - rank_penalty(&nd, q->prefer_path)) < 0) {
            p->host->free(kids);
            return oom(p, err);
        }
        found = 1;
    }
    p->host->free(kids);
    return found;
}

/* "Sub.method" where method is inherited: the classes named by the
 * prefix, then their base classes breadth first (a bounded number), for
 * members named like the last component; the nearest bases win. */
static int scan_inherited(const cn_lsp_static *p, const name_query *q, cn_lsp_cands *out, cn_error *err)
{
    char owner[NAME_MAX_LEN];
    size_t olen = (size_t)(q->last - q->sym);
    cn_lsp_cands classes = {0};
    uint32_t queue[32];
    size_t head = 0, tail = 0;
    int rc, dummy = 0;

    if (!p->has_graph || olen < 2 || olen >= sizeof owner) return 0;
    memcpy(owner, q->sym, olen - 1);   /* drop the separator */
    owner[olen - 1] = '\0';
    rc = cn_lsp_resolve_symbol(p, owner, q->prefer_path, 0, &classes, &dummy, err);
    for (size_t i = 0; rc == 0 && i < classes.len && tail < 32; i++) queue[tail++] = classes.items[i].node;
    cn_lsp_cands_free(p, &classes);
    while (rc >= 0 && head < tail && out->len == 0) {
        size_t level_end = tail;
        for (; rc >= 0 && head < level_end; head++) {
            cn_edge_info *bases = NULL;
            size_t nb = 0;
            if ((rc = cn_lsp_edges(p, queue[head], 1u << CN_EDGE_INHERITS, CN_EDGES_OUT, &bases, &nb, err)) < 0)
                break;
            for (size_t k = 0; rc >= 0 && k < nb; k++) {
                if (!bases[k].resolved || bases[k].node == UINT32_MAX) continue;
                rc = member_named(p, bases[k].node, q, out, err);
                if (rc == 0 && tail < 32) queue[tail++] = bases[k].node;
            }
            p->host->free(bases);
        }
    }
    return rc < 0 ? rc : 0;
}

/* When nothing matched exactly: names equal ignoring case, then by
 * prefix, then containing the name (3 characters at least). */
static int scan_fuzzy(const cn_lsp_static *p, const name_query *q, cn_lsp_cands *out, cn_error *err)
{
    size_t kl = strlen(q->last);
    uint32_t n = p->I->node_count(p->idx);
    if (kl == 0) return 0;
    for (uint32_t id = 0; id < n && out->len < MAX_FUZZY; id++) {
        cn_node_info nd;
        double s = 0;
        size_t nl;
        if (get_node(p, id, &nd, err) < 0) return err->code;
        if (nd.kind == CN_NODE_FILE || nd.kind == CN_NODE_BLOCK) continue;
        nl = strlen(nd.name);
        if (nl == kl && strcasecmp(nd.name, q->last) == 0) s = CN_LSP_SCORE_FUZZY_CASE;
        else if (kl >= 3 && nl > kl && strncasecmp(nd.name, q->last, kl) == 0) s = CN_LSP_SCORE_FUZZY_PREFIX;
        else if (kl >= 3 && strcasestr(nd.name, q->last) != NULL) s = CN_LSP_SCORE_FUZZY_INFIX;
        if (s > 0 && cn_lsp_cands_add(p, out, id, s - rank_penalty(&nd, q->prefer_path)) < 0) return oom(p, err);
    }
    return 0;
}

int cn_lsp_resolve_symbol(const cn_lsp_static *p, const char *symbol, const char *prefer_path, int fuzzy,
                          cn_lsp_cands *out, int *fuzzy_used, cn_error *err)
{
    char sym[NAME_MAX_LEN];
    name_query q;
    uint32_t id;
    cn_error e2;
    int rc;

    *fuzzy_used = 0;
    clean_symbol(symbol, sym, sizeof sym);
    if (sym[0] == '\0') return 0;
    memset(&q, 0, sizeof q);
    q.sym = sym;
    q.prefer_path = prefer_path;
    q.path_like = looks_like_path(sym);
    q.last = last_component(sym);
    q.has_sep = q.last != sym;
    dotted(sym, q.path_like, q.dotted, sizeof q.dotted);
    if (p->I->node_by_qualname(p->idx, sym, &id, &e2) == 0)
        return cn_lsp_cands_add(p, out, id, CN_LSP_SCORE_QUALNAME) < 0 ? oom(p, err) : 0;
    if (q.path_like) {
        const char *slash = strrchr(sym, '/');
        rc = scan_named(p, &q, slash ? slash + 1 : sym, out, err);
    } else {
        rc = *q.last ? scan_named(p, &q, q.last, out, err) : 0;
    }
    if (rc == 0 && out->len == 0 && q.has_sep && !q.path_like) rc = scan_inherited(p, &q, out, err);
    if (rc == 0 && out->len == 0 && fuzzy && !q.path_like) {
        rc = scan_fuzzy(p, &q, out, err);
        *fuzzy_used = out->len > 0;
    }
    return rc < 0 ? rc : cands_sort(p, out, err);
}

/* ---- positions ---------------------------------------------------------- */

typedef struct position {
    const char *path;
    uint32_t line;
    uint32_t character;
    int has_character;
} position;

/* The path as the index knows it: relative to the repository root. */
static const char *index_path(const cn_lsp_static *p, const char *path)
{
    const char *root = CN_HOST_HAS(p->host, files) && p->host->files ? p->host->files->root(p->host) : NULL;
    size_t rl = root ? strlen(root) : 0;
    if (root && rl && strncmp(path, root, rl) == 0 && path[rl] == '/') path += rl + 1;
    while (strncmp(path, "./", 2) == 0) path += 2;
    return path;
}

static int check_position(const cn_lsp_static *p, const position *pos, cn_error *err)
{
    cn_node_info nd;
    uint32_t id;
    cn_error e2;
    if (p->I->node_by_qualname(p->idx, pos->path, &id, &e2) < 0 || get_node(p, id, &nd, err) < 0 ||
        nd.kind != CN_NODE_FILE)
        return p->host->error_set(err, CN_ENOTFOUND,
                                  "file_path '%s' is not in the compiled index: give a path relative to "
                                  "the repository root, as results print it in \"file\" (recompile with "
                                  "`codenib compile` if the file is new)",
                                  pos->path);
    if (pos->line > nd.end_line)
        return p->host->error_set(err, CN_EINVAL, "line %" PRIu32 " is past the end of %s, which has %" PRIu32
                                                  " lines (lines count from 1)",
                                  pos->line + 1, pos->path, nd.end_line + 1);
    return 0;
}

/* The identifier at a position, read from the text of the node holding
 * the line; 0 (and buf "") when the position is not on one. */
static int word_at(const cn_lsp_static *p, uint32_t node, uint32_t line, uint32_t col, char *buf, size_t cap)
{
    cn_node_info nd;
    cn_error e2;
    char *text = NULL;
    size_t len = 0, a = 0, b, n;
    int found = 0;

    buf[0] = '\0';
    if (get_node(p, node, &nd, &e2) < 0 || line < nd.start_line) return 0;
    if (p->I->node_text(p->host, p->idx, node, &text, &len, &e2) < 0) return 0;
    for (uint32_t l = nd.start_line; l < line && a < len; a++)
        if (text[a] == '\n') l++;
    for (b = a; b < len && text[b] != '\n'; b++) {}
    if (a + col < b && is_ident_char((unsigned char)text[a + col])) {
        size_t s = a + col, e = a + col;
        while (s > a && is_ident_char((unsigned char)text[s - 1])) s--;
        while (e < b && is_ident_char((unsigned char)text[e])) e++;
        n = e - s < cap - 1 ? e - s : cap - 1;
        memcpy(buf, text + s, n);
        buf[n] = '\0';
        found = 1;
    }
    p->host->free(text);
    return found;
}

/* Where a node's own name is written: the first whole-word occurrence in
 * its text (after decorators); the start line, column 0, when absent. */
static void name_position(const cn_lsp_static *p, const cn_node_info *nd, uint32_t *line, uint32_t *col)
{
    char *text = NULL;
    size_t len = 0, nl = strlen(nd->name);
    cn_error e2;

    *line = nd->start_line;
    *col = 0;
    if (nd->kind == CN_NODE_FILE || nd->kind == CN_NODE_BLOCK || nl == 0) return;
    if (p->I->node_text(p->host, p->idx, nd->id, &text, &len, &e2) < 0) return;
    for (size_t i = 0, ls = 0, l = nd->start_line; i + nl <= len; i++) {
        if (text[i] == '\n') {
            l++;
            ls = i + 1;
            continue;
        }
        if (memcmp(text + i, nd->name, nl) == 0 && (i == 0 || !is_ident_char((unsigned char)text[i - 1])) &&
            (i + nl == len || !is_ident_char((unsigned char)text[i + nl]))) {
            *line = (uint32_t)l;
            *col = (uint32_t)(i - ls);
            break;
        }
    }
    p->host->free(text);
}

/* Outcome of resolving a position to definitions. */
typedef struct pos_result {
    const char *fallback;   /* static string or NULL */
} pos_result;

/* Definitions of the use sites at a position: every edge written there
 * (a name can resolve to several definitions), or, when the graph could
 * not resolve it, the definitions found by its last component. */
static int use_site_targets(const cn_lsp_static *p, uint32_t from, const cn_edge_info *at, int whole_line,
                            cn_lsp_cands *out, pos_result *r, cn_error *err)
{
    cn_edge_info *es = NULL;
    size_t n = 0;
    char names[8][NAME_MAX_LEN];
    size_t n_names = 0;
    int rc, fz;

    if ((rc = cn_lsp_edges(p, from, CN_LSP_USE_MASK, CN_EDGES_OUT, &es, &n, err)) < 0) return rc;
    for (size_t i = 0; i < n; i++) {
        if (es[i].line != at->line || (!whole_line && es[i].column != at->column)) continue;
        if (es[i].resolved && es[i].node != UINT32_MAX) {
            if (cn_lsp_cands_add(p, out, es[i].node, 1.0) < 0) rc = oom(p, err);
        } else if (n_names < 8) {
            snprintf(names[n_names++], NAME_MAX_LEN, "%s", last_component(es[i].name));
        }
    }
    p->host->free(es);
    if (rc < 0 || out->len > 0) return rc;
    for (size_t i = 0; rc == 0 && i < n_names; i++) {
        cn_lsp_cands c = {0};
        char *nm = names[i];
        /* "<stdio.h>" and similar are not names */
        if (!is_ident_char((unsigned char)nm[0])) continue;
        rc = cn_lsp_resolve_symbol(p, nm, NULL, 0, &c, &fz, err);
        for (size_t k = 0; rc == 0 && k < c.len; k++)
            if (cn_lsp_cands_add(p, out, c.items[k].node, c.items[k].score * CN_LSP_GUESS_FACTOR) < 0)
                rc = oom(p, err);
        cn_lsp_cands_free(p, &c);
    }
    r->fallback = "unresolved_use_site_name_match";
    return rc;
}

/* No character: the use sites written on the line, in the innermost node
 * holding it or its ancestors. */
static int line_use_sites(const cn_lsp_static *p, uint32_t node, uint32_t line, cn_lsp_cands *out,
                          pos_result *r, int *found, cn_error *err)
{
    *found = 0;
    for (int depth = 0; depth < 64; depth++) {
        cn_edge_info *es = NULL;
        size_t n = 0;
        cn_node_info nd;
        int rc = cn_lsp_edges(p, node, CN_LSP_USE_MASK, CN_EDGES_OUT, &es, &n, err);
        if (rc < 0) return rc;
        for (size_t i = 0; i < n; i++) {
            if (es[i].line == line) {
                cn_edge_info at = es[i];
                p->host->free(es);
                *found = 1;
                return use_site_targets(p, node, &at, 1, out, r, err);
            }
        }
        p->host->free(es);
        if (get_node(p, node, &nd, err) < 0) return err->code;
        if (nd.parent < 0) break;
        node = (uint32_t)nd.parent;
    }
    return 0;
}

/* A position on a definition's own name (or, without a character, on the
 * line its name is written on) is that definition. */
static int definition_named_at(const cn_lsp_static *p, uint32_t node, const position *pos, const char *word,
                               uint32_t *out)
{
    for (int depth = 0; depth < 64; depth++) {
        cn_node_info nd;
        cn_error e2;
        if (get_node(p, node, &nd, &e2) < 0 || nd.kind == CN_NODE_FILE) return 0;
        if (nd.kind != CN_NODE_BLOCK) {
            uint32_t l, c;
            name_position(p, &nd, &l, &c);
            if (l == pos->line && (word == NULL || strcmp(word, nd.name) == 0) &&
                (!pos->has_character || (pos->character >= c && pos->character <= c + strlen(nd.name)))) {
                *out = nd.id;
                return 1;
            }
        }
        if (nd.parent < 0) return 0;
        node = (uint32_t)nd.parent;
    }
    return 0;
}

/* A prototype's definitions: the functions of that name with a body,
 * leaving out static ones of other files (they cannot be what a
 * declaration elsewhere refers to).  1 when there are some. */
static int declared_definitions(const cn_lsp_static *p, uint32_t decl, cn_lsp_cands *out, cn_error *err)
{
    cn_node_info d;
    cn_lsp_cands c = {0};
    int fz, rc;

    if (get_node(p, decl, &d, err) < 0) return err->code;
    if (d.kind != CN_NODE_PROTOTYPE) return 0;
    rc = cn_lsp_resolve_symbol(p, d.name, d.path, 0, &c, &fz, err);
    for (size_t i = 0; rc == 0 && i < c.len; i++) {
        cn_node_info nd;
        if ((rc = get_node(p, c.items[i].node, &nd, err)) < 0) break;
        if (nd.kind == CN_NODE_PROTOTYPE || ((nd.flags & CN_NODE_F_STATIC) && strcmp(nd.path, d.path) != 0))
            continue;
        if (cn_lsp_cands_add(p, out, nd.id, c.items[i].score * CN_LSP_GUESS_FACTOR) < 0) rc = oom(p, err);
    }
    cn_lsp_cands_free(p, &c);
    return rc < 0 ? rc : out->len > 0;
}

/* Resolves a position request to definitions. */
static int resolve_position(const cn_lsp_static *p, const position *pos, cn_lsp_cands *out, pos_result *r,
                            cn_error *err)
{
    char word[NAME_MAX_LEN];
    uint32_t node, def;
    int rc, found = 0, fz;

    r->fallback = NULL;
    if ((rc = check_position(p, pos, err)) < 0) return rc;
    if ((rc = p->I->node_at(p->idx, pos->path, pos->line, &node, err)) < 0) return rc;
    if (p->has_graph && pos->has_character) {
        cn_edge_info e;
        uint32_t from;
        cn_error e2;
        memset(&e, 0, sizeof e);
        e.struct_size = (uint32_t)sizeof e;
        if (p->I->edge_at(p->idx, pos->path, pos->line, pos->character, &from, &e, &e2) == 0)
            return use_site_targets(p, from, &e, 0, out, r, err);
        if (e2.code != CN_ENOTFOUND) return p->host->error_set(err, e2.code, "%s", e2.message);
    }
    if (pos->has_character && !word_at(p, node, pos->line, pos->character, word, sizeof word)) {
        r->fallback = "no_symbol_at_position";
        return 0;
    }
    if (definition_named_at(p, node, pos, pos->has_character ? word : NULL, &def)) {
        if ((rc = declared_definitions(p, def, out, err)) != 0) {
            r->fallback = "declaration_name_match";
            return rc < 0 ? rc : 0;
        }
        if (!p->has_graph) r->fallback = "symbol_graph_unavailable";
        return cn_lsp_cands_add(p, out, def, 1.0) < 0 ? oom(p, err) : 0;
    }
    if (!pos->has_character) {
        /* a whole line: what the line uses */
        if (p->has_graph && ((rc = line_use_sites(p, node, pos->line, out, r, &found, err)) < 0 || found))
            return rc;
        r->fallback = p->has_graph ? "no_symbol_at_position" : "symbol_graph_unavailable";
        return 0;
    }
    /* an identifier the graph recorded no use of (a type in a signature, a
     * name in a string): definitions of that name, marked as a guess */
    r->fallback = p->has_graph ? "identifier_name_match" : "symbol_graph_unavailable";
    return cn_lsp_resolve_symbol(p, word, pos->path, 0, out, &fz, err);
}

/* Reads file_path/line/character of a request; *is_pos 0 when it names no
 * position.  With a symbol, file_path only ranks that file's definitions
 * first and a partial position is no error. */
static int req_position(const cn_lsp_static *p, const cn_json *req, int has_symbol, position *pos, int *is_pos,
                        cn_error *err)
{
    int64_t line, ch;
    int has_line, has_ch, rc;
    const char *path;

    memset(pos, 0, sizeof *pos);
    *is_pos = 0;
    if ((rc = cn_lsp_req_str(p, req, "file_path", &path, err)) < 0) return rc;
    if ((rc = req_count(p, req, "line", &line, &has_line, err)) < 0) return rc;
    if ((rc = req_count(p, req, "character", &ch, &has_ch, err)) < 0) return rc;
    if (path != NULL && *path == '\0') path = NULL;
    pos->path = path ? index_path(p, path) : NULL;
    if (has_symbol) return 0;
    if (path == NULL && !has_line) {
        if (has_ch)
            return p->host->error_set(err, CN_EINVAL, "LSP request: 'character' needs 'file_path' and 'line'");
        return 0;
    }
    if (path == NULL)
        return p->host->error_set(err, CN_EINVAL, "LSP request: 'line' needs 'file_path' (the file it is in)");
    if (!has_line)
        return p->host->error_set(err, CN_EINVAL, "LSP request: 'file_path' needs 'line' for a position, or "
                                                  "give 'symbol' instead");
    pos->line = (uint32_t)line;
    pos->character = (uint32_t)ch;
    pos->has_character = has_ch;
    *is_pos = 1;
    return 0;
}

/* ---- metadata ----------------------------------------------------------- */

typedef struct served {
    const char *status;
    const char *fallback;
    const char *contract;
    const char *granularity;
    cn_json *extra;          /* more metadata members, or NULL */
} served;

static const char *lsp_method(const char *cap)
{
    if (strcmp(cap, "definition") == 0) return "textDocument/definition";
    if (strcmp(cap, "references") == 0) return "textDocument/references";
    if (strcmp(cap, "route") == 0) return "codenib/route";
    return NULL;
}

/* "definition", "references", "route", or NULL; LSP method names and
 * case are accepted too. */
static const char *normalize_capability(const char *cap)
{
    static const char *const caps[] = {"definition", "references", "route"};
    if (cap == NULL) return NULL;
    while (isspace((unsigned char)*cap)) cap++;
    for (size_t i = 0; i < 3; i++) {
        if (strcasecmp(cap, caps[i]) == 0 || strcasecmp(cap, lsp_method(caps[i])) == 0) return caps[i];
    }
    return NULL;
}

typedef struct meta_merge {
    const cn_json_services *J;
    cn_json *meta;
} meta_merge;

static int add_extra(const char *key, cn_json *val, void *data)
{
    meta_merge *mm = data;
    mm->J->object_set(mm->meta, key, mm->J->get(val));
    return 0;
}

static cn_json *metadata(const cn_lsp_static *p, const char *cap, const served *s)
{
    const cn_json_services *J = p->J;
    const char *method = cap ? lsp_method(cap) : NULL;
    cn_json *m = J->new_object();
    if (m == NULL) return NULL;
    J->object_set(m, "provider", J->new_string(CN_LSP_PROVIDER_ID));
    J->object_set(m, "capability", cap ? J->new_string(cap) : J->new_null());
    J->object_set(m, "status", J->new_string(s->status));
    J->object_set(m, "lsp_method", method ? J->new_string(method) : J->new_null());
    J->object_set(m, "fallback_reason", s->fallback ? J->new_string(s->fallback) : J->new_null());
    J->object_set(m, "behavior_contract", J->new_string(s->contract));
    J->object_set(m, "position_granularity", J->new_string(s->granularity));
    J->object_set(m, "index_snapshot", J->new_string(p->snapshot));
    if (s->extra) {
        meta_merge mm = {J, m};
        J->object_foreach(s->extra, add_extra, &mm);
    }
    return m;
}

/* What can_serve says, and what a call starts from. */
static void decide(const cn_lsp_static *p, const char *cap, served *s)
{
    memset(s, 0, sizeof *s);
    s->status = "ok";
    s->contract = CN_LSP_CONTRACT_GRAPH;
    s->granularity = cap && strcmp(cap, "route") == 0 ? "symbol" : "line";
    if (cap == NULL) {
        s->status = "unsupported";
        s->fallback = "unsupported_capability";
        return;
    }
    if (!p->has_graph) {
        s->fallback = "symbol_graph_unavailable";
        /* names still resolve over the nodes index */
        if (strcmp(cap, "definition") == 0) s->contract = CN_LSP_CONTRACT_NODES;
        else s->status = "unavailable";
    }
}

/* ---- definition and references ------------------------------------------ */

static int append_cands(const cn_lsp_static *p, const cn_lsp_cands *c, size_t top_k, cn_json *nodes,
                        cn_error *err)
{
    for (size_t i = 0; i < c->len && i < top_k; i++) {
        cn_json *o = cn_lsp_node_json(p, c->items[i].node, c->items[i].score, err);
        if (o == NULL) return err->code ? err->code : CN_ENOMEM;
        p->J->array_append(nodes, o);
    }
    return 0;
}

/* The targets of a definition or references request: by symbol or by
 * position.  Sets the contract, granularity and fallback of s. */
static int request_targets(const cn_lsp_static *p, const cn_json *req, cn_lsp_cands *targets, served *s,
                           cn_error *err)
{
    const char *symbol;
    position pos;
    int is_pos, rc, fz = 0;

    if ((rc = cn_lsp_req_str(p, req, "symbol", &symbol, err)) < 0) return rc;
    if (symbol != NULL && *symbol == '\0') symbol = NULL;
    if ((rc = req_position(p, req, symbol != NULL, &pos, &is_pos, err)) < 0) return rc;
    if (symbol != NULL) {
        char buf[NAME_MAX_LEN];
        clean_symbol(symbol, buf, sizeof buf);
        if (buf[0] == '\0')
            return p->host->error_set(err, CN_EINVAL, "LSP request: 'symbol' is blank");
        rc = cn_lsp_resolve_symbol(p, symbol, pos.path, 1, targets, &fz, err);
        if (rc == 0 && fz) s->fallback = "fuzzy_name_match";
        else if (rc == 0 && targets->len == 0) s->fallback = "symbol_not_found";
        return rc;
    }
    if (!is_pos)
        return p->host->error_set(err, CN_EINVAL, "LSP request: give 'symbol' (a name such as \"Class.method\") "
                                                  "or a position ('file_path' and 'line', optionally "
                                                  "'character')");
    {
        pos_result r;
        rc = resolve_position(p, &pos, targets, &r, err);
        if (pos.has_character) {
            s->granularity = "character";
            if (p->has_graph) s->contract = CN_LSP_CONTRACT_POSITION;
        }
        if (r.fallback) s->fallback = r.fallback;
        return rc;
    }
}

static int serve_definition(const cn_lsp_static *p, const cn_json *req, cn_json *nodes, served *s,
                            cn_error *err)
{
    cn_lsp_cands targets = {0};
    size_t top_k;
    int rc;
    if ((rc = cn_lsp_req_top_k(p, req, 8, &top_k, err)) < 0) return rc;
    rc = request_targets(p, req, &targets, s, err);
    if (rc == 0) rc = append_cands(p, &targets, top_k, nodes, err);
    cn_lsp_cands_free(p, &targets);
    return rc;
}

/* One use site in a references answer. */
typedef struct use_site {
    uint32_t node;         /* the using node (the definition for a declaration) */
    uint32_t target;
    uint32_t line, column;
    int edge;              /* cn_edge_type, 0 for the declaration */
    int resolved;
    const char *written;   /* borrowed from the index */
    const char *path;
    size_t seq;            /* arrival: declarations keep the targets' order */
} use_site;

typedef struct use_sites {
    use_site *items;
    size_t len, cap;
} use_sites;

static int sites_add(const cn_lsp_static *p, use_sites *v, const use_site *u)
{
    for (size_t i = 0; i < v->len; i++)
        if (v->items[i].node == u->node && v->items[i].line == u->line && v->items[i].column == u->column &&
            v->items[i].target == u->target)
            return 0;
    if (v->len == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        use_site *n = p->host->realloc(v->items, cap * sizeof *n);
        if (n == NULL) return CN_ENOMEM;
        v->items = n;
        v->cap = cap;
    }
    v->items[v->len] = *u;
    v->items[v->len].seq = v->len;
    v->len++;
    return 0;
}

/* Declarations first, then resolved use sites, then name matches; each
 * group by file, line and column like an editor lists them. */
static int site_cmp(const void *a, const void *b)
{
    const use_site *x = a, *y = b;
    int gx = x->edge == 0 ? 0 : x->resolved ? 1 : 2, gy = y->edge == 0 ? 0 : y->resolved ? 1 : 2, c;
    if (gx != gy) return gx - gy;
    if (gx == 0) return x->seq < y->seq ? -1 : 1;
    if ((c = strcmp(x->path, y->path)) != 0) return c;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    if (x->column != y->column) return x->column < y->column ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

static int collect_sites(const cn_lsp_static *p, const cn_node_info *t, int include_decl, use_sites *v,
                         cn_error *err)
{
    cn_edge_info *es = NULL;
    size_t n = 0;
    int rc;

    if (include_decl) {
        use_site u = {t->id, t->id, 0, 0, 0, 1, NULL, t->path, 0};
        name_position(p, t, &u.line, &u.column);
        if (sites_add(p, v, &u) < 0) return oom(p, err);
    }
    if ((rc = cn_lsp_edges(p, t->id, CN_LSP_USE_MASK, CN_EDGES_IN, &es, &n, err)) < 0) return rc;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        use_site u = {es[i].node, t->id, es[i].line, es[i].column, es[i].type, 1, es[i].name, NULL, 0};
        cn_node_info un;
        if (get_node(p, es[i].node, &un, err) < 0) {
            rc = err->code;
            break;
        }
        u.path = un.path;
        if (sites_add(p, v, &u) < 0) rc = oom(p, err);
    }
    p->host->free(es);
    if (rc < 0 || t->kind == CN_NODE_FILE || t->kind == CN_NODE_BLOCK) return rc;
    /* use sites the graph could not resolve, written with this name */
    n = p->I->unresolved(p->idx, t->name, CN_LSP_USE_MASK, NULL, 0);
    if (n == 0) return 0;
    if ((es = p->host->alloc(n * sizeof *es)) == NULL) return oom(p, err);
    n = p->I->unresolved(p->idx, t->name, CN_LSP_USE_MASK, es, n);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        use_site u = {es[i].node, t->id, es[i].line, es[i].column, es[i].type, 0, es[i].name, NULL, 0};
        cn_node_info un;
        if (get_node(p, es[i].node, &un, err) < 0) {
            rc = err->code;
            break;
        }
        u.path = un.path;
        if (sites_add(p, v, &u) < 0) rc = oom(p, err);
    }
    p->host->free(es);
    return rc;
}

static cn_json *site_json(const cn_lsp_static *p, const use_site *u, cn_error *err)
{
    const cn_json_services *J = p->J;
    cn_node_info t;
    cn_json *o = cn_lsp_node_json(p, u->node, u->edge == 0 || u->resolved ? 1.0 : 0.5, err);
    if (o == NULL) return NULL;
    if (get_node(p, u->target, &t, err) < 0) {
        J->put(o);
        return NULL;
    }
    J->object_set(o, "line", J->new_int(u->line));
    J->object_set(o, "character", J->new_int(u->column));
    J->object_set(o, "edge", J->new_string(u->edge ? cn_lsp_edge_name(u->edge) : "declaration"));
    J->object_set(o, "resolved", J->new_bool(u->resolved));
    J->object_set(o, "written_as", u->written ? J->new_string(u->written) : J->new_null());
    J->object_set(o, "target", J->new_string(t.qualname));
    return o;
}

static int serve_references(const cn_lsp_static *p, const cn_json *req, cn_json *nodes, served *s,
                            cn_error *err)
{
    cn_lsp_cands targets = {0};
    use_sites v = {0};
    size_t top_k;
    int decl, rc, guessed = 0;

    if ((rc = cn_lsp_req_top_k(p, req, 40, &top_k, err)) < 0) return rc;
    if ((rc = cn_lsp_req_bool(p, req, "include_declaration", 1, &decl, err)) < 0) return rc;
    if ((rc = request_targets(p, req, &targets, s, err)) < 0) goto out;
    /* several definitions of one name: the best-matching ones */
    for (size_t i = 0; rc == 0 && i < targets.len && i < MAX_TARGETS; i++) {
        cn_node_info t;
        if (targets.items[i].score < targets.items[0].score - CN_LSP_PENALTY_PROTOTYPE) break;
        if ((rc = get_node(p, targets.items[i].node, &t, err)) == 0) rc = collect_sites(p, &t, decl, &v, err);
    }
    if (rc < 0) goto out;
    if (v.len > 1) qsort(v.items, v.len, sizeof *v.items, site_cmp);
    for (size_t i = 0; rc == 0 && i < v.len && i < top_k; i++) {
        cn_json *o = site_json(p, &v.items[i], err);
        if (o == NULL) rc = err->code ? err->code : CN_ENOMEM;
        else p->J->array_append(nodes, o);
        guessed |= !v.items[i].resolved;
    }
    if (rc == 0 && guessed && s->fallback == NULL) s->fallback = "unresolved_use_site_name_match";
out:
    p->host->free(v.items);
    cn_lsp_cands_free(p, &targets);
    return rc;
}

/* ---- the provider ------------------------------------------------------- */

static int p_can_serve(cn_lsp_provider *self, const char *capability, char **metadata_json, cn_error *err)
{
    const cn_lsp_static *p = self->data;
    const char *cap = normalize_capability(capability);
    served s;
    cn_json *m;

    decide(p, cap, &s);
    if ((m = metadata(p, cap, &s)) == NULL) return oom(p, err);
    *metadata_json = p->J->serialize(m, 0);
    p->J->put(m);
    return *metadata_json ? 0 : oom(p, err);
}

static int dispatch(const cn_lsp_static *p, const char *cap, const cn_json *req, cn_json *nodes, served *s,
                    cn_error *err)
{
    if (strcmp(s->status, "ok") != 0) return 0;   /* unavailable: say so, no nodes */
    if (strcmp(cap, "definition") == 0) return serve_definition(p, req, nodes, s, err);
    if (strcmp(cap, "references") == 0) return serve_references(p, req, nodes, s, err);
    if ((s->extra = p->J->new_object()) == NULL) return oom(p, err);
    return cn_lsp_route(p, req, nodes, s->extra, &s->fallback, err);
}

static int p_call(cn_lsp_provider *self, const char *capability, const char *request_json, char **result_json,
                  cn_error *err)
{
    const cn_lsp_static *p = self->data;
    const cn_json_services *J = p->J;
    const char *cap = normalize_capability(capability);
    cn_json *req, *nodes = NULL, *res = NULL, *m = NULL;
    served s;
    int rc;

    *result_json = NULL;
    if (cap == NULL)
        return p->host->error_set(err, CN_EUNSUPPORTED, "lsp-static cannot serve '%s': it serves definition, "
                                                        "references and route",
                                  capability ? capability : "(null)");
    if (request_json == NULL) return p->host->error_set(err, CN_EINVAL, "LSP request: no request given");
    if ((req = J->parse(request_json, err)) == NULL) {
        char why[CN_ERROR_MESSAGE_MAX];
        snprintf(why, sizeof why, "%s", err->message);
        return p->host->error_set(err, CN_EINVAL, "LSP %s request is not valid JSON: %s", cap, why);
    }
    if (J->type(req) != CN_JSON_OBJECT) {
        J->put(req);
        return p->host->error_set(err, CN_EINVAL, "LSP %s request must be a JSON object", cap);
    }
    decide(p, cap, &s);
    if ((nodes = J->new_array()) == NULL) rc = oom(p, err);
    else rc = dispatch(p, cap, req, nodes, &s, err);
    if (rc == 0 && ((m = metadata(p, cap, &s)) == NULL || (res = J->new_object()) == NULL)) {
        J->put(m);
        rc = oom(p, err);
    }
    if (rc == 0) {
        J->object_set(res, "nodes", nodes);
        nodes = NULL;
        J->object_set(res, "metadata", m);
        if ((*result_json = J->serialize(res, 0)) == NULL) rc = oom(p, err);
    }
    J->put(res);
    J->put(nodes);
    J->put(s.extra);
    J->put(req);
    return rc;
}

static void p_destroy(cn_lsp_provider *self)
{
    cn_lsp_static *p = self->data;
    const cn_host *h = p->host;
    h->free(p);
    h->free(self);
}

static int p_create(const cn_host *host, const struct cn_skill_context *ctx, const char *config_json, void **out,
                    cn_error *err)
{
    cn_lsp_provider *self;
    cn_lsp_static *p;

    (void)config_json;   /* no options */
    *out = NULL;
    if (!CN_HOST_HAS(host, index) || host->index == NULL || host->json == NULL)
        return host->error_set(err, CN_EUNSUPPORTED, "this codenib offers no index services");
    if (ctx == NULL || ctx->index == NULL)
        return host->error_set(err, CN_ENOCONTEXT, "lsp-static serves a compiled index and was given none "
                                                   "(run `codenib compile REPO`)");
    self = host->alloc(sizeof *self);
    p = host->alloc(sizeof *p);
    if (self == NULL || p == NULL) {
        host->free(self);
        host->free(p);
        return host->error_set(err, CN_ENOMEM, "out of memory");
    }
    memset(self, 0, sizeof *self);
    memset(p, 0, sizeof *p);
    p->host = host;
    p->idx = ctx->index;
    p->I = host->index;
    p->J = host->json;
    p->has_graph = p->I->has_graph(p->idx);
    make_snapshot(p);
    self->struct_size = (uint32_t)sizeof *self;
    self->data = p;
    self->can_serve = p_can_serve;
    self->call = p_call;
    self->destroy = p_destroy;
    *out = self;
    return 0;
}

CN_BACKEND_DEFINE(lsp_static, "lsp-static", "0.1.0", CN_BACKEND_LSP, p_create);

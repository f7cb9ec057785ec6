/* SPDX-License-Identifier: Apache-2.0 */
/* The deterministic offline planner (see cn_planner.h): the policy, the
 * skill calls and the contract.  Scoring lives in cn_planner_rank.c. */
#include "cn_planner.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <codenib/index.h>
#include <codenib/lang.h>

#include "../index/cn_index.h"
#include "cn_seeds.h"
#include "../plugin/cn_host.h"

#define SEED_LIMIT 12
#define ERROR_LIMIT 4
/* Fusion weights: an anchor of a seed that resolved exactly is the
 * strongest evidence there is (the question named that symbol); the
 * route's own BM25 fallback repeats bm25_search, so it counts little.  An
 * issue's title says in a few words what its body says at length, so
 * BM25 over the title alone counts double; names matched over the whole
 * question are noisier (every word of a long report) than over the title;
 * quoted text found verbatim is rare and telling.  The figures come from
 * `codenib eval` on the development set (bench/README.md has the ablation
 * of each signal). */
#define W_ROUTE_EXACT 3.0
#define W_ROUTE_QUERY 0.5
#define W_BM25 1.0
#define W_BM25_SEEDS 1.0
#define W_BM25_ERRORS 1.0
#define W_BM25_TITLE 2.0
#define W_HYBRID 1.0
#define W_NAMES 0.5
#define W_NAMES_TITLE 1.0
#define W_LITERAL 2.0
/* Graph expansion: a neighbour gets this share of its root's score (less
 * for a class: its callers are whoever makes one); the top this-many
 * symbol nodes are expanded, each with at most EXPAND_TOP_K callers and
 * callees. */
#define EXPAND_DECAY 0.3
#define EXPAND_CLASS 0.3
#define EXPAND_ROOTS 3
#define EXPAND_TOP_K 10
/* A symbol's rank weighs its file's standing: (file / best file)^FILE_POWER. */
#define FILE_POWER 2.0
/* The whole-file ranking fused into the files' (cn_planner_files.c). */
#define WHOLE_FILES 50
/* The in-file function ranking (cn_planner_infile.c): how many of the
 * answer files' functions it ranks, how many of the pool's best symbols
 * keep their places, its weight against the pool's ranking and the K of
 * their reciprocal rank fusion.  From the multilingual development set,
 * chosen the same in most leave-one-repository-out folds (bench/README.md). */
#define INFILE_TOP 60
#define INFILE_KEEP 5
#define W_INFILE 1.0
#define INFILE_K 10.0
/* Seeds shorter than this ("x", "df") name no one symbol. */
#define MIN_SEED_LEN 3

typedef struct run {
    cn_registry *reg;
    cn_planner_options o;
    const char *question;
    cn_strv seeds, errors, paths;
    cn_pl_pool pool;
    json_object *steps;
    json_object *route_neighbors;   /* lsp_route's neighbour objects */
    int retrieved;                  /* retrieval skills that ran */
    cn_buf failures;
} run;

static const struct {
    const char *name;
    unsigned bit;
} signals[] = {
    {"route", CN_PL_SIG_ROUTE},           {"bm25", CN_PL_SIG_BM25},
    {"bm25-seeds", CN_PL_SIG_BM25_SEEDS}, {"bm25-errors", CN_PL_SIG_BM25_ERRORS},
    {"title", CN_PL_SIG_TITLE},           {"hybrid", CN_PL_SIG_HYBRID},
    {"names", CN_PL_SIG_NAMES},           {"literals", CN_PL_SIG_LITERALS},
    {"expand", CN_PL_SIG_EXPAND},         {"seed-bonus", CN_PL_SIG_SEED_BONUS},
    {"paths", CN_PL_SIG_PATHS},           {"file-weight", CN_PL_SIG_FILE_WEIGHT},
    {"short-seeds", CN_PL_SIG_SHORT_SEEDS}, {"aside", CN_PL_SIG_ASIDE},
    {"file-bm25", CN_PL_SIG_FILE_BM25},     {"generated", CN_PL_SIG_GENERATED},
    {"infile", CN_PL_SIG_INFILE},         {"minority", CN_PL_SIG_MINORITY},
    {"vendored", CN_PL_SIG_VENDORED},
};

int cn_planner_signals_parse(const char *list, unsigned *mask)
{
    *mask = 0;
    for (const char *p = list; p != NULL && *p;) {
        size_t n = strcspn(p, ","), k;
        for (k = 0; k < sizeof signals / sizeof signals[0]; k++)
            if (strlen(signals[k].name) == n && strncmp(signals[k].name, p, n) == 0) break;
        if (n > 0 && k == sizeof signals / sizeof signals[0]) {
            cn_buf known = CN_BUF_INIT;
            for (k = 0; k < sizeof signals / sizeof signals[0]; k++)
                cn_buf_printf(&known, "%s%s", k ? ", " : "", signals[k].name);
            cn_error_set(CN_EINVAL, "'%.*s' is no planner signal (known: %s)", (int)n, p,
                         known.data ? known.data : "");
            cn_buf_free(&known);
            return CN_EINVAL;
        }
        if (n > 0) *mask |= signals[k].bit;
        p += n + (p[n] == ',');
    }
    return 0;
}

char *cn_planner_signals_string(unsigned mask)
{
    cn_buf b = CN_BUF_INIT;
    for (size_t k = 0; k < sizeof signals / sizeof signals[0]; k++)
        if (mask & signals[k].bit) cn_buf_printf(&b, "%s%s", b.len ? "," : "", signals[k].name);
    if (b.oom) {
        cn_buf_free(&b);
        return NULL;
    }
    return b.data ? cn_buf_steal(&b) : cn_strdup("");
}

#define RETRIEVAL_SIGNALS                                                                                 \
    (CN_PL_SIG_ROUTE | CN_PL_SIG_BM25 | CN_PL_SIG_BM25_SEEDS | CN_PL_SIG_BM25_ERRORS | CN_PL_SIG_TITLE |          \
     CN_PL_SIG_HYBRID)

static bool on(const run *r, unsigned sig)
{
    return (r->o.without & sig) == 0;
}

void cn_planner_options_init(cn_planner_options *o)
{
    memset(o, 0, sizeof *o);
    o->max_files = 5;
    o->max_symbols = 10;
    o->max_locations = 10;
    o->candidates = 50;
    o->use_vectors = -1;
}

/* ---- skill calls -------------------------------------------------------- */

static size_t result_count(json_object *res)
{
    json_object *v;
    if (json_object_is_type(res, json_type_array)) return json_object_array_length(res);
    if (json_object_object_get_ex(res, "nodes", &v) || json_object_object_get_ex(res, "results", &v))
        return json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
    return 0;
}

/* Runs one skill and records the step.  Returns 1 when it ran (*result
 * set), 0 when it was skipped or failed (recorded), CN_ENOMEM.  Takes
 * `args`. */
static int call_skill(run *r, const char *id, json_object *args, json_object **result)
{
    json_object *step = json_object_new_object();
    const char *status = "ok";
    char *reason = NULL;
    int rc = 0;

    *result = NULL;
    if (step == NULL || args == NULL) {
        json_object_put(step);
        json_object_put(args);
        return CN_ENOMEM;
    }
    json_object_object_add(step, "skill", json_object_new_string(id));
    json_object_object_add(step, "args", json_object_get(args));
    if (cn_registry_find(r->reg, id) == NULL) {
        status = "skipped";
        reason = cn_strdup("the skill is not installed");
    } else if (!cn_registry_enabled(r->reg, id)) {
        status = "skipped";
        reason = cn_strdup("the skill is not allowed in this run (allow/exclude)");
    } else if (cn_registry_invoke(r->reg, id, args, NULL, result) < 0) {
        status = "failed";
        reason = cn_strdup(cn_error_last()->message);
        cn_error_clear();
    } else {
        rc = 1;
    }
    json_object_object_add(step, "status", json_object_new_string(status));
    json_object_object_add(step, "results", json_object_new_int64(rc ? (int64_t)result_count(*result) : 0));
    if (reason != NULL) {
        json_object_object_add(step, "reason", json_object_new_string(reason));
        cn_buf_printf(&r->failures, "%s%s: %s", r->failures.len ? "; " : "", id, reason);
        free(reason);
    }
    json_object_array_add(r->steps, step);
    json_object_put(args);
    return r->failures.oom ? CN_ENOMEM : rc;
}

static json_object *search_args(const run *r, const char *query)
{
    json_object *a = json_object_new_object();
    json_object_object_add(a, "query", json_object_new_string(query));
    json_object_object_add(a, "top_k", json_object_new_int64((int64_t)r->o.candidates));
    json_object_object_add(a, "return_content", json_object_new_boolean(0));
    return a;
}

/* ---- retrieval ---------------------------------------------------------- */

/* Splits the route's nodes: exact anchors and query anchors are fused,
 * neighbours are kept for the expansion. */
static int fuse_route(run *r, json_object *res)
{
    json_object *nodes = NULL, *exact = json_object_new_array(), *query = json_object_new_array();
    size_t n;
    int rc = 0;

    json_object_object_get_ex(res, "nodes", &nodes);
    n = json_object_is_type(nodes, json_type_array) ? json_object_array_length(nodes) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *nd = json_object_array_get_idx(nodes, i), *role = NULL, *seed = NULL;
        const char *rl;
        json_object_object_get_ex(nd, "role", &role);
        json_object_object_get_ex(nd, "seed", &seed);
        rl = json_object_get_string(role);
        if (rl && strcmp(rl, "anchor") == 0)
            json_object_array_add(json_object_is_type(seed, json_type_string) ? exact : query, json_object_get(nd));
        else if (rl && strcmp(rl, "neighbor") == 0)
            json_object_array_add(r->route_neighbors, json_object_get(nd));
    }
    if ((rc = cn_pl_fuse_list(&r->pool, exact, W_ROUTE_EXACT, "lsp_route seed anchor")) >= 0) {
        for (size_t i = 0; i < json_object_array_length(exact); i++) {
            json_object *nd = json_object_array_get_idx(exact, i), *seed = NULL, *name = NULL;
            cn_pl_node *pn;
            json_object_object_get_ex(nd, "node_name", &name);
            json_object_object_get_ex(nd, "seed", &seed);
            if ((pn = cn_pl_pool_find(&r->pool, json_object_get_string(name))) == NULL) continue;
            pn->exact_seed = 1;
            if (cn_pl_why(pn, "seed `%s` resolves here", json_object_get_string(seed)) < 0) rc = CN_ENOMEM;
        }
    }
    if (rc >= 0) rc = cn_pl_fuse_list(&r->pool, query, W_ROUTE_QUERY, "lsp_route query");
    json_object_put(exact);
    json_object_put(query);
    return rc < 0 ? rc : 0;
}

/* lsp_route answers "unavailable" (no symbol graph) without failing: the
 * step is recorded as failed so the trace says why nothing came of it. */
static int route_unavailable(run *r, json_object *res)
{
    json_object *meta = NULL, *status = NULL, *why = NULL;
    json_object *step = json_object_array_get_idx(r->steps, json_object_array_length(r->steps) - 1);
    json_object_object_get_ex(res, "metadata", &meta);
    json_object_object_get_ex(meta, "status", &status);
    if (status == NULL || strcmp(json_object_get_string(status), "ok") == 0) return 0;
    json_object_object_get_ex(meta, "fallback_reason", &why);
    json_object_object_add(step, "status", json_object_new_string("failed"));
    json_object_object_add(step, "reason", json_object_new_string(why ? json_object_get_string(why) : "unavailable"));
    cn_buf_printf(&r->failures, "%slsp_route: %s", r->failures.len ? "; " : "",
                  why ? json_object_get_string(why) : "unavailable");
    return 1;
}

static int retrieve_route(run *r)
{
    json_object *a, *res;
    int rc;
    if (r->seeds.len == 0 || !on(r, CN_PL_SIG_ROUTE)) return 0;   /* without seeds the route would only repeat BM25 */
    a = json_object_new_object();
    json_object_object_add(a, "symbols", cn_json_strv(&r->seeds));
    json_object_object_add(a, "query", json_object_new_string(r->question));
    json_object_object_add(a, "top_k", json_object_new_int64((int64_t)r->o.candidates));
    json_object_object_add(a, "include_neighbors", json_object_new_boolean(1));
    if ((rc = call_skill(r, "lsp_route", a, &res)) <= 0) return rc;
    if (route_unavailable(r, res)) {
        json_object_put(res);
        return r->failures.oom ? CN_ENOMEM : 0;
    }
    r->retrieved++;
    rc = fuse_route(r, res);
    json_object_put(res);
    return rc;
}

static int retrieve_search(run *r, const char *skill, const char *query, double weight, const char *label)
{
    json_object *res;
    int rc;
    if (query == NULL || *query == '\0') return 0;
    if ((rc = call_skill(r, skill, search_args(r, query), &res)) <= 0) return rc;
    r->retrieved++;
    rc = cn_pl_fuse_list(&r->pool, res, weight, label);
    json_object_put(res);
    return rc < 0 ? rc : 0;
}

/* Symbols whose names carry `text` (cn_planner_names.c). */
static int retrieve_names(run *r, const char *text, double weight, const char *label)
{
    json_object *hits = NULL;
    int rc;
    if (r->reg->index == NULL) return 0;
    /* not counted in r->retrieved: names alone, with every retrieval
     * skill refused, are too thin an answer to give */
    if ((rc = cn_pl_name_matches(r->reg->index, text, r->o.candidates, &hits)) < 0) return rc;
    rc = cn_pl_fuse_list(&r->pool, hits, weight, label);
    json_object_put(hits);
    return rc < 0 ? rc : 0;
}

/* Symbols holding the question's quoted text verbatim (cn_planner_literal.c). */
static int retrieve_literals(run *r)
{
    json_object *hits = NULL;
    int rc;
    if (r->reg->index == NULL) return 0;
    if ((rc = cn_pl_literal_matches(r->reg->index, r->question, &r->errors, r->o.candidates, &hits, NULL)) < 0)
        return rc;
    rc = cn_pl_fuse_list(&r->pool, hits, W_LITERAL, "quoted text found here");
    json_object_put(hits);
    return rc < 0 ? rc : 0;
}

/* The question's first non-blank line when more follows (an issue's
 * title), else NULL; *oom on ENOMEM. */
static char *title_of(const char *q, int *oom)
{
    size_t n;
    char *t;
    q += strspn(q, " \t\r\n");
    n = strcspn(q, "\r\n");
    if (q[n + strspn(q + n, " \t\r\n")] == '\0') return NULL;
    if ((t = cn_strndup(q, n)) == NULL) *oom = 1;
    return t;
}

static char *joined(const cn_strv *v)
{
    cn_buf b = CN_BUF_INIT;
    for (size_t i = 0; i < v->len; i++) cn_buf_printf(&b, "%s%s", i ? " " : "", v->items[i]);
    return b.oom ? (cn_buf_free(&b), NULL) : cn_buf_steal(&b);
}

static bool want_vectors(const run *r)
{
    return r->o.use_vectors > 0 || (r->o.use_vectors < 0 && r->reg->vectors != NULL);
}

static int retrieve(run *r)
{
    int oom = 0;
    char *s = joined(&r->seeds), *e = joined(&r->errors), *title = title_of(r->question, &oom);
    int rc = s && e && !oom ? 0 : CN_ENOMEM;
    bool names = on(r, CN_PL_SIG_NAMES), with_title = title != NULL && on(r, CN_PL_SIG_TITLE);
    if (rc == 0) rc = retrieve_route(r);
    if (rc == 0 && on(r, CN_PL_SIG_BM25)) rc = retrieve_search(r, "bm25_search", r->question, W_BM25, "bm25");
    if (rc == 0 && on(r, CN_PL_SIG_BM25_SEEDS))
        rc = retrieve_search(r, "bm25_search", s, W_BM25_SEEDS, "bm25 over the seeds");
    if (rc == 0 && on(r, CN_PL_SIG_BM25_ERRORS))
        rc = retrieve_search(r, "bm25_search", e, W_BM25_ERRORS, "bm25 over the error text");
    if (rc == 0 && with_title) rc = retrieve_search(r, "bm25_search", title, W_BM25_TITLE, "bm25 over the title");
    if (rc == 0 && want_vectors(r) && on(r, CN_PL_SIG_HYBRID))
        rc = retrieve_search(r, "hybrid_search", r->question, W_HYBRID, "hybrid");
    if (rc == 0 && names) rc = retrieve_names(r, r->question, W_NAMES, "name match");
    if (rc == 0 && names && with_title) rc = retrieve_names(r, title, W_NAMES_TITLE, "name matches the title");
    if (rc == 0 && on(r, CN_PL_SIG_LITERALS)) rc = retrieve_literals(r);
    free(s);
    free(e);
    free(title);
    return rc;
}

/* ---- graph expansion ---------------------------------------------------- */

static const char *qual_of(const char *name)
{
    const char *c = strchr(name, ':');
    return c ? c + 1 : name;
}

static int expand_node(run *r, json_object *hit, double root_score, const char *fmt, const char *root)
{
    int oom = 0;
    cn_pl_node *n = cn_pl_pool_node(&r->pool, hit, &oom);
    if (n == NULL) return oom ? CN_ENOMEM : 0;
    if (EXPAND_DECAY * root_score > n->expand) n->expand = EXPAND_DECAY * root_score;
    return cn_pl_why(n, fmt, qual_of(root));
}

static int expand_route_neighbors(run *r)
{
    for (size_t i = 0; i < json_object_array_length(r->route_neighbors); i++) {
        json_object *nd = json_object_array_get_idx(r->route_neighbors, i), *via = NULL, *from = NULL;
        const cn_pl_node *anchor;
        char *root;
        int rc;
        json_object_object_get_ex(nd, "via", &via);
        json_object_object_get_ex(via, "from_name", &from);
        if ((anchor = cn_pl_pool_find(&r->pool, json_object_get_string(from))) == NULL) continue;
        if ((root = cn_strdup(anchor->name)) == NULL) return CN_ENOMEM;   /* the pool may move */
        rc = expand_node(r, nd, anchor->score, "graph neighbour of %s", root);
        free(root);
        if (rc < 0) return rc;
    }
    return 0;
}

static int expand_with(run *r, const char *skill, const char *root, double score, const char *fmt)
{
    json_object *a = json_object_new_object(), *res, *list = NULL;
    int rc;
    json_object_object_add(a, "symbol", json_object_new_string(root));
    json_object_object_add(a, "top_k", json_object_new_int(EXPAND_TOP_K));
    if ((rc = call_skill(r, skill, a, &res)) <= 0) return rc;
    json_object_object_get_ex(res, "results", &list);
    for (size_t i = 0; rc >= 0 && json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++)
        rc = expand_node(r, json_object_array_get_idx(list, i), score, fmt, root);
    json_object_put(res);
    return rc < 0 ? rc : 0;
}

static int expand(run *r)
{
    size_t *order, roots = 0;
    int rc;
    const cn_strv *seeds = on(r, CN_PL_SIG_SEED_BONUS) ? &r->seeds : NULL;
    if ((rc = cn_pl_score(&r->pool, seeds, &r->paths)) < 0 || !on(r, CN_PL_SIG_EXPAND)) return rc;
    if ((rc = expand_route_neighbors(r)) < 0) return rc;
    if ((order = cn_pl_order(&r->pool)) == NULL) return CN_ENOMEM;
    /* the roots are copied first: expansion adds nodes and moves the pool */
    {
        cn_strv names = CN_STRV_INIT;
        double scores[EXPAND_ROOTS];
        size_t n = r->pool.len;
        for (size_t k = 0; k < n && roots < EXPAND_ROOTS && rc == 0; k++) {
            const cn_pl_node *nd = &r->pool.items[order[k]];
            if (!cn_pl_is_symbol_type(nd->type)) continue;
            /* a class's callers are whoever makes one: they say little */
            scores[roots++] = nd->score * (strcmp(nd->type, "class") == 0 ? EXPAND_CLASS : 1.0);
            if (cn_strv_push(&names, nd->name) < 0) rc = CN_ENOMEM;
        }
        for (size_t i = 0; i < names.len && rc == 0; i++) {
            rc = expand_with(r, "find_callers", names.items[i], scores[i], "calls %s");
            if (rc == 0) rc = expand_with(r, "find_callees", names.items[i], scores[i], "called by %s");
        }
        cn_strv_free(&names);
    }
    free(order);
    return rc < 0 ? rc : cn_pl_score(&r->pool, seeds, &r->paths);
}

/* ---- the contract ------------------------------------------------------- */

typedef struct folded {
    char *name;                 /* "path:Qualified.name" */
    unsigned start_line, end_line;
} folded;

/* The LocAgent name of a node: nested functions fold into the outermost
 * function or method around them ("helper.inner" is "helper"; a method
 * stays "Class.method").  Without an index the node's own name is used. */
static int fold_symbol(const run *r, const cn_pl_node *n, folded *out)
{
    const cn_index_services *I = cn_host_index_services();
    cn_node_info info, outer;
    cn_error err;
    int found = 0;

    out->name = NULL;
    out->start_line = n->start_line;
    out->end_line = n->end_line;
    if (r->reg->index != NULL && n->id >= 0) {
        int64_t cur = n->id;
        while (cur >= 0) {
            info.struct_size = sizeof info;
            if (I->node(r->reg->index, (uint32_t)cur, &info, &err) < 0) break;
            if (info.kind == CN_NODE_FUNCTION || info.kind == CN_NODE_METHOD) {
                outer = info;
                found = 1;
            }
            cur = info.parent;
        }
    }
    if (found && strchr(outer.qualname, ':') != NULL) {
        out->name = cn_strdup(outer.qualname);
        out->start_line = outer.start_line + 1;
        out->end_line = outer.end_line + 1;
    } else {
        out->name = cn_strdup(n->name);
    }
    return out->name ? 0 : CN_ENOMEM;
}

static json_object *why_json(const cn_strv *why)
{
    return cn_json_strv(why);
}

static int add_symbol(cn_plan *p, const cn_pl_node *n, const folded *f, size_t infile_rank, cn_buf *evidence)
{
    json_object *o = json_object_new_object(), *why = why_json(&n->why);
    const char *colon = strchr(f->name, ':');
    cn_buf w = CN_BUF_INIT;
    char *sym, extra[48] = "";
    int rc;

    if (o == NULL || why == NULL) {
        json_object_put(o);
        json_object_put(why);
        return CN_ENOMEM;
    }
    if (infile_rank > 0) {
        snprintf(extra, sizeof extra, "in-file bm25 #%zu", infile_rank);
        if (!cn_strv_contains(&n->why, extra)) json_object_array_add(why, json_object_new_string(extra));
    }
    json_object_object_add(o, "symbol", json_object_new_string(f->name));
    json_object_object_add(o, "path", json_object_new_string(n->path));
    json_object_object_add(o, "start_line", json_object_new_int64(f->start_line));
    json_object_object_add(o, "end_line", json_object_new_int64(f->end_line));
    json_object_object_add(o, "score", json_object_new_double(n->score));
    json_object_object_add(o, "why", why);
    json_object_array_add(p->symbols, o);
    for (size_t i = 0; i < json_object_array_length(why) && i < 3; i++)
        cn_buf_printf(&w, "%s%s", i ? "; " : "", json_object_get_string(json_object_array_get_idx(why, i)));
    cn_buf_printf(evidence, "- %s:%u-%u \xe2\x80\x94 %s (%s)\n", n->path, f->start_line, f->end_line,
                  w.data ? w.data : "ranked", colon ? colon + 1 : f->name);
    cn_buf_free(&w);
    sym = cn_strdup(f->name);
    rc = sym ? cn_contract_add_symbol(&p->contract, sym) : CN_ENOMEM;
    free(sym);
    return rc;
}

/* A file's score in the ranked files (0 when it is not there). */
static double file_score(const cn_plan *p, const char *path)
{
    for (size_t i = 0; i < json_object_array_length(p->files); i++) {
        json_object *f = json_object_array_get_idx(p->files, i), *v = NULL;
        if (json_object_object_get_ex(f, "path", &v) && strcmp(json_object_get_string(v), path) == 0)
            return json_object_object_get_ex(f, "score", &v) ? json_object_get_double(v) : 0;
    }
    return 0;
}

typedef struct ranked_sym {
    const cn_pl_node *n;
    double score;
    size_t infile_rank;      /* 1-based rank among the in-file functions, 0 when not there */
} ranked_sym;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked_sym *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return strcmp(x->n->name, y->n->name);
}

/* A node's weight by its file's standing: (file / best file)^FILE_POWER. */
static double file_weight(const cn_plan *p, const char *path, double top)
{
    double fs = file_score(p, path);
    return top > 0 && fs > 0 ? pow(fs / top, FILE_POWER) : 1.0;
}

/* The in-file ranking fused into the pool's.  The pool's first
 * INFILE_KEEP candidates stay where they are: what the question named
 * and the searches agreed on is right more often than a file's words
 * alone.  Below them each list gives 1/(INFILE_K + rank), the in-file one
 * times W_INFILE, both weighed by file first, and a function only the
 * in-file search found joins the candidates. */
static int fuse_infile(const run *r, const cn_plan *p, double top, ranked_sym **cand, size_t *nc,
                       cn_pl_pool *infile)
{
    ranked_sym *in, *grown;
    size_t ni = 0, n0 = *nc;
    int rc = cn_pl_infile_bm25(r->reg->index, r->question, &p->contract.files, INFILE_TOP, infile);

    if (rc < 0 || infile->len == 0) return rc;
    if ((in = calloc(infile->len, sizeof *in)) == NULL) return CN_ENOMEM;
    for (size_t j = 0; j < infile->len; j++) {
        in[ni].n = &infile->items[j];
        in[ni++].score = infile->items[j].score * file_weight(p, infile->items[j].path, top);
    }
    qsort(in, ni, sizeof *in, cmp_ranked);
    /* the kept ones score above anything fusion can give (at most 1 + W) */
    for (size_t i = 0; i < n0; i++)
        (*cand)[i].score =
            i < INFILE_KEEP ? 2.0 + W_INFILE + (double)(INFILE_KEEP - i) : 1.0 / (INFILE_K + (double)i + 1.0);
    if ((grown = realloc(*cand, (n0 + ni) * sizeof *grown)) == NULL) {
        free(in);
        return CN_ENOMEM;
    }
    *cand = grown;
    for (size_t j = 0; j < ni; j++) {
        size_t i;
        for (i = 0; i < *nc; i++)
            if (grown[i].n->id >= 0 && grown[i].n->id == in[j].n->id) break;
        if (i == *nc) {
            grown[i].n = in[j].n;
            grown[i].score = 0;
            (*nc)++;
        }
        if (i >= INFILE_KEEP || i >= n0) grown[i].score += W_INFILE / (INFILE_K + (double)j + 1.0);
        grown[i].infile_rank = j + 1;
    }
    free(in);
    qsort(grown, *nc, sizeof *grown, cmp_ranked);
    return 0;
}

/* Symbols of the answer's files, each node's score weighed by how its
 * file ranks against the best file ((file / best)^FILE_POWER): a strong
 * node in a weak file is more often a coincidence than a weaker one in the
 * file everything points at.  The in-file ranking (cn_pl_infile_bm25) is
 * fused in by rank. */
static int build_symbols(const run *r, const size_t *order, cn_plan *p, cn_buf *evidence)
{
    cn_strv seen = CN_STRV_INIT;
    ranked_sym *cand = calloc(r->pool.len ? r->pool.len : 1, sizeof *cand);
    size_t nc = 0;
    double top = p->contract.files.len && on(r, CN_PL_SIG_FILE_WEIGHT) ? file_score(p, p->contract.files.items[0]) : 0;
    cn_pl_pool infile;
    int rc = cand ? cn_pl_pool_init(&infile) : CN_ENOMEM;

    if (rc < 0) {
        free(cand);
        return CN_ENOMEM;
    }
    for (size_t k = 0; rc == 0 && k < r->pool.len; k++) {
        const cn_pl_node *n = &r->pool.items[order[k]];
        if (!cn_pl_is_symbol_type(n->type) || !cn_strv_contains(&p->contract.files, n->path)) continue;
        cand[nc].n = n;
        cand[nc++].score = n->score * file_weight(p, n->path, top);
    }
    qsort(cand, nc, sizeof *cand, cmp_ranked);
    if (on(r, CN_PL_SIG_INFILE) && r->reg->index != NULL) rc = fuse_infile(r, p, top, &cand, &nc, &infile);
    for (size_t k = 0; k < nc && seen.len < r->o.max_symbols && rc == 0; k++) {
        const cn_pl_node *n = cand[k].n;
        folded f;
        if ((rc = fold_symbol(r, n, &f)) < 0) break;
        if (!cn_strv_contains(&seen, f.name)) {
            rc = cn_strv_push(&seen, f.name);
            if (rc == 0) rc = add_symbol(p, n, &f, cand[k].infile_rank, evidence);
            if (rc == 0 && p->contract.n_locations < r->o.max_locations)
                rc = cn_contract_add_location(&p->contract, n->path, f.start_line, f.end_line);
        }
        free(f.name);
    }
    free(cand);
    cn_pl_pool_free(&infile);
    cn_strv_free(&seen);
    return rc < 0 ? CN_ENOMEM : 0;
}

/* A file enters Files when a node inside it ranked or the question names
 * it; a bare file node (an empty __init__.py matching by its path) does
 * not make a location. */
static bool file_eligible(const run *r, const char *path)
{
    if (cn_pl_path_mentioned(path, &r->paths)) return true;
    for (size_t i = 0; i < r->pool.len; i++)
        if (strcmp(r->pool.items[i].path, path) == 0 && strcmp(r->pool.items[i].type, "file") != 0) return true;
    return false;
}

static int build_contract(const run *r, cn_plan *p)
{
    size_t *order = cn_pl_order(&r->pool);
    cn_buf evidence = CN_BUF_INIT;
    char *text = NULL;
    int rc = 0;

    p->files = cn_pl_rank_files(&r->pool, order ? order : (size_t[]){0}, &r->paths, on(r, CN_PL_SIG_ASIDE));
    p->symbols = json_object_new_array();
    if (order == NULL || p->files == NULL || p->symbols == NULL) rc = CN_ENOMEM;
    if (rc == 0 && r->reg->index != NULL) {
        cn_strv whole = CN_STRV_INIT;
        if (on(r, CN_PL_SIG_FILE_BM25)) rc = cn_pl_file_bm25(r->reg->index, r->question, WHOLE_FILES, &whole);
        if (rc == 0) {
            cn_pl_fuse_opts fo = {
                .named = &r->paths,
                .repo_root = r->reg->index->repo_root,
                .generated = on(r, CN_PL_SIG_GENERATED),
                .vendored = on(r, CN_PL_SIG_VENDORED),
                .nodes = on(r, CN_PL_SIG_MINORITY) ? r->reg->index->nodes : NULL,
                .demote_aside = on(r, CN_PL_SIG_ASIDE),
            };
            rc = cn_pl_fuse_files(p->files, &whole, &fo);
        }
        cn_strv_free(&whole);
    }
    for (size_t i = 0; rc == 0 && i < json_object_array_length(p->files) && p->contract.files.len < r->o.max_files;
         i++) {
        json_object *f = json_object_array_get_idx(p->files, i), *path = NULL;
        json_object_object_get_ex(f, "path", &path);
        if (file_eligible(r, json_object_get_string(path)))
            rc = cn_contract_add_file(&p->contract, json_object_get_string(path));
    }
    if (rc == 0) rc = build_symbols(r, order, p, &evidence);
    p->contract.has_files = p->contract.has_symbols = p->contract.has_locations = true;
    if (rc == 0 && (text = cn_contract_render(&p->contract)) == NULL) rc = CN_ENOMEM;
    if (rc == 0) {
        cn_buf a = CN_BUF_INIT;
        if (evidence.len) cn_buf_printf(&a, "Evidence:\n%s\n", evidence.data);
        cn_buf_printf(&a, "%s\n", text);
        p->answer = a.oom ? (cn_buf_free(&a), NULL) : cn_buf_steal(&a);
        if (p->answer == NULL) rc = CN_ENOMEM;
    }
    free(text);
    free(order);
    cn_buf_free(&evidence);
    return rc < 0 ? cn_error_set(CN_ENOMEM, "planner: out of memory while writing the answer") : 0;
}

/* ---- the run ------------------------------------------------------------ */

static bool blank(const char *s)
{
    for (; s && *s; s++)
        if (!isspace((unsigned char)*s)) return false;
    return true;
}

/* Paths the question names, among its seeds ("pkg/pool.py", "pool.py",
 * "pool.py:Pool.get" names pool.py). */
static int collect_paths(run *r)
{
    for (size_t i = 0; i < r->seeds.len; i++) {
        const char *s = r->seeds.items[i], *colon = strchr(s, ':');
        size_t n = colon && colon[1] != ':' ? (size_t)(colon - s) : strlen(s);
        const char *dot = NULL;
        for (size_t k = 0; k < n; k++)
            if (s[k] == '.') dot = s + k;
        if (memchr(s, '/', n) == NULL && (dot == NULL || !cn_seed_is_specific(s))) continue;
        if (dot == NULL || memchr(dot, '/', (size_t)(s + n - dot)) != NULL) continue;   /* a directory */
        if (!isalpha((unsigned char)dot[1]) || !isalpha((unsigned char)s[n - 1])) continue;
        if (memchr(s, '(', n) != NULL) continue;
        /* a dotted name with a capital part is a symbol, not a file */
        if (memchr(s, '/', n) == NULL && n - (size_t)(dot - s) > 5) continue;
        if (cn_strv_push_owned(&r->paths, cn_strndup(s, n)) < 0) return CN_ENOMEM;
    }
    return 0;
}

/* Seeds too short to name one symbol ("x", "df") anchor the route on
 * whatever happens to be called that. */
static void drop_short_seeds(cn_strv *seeds)
{
    size_t k = 0;
    for (size_t i = 0; i < seeds->len; i++) {
        if (strlen(seeds->items[i]) < MIN_SEED_LEN) free(seeds->items[i]);
        else seeds->items[k++] = seeds->items[i];
    }
    seeds->len = k;
}

static int prepare(run *r)
{
    int rc = cn_seeds_extract(r->question, r->o.seeds, SEED_LIMIT, &r->seeds);
    if (rc >= 0 && on(r, CN_PL_SIG_SHORT_SEEDS)) drop_short_seeds(&r->seeds);
    if (rc >= 0) rc = cn_seeds_error_strings(r->question, ERROR_LIMIT, &r->errors);
    if (rc >= 0 && on(r, CN_PL_SIG_PATHS)) rc = collect_paths(r);
    if (rc >= 0) rc = cn_pl_pool_init(&r->pool);
    if (rc >= 0) {
        r->steps = json_object_new_array();
        r->route_neighbors = json_object_new_array();
        if (r->steps == NULL || r->route_neighbors == NULL) rc = CN_ENOMEM;
    }
    return rc < 0 ? rc : 0;
}

static void run_free(run *r)
{
    cn_strv_free(&r->seeds);
    cn_strv_free(&r->errors);
    cn_strv_free(&r->paths);
    cn_pl_pool_free(&r->pool);
    json_object_put(r->route_neighbors);
    json_object_put(r->steps);
    cn_buf_free(&r->failures);
}

static int check_options(const cn_planner_options *o)
{
    if (o->max_files == 0 || o->max_symbols == 0 || o->max_locations == 0 || o->candidates == 0 ||
        o->candidates > 500)
        return cn_error_set(CN_EINVAL, "planner options: max_files, max_symbols and max_locations must be "
                                       "at least 1 and candidates 1 to 500");
    return 0;
}

int cn_planner_run(cn_registry *reg, const char *question, const cn_planner_options *o, cn_plan *out)
{
    run r;
    int rc;

    memset(out, 0, sizeof *out);
    memset(&r, 0, sizeof r);
    if (o != NULL) r.o = *o;
    else cn_planner_options_init(&r.o);
    if (reg == NULL || blank(question))
        return cn_error_set(CN_EINVAL, "the question is empty: say what to find, e.g. a bug report, "
                                       "an error message or the behaviour to change");
    if ((rc = check_options(&r.o)) < 0) return rc;
    r.reg = reg;
    r.question = question;
    rc = prepare(&r);
    if (rc == 0) rc = retrieve(&r);
    if (rc == 0 && r.retrieved == 0)
        rc = cn_error_set(CN_ENOTFOUND, "no retrieval skill could run (%s): compile the repository with "
                                        "`codenib compile` and allow lsp_route or bm25_search",
                          r.failures.data ? r.failures.data
                          : (r.o.without & RETRIEVAL_SIGNALS) == RETRIEVAL_SIGNALS
                              ? "every retrieval signal is switched off"
                              : "none was tried");
    else if (rc == CN_ENOMEM)
        cn_error_set(CN_ENOMEM, "planner: out of memory");
    if (rc == 0 && (rc = expand(&r)) < 0) cn_error_set(rc, "planner: out of memory while expanding");
    if (rc == 0) rc = build_contract(&r, out);
    out->steps = r.steps;
    r.steps = NULL;
    run_free(&r);
    if (rc < 0) {
        json_object *steps = out->steps;
        out->steps = NULL;
        cn_plan_free(out);
        out->steps = steps;
    }
    return rc;
}

void cn_plan_free(cn_plan *p)
{
    if (p == NULL) return;
    cn_contract_free(&p->contract);
    json_object_put(p->files);
    json_object_put(p->symbols);
    json_object_put(p->steps);
    free(p->answer);
    memset(p, 0, sizeof *p);
}

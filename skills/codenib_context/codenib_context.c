/* SPDX-License-Identifier: Apache-2.0 */
/* codenib_context: a bounded, deduplicated pack of the code a question is
 * about, in one call.
 *
 *   1. seeds: the caller's, then names found in the question (backtick
 *      spans, snake_case, CamelCase, dotted.names, path/like.py, func());
 *   2. the LSP route over the seeds (their definitions, then neighbours);
 *   3. BM25 over the question;
 *   4. one-hop neighbours of the best BM25 hits (the LSP route again);
 * merged in that rank order (route anchors, BM25 hits, neighbours), each
 * node once: a node overlapping the lines of one already chosen in the
 * same file is skipped, and whole files come in only when named as a seed.
 * Contents (with a line-number gutter) are added until max_tokens is
 * spent, a token being estimated as 4 characters: the first node that
 * does not fit is cut at a line boundary with a marker when at least
 * MIN_PART tokens are left, else skipped; "truncated" says either
 * happened.  A part that is unavailable (no graph, no BM25 index, no LSP
 * provider) is reported in "warnings" and the rest still runs. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <codenib/index.h>
#include <codenib/lang.h>
#include <codenib/lsp.h>
#include <codenib/skill.h>

#include "cn_skill_util.h"

#define MAX_SEEDS 12          /* seeds taken from the question */
#define MAX_EXPLICIT 32
#define BM25_NEIGHBOR_HITS 3  /* BM25 hits whose neighbours are added */
#define MIN_PART 24           /* tokens worth showing of a cut node */
#define SEED_MAX_LEN 200

/* ---- seeds from the question -------------------------------------------- */

static const char *const stop_words[] = {
    "THE", "AND", "FOR", "NOT", "BUT", "WITH", "THIS", "THAT", "API", "URL", "URI", "HTTP", "HTTPS",
    "JSON", "XML", "HTML", "CSS", "SQL", "YAML", "TODO", "FIXME", "NOTE", "README", "CLI", "GUI", "CPU",
    "GPU", "RAM", "EOF", "UTF", "ASCII", "PR", "OK", NULL,
};

static int is_stop(const char *s)
{
    for (size_t i = 0; stop_words[i]; i++)
        if (strcasecmp(stop_words[i], s) == 0) return 1;
    return 0;
}

static int ident_start(int c)
{
    return isalpha(c) || c == '_';
}

/* Every '.'-separated part an identifier, at least two parts, not "e.g"
 * nor a web domain. */
static int dotted_name(const char *s)
{
    static const char *const tlds[] = {"com", "org", "net", "io", "dev", "html", "md", "txt", NULL};
    const char *last = strrchr(s, '.');
    int parts = 1, longest = 0, cur = 0;
    if (last == NULL || !ident_start((unsigned char)s[0])) return 0;
    for (const char *p = s; *p; p++) {
        if (*p == '.') {
            if (cur == 0 || !ident_start((unsigned char)p[1])) return 0;
            parts++;
            cur = 0;
        } else if (isalnum((unsigned char)*p) || *p == '_') {
            if (++cur > longest) longest = cur;
        } else {
            return 0;
        }
    }
    for (size_t i = 0; tlds[i]; i++)
        if (strcmp(last + 1, tlds[i]) == 0) return 0;
    return parts >= 2 && longest >= 2;
}

/* A path with a file extension: "pkg/pool.py", "src/http/server.c". */
static int path_name(const char *s)
{
    const char *slash = strrchr(s, '/'), *dot = slash ? strrchr(slash, '.') : NULL;
    return slash != NULL && dot != NULL && dot[1] != '\0' && dot > slash + 1 && isalpha((unsigned char)dot[1]);
}

/* Whether a token from prose looks like code. */
static int code_like(const char *t, int called)
{
    int upper = 0, lower = 0, inner_upper = 0, underscore = 0, alpha = 0;
    if (strstr(t, "::") != NULL) return 1;
    if (strchr(t, '/') != NULL) return path_name(t);
    if (strchr(t, ':') != NULL) return 0;
    if (strchr(t, '.') != NULL) return dotted_name(t);
    if (!ident_start((unsigned char)t[0])) return 0;
    for (size_t i = 0; t[i]; i++) {
        unsigned char c = (unsigned char)t[i];
        if (isupper(c)) {
            upper++;
            if (i > 0) inner_upper++;
        }
        if (islower(c)) lower++;
        if (isalpha(c)) alpha++;
        if (c == '_' && i > 0 && t[i + 1] != '\0') underscore++;
    }
    if (called) return 1;                          /* func() */
    if (underscore && alpha) return 1;             /* snake_case, CFG_MAX */
    if (upper && lower && inner_upper) return 1;   /* CamelCase, getValue */
    return lower == 0 && upper >= 3 && !is_stop(t); /* TIMEOUT */
}

static int add_seed(const cn_host *h, cn_json *seeds, const char *s, size_t n)
{
    const cn_json_services *J = h->json;
    char buf[SEED_MAX_LEN + 1];
    if (n == 0 || n > SEED_MAX_LEN) return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    for (size_t i = 0; i < J->array_length(seeds); i++)
        if (strcasecmp(J->get_string(J->array_get(seeds, i)), buf) == 0) return 0;
    return J->array_append(seeds, J->new_string(buf));
}

/* `name` spans: the name before any "(", when it is one word. */
static void backtick_seeds(const cn_host *h, const char *q, cn_json *seeds)
{
    const char *p = q;
    while ((p = strchr(p, '`')) != NULL && h->json->array_length(seeds) < MAX_SEEDS) {
        const char *a = p + 1, *b = strchr(a, '`');
        size_t n;
        if (b == NULL) break;
        while (a < b && isspace((unsigned char)*a)) a++;
        n = (size_t)(b - a);
        for (size_t i = 0; i < n; i++)
            if (a[i] == '(') n = i;
        while (n > 0 && isspace((unsigned char)a[n - 1])) n--;
        if (n > 0 && memchr(a, ' ', n) == NULL && memchr(a, '\n', n) == NULL) add_seed(h, seeds, a, n);
        p = b + 1;
    }
}

static int token_char(int c)
{
    return isalnum(c) || c == '_' || c == '.' || c == '/' || c == ':';
}

/* Code-like words of the prose (outside backticks too). */
static void token_seeds(const cn_host *h, const char *q, cn_json *seeds)
{
    const char *p = q;
    while (*p && h->json->array_length(seeds) < MAX_SEEDS) {
        const char *a, *b;
        char tok[SEED_MAX_LEN + 1];
        size_t n;
        if (!token_char((unsigned char)*p)) {
            p++;
            continue;
        }
        for (a = p, b = p; token_char((unsigned char)*b); b++) {}
        p = b;
        /* sentence punctuation around a word is not part of it */
        while (a < b && (*a == '.' || *a == ':' || *a == '/')) a++;
        while (b > a && (b[-1] == '.' || b[-1] == ':' || b[-1] == '/')) b--;
        n = (size_t)(b - a);
        if (n == 0 || n > SEED_MAX_LEN) continue;
        memcpy(tok, a, n);
        tok[n] = '\0';
        if (code_like(tok, p[0] == '(' && p[1] == ')')) add_seed(h, seeds, tok, n);
    }
}

static int collect_seeds(const cn_host *h, const cn_json *args, const char *query, cn_json *seeds,
                         cn_error *err)
{
    const cn_json_services *J = h->json;
    const cn_json *explicit_seeds = J->object_get(args, "seeds");
    if (explicit_seeds != NULL) {
        if (J->type(explicit_seeds) != CN_JSON_ARRAY)
            return h->error_set(err, CN_EINVAL, "argument 'seeds' must be a list of names");
        for (size_t i = 0; i < J->array_length(explicit_seeds) && i < MAX_EXPLICIT; i++) {
            const char *s = J->get_string(J->array_get(explicit_seeds, i));
            if (s == NULL) return h->error_set(err, CN_EINVAL, "argument 'seeds': item %zu is not a string", i);
            add_seed(h, seeds, s, strlen(s));
        }
    }
    backtick_seeds(h, query, seeds);
    token_seeds(h, query, seeds);
    return 0;
}

/* ---- candidates --------------------------------------------------------- */

/* Rank tiers: the seed route's anchors, BM25 hits, the seed route's
 * neighbours, the BM25 hits' neighbours. */
enum { TIER_ANCHOR, TIER_BM25, TIER_SEED_NBR, TIER_BM25_NBR };

typedef struct cand {
    uint32_t node;
    int tier;
    size_t order;         /* arrival, to keep each tier's own order */
    double score;
    const char *source;   /* "route", "bm25", "neighbor" */
    const char *seed;     /* borrowed from a route result, or NULL */
    int named;            /* named by a seed (whole files allowed) */
} cand;

typedef struct pack {
    const cn_host *h;
    const cn_skill_context *ctx;
    const cn_index_services *I;
    cand *c;
    size_t n, cap;
    cn_json *keep;        /* route results the seeds are borrowed from */
    cn_json *warnings;
} pack;

static int push(pack *pk, int tier, uint32_t node, double score, const char *source, const char *seed,
                int named)
{
    if (pk->n == pk->cap) {
        size_t cap = pk->cap ? pk->cap * 2 : 32;
        cand *c = pk->h->realloc(pk->c, cap * sizeof *c);
        if (c == NULL) return CN_ENOMEM;
        pk->c = c;
        pk->cap = cap;
    }
    pk->c[pk->n].node = node;
    pk->c[pk->n].tier = tier;
    pk->c[pk->n].order = pk->n;
    pk->c[pk->n].score = score;
    pk->c[pk->n].source = source;
    pk->c[pk->n].seed = seed;
    pk->c[pk->n].named = named;
    pk->n++;
    return 0;
}

static void warn(pack *pk, const char *what, const char *why)
{
    char msg[CN_ERROR_MESSAGE_MAX + 64];
    const cn_json_services *J = pk->h->json;
    snprintf(msg, sizeof msg, "%s: %s", what, why);
    for (size_t i = 0; i < J->array_length(pk->warnings); i++)
        if (strcmp(J->get_string(J->array_get(pk->warnings, i)), msg) == 0) return;
    J->array_append(pk->warnings, J->new_string(msg));
}

/* Runs the LSP route; NULL (with a warning) when it cannot. */
static const cn_json *route(pack *pk, const cn_json *symbols, size_t top_k, int neighbors)
{
    const cn_host *h = pk->h;
    const cn_json_services *J = h->json;
    cn_json *req, *res;
    char *text, *out = NULL;
    cn_error e2;
    const char *status;

    memset(&e2, 0, sizeof e2);
    if (!CN_HOST_HAS(h, lsp) || h->lsp == NULL) {
        warn(pk, "lsp route", "this codenib offers no LSP service");
        return NULL;
    }
    if ((req = J->new_object()) == NULL) return NULL;
    J->object_set(req, "symbols", J->get((cn_json *)symbols));
    J->object_set(req, "top_k", J->new_int((int64_t)top_k));
    J->object_set(req, "include_neighbors", J->new_bool(neighbors));
    text = J->serialize(req, 0);
    J->put(req);
    if (text == NULL) return NULL;
    if (h->lsp->call(h, pk->ctx, "route", text, &out, &e2) < 0) {
        h->free(text);
        warn(pk, "lsp route", e2.message);
        return NULL;
    }
    h->free(text);
    res = J->parse(out, &e2);
    h->free(out);
    if (res == NULL) {
        warn(pk, "lsp route", e2.message);
        return NULL;
    }
    J->array_append(pk->keep, res);
    status = J->get_string(J->object_get(J->object_get(res, "metadata"), "status"));
    if (status != NULL && strcmp(status, "ok") != 0) {
        const char *why = J->get_string(J->object_get(J->object_get(res, "metadata"), "fallback_reason"));
        char msg[160];
        snprintf(msg, sizeof msg, "%s (%s)%s", status, why ? why : "no reason given",
                 why && strcmp(why, "symbol_graph_unavailable") == 0 ? ": compile with `--index bm25,graph`" : "");
        warn(pk, "lsp route", msg);
    }
    return J->object_get(res, "nodes");
}

/* Adds a route's nodes: anchors in anchor_tier (-1: skip them),
 * neighbours in nbr_tier. */
static int take_route(pack *pk, const cn_json *nodes, int anchor_tier, int nbr_tier)
{
    const cn_json_services *J = pk->h->json;
    for (size_t i = 0; nodes && i < J->array_length(nodes); i++) {
        const cn_json *o = J->array_get(nodes, i);
        const char *role = J->get_string(J->object_get(o, "role"));
        uint32_t id = (uint32_t)J->get_int(J->object_get(o, "node_id"));
        double score = J->get_double(J->object_get(o, "score"));
        int anchor = role != NULL && strcmp(role, "anchor") == 0, rc = 0;
        if (anchor && anchor_tier >= 0)
            rc = push(pk, anchor_tier, id, score, "route", J->get_string(J->object_get(o, "seed")), 1);
        else if (!anchor)
            rc = push(pk, nbr_tier, id, score, "neighbor", NULL, 0);
        if (rc < 0) return rc;
    }
    return 0;
}

static int cand_cmp(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->tier != y->tier) return x->tier - y->tier;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int bm25_part(pack *pk, const char *query, size_t k, int filter_test, int neighbors,
                     const cn_json **bm25_nbrs)
{
    const cn_host *h = pk->h;
    const cn_json_services *J = h->json;
    cn_search_filter f;
    cn_search_hit *hits = h->alloc(k * sizeof *hits);
    cn_json *names;
    size_t n = 0;
    cn_error e2;
    int rc = 0;

    *bm25_nbrs = NULL;
    if (hits == NULL) return CN_ENOMEM;
    memset(&f, 0, sizeof f);
    f.struct_size = (uint32_t)sizeof f;
    f.exclude_tests = filter_test;
    memset(&e2, 0, sizeof e2);
    if (pk->I->bm25_search(pk->ctx->index, query, k, &f, hits, &n, &e2) < 0) {
        h->free(hits);
        warn(pk, "bm25", e2.message);
        return 0;
    }
    names = J->new_array();
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = push(pk, TIER_BM25, hits[i].node, hits[i].score, "bm25", NULL, 0);
        if (rc == 0 && names != NULL && i < BM25_NEIGHBOR_HITS) {
            cn_node_info nd;
            memset(&nd, 0, sizeof nd);
            nd.struct_size = (uint32_t)sizeof nd;
            if (pk->I->node(pk->ctx->index, hits[i].node, &nd, &e2) == 0)
                J->array_append(names, J->new_string(nd.qualname));
        }
    }
    h->free(hits);
    if (rc == 0 && neighbors && names != NULL && J->array_length(names) > 0)
        *bm25_nbrs = route(pk, names, BM25_NEIGHBOR_HITS + k, 1);
    J->put(names);
    return rc;
}

/* ---- the pack ----------------------------------------------------------- */

typedef struct chosen {
    const char *path;
    uint32_t start, end;
    uint32_t node;
} chosen;

static int overlaps(const chosen *ch, size_t n, const cn_node_info *nd)
{
    for (size_t i = 0; i < n; i++) {
        if (ch[i].node == nd->id) return 1;
        if (strcmp(ch[i].path, nd->path) == 0 && nd->start_line <= ch[i].end && ch[i].start <= nd->end_line)
            return 1;
    }
    return 0;
}

/* Cuts gutter text to at most `budget` tokens at a line boundary and adds
 * a marker naming the lines left out; NULL when not even one line fits. */
static char *cut(const cn_host *h, const char *g, size_t budget, uint32_t start, uint32_t end)
{
    char marker[96];
    size_t cap, keep = 0, len = strlen(g);
    uint32_t shown = 0;
    char *out;

    /* room for the marker at its longest (both numbers the last line's) */
    snprintf(marker, sizeof marker, "\n[... truncated: lines %u-%u not shown]", end + 1, end + 1);
    cap = budget * 4 > strlen(marker) + 16 ? budget * 4 - strlen(marker) - 16 : 0;
    for (size_t i = 0; i < len && i < cap; i++)
        if (g[i] == '\n') {
            keep = i;
            shown++;
        }
    if (shown == 0) return NULL;
    snprintf(marker, sizeof marker, "\n[... truncated: lines %u-%u not shown]", start + shown + 1, end + 1);
    if ((out = h->alloc(keep + strlen(marker) + 1)) == NULL) return NULL;
    memcpy(out, g, keep);
    strcpy(out + keep, marker);
    return out;
}

typedef struct budget {
    size_t max_tokens, used;
    int truncated;
} budget;

/* The item of one candidate, or NULL when the budget leaves no room. */
static cn_json *item(pack *pk, const cand *c, const cn_node_info *nd, budget *b, cn_error *err)
{
    const cn_host *h = pk->h;
    const cn_json_services *J = h->json;
    cn_su_node_opts o;
    char *text = NULL, *g, *part = NULL;
    size_t len = 0, cost;
    cn_json *obj;
    cn_error e2;

    memset(&e2, 0, sizeof e2);
    if (pk->I->node_text(h, pk->ctx->index, c->node, &text, &len, &e2) < 0) {
        warn(pk, nd->qualname, e2.message);
        return NULL;
    }
    g = cn_su_gutter(h, text, len, nd->start_line);
    h->free(text);
    if (g == NULL) return NULL;
    cost = (strlen(g) + 3) / 4;
    if (b->used + cost > b->max_tokens) {
        size_t left = b->max_tokens - b->used;
        b->truncated = 1;
        part = left >= MIN_PART ? cut(h, g, left, nd->start_line, nd->end_line) : NULL;
        h->free(g);
        if (part == NULL) return NULL;
        g = part;
        cost = (strlen(g) + 3) / 4;
    }
    memset(&o, 0, sizeof o);
    if ((obj = cn_su_node_json(h, pk->ctx->index, c->node, c->score, &o, err)) == NULL) {
        h->free(g);
        return NULL;
    }
    J->object_set(obj, "source", J->new_string(c->source));
    if (strcmp(c->source, "route") == 0)
        J->object_set(obj, "seed", c->seed ? J->new_string(c->seed) : J->new_null());
    J->object_set(obj, "content", J->new_string(g));
    if (part != NULL) J->object_set(obj, "truncated", J->new_bool(1));
    h->free(g);
    b->used += cost;
    return obj;
}

static int assemble(pack *pk, size_t max_nodes, int filter_test, budget *b, cn_json *items, cn_error *err)
{
    const cn_host *h = pk->h;
    chosen *ch = h->alloc((max_nodes + 1) * sizeof *ch);
    size_t n_ch = 0;

    if (ch == NULL) return h->error_set(err, CN_ENOMEM, "out of memory");
    for (size_t i = 0; i < pk->n && n_ch < max_nodes && b->used < b->max_tokens; i++) {
        cn_node_info nd;
        cn_json *obj;
        cn_error e2;
        memset(&nd, 0, sizeof nd);
        nd.struct_size = (uint32_t)sizeof nd;
        if (pk->I->node(pk->ctx->index, pk->c[i].node, &nd, &e2) < 0) continue;
        if (filter_test && (nd.is_test || (nd.flags & CN_NODE_F_TEST))) continue;
        if (nd.kind == CN_NODE_FILE && !pk->c[i].named) continue;
        if (overlaps(ch, n_ch, &nd)) continue;
        if ((obj = item(pk, &pk->c[i], &nd, b, err)) == NULL) {
            if (err->code == CN_ENOMEM) break;
            continue;
        }
        h->json->array_append(items, obj);
        ch[n_ch].path = nd.path;
        ch[n_ch].start = nd.start_line;
        ch[n_ch].end = nd.end_line;
        ch[n_ch].node = nd.id;
        n_ch++;
    }
    h->free(ch);
    return err->code == CN_ENOMEM ? err->code : 0;
}

static int int_arg(const cn_host *h, const cn_json *args, const char *name, int64_t lo, int64_t hi, size_t *out,
                   cn_error *err)
{
    const cn_json *v = h->json->object_get(args, name);
    int64_t x = h->json->get_int(v);
    if (h->json->type(v) != CN_JSON_INT || x < lo || x > hi)
        return h->error_set(err, CN_EINVAL, "argument '%s' must be an integer from %lld to %lld", name,
                            (long long)lo, (long long)hi);
    *out = (size_t)x;
    return 0;
}

static int c_run(const cn_host *h, const cn_skill_context *ctx, const cn_json *args, char **result_json,
                 cn_error *err)
{
    const cn_json_services *J = h->json;
    const cn_json *seed_route = NULL, *bm25_nbrs = NULL;
    const char *query;
    cn_json *seeds = NULL, *items = NULL, *out;
    size_t max_nodes;
    int rc, neighbors, filter_test;
    budget b;
    pack pk;

    memset(&pk, 0, sizeof pk);
    memset(&b, 0, sizeof b);
    if ((rc = cn_su_require_index(h, ctx, 0, &pk.I, err)) < 0) return rc;
    query = cn_su_arg_str(h, args, "query");
    if (query == NULL || *query == '\0')
        return h->error_set(err, CN_EINVAL, "argument 'query' must be a non-empty string");
    if ((rc = int_arg(h, args, "max_tokens", 1, 1000000, &b.max_tokens, err)) < 0) return rc;
    if ((rc = int_arg(h, args, "max_nodes", 1, 200, &max_nodes, err)) < 0) return rc;
    neighbors = cn_su_arg_bool(h, args, "include_neighbors", 1);
    filter_test = cn_su_arg_bool(h, args, "filter_test", 0);
    pk.h = h;
    pk.ctx = ctx;
    pk.keep = J->new_array();
    pk.warnings = J->new_array();
    seeds = J->new_array();
    items = J->new_array();
    if (pk.keep == NULL || pk.warnings == NULL || seeds == NULL || items == NULL) {
        rc = h->error_set(err, CN_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = collect_seeds(h, args, query, seeds, err)) < 0) goto out;
    if (J->array_length(seeds) > 0) seed_route = route(&pk, seeds, max_nodes, neighbors);
    if ((rc = take_route(&pk, seed_route, TIER_ANCHOR, TIER_SEED_NBR)) < 0) goto nomem;
    if ((rc = bm25_part(&pk, query, max_nodes, filter_test, neighbors, &bm25_nbrs)) < 0) goto nomem;
    if ((rc = take_route(&pk, bm25_nbrs, -1, TIER_BM25_NBR)) < 0) goto nomem;
    if (pk.n > 1) qsort(pk.c, pk.n, sizeof *pk.c, cand_cmp);
    if ((rc = assemble(&pk, max_nodes, filter_test, &b, items, err)) < 0) goto out;
    if ((out = J->new_object()) == NULL) goto nomem;
    J->object_set(out, "seeds", seeds);
    J->object_set(out, "items", items);
    J->object_set(out, "used_tokens", J->new_int((int64_t)b.used));
    J->object_set(out, "truncated", J->new_bool(b.truncated));
    if (J->array_length(pk.warnings) > 0) {
        J->object_set(out, "warnings", pk.warnings);
        pk.warnings = NULL;
    }
    seeds = items = NULL;
    rc = cn_su_emit(h, out, result_json, err);
    goto out;
nomem:
    rc = h->error_set(err, CN_ENOMEM, "out of memory");
out:
    J->put(seeds);
    J->put(items);
    J->put(pk.keep);
    J->put(pk.warnings);
    h->free(pk.c);
    return rc;
}

static int c_create(const cn_host *host, const cn_skill_context *ctx, cn_executor **out, cn_error *err)
{
    return cn_su_simple_executor(host, ctx, c_run, out, err);
}

CN_SKILL_DEFINE(codenib_context, "codenib_context", "0.1.0", c_create);

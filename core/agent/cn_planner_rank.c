/* SPDX-License-Identifier: Apache-2.0 */
/* The offline planner's scoring: the candidate pool, weighted reciprocal
 * rank fusion, seed and path bonuses, and file aggregation (see
 * cn_planner.h).  Everything is a pure function of the skill results, so
 * the same question over the same index always ranks the same way. */
#include "cn_planner.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <codenib/lang.h>

#include "../index/cn_index.h"
#include "../index/cn_nodes.h"

/* A node's bonus when its qualified name ends with a dotted seed
 * ("ConnectionPool.get"), or its short name is a plain seed ("get_user"):
 * the question named it, which BM25 alone may rank low in long prose. */
#define BONUS_DOTTED 1.0
#define BONUS_SHORT 0.6
#define BONUS_PART 0.5
/* A node in a file the question names, and that file itself. */
#define BONUS_PATH_NODE 0.3
#define BONUS_PATH_FILE 1.0
/* A file's score: its best node plus these shares of the next two, so a
 * file with several relevant nodes beats one with a single lucky hit. */
#define FILE_SHARE_2 0.3
#define FILE_SHARE_3 0.1
/* A file under doc/, examples/ or a benchmark tree, unless the question
 * names it: this share of its score. */
#define FILE_ASIDE 0.5

int cn_pl_pool_init(cn_pl_pool *p)
{
    memset(p, 0, sizeof *p);
    p->by_name = json_object_new_object();
    return p->by_name ? 0 : cn_error_set(CN_ENOMEM, "planner: out of memory");
}

void cn_pl_pool_free(cn_pl_pool *p)
{
    for (size_t i = 0; i < p->len; i++) {
        free(p->items[i].name);
        free(p->items[i].path);
        free(p->items[i].type);
        cn_strv_free(&p->items[i].why);
    }
    free(p->items);
    json_object_put(p->by_name);
    memset(p, 0, sizeof *p);
}

cn_pl_node *cn_pl_pool_find(const cn_pl_pool *p, const char *name)
{
    json_object *v;
    if (name == NULL || !json_object_object_get_ex(p->by_name, name, &v)) return NULL;
    return &p->items[json_object_get_int(v) - 1];
}

static int pool_grow(cn_pl_pool *p)
{
    size_t cap = p->cap ? p->cap * 2 : 64;
    cn_pl_node *items;
    if (p->len < p->cap) return 0;
    if ((items = realloc(p->items, cap * sizeof *items)) == NULL) return CN_ENOMEM;
    p->items = items;
    p->cap = cap;
    return 0;
}

cn_pl_node *cn_pl_pool_node(cn_pl_pool *p, json_object *hit, int *oom)
{
    const char *name = cn_json_str_member(hit, "node_name"), *path = cn_json_str_member(hit, "file");
    const char *type = cn_json_str_member(hit, "type");
    cn_pl_node *n;

    if (name == NULL || path == NULL) return NULL;
    if ((n = cn_pl_pool_find(p, name)) != NULL) return n;
    if (pool_grow(p) < 0) goto oom;
    n = &p->items[p->len];
    memset(n, 0, sizeof *n);
    n->name = cn_strdup(name);
    n->path = cn_strdup(path);
    n->type = cn_strdup(type ? type : "unknown");
    n->id = cn_json_int_member(hit, "node_id", -1);
    n->start_line = (unsigned)cn_json_int_member(hit, "start_line", 0);
    n->end_line = (unsigned)cn_json_int_member(hit, "end_line", n->start_line);
    if (n->name == NULL || n->path == NULL || n->type == NULL ||
        json_object_object_add(p->by_name, name, json_object_new_int((int)p->len + 1)) != 0) {
        free(n->name);
        free(n->path);
        free(n->type);
        goto oom;
    }
    p->len++;
    return n;
oom:
    *oom = 1;
    return NULL;
}

int cn_pl_why(cn_pl_node *n, const char *fmt, ...)
{
    cn_buf b = CN_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    cn_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (b.oom) {
        cn_buf_free(&b);
        return CN_ENOMEM;
    }
    if (b.data == NULL || cn_strv_contains(&n->why, b.data)) {
        cn_buf_free(&b);
        return 0;
    }
    return cn_strv_push_owned(&n->why, cn_buf_steal(&b)) < 0 ? CN_ENOMEM : 0;
}

int cn_pl_fuse_list(cn_pl_pool *p, json_object *hits, double weight, const char *label)
{
    size_t n = json_object_is_type(hits, json_type_array) ? json_object_array_length(hits) : 0;
    int rank = 0, oom = 0;
    json_object *seen = json_object_new_object();

    if (seen == NULL) return CN_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        cn_pl_node *nd = cn_pl_pool_node(p, json_object_array_get_idx(hits, i), &oom);
        if (nd == NULL) {
            if (oom) break;
            continue;
        }
        if (json_object_object_get_ex(seen, nd->name, NULL)) continue;
        json_object_object_add(seen, nd->name, NULL);
        rank++;
        nd->fused += weight * (CN_PL_RRF_K + 1.0) / (CN_PL_RRF_K + rank);
        if (cn_pl_why(nd, "%s #%d", label, rank) < 0) {
            oom = 1;
            break;
        }
    }
    json_object_put(seen);
    return oom ? CN_ENOMEM : rank;
}

json_object *cn_pl_hit_json(const struct cn_index *idx, uint32_t id, double score)
{
    cn_node_view v;
    json_object *o;
    if (cn_nodes_get(idx->nodes, id, &v) < 0 || (o = json_object_new_object()) == NULL) return NULL;
    json_object_object_add(o, "node_name", json_object_new_string(v.qualname));
    json_object_object_add(o, "type", json_object_new_string(cn_node_kind_name(v.kind)));
    json_object_object_add(o, "file", json_object_new_string(v.path));
    json_object_object_add(o, "start_line", json_object_new_int64(v.start_line));
    json_object_object_add(o, "end_line", json_object_new_int64(v.end_line));
    json_object_object_add(o, "node_id", json_object_new_int64(id));
    json_object_object_add(o, "score", json_object_new_double(score));
    return o;
}

/* ---- seed and path matches --------------------------------------------- */

static int is_source_path(const char *s)
{
    const char *dot = strrchr(s, '.'), *slash = strrchr(s, '/');
    if (slash != NULL) return 1;
    return dot != NULL && dot != s && strchr(dot, ':') == NULL &&
           (strcmp(dot, ".py") == 0 || strcmp(dot, ".c") == 0 || strcmp(dot, ".h") == 0 ||
            strcmp(dot, ".java") == 0 || strcmp(dot, ".js") == 0 || strcmp(dot, ".ts") == 0 ||
            strcmp(dot, ".go") == 0 || strcmp(dot, ".rs") == 0 || strcmp(dot, ".cpp") == 0 ||
            strcmp(dot, ".rb") == 0 || strcmp(dot, ".pyi") == 0);
}

/* A seed as a dotted name ("Class.method"), without a call's "()", a
 * "file.py:" prefix, receivers and other notations; NULL for paths. */
static char *seed_dotted(const char *seed)
{
    const char *s = seed, *colon = strchr(seed, ':');
    cn_buf b = CN_BUF_INIT;
    if (colon != NULL && colon[1] != ':') s = colon + 1;
    else if (is_source_path(seed)) return NULL;
    if (strncmp(s, "self.", 5) == 0 || strncmp(s, "this.", 5) == 0) s += 5;
    if (strncmp(s, "cls.", 4) == 0) s += 4;
    for (; *s && *s != '('; s++) {
        if (s[0] == ':' && s[1] == ':') {
            cn_buf_putc(&b, '.');
            s++;
        } else {
            cn_buf_putc(&b, *s == '#' ? '.' : *s);
        }
    }
    return b.len ? cn_buf_steal(&b) : (cn_buf_free(&b), NULL);
}

/* "pkg/pool.py:ConnectionPool.get" -> "pkg.pool.ConnectionPool.get" */
static char *node_dotted(const cn_pl_node *n)
{
    const char *colon = strchr(n->name, ':');
    const char *dot = strrchr(n->path, '.');
    size_t plen = dot && dot > strrchr(n->path, '/') ? (size_t)(dot - n->path) : strlen(n->path);
    cn_buf b = CN_BUF_INIT;
    for (size_t i = 0; i < plen; i++) cn_buf_putc(&b, n->path[i] == '/' ? '.' : n->path[i]);
    if (colon != NULL) cn_buf_printf(&b, ".%s", colon + 1);
    return cn_buf_steal(&b);
}

static int ends_with_part(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return m > 0 && m <= n && strcmp(s + n - m, suffix) == 0 && (m == n || s[n - m - 1] == '.');
}

/* Whether `seed` is a whole underscore-separated part of `name` other
 * than all of it ("_print_Product" has "Product"; "DotProduct" does not):
 * the naming conventions of dispatch tables, visitors and hooks. */
static int has_part(const char *name, const char *seed)
{
    size_t m = strlen(seed);
    if (m < 4) return 0;
    for (const char *p = strstr(name, seed); p != NULL; p = strstr(p + 1, seed))
        if ((p == name || p[-1] == '_') && (p[m] == '\0' || p[m] == '_') && !(p == name && p[m] == '\0')) return 1;
    return 0;
}

/* The bonus of one node for the question's seeds (the best match). */
static int seed_bonus(cn_pl_node *n, const cn_strv *seeds)
{
    char *full;
    double best = 0;
    const char *best_seed = NULL;
    if (strchr(n->name, ':') == NULL) return 0;   /* a file node: the path bonus covers it */
    if ((full = node_dotted(n)) == NULL) return CN_ENOMEM;
    for (size_t i = 0; seeds && i < seeds->len; i++) {
        char *d = seed_dotted(seeds->items[i]);
        double b = 0;
        if (d == NULL) continue;
        if (strchr(d, '.') != NULL) {
            b = ends_with_part(full, d) ? BONUS_DOTTED : 0;
        } else {
            const char *last = strrchr(full, '.');
            b = last != NULL && strcmp(last + 1, d) == 0 ? BONUS_SHORT
                : last != NULL && has_part(last + 1, d) ? BONUS_PART : 0;
        }
        if (b > best) best = b, best_seed = seeds->items[i];
        free(d);
    }
    free(full);
    if (best_seed == NULL) return 0;
    n->bonus += best;
    return cn_pl_why(n, "name matches `%s`", best_seed);
}

int cn_pl_path_mentioned(const char *path, const cn_strv *paths)
{
    size_t n = strlen(path);
    for (size_t i = 0; paths && i < paths->len; i++) {
        const char *q = paths->items[i];
        size_t m = strlen(q);
        if (m == 0 || m > n) continue;
        if (strcmp(path + n - m, q) == 0 && (m == n || path[n - m - 1] == '/')) return 1;
    }
    return 0;
}

int cn_pl_score(cn_pl_pool *p, const cn_strv *seeds, const cn_strv *paths)
{
    for (size_t i = 0; i < p->len; i++) {
        cn_pl_node *n = &p->items[i];
        n->bonus = 0;   /* scoring runs again after graph expansion */
        if (seed_bonus(n, seeds) < 0) return CN_ENOMEM;
        if (cn_pl_path_mentioned(n->path, paths)) {
            n->bonus += BONUS_PATH_NODE;
            if (cn_pl_why(n, "file named in the question") < 0) return CN_ENOMEM;
        }
        n->score = n->fused + n->expand + n->bonus;
    }
    return 0;
}

/* ---- ordering ----------------------------------------------------------- */

static int cmp_nodes(const void *a, const void *b)
{
    const cn_pl_node *x = *(const cn_pl_node *const *)a, *y = *(const cn_pl_node *const *)b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return strcmp(x->name, y->name);
}

size_t *cn_pl_order(const cn_pl_pool *p)
{
    size_t *order = malloc((p->len ? p->len : 1) * sizeof *order);
    const cn_pl_node **ptrs = malloc((p->len ? p->len : 1) * sizeof *ptrs);
    if (order == NULL || ptrs == NULL) {
        free(order);
        free(ptrs);
        return NULL;
    }
    for (size_t i = 0; i < p->len; i++) ptrs[i] = &p->items[i];
    qsort(ptrs, p->len, sizeof *ptrs, cmp_nodes);
    for (size_t i = 0; i < p->len; i++) order[i] = (size_t)(ptrs[i] - p->items);
    free(ptrs);
    return order;
}

int cn_pl_is_symbol_type(const char *type)
{
    static const char *const kinds[] = {"function", "method", "class", "struct", "union", "enum"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(type, kinds[i]) == 0) return 1;
    return 0;
}

/* ---- files -------------------------------------------------------------- */

typedef struct file_acc {
    const char *path;
    double s[3];         /* the three best node scores, best first */
    const cn_pl_node *best;
    size_t n_nodes;
} file_acc;

static int cmp_files(const void *a, const void *b)
{
    const file_acc *x = a, *y = b;
    double sx = x->s[0], sy = y->s[0];
    if (sx != sy) return sx > sy ? -1 : 1;
    return strcmp(x->path, y->path);
}

static file_acc *find_file(file_acc *f, size_t n, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(f[i].path, path) == 0) return &f[i];
    return NULL;
}

static json_object *file_json(const file_acc *f, double score, int mentioned, int aside)
{
    json_object *o = json_object_new_object(), *why = json_object_new_array();
    char buf[512];
    const char *colon = strchr(f->best->name, ':');
    json_object_object_add(o, "path", json_object_new_string(f->path));
    json_object_object_add(o, "score", json_object_new_double(score));
    snprintf(buf, sizeof buf, "best node %s (%.3f)", colon ? colon + 1 : f->best->name, f->best->score);
    json_object_array_add(why, json_object_new_string(buf));
    if (f->n_nodes > 1) {
        snprintf(buf, sizeof buf, "%zu candidate nodes", f->n_nodes);
        json_object_array_add(why, json_object_new_string(buf));
    }
    if (mentioned) json_object_array_add(why, json_object_new_string("file named in the question"));
    else if (aside) json_object_array_add(why, json_object_new_string("under documentation, examples or benchmarks"));
    json_object_object_add(o, "why", why);
    return o;
}

/* Whether a path lies in a tree of documentation, examples, benchmarks or
 * maintainer scripts (at any depth): code that shows, measures or tends
 * the project, seldom the place a change to it belongs. */
int cn_pl_path_is_aside(const char *path)
{
    static const char *const dirs[] = {"doc", "docs", "example", "examples", "benchmarks", "asv_bench", "bench", "scripts"};
    for (const char *p = path; p != NULL && *p; p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL) {
        size_t n = strcspn(p, "/");
        if (p[n] != '/') break;   /* the file name itself */
        for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
            if (strlen(dirs[i]) == n && strncmp(p, dirs[i], n) == 0) return 1;
    }
    return 0;
}

json_object *cn_pl_rank_files(const cn_pl_pool *p, const size_t *order, const cn_strv *paths, int demote_aside)
{
    file_acc *f = calloc(p->len ? p->len : 1, sizeof *f);
    size_t nf = 0;
    json_object *out = json_object_new_array();

    if (f == NULL || out == NULL) {
        free(f);
        json_object_put(out);
        return NULL;
    }
    /* nodes come best first, so each file's first node is its best */
    for (size_t k = 0; k < p->len; k++) {
        const cn_pl_node *n = &p->items[order[k]];
        file_acc *a = find_file(f, nf, n->path);
        if (a == NULL) {
            a = &f[nf++];
            a->path = n->path;
            a->best = n;
        }
        if (a->n_nodes < 3) a->s[a->n_nodes] = n->score;
        a->n_nodes++;
    }
    for (size_t i = 0; i < nf; i++) {
        int mentioned = cn_pl_path_mentioned(f[i].path, paths);
        f[i].s[0] += FILE_SHARE_2 * f[i].s[1] + FILE_SHARE_3 * f[i].s[2];
        if (!mentioned && demote_aside && cn_pl_path_is_aside(f[i].path)) f[i].s[0] *= FILE_ASIDE;
        if (mentioned) f[i].s[0] += BONUS_PATH_FILE;
    }
    qsort(f, nf, sizeof *f, cmp_files);
    for (size_t i = 0; i < nf; i++)
        json_object_array_add(out, file_json(&f[i], f[i].s[0], cn_pl_path_mentioned(f[i].path, paths),
                                             demote_aside && cn_pl_path_is_aside(f[i].path)));
    free(f);
    return out;
}

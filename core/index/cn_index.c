/* SPDX-License-Identifier: Apache-2.0 */
/* Opened indexes and the index services of the host table. */
#include "cn_index.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <codenib/lang.h>

#include "../plugin/cn_backends.h"
#include "../plugin/cn_host.h"
#include "cn_compile.h"
#include "cn_idxfile.h"

/* The manifest is sealed with a checksum of its own text (a JSON string
 * of 16 hex digits under "checksum", the last key; zeros while the sum is
 * taken): the index files carry theirs, and a flipped bit in the manifest
 * could otherwise make a part look absent or the selection another. */
#define SUM_KEY "\"checksum\":"
#define SUM_DIGITS 16

/* The sum's 16 digits in `text`, or NULL. */
static char *sum_field(char *text)
{
    char *p = NULL, *q;
    for (q = strstr(text, SUM_KEY); q != NULL; q = strstr(q + 1, SUM_KEY)) p = q;
    if (p == NULL) return NULL;
    p += strlen(SUM_KEY);
    while (*p == ' ') p++;
    if (*p != '"' || strspn(p + 1, "0123456789abcdef") != SUM_DIGITS || p[1 + SUM_DIGITS] != '"') return NULL;
    return p + 1;
}

static uint64_t sum_of(const char *text, size_t len, const char *field)
{
    cn_hash64_state h;
    cn_hash64_init(&h, 0x6d616e6966657374ull);
    cn_hash64_update(&h, text, (size_t)(field - text));
    cn_hash64_update(&h, "0000000000000000", SUM_DIGITS);
    cn_hash64_update(&h, field + SUM_DIGITS, len - (size_t)(field - text) - SUM_DIGITS);
    return cn_hash64_final(&h);
}

int cn_index_manifest_write(const char *dir, json_object *m)
{
    char *path = cn_path_join(dir, CN_MANIFEST_FILE), *text = NULL, *field, hex[SUM_DIGITS + 1];
    int rc;

    json_object_object_add(m, "checksum", json_object_new_string("0000000000000000"));
    if (path != NULL)
        text = cn_strprintf("%s\n", json_object_to_json_string_ext(m, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                           JSON_C_TO_STRING_NOSLASHESCAPE));
    if (path == NULL || text == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
    } else if ((field = sum_field(text)) == NULL) {
        rc = cn_error_set(CN_EINVAL, "%s: the checksum field is not where it is written (a codenib bug)", path);
    } else {
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)sum_of(text, strlen(text), field));
        memcpy(field, hex, SUM_DIGITS);
        json_object_object_add(m, "checksum", json_object_new_string(hex));
        rc = cn_file_write_atomic(path, text, strlen(text));
    }
    free(text);
    free(path);
    return rc;
}

int cn_index_manifest_read(const char *dir, json_object **out)
{
    char *path = cn_path_join(dir, CN_MANIFEST_FILE);
    struct stat st;
    cn_buf b = CN_BUF_INIT;
    char *field, hex[SUM_DIGITS + 1];
    int fd, rc = 0;

    *out = NULL;
    if (path == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    /* written by codenib in its cache: not a link, not a FIFO to hang on */
    fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (16 << 20)) {
        rc = cn_error_set(CN_ECORRUPT, "%s: %s: the index is damaged; recompile with `codenib compile --rebuild`", path,
                          fd < 0 ? strerror(errno) : "not a regular file of at most 16 MiB");
    } else {
        char chunk[65536];
        ssize_t k;
        while ((k = read(fd, chunk, sizeof chunk)) > 0) cn_buf_append(&b, chunk, (size_t)k);
        if (k < 0) rc = cn_error_set(CN_EIO, "%s: read failed: %s", path, strerror(errno));
        else if (b.oom) rc = cn_error_set(CN_ENOMEM, "out of memory");
        else if ((field = b.data ? sum_field(b.data) : NULL) == NULL || strlen(b.data) != b.len)
            rc = cn_error_set(CN_ECORRUPT, "%s: no checksum codenib wrote: the index is damaged (or was built by "
                                           "another codenib); recompile with `codenib compile --rebuild`", path);
        else if (snprintf(hex, sizeof hex, "%016llx", (unsigned long long)sum_of(b.data, b.len, field)) != SUM_DIGITS ||
                 memcmp(hex, field, SUM_DIGITS) != 0)
            rc = cn_error_set(CN_ECORRUPT, "%s: checksum mismatch: the index is damaged; recompile with "
                                           "`codenib compile --rebuild`", path);
        else if (cn_json_parse(b.data ? b.data : "", path, out) < 0 || !json_object_is_type(*out, json_type_object)) {
            char why[sizeof cn_error_last()->message];
            snprintf(why, sizeof why, "%s", *out == NULL ? cn_error_last()->message : "not a JSON object");
            rc = cn_error_set(CN_ECORRUPT, "%s: not a manifest codenib wrote (%s): the index is damaged; recompile "
                                           "with `codenib compile --rebuild`", path, why);
        }
    }
    if (fd >= 0) close(fd);
    if (rc < 0) {
        json_object_put(*out);
        *out = NULL;
    }
    cn_buf_free(&b);
    free(path);
    return rc;
}

/* Whether the manifest lists index `name` as built. */
static bool listed(json_object *manifest, const char *name)
{
    json_object *idx = NULL;
    return json_object_object_get_ex(manifest, "indexes", &idx) && json_object_object_get_ex(idx, name, NULL);
}

/* Opens part `file` of the index in `dir` with `open_fn`: one the manifest
 * lists must be there (missing, the index is damaged, not built without
 * it); one it does not list must not be. */
static int open_part(const char *dir, json_object *manifest, const char *name, const char *file,
                     int (*open_fn)(const char *, void *), void *out)
{
    char *p = cn_path_join(dir, file);
    struct stat st;
    int rc;
    if (p == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    if (!listed(manifest, name)) {
        /* compiled without it, the file is not there: a manifest that does
         * not list a part beside it lost it (a damaged manifest) */
        rc = lstat(p, &st) == 0 ? cn_error_set(CN_ECORRUPT, "%s/%s does not list the %s index %s holds: the index is "
                                                            "damaged; recompile with `codenib compile --rebuild`",
                                                dir, CN_MANIFEST_FILE, name, p)
                                : 0;
        free(p);
        return rc;
    }
    rc = open_fn(p, out);
    if (rc == CN_ENOTFOUND)
        rc = cn_error_set(CN_ECORRUPT, "%s: missing, though the index's manifest lists it: the index is damaged; "
                                       "recompile with `codenib compile --rebuild`", p);
    free(p);
    return rc;
}

static int open_nodes(const char *p, void *out) { return cn_nodes_open(p, out); }
static int open_bm25(const char *p, void *out) { return cn_bm25_open(p, out); }
static int open_graph(const char *p, void *out) { return cn_graph_open(p, out); }

int cn_index_open(const char *dir, const char *repo_root, struct cn_index **out)
{
    struct cn_index *x = calloc(1, sizeof *x);
    json_object *m = NULL;
    int rc;

    *out = NULL;
    if (x == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    pthread_mutex_init(&x->lsp_lock, NULL);
    x->dir = cn_strdup(dir);
    x->repo_root = cn_strdup(repo_root);
    if (x->dir == NULL || x->repo_root == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto fail;
    }
    /* The manifest says which parts were built: a part it lists that is
     * gone makes the index damaged, never one answering without it. */
    if ((rc = cn_index_manifest_read(dir, &m)) < 0) goto fail;
    if (!listed(m, "nodes")) {
        rc = cn_error_set(CN_ECORRUPT, "%s/%s lists no nodes index: the index is damaged; recompile with "
                                       "`codenib compile --rebuild`", dir, CN_MANIFEST_FILE);
        goto fail;
    }
    if ((rc = open_part(dir, m, "nodes", CN_NODES_FILE, open_nodes, &x->nodes)) < 0) goto fail;
    if ((rc = open_part(dir, m, "bm25", CN_BM25_INDEX_FILE, open_bm25, &x->bm25)) < 0) goto fail;
    if (x->bm25 != NULL && cn_bm25_doc_count(x->bm25) != cn_nodes_count(x->nodes)) {
        rc = cn_error_set(CN_ECORRUPT, "%s: the BM25 index has %u documents for %u nodes; "
                                       "recompile with `codenib compile --rebuild`",
                          dir, cn_bm25_doc_count(x->bm25), cn_nodes_count(x->nodes));
        goto fail;
    }
    if ((rc = open_part(dir, m, "graph", CN_GRAPH_FILE, open_graph, &x->graph)) < 0) goto fail;
    if (x->graph != NULL && cn_graph_node_count(x->graph) != cn_nodes_count(x->nodes)) {
        rc = cn_error_set(CN_ECORRUPT, "%s: the graph has %u nodes for %u in the nodes index; "
                                       "recompile with `codenib compile --rebuild`",
                          dir, cn_graph_node_count(x->graph), cn_nodes_count(x->nodes));
        goto fail;
    }
    json_object_put(m);
    *out = x;
    return 0;
fail:
    json_object_put(m);
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

/* SPDX-License-Identifier: Apache-2.0 */
/* Opening and searching the vector part of a compiled index, and the
 * cn_host.vectors service (see cn_vectors.h).
 *
 * vectors.json is read when the index is opened; the embedder (with its
 * saved state) and the store are created on first use under `lock`, so a
 * process that only runs other skills never pays for them.  Queries are
 * embedded under the same lock -- an embedder is not promised to be
 * reentrant -- while the store is searched outside it: stores are
 * read-only once opened. */
#include "cn_vectors.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <codenib/embed.h>
#include <codenib/lang.h>

#include "../plugin/cn_backends.h"
#include "../plugin/cn_host.h"
#include "cn_idxfile.h"
#include "cn_index.h"

struct cn_vector_index {
    const struct cn_index *idx;
    char *dir;                     /* <generation>/vectors */
    json_object *meta;             /* vectors.json; NULL when unreadable */
    const char *embedder_id;       /* borrowed from meta */
    const char *store_id;
    const char *model_id;
    size_t dim;
    uint32_t count;

    pthread_mutex_t lock;
    int state;                     /* 0: not loaded, 1: usable, < 0: the error code */
    char *error;                   /* why it is unusable */
    cn_backends backends;
    cn_backend_instance *emb_inst, *store_inst;
    cn_embedder *emb;
    cn_vector_store *store;
};

/* Records why the index cannot be used (the message of the last error,
 * with what to do appended). */
static int fail(struct cn_vector_index *vi, int code)
{
    cn_buf m = CN_BUF_INIT;
    const char *repo = vi->idx && vi->idx->repo_root ? vi->idx->repo_root : "REPO";
    cn_buf_printf(&m, "the vector index in %s cannot be used: %s; rebuild it with `codenib compile %s "
                      "--index bm25,graph,vector --rebuild`",
                  vi->dir, cn_error_last()->message, repo);
    free(vi->error);
    vi->error = cn_buf_steal(&m);
    vi->state = code < 0 ? code : CN_ERR;
    return cn_error_set(vi->state, "%s", vi->error ? vi->error : "the vector index cannot be used");
}

static const char *meta_str(json_object *m, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(m, key, &v) || !json_object_is_type(v, json_type_string)) return NULL;
    return json_object_get_string(v);
}

static int meta_int(json_object *m, const char *key, int64_t *out)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(m, key, &v) || !json_object_is_type(v, json_type_int)) return -1;
    *out = json_object_get_int64(v);
    return 0;
}

static int load_json(const char *path, json_object **out)
{
    char *text = NULL;
    size_t len = 0;
    int rc = cn_file_read(path, 0, &text, &len);
    *out = NULL;
    if (rc == 0) rc = cn_json_parse(text, path, out);
    free(text);
    return rc;
}

static int read_meta(struct cn_vector_index *vi)
{
    char *path = cn_path_join(vi->dir, CN_VECTORS_META);
    int64_t format = 0, dim = 0, count = 0;
    int rc = 0;

    if (path == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    if (load_json(path, &vi->meta) < 0) {
        rc = cn_error_last()->code;
    } else if (!json_object_is_type(vi->meta, json_type_object) || meta_int(vi->meta, "format", &format) < 0 ||
               meta_int(vi->meta, "dim", &dim) < 0 || meta_int(vi->meta, "count", &count) < 0 ||
               (vi->embedder_id = meta_str(vi->meta, "embedder")) == NULL ||
               (vi->store_id = meta_str(vi->meta, "store")) == NULL ||
               (vi->model_id = meta_str(vi->meta, "model_id")) == NULL) {
        rc = cn_error_set(CN_ECORRUPT, "%s lacks format, embedder, model_id, dim, store or count", path);
    } else if (format != CN_VECTORS_FORMAT) {
        rc = cn_error_set(CN_EUNSUPPORTED, "%s is format %lld; this codenib reads format %d", path,
                          (long long)format, CN_VECTORS_FORMAT);
    } else if (dim < 0 || dim > CN_VECTORS_MAX_DIM || count < 0 || count > UINT32_MAX) {
        rc = cn_error_set(CN_ECORRUPT, "%s: dim %lld or count %lld out of range", path, (long long)dim,
                          (long long)count);
    } else if ((uint32_t)count != cn_nodes_count(vi->idx->nodes)) {
        rc = cn_error_set(CN_ECORRUPT, "%s holds %lld vectors for the %u nodes of the index", path,
                          (long long)count, cn_nodes_count(vi->idx->nodes));
    }
    if (rc == 0) {
        vi->dim = (size_t)dim;
        vi->count = (uint32_t)count;
    } else {
        vi->embedder_id = vi->store_id = vi->model_id = NULL;
        json_object_put(vi->meta);
        vi->meta = NULL;
    }
    free(path);
    return rc;
}

int cn_vector_index_open(const struct cn_index *idx, struct cn_vector_index **out)
{
    struct cn_vector_index *vi;
    struct stat st;
    char *dir;

    *out = NULL;
    if (idx == NULL || idx->dir == NULL) return 0;
    dir = cn_path_join(idx->dir, CN_VECTORS_DIR);
    if (dir == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    if (stat(dir, &st) != 0 && errno == ENOENT) {
        free(dir);
        return 0;   /* compiled without --index vector */
    }
    vi = calloc(1, sizeof *vi);
    if (vi == NULL) {
        free(dir);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    vi->idx = idx;
    vi->dir = dir;
    pthread_mutex_init(&vi->lock, NULL);
    if (read_meta(vi) < 0) {
        if (cn_error_last()->code == CN_ENOMEM) {
            int rc = cn_error_last()->code;
            cn_vector_index_close(vi);
            return rc;
        }
        fail(vi, cn_error_last()->code);
        cn_error_clear();
    }
    *out = vi;
    return 0;
}

void cn_vector_index_close(struct cn_vector_index *vi)
{
    if (vi == NULL) return;
    cn_backend_instance_free(vi->emb_inst);
    cn_backend_instance_free(vi->store_inst);
    cn_backends_free(&vi->backends);
    json_object_put(vi->meta);
    pthread_mutex_destroy(&vi->lock);
    free(vi->error);
    free(vi->dir);
    free(vi);
}

json_object *cn_vector_index_meta(const struct cn_vector_index *vi)
{
    return vi ? vi->meta : NULL;
}

/* ---- loading the backends ----------------------------------------------- */

static char *config_text(json_object *meta, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(meta, key, &v) || !json_object_is_type(v, json_type_object))
        return cn_strdup("{}");
    return cn_strdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

static int load_state(struct cn_vector_index *vi)
{
    const char *file = meta_str(vi->meta, "state_file"), *blob = NULL;
    cn_idx_file *f = NULL;
    char *path;
    size_t len = 0;
    cn_error err;
    int rc;

    if (file == NULL) {
        if (vi->emb->load != NULL)
            return cn_error_set(CN_ECORRUPT, "embedder '%s' needs its learned state, and the build saved none",
                                vi->embedder_id);
        return 0;
    }
    if (vi->emb->load == NULL)
        return cn_error_set(CN_EUNSUPPORTED, "embedder '%s' cannot load the state saved in %s", vi->embedder_id,
                            file);
    if (strchr(file, '/') != NULL) return cn_error_set(CN_ECORRUPT, "state_file '%s' is not a file name", file);
    if ((path = cn_path_join(vi->dir, file)) == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    rc = cn_vectors_state_open(path, &f, &blob, &len);
    free(path);
    if (rc < 0) return rc;
    memset(&err, 0, sizeof err);
    rc = vi->emb->load(vi->emb, blob, len, &err);
    cn_idx_close(f);
    if (rc < 0)
        return cn_error_set(rc, "embedder '%s' could not load %s/%s: %s", vi->embedder_id, vi->dir, file,
                            err.message[0] ? err.message : "load() failed without a message");
    return 0;
}

static int open_store(struct cn_vector_index *vi)
{
    char *sdir = cn_path_join(vi->dir, CN_VECTORS_STORE_DIR);
    cn_error err;
    int rc;

    if (sdir == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    if (vi->store->open == NULL || vi->store->search == NULL) {
        free(sdir);
        return cn_error_set(CN_EABI, "vector-store backend '%s' lacks open or search", vi->store_id);
    }
    memset(&err, 0, sizeof err);
    rc = vi->store->open(vi->store, sdir, &err);
    if (rc < 0) {
        rc = cn_error_set(rc, "vector-store backend '%s': %s", vi->store_id,
                          err.message[0] ? err.message : "open() failed without a message");
    } else if (vi->store->count && vi->store->count(vi->store) != vi->count) {
        rc = cn_error_set(CN_ECORRUPT, "%s holds %zu vectors, vectors.json says %u", sdir,
                          vi->store->count(vi->store), vi->count);
    } else if (vi->store->dim && vi->store->dim(vi->store) != vi->dim) {
        rc = cn_error_set(CN_ECORRUPT, "%s holds vectors of %zu dimensions, vectors.json says %zu", sdir,
                          vi->store->dim(vi->store), vi->dim);
    }
    free(sdir);
    return rc;
}

static int check_embedder(struct cn_vector_index *vi)
{
    const char *mid = vi->emb->model_id ? vi->emb->model_id(vi->emb) : NULL;
    size_t d = vi->emb->dim ? vi->emb->dim(vi->emb) : 0;
    if (vi->emb->embed == NULL || vi->emb->dim == NULL)
        return cn_error_set(CN_EABI, "embedder backend '%s' lacks embed or dim", vi->embedder_id);
    /* the same text must map to the same space the nodes were embedded in */
    if (mid != NULL && strcmp(mid, vi->model_id) != 0)
        return cn_error_set(CN_ECONFLICT, "the vectors were made by model '%s' but embedder '%s' now is '%s'",
                            vi->model_id, vi->embedder_id, mid);
    if (d != 0 && d != vi->dim)
        return cn_error_set(CN_ECONFLICT, "the vectors have %zu dimensions but embedder '%s' makes %zu",
                            vi->dim, vi->embedder_id, d);
    return 0;
}

static int load(struct cn_vector_index *vi)
{
    char *ecfg = config_text(vi->meta, "embedder_config"), *scfg = config_text(vi->meta, "store_config");
    int rc = ecfg && scfg ? 0 : cn_error_set(CN_ENOMEM, "out of memory");

    if (vi->count == 0) {   /* an empty repository: searches find nothing */
        free(ecfg);
        free(scfg);
        return rc;
    }
    if (rc == 0) rc = cn_backends_discover(&vi->backends);
    if (rc == 0)
        rc = cn_backend_create(&vi->backends, vi->embedder_id, CN_BACKEND_EMBEDDER, NULL, ecfg, &vi->emb_inst);
    if (rc == 0) {
        vi->emb = vi->emb_inst->object;
        rc = load_state(vi);
    }
    if (rc == 0) rc = check_embedder(vi);
    if (rc == 0) {
        rc = cn_backend_create(&vi->backends, vi->store_id, CN_BACKEND_VECTOR_STORE, NULL, scfg, &vi->store_inst);
        if (rc == 0) {
            vi->store = vi->store_inst->object;
            rc = open_store(vi);
        }
    }
    free(ecfg);
    free(scfg);
    return rc;
}

/* 0 once the embedder and the store are ready; the recorded error else. */
static int ensure_loaded(struct cn_vector_index *vi)
{
    int rc;
    pthread_mutex_lock(&vi->lock);
    if (vi->state == 0) {
        if (load(vi) < 0) fail(vi, cn_error_last()->code);
        else vi->state = 1;
    }
    rc = vi->state;
    if (rc < 0) cn_error_set(rc, "%s", vi->error ? vi->error : "the vector index cannot be used");
    pthread_mutex_unlock(&vi->lock);
    return rc < 0 ? rc : 0;
}

/* ---- the service -------------------------------------------------------- */

typedef struct allow_ctx {
    const cn_nodes *nodes;
    const cn_search_filter *f;
    size_t prefix_len;
} allow_ctx;

/* The filter of cn_host.index->bm25_search, over the same node table. */
static int allow(uint32_t node, void *data)
{
    const allow_ctx *c = data;
    cn_node_view v;
    if (cn_nodes_get(c->nodes, node, &v) < 0) return 0;
    if (c->f->exclude_tests && (v.is_test || (v.flags & CN_NODE_F_TEST))) return 0;
    if (c->f->kinds && !(c->f->kinds & (1u << (v.kind & 31)))) return 0;
    if (c->f->path_prefix && strncmp(v.path, c->f->path_prefix, c->prefix_len) != 0) return 0;
    return 1;
}

static bool filter_is_empty(const cn_search_filter *f)
{
    return f == NULL || (!f->exclude_tests && f->path_prefix == NULL && f->kinds == 0);
}

/* The query's vector (vi->dim floats, malloc'd). */
static int embed_query(struct cn_vector_index *vi, const char *query, float **out, cn_error *err)
{
    size_t before, cap;
    float *v;
    cn_error e;
    int rc;

    *out = NULL;
    pthread_mutex_lock(&vi->lock);
    before = vi->emb->dim(vi->emb);
    /* an embedder that learns its dimension from its first answer gets
     * room for the largest one (cn_vectors.h) */
    cap = before ? before : CN_VECTORS_MAX_DIM;
    v = malloc((cap > vi->dim ? cap : vi->dim) * sizeof *v);
    if (v == NULL) {
        pthread_mutex_unlock(&vi->lock);
        return cn_error_fill(err, CN_ENOMEM, "out of memory");
    }
    memset(&e, 0, sizeof e);
    rc = vi->emb->embed(vi->emb, CN_EMBED_QUERY, &query, 1, v, &e);
    if (rc >= 0 && vi->emb->dim(vi->emb) != vi->dim)
        rc = cn_error_fill(&e, CN_ECONFLICT, "it returned %zu dimensions; the index has %zu", vi->emb->dim(vi->emb),
                           vi->dim);
    pthread_mutex_unlock(&vi->lock);
    if (rc < 0) {
        free(v);
        return cn_error_fill(err, rc, "embedding the query with embedder '%s': %s", vi->embedder_id,
                             e.message[0] ? e.message : "embed() failed without a message");
    }
    *out = v;
    return 0;
}

static bool is_zero(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] != 0.0f) return false;
    return true;
}

static int svc_search(const cn_host *host, const struct cn_vector_index *cvi, const char *query, size_t k,
                      const cn_search_filter *filter, cn_search_hit *hits, size_t *n_hits, cn_error *err)
{
    struct cn_vector_index *vi = (struct cn_vector_index *)cvi;   /* loads lazily, under its lock */
    allow_ctx ac;
    float *qv = NULL;
    cn_error e;
    int rc;

    (void)host;
    *n_hits = 0;
    if (vi == NULL)
        return cn_error_fill(err, CN_ENOCONTEXT, "no vector index: compile with `codenib compile REPO --index "
                                                 "bm25,graph,vector`");
    if (query == NULL || query[strspn(query, " \t\r\n")] == '\0')
        return cn_error_fill(err, CN_EINVAL, "the query is empty: give words describing the code to find");
    if (ensure_loaded(vi) < 0) return cn_error_export(err);
    if (k == 0 || vi->count == 0) return 0;
    if ((rc = embed_query(vi, query, &qv, err)) < 0) return rc;
    if (is_zero(qv, vi->dim)) {
        /* none of the query's words is known to the embedder: every node
         * would score 0, and an arbitrary order is not an answer */
        free(qv);
        return 0;
    }
    ac.nodes = vi->idx->nodes;
    ac.f = filter;
    ac.prefix_len = filter && filter->path_prefix ? strlen(filter->path_prefix) : 0;
    memset(&e, 0, sizeof e);
    rc = vi->store->search(vi->store, qv, k, filter_is_empty(filter) ? NULL : allow, &ac, hits, n_hits, &e);
    free(qv);
    if (rc < 0) {
        *n_hits = 0;
        return cn_error_fill(err, rc, "vector-store '%s': %s", vi->store_id,
                             e.message[0] ? e.message : "search() failed without a message");
    }
    if (*n_hits > k) *n_hits = k;
    for (size_t i = 0; i < *n_hits; i++)
        if (hits[i].node >= vi->count) {
            size_t bad = hits[i].node;
            *n_hits = 0;
            return cn_error_fill(err, CN_ECORRUPT, "vector-store '%s' returned node %zu, but the index has %u "
                                                   "nodes: its files in %s/%s are damaged; rebuild with "
                                                   "`codenib compile %s --index bm25,graph,vector --rebuild`",
                                 vi->store_id, bad, vi->count, vi->dir, CN_VECTORS_STORE_DIR,
                                 vi->idx->repo_root);
        }
    return 0;
}

static int svc_info(const cn_host *host, const struct cn_vector_index *vi, char **info_json, cn_error *err)
{
    json_object *o;
    int rc = 0;

    *info_json = NULL;
    if (vi == NULL)
        return cn_error_fill(err, CN_ENOCONTEXT, "no vector index: compile with `codenib compile REPO --index "
                                                 "bm25,graph,vector`");
    if (vi->meta == NULL) return cn_error_fill(err, vi->state, "%s", vi->error ? vi->error : "unusable");
    o = json_object_new_object();
    json_object_object_add(o, "embedder", json_object_new_string(vi->embedder_id));
    json_object_object_add(o, "model", json_object_new_string(vi->model_id));
    json_object_object_add(o, "dim", json_object_new_int64((int64_t)vi->dim));
    json_object_object_add(o, "count", json_object_new_int64(vi->count));
    json_object_object_add(o, "store", json_object_new_string(vi->store_id));
    *info_json = host->strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    if (*info_json == NULL) rc = cn_error_fill(err, CN_ENOMEM, "out of memory");
    json_object_put(o);
    return rc;
}

static const cn_vector_services vector_services = {
    (uint32_t)sizeof(cn_vector_services),
    svc_search,
    svc_info,
};

const cn_vector_services *cn_host_vector_services(void)
{
    return &vector_services;
}

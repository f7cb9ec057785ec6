/* SPDX-License-Identifier: Apache-2.0 */
/* Building the vector part of a generation (see cn_vectors.h).
 *
 * Every node's source text (its lines; a file node's is the whole file)
 * cut to max_chars characters is embedded by the embedder backend and the
 * vectors, in node id order, are handed to the vector-store backend.
 *
 * Reuse across builds: an embedder without learned state (a remote model)
 * maps a text to the same vector whatever else the repository holds, so a
 * vector is taken from the previous generation when the text it was made
 * from has the same hash and the embedder, its model and its configuration
 * are the same -- a paid endpoint never embeds the same text twice.  An
 * embedder with learned state (embed-local's LSA basis, vocabulary and
 * weights) is refitted on every build instead: its basis depends on every
 * document, so after any edit old and new vectors would live in different
 * spaces and could not be compared; refitting also keeps an incremental
 * build byte-identical to a full one. */
#include "cn_vectors.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <codenib/embed.h>

#include "../plugin/cn_backends.h"
#include "../plugin/cn_host.h"
#include "cn_compile.h"
#include "cn_idxfile.h"
#include "cn_nodes.h"

/* Texts per embed() call: the progress step.  Embedders batch further on
 * their own (embed-openai's batch_size). */
#define EMBED_CHUNK 256

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- options ------------------------------------------------------------ */

static const char *embedder_id(const cn_vectors_opts *o)
{
    return o->embedder && *o->embedder ? o->embedder : CN_VECTORS_DEFAULT_EMBEDDER;
}

static const char *store_id(const cn_vectors_opts *o)
{
    return o->store && *o->store ? o->store : CN_VECTORS_DEFAULT_STORE;
}

static int parse_config(const cn_vectors_opts *o, json_object **out)
{
    int rc;
    *out = NULL;
    if (o->embedder_config == NULL || *o->embedder_config == '\0') {
        *out = json_object_new_object();
        return *out ? 0 : cn_error_set(CN_ENOMEM, "out of memory");
    }
    if ((rc = cn_json_parse(o->embedder_config, "--embedder-config", out)) < 0) return rc;
    if (!json_object_is_type(*out, json_type_object)) {
        json_object_put(*out);
        *out = NULL;
        return cn_error_set(CN_EINVAL, "--embedder-config must be a JSON object such as "
                                       "'{\"dim\": 128}', not '%s'", o->embedder_config);
    }
    return 0;
}

static json_object *store_config(const cn_vectors_opts *o)
{
    json_object *c = json_object_new_object();
    if (c && o->precision) json_object_object_add(c, "precision", json_object_new_string(o->precision));
    return c;
}

static int check_backend(cn_backends *b, const char *id, int kind, const char *option)
{
    cn_backend_entry *e = cn_backends_find(b, id);
    const cn_backend_descriptor *d;
    if (e == NULL || e->kind != kind) {
        cn_buf known = CN_BUF_INIT;
        int n = 0, rc;
        for (size_t i = 0; i < b->len; i++)
            if (b->items[i].kind == kind) cn_buf_printf(&known, "%s%s", n++ ? ", " : "", b->items[i].id);
        rc = cn_error_set(CN_ENOTFOUND, "%s %s: no %s backend of that name is installed (known: %s; see "
                                        "`codenib plugins list`)",
                          option, id, cn_backend_kind_name(kind), n ? known.data : "none");
        cn_buf_free(&known);
        return rc;
    }
    if (cn_backends_open(e, &d) < 0) return cn_error_prefix("%s %s", option, id);
    return 0;
}

int cn_vectors_check_opts(const cn_vectors_opts *o)
{
    cn_backends b;
    json_object *cfg = NULL;
    int rc;

    if (o->precision && strcmp(o->precision, "f32") != 0 && strcmp(o->precision, "f16") != 0 &&
        strcmp(o->precision, "int8") != 0)
        return cn_error_set(CN_EINVAL, "--vector-precision %s: expected f32, f16 or int8", o->precision);
    if ((rc = parse_config(o, &cfg)) < 0) return rc;
    json_object_put(cfg);
    memset(&b, 0, sizeof b);
    rc = cn_backends_discover(&b);
    if (rc == 0) rc = check_backend(&b, embedder_id(o), CN_BACKEND_EMBEDDER, "--embedder");
    if (rc == 0) rc = check_backend(&b, store_id(o), CN_BACKEND_VECTOR_STORE, "--vector-store");
    cn_backends_free(&b);
    return rc;
}

static bool secret_key(const char *k)
{
    char low[64];
    size_t n = strlen(k);
    if (n >= sizeof low) return false;
    for (size_t i = 0; i <= n; i++) low[i] = (char)((k[i] >= 'A' && k[i] <= 'Z') ? k[i] + 32 : k[i]);
    if (n >= 4 && strcmp(low + n - 4, "_env") == 0) return false;  /* the name of a variable */
    return strcmp(low, "key") == 0 || (n > 4 && strcmp(low + n - 4, "_key") == 0) ||
           strstr(low, "token") != NULL || strstr(low, "secret") != NULL ||
           strstr(low, "password") != NULL || strstr(low, "authorization") != NULL;
}

json_object *cn_vectors_redact_config(json_object *config)
{
    json_object *out = json_object_new_object();
    if (out == NULL || !json_object_is_type(config, json_type_object)) return out;
    json_object_object_foreach(config, k, v) {
        if (!secret_key(k)) json_object_object_add(out, k, json_object_get(v));
    }
    return out;
}

/* ---- node texts --------------------------------------------------------- */

typedef struct node_texts {
    char **text;          /* per node, NUL-terminated */
    uint64_t *hash;       /* two words per node */
    uint32_t count;
} node_texts;

static void node_texts_free(node_texts *t)
{
    for (uint32_t i = 0; t->text && i < t->count; i++) free(t->text[i]);
    free(t->text);
    free(t->hash);
    memset(t, 0, sizeof *t);
}

/* Bytes of the first max_chars characters of s (never splitting a UTF-8
 * sequence). */
static size_t cap_chars(const char *s, size_t len, size_t max_chars)
{
    size_t chars = 0;
    for (size_t i = 0; i < len; i++) {
        if (((unsigned char)s[i] & 0xC0) == 0x80) continue;
        if (chars++ == max_chars) return i;
    }
    return len;
}

static void text_hash(const char *s, size_t len, uint64_t out[2])
{
    out[0] = cn_hash64(s, len, 0x636e766563743031ull);
    out[1] = cn_hash64(s, len, 0x636e766563743032ull);
}

/* The texts of one file's nodes: the same lines cn_host.index->node_text
 * returns. */
static int file_texts(const char *root, const cn_nodes *nodes, const cn_file_view *fv, size_t max_chars,
                      node_texts *t)
{
    char *abs = cn_path_join(root, fv->path), *src = NULL;
    size_t len = 0, nnl = 0, *starts = NULL;
    int rc;

    if (abs == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    rc = cn_file_read(abs, 0, &src, &len);
    free(abs);
    if (rc < 0) return cn_error_prefix("reading the text of %s to embed it", fv->path);
    if (cn_hash64(src, len, 0) != fv->hash) {
        free(src);
        return cn_error_set(CN_ECONFLICT, "%s changed while the repository was being compiled; compile again",
                            fv->path);
    }
    for (size_t i = 0; i < len; i++) nnl += src[i] == '\n';
    starts = malloc((nnl + 1) * sizeof *starts);
    if (starts == NULL) {
        free(src);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    starts[0] = 0;
    for (size_t i = 0, k = 1; i < len; i++)
        if (src[i] == '\n') starts[k++] = i + 1;
    for (uint32_t id = fv->node; id < fv->node + fv->n_nodes && rc == 0; id++) {
        cn_node_view v;
        size_t a, b, n;
        if ((rc = cn_nodes_get(nodes, id, &v)) < 0) break;
        a = v.start_line >= 1 && v.start_line - 1 <= nnl ? starts[v.start_line - 1] : len;
        b = v.end_line <= nnl ? starts[v.end_line] : len;
        if (b < a) b = a;
        n = cap_chars(src + a, b - a, max_chars);
        t->text[id] = cn_strndup(src + a, n);
        if (t->text[id] == NULL) rc = cn_error_set(CN_ENOMEM, "out of memory");
        else text_hash(t->text[id], n, &t->hash[2 * (size_t)id]);
    }
    free(starts);
    free(src);
    return rc;
}

static int gather_texts(const char *root, const char *gen_dir, size_t max_chars, node_texts *t)
{
    char *p = cn_path_join(gen_dir, CN_NODES_FILE);
    cn_nodes *nodes = NULL;
    int rc;

    memset(t, 0, sizeof *t);
    if (p == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    rc = cn_nodes_open(p, &nodes);
    free(p);
    if (rc < 0) return rc;
    t->count = cn_nodes_count(nodes);
    t->text = calloc(t->count ? t->count : 1, sizeof *t->text);
    t->hash = calloc(t->count ? 2 * (size_t)t->count : 1, sizeof *t->hash);
    if (t->text == NULL || t->hash == NULL) rc = cn_error_set(CN_ENOMEM, "out of memory");
    for (uint32_t f = 0; rc == 0 && f < cn_nodes_file_count(nodes); f++) {
        cn_file_view fv;
        if ((rc = cn_nodes_file(nodes, f, &fv)) == 0) rc = file_texts(root, nodes, &fv, max_chars, t);
    }
    cn_nodes_close(nodes);
    if (rc < 0) node_texts_free(t);
    return rc;
}

/* ---- the build ---------------------------------------------------------- */

typedef struct build {
    const cn_vectors_opts *o;
    node_texts texts;
    json_object *config;          /* as given (may hold a key) */
    json_object *config_saved;    /* redacted */
    json_object *store_cfg;
    cn_backends backends;
    cn_backend_instance *emb_inst, *store_inst;
    cn_embedder *emb;
    cn_vector_store *store;
    char *model_id;
    bool has_state;
    size_t dim;
    float *vectors;               /* count x dim, once dim is known */
    unsigned char *have;          /* per node: its row is filled */
    size_t embedded, reused;
    cn_vectors_reuse prev;        /* the previous build's texts and vectors */
    void (*progress)(size_t, size_t, void *);
    void *progress_data;
    size_t done;
} build;

static void report(build *b)
{
    if (b->progress) b->progress(b->done, b->texts.count, b->progress_data);
}

static int plugin_error(const cn_error *err, int rc, const char *what, const char *id)
{
    return cn_error_set(rc < 0 ? rc : CN_ERR, "%s backend '%s': %s", what, id,
                        err->message[0] ? err->message : "failed without a message");
}

/* Whether the previous generation's vectors may stand for this build's. */
static bool str_is(json_object *meta, const char *key, const char *want)
{
    json_object *v = NULL;
    return json_object_object_get_ex(meta, key, &v) && json_object_is_type(v, json_type_string) &&
           strcmp(json_object_get_string(v), want) == 0;
}

static bool prev_compatible(build *b, json_object *meta)
{
    json_object *v;
    if (b->has_state || !json_object_is_type(meta, json_type_object)) return false;
    if (!json_object_object_get_ex(meta, "format", &v) || json_object_get_int(v) != CN_VECTORS_FORMAT)
        return false;
    if (!str_is(meta, "embedder", embedder_id(b->o)) || !str_is(meta, "model_id", b->model_id)) return false;
    if (!json_object_object_get_ex(meta, "embedder_config", &v) || !json_object_equal(v, b->config_saved))
        return false;
    return json_object_object_get_ex(meta, "reuse_file", &v) && json_object_is_type(v, json_type_string);
}

static void load_previous(build *b, const char *prev_dir)
{
    char *vdir = prev_dir ? cn_path_join(prev_dir, CN_VECTORS_DIR) : NULL;
    char *mpath = vdir ? cn_path_join(vdir, CN_VECTORS_META) : NULL;
    json_object *meta = mpath ? json_object_from_file(mpath) : NULL;

    if (prev_compatible(b, meta)) {
        char *rpath = cn_path_join(vdir, CN_VECTORS_REUSE);
        /* an unreadable previous build only costs re-embedding */
        if (rpath == NULL || cn_vectors_reuse_open(rpath, &b->prev) < 0) {
            cn_error_clear();
            cn_vectors_reuse_close(&b->prev);
        }
        free(rpath);
    }
    json_object_put(meta);
    free(mpath);
    free(vdir);
}

static int alloc_vectors(build *b)
{
    size_t n = b->texts.count ? b->texts.count : 1;
    if (b->dim == 0 || b->dim > CN_VECTORS_MAX_DIM)
        return cn_error_set(CN_EINVAL, "embedder '%s' reports %zu dimensions (expected 1 to %d)",
                            embedder_id(b->o), b->dim, CN_VECTORS_MAX_DIM);
    if (n > SIZE_MAX / sizeof(float) / b->dim) return cn_error_set(CN_ENOMEM, "too many vectors");
    b->vectors = calloc(n * b->dim, sizeof(float));
    return b->vectors ? 0 : cn_error_set(CN_ENOMEM, "out of memory for %zu vectors of %zu dimensions", n, b->dim);
}

/* Checks a row the embedder returned and normalises it when it is not
 * (the store ranks by dot product). */
static int check_row(build *b, float *row, uint32_t node)
{
    double s = 0;
    for (size_t j = 0; j < b->dim; j++) {
        if (!isfinite(row[j]))
            return cn_error_set(CN_EINVAL, "embedder '%s' returned a non-finite value for node %u",
                                embedder_id(b->o), node);
        s += (double)row[j] * row[j];
    }
    if (s > 0 && fabs(s - 1.0) > 1e-3) {
        double inv = 1.0 / sqrt(s);
        for (size_t j = 0; j < b->dim; j++) row[j] = (float)(row[j] * inv);
    }
    return 0;
}

static void take_previous(build *b)
{
    if (b->prev.count == 0 || b->prev.dim != b->dim) return;
    for (uint32_t i = 0; i < b->texts.count; i++) {
        const float *v;
        if (b->have[i]) continue;
        v = cn_vectors_reuse_find(&b->prev, &b->texts.hash[2 * (size_t)i]);
        if (v == NULL) continue;
        memcpy(b->vectors + (size_t)i * b->dim, v, b->dim * sizeof(float));
        b->have[i] = 1;
        b->reused++;
        b->done++;
    }
    report(b);
}

/* An embedder that does not know its dimension before its first answer
 * gets its first text alone, into a buffer of the largest allowed size. */
static int probe_dimension(build *b, uint32_t node)
{
    float *tmp = malloc((size_t)CN_VECTORS_MAX_DIM * sizeof *tmp);
    const char *text = b->texts.text[node];
    cn_error err;
    int rc;

    if (tmp == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    memset(&err, 0, sizeof err);
    rc = b->emb->embed(b->emb, CN_EMBED_DOCUMENT, &text, 1, tmp, &err);
    if (rc < 0) {
        free(tmp);
        return plugin_error(&err, rc, "embedder", embedder_id(b->o));
    }
    b->embedded++;
    b->dim = b->emb->dim(b->emb);
    if ((rc = alloc_vectors(b)) == 0) {
        memcpy(b->vectors + (size_t)node * b->dim, tmp, b->dim * sizeof(float));
        rc = check_row(b, b->vectors + (size_t)node * b->dim, node);
        b->have[node] = 1;
        b->done++;
    }
    free(tmp);
    return rc;
}

static int embed_chunk(build *b, const uint32_t *ids, size_t n, const char **texts, float *out)
{
    cn_error err;
    int rc;
    for (size_t i = 0; i < n; i++) texts[i] = b->texts.text[ids[i]];
    memset(&err, 0, sizeof err);
    rc = b->emb->embed(b->emb, CN_EMBED_DOCUMENT, texts, n, out, &err);
    if (rc < 0) return plugin_error(&err, rc, "embedder", embedder_id(b->o));
    if (b->emb->dim(b->emb) != b->dim)
        return cn_error_set(CN_EINVAL, "embedder '%s' changed its dimension from %zu to %zu during the build",
                            embedder_id(b->o), b->dim, b->emb->dim(b->emb));
    for (size_t i = 0; i < n; i++) {
        float *row = b->vectors + (size_t)ids[i] * b->dim;
        memcpy(row, out + i * b->dim, b->dim * sizeof(float));
        if ((rc = check_row(b, row, ids[i])) < 0) return rc;
        b->have[ids[i]] = 1;
    }
    b->embedded += n;
    b->done += n;
    report(b);
    return 0;
}

static int embed_missing(build *b)
{
    uint32_t ids[EMBED_CHUNK];
    const char *texts[EMBED_CHUNK];
    float *out = malloc((size_t)EMBED_CHUNK * b->dim * sizeof *out);
    size_t n = 0;
    int rc = 0;

    if (out == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < b->texts.count && rc == 0; i++) {
        if (b->have[i]) continue;
        ids[n++] = i;
        if (n == EMBED_CHUNK) {
            rc = embed_chunk(b, ids, n, texts, out);
            n = 0;
        }
    }
    if (rc == 0 && n) rc = embed_chunk(b, ids, n, texts, out);
    free(out);
    return rc;
}

static int make_backends(build *b)
{
    char *cfg = NULL, *scfg = NULL;
    int rc;

    if ((rc = cn_backends_discover(&b->backends)) < 0) return rc;
    cfg = cn_strdup(json_object_to_json_string_ext(b->config, JSON_C_TO_STRING_PLAIN));
    scfg = cn_strdup(json_object_to_json_string_ext(b->store_cfg, JSON_C_TO_STRING_PLAIN));
    if (cfg == NULL || scfg == NULL) rc = cn_error_set(CN_ENOMEM, "out of memory");
    if (rc == 0)
        rc = cn_backend_create(&b->backends, embedder_id(b->o), CN_BACKEND_EMBEDDER, NULL, cfg, &b->emb_inst);
    if (rc == 0)
        rc = cn_backend_create(&b->backends, store_id(b->o), CN_BACKEND_VECTOR_STORE, NULL, scfg, &b->store_inst);
    free(cfg);
    free(scfg);
    if (rc < 0) return rc;
    b->emb = b->emb_inst->object;
    b->store = b->store_inst->object;
    if (b->emb->embed == NULL || b->emb->model_id == NULL || b->emb->dim == NULL)
        return cn_error_set(CN_EABI, "embedder backend '%s' lacks embed, model_id or dim", embedder_id(b->o));
    if (b->store->build == NULL)
        return cn_error_set(CN_EABI, "vector-store backend '%s' lacks build", store_id(b->o));
    b->has_state = b->emb->fit != NULL || b->emb->save != NULL;
    return 0;
}

static int fit(build *b)
{
    cn_error err;
    int rc;
    if (b->emb->fit == NULL || b->texts.count == 0) return 0;
    memset(&err, 0, sizeof err);
    rc = b->emb->fit(b->emb, (const char *const *)b->texts.text, b->texts.count, &err);
    return rc < 0 ? plugin_error(&err, rc, "embedder", embedder_id(b->o)) : 0;
}

static bool blank(const char *t)
{
    return t[strspn(t, " \t\r\n\f\v")] == '\0';
}

/* The first text that must be embedded and has words in it (endpoints
 * refuse empty inputs), or UINT32_MAX. */
static uint32_t first_to_embed(const build *b)
{
    for (uint32_t i = 0; i < b->texts.count; i++)
        if (!blank(b->texts.text[i]) &&
            (b->prev.count == 0 || cn_vectors_reuse_find(&b->prev, &b->texts.hash[2 * (size_t)i]) == NULL))
            return i;
    return UINT32_MAX;
}

static int embed_all(build *b)
{
    int rc;
    b->have = calloc(b->texts.count ? b->texts.count : 1, 1);
    if (b->have == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    report(b);
    if (b->texts.count == 0) return 0;
    b->dim = b->emb->dim(b->emb);
    if (b->dim == 0) {
        /* the dimension comes with the first answer: ask about a text that
         * is not reused, so no text is paid for twice */
        uint32_t first = first_to_embed(b);
        if (first != UINT32_MAX) {
            if ((rc = probe_dimension(b, first)) < 0) return rc;
        } else if (b->prev.count == 0) {
            return cn_error_set(CN_EINVAL, "no node has any text to embed, and embedder '%s' cannot say its "
                                           "dimension before it embeds one", embedder_id(b->o));
        } else {
            b->dim = b->prev.dim;   /* every text with words is reused */
            if ((rc = alloc_vectors(b)) < 0) return rc;
        }
    } else if ((rc = alloc_vectors(b)) < 0) {
        return rc;
    }
    /* blank texts get the zero vector: there is nothing to embed, and
     * endpoints refuse empty inputs */
    for (uint32_t i = 0; i < b->texts.count; i++)
        if (!b->have[i] && blank(b->texts.text[i])) {
            b->have[i] = 1;
            b->done++;
        }
    take_previous(b);
    return embed_missing(b);
}

/* ---- writing ------------------------------------------------------------ */


static int save_state(build *b, const char *vdir, bool *saved)
{
    char *blob = NULL, *path;
    size_t len = 0;
    cn_error err;
    int rc;

    *saved = false;
    if (b->emb->save == NULL || b->texts.count == 0) return 0;   /* nothing was learned */
    memset(&err, 0, sizeof err);
    rc = b->emb->save(b->emb, &blob, &len, &err);
    if (rc < 0) return plugin_error(&err, rc, "embedder", embedder_id(b->o));
    path = cn_path_join(vdir, CN_VECTORS_STATE);
    rc = path ? cn_vectors_state_write(path, blob, len) : cn_error_set(CN_ENOMEM, "out of memory");
    b->emb_inst->host.free(blob);
    free(path);
    *saved = rc == 0;
    return rc;
}

static int build_store(build *b, const char *vdir)
{
    char *sdir = cn_path_join(vdir, CN_VECTORS_STORE_DIR);
    uint32_t *ids = NULL;
    cn_error err;
    int rc = 0;

    if (sdir == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    if (mkdir(sdir, 0755) != 0) {
        rc = cn_error_set(CN_EIO, "cannot create %s: %s", sdir, strerror(errno));
        free(sdir);
        return rc;
    }
    if (b->texts.count == 0) {   /* nothing to keep: an empty store directory */
        free(sdir);
        return 0;
    }
    ids = malloc(b->texts.count * sizeof *ids);
    if (ids == NULL) rc = cn_error_set(CN_ENOMEM, "out of memory");
    for (uint32_t i = 0; ids && i < b->texts.count; i++) ids[i] = i;
    memset(&err, 0, sizeof err);
    if (rc == 0) {
        rc = b->store->build(b->store, sdir, b->vectors, ids, b->texts.count, b->dim, &err);
        if (rc < 0) rc = plugin_error(&err, rc, "vector-store", store_id(b->o));
    }
    free(ids);
    free(sdir);
    return rc;
}

static long long tree_bytes(const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *de;
    long long sum = 0;

    if (lstat(path, &st) != 0) return 0;
    if (!S_ISDIR(st.st_mode)) return (long long)st.st_size;
    if ((d = opendir(path)) == NULL) return 0;
    while ((de = readdir(d)) != NULL) {
        char *child;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        if ((child = cn_path_join(path, de->d_name)) == NULL) continue;
        sum += tree_bytes(child);
        free(child);
    }
    closedir(d);
    return sum;
}

static json_object *meta_json(build *b, bool state_saved, double seconds)
{
    json_object *m = json_object_new_object();
    json_object_object_add(m, "format", json_object_new_int(CN_VECTORS_FORMAT));
    json_object_object_add(m, "embedder", json_object_new_string(embedder_id(b->o)));
    json_object_object_add(m, "embedder_config", json_object_get(b->config_saved));
    json_object_object_add(m, "model_id", json_object_new_string(b->model_id));
    json_object_object_add(m, "dim", json_object_new_int64((int64_t)b->dim));
    json_object_object_add(m, "store", json_object_new_string(store_id(b->o)));
    json_object_object_add(m, "store_config", json_object_get(b->store_cfg));
    json_object_object_add(m, "count", json_object_new_int64(b->texts.count));
    json_object_object_add(m, "max_chars", json_object_new_int64((int64_t)b->o->max_chars));
    json_object_object_add(m, "state_file", state_saved ? json_object_new_string(CN_VECTORS_STATE) : NULL);
    json_object_object_add(m, "reuse_file", b->has_state ? NULL : json_object_new_string(CN_VECTORS_REUSE));
    json_object_object_add(m, "build_seconds", json_object_new_double(seconds));
    return m;
}

static int write_all(build *b, const char *vdir, double t0, cn_vectors_stats *st)
{
    bool saved = false;
    json_object *meta;
    char *p;
    int rc;

    if ((rc = save_state(b, vdir, &saved)) < 0) return rc;
    if (!b->has_state) {
        p = cn_path_join(vdir, CN_VECTORS_REUSE);
        rc = p ? cn_vectors_reuse_write(p, b->texts.hash, b->vectors, b->texts.count, b->dim)
               : cn_error_set(CN_ENOMEM, "out of memory");
        free(p);
        if (rc < 0) return rc;
    }
    if ((rc = build_store(b, vdir)) < 0) return rc;
    st->seconds = now_seconds() - t0;
    meta = meta_json(b, saved, st->seconds);
    p = cn_path_join(vdir, CN_VECTORS_META);
    rc = p && meta ? cn_json_write_file(p, meta) : cn_error_set(CN_ENOMEM, "out of memory");
    free(p);
    json_object_put(meta);
    return rc;
}

static void build_free(build *b)
{
    cn_backend_instance_free(b->emb_inst);
    cn_backend_instance_free(b->store_inst);
    cn_backends_free(&b->backends);
    node_texts_free(&b->texts);
    json_object_put(b->config);
    json_object_put(b->config_saved);
    json_object_put(b->store_cfg);
    cn_vectors_reuse_close(&b->prev);
    free(b->model_id);
    free(b->vectors);
    free(b->have);
}

int cn_vectors_build(const cn_vectors_opts *opts, const char *repo_root, const char *gen_dir,
                     const char *prev_dir, void (*progress)(size_t done, size_t total, void *data),
                     void *progress_data, cn_vectors_stats *st)
{
    double t0 = now_seconds();
    cn_vectors_opts o = *opts;
    char *vdir = NULL;
    build b;
    int rc;

    memset(st, 0, sizeof *st);
    memset(&b, 0, sizeof b);
    if (o.max_chars == 0) o.max_chars = CN_VECTORS_DEFAULT_MAX_CHARS;
    b.o = &o;
    b.progress = progress;
    b.progress_data = progress_data;
    if ((rc = parse_config(&o, &b.config)) < 0) goto out;
    b.config_saved = cn_vectors_redact_config(b.config);
    b.store_cfg = store_config(&o);
    vdir = cn_path_join(gen_dir, CN_VECTORS_DIR);
    if (b.config_saved == NULL || b.store_cfg == NULL || vdir == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = make_backends(&b)) < 0) goto out;
    if ((rc = gather_texts(repo_root, gen_dir, o.max_chars, &b.texts)) < 0) goto out;
    if ((rc = fit(&b)) < 0) goto out;
    /* after fit: an embedder's model id may name what it learned (its dim) */
    b.model_id = cn_strdup(b.emb->model_id(b.emb) ? b.emb->model_id(b.emb) : embedder_id(&o));
    if (b.model_id == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto out;
    }
    load_previous(&b, prev_dir);
    if ((rc = embed_all(&b)) < 0) goto out;
    if (mkdir(vdir, 0755) != 0) {
        rc = cn_error_set(CN_EIO, "cannot create %s: %s", vdir, strerror(errno));
        goto out;
    }
    if ((rc = write_all(&b, vdir, t0, st)) < 0) goto out;
    st->count = b.texts.count;
    st->dim = b.dim;
    st->model_id = b.model_id;
    b.model_id = NULL;
    st->embedded = b.embedded;
    st->reused = b.reused;
    st->bytes = tree_bytes(vdir);
    {
        cn_buf name = CN_BUF_INIT;
        cn_buf_printf(&name, "%s+%s", embedder_id(&o), store_id(&o));
        st->builder = cn_buf_steal(&name);
    }
    if (st->builder == NULL) rc = cn_error_set(CN_ENOMEM, "out of memory");
out:
    build_free(&b);
    free(vdir);
    if (rc < 0) cn_vectors_stats_free(st);
    return rc;
}

void cn_vectors_stats_free(cn_vectors_stats *st)
{
    free(st->model_id);
    free(st->builder);
    memset(st, 0, sizeof *st);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* embed-openai: an embedder backend over any OpenAI-compatible
 * /v1/embeddings endpoint (OpenAI, Ollama, vLLM, llama.cpp server, TEI),
 * reached through the host's model client (cn_host.model), which does the
 * transport, the key, timeouts and retries of transient failures.
 *
 * Configuration (a JSON object; every field optional):
 *   base_url, model, api_key_env, api_key, timeout_ms, connect_timeout_ms,
 *   max_retries, backoff_ms   -- handed to the model client (see
 *                                codenib/model.h for their defaults)
 *   dimensions   ask the endpoint for vectors of this length (models that
 *                support it, e.g. text-embedding-3-*) and check the answer
 *   batch_size   texts per request (default 64)
 *
 * It learns nothing from the repository (no fit/save/load), so a text
 * always maps to the same vector: the compiler reuses the vectors of
 * unchanged texts and never pays twice for one.  Its dimension is known
 * after the first answer (or from `dimensions`); every later answer must
 * agree.  Vectors are L2-normalised here, whatever the endpoint returns;
 * an empty text gets the zero vector without a request (endpoints refuse
 * empty inputs). */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <codenib/backend.h>
#include <codenib/embed.h>
#include <codenib/model.h>

#define DEFAULT_BATCH 64
#define MAX_BATCH 2048
/* The host embeds the first text of an embedder whose dimension is not yet
 * known into a buffer of this many floats (CN_VECTORS_MAX_DIM). */
#define MAX_DIM 65536

typedef struct eo_state {
    const cn_host *host;
    struct cn_model *model;
    char *model_id;
    size_t dimensions;        /* asked for; 0: the model's own */
    size_t batch_size;
    _Atomic size_t dim;       /* 0 until known */
} eo_state;

/* Fields handed to the model client as they are. */
static const char *const client_fields[] = {
    "base_url", "model", "api_key", "api_key_env", "timeout_ms", "connect_timeout_ms", "max_retries",
    "backoff_ms", NULL,
};

static int is_client_field(const char *k)
{
    for (size_t i = 0; client_fields[i]; i++)
        if (strcmp(client_fields[i], k) == 0) return 1;
    return 0;
}

typedef struct cfg_walk {
    const cn_host *h;
    cn_json *client;          /* the model client's configuration */
    eo_state *st;
    cn_error *err;
    int rc;
} cfg_walk;

static int read_count(cfg_walk *w, const char *key, cn_json *val, size_t lo, size_t hi, size_t *out)
{
    const cn_json_services *J = w->h->json;
    int64_t v = J->get_int(val);
    if (J->type(val) != CN_JSON_INT || v < (int64_t)lo || v > (int64_t)hi)
        return w->rc = w->h->error_set(w->err, CN_EINVAL,
                                       "embed-openai configuration: \"%s\" must be an integer from %zu to %zu",
                                       key, lo, hi);
    *out = (size_t)v;
    return 0;
}

static int cfg_member(const char *key, cn_json *val, void *data)
{
    cfg_walk *w = data;
    const cn_json_services *J = w->h->json;

    if (strcmp(key, "dimensions") == 0) return read_count(w, key, val, 1, MAX_DIM, &w->st->dimensions);
    if (strcmp(key, "batch_size") == 0) return read_count(w, key, val, 1, MAX_BATCH, &w->st->batch_size);
    if (is_client_field(key)) return J->object_set(w->client, key, J->get(val)) < 0 ? (w->rc = CN_ENOMEM) : 0;
    return w->rc = w->h->error_set(w->err, CN_EINVAL,
                                   "embed-openai configuration: unknown field \"%s\" (known: base_url, model, "
                                   "api_key_env, api_key, dimensions, batch_size, timeout_ms, "
                                   "connect_timeout_ms, max_retries, backoff_ms)",
                                   key);
}

/* Splits the configuration into ours and the model client's. */
static int read_config(const cn_host *h, const char *config_json, eo_state *st, char **client_json,
                       cn_error *err)
{
    const cn_json_services *J = h->json;
    cn_json *cfg = J->parse(config_json, err);
    cfg_walk w;

    *client_json = NULL;
    if (cfg == NULL) return err->code < 0 ? err->code : CN_EPARSE;
    if (J->type(cfg) != CN_JSON_OBJECT) {
        J->put(cfg);
        return h->error_set(err, CN_EINVAL, "embed-openai configuration must be a JSON object");
    }
    memset(&w, 0, sizeof w);
    w.h = h;
    w.st = st;
    w.err = err;
    w.client = J->new_object();
    if (w.client == NULL) w.rc = h->error_set(err, CN_ENOMEM, "out of memory");
    else J->object_set(w.client, "role", J->new_string("embed"));
    if (w.rc == 0) J->object_foreach(cfg, cfg_member, &w);
    if (w.rc == CN_ENOMEM) h->error_set(err, CN_ENOMEM, "out of memory");
    if (w.rc == 0 && (*client_json = J->serialize(w.client, 0)) == NULL)
        w.rc = h->error_set(err, CN_ENOMEM, "out of memory");
    J->put(w.client);
    J->put(cfg);
    return w.rc;
}

/* ---- the embedder ------------------------------------------------------- */

static const char *eo_model_id(cn_embedder *self)
{
    return ((eo_state *)self->data)->model_id;
}

static size_t eo_dim(cn_embedder *self)
{
    return atomic_load(&((eo_state *)self->data)->dim);
}

static int is_blank(const char *s)
{
    return s == NULL || s[strspn(s, " \t\r\n\f\v")] == '\0';
}

static void normalise(float *v, size_t d)
{
    double s = 0;
    for (size_t j = 0; j < d; j++) s += (double)v[j] * v[j];
    if (s > 0) {
        double inv = 1.0 / sqrt(s);
        for (size_t j = 0; j < d; j++) v[j] = (float)(v[j] * inv);
    }
}

/* Settles the dimension on the first answer; later answers must agree. */
static int agree_dim(eo_state *st, size_t got, cn_error *err)
{
    size_t expected = 0;
    if (got == 0 || got > MAX_DIM)
        return st->host->error_set(err, CN_EINVAL, "embed-openai: model '%s' returned vectors of %zu dimensions "
                                                   "(expected 1 to %d)", st->model_id, got, MAX_DIM);
    if (st->dimensions && got != st->dimensions)
        return st->host->error_set(err, CN_EINVAL, "embed-openai: model '%s' returned %zu dimensions but "
                                                   "\"dimensions\" is %zu; fix the configuration or use a "
                                                   "model that supports it", st->model_id, got, st->dimensions);
    if (atomic_compare_exchange_strong(&st->dim, &expected, got) || expected == got) return 0;
    return st->host->error_set(err, CN_EINVAL, "embed-openai: model '%s' returned %zu dimensions, earlier answers "
                                               "had %zu; the endpoint changed models?", st->model_id, got, expected);
}

/* One request: texts[idx[0..k)] into their rows of out. */
static int embed_batch(eo_state *st, const char *const *texts, const size_t *idx, size_t k, float *out,
                       const char **batch, cn_error *err)
{
    const cn_host *h = st->host;
    float *vec = NULL;
    size_t d = 0;
    int rc;

    for (size_t i = 0; i < k; i++) batch[i] = texts[idx[i]];
    rc = h->model->embed(h, st->model, batch, k, st->dimensions, &vec, &d, err);
    if (rc < 0) return rc;
    if ((rc = agree_dim(st, d, err)) == 0) {
        for (size_t i = 0; i < k; i++) {
            memcpy(out + idx[i] * d, vec + i * d, d * sizeof *vec);
            normalise(out + idx[i] * d, d);
        }
    }
    h->free(vec);
    return rc;
}

static int eo_embed(cn_embedder *self, int role, const char *const *texts, size_t n, float *out, cn_error *err)
{
    eo_state *st = self->data;
    const cn_host *h = st->host;
    size_t *idx = h->alloc((st->batch_size ? st->batch_size : 1) * sizeof *idx);
    const char **batch = h->alloc((st->batch_size ? st->batch_size : 1) * sizeof *batch);
    size_t k = 0, d;
    int rc = 0, blanks = 0;

    (void)role;   /* the OpenAI protocol does not tell queries from documents */
    if (idx == NULL || batch == NULL) {
        h->free(idx);
        h->free(batch);
        return h->error_set(err, CN_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (is_blank(texts[i])) {
            blanks++;
            continue;
        }
        idx[k++] = i;
        if (k == st->batch_size) {
            rc = embed_batch(st, texts, idx, k, out, batch, err);
            k = 0;
        }
    }
    if (rc == 0 && k) rc = embed_batch(st, texts, idx, k, out, batch, err);
    h->free(idx);
    h->free(batch);
    if (rc < 0 || blanks == 0) return rc;
    if ((d = atomic_load(&st->dim)) == 0)
        return h->error_set(err, CN_EINVAL, "embed-openai: only empty texts were given and the model's "
                                            "dimension is not known yet; set \"dimensions\"");
    for (size_t i = 0; i < n; i++)
        if (is_blank(texts[i])) memset(out + i * d, 0, d * sizeof *out);
    return 0;
}

static void eo_destroy(cn_embedder *self)
{
    eo_state *st;
    const cn_host *h;
    if (self == NULL) return;
    st = self->data;
    h = st->host;
    if (st->model) h->model->close(h, st->model);
    h->free(st->model_id);
    h->free(st);
    h->free(self);
}

static char *make_model_id(const cn_host *h, const char *model, size_t dimensions)
{
    char *id = h->alloc(strlen(model) + 40);
    if (id == NULL) return NULL;
    if (dimensions) sprintf(id, "openai/%s@%zu", model, dimensions);
    else sprintf(id, "openai/%s", model);
    return id;
}

static int eo_create(const cn_host *h, const struct cn_skill_context *ctx, const char *config_json, void **out,
                     cn_error *err)
{
    eo_state *st;
    cn_embedder *e;
    char *client = NULL;
    const char *name;
    int rc;

    (void)ctx;
    *out = NULL;
    if (!CN_HOST_HAS(h, model) || h->model == NULL || h->model->embed == NULL)
        return h->error_set(err, CN_EUNSUPPORTED, "embed-openai needs the host's model client, which this "
                                                  "codenib was built without");
    st = h->alloc(sizeof *st);
    e = h->alloc(sizeof *e);
    if (st == NULL || e == NULL) {
        h->free(st);
        h->free(e);
        return h->error_set(err, CN_ENOMEM, "out of memory");
    }
    memset(st, 0, sizeof *st);
    memset(e, 0, sizeof *e);
    st->host = h;
    st->batch_size = DEFAULT_BATCH;
    atomic_init(&st->dim, 0);
    e->struct_size = (uint32_t)sizeof *e;
    e->data = st;
    e->model_id = eo_model_id;
    e->dim = eo_dim;
    e->embed = eo_embed;
    e->destroy = eo_destroy;
    if ((rc = read_config(h, config_json, st, &client, err)) < 0 ||
        (rc = h->model->open(h, client, &st->model, err)) < 0) {
        h->free(client);
        eo_destroy(e);
        return rc;
    }
    h->free(client);
    name = h->model->name(st->model);
    if (st->dimensions) atomic_store(&st->dim, st->dimensions);
    if ((st->model_id = make_model_id(h, name ? name : "default", st->dimensions)) == NULL) {
        eo_destroy(e);
        return h->error_set(err, CN_ENOMEM, "out of memory");
    }
    *out = e;
    return 0;
}

CN_BACKEND_DEFINE(embed_openai, "embed-openai", "0.1.0", CN_BACKEND_EMBEDDER, eo_create);

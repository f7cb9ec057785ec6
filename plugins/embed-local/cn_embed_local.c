/* SPDX-License-Identifier: Apache-2.0 */
/* embed-local: an embedder that needs no model download and no network.
 * It learns latent semantic vectors from the repository itself (cn_lsa.h)
 * when the index is compiled, saves what it learned next to the vectors,
 * and loads it again to embed queries.
 *
 * Options (a JSON object; every key optional):
 *   dim           rank of the embedding, 1..1024 (256)
 *   min_df        a term must occur in at least this many documents (2)
 *   max_df_ratio  ... and in at most this share of them, (0, 1] (0.5)
 *                 (when neither is given and they leave no term, as in a
 *                 repository of a few files, every term is kept)
 *   max_terms     vocabulary size, most frequent terms first (30000)
 *   power_iters   subspace iterations of the randomized SVD, 0..10 (0)
 *   seed          of its random test matrix (fixed by default)
 *   threads       for the matrix products; 0 = every online CPU (0)
 *
 * The saved state ("blob"), all integers and floats little-endian:
 *   0  magic "CNLSAEMB"          32 u64 bytes of the terms
 *   8  u32 format version (1)    40 u64 payload bytes
 *   12 u32 header bytes (64)     48 u64 reserved (0)
 *   16 u32 dim                   56 u64 checksum of bytes 0..55 and the payload
 *   20 u32 terms
 *   24 u32 documents learned from
 *   28 u32 flags (0)
 * then the payload: the terms (ascending, NUL-terminated), zeros to a
 * multiple of 4, idf f32[terms], singular values f32[dim], projection
 * V S^-1 f32[terms * dim] (row t: term t's image). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <codenib/backend.h>
#include <codenib/embed.h>

#include "cn_bytes.h"
#include "cn_lsa.h"

#define BLOB_MAGIC "CNLSAEMB"
#define BLOB_VERSION 1u
#define BLOB_HEADER 64u

typedef struct el_state {
    cn_embedder emb;
    const cn_host *host;
    cn_lsa_params params;
    cn_lsa_model *model;
    char model_id[64];
} el_state;

static el_state *state_of(cn_embedder *self)
{
    return self->data;
}

static void set_model(el_state *st, cn_lsa_model *m)
{
    cn_lsa_model_free(st->model);
    st->model = m;
    snprintf(st->model_id, sizeof st->model_id, "embed-local/lsa-%u", m ? m->dim : st->params.dim);
}

/* ---- options ------------------------------------------------------------- */

typedef struct opt_ctx {
    el_state *st;
    cn_error *err;
} opt_ctx;

static int int_option(opt_ctx *o, const char *key, cn_json *val, int64_t lo, int64_t hi, int64_t *out)
{
    const cn_json_services *js = o->st->host->json;
    if (js->type(val) != CN_JSON_INT || js->get_int(val) < lo || js->get_int(val) > hi) {
        char *text = js->serialize(val, 0);
        o->st->host->error_set(o->err, CN_EINVAL,
                               "embed-local: option '%s' must be an integer from %lld to %lld (got %s)", key,
                               (long long)lo, (long long)hi, text ? text : "?");
        o->st->host->free(text);
        return CN_EINVAL;
    }
    *out = js->get_int(val);
    return 0;
}

static int option(const char *key, cn_json *val, void *data)
{
    opt_ctx *o = data;
    cn_lsa_params *p = &o->st->params;
    const cn_json_services *js = o->st->host->json;
    int64_t v = 0;
    int rc = 0;

    if (strcmp(key, "dim") == 0) {
        if ((rc = int_option(o, key, val, 1, CN_LSA_MAX_DIM, &v)) == 0) p->dim = (uint32_t)v;
    } else if (strcmp(key, "min_df") == 0) {
        if ((rc = int_option(o, key, val, 1, UINT32_MAX, &v)) == 0) p->min_df = (uint32_t)v;
        p->relax_df = 0;
    } else if (strcmp(key, "max_terms") == 0) {
        if ((rc = int_option(o, key, val, 1, CN_LSA_MAX_TERMS, &v)) == 0) p->max_terms = (uint32_t)v;
    } else if (strcmp(key, "power_iters") == 0) {
        if ((rc = int_option(o, key, val, 0, CN_LSA_MAX_POWER_ITERS, &v)) == 0) p->power_iters = (uint32_t)v;
    } else if (strcmp(key, "seed") == 0) {
        if ((rc = int_option(o, key, val, 0, INT64_MAX, &v)) == 0) p->seed = (uint64_t)v;
    } else if (strcmp(key, "threads") == 0) {
        if ((rc = int_option(o, key, val, 0, CN_LSA_MAX_THREADS, &v)) == 0) p->threads = (uint32_t)v;
    } else if (strcmp(key, "max_df_ratio") == 0) {
        cn_json_type t = js->type(val);
        double d = js->get_double(val);
        if ((t != CN_JSON_INT && t != CN_JSON_DOUBLE) || !(d > 0 && d <= 1))
            return o->st->host->error_set(o->err, CN_EINVAL,
                                          "embed-local: option 'max_df_ratio' must be a number in (0, 1]");
        p->max_df_ratio = d;
        p->relax_df = 0;
    } else {
        return o->st->host->error_set(o->err, CN_EINVAL,
                                      "embed-local: unknown option '%s' (known: dim, min_df, max_df_ratio, "
                                      "max_terms, power_iters, seed, threads)",
                                      key);
    }
    return rc;
}

static int parse_options(el_state *st, const char *config_json, cn_error *err)
{
    const cn_json_services *js = st->host->json;
    cn_json *cfg = js->parse(config_json ? config_json : "{}", err);
    opt_ctx o = {st, err};
    int rc;

    if (cfg == NULL) {
        char why[CN_ERROR_MESSAGE_MAX];
        memcpy(why, err ? err->message : "", err ? sizeof why : 1);
        return st->host->error_set(err, CN_EPARSE, "embed-local: options are not valid JSON: %s", why);
    }
    if (js->type(cfg) != CN_JSON_OBJECT) {
        js->put(cfg);
        return st->host->error_set(err, CN_EINVAL, "embed-local: options must be a JSON object");
    }
    rc = js->object_foreach(cfg, option, &o);
    js->put(cfg);
    if (rc == 0 && st->params.threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        st->params.threads = n < 1 ? 1 : n > CN_LSA_MAX_THREADS ? CN_LSA_MAX_THREADS : (uint32_t)n;
    }
    return rc < 0 ? rc : 0;
}

/* ---- the embedder ----------------------------------------------------------- */

static const char *el_model_id(cn_embedder *self)
{
    return state_of(self)->model_id;
}

static size_t el_dim(cn_embedder *self)
{
    el_state *st = state_of(self);
    return st->model ? st->model->dim : 0;
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int el_fit(cn_embedder *self, const char *const *docs, size_t n, cn_error *err)
{
    el_state *st = state_of(self);
    cn_lsa_model *m = NULL;
    double t0 = seconds_now();
    int rc = cn_lsa_fit(&st->params, st->host->text->tokenize, docs, n, &m, err);

    if (rc < 0) return rc;
    set_model(st, m);
    st->host->log(st->host, CN_LOG_INFO, "embed-local: %u terms of %zu documents, rank %u, learned in %.2f s",
                  m->n_terms, n, m->dim, seconds_now() - t0);
    return 0;
}

static int el_embed(cn_embedder *self, int role, const char *const *texts, size_t n, float *out, cn_error *err)
{
    el_state *st = state_of(self);

    if (st->model == NULL)
        return st->host->error_set(err, CN_EINVAL,
                                   "embed-local has no vocabulary yet: fit() it on documents or load() a saved "
                                   "state first");
    if (role != CN_EMBED_QUERY && role != CN_EMBED_DOCUMENT)
        return st->host->error_set(err, CN_EINVAL, "embed-local: unknown text role %d", role);
    return cn_lsa_embed_batch(st->model, st->host->text->tokenize, texts, n, out, st->params.threads, err);
}

/* ---- save ------------------------------------------------------------------- */

static unsigned char *put_floats(unsigned char *p, const float *f, size_t n)
{
    for (size_t i = 0; i < n; i++, p += 4) {
        uint32_t u;
        memcpy(&u, &f[i], 4);
        cn_put_u32(p, u);
    }
    return p;
}

static size_t pad4(size_t n)
{
    return (n + 3) & ~(size_t)3;
}

/* In 64 bits: with the header's bounds (terms <= 10^6, dim <= 1024) it
 * cannot overflow, even where size_t is 32 bits. */
static uint64_t payload_size(uint64_t pool_len, uint64_t n_terms, uint64_t dim)
{
    return ((pool_len + 3) & ~(uint64_t)3) + 4 * (n_terms + dim + n_terms * dim);
}

static int el_save(cn_embedder *self, char **blob, size_t *len, cn_error *err)
{
    el_state *st = state_of(self);
    const cn_lsa_model *m = st->model;
    size_t payload, total;
    unsigned char *b, *p;

    *blob = NULL;
    *len = 0;
    if (m == NULL)
        return st->host->error_set(err, CN_EINVAL, "embed-local has learned nothing to save: fit() it first");
    payload = (size_t)payload_size(m->pool_len, m->n_terms, m->dim);
    total = BLOB_HEADER + payload;
    if ((b = st->host->alloc(total)) == NULL)
        return st->host->error_set(err, CN_ENOMEM, "embed-local: out of memory (%zu bytes of saved state)", total);
    memset(b, 0, total);
    memcpy(b, BLOB_MAGIC, 8);
    cn_put_u32(b + 8, BLOB_VERSION);
    cn_put_u32(b + 12, BLOB_HEADER);
    cn_put_u32(b + 16, m->dim);
    cn_put_u32(b + 20, m->n_terms);
    cn_put_u32(b + 24, m->n_docs);
    cn_put_u64(b + 32, m->pool_len);
    cn_put_u64(b + 40, payload);
    memcpy(b + BLOB_HEADER, m->pool, m->pool_len);
    p = b + BLOB_HEADER + pad4(m->pool_len);
    p = put_floats(p, m->idf, m->n_terms);
    p = put_floats(p, m->sigma, m->dim);
    put_floats(p, m->proj, (size_t)m->n_terms * m->dim);
    cn_put_u64(b + 56, cn_lsa_checksum(cn_lsa_checksum(CN_LSA_HASH_SEED, b, 56), b + BLOB_HEADER, payload));
    *blob = (char *)b;
    *len = total;
    return 0;
}

/* ---- load ------------------------------------------------------------------- */

static int corrupt(el_state *st, cn_error *err, const char *what)
{
    return st->host->error_set(err, CN_ECORRUPT,
                               "embed-local: the saved state is unusable (%s); compile the vector index again "
                               "(codenib compile --index vector)",
                               what);
}

/* Checks the header against the blob's length, then the checksum. */
static int check_header(el_state *st, const unsigned char *b, size_t len, cn_error *err)
{
    uint32_t dim, n_terms;
    uint64_t pool_len, payload;

    if (len < 8 || memcmp(b, BLOB_MAGIC, 8) != 0) return corrupt(st, err, "not an embed-local model: bad magic");
    if (len < BLOB_HEADER) return corrupt(st, err, "truncated header");
    if (cn_get_u32(b + 8) != BLOB_VERSION)
        return st->host->error_set(err, CN_ECORRUPT,
                                   "embed-local: the saved state has format version %u and this embed-local reads "
                                   "version %u; compile the vector index again (codenib compile --index vector)",
                                   cn_get_u32(b + 8), BLOB_VERSION);
    dim = cn_get_u32(b + 16);
    n_terms = cn_get_u32(b + 20);
    pool_len = cn_get_u64(b + 32);
    payload = cn_get_u64(b + 40);
    if (cn_get_u32(b + 12) != BLOB_HEADER || cn_get_u32(b + 28) != 0 || cn_get_u64(b + 48) != 0)
        return corrupt(st, err, "unknown header layout");
    if (dim < 1 || dim > CN_LSA_MAX_DIM || n_terms < 1 || n_terms > CN_LSA_MAX_TERMS ||
        pool_len < 2 * (uint64_t)n_terms || pool_len > (uint64_t)n_terms * (CN_LSA_MAX_TERM_LEN + 1))
        return corrupt(st, err, "impossible sizes in the header");
    if (payload != payload_size(pool_len, n_terms, dim) || (uint64_t)(len - BLOB_HEADER) != payload) {
        char what[160];
        snprintf(what, sizeof what, "%zu bytes where the header announces %llu: truncated or extended", len,
                 (unsigned long long)(BLOB_HEADER + payload));
        return corrupt(st, err, what);
    }
    if (cn_lsa_checksum(cn_lsa_checksum(CN_LSA_HASH_SEED, b, 56), b + BLOB_HEADER, (size_t)payload) !=
        cn_get_u64(b + 56))
        return corrupt(st, err, "checksum mismatch");
    return 0;
}

static int get_floats(const unsigned char *p, float *f, size_t n)
{
    for (size_t i = 0; i < n; i++, p += 4) {
        uint32_t u = cn_get_u32(p);
        memcpy(&f[i], &u, 4);
        if (!isfinite(f[i])) return -1;
    }
    return 0;
}

/* The terms must be non-empty, at most CN_LSA_MAX_TERM_LEN bytes, strictly
 * ascending and fill the pool exactly. */
static int check_terms(cn_lsa_model *m)
{
    size_t off = 0;
    for (uint32_t i = 0; i < m->n_terms; i++) {
        const char *s = m->pool + off, *end = memchr(s, '\0', m->pool_len - off);
        if (end == NULL || end == s || (size_t)(end - s) > CN_LSA_MAX_TERM_LEN) return -1;
        if (i > 0 && strcmp(m->pool + m->term_off[i - 1], s) >= 0) return -1;
        m->term_off[i] = (uint32_t)off;
        off += (size_t)(end - s) + 1;
    }
    return off == m->pool_len ? 0 : -1;
}

static int el_load(cn_embedder *self, const char *blob, size_t len, cn_error *err)
{
    el_state *st = state_of(self);
    const unsigned char *b = (const unsigned char *)blob, *p;
    cn_lsa_model *m;
    int rc;

    if (blob == NULL) len = 0;
    if ((rc = check_header(st, b, len, err)) < 0) return rc;
    if ((m = calloc(1, sizeof *m)) == NULL) return st->host->error_set(err, CN_ENOMEM, "embed-local: out of memory");
    m->dim = cn_get_u32(b + 16);
    m->n_terms = cn_get_u32(b + 20);
    m->n_docs = cn_get_u32(b + 24);
    m->pool_len = (size_t)cn_get_u64(b + 32);
    m->pool = malloc(m->pool_len);
    m->term_off = malloc(m->n_terms * sizeof *m->term_off);
    m->idf = malloc(m->n_terms * sizeof *m->idf);
    m->sigma = malloc(m->dim * sizeof *m->sigma);
    m->proj = malloc((size_t)m->n_terms * m->dim * sizeof *m->proj);
    if (m->pool == NULL || m->term_off == NULL || m->idf == NULL || m->sigma == NULL || m->proj == NULL) {
        cn_lsa_model_free(m);
        return st->host->error_set(err, CN_ENOMEM, "embed-local: out of memory loading its saved state");
    }
    memcpy(m->pool, b + BLOB_HEADER, m->pool_len);
    p = b + BLOB_HEADER + pad4(m->pool_len);
    if (check_terms(m) < 0) rc = corrupt(st, err, "malformed vocabulary");
    else if (get_floats(p, m->idf, m->n_terms) < 0 ||
             get_floats(p + 4 * (size_t)m->n_terms, m->sigma, m->dim) < 0 ||
             get_floats(p + 4 * ((size_t)m->n_terms + m->dim), m->proj, (size_t)m->n_terms * m->dim) < 0)
        rc = corrupt(st, err, "a number is not finite");
    else rc = cn_lsa_model_index(m, err);
    if (rc < 0) {
        cn_lsa_model_free(m);
        return rc;
    }
    set_model(st, m);
    return 0;
}

static void el_destroy(cn_embedder *self)
{
    el_state *st;
    if (self == NULL) return;
    st = state_of(self);
    cn_lsa_model_free(st->model);
    st->host->free(st);
}

static int el_create(const cn_host *host, const struct cn_skill_context *ctx, const char *config_json, void **out,
                     cn_error *err)
{
    el_state *st;
    int rc;

    (void)ctx;
    *out = NULL;
    if (!CN_HOST_HAS(host, text) || host->text == NULL || host->text->tokenize == NULL || host->json == NULL)
        return host->error_set(err, CN_EUNSUPPORTED,
                               "embed-local needs the host's tokenizer and JSON services; this codenib is too old");
    if ((st = host->alloc(sizeof *st)) == NULL) return host->error_set(err, CN_ENOMEM, "embed-local: out of memory");
    memset(st, 0, sizeof *st);
    st->host = host;
    /* Defaults measured on the localization dev set (bench/README.md):
     * rank 256 without power iterations ranked files, modules and
     * functions better than rank 128 with 2 iterations, and fits faster
     * than rank 384, which was no better. */
    st->params.dim = 256;
    st->params.min_df = 2;
    st->params.max_df_ratio = 0.5;
    st->params.max_terms = 30000;
    st->params.power_iters = 0;
    st->params.seed = 0x5eed1e55c0de0001ull;
    st->params.threads = 0;
    st->params.relax_df = 1;
    if ((rc = parse_options(st, config_json, err)) < 0) {
        host->free(st);
        return rc;
    }
    set_model(st, NULL);
    st->emb.struct_size = (uint32_t)sizeof st->emb;
    st->emb.data = st;
    st->emb.model_id = el_model_id;
    st->emb.dim = el_dim;
    st->emb.fit = el_fit;
    st->emb.save = el_save;
    st->emb.load = el_load;
    st->emb.embed = el_embed;
    st->emb.destroy = el_destroy;
    *out = &st->emb;
    return 0;
}

CN_BACKEND_DEFINE(embed_local, "embed-local", "1.0.0", CN_BACKEND_EMBEDDER, el_create);

/* SPDX-License-Identifier: Apache-2.0 */
/* example-hash: a complete embedder backend, the starting point for your
 * own (copy this directory; see the SDK guide, section "Backends").
 *
 * It embeds a text by feature hashing: every word (a run of letters,
 * digits and '_', lowercased; camelCase and snake_case split too) adds +1
 * or -1 to one of `dim` buckets chosen by a hash of the word, and the
 * vector is L2-normalised.  It learns nothing, so it has no fit, save or
 * load: the three are optional parts of the cn_embedder interface.
 *
 * Options (`codenib compile --embedder example-hash --embedder-config
 * '{"dim": 512}'`): dim, 16 to 4096, default 256. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <codenib/backend.h>
#include <codenib/embed.h>
#include <codenib/host.h>

typedef struct eh_state {
    cn_embedder emb;      /* what create() hands out; emb.data points here */
    const cn_host *host;
    size_t dim;
    char model_id[64];
} eh_state;

static const char *eh_model_id(cn_embedder *self)
{
    return ((eh_state *)self->data)->model_id;
}

static size_t eh_dim(cn_embedder *self)
{
    return ((eh_state *)self->data)->dim;
}

/* FNV-1a over the lowercased word */
static unsigned long eh_hash(const char *s, size_t n)
{
    unsigned long h = 2166136261ul;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)tolower((unsigned char)s[i]);
        h *= 16777619ul;
        h &= 0xfffffffful;
    }
    return h;
}

static void add_word(float *v, size_t dim, const char *s, size_t n)
{
    unsigned long h;
    if (n < 2) return;
    h = eh_hash(s, n);
    v[h % dim] += (h >> 31) & 1u ? 1.0f : -1.0f;
}

/* Every word, and the parts of a camelCase or snake_case one. */
static void embed_one(const char *text, float *v, size_t dim)
{
    const char *p = text;
    double norm = 0.0;

    memset(v, 0, dim * sizeof *v);
    while (*p) {
        const char *w = p, *part;
        while (*p && (isalnum((unsigned char)*p) || *p == '_')) p++;
        if (p == w) {
            p++;
            continue;
        }
        add_word(v, dim, w, (size_t)(p - w));
        part = w;
        for (const char *q = w + 1; q <= p; q++) {
            int boundary = q == p || *q == '_' ||
                           (isupper((unsigned char)*q) && islower((unsigned char)q[-1]));
            if (!boundary) continue;
            if (part != w || q != p) add_word(v, dim, part, (size_t)(q - part));
            part = q < p && *q == '_' ? q + 1 : q;
        }
    }
    for (size_t i = 0; i < dim; i++) norm += (double)v[i] * v[i];
    if (norm > 0.0) {
        float inv = (float)(1.0 / sqrt(norm));
        for (size_t i = 0; i < dim; i++) v[i] *= inv;
    }
}

static int eh_embed(cn_embedder *self, int role, const char *const *texts, size_t n, float *out, cn_error *err)
{
    eh_state *st = self->data;
    (void)role;   /* queries and documents are embedded alike */
    for (size_t i = 0; i < n; i++) {
        if (texts[i] == NULL) return st->host->error_set(err, CN_EINVAL, "example-hash: text %zu is NULL", i);
        embed_one(texts[i], out + i * st->dim, st->dim);
    }
    return 0;
}

static void eh_destroy(cn_embedder *self)
{
    eh_state *st = self->data;
    st->host->free(st);
}

/* {"dim": N}: read without a JSON library (the host has one in
 * host->json; a real backend with more options should use it). */
static int parse_dim(const cn_host *host, const char *config_json, size_t *dim, cn_error *err)
{
    const char *p = config_json ? strstr(config_json, "\"dim\"") : NULL;
    char *end;
    long v;

    if (p == NULL) return 0;
    p = strchr(p + 5, ':');
    if (p == NULL) return host->error_set(err, CN_EINVAL, "example-hash: \"dim\" has no value");
    v = strtol(p + 1, &end, 10);
    if (end == p + 1 || v < 16 || v > 4096)
        return host->error_set(err, CN_EINVAL, "example-hash: \"dim\" must be a number from 16 to 4096");
    *dim = (size_t)v;
    return 0;
}

static int eh_create(const cn_host *host, const struct cn_skill_context *ctx, const char *config_json, void **out,
                     cn_error *err)
{
    eh_state *st;
    size_t dim = 256;
    int rc;

    (void)ctx;
    *out = NULL;
    if ((rc = parse_dim(host, config_json, &dim, err)) < 0) return rc;
    if ((st = host->alloc(sizeof *st)) == NULL) return host->error_set(err, CN_ENOMEM, "example-hash: out of memory");
    memset(st, 0, sizeof *st);
    st->host = host;
    st->dim = dim;
    snprintf(st->model_id, sizeof st->model_id, "example-hash/fnv-%zu", dim);
    st->emb.struct_size = (uint32_t)sizeof st->emb;
    st->emb.data = st;
    st->emb.model_id = eh_model_id;
    st->emb.dim = eh_dim;
    st->emb.fit = NULL;
    st->emb.save = NULL;
    st->emb.load = NULL;
    st->emb.embed = eh_embed;
    st->emb.destroy = eh_destroy;
    *out = &st->emb;
    return 0;
}

CN_BACKEND_DEFINE(example_hash, "example-hash", "1.0.0", CN_BACKEND_EMBEDDER, eh_create);

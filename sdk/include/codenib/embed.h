/* SPDX-License-Identifier: Apache-2.0 */
/* codenib SDK: the embedder interface (backend kind "embedder").
 *
 * An embedder maps texts to fixed-length vectors.  `codenib compile
 * --index vector` creates one, lets it learn from the repository when it
 * can (fit), embeds every node's text, saves the embedder's learned state
 * next to the vectors, and at query time creates it again, loads that
 * state and embeds the query.  Every vector it returns is L2-normalised
 * (an all-zero vector stays zero), so the vector store ranks by dot
 * product. */
#ifndef CODENIB_EMBED_H
#define CODENIB_EMBED_H

#include <stddef.h>
#include <stdint.h>

#include <codenib/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a text is, for embedders that treat queries and documents apart. */
#define CN_EMBED_QUERY 0
#define CN_EMBED_DOCUMENT 1

typedef struct cn_embedder cn_embedder;

struct cn_embedder {
    uint32_t struct_size;
    void *data;                  /* the backend's own state */

    /* A short identity of the model and its settings, recorded in the
     * manifest ("embed-local/lsa-256", "openai/text-embedding-3-small"). */
    const char *(*model_id)(cn_embedder *self);
    /* Vector length; 0 while unknown (before fit/load or the first call). */
    size_t (*dim)(cn_embedder *self);

    /* Optional (NULL when the embedder learns nothing): learns from the
     * repository's documents.  Called once, before embed(), at compile. */
    int (*fit)(cn_embedder *self, const char *const *docs, size_t n, cn_error *err);
    /* Optional pair (both NULL when there is no learned state): the state
     * as bytes (*blob allocated with host->alloc), and back. */
    int (*save)(cn_embedder *self, char **blob, size_t *len, cn_error *err);
    int (*load)(cn_embedder *self, const char *blob, size_t len, cn_error *err);

    /* Embeds n texts (role CN_EMBED_QUERY or CN_EMBED_DOCUMENT) into
     * out[n * dim()], row i for texts[i]. */
    int (*embed)(cn_embedder *self, int role, const char *const *texts, size_t n, float *out,
                 cn_error *err);

    /* Mandatory. */
    void (*destroy)(cn_embedder *self);
};

#ifdef __cplusplus
}
#endif

#endif /* CODENIB_EMBED_H */

/* SPDX-License-Identifier: Apache-2.0 */
/* codenib SDK: vector stores (backend kind "vector-store") and the vector
 * search service skills use (cn_host.vectors).
 *
 * A store keeps one L2-normalised vector per node of a compiled index in
 * files of its own inside a directory the host gives it, and answers exact
 * or approximate top-k by dot product (cosine similarity). */
#ifndef CODENIB_VECTORS_H
#define CODENIB_VECTORS_H

#include <stddef.h>
#include <stdint.h>

#include <codenib/errors.h>
#include <codenib/host.h>
#include <codenib/index.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cn_vector_store cn_vector_store;

struct cn_vector_store {
    uint32_t struct_size;
    void *data;

    /* Writes n vectors of dim floats (row i belongs to node ids[i]) into
     * files below dir (which exists and is empty).  Called once. */
    int (*build)(cn_vector_store *self, const char *dir, const float *vectors,
                 const uint32_t *ids, size_t n, size_t dim, cn_error *err);
    /* Opens what build() wrote; a missing, truncated or corrupt file is an
     * error that names it. */
    int (*open)(cn_vector_store *self, const char *dir, cn_error *err);
    size_t (*count)(cn_vector_store *self);
    size_t (*dim)(cn_vector_store *self);
    /* Top-k by dot product with query (dim floats), best first.  allow
     * (may be NULL) is called for each candidate node id and returns
     * non-zero to keep it.  hits has room for k. */
    int (*search)(cn_vector_store *self, const float *query, size_t k,
                  int (*allow)(uint32_t node, void *data), void *allow_data,
                  cn_search_hit *hits, size_t *n_hits, cn_error *err);

    /* Mandatory. */
    void (*destroy)(cn_vector_store *self);
};

struct cn_vector_index;

/* cn_host.vectors: search over the vector index of a skill's context
 * (cn_skill_context.vectors, checked with CN_NEEDS_VECTORS). */
typedef struct cn_vector_services {
    uint32_t struct_size;
    /* Embeds `query` with the embedder the index was built with and
     * returns the k most similar nodes, best first, honouring filter (may
     * be NULL).  hits has room for k. */
    int (*search)(const cn_host *host, const struct cn_vector_index *vi, const char *query,
                  size_t k, const cn_search_filter *filter, cn_search_hit *hits,
                  size_t *n_hits, cn_error *err);
    /* {"embedder", "model", "dim", "count", "store"} of the index, as JSON
     * text allocated with host->alloc. */
    int (*info)(const cn_host *host, const struct cn_vector_index *vi, char **info_json,
                cn_error *err);
} cn_vector_services;

#ifdef __cplusplus
}
#endif

#endif /* CODENIB_VECTORS_H */

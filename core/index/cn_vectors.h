/* SPDX-License-Identifier: Apache-2.0 */
/* The vector part of a compiled index: node embeddings from an embedder
 * backend kept by a vector-store backend, in <generation>/vectors/:
 *
 *   vectors.json   what built it: format version, embedder id and its
 *                  configuration (secrets removed), model id, dim, store id
 *                  and configuration, count, max_chars, build seconds
 *   embedder.bin   the embedder's learned state (when it has one), in the
 *                  checksummed index container
 *   reuse.bin      per node the hash of the text it was embedded from and
 *                  the vector (only for embedders without learned state:
 *                  what lets the next compile skip unchanged texts)
 *   store/         the vector store's own files */
#ifndef CN_VECTORS_H
#define CN_VECTORS_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include <codenib/vectors.h>

#define CN_VECTORS_DIR "vectors"
#define CN_VECTORS_META "vectors.json"
#define CN_VECTORS_STATE "embedder.bin"
#define CN_VECTORS_REUSE "reuse.bin"
#define CN_VECTORS_STORE_DIR "store"
#define CN_VECTORS_FORMAT 1
#define CN_VECTORS_DEFAULT_EMBEDDER "embed-local"
#define CN_VECTORS_DEFAULT_STORE "vec-flat"
/* Text embedded per node, in characters (a file node's text is the whole
 * file; long ones are cut, since every embedder has an input limit and the
 * head of a definition says most about it). */
#define CN_VECTORS_DEFAULT_MAX_CHARS 8000
/* An embedder that learns its dimension from its first answer (a remote
 * model) reports dim() 0 until then: its first text is embedded alone into
 * a buffer this large, so no embedder may return longer vectors. */
#define CN_VECTORS_MAX_DIM 65536

struct cn_index;
struct cn_vector_index;

/* ---- building (cn_vectors_build.c) -------------------------------------- */

typedef struct cn_vectors_opts {
    const char *embedder;          /* backend id; NULL: CN_VECTORS_DEFAULT_EMBEDDER */
    const char *embedder_config;   /* JSON object; NULL: {} */
    const char *store;             /* backend id; NULL: CN_VECTORS_DEFAULT_STORE */
    const char *precision;         /* f32, f16, int8; NULL: the store's default */
    size_t max_chars;              /* 0: CN_VECTORS_DEFAULT_MAX_CHARS */
} cn_vectors_opts;

typedef struct cn_vectors_stats {
    uint32_t count;
    size_t dim;
    char *model_id;
    char *builder;                 /* "embed-local+vec-flat" */
    size_t embedded;               /* texts sent to the embedder */
    size_t reused;                 /* vectors taken from the previous build */
    long long bytes;               /* of the vectors/ directory */
    double seconds;
} cn_vectors_stats;

/* Checks options before a compile spends time parsing: the configuration
 * is a JSON object, the precision is known, and both backends are
 * installed with the right kind.  Errors say what to change. */
int cn_vectors_check_opts(const cn_vectors_opts *o);

/* Embeds the text of every node of the generation being built in gen_dir
 * (its nodes.bin is written; texts are read from repo_root) and writes
 * gen_dir/vectors/.  prev_dir (may be NULL) is the previous generation:
 * its vectors are reused for unchanged texts when the embedder has no
 * learned state and the same model and configuration.  progress (may be
 * NULL) gets (done, total) in nodes. */
int cn_vectors_build(const cn_vectors_opts *o, const char *repo_root, const char *gen_dir,
                     const char *prev_dir, void (*progress)(size_t done, size_t total, void *data),
                     void *progress_data, cn_vectors_stats *stats);
void cn_vectors_stats_free(cn_vectors_stats *stats);

/* Removes secrets (api_key, tokens, passwords) from a backend
 * configuration before it is written to disk; returns a new object. */
json_object *cn_vectors_redact_config(json_object *config);

/* ---- the files of vectors/ besides the store's (cn_vectors_build.c) ----- */

struct cn_idx_file;

/* embedder.bin: the embedder's saved state as one checksummed blob. */
int cn_vectors_state_write(const char *path, const char *blob, size_t len);
/* *blob points into the mapped file, valid until cn_idx_close(*f). */
int cn_vectors_state_open(const char *path, struct cn_idx_file **f, const char **blob, size_t *len);

/* reuse.bin: per node the two-word hash of its embedded text and its
 * vector, looked up by hash on the next build. */
typedef struct cn_vectors_reuse {
    struct cn_idx_file *f;
    const uint64_t *hash;          /* 2 x count */
    const float *vectors;          /* count x dim */
    uint32_t *order;               /* rows sorted by hash */
    uint32_t count;
    size_t dim;
} cn_vectors_reuse;

int cn_vectors_reuse_write(const char *path, const uint64_t *hash, const float *vectors, uint32_t count,
                           size_t dim);
int cn_vectors_reuse_open(const char *path, cn_vectors_reuse *out);
/* The vector of a text with this hash, or NULL. */
const float *cn_vectors_reuse_find(const cn_vectors_reuse *r, const uint64_t hash[2]);
void cn_vectors_reuse_close(cn_vectors_reuse *r);

/* ---- reading (cn_vectors_read.c) ---------------------------------------- */

/* Opens the vector part of an opened index: 0 with *out NULL when the
 * generation has none.  Only vectors.json is looked at here; the embedder
 * and the store are loaded on first use, so a process that runs other
 * skills pays nothing for them.  A vector part that is there but unusable
 * (corrupt, made by a backend that is not installed) still opens: the
 * error, naming the file or backend and saying what to do, is returned by
 * every search.  Only CN_ENOMEM fails here. */
int cn_vector_index_open(const struct cn_index *idx, struct cn_vector_index **out);
void cn_vector_index_close(struct cn_vector_index *vi);
/* vectors.json as read (borrowed; NULL when unreadable). */
json_object *cn_vector_index_meta(const struct cn_vector_index *vi);

const cn_vector_services *cn_host_vector_services(void);

#endif /* CN_VECTORS_H */

/* SPDX-License-Identifier: Apache-2.0 */
/* The files of vectors/ besides the store's: the embedder's saved state
 * (embedder.bin) and the text hashes that let a rebuild reuse vectors
 * (reuse.bin), both in the checksummed index container (cn_idxfile.h). */
#include "cn_vectors.h"

#include <stdlib.h>
#include <string.h>

#include "cn_idxfile.h"

#define STATE_MAGIC "CNEMBST\0"
#define REUSE_MAGIC "CNVREUS\0"
#define FILES_VERSION 1
enum { S_STATE = 1 };
enum { S_REUSE_META = 1, S_REUSE_HASH = 2, S_REUSE_VECTORS = 3 };

int cn_vectors_state_write(const char *path, const char *blob, size_t len)
{
    cn_idx_writer *w = NULL;
    int rc = cn_idx_writer_new(STATE_MAGIC, FILES_VERSION, &w);
    if (rc == 0) rc = cn_idx_writer_add(w, S_STATE, blob, len);
    if (rc == 0) rc = cn_idx_writer_write(w, path);
    cn_idx_writer_free(w);
    return rc;
}

int cn_vectors_state_open(const char *path, cn_idx_file **f, const char **blob, size_t *len)
{
    int rc = cn_idx_open(path, STATE_MAGIC, FILES_VERSION, f);
    if (rc < 0) return rc;
    *blob = cn_idx_section(*f, S_STATE, 0, len);
    if (*blob == NULL) *blob = "";
    return 0;
}

int cn_vectors_reuse_write(const char *path, const uint64_t *hash, const float *vectors, uint32_t count,
                           size_t dim)
{
    uint32_t meta[2] = {count, (uint32_t)dim};
    cn_idx_writer *w = NULL;
    int rc = cn_idx_writer_new(REUSE_MAGIC, FILES_VERSION, &w);
    if (rc == 0) rc = cn_idx_writer_add(w, S_REUSE_META, meta, sizeof meta);
    if (rc == 0) rc = cn_idx_writer_add(w, S_REUSE_HASH, hash, 2 * sizeof *hash * count);
    if (rc == 0) rc = cn_idx_writer_add(w, S_REUSE_VECTORS, vectors, sizeof *vectors * count * dim);
    if (rc == 0) rc = cn_idx_writer_write(w, path);
    cn_idx_writer_free(w);
    return rc;
}

static int cmp_hash(const void *a, const void *b, void *data)
{
    const uint64_t *h = data, *x = &h[2 * (size_t)*(const uint32_t *)a], *y = &h[2 * (size_t)*(const uint32_t *)b];
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    if (x[1] != y[1]) return x[1] < y[1] ? -1 : 1;
    return 0;
}

int cn_vectors_reuse_open(const char *path, cn_vectors_reuse *r)
{
    const uint32_t *meta;
    size_t size = 0, hsize = 0, vsize = 0;
    int rc;

    memset(r, 0, sizeof *r);
    if ((rc = cn_idx_open(path, REUSE_MAGIC, FILES_VERSION, &r->f)) < 0) return rc;
    meta = cn_idx_section(r->f, S_REUSE_META, 0, &size);
    r->hash = cn_idx_section(r->f, S_REUSE_HASH, 0, &hsize);
    r->vectors = cn_idx_section(r->f, S_REUSE_VECTORS, 0, &vsize);
    if (meta == NULL || size != 8 || meta[1] > CN_VECTORS_MAX_DIM || hsize != (size_t)meta[0] * 16 ||
        vsize != (size_t)meta[0] * meta[1] * sizeof(float) || (meta[0] && (!r->hash || !r->vectors))) {
        cn_vectors_reuse_close(r);
        return cn_error_set(CN_ECORRUPT, "%s: corrupt index (sections disagree)", path);
    }
    r->count = meta[0];
    r->dim = meta[1];
    r->order = malloc((r->count ? r->count : 1) * sizeof *r->order);
    if (r->order == NULL) {
        cn_vectors_reuse_close(r);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < r->count; i++) r->order[i] = i;
    qsort_r(r->order, r->count, sizeof *r->order, cmp_hash, (void *)r->hash);
    return 0;
}

const float *cn_vectors_reuse_find(const cn_vectors_reuse *r, const uint64_t hash[2])
{
    size_t lo = 0, hi = r->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const uint64_t *h = &r->hash[2 * (size_t)r->order[mid]];
        if (h[0] == hash[0] && h[1] == hash[1]) return r->vectors + (size_t)r->order[mid] * r->dim;
        if (h[0] < hash[0] || (h[0] == hash[0] && h[1] < hash[1])) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

void cn_vectors_reuse_close(cn_vectors_reuse *r)
{
    cn_idx_close(r->f);
    free(r->order);
    memset(r, 0, sizeof *r);
}

/* Sorting strings that repeat (see cn_strsort.h). */
#include "cn_strsort.h"

#include <stdlib.h>
#include <string.h>

#include "../util/cn_util.h"

typedef struct uniq {
    const char *s;
    uint32_t id;      /* first-seen order, until sorted */
} uniq;

static int cmp_uniq(const void *a, const void *b)
{
    return strcmp(((const uniq *)a)->s, ((const uniq *)b)->s);
}

static uint32_t str_hash(const char *s)
{
    uint32_t h = 2166136261u;   /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

int cn_str_ranks(const char *const *strs, size_t n, bool interned, uint32_t *rank, uint32_t *n_ranks)
{
    size_t ns = 64, nu = 0;
    uint32_t *slot, *by_id = NULL;
    uniq *u = malloc((n ? n : 1) * sizeof *u);
    int rc = CN_ENOMEM;

    while (ns < 2 * n) ns *= 2;
    slot = calloc(ns, sizeof *slot);
    if (slot == NULL || u == NULL) goto done;
    for (size_t i = 0; i < n; i++) {
        size_t h = (interned ? (size_t)(((uintptr_t)strs[i] * 0x9E3779B97F4A7C15ull) >> 32) : str_hash(strs[i])) & (ns - 1);
        while (slot[h] && (interned ? u[slot[h] - 1].s != strs[i] : strcmp(u[slot[h] - 1].s, strs[i]) != 0))
            h = (h + 1) & (ns - 1);
        if (!slot[h]) {
            u[nu] = (uniq){strs[i], (uint32_t)nu};
            slot[h] = (uint32_t)++nu;
        }
        rank[i] = slot[h] - 1;   /* the id for now */
    }
    if ((by_id = malloc((nu ? nu : 1) * sizeof *by_id)) == NULL) goto done;
    qsort(u, nu, sizeof *u, cmp_uniq);
    for (size_t r = 0; r < nu; r++) by_id[u[r].id] = (uint32_t)r;
    for (size_t i = 0; i < n; i++) rank[i] = by_id[rank[i]];
    *n_ranks = (uint32_t)nu;
    rc = 0;
done:
    free(slot);
    free(by_id);
    free(u);
    return rc;
}

int cn_rank_order(const uint32_t *rank, size_t n, uint32_t n_ranks, const uint32_t *in, uint32_t *out)
{
    uint32_t *off = calloc((size_t)n_ranks + 1, sizeof *off);
    if (off == NULL) return CN_ENOMEM;
    for (size_t i = 0; i < n; i++) off[rank[i] + 1]++;
    for (uint32_t r = 0; r < n_ranks; r++) off[r + 1] += off[r];
    for (size_t i = 0; i < n; i++) out[off[rank[i]]++] = in[i];
    free(off);
    return 0;
}

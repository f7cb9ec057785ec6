/* SPDX-License-Identifier: Apache-2.0 */
/* Sorting strings that repeat (see cn_strsort.h). */
#include "cn_strsort.h"

#include <stdlib.h>
#include <string.h>

#include "../util/cn_util.h"

typedef struct uniq {
    const char *s;
    uint32_t id;      /* first-seen order, until sorted */
} uniq;

/* ---- multikey quicksort (Bentley and Sedgewick) of distinct strings ----
 * Partitions by one byte at a time into less, equal and greater, and goes
 * one byte deeper only within the equal part: a byte of a shared prefix is
 * read once per partition step, not once per comparison as with strcmp in
 * a comparison sort (names here share long prefixes: "self.", paths). */

static void swap_u(uniq *a, uniq *b)
{
    uniq t = *a;
    *a = *b;
    *b = t;
}

/* Short runs: insertion sort on the bytes from depth d on. */
static void insertion(uniq *a, size_t n, size_t d)
{
    for (size_t i = 1; i < n; i++) {
        uniq x = a[i];
        size_t j = i;
        while (j > 0 && strcmp(a[j - 1].s + d, x.s + d) > 0) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

static unsigned byte_at(const uniq *u, size_t d)
{
    return (unsigned char)u->s[d];
}

static unsigned median3(unsigned x, unsigned y, unsigned z)
{
    if (x < y) return y < z ? y : (x < z ? z : x);
    return x < z ? x : (y < z ? z : y);
}

/* a[0, n) share their first d bytes and are distinct.  Of the three parts
 * the largest is sorted by the loop and the other two by recursion, so the
 * recursion is at most log2(n) deep whatever the input. */
static void mkqs(uniq *a, size_t n, size_t d)
{
    while (n > 16) {
        unsigned v = median3(byte_at(&a[0], d), byte_at(&a[n / 2], d), byte_at(&a[n - 1], d));
        size_t lt = 0, i = 0, gt = n;
        while (i < gt) {
            unsigned c = byte_at(&a[i], d);
            if (c < v) swap_u(&a[lt++], &a[i++]);
            else if (c > v) swap_u(&a[i], &a[--gt]);
            else i++;
        }
        /* [0, lt) below v, [lt, gt) at v, [gt, n) above v; strings that
         * end here (v == 0) are equal, so at most one is in the middle */
        size_t n_lo = lt, n_eq = v == 0 ? 0 : gt - lt, n_hi = n - gt;
        if (n_eq >= n_lo && n_eq >= n_hi) {
            mkqs(a, n_lo, d);
            mkqs(a + gt, n_hi, d);
            a += lt;
            n = n_eq;
            d++;
        } else if (n_lo >= n_hi) {
            mkqs(a + lt, n_eq, d + 1);
            mkqs(a + gt, n_hi, d);
            n = n_lo;
        } else {
            mkqs(a, n_lo, d);
            mkqs(a + lt, n_eq, d + 1);
            a += gt;
            n = n_hi;
        }
    }
    insertion(a, n, d);
}

static uint32_t str_hash(const char *s)
{
    uint32_t h = 2166136261u;   /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static size_t ptr_hash(const char *p)
{
    return (size_t)(((uintptr_t)p * 0x9E3779B97F4A7C15ull) >> 32);
}

int cn_str_ranks(const char *const *strs, size_t n, bool interned, uint32_t *rank, uint32_t *n_ranks)
{
    size_t ns = 64, nu = 0;
    /* slot: distinct strings by pointer (interned) or by bytes; pslot, for
     * strings not known to be interned: ids by pointer first, as the same
     * pointer often comes again and is then found without reading it */
    uint32_t *slot, *pslot = NULL, *by_id = NULL;
    const char **pkey = NULL;
    uniq *u = malloc((n ? n : 1) * sizeof *u);
    int rc = CN_ENOMEM;

    while (ns < n + n / 2) ns *= 2;   /* at most two thirds full */
    slot = calloc(ns, sizeof *slot);
    if (!interned && ((pslot = calloc(ns, sizeof *pslot)) == NULL || (pkey = malloc(ns * sizeof *pkey)) == NULL))
        goto done;
    if (slot == NULL || u == NULL) goto done;
    for (size_t i = 0; i < n; i++) {
        size_t h, ph = 0;
        if (!interned) {
            ph = ptr_hash(strs[i]) & (ns - 1);
            while (pslot[ph] && pkey[ph] != strs[i]) ph = (ph + 1) & (ns - 1);
            if (pslot[ph]) {
                rank[i] = pslot[ph] - 1;
                continue;
            }
        }
        h = (interned ? ptr_hash(strs[i]) : str_hash(strs[i])) & (ns - 1);
        while (slot[h] && (interned ? u[slot[h] - 1].s != strs[i] : strcmp(u[slot[h] - 1].s, strs[i]) != 0))
            h = (h + 1) & (ns - 1);
        if (!slot[h]) {
            u[nu] = (uniq){strs[i], (uint32_t)nu};
            slot[h] = (uint32_t)++nu;
        }
        rank[i] = slot[h] - 1;   /* the id for now */
        if (!interned) {
            pslot[ph] = slot[h];
            pkey[ph] = strs[i];
        }
    }
    if ((by_id = malloc((nu ? nu : 1) * sizeof *by_id)) == NULL) goto done;
    mkqs(u, nu, 0);
    for (size_t r = 0; r < nu; r++) by_id[u[r].id] = (uint32_t)r;
    for (size_t i = 0; i < n; i++) rank[i] = by_id[rank[i]];
    *n_ranks = (uint32_t)nu;
    rc = 0;
done:
    free(slot);
    free(pslot);
    free(pkey);
    free(by_id);
    free(u);
    return rc;
}

int cn_str_ranks_merge(const char *const *olds, uint32_t na, const char *const *fresh, uint32_t nf,
                       uint32_t *orank, uint32_t *frank, uint32_t *n_ranks)
{
    uint32_t nd = 0, *pos = NULL, *comb = NULL, r = 0, jr = 0;
    const char **rep = NULL;
    bool *eq = NULL;
    int rc = CN_ENOMEM;

    if (cn_str_ranks(fresh, nf, false, frank, &nd) < 0) return CN_ENOMEM;
    rep = malloc((nd ? nd : 1) * sizeof *rep);
    pos = malloc((nd ? nd : 1) * sizeof *pos);
    comb = malloc((nd ? nd : 1) * sizeof *comb);
    eq = malloc((nd ? nd : 1) * sizeof *eq);
    if (rep == NULL || pos == NULL || comb == NULL || eq == NULL) goto done;
    for (uint32_t j = 0; j < nf; j++) rep[frank[j]] = fresh[j];
    for (uint32_t d = 0; d < nd; d++) {   /* the first old string >= rep[d] */
        uint32_t lo = 0, hi = na;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (strcmp(olds[mid], rep[d]) < 0) lo = mid + 1;
            else hi = mid;
        }
        pos[d] = lo;
        eq[d] = lo < na && strcmp(olds[lo], rep[d]) == 0;
    }
    /* pos[] does not decrease with d (rep is sorted): one walk lays both
     * sets out in order */
    for (uint32_t i = 0; i < na; i++) {
        while (jr < nd && pos[jr] == i && !eq[jr]) comb[jr++] = r++;
        if (jr < nd && pos[jr] == i && eq[jr]) comb[jr++] = r;
        orank[i] = r++;
    }
    while (jr < nd) comb[jr++] = r++;
    for (uint32_t j = 0; j < nf; j++) frank[j] = comb[frank[j]];
    *n_ranks = r;
    rc = 0;
done:
    free(rep);
    free(pos);
    free(comb);
    free(eq);
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

/* SPDX-License-Identifier: Apache-2.0 */
/* Sorting many strings that repeat: each distinct string takes part in
 * the comparison sort once, however often it occurs, and the occurrences
 * are then put in order by a counting sort.  Used by the index writers,
 * whose tables are sorted by names that thousands of nodes or edges share
 * ("get", "__init__", "len"). */
#ifndef CN_STRSORT_H
#define CN_STRSORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* rank[i] = the position of strs[i] among the distinct strings of strs in
 * byte order (strcmp), equal strings equal ranks; *n_ranks = how many
 * distinct strings there are.  With `interned`, equal strings are known to
 * share one pointer, so they are told apart without reading them.
 * CN_ENOMEM (nothing set). */
int cn_str_ranks(const char *const *strs, size_t n, bool interned, uint32_t *rank, uint32_t *n_ranks);

/* Ranks for the union of two string sets, consistent with byte order:
 * olds[0, na) distinct and sorted (a previous index's), fresh[0, nf) any
 * (repeats allowed).  orank[i] is olds[i]'s, frank[j] fresh[j]'s; equal
 * strings get one rank; every rank < *n_ranks.  Only the distinct fresh
 * strings are sorted, and each is placed among the old by binary search:
 * a re-compile's few new names cost a few comparisons each.  CN_ENOMEM. */
int cn_str_ranks_merge(const char *const *olds, uint32_t na, const char *const *fresh, uint32_t nf,
                       uint32_t *orank, uint32_t *frank, uint32_t *n_ranks);

/* out[] = in[] ordered by rank[i] (every rank < n_ranks), ties in their
 * order in `in`: a stable counting sort.  CN_ENOMEM. */
int cn_rank_order(const uint32_t *rank, size_t n, uint32_t n_ranks, const uint32_t *in, uint32_t *out);

#endif /* CN_STRSORT_H */

/* SPDX-License-Identifier: Apache-2.0 */
/* Candidates of the rerank skills (llm_rerank, crossencoder_rerank): the
 * caller's `nodes` (results of a retrieval skill) or the BM25 top
 * `candidates` for the query, each with the text a model reads, and the
 * ranked result list made from their scores.  Compiled into the rerank
 * skills only; like cn_skill_util, everything goes through the host. */
#ifndef CN_SKILL_CANDS_H
#define CN_SKILL_CANDS_H

#include <stddef.h>
#include <stdint.h>

#include <codenib/index.h>
#include <codenib/skill.h>

/* One candidate.  The two skills score differently, so each uses the
 * fields it needs; both rank the results by `score`. */
typedef struct cn_sc_cand {
    uint32_t node;
    char *text;        /* the node's content (host->alloc) */
    size_t len;
    double score;      /* what the results are ranked by */
    double sum;        /* llm_rerank: sum of its scores over the windows it was in */
    unsigned seen;     /* llm_rerank: how many windows */
    double first;      /* its first-stage score (the caller's "score", or BM25's) */
    int has_first;     /* whether `first` is known */
} cn_sc_cand;

/* Candidates in their given (or BM25) order: the order breaks ties. */
typedef struct cn_sc_cands {
    cn_sc_cand *v;
    size_t n, cap;
} cn_sc_cands;

void cn_sc_free(const cn_host *h, cn_sc_cands *cs);

/* The index (read through h->index), what `needs` adds to it, and the
 * host's model client. */
int cn_sc_require(const cn_host *h, const cn_skill_context *ctx, unsigned needs, cn_error *err);

/* top_k (SIZE_MAX when null, else at least 1) and max_chars_per_node
 * (1 to 1000000, default 2000), checked in that order. */
int cn_sc_arg_limits(const cn_host *h, const cn_json *args, size_t *top_k, size_t *max_chars,
                     cn_error *err);

/* Fills cs from `nodes` when given (even empty), else from the BM25 top
 * `candidates` for query.  Nodes without content and repeats are left
 * out; cs is the caller's to free, also on failure. */
int cn_sc_collect(const cn_host *h, const cn_skill_context *ctx, const cn_json *args, const char *query,
                  cn_sc_cands *cs, cn_error *err);

/* The byte length of the first max_chars characters (UTF-8 code points)
 * of c's text, so a cut never splits a character. */
size_t cn_sc_shown_len(const cn_sc_cand *c, size_t max_chars);

/* The top_k candidates by score, highest first (ties in candidate order),
 * as result objects, with their whole text as "content" when with_content. */
int cn_sc_emit(const cn_host *h, const struct cn_index *idx, const cn_sc_cands *cs, size_t top_k,
               int with_content, char **result_json, cn_error *err);

/* When the model could not rerank (the endpoint failed, or its answer
 * could not be read): the top_k candidates in their first-stage order,
 * each with its first-stage score when known and "rerank_error": why, so
 * the caller keeps a usable list and sees that it was not reranked.  The
 * failure is logged as a warning too. */
int cn_sc_emit_unranked(const cn_host *h, const struct cn_index *idx, const cn_sc_cands *cs, size_t top_k,
                        int with_content, const char *why, char **result_json, cn_error *err);

/* Whether a rerank failure with this code leaves the first-stage order
 * (cn_sc_emit_unranked) rather than failing the call: any failure of the
 * model or of its answer; not running out of memory. */
int cn_sc_rerank_recoverable(int code);

#endif /* CN_SKILL_CANDS_H */

/* SPDX-License-Identifier: Apache-2.0 */
/* BM25 full-text index over numbered documents: a builder that tokenizes
 * text (cn_tokenize.h) into postings and writes one index file, and a
 * read-only reader that maps it and answers top-k queries.
 *
 * Scoring is Okapi BM25 over query tokens (a token repeated in the query
 * contributes once per occurrence):
 *   idf(t)      = ln(1 + (N - df + 0.5) / (df + 0.5))
 *   score(d, q) = sum over t in q of
 *                 idf(t) * tf*(k1+1) / (tf + k1*(1 - b + b*dl/avgdl))
 * where N is the document count, df the number of documents containing t,
 * tf the count of t in d, dl the token count of d and avgdl the mean dl.
 *
 * File layout: see the comment at the top of cn_bm25_build.c. */
#ifndef CN_BM25_H
#define CN_BM25_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CN_BM25_MAGIC "CNBM25\0\0"
#define CN_BM25_VERSION 2u

/* Section ids and the META record size, for tools and tests that inspect
 * or craft files (layout in cn_bm25_build.c). */
enum {
    CN_BM25_SEC_META = 1,
    CN_BM25_SEC_TERM_OFFS = 2,
    CN_BM25_SEC_TERMS = 3,
    CN_BM25_SEC_POST_OFFS = 4,
    CN_BM25_SEC_POSTINGS = 5,
    CN_BM25_SEC_DOC_LEN = 6,
    CN_BM25_SEC_TFS = 7,
    CN_BM25_SEC_TF_BIG = 8
};
#define CN_BM25_META_SIZE 64
/* A posting's term frequency in TFS, when it is this or more: the
 * frequency itself is in TF_BIG. */
#define CN_BM25_TF_BIG 255u

/* A TF_BIG entry: the posting (its index in POSTINGS) and its frequency. */
typedef struct cn_bm25_tf_big {
    uint64_t at;
    uint32_t tf, zero;
} cn_bm25_tf_big;

/* ---- building ------------------------------------------------------------ */
typedef struct cn_bm25_builder cn_bm25_builder;

/* k1 >= 0 and 0 <= b <= 1 (finite), else CN_EINVAL.  Usual: 1.2, 0.75. */
int cn_bm25_builder_new(double k1, double b, cn_bm25_builder **out);
/* Tokenizes text[0, len) and adds its tokens to document `doc`.  Documents
 * come in non-decreasing order; several calls for one document accumulate
 * (name, path, body).  A doc lower than the previous one, or UINT32_MAX, is
 * CN_EINVAL.  After any failure the builder should only be freed. */
int cn_bm25_add(cn_bm25_builder *bld, uint32_t doc, const char *text, size_t len);
/* Adds `tf` occurrences of one already-tokenized term (as cn_tokenize emits
 * it) to document `doc`, with the same ordering rule.  Adding a document's
 * distinct terms with their counts gives the same file as adding its text:
 * the compiler tokenizes files in parallel and keeps the counts of
 * unchanged files between builds. */
int cn_bm25_add_term(cn_bm25_builder *bld, uint32_t doc, const char *term, size_t len, uint32_t tf);
/* The same in two steps, for a caller that adds one term to many
 * documents: intern it once, then add by handle.  A handle stays valid for
 * the builder's life. */
int cn_bm25_intern(cn_bm25_builder *bld, const char *term, size_t len, uint32_t *handle);
int cn_bm25_add_handle(cn_bm25_builder *bld, uint32_t doc, uint32_t handle, uint32_t tf);
/* Adds a whole document's counts at once: pairs[2i] indexes `handles` (a
 * term interned with cn_bm25_intern), pairs[2i+1] is its count, for i in
 * [0, n).  The same as one cn_bm25_add_handle per pair, at a fraction of
 * the cost.  CN_EINVAL names the pair that is out of range. */
int cn_bm25_add_counts(cn_bm25_builder *bld, uint32_t doc, const uint32_t *handles, size_t n_handles,
                       const uint32_t *pairs, size_t n);
/* Writes the index for documents [0, n_docs) atomically to `path`.  n_docs
 * must exceed every added doc (CN_EINVAL otherwise); documents never added
 * have length 0.  The bytes depend only on k1, b, n_docs and the sequence
 * of (doc, tokens) added, so an incremental build that feeds the same
 * documents produces the same file as a full one.  The builder stays
 * usable (writing twice gives identical files). */
int cn_bm25_write(cn_bm25_builder *bld, uint32_t n_docs, const char *path);
void cn_bm25_builder_free(cn_bm25_builder *bld);

typedef struct cn_bm25 cn_bm25;
/* An incremental build: writes to `path` the index of documents [0, n_docs)
 * made of the previous index `prev`'s documents that are kept -- document
 * d becomes remap[d], or is dropped when remap[d] is UINT32_MAX; kept ones
 * keep their order -- and the builder's documents (the new and changed
 * ones, already numbered in the new order).  The bytes are those a full
 * build of the same documents would write.  CN_EINVAL when k1 or b differ
 * from prev's, CN_ECORRUPT when prev is inconsistent (a posting out of
 * range or out of order) or a builder document is also a kept one: the
 * caller then builds in full. */
int cn_bm25_write_merged(cn_bm25_builder *bld, const cn_bm25 *prev, const uint32_t *remap, uint32_t n_docs,
                         const char *path);

/* ---- reading ------------------------------------------------------------- */

/* Maps and validates `path`: the container checks (magic, version, size,
 * checksum) and this format's own consistency (section sizes agree, offsets
 * monotonic and in bounds, terms sorted, counts add up).  Errors:
 * CN_ENOTFOUND, CN_EUNSUPPORTED (another format version), CN_ECORRUPT
 * naming the path and what is wrong, CN_ENOMEM, CN_EIO. */
int cn_bm25_open(const char *path, cn_bm25 **out);
void cn_bm25_close(cn_bm25 *idx);

/* Semi-private, for cn_bm25_write_merged: the mapped arrays of an index
 * (layout in cn_bm25_build.c), valid until cn_bm25_close. */
typedef struct cn_bm25__view {
    uint32_t n_docs;
    size_t n_terms;
    double k1, b;
    const uint32_t *term_offs;
    const unsigned char *terms;
    const uint64_t *post_offs;
    const uint32_t *postings;          /* documents */
    const uint8_t *tfs;
    const cn_bm25_tf_big *tf_big;      /* by posting */
    size_t n_tf_big;
    const uint32_t *doc_len;
} cn_bm25__view;
void cn_bm25__view_of(const cn_bm25 *idx, cn_bm25__view *v);
/* Posting p's term frequency (p < the index's posting count). */
uint32_t cn_bm25__tf(const cn_bm25__view *v, uint64_t p);
/* The first TF_BIG entry of a posting >= p (n_tf_big when none). */
size_t cn_bm25__big_from(const cn_bm25__view *v, uint64_t p);

uint32_t cn_bm25_doc_count(const cn_bm25 *idx);
double cn_bm25_k1(const cn_bm25 *idx);
double cn_bm25_b(const cn_bm25 *idx);
double cn_bm25_avgdl(const cn_bm25 *idx);
size_t cn_bm25_term_count(const cn_bm25 *idx);
/* Number of documents containing the exact token `term` (already
 * lowercased, as the tokenizer emits it); 0 when absent. */
uint32_t cn_bm25_df(const cn_bm25 *idx, const char *term);
/* Token count of document `doc` (0 when out of range). */
uint32_t cn_bm25_doc_len(const cn_bm25 *idx, uint32_t doc);

typedef bool (*cn_bm25_filter)(uint32_t doc, void *data);

typedef struct cn_bm25_hit {
    uint32_t doc;
    double score;
} cn_bm25_hit;

/* BM25 over groups of documents: a group (a file, say) is scored as one
 * document made of its members (group_of[d] for document d; UINT32_MAX
 * leaves d out), so its term frequency is the sum of its members', its
 * length the sum of their lengths, df counts groups and N is n_groups.
 * Each distinct query token counts once (a long question repeats its
 * words; a group's score should not follow how often it does).  Writes
 * scores[0, n_groups) (0 for a group that matches nothing).  `group_of`
 * has cn_bm25_doc_count(idx) entries.  CN_ENOMEM only. */
int cn_bm25_group_scores(const cn_bm25 *idx, const char *query, const uint32_t *group_of, uint32_t n_groups,
                         double *scores);
/* Semi-private, for cn_bm25_group_scores: the posting range [*lo, *hi) of
 * a token; false when the index does not hold it. */
bool cn_bm25__term_range(const cn_bm25 *idx, const char *term, size_t len, uint64_t *lo, uint64_t *hi);

/* Top-k documents for `query` (NUL-terminated; NULL or no known token gives
 * 0 hits, not an error): only docs with score > 0 for which `filter`
 * returns true (filter NULL = all), sorted by score descending, then doc
 * ascending.  `hits` has room for k entries; *n_hits receives how many were
 * filled.  The filter is called only for documents that would enter the
 * current top k, from the calling thread.
 *
 * The reader is never modified after open, so any number of threads may
 * search one reader at once.  This entry point allocates a per-call score
 * array of doc_count doubles; hot loops should use a scratch instead. */
int cn_bm25_search(const cn_bm25 *idx, const char *query, size_t k, cn_bm25_filter filter,
                   void *fdata, cn_bm25_hit *hits, size_t *n_hits);

/* Reusable per-thread working memory for searches: a score array that is
 * kept all-zero between calls (only the documents a query touched are
 * reset), so a search costs O(postings read), not O(doc_count).  One
 * scratch serves any number of readers, but only one search at a time. */
typedef struct cn_bm25_scratch cn_bm25_scratch;

int cn_bm25_scratch_new(cn_bm25_scratch **out);
void cn_bm25_scratch_free(cn_bm25_scratch *s);
/* As cn_bm25_search, using `s` (grown as needed for idx). */
int cn_bm25_search_scratch(const cn_bm25 *idx, cn_bm25_scratch *s, const char *query, size_t k,
                           cn_bm25_filter filter, void *fdata, cn_bm25_hit *hits,
                           size_t *n_hits);

#endif /* CN_BM25_H */

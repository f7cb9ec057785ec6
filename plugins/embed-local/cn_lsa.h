/* SPDX-License-Identifier: Apache-2.0 */
/* embed-local's model: latent semantic analysis (LSA) of the repository's
 * term-document matrix.
 *
 * fit() turns the documents into a tf-idf matrix A (one L2-normalised row
 * per document, one column per vocabulary term) and computes its truncated
 * SVD A ~ U_k S_k V_k^T by randomized range finding (Halko, Martinsson and
 * Tropp 2011).  A text is then embedded as x V_k S_k^-1 (normalised),
 * where x is its tf-idf row: its coordinates along the k strongest
 * co-occurrence directions of the repository, each direction weighted
 * alike (a document of the corpus lands on its row of U_k).  Terms that
 * occur in the same documents load the same directions, so a query can
 * land next to a document it shares no literal word with.
 *
 * The model is read-only once fitted or loaded: embedding from several
 * threads at once is safe.  Everything here depends only on the input
 * bytes and the parameters (not on the thread count), so two fits of the
 * same documents give the same model, bit for bit. */
#ifndef CN_LSA_H
#define CN_LSA_H

#include <stddef.h>
#include <stdint.h>

#include <codenib/errors.h>

/* Bounds of the options, so a typo cannot ask for a 10^9 x 10^9 matrix. */
#define CN_LSA_MAX_DIM 1024
#define CN_LSA_MAX_TERMS 1000000u
#define CN_LSA_MAX_POWER_ITERS 10
#define CN_LSA_MAX_THREADS 64
#define CN_LSA_OVERSAMPLE 10
/* Tokens are at most this long (the host tokenizer truncates them). */
#define CN_LSA_MAX_TERM_LEN 256

/* host->text->tokenize: calls fn for each token of text[0, len). */
typedef int (*cn_lsa_tokenize_fn)(const char *text, size_t len,
                                  int (*fn)(const char *tok, size_t len, void *data), void *data);

typedef struct cn_lsa_params {
    uint32_t dim;           /* wanted rank (the model may end up smaller) */
    uint32_t min_df;        /* a term must occur in at least this many documents */
    double max_df_ratio;    /* ... and in at most this share of them */
    uint32_t max_terms;     /* keep the most frequent terms (by document frequency) */
    uint32_t power_iters;   /* subspace iterations of the range finder */
    uint64_t seed;          /* of the random test matrix */
    uint32_t threads;       /* >= 1 */
    /* min_df and max_df_ratio are defaults, not the user's: when they leave
     * no term (a repository of a few files), every term is kept instead of
     * failing. */
    int relax_df;
} cn_lsa_params;

typedef struct cn_lsa_model {
    uint32_t n_terms;
    uint32_t dim;           /* rank actually kept */
    uint32_t n_docs;        /* documents learned from (informative) */
    char *pool;             /* the terms in strictly ascending byte order, each NUL-terminated */
    size_t pool_len;
    uint32_t *term_off;     /* term i starts at pool + term_off[i] */
    float *idf;             /* [n_terms] */
    float *sigma;           /* [dim] singular values, descending */
    float *proj;            /* [n_terms * dim]: V_k S_k^-1, row t is term t's image */
    uint32_t *slots;        /* term lookup: open addressing, term index + 1, 0 = empty */
    size_t slot_mask;
} cn_lsa_model;

/* Learns a model from docs[0, n) (NUL-terminated texts).  Fails with
 * CN_EINVAL and a message saying what to change when the documents leave
 * nothing to learn (no documents, no words, no term shared by min_df of
 * them). */
int cn_lsa_fit(const cn_lsa_params *p, cn_lsa_tokenize_fn tokenize, const char *const *docs, size_t n,
               cn_lsa_model **out, cn_error *err);

/* A model with n_terms, dim, pool, term_off, idf, sigma and proj filled
 * (and allocated with malloc): builds the lookup table. */
int cn_lsa_model_index(cn_lsa_model *m, cn_error *err);

/* Index of a term, or -1. */
long cn_lsa_term_find(const cn_lsa_model *m, const char *tok, size_t len);

/* Embeds text[0, len) into out[dim]: the tf-idf row of the text projected
 * on the term factors, L2-normalised; all zeros when the text has no term
 * of the vocabulary. */
int cn_lsa_embed(const cn_lsa_model *m, cn_lsa_tokenize_fn tokenize, const char *text, size_t len,
                 float *out, cn_error *err);

/* Embeds texts[0, n) (NULL counts as "") into out[n * dim], spreading a
 * large batch over up to `threads` threads; each row is what
 * cn_lsa_embed() gives. */
int cn_lsa_embed_batch(const cn_lsa_model *m, cn_lsa_tokenize_fn tokenize, const char *const *texts, size_t n,
                       float *out, unsigned threads, cn_error *err);

void cn_lsa_model_free(cn_lsa_model *m);

/* 64-bit checksum of a byte range, chained through `h` (start with
 * CN_LSA_HASH_SEED): any change of one aligned 8-byte word changes it. */
#define CN_LSA_HASH_SEED 0x6a09e667f3bcc909ull
uint64_t cn_lsa_checksum(uint64_t h, const void *data, size_t len);

#endif /* CN_LSA_H */

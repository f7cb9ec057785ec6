/* SPDX-License-Identifier: Apache-2.0 */
/* BM25 index builder (API in cn_bm25.h).
 *
 * File: a cn_idxfile container, magic "CNBM25\0\0", format version 1.
 * All integers and doubles are little-endian (host order; indexes are not
 * portable across endianness, like the container's checksum).  Sections:
 *
 *   1 META       64 bytes:
 *                  0 u32 n_docs          4 u32 reserved (0)
 *                  8 u64 n_terms        16 u64 n_postings
 *                 24 u64 total_len (sum of all document lengths)
 *                 32 f64 k1             40 f64 b
 *                 48 f64 avgdl = total_len / n_docs (0 when n_docs == 0)
 *                 56 u64 reserved (0)
 *   2 TERM_OFFS  u32 x (n_terms + 1): term i is TERMS[offs[i], offs[i+1]);
 *                offs[0] = 0, strictly increasing, offs[n_terms] = size of
 *                TERMS.
 *   3 TERMS      the term bytes back to back, no separators, sorted
 *                bytewise (unsigned; a prefix sorts first), no duplicates,
 *                so a reader finds a term by binary search.
 *   4 POST_OFFS  u64 x (n_terms + 1): term i's postings are
 *                POSTINGS[offs[i], offs[i+1]) (in postings, not bytes);
 *                offs[0] = 0, strictly increasing (every term occurs), each
 *                range at most n_docs long, offs[n_terms] = n_postings.
 *                The range length is the term's df.
 *   5 POSTINGS   u32 x n_postings: the documents, per term by increasing
 *                doc.  Fixed width rather than delta/varint: a query is a
 *                tight loop over a few long lists, and decoding costs more
 *                than the bytes saved at this scale.
 *   6 DOC_LEN    u32 x n_docs: tokens per document (0 if never added).
 *   7 TFS        u8 x n_postings: each posting's term frequency, or
 *                CN_BM25_TF_BIG (255) for one of 255 or more,
 *   8 TF_BIG     whose frequency is here: {u64 posting, u32 tf, u32 0}
 *                by increasing posting (empty as a rule).  Five bytes a
 *                posting instead of eight: what a re-compile writes (and
 *                syncs) again is mostly postings.
 *
 * Determinism: terms are sorted, postings follow document order, avgdl is
 * computed from integer totals, and padding is zero, so the bytes depend
 * only on the input. */
#include "cn_bm25.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cn_idxfile.h"
#include "cn_tokenize.h"

typedef struct term {
    uint32_t str;     /* offset of the bytes in bld->strs */
    uint32_t len;
    uint32_t hash;    /* low bits of the hash, to skip most memcmp calls */
    uint32_t n;       /* postings (documents holding it) */
    uint64_t last;    /* its latest posting's index in bld->log + 1; 0: none */
} term;

/* A posting as it was added: documents come in non-decreasing order, so a
 * stable counting sort by term at write time gives each term's postings in
 * document order, with no per-term arrays to grow while building. */
typedef struct logged {
    uint32_t term, doc, tf;
} logged;

struct cn_bm25_builder {
    double k1, b;
    term *terms;
    size_t n_terms, terms_cap;
    uint32_t *slots;  /* open addressing: term index + 1, 0 = empty */
    size_t n_slots;   /* power of two */
    char *strs;
    size_t strs_len, strs_cap;
    uint32_t *dl;     /* per added document, indexed by doc */
    size_t dl_len, dl_cap;
    logged *log;
    size_t log_cap;
    uint64_t n_postings;
    bool have_doc;
    uint32_t last_doc;
};

static uint64_t hash_bytes(const char *s, size_t n)
{
    return cn_hash64(s, n, 0x42d25);
}

int cn_bm25_builder_new(double k1, double b, cn_bm25_builder **out)
{
    cn_bm25_builder *bld;

    *out = NULL;
    if (!isfinite(k1) || k1 < 0 || !isfinite(b) || b < 0 || b > 1)
        return cn_error_set(CN_EINVAL, "bm25: k1 must be >= 0 and b in [0, 1] (got k1=%g b=%g)",
                            k1, b);
    bld = calloc(1, sizeof *bld);
    if (bld == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    bld->k1 = k1;
    bld->b = b;
    bld->n_slots = 1024;
    bld->slots = calloc(bld->n_slots, sizeof *bld->slots);
    if (bld->slots == NULL) {
        free(bld);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    *out = bld;
    return 0;
}

void cn_bm25_builder_free(cn_bm25_builder *bld)
{
    if (bld == NULL) return;
    free(bld->log);
    free(bld->terms);
    free(bld->slots);
    free(bld->strs);
    free(bld->dl);
    free(bld);
}

/* Doubles the table when it is half full, keeping probe chains short. */
static int grow_slots(cn_bm25_builder *bld)
{
    size_t n = bld->n_slots * 2, mask = n - 1;
    uint32_t *slots = calloc(n, sizeof *slots);

    if (slots == NULL) return cn_error_set(CN_ENOMEM, "bm25: out of memory (term table)");
    for (size_t i = 0; i < bld->n_terms; i++) {
        size_t j = bld->terms[i].hash & mask;
        while (slots[j] != 0) j = (j + 1) & mask;
        slots[j] = (uint32_t)(i + 1);
    }
    free(bld->slots);
    bld->slots = slots;
    bld->n_slots = n;
    return 0;
}

/* Finds or creates the term for tok. */
static int intern(cn_bm25_builder *bld, const char *tok, size_t len, term **out)
{
    uint32_t h = (uint32_t)hash_bytes(tok, len);
    size_t mask = bld->n_slots - 1, j = h & mask;
    term *t;

    while (bld->slots[j] != 0) {
        t = &bld->terms[bld->slots[j] - 1];
        if (t->hash == h && t->len == len && memcmp(bld->strs + t->str, tok, len) == 0) {
            *out = t;
            return 0;
        }
        j = (j + 1) & mask;
    }
    if (bld->n_terms >= UINT32_MAX - 1 || bld->strs_len + len > UINT32_MAX)
        return cn_error_set(CN_EINVAL, "bm25: too many distinct terms");
    if (bld->strs_len + len > bld->strs_cap) {
        size_t cap = bld->strs_cap ? bld->strs_cap * 2 : 65536;
        char *p;
        while (cap < bld->strs_len + len) cap *= 2;
        p = realloc(bld->strs, cap);
        if (p == NULL) return cn_error_set(CN_ENOMEM, "bm25: out of memory (terms)");
        bld->strs = p;
        bld->strs_cap = cap;
    }
    if (bld->n_terms == bld->terms_cap) {
        size_t cap = bld->terms_cap ? bld->terms_cap * 2 : 1024;
        term *p = realloc(bld->terms, cap * sizeof *p);
        if (p == NULL) return cn_error_set(CN_ENOMEM, "bm25: out of memory (terms)");
        bld->terms = p;
        bld->terms_cap = cap;
    }
    t = &bld->terms[bld->n_terms];
    memset(t, 0, sizeof *t);
    t->str = (uint32_t)bld->strs_len;
    t->len = (uint32_t)len;
    t->hash = h;
    memcpy(bld->strs + bld->strs_len, tok, len);
    bld->strs_len += len;
    bld->slots[j] = (uint32_t)(++bld->n_terms);
    if (bld->n_terms * 2 > bld->n_slots) {
        int rc = grow_slots(bld);
        if (rc < 0) return rc;
    }
    *out = &bld->terms[bld->n_terms - 1];
    return 0;
}

typedef struct add_ctx {
    cn_bm25_builder *bld;
    uint32_t doc;
} add_ctx;

static int add_posting(cn_bm25_builder *bld, term *t, uint32_t doc, uint32_t tf);

/* Adds `tf` occurrences of a term to document `doc`. */
static int add_occurrences(cn_bm25_builder *bld, uint32_t doc, const char *tok, size_t len, uint32_t tf)
{
    term *t = NULL;
    int rc = intern(bld, tok, len, &t);

    if (rc < 0) return rc;
    /* tf <= dl, so checking the document length covers both counters. */
    if (bld->dl[doc] > UINT32_MAX - tf)
        return cn_error_set(CN_EINVAL, "bm25: document %u has too many tokens", doc);
    bld->dl[doc] += tf;
    return add_posting(bld, t, doc, tf);
}

static int add_posting(cn_bm25_builder *bld, term *t, uint32_t doc, uint32_t tf)
{
    /* Documents arrive in non-decreasing order, so this document's posting,
     * if any, is the term's last one. */
    if (t->last != 0 && bld->log[t->last - 1].doc == doc) {
        bld->log[t->last - 1].tf += tf;
        return 0;
    }
    if (t->n == UINT32_MAX) return cn_error_set(CN_EINVAL, "bm25: term has too many postings");
    if (bld->n_postings == bld->log_cap) {
        size_t cap = bld->log_cap ? bld->log_cap * 2 : 65536;
        logged *p = cap <= SIZE_MAX / sizeof *p ? realloc(bld->log, cap * sizeof *p) : NULL;
        if (p == NULL) return cn_error_set(CN_ENOMEM, "bm25: out of memory (postings)");
        bld->log = p;
        bld->log_cap = cap;
    }
    bld->log[bld->n_postings] = (logged){(uint32_t)(t - bld->terms), doc, tf};
    t->last = ++bld->n_postings;
    t->n++;
    return 0;
}

static int add_token(const char *tok, size_t len, void *data)
{
    add_ctx *c = data;
    return add_occurrences(c->bld, c->doc, tok, len, 1);
}

/* Checks the document order and makes room for `doc`'s length. */
static int open_doc(cn_bm25_builder *bld, uint32_t doc)
{
    if (doc == UINT32_MAX) return cn_error_set(CN_EINVAL, "bm25: document id %u out of range", doc);
    if (bld->have_doc && doc < bld->last_doc)
        return cn_error_set(CN_EINVAL,
                            "bm25: documents must be added in non-decreasing order "
                            "(document %u after %u)",
                            doc, bld->last_doc);
    if (doc >= bld->dl_len) {
        if (doc >= bld->dl_cap) {
            size_t cap = bld->dl_cap ? bld->dl_cap : 1024;
            uint32_t *p;
            while (cap <= doc) cap *= 2;
            p = realloc(bld->dl, cap * sizeof *p);
            if (p == NULL) return cn_error_set(CN_ENOMEM, "bm25: out of memory (documents)");
            bld->dl = p;
            bld->dl_cap = cap;
        }
        memset(bld->dl + bld->dl_len, 0, ((size_t)doc + 1 - bld->dl_len) * sizeof *bld->dl);
        bld->dl_len = (size_t)doc + 1;
    }
    bld->have_doc = true;
    bld->last_doc = doc;
    return 0;
}

int cn_bm25_intern(cn_bm25_builder *bld, const char *term_text, size_t len, uint32_t *handle)
{
    term *t = NULL;
    int rc;
    if (len == 0) return cn_error_set(CN_EINVAL, "bm25: empty term");
    if ((rc = intern(bld, term_text, len, &t)) < 0) return rc;
    *handle = (uint32_t)(t - bld->terms);
    return 0;
}

int cn_bm25_add_handle(cn_bm25_builder *bld, uint32_t doc, uint32_t handle, uint32_t tf)
{
    term *t;
    int rc;
    if (tf == 0) return 0;
    if (handle >= bld->n_terms) return cn_error_set(CN_EINVAL, "bm25: no term %u", handle);
    if ((rc = open_doc(bld, doc)) < 0) return rc;
    t = &bld->terms[handle];
    if (bld->dl[doc] > UINT32_MAX - tf)
        return cn_error_set(CN_EINVAL, "bm25: document %u has too many tokens", doc);
    bld->dl[doc] += tf;
    return add_posting(bld, t, doc, tf);
}

int cn_bm25_add_counts(cn_bm25_builder *bld, uint32_t doc, const uint32_t *handles, size_t n_handles,
                       const uint32_t *pairs, size_t n)
{
    uint64_t dl;
    int rc;
    if (n == 0) return 0;
    if ((rc = open_doc(bld, doc)) < 0) return rc;
    if (bld->n_postings + n > bld->log_cap) {
        size_t cap = bld->log_cap ? bld->log_cap : 65536;
        logged *p;
        while (cap < bld->n_postings + n) cap *= 2;
        if ((p = cap <= SIZE_MAX / sizeof *p ? realloc(bld->log, cap * sizeof *p) : NULL) == NULL)
            return cn_error_set(CN_ENOMEM, "bm25: out of memory (postings)");
        bld->log = p;
        bld->log_cap = cap;
    }
    dl = bld->dl[doc];
    for (size_t i = 0; i < n; i++) {
        uint32_t ord = pairs[2 * i], tf = pairs[2 * i + 1], h;
        term *t;
        if (ord >= n_handles || (h = handles[ord]) >= bld->n_terms)
            return cn_error_set(CN_EINVAL, "bm25: document %u: term %u out of range", doc, ord);
        if (tf == 0) continue;
        t = &bld->terms[h];
        dl += tf;
        if (t->last != 0 && bld->log[t->last - 1].doc == doc) {
            bld->log[t->last - 1].tf += tf;   /* a term given twice */
            continue;
        }
        if (t->n == UINT32_MAX) return cn_error_set(CN_EINVAL, "bm25: term has too many postings");
        bld->log[bld->n_postings] = (logged){h, doc, tf};
        t->last = ++bld->n_postings;
        t->n++;
    }
    if (dl > UINT32_MAX) return cn_error_set(CN_EINVAL, "bm25: document %u has too many tokens", doc);
    bld->dl[doc] = (uint32_t)dl;
    return 0;
}

int cn_bm25_add_term(cn_bm25_builder *bld, uint32_t doc, const char *term_text, size_t len, uint32_t tf)
{
    int rc;
    if (tf == 0 || len == 0) return 0;
    if ((rc = open_doc(bld, doc)) < 0) return rc;
    return add_occurrences(bld, doc, term_text, len, tf);
}

int cn_bm25_add(cn_bm25_builder *bld, uint32_t doc, const char *text, size_t len)
{
    add_ctx c;
    int rc;

    if ((rc = open_doc(bld, doc)) < 0) return rc;
    c.bld = bld;
    c.doc = doc;
    return cn_tokenize(text, text ? len : 0, add_token, &c);
}

typedef struct sort_ent {
    uint64_t key;     /* the first 8 bytes, big-endian, zero-padded */
    const unsigned char *s;
    uint32_t len;
    uint32_t idx;
} sort_ent;

static int cmp_ent(const void *pa, const void *pb)
{
    const sort_ent *a = pa, *b = pb;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->s, b->s, n);
    if (c != 0) return c;
    return (a->len > b->len) - (a->len < b->len);
}

/* Sorts the terms bytewise: an LSD radix sort on their first 8 bytes, then
 * each run sharing those (longer terms with one prefix) by qsort.  A term
 * shorter than 8 bytes sorts before its extensions because of the zero
 * padding, and terms hold no NUL bytes. */
static int sort_terms(sort_ent *e, size_t n)
{
    sort_ent *tmp = malloc((n ? n : 1) * sizeof *tmp), *a = e, *b = tmp;
    if (tmp == NULL) return CN_ENOMEM;
    for (int shift = 0; shift < 64; shift += 8) {
        size_t count[257] = {0};
        bool one_bucket = false;
        sort_ent *t;
        for (size_t i = 0; i < n; i++) count[((a[i].key >> shift) & 0xff) + 1]++;
        for (int k = 0; k < 256; k++) {
            one_bucket = one_bucket || count[k + 1] == n;   /* this byte sorts nothing */
            count[k + 1] += count[k];
        }
        if (one_bucket) continue;
        for (size_t i = 0; i < n; i++) b[count[(a[i].key >> shift) & 0xff]++] = a[i];
        t = a;
        a = b;
        b = t;
    }
    if (a != e) memcpy(e, a, n * sizeof *e);
    free(tmp);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && e[j].key == e[i].key) j++;
        if (j - i > 1) qsort(e + i, j - i, sizeof *e, cmp_ent);
        i = j;
    }
    return 0;
}

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static void putf64(unsigned char *p, double v) { memcpy(p, &v, 8); }

/* Gives d to the writer (which frees it even when adding fails), or frees
 * it when an earlier step failed; either way the caller no longer owns it. */
static int hand_over(cn_idx_writer *w, int rc, uint32_t id, void *d, size_t size)
{
    if (rc != 0) {
        free(d);
        return rc;
    }
    return cn_idx_writer_add_owned(w, id, d, size);
}

/* The sections of an index (each array malloc'd, taken over here, freed
 * whatever happens) written to `path`. */
typedef struct sections {
    uint32_t *term_offs;    /* nt + 1 */
    unsigned char *terms;
    size_t terms_len;
    uint64_t *post_offs;    /* nt + 1 */
    uint32_t *docs;         /* np */
    uint8_t *tfs;           /* np */
    cn_bm25_tf_big *big;    /* n_big, by posting */
    size_t n_big, cap_big;
    uint32_t *doc_len;      /* n_docs */
    size_t nt;
    uint64_t np;
} sections;

static void sections_free(sections *x)
{
    free(x->term_offs);
    free(x->terms);
    free(x->post_offs);
    free(x->docs);
    free(x->tfs);
    free(x->big);
    free(x->doc_len);
    memset(x, 0, sizeof *x);
}

static int sections_alloc(sections *x, size_t nt, size_t terms_len, uint64_t np, uint32_t n_docs)
{
    memset(x, 0, sizeof *x);
    if (np > SIZE_MAX / 8) return CN_ENOMEM;
    x->term_offs = malloc((nt + 1) * sizeof *x->term_offs);
    x->terms = malloc(terms_len ? terms_len : 1);
    x->post_offs = malloc((nt + 1) * sizeof *x->post_offs);
    x->docs = malloc(np ? (size_t)np * 4 : 1);
    x->tfs = malloc(np ? (size_t)np : 1);
    x->doc_len = calloc(n_docs ? n_docs : 1, sizeof *x->doc_len);
    if (!x->term_offs || !x->terms || !x->post_offs || !x->docs || !x->tfs || !x->doc_len) {
        sections_free(x);
        return CN_ENOMEM;
    }
    x->term_offs[0] = 0;
    x->post_offs[0] = 0;
    return 0;
}

/* Posting `at`'s frequency tf (>= CN_BM25_TF_BIG) in TF_BIG: entries come
 * by increasing posting, but for cn_bm25_write's, which it sorts. */
static int add_big(sections *x, uint64_t at, uint32_t tf)
{
    if (x->n_big == x->cap_big) {
        size_t cap = x->cap_big ? x->cap_big * 2 : 16;
        cn_bm25_tf_big *v = realloc(x->big, cap * sizeof *v);
        if (v == NULL) return CN_ENOMEM;
        x->big = v;
        x->cap_big = cap;
    }
    x->big[x->n_big++] = (cn_bm25_tf_big){at, tf, 0};
    return 0;
}

/* Posting `at` has frequency tf: in TFS (*mark), and in TF_BIG when too
 * large for it. */
static int put_tf(sections *x, uint8_t *mark, uint64_t at, uint32_t tf)
{
    if (tf < CN_BM25_TF_BIG) {
        *mark = (uint8_t)tf;
        return 0;
    }
    *mark = (uint8_t)CN_BM25_TF_BIG;
    return add_big(x, at, tf);
}

/* The postings are x->docs and x->tfs [0, np) or, with pieces, the pieces
 * in order (of those and of a previous index's mapping, which must stay
 * mapped until this returns). */
static int write_sections(sections *x, const cn_idx_piece *doc_pieces, const cn_idx_piece *tf_pieces,
                          size_t n_pieces, double k1, double b, uint32_t n_docs, const char *path)
{
    unsigned char *meta = calloc(1, CN_BM25_META_SIZE);
    uint32_t *docs = x->docs;
    uint8_t *tfs = x->tfs;
    uint64_t total = 0;
    cn_idx_writer *w = NULL;
    int rc;

    if (meta == NULL) {
        sections_free(x);
        return cn_error_set(CN_ENOMEM, "%s: bm25: out of memory writing the index", path);
    }
    for (uint32_t d = 0; d < n_docs; d++) total += x->doc_len[d];
    put32(meta + 0, n_docs);
    put64(meta + 8, (uint64_t)x->nt);
    put64(meta + 16, x->np);
    put64(meta + 24, total);
    putf64(meta + 32, k1);
    putf64(meta + 40, b);
    putf64(meta + 48, n_docs ? (double)total / (double)n_docs : 0.0);

    rc = cn_idx_writer_new(CN_BM25_MAGIC, CN_BM25_VERSION, &w);
    rc = hand_over(w, rc, CN_BM25_SEC_META, meta, CN_BM25_META_SIZE);
    rc = hand_over(w, rc, CN_BM25_SEC_TERM_OFFS, x->term_offs, (x->nt + 1) * 4);
    rc = hand_over(w, rc, CN_BM25_SEC_TERMS, x->terms, x->terms_len);
    rc = hand_over(w, rc, CN_BM25_SEC_POST_OFFS, x->post_offs, (x->nt + 1) * 8);
    if (doc_pieces == NULL) {
        rc = hand_over(w, rc, CN_BM25_SEC_POSTINGS, docs, (size_t)x->np * 4);
        rc = hand_over(w, rc, CN_BM25_SEC_TFS, tfs, (size_t)x->np);
        docs = NULL;
        tfs = NULL;
    } else if (rc == 0) {
        rc = cn_idx_writer_add_pieces(w, CN_BM25_SEC_POSTINGS, doc_pieces, n_pieces);
        if (rc == 0) rc = cn_idx_writer_add_pieces(w, CN_BM25_SEC_TFS, tf_pieces, n_pieces);
    }
    rc = hand_over(w, rc, CN_BM25_SEC_DOC_LEN, x->doc_len, (size_t)n_docs * 4);
    rc = hand_over(w, rc, CN_BM25_SEC_TF_BIG, x->big, x->n_big * sizeof *x->big);
    memset(x, 0, sizeof *x);
    if (rc == 0) rc = cn_idx_writer_write(w, path);
    cn_idx_writer_free(w);
    free(docs); /* the pieces' own part, written by now */
    free(tfs);
    return rc;
}

/* The builder's terms in byte order (ents[i].idx is the term). */
static sort_ent *sorted_terms(const cn_bm25_builder *bld)
{
    size_t nt = bld->n_terms;
    sort_ent *ents = malloc((nt ? nt : 1) * sizeof *ents);
    if (ents == NULL) return NULL;
    for (size_t i = 0; i < nt; i++) {
        const unsigned char *p = (const unsigned char *)bld->strs + bld->terms[i].str;
        uint64_t key = 0;
        for (uint32_t k = 0; k < 8; k++) key = key << 8 | (k < bld->terms[i].len ? p[k] : 0);
        ents[i].key = key;
        ents[i].s = p;
        ents[i].len = bld->terms[i].len;
        ents[i].idx = (uint32_t)i;
    }
    /* Terms are unique, so the order is total and the sort's stability
     * cannot change the output. */
    if (nt > 1 && sort_terms(ents, nt) < 0) {
        free(ents);
        return NULL;
    }
    return ents;
}

static int cmp_big(const void *a, const void *b)
{
    uint64_t x = ((const cn_bm25_tf_big *)a)->at, y = ((const cn_bm25_tf_big *)b)->at;
    return (x > y) - (x < y);
}

/* cursor[t]: where term t's postings start once the log is laid out in
 * `order` (the terms' output order); then the log is placed there: as
 * {doc, tf} pairs in `pairs`, or else into x's sections. */
static uint64_t *place_log(const cn_bm25_builder *bld, const sort_ent *order, uint32_t *pairs, sections *x)
{
    size_t nt = bld->n_terms;
    uint64_t *cursor = malloc((nt ? nt : 1) * sizeof *cursor), np = 0;
    if (cursor == NULL) return NULL;
    for (size_t i = 0; i < nt; i++) {
        cursor[order[i].idx] = np;
        np += bld->terms[order[i].idx].n;
    }
    /* the log is in document order: each term's postings come out so */
    for (uint64_t k = 0; k < bld->n_postings; k++) {
        const logged *l = &bld->log[k];
        uint64_t at = cursor[l->term]++;
        if (pairs != NULL) {
            pairs[2 * at] = l->doc;
            pairs[2 * at + 1] = l->tf;
        } else {
            x->docs[at] = l->doc;
            if (put_tf(x, &x->tfs[at], at, l->tf) < 0) {
                free(cursor);
                return NULL;
            }
        }
    }
    if (x != NULL && x->n_big > 1) qsort(x->big, x->n_big, sizeof *x->big, cmp_big);
    /* cursor[t] is now where t's postings end */
    return cursor;
}

int cn_bm25_write(cn_bm25_builder *bld, uint32_t n_docs, const char *path)
{
    size_t nt = bld->n_terms;
    sort_ent *ents = NULL;
    uint64_t *cursor = NULL, np = 0;
    sections x;
    int rc = 0;

    if (bld->have_doc && n_docs <= bld->last_doc)
        return cn_error_set(CN_EINVAL, "%s: bm25: n_docs %u does not cover document %u", path,
                            n_docs, bld->last_doc);
    if ((ents = sorted_terms(bld)) == NULL || sections_alloc(&x, nt, bld->strs_len, bld->n_postings, n_docs) < 0) {
        free(ents);
        return cn_error_set(CN_ENOMEM, "%s: bm25: out of memory writing the index", path);
    }
    {
        uint32_t toff = 0;
        for (size_t i = 0; i < nt; i++) {
            const term *t = &bld->terms[ents[i].idx];
            memcpy(x.terms + toff, ents[i].s, t->len);
            toff += t->len;
            x.term_offs[i + 1] = toff;
            np += t->n;
            x.post_offs[i + 1] = np;
        }
    }
    if ((cursor = place_log(bld, ents, NULL, &x)) == NULL) rc = CN_ENOMEM;
    if (bld->dl_len) memcpy(x.doc_len, bld->dl, bld->dl_len * sizeof *x.doc_len);
    x.nt = nt;
    x.terms_len = bld->strs_len;
    x.np = np;
    free(cursor);
    free(ents);
    if (rc < 0) {
        sections_free(&x);
        return cn_error_set(CN_ENOMEM, "%s: bm25: out of memory writing the index", path);
    }
    return write_sections(&x, NULL, NULL, 0, bld->k1, bld->b, n_docs, path);
}

static int term_order(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}

/* The kept documents as runs: old documents [lo, hi) become lo + delta ..
 * hi - 1 + delta.  A one-file edit gives two or three, so a term's kept
 * postings are a few blocks found by binary search and copied, instead of
 * one lookup in remap per posting. */
typedef struct doc_run {
    uint32_t lo, hi;
    int64_t delta;
} doc_run;

#define MAX_RUNS 16
/* Shorter posting lists are merged posting by posting: cheaper than two
 * binary searches per run. */
#define RUN_MIN_POSTINGS 32

/* The runs of remap[0, n_old), or 0 when there are more than MAX_RUNS or
 * they do not keep the documents' order within [0, n_docs) (the posting by
 * posting merge then checks and says so). */
static size_t doc_runs(const uint32_t *remap, uint32_t n_old, uint32_t n_docs, doc_run *runs)
{
    size_t k = 0;
    uint64_t out_end = 0;   /* where the last run's documents end */
    for (uint32_t d = 0; d < n_old;) {
        uint32_t lo = d, base = remap[d];
        if (base == UINT32_MAX) {
            d++;
            continue;
        }
        while (d < n_old && remap[d] != UINT32_MAX && remap[d] == base + (d - lo)) d++;
        if (k == MAX_RUNS || base < out_end || (uint64_t)base + (d - lo) > n_docs) return 0;
        runs[k++] = (doc_run){lo, d, (int64_t)base - (int64_t)lo};
        out_end = (uint64_t)base + (d - lo);
    }
    return k;
}

/* The first posting in [a, ae) for a document >= doc. */
static uint64_t first_at(const uint32_t *docs, uint64_t a, uint64_t ae, uint32_t doc)
{
    while (a < ae) {
        uint64_t mid = a + (ae - a) / 2;
        if (docs[mid] < doc) a = mid + 1;
        else ae = mid;
    }
    return a;
}

/* The postings as pieces: blocks of the previous index's kept as they are
 * are written from its mapping rather than copied (nearly all of the
 * stdlib's postings in a re-compile whose edit moved no document), between
 * pieces of the postings written out here.  Those are packed back to back,
 * not put at their place in the output, so that only they take fresh
 * pages (a third of a re-compile's page faults went to the short lists
 * copied all over the output buffer).  POSTINGS and TFS are cut into the
 * same pieces. */
typedef struct post_pieces {
    cn_idx_piece *docs, *tfs;   /* piece i of each section */
    size_t len, cap;
    uint32_t *own_docs;         /* the postings written out here, back to back */
    uint8_t *own_tfs;
    uint64_t n_own;             /* how many */
    uint64_t own_at;            /* the first of them not in a piece yet */
    sections *x;                /* the new index: its TF_BIG */
    const cn_bm25__view *v;     /* the previous one */
} post_pieces;

static int add_piece(post_pieces *pp, const uint32_t *docs, const uint8_t *tfs, uint64_t n)
{
    cn_idx_piece *ld = pp->len ? &pp->docs[pp->len - 1] : NULL, *lt = pp->len ? &pp->tfs[pp->len - 1] : NULL;
    if (n == 0) return 0;
    if (ld != NULL && (const char *)ld->data + ld->size == (const char *)docs &&
        (const char *)lt->data + lt->size == (const char *)tfs) {
        ld->size += (size_t)n * 4; /* a block that follows on from the last one */
        lt->size += (size_t)n;
        return 0;
    }
    if (pp->len == pp->cap) {
        size_t cap = pp->cap ? pp->cap * 2 : 256;
        cn_idx_piece *d = realloc(pp->docs, cap * sizeof *d), *t;
        if (d == NULL) return CN_ENOMEM;
        pp->docs = d;
        if ((t = realloc(pp->tfs, cap * sizeof *t)) == NULL) return CN_ENOMEM;
        pp->tfs = t;
        pp->cap = cap;
    }
    pp->docs[pp->len] = (cn_idx_piece){docs, (size_t)n * 4};
    pp->tfs[pp->len++] = (cn_idx_piece){tfs, (size_t)n};
    return 0;
}

/* The old postings [p, p + n) come next, as new postings [at, at + n),
 * after the postings written out since the last kept block. */
static int keep_block(post_pieces *pp, uint64_t p, uint64_t n, uint64_t at)
{
    const cn_bm25__view *v = pp->v;
    int rc = add_piece(pp, pp->own_docs + pp->own_at, pp->own_tfs + pp->own_at, pp->n_own - pp->own_at);
    pp->own_at = pp->n_own;
    if (rc == 0) rc = add_piece(pp, v->postings + p, v->tfs + p, n);
    /* the block's large frequencies, moved with it */
    for (size_t i = n ? cn_bm25__big_from(v, p) : v->n_tf_big;
         rc == 0 && i < v->n_tf_big && v->tf_big[i].at < p + n; i++)
        rc = add_big(pp->x, at + (v->tf_big[i].at - p), v->tf_big[i].tf);
    return rc;
}

/* Old posting k's frequency, the common case inline. */
static inline uint32_t old_tf(const cn_bm25__view *v, uint64_t k)
{
    return v->tfs[k] < CN_BM25_TF_BIG ? v->tfs[k] : cn_bm25__tf(v, k);
}

/* A posting written out here comes next, as new posting `at`. */
static inline int put_own(post_pieces *pp, uint64_t at, uint32_t doc, uint32_t tf)
{
    pp->own_docs[pp->n_own] = doc;
    return put_tf(pp->x, &pp->own_tfs[pp->n_own++], at, tf);
}

/* The run holding all of the old postings [a, ae) (documents in order), or
 * n_runs when they span more than one or lie outside them. */
static size_t one_run(const uint32_t *docs, uint64_t a, uint64_t ae, const doc_run *runs, size_t n_runs)
{
    uint32_t lo = docs[a], hi = docs[ae - 1];
    for (size_t r = 0; r < n_runs; r++)
        if (lo < runs[r].hi) return lo >= runs[r].lo && hi < runs[r].hi && lo <= hi ? r : n_runs;
    return n_runs;
}

int cn_bm25_write_merged(cn_bm25_builder *bld, const cn_bm25 *prev, const uint32_t *remap, uint32_t n_docs,
                         const char *path)
{
    post_pieces kept;
    doc_run runs[MAX_RUNS];
    size_t n_runs;
    cn_bm25__view v;
    sort_ent *ents = NULL;
    uint64_t *end = NULL, np = 0;
    uint32_t *newp = NULL;
    size_t nt = 0, toff = 0, i = 0, j = 0;
    sections x;
    int rc = 0;

    memset(&kept, 0, sizeof kept);
    cn_bm25__view_of(prev, &v);
    if (v.k1 != bld->k1 || v.b != bld->b)
        return cn_error_set(CN_EINVAL, "%s: bm25: k1/b changed since the last build", path);
    if (bld->have_doc && n_docs <= bld->last_doc)
        return cn_error_set(CN_EINVAL, "%s: bm25: n_docs %u does not cover document %u", path, n_docs, bld->last_doc);
    ents = sorted_terms(bld);
    newp = malloc(bld->n_postings ? (size_t)bld->n_postings * 8 : 1);
    if (ents == NULL || newp == NULL ||
        sections_alloc(&x, v.n_terms + bld->n_terms, v.term_offs[v.n_terms] + bld->strs_len,
                       v.post_offs[v.n_terms] + bld->n_postings, n_docs) < 0) {
        free(ents);
        free(newp);
        return cn_error_set(CN_ENOMEM, "%s: bm25: out of memory writing the index", path);
    }
    if ((end = place_log(bld, ents, newp, NULL)) == NULL) rc = CN_ENOMEM;
    kept.own_docs = x.docs;
    kept.own_tfs = x.tfs;
    kept.x = &x;
    kept.v = &v;
    n_runs = doc_runs(remap, v.n_docs, n_docs, runs);
    /* both term lists are sorted: walk them together */
    while (rc == 0 && (i < v.n_terms || j < bld->n_terms)) {
        const unsigned char *os = i < v.n_terms ? v.terms + v.term_offs[i] : NULL;
        size_t ol = os ? v.term_offs[i + 1] - v.term_offs[i] : 0;
        int c = os == NULL ? 1 : j >= bld->n_terms ? -1 : term_order(os, ol, ents[j].s, ents[j].len);
        uint64_t start = np, a = 0, ae = 0, b = 0, be = 0;
        int64_t last = -1;   /* the document last written for this term */
        size_t r0, r1;
        bool by_runs;
        if (c <= 0) {
            a = v.post_offs[i];
            ae = v.post_offs[i + 1];
        }
        if (c >= 0) {
            const term *t = &bld->terms[ents[j].idx];
            be = end[ents[j].idx];
            b = be - t->n;
        }
        /* the kept old postings, renumbered (in order, as documents keep
         * their order), with the new ones put in between: a long list by
         * runs of kept documents when there are few, else posting by
         * posting */
        r0 = 0;
        r1 = n_runs;
        if (n_runs > 0 && ae > a && ae - a <= RUN_MIN_POSTINGS) {
            /* a short list within one run is one block too (kept as it
             * is, not copied, when its numbers stay) */
            r0 = one_run(v.postings, a, ae, runs, n_runs);
            r1 = r0 + 1;
        }
        by_runs = n_runs > 0 && r0 < n_runs;
        for (size_t r = r0; by_runs && r < r1 && rc == 0; r++) {
            uint64_t p = first_at(v.postings, a, ae, runs[r].lo), q = first_at(v.postings, p, ae, runs[r].hi);
            uint32_t out_lo = (uint32_t)(runs[r].lo + runs[r].delta), prev_d = 0;
            for (; rc == 0 && b < be && newp[2 * b] < out_lo; b++) {   /* new documents before the run */
                if ((int64_t)newp[2 * b] <= last) {
                    rc = CN_ECORRUPT;
                    break;
                }
                last = newp[2 * b];
                if (put_own(&kept, np++, newp[2 * b], newp[2 * b + 1]) < 0) rc = CN_ENOMEM;
            }
            if (rc == 0 && runs[r].delta == 0 && q > p) {   /* the numbers stay: the block as it is */
                if (keep_block(&kept, p, q - p, np) < 0) rc = CN_ENOMEM;
                np += q - p;
            }
            for (uint64_t k = p; runs[r].delta != 0 && k < q && rc == 0; k++) {
                uint32_t d = v.postings[k];
                if ((k > p && d <= prev_d) || d >= runs[r].hi) rc = CN_ECORRUPT;   /* prev is not in order */
                prev_d = d;
                if (put_own(&kept, np++, (uint32_t)(d + runs[r].delta), old_tf(&v, k)) < 0) rc = CN_ENOMEM;
            }
            if (q > p) {
                if ((int64_t)(uint32_t)(v.postings[p] + runs[r].delta) <= last) rc = CN_ECORRUPT;
                last = (uint32_t)(v.postings[q - 1] + runs[r].delta);
            }
            a = q;
        }
        if (by_runs) a = ae;   /* the rest are of dropped documents */
        for (;;) {
            uint32_t nb = b < be ? newp[2 * b] : UINT32_MAX;
            for (; a < ae; a++) {   /* old documents before nb */
                uint32_t d = v.postings[a], nd;
                if (d >= v.n_docs) {
                    rc = CN_ECORRUPT;
                    break;
                }
                if ((nd = remap[d]) == UINT32_MAX) continue;
                if (nd >= nb) {
                    if (nd == nb) rc = CN_ECORRUPT;   /* a document both kept and new */
                    break;
                }
                if (nd >= n_docs || (int64_t)nd <= last) {
                    rc = CN_ECORRUPT;   /* out of order: prev is not what it claims */
                    break;
                }
                last = nd;
                if (put_own(&kept, np++, nd, old_tf(&v, a)) < 0) {
                    rc = CN_ENOMEM;
                    break;
                }
            }
            if (rc < 0 || b == be) break;
            if (nb >= n_docs || (int64_t)nb <= last) {
                rc = CN_ECORRUPT;
                break;
            }
            last = nb;
            if (put_own(&kept, np++, nb, newp[2 * b + 1]) < 0) {
                rc = CN_ENOMEM;
                break;
            }
            b++;
        }
        if (rc == 0 && np > start) {
            const unsigned char *ts = c <= 0 ? os : ents[j].s;
            size_t tl = c <= 0 ? ol : ents[j].len;
            memcpy(x.terms + toff, ts, tl);
            toff += tl;
            x.term_offs[++nt] = (uint32_t)toff;
            x.post_offs[nt] = np;
        }
        if (c <= 0) i++;
        if (c >= 0) j++;
    }
    if (rc == 0) {
        for (uint32_t d = 0; d < v.n_docs; d++)
            if (remap[d] != UINT32_MAX) {
                if (remap[d] >= n_docs) {
                    rc = CN_ECORRUPT;
                    break;
                }
                x.doc_len[remap[d]] = v.doc_len[d];
            }
        for (size_t d = 0; rc == 0 && d < bld->dl_len; d++)
            if (bld->dl[d]) x.doc_len[d] = bld->dl[d];
    }
    free(end);
    free(ents);
    free(newp);
    if (rc < 0) {
        free(kept.docs);
        free(kept.tfs);
        sections_free(&x);
        return rc == CN_ENOMEM ? cn_error_set(CN_ENOMEM, "%s: bm25: out of memory writing the index", path)
                               : cn_error_set(CN_ECORRUPT, "%s: bm25: the previous index does not fit this build", path);
    }
    x.nt = nt;
    x.terms_len = toff;
    x.np = np;
    /* the tail after the last kept block */
    if (kept.len > 0 && keep_block(&kept, 0, 0, np) < 0) {
        free(kept.docs);
        free(kept.tfs);
        sections_free(&x);
        return cn_error_set(CN_ENOMEM, "%s: bm25: out of memory writing the index", path);
    }
    rc = write_sections(&x, kept.len ? kept.docs : NULL, kept.tfs, kept.len, bld->k1, bld->b, n_docs, path);
    free(kept.docs);
    free(kept.tfs);
    return rc;
}

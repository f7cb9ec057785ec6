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
 *   5 POSTINGS   n_postings x {u32 doc, u32 tf}, per term by increasing
 *                doc.  Fixed width rather than delta/varint: a query is a
 *                tight loop over a few long lists, and decoding costs more
 *                than the bytes saved at this scale.
 *   6 DOC_LEN    u32 x n_docs: tokens per document (0 if never added).
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

int cn_bm25_write(cn_bm25_builder *bld, uint32_t n_docs, const char *path)
{
    size_t nt = bld->n_terms;
    sort_ent *ents = NULL;
    unsigned char *meta = NULL, *terms = NULL;
    uint32_t *term_offs = NULL, *postings = NULL, *doc_len = NULL;
    uint64_t *post_offs = NULL, *cursor = NULL, total = 0, np = 0;
    cn_idx_writer *w = NULL;
    int rc;

    if (bld->have_doc && n_docs <= bld->last_doc)
        return cn_error_set(CN_EINVAL, "%s: bm25: n_docs %u does not cover document %u", path,
                            n_docs, bld->last_doc);
    if (bld->n_postings > SIZE_MAX / 8)
        return cn_error_set(CN_EINVAL, "%s: bm25: too many postings", path);

    ents = malloc((nt ? nt : 1) * sizeof *ents);
    meta = calloc(1, CN_BM25_META_SIZE);
    term_offs = malloc((nt + 1) * sizeof *term_offs);
    terms = malloc(bld->strs_len ? bld->strs_len : 1);
    post_offs = malloc((nt + 1) * sizeof *post_offs);
    postings = malloc(bld->n_postings ? (size_t)bld->n_postings * 8 : 1);
    doc_len = calloc(n_docs ? n_docs : 1, sizeof *doc_len);
    cursor = malloc((nt ? nt : 1) * sizeof *cursor);
    if (!ents || !meta || !term_offs || !terms || !post_offs || !postings || !doc_len || !cursor) {
        rc = cn_error_set(CN_ENOMEM, "%s: bm25: out of memory writing the index", path);
        goto done;
    }

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
        rc = cn_error_set(CN_ENOMEM, "%s: bm25: out of memory writing the index", path);
        goto done;
    }

    {
        uint32_t toff = 0;
        term_offs[0] = 0;
        post_offs[0] = 0;
        for (size_t i = 0; i < nt; i++) {
            const term *t = &bld->terms[ents[i].idx];
            memcpy(terms + toff, ents[i].s, t->len);
            toff += t->len;
            term_offs[i + 1] = toff;
            cursor[ents[i].idx] = np;
            np += t->n;
            post_offs[i + 1] = np;
        }
        /* the log is in document order: each term's postings come out so */
        for (uint64_t k = 0; k < bld->n_postings; k++) {
            const logged *l = &bld->log[k];
            uint64_t at = cursor[l->term]++;
            postings[2 * at] = l->doc;
            postings[2 * at + 1] = l->tf;
        }
    }
    if (bld->dl_len) memcpy(doc_len, bld->dl, bld->dl_len * sizeof *doc_len);
    for (size_t i = 0; i < bld->dl_len; i++) total += bld->dl[i];

    put32(meta + 0, n_docs);
    put64(meta + 8, (uint64_t)nt);
    put64(meta + 16, np);
    put64(meta + 24, total);
    putf64(meta + 32, bld->k1);
    putf64(meta + 40, bld->b);
    putf64(meta + 48, n_docs ? (double)total / (double)n_docs : 0.0);

    rc = cn_idx_writer_new(CN_BM25_MAGIC, CN_BM25_VERSION, &w);
    rc = hand_over(w, rc, CN_BM25_SEC_META, meta, CN_BM25_META_SIZE);
    meta = NULL;
    rc = hand_over(w, rc, CN_BM25_SEC_TERM_OFFS, term_offs, (nt + 1) * 4);
    term_offs = NULL;
    rc = hand_over(w, rc, CN_BM25_SEC_TERMS, terms, bld->strs_len);
    terms = NULL;
    rc = hand_over(w, rc, CN_BM25_SEC_POST_OFFS, post_offs, (nt + 1) * 8);
    post_offs = NULL;
    rc = hand_over(w, rc, CN_BM25_SEC_POSTINGS, postings, (size_t)np * 8);
    postings = NULL;
    rc = hand_over(w, rc, CN_BM25_SEC_DOC_LEN, doc_len, (size_t)n_docs * 4);
    doc_len = NULL;
    if (rc == 0) rc = cn_idx_writer_write(w, path);

done:
    cn_idx_writer_free(w);
    free(cursor);
    free(ents);
    free(meta);
    free(term_offs);
    free(terms);
    free(post_offs);
    free(postings);
    free(doc_len);
    return rc;
}

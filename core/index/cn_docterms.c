/* SPDX-License-Identifier: Apache-2.0 */
/* BM25 documents of one file, as distinct terms with counts (see
 * cn_filerec.h).  Runs in the parse workers, where the source is already in
 * memory, and its result is kept in the parse records, so a rebuild never
 * reads or tokenizes an unchanged file again. */
#include <stdlib.h>
#include <string.h>

#include "cn_filerec.h"
#include "cn_idxfile.h"
#include "cn_tokenize.h"

typedef struct dt_ctx {
    cn_file_rec *r;
    uint32_t *offs;           /* term ordinal -> offset in r->terms */
    uint32_t *lens;           /* term ordinal -> length */
    size_t cap_offs;
    uint32_t *slots;          /* open addressing: term ordinal + 1, 0 = empty */
    size_t n_slots;
    size_t n_terms;
    uint32_t *count;          /* per term offset slot index: count in this doc */
    uint32_t *touched;        /* slot indices used by this doc */
    size_t n_touched, cap_touched;
    size_t cap_count;
    uint64_t *keys;           /* flush_doc's sort buffer: 2 * cap_keys */
    size_t cap_keys;
    int oom;
} dt_ctx;

/* FNV-1a: tokens are a few bytes long, and the table lives in memory only
 * (nothing depends on where a term lands in it). */
static inline size_t term_hash(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ull;
    }
    return (size_t)(h ^ (h >> 29));
}

static int grow(dt_ctx *c)
{
    size_t n = c->n_slots ? c->n_slots * 2 : 1024;
    uint32_t *s = calloc(n, sizeof *s), *cnt = calloc(n, sizeof *cnt);
    if (s == NULL || cnt == NULL) {
        free(s);
        free(cnt);
        return CN_ENOMEM;
    }
    for (size_t i = 0; i < c->n_slots; i++) {
        uint32_t v = c->slots[i];
        const char *t;
        size_t h;
        if (v == 0) continue;
        t = c->r->terms.data + c->offs[v - 1];
        h = term_hash(t, c->lens[v - 1]) & (n - 1);
        while (s[h]) h = (h + 1) & (n - 1);
        s[h] = v;
        cnt[h] = c->count[i];
    }
    /* touched holds slot indices: remap them */
    for (size_t k = 0; k < c->n_touched; k++) {
        uint32_t v = c->slots[c->touched[k]];
        const char *t = c->r->terms.data + c->offs[v - 1];
        size_t h = term_hash(t, c->lens[v - 1]) & (n - 1);
        while (s[h] != v) h = (h + 1) & (n - 1);
        c->touched[k] = (uint32_t)h;
    }
    free(c->slots);
    free(c->count);
    c->slots = s;
    c->count = cnt;
    c->n_slots = n;
    return 0;
}

static int on_token(const char *tok, size_t len, void *data)
{
    dt_ctx *c = data;
    size_t h;
    if (c->n_terms * 2 >= c->n_slots && grow(c) < 0) return CN_ENOMEM;
    h = term_hash(tok, len) & (c->n_slots - 1);
    for (;;) {
        uint32_t v = c->slots[h];
        if (v == 0) {
            if (c->n_terms == c->cap_offs) {
                size_t cap = c->cap_offs ? c->cap_offs * 2 : 512;
                uint32_t *p = realloc(c->offs, cap * sizeof *p), *l;
                if (p == NULL) return CN_ENOMEM;
                c->offs = p;
                if ((l = realloc(c->lens, cap * sizeof *l)) == NULL) return CN_ENOMEM;
                c->lens = l;
                c->cap_offs = cap;
            }
            c->offs[c->n_terms] = (uint32_t)c->r->terms.len;
            c->lens[c->n_terms] = (uint32_t)len;
            if (cn_buf_append(&c->r->terms, tok, len) < 0 || cn_buf_putc(&c->r->terms, '\0') < 0)
                return CN_ENOMEM;
            c->slots[h] = (uint32_t)++c->n_terms;
            break;
        }
        if (c->lens[v - 1] == len && memcmp(c->r->terms.data + c->offs[v - 1], tok, len) == 0) break;
        h = (h + 1) & (c->n_slots - 1);
    }
    if (c->count[h]++ == 0) {
        if (c->n_touched == c->cap_touched) {
            size_t cap = c->cap_touched ? c->cap_touched * 2 : 256;
            uint32_t *p = realloc(c->touched, cap * sizeof *p);
            if (p == NULL) return CN_ENOMEM;
            c->touched = p;
            c->cap_touched = cap;
        }
        c->touched[c->n_touched++] = (uint32_t)h;
    }
    return 0;
}

/* Sorts keys[0, n) (term ordinal << 32 | count) by ordinal: insertion
 * sort for a few, else a byte-wise radix sort through tmp. */
static void sort_pairs(uint64_t *keys, uint64_t *tmp, size_t n, uint32_t max_ordinal)
{
    if (n < 48) {
        for (size_t i = 1; i < n; i++) {
            uint64_t k = keys[i];
            size_t j = i;
            for (; j > 0 && keys[j - 1] > k; j--) keys[j] = keys[j - 1];
            keys[j] = k;
        }
        return;
    }
    uint64_t *src = keys, *dst = tmp;
    for (unsigned shift = 32; shift < 64; shift += 8) {
        size_t count[257] = {0};
        uint64_t *t;
        if (shift > 32 && (max_ordinal >> (shift - 32)) == 0) break;
        for (size_t i = 0; i < n; i++) count[((src[i] >> shift) & 0xFF) + 1]++;
        for (size_t d = 0; d < 256; d++) count[d + 1] += count[d];
        for (size_t i = 0; i < n; i++) dst[count[(src[i] >> shift) & 0xFF]++] = src[i];
        t = src;
        src = dst;
        dst = t;
    }
    if (src != keys) memcpy(keys, src, n * sizeof *keys);
}

/* Appends the counted terms of the current document, in term order. */
static int flush_doc(dt_ctx *c, size_t *cap_dt)
{
    cn_file_rec *r = c->r;
    size_t n = c->n_touched ? c->n_touched : 1;
    uint64_t *keys;
    if (n > c->cap_keys) {
        size_t cap = c->cap_keys * 2 > n ? c->cap_keys * 2 : n;
        if ((keys = realloc(c->keys, 2 * cap * sizeof *keys)) == NULL) return CN_ENOMEM;
        c->keys = keys;
        c->cap_keys = cap;
    }
    keys = c->keys;
    for (size_t k = 0; k < c->n_touched; k++) {
        uint64_t ordinal = c->slots[c->touched[k]] - 1;
        keys[k] = ordinal << 32 | c->count[c->touched[k]];
        c->count[c->touched[k]] = 0;
    }
    /* pairs sorted by term ordinal: first appearance order in the file */
    sort_pairs(keys, keys + c->cap_keys, c->n_touched, c->n_terms ? (uint32_t)(c->n_terms - 1) : 0);
    if (r->n_dt + c->n_touched > *cap_dt) {
        size_t cap = *cap_dt ? *cap_dt : 1024;
        uint32_t *p;
        while (cap < r->n_dt + c->n_touched) cap *= 2;
        p = realloc(r->dt, cap * 2 * sizeof *p);
        if (p == NULL) return CN_ENOMEM;
        r->dt = p;
        *cap_dt = cap;
    }
    for (size_t k = 0; k < c->n_touched; k++) {
        r->dt[2 * (r->n_dt + k)] = (uint32_t)(keys[k] >> 32);
        r->dt[2 * (r->n_dt + k) + 1] = (uint32_t)keys[k];
    }
    r->n_dt += c->n_touched;
    c->n_touched = 0;
    return 0;
}

int cn_docterms_build(cn_file_rec *r, const char *src, size_t len)
{
    size_t n_docs = r->n_nodes + 1, cap_dt = 0;
    uint32_t *owner = NULL;
    size_t *line_start = NULL;
    cn_buf doc = CN_BUF_INIT;
    dt_ctx c;
    int rc = 0;

    memset(&c, 0, sizeof c);
    c.r = r;
    free(r->dt);
    free(r->doc_off);
    cn_buf_free(&r->terms);
    r->dt = NULL;
    r->n_dt = 0;
    r->doc_off = calloc(n_docs + 1, sizeof *r->doc_off);
    owner = calloc((size_t)r->n_lines + 2, sizeof *owner);
    line_start = calloc((size_t)r->n_lines + 2, sizeof *line_start);
    if (r->doc_off == NULL || owner == NULL || line_start == NULL || grow(&c) < 0) {
        rc = CN_ENOMEM;
        goto out;
    }
    {
        uint32_t line = 1;
        for (size_t i = 0; i < len && line <= r->n_lines; i++)
            if (src[i] == '\n' && line < r->n_lines) line_start[++line] = i + 1;
        line_start[r->n_lines + 1] = len;
    }
    /* parents come before children, so children overwrite */
    for (size_t k = 0; k < r->n_nodes; k++) {
        const cn_rec_node *x = &r->nodes[k];
        uint32_t end = x->end_line < r->n_lines ? x->end_line : r->n_lines;
        for (uint32_t l = x->start_line; l <= end; l++) owner[l] = (uint32_t)(k + 1);
    }
    for (size_t k = 0; k < n_docs && rc == 0; k++) {
        cn_buf_reset(&doc);
        if (k > 0) { /* "qualname path\n", or "path\n" for the file */
            const char *q = cn_rec_str(r, r->nodes[k - 1].qualname);
            cn_buf_append(&doc, q, strlen(q));
            cn_buf_putc(&doc, ' ');
        }
        cn_buf_append(&doc, r->path, strlen(r->path));
        cn_buf_putc(&doc, '\n');
        /* the lines this document owns; a scan per document keeps memory
         * flat, and files are small next to their parse */
        for (uint32_t l = k == 0 ? 1 : r->nodes[k - 1].start_line;
             l <= r->n_lines && (k == 0 || l <= r->nodes[k - 1].end_line); l++) {
            if (owner[l] != k) continue;
            cn_buf_append(&doc, src + line_start[l], line_start[l + 1] - line_start[l]);
        }
        if (doc.oom) {
            rc = CN_ENOMEM;
            break;
        }
        r->doc_off[k] = (uint32_t)r->n_dt;
        rc = cn_tokenize(doc.data ? doc.data : "", doc.len, on_token, &c);
        if (rc == 0) rc = flush_doc(&c, &cap_dt);
    }
    if (rc == 0) r->doc_off[n_docs] = (uint32_t)r->n_dt;
out:
    if (rc < 0) {
        free(r->dt);
        free(r->doc_off);
        cn_buf_free(&r->terms);
        r->dt = NULL;
        r->doc_off = NULL;
        r->n_dt = 0;
        rc = cn_error_set(CN_ENOMEM, "out of memory indexing %s", r->path);
    }
    cn_buf_free(&doc);
    free(owner);
    free(line_start);
    free(c.offs);
    free(c.lens);
    free(c.keys);
    free(c.slots);
    free(c.count);
    free(c.touched);
    return rc;
}

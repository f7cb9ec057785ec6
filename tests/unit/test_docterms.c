/* SPDX-License-Identifier: Apache-2.0 */
/* BM25 documents from term counts: the lines each node owns, and the same
 * index bytes as adding the documents' text. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "index/cn_bm25.h"
#include "index/cn_filerec.h"
#include "tap.h"

static const char src[] =
    "import os\n"                       /* 1  file */
    "class Pool:\n"                     /* 2  Pool */
    "    size = 4\n"                    /* 3  Pool */
    "    def acquire(self, timeout):\n" /* 4  acquire */
    "        return self.free.pop()\n"  /* 5  acquire */
    "    limit = 9\n"                   /* 6  Pool */
    "def make_pool():\n"                /* 7  make_pool */
    "    return Pool()\n"               /* 8  make_pool */
    "CONSTANT = 1\n";                   /* 9  file */

static uint32_t add_str(cn_file_rec *r, const char *s)
{
    uint32_t off = (uint32_t)r->pool.len;
    cn_buf_append(&r->pool, s, strlen(s) + 1);
    return off;
}

static void add_node(cn_file_rec *r, int kind, const char *name, const char *qual, uint32_t a,
                     uint32_t b, int32_t parent)
{
    r->nodes = realloc(r->nodes, (r->n_nodes + 1) * sizeof *r->nodes);
    r->nodes[r->n_nodes] = (cn_rec_node){(uint8_t)kind, 0, a, b, parent, add_str(r, name), add_str(r, qual)};
    r->n_nodes++;
}

/* the count of `term` in document k */
/* the n-th string of the record's term pool */
static const char *term_at(const cn_file_rec *r, uint32_t ord)
{
    const char *t = r->terms.data;
    while (ord-- > 0) t += strlen(t) + 1;
    return t;
}

static uint32_t count_of(const cn_file_rec *r, size_t k, const char *term)
{
    for (uint32_t p = r->doc_off[k]; p < r->doc_off[k + 1]; p++)
        if (strcmp(term_at(r, r->dt[2 * p]), term) == 0) return r->dt[2 * p + 1];
    return 0;
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *b;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    b = malloc(*n + 1);
    if (fread(b, 1, *n, f) != *n) *n = 0;
    fclose(f);
    return b;
}

int main(void)
{
    cn_file_rec r;
    char tmpl[] = "/tmp/cn-docterms-XXXXXX", *dir = mkdtemp(tmpl);
    char a_path[256], b_path[256];
    cn_bm25_builder *a = NULL, *b = NULL;
    /* a document: "<qualified name in the file> <path>", then its lines */
    const char *docs[5] = {
        "m.py\nimport os\nCONSTANT = 1\n",
        "Pool m.py\nclass Pool:\n    size = 4\n    limit = 9\n",
        "Pool.acquire m.py\n    def acquire(self, timeout):\n        return self.free.pop()\n",
        "make_pool m.py\ndef make_pool():\n    return Pool()\n",
    };

    memset(&r, 0, sizeof r);
    r.path = strdup("m.py");
    r.n_lines = 9;
    add_node(&r, 1, "Pool", "Pool", 2, 6, -1);
    add_node(&r, 3, "acquire", "Pool.acquire", 4, 5, 0);
    add_node(&r, 2, "make_pool", "make_pool", 7, 8, -1);
    is_int(cn_docterms_build(&r, src, strlen(src)), 0, "terms counted");
    is_int(r.doc_off[4], r.n_dt, "four documents cover every pair");
    is_int(count_of(&r, 0, "import"), 1, "the file owns the lines no definition covers");
    is_int(count_of(&r, 0, "constant"), 1, "... at both ends of the file");
    is_int(count_of(&r, 0, "size"), 0, "... and not a class's lines");
    is_int(count_of(&r, 1, "size"), 1, "the class owns its attributes");
    is_int(count_of(&r, 1, "limit"), 1, "... after a method too");
    is_int(count_of(&r, 1, "self"), 0, "... but not its methods' lines");
    is_int(count_of(&r, 2, "self"), 2, "the method owns its body");
    is_int(count_of(&r, 2, "acquire"), 2, "name in the qualified name and in the def line");
    is_int(count_of(&r, 3, "pool"), 3, "make_pool: the name's part twice and the call");
    is_int(count_of(&r, 3, "make_pool"), 2, "the whole identifier is a term too");
    is_int(count_of(&r, 0, "py"), 1, "the path is in every document");

    /* same index bytes as adding the text */
    snprintf(a_path, sizeof a_path, "%s/a.bin", dir);
    snprintf(b_path, sizeof b_path, "%s/b.bin", dir);
    cn_bm25_builder_new(1.2, 0.75, &a);
    cn_bm25_builder_new(1.2, 0.75, &b);
    for (size_t k = 0; k < 4; k++) {
        cn_bm25_add(a, (uint32_t)k, docs[k], strlen(docs[k]));
        for (uint32_t p = r.doc_off[k]; p < r.doc_off[k + 1]; p++) {
            const char *t = term_at(&r, r.dt[2 * p]);
            uint32_t h = 0;
            if (k % 2) {
                cn_bm25_add_term(b, (uint32_t)k, t, strlen(t), r.dt[2 * p + 1]);
            } else {
                cn_bm25_intern(b, t, strlen(t), &h);
                cn_bm25_add_handle(b, (uint32_t)k, h, r.dt[2 * p + 1]);
            }
        }
    }
    is_int(cn_bm25_write(a, 4, a_path), 0, "index from text written");
    is_int(cn_bm25_write(b, 4, b_path), 0, "index from term counts written");
    {
        size_t na = 0, nb = 0;
        char *x = slurp(a_path, &na), *y = slurp(b_path, &nb);
        ok(na > 0 && na == nb && memcmp(x, y, na) == 0, "both indexes are byte-identical");
        free(x);
        free(y);
    }
    cn_bm25_builder_free(a);
    cn_bm25_builder_free(b);
    unlink(a_path);
    unlink(b_path);
    rmdir(dir);
    cn_file_rec_clear(&r);
    return tap_done();
}

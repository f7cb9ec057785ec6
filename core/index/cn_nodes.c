/* SPDX-License-Identifier: Apache-2.0 */
/* The nodes index (see cn_nodes.h).
 *
 * Sections of "CNNODES\0" version 1:
 *   1 META    u32 n_nodes, n_files, n_langs, reserved
 *   2 NODES   n_nodes x 32 bytes: u32 kind|flags<<8, u32 file, i32 parent,
 *             u32 start_line, u32 end_line, u32 name, u32 qualname, u32 0
 *   3 FILES   n_files x 40 bytes: u32 path, u32 node, u32 n_nodes, u32 lang,
 *             u64 hash, u64 size, u32 n_lines, u32 flags (1 = test)
 *   4 STRTAB  NUL-terminated strings; offsets above point here
 *   5 LANGS   n_langs x u32 string offsets
 *   6 BYNAME  n_nodes x u32 node ids sorted by (name, id)
 *   7 BYQUAL  n_nodes x u32 node ids sorted by (qualname, id)
 * Files are in path order, so FILES is also sorted by path. */
#include "cn_nodes.h"

#include <stdlib.h>
#include <string.h>

#include <codenib/lang.h>

#include "cn_idxfile.h"
#include "cn_strsort.h"

#define NODES_MAGIC "CNNODES\0"
#define NODES_VERSION 1

enum { S_META = 1, S_NODES = 2, S_FILES = 3, S_STRTAB = 4, S_LANGS = 5, S_BYNAME = 6, S_BYQUAL = 7 };

typedef struct node_disk {
    uint32_t kind_flags;
    uint32_t file;
    int32_t parent;
    uint32_t start_line;
    uint32_t end_line;
    uint32_t name;
    uint32_t qualname;
    uint32_t reserved;
} node_disk;

typedef struct file_disk {
    uint32_t path;
    uint32_t node;
    uint32_t n_nodes;
    uint32_t lang;
    uint64_t hash;
    uint64_t size;
    uint32_t n_lines;
    uint32_t flags;
} file_disk;

struct cn_nodes {
    cn_idx_file *f;
    const node_disk *nodes;
    const file_disk *files;
    const char *strtab;
    size_t strtab_size;
    const uint32_t *langs;
    const uint32_t *byname;
    const uint32_t *byqual;
    uint32_t n_nodes, n_files, n_langs;
};

const char *cn_node_kind_name(int kind)
{
    static const char *const names[] = {
        "file", "class", "function", "method", "block", "struct", "union", "enum",
        "typedef", "macro", "prototype", "variable", "module",
    };
    return kind >= 0 && kind <= CN_NODE_MODULE ? names[kind] : "unknown";
}

/* ---- writing ------------------------------------------------------------ */

typedef struct strtab {
    cn_buf buf;
} strtab;

static uint32_t st_add(strtab *t, const char *s)
{
    uint32_t off = (uint32_t)t->buf.len;
    cn_buf_append(&t->buf, s, strlen(s) + 1);
    return off;
}

/* "path:qual" as one string of the table. */
static uint32_t st_add_qual(strtab *t, const char *path, const char *qual)
{
    uint32_t off = (uint32_t)t->buf.len;
    cn_buf_append(&t->buf, path, strlen(path));
    cn_buf_append(&t->buf, ":", 1);
    cn_buf_append(&t->buf, qual, strlen(qual) + 1);
    return off;
}

typedef struct sort_ctx {
    const char *strtab;
    const node_disk *nodes;
    size_t skip; /* bytes every qualified name compared starts with alike */
} sort_ctx;

static int cmp_byqual(const void *a, const void *b, void *arg)
{
    const sort_ctx *c = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int d = strcmp(c->strtab + c->nodes[x].qualname + c->skip, c->strtab + c->nodes[y].qualname + c->skip);
    return d ? d : (x > y) - (x < y);
}

/* BYQUAL with few comparisons: the files come in path order and a file's
 * qualified names all start with "path:", so sorting each file's nodes on
 * its own and laying the files out in order is usually the whole sort; a
 * final pass checks that, and a full sort runs where it is not so (a path
 * that is a prefix of another one followed by a byte below ':'). */
static int sort_byqual(const node_disk *nodes, size_t n_nodes, const file_disk *files, size_t n_files,
                       const char *tab, uint32_t *byqual)
{
    sort_ctx sc = {tab, nodes, 0};
    bool sorted = true;
    for (size_t f = 0; f < n_files; f++) {
        uint32_t lo = files[f].node, k = files[f].n_nodes;
        for (uint32_t i = 0; i < k; i++) byqual[lo + i] = lo + i;
        /* the file node (qualname = path) sorts before "path:...", and the
         * others are compared past their common "path:" */
        sc.skip = strlen(tab + files[f].path) + 1;
        if (k > 2) qsort_r(byqual + lo + 1, k - 1, sizeof *byqual, cmp_byqual, &sc);
    }
    sc.skip = 0;
    for (size_t i = 1; i < n_nodes && sorted; i++)
        sorted = cmp_byqual(&byqual[i - 1], &byqual[i], &sc) < 0;
    if (!sorted) qsort_r(byqual, n_nodes, sizeof *byqual, cmp_byqual, &sc);
    return 0;
}

/* BYNAME by the ranks of the names (many nodes share one), ids ascending
 * within each; then BYQUAL. */
static int sort_tables(const node_disk *nodes, size_t n_nodes, const file_disk *files, size_t n_files,
                       const char *tab, uint32_t *byname, uint32_t *byqual)
{
    const char **names = malloc((n_nodes ? n_nodes : 1) * sizeof *names);
    uint32_t *rank = malloc((n_nodes ? n_nodes : 1) * sizeof *rank), nr = 0;
    int rc = names && rank ? 0 : CN_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n_nodes; i++) {
        names[i] = tab + nodes[i].name;
        byqual[i] = (uint32_t)i;   /* the identity, as cn_rank_order's input */
    }
    if (rc == 0) rc = cn_str_ranks(names, n_nodes, false, rank, &nr);
    if (rc == 0) rc = cn_rank_order(rank, n_nodes, nr, byqual, byname);
    if (rc == 0) rc = sort_byqual(nodes, n_nodes, files, n_files, tab, byqual);
    free(names);
    free(rank);
    return rc;
}

size_t cn_nodes_numbered(const cn_file_rec *recs, size_t n)
{
    size_t n_nodes = 0;
    for (size_t i = 0; i < n; i++)
        if (recs[i].status == CN_REC_PARSED) n_nodes += 1 + recs[i].n_nodes;
    return n_nodes;
}

int cn_nodes_write(const cn_file_rec *recs, size_t n, const char *path, uint32_t *n_nodes_out)
{
    size_t n_nodes = 0, n_files = 0, n_langs = 0;
    node_disk *nodes = NULL;
    file_disk *files = NULL;
    uint32_t *byname = NULL, *byqual = NULL, langs[64], meta[4];
    const char *lang_names[64];
    strtab st = {CN_BUF_INIT};
    cn_idx_writer *w = NULL;
    size_t ni = 0, fi = 0;
    int rc;

    for (size_t i = 0; i < n; i++) n_files += recs[i].status == CN_REC_PARSED;
    n_nodes = cn_nodes_numbered(recs, n);
    if (n_nodes > UINT32_MAX / 2) return cn_error_set(CN_EINVAL, "too many nodes (%zu)", n_nodes);
    nodes = calloc(n_nodes ? n_nodes : 1, sizeof *nodes);
    files = calloc(n_files ? n_files : 1, sizeof *files);
    byname = malloc((n_nodes ? n_nodes : 1) * sizeof *byname);
    byqual = malloc((n_nodes ? n_nodes : 1) * sizeof *byqual);
    if (nodes == NULL || files == NULL || byname == NULL || byqual == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory building the nodes index");
        goto out;
    }
    st_add(&st, "");
    for (size_t i = 0; i < n; i++) {
        const cn_file_rec *r = &recs[i];
        uint32_t base = (uint32_t)ni, lang = 0;
        if (r->status != CN_REC_PARSED) continue;
        for (lang = 0; lang < n_langs; lang++)
            if (strcmp(lang_names[lang], r->language) == 0) break;
        if (lang == n_langs) {
            if (n_langs == 64) {
                rc = cn_error_set(CN_EINVAL, "more than 64 languages");
                goto out;
            }
            lang_names[n_langs] = r->language;
            langs[n_langs++] = st_add(&st, r->language);
        }
        files[fi].path = st_add(&st, r->path);
        files[fi].node = base;
        files[fi].n_nodes = (uint32_t)(1 + r->n_nodes);
        files[fi].lang = lang;
        files[fi].hash = r->hash;
        files[fi].size = r->size;
        files[fi].n_lines = r->n_lines;
        files[fi].flags = r->is_test ? 1u : 0u;
        nodes[ni].kind_flags = CN_NODE_FILE | ((r->is_test ? CN_NODE_F_TEST : 0u) << 8);
        nodes[ni].file = (uint32_t)fi;
        nodes[ni].parent = -1;
        nodes[ni].start_line = 1;
        nodes[ni].end_line = r->n_lines ? r->n_lines : 1;
        {
            const char *base_name = strrchr(r->path, '/');
            nodes[ni].name = st_add(&st, base_name ? base_name + 1 : r->path);
        }
        nodes[ni].qualname = files[fi].path;
        ni++;
        for (size_t k = 0; k < r->n_nodes; k++) {
            const cn_rec_node *x = &r->nodes[k];
            nodes[ni].kind_flags = (uint32_t)x->kind | (x->flags << 8);
            nodes[ni].file = (uint32_t)fi;
            nodes[ni].parent = x->parent < 0 ? (int32_t)base : (int32_t)(base + 1 + (uint32_t)x->parent);
            nodes[ni].start_line = x->start_line;
            nodes[ni].end_line = x->end_line;
            nodes[ni].name = st_add(&st, cn_rec_str(r, x->name));
            nodes[ni].qualname = st_add_qual(&st, r->path, cn_rec_str(r, x->qualname));
            ni++;
        }
        fi++;
    }
    if (st.buf.oom) {
        rc = cn_error_set(CN_ENOMEM, "out of memory building the nodes index");
        goto out;
    }
    if ((rc = sort_tables(nodes, n_nodes, files, n_files, st.buf.data, byname, byqual)) < 0) {
        cn_error_set(rc, "out of memory building the nodes index");
        goto out;
    }
    meta[0] = (uint32_t)n_nodes;
    meta[1] = (uint32_t)n_files;
    meta[2] = (uint32_t)n_langs;
    meta[3] = 0;
    if ((rc = cn_idx_writer_new(NODES_MAGIC, NODES_VERSION, &w)) < 0) goto out;
    if ((rc = cn_idx_writer_add_ref(w, S_META, meta, sizeof meta)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, S_NODES, nodes, n_nodes * sizeof *nodes)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, S_FILES, files, n_files * sizeof *files)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, S_STRTAB, st.buf.data, st.buf.len)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, S_LANGS, langs, n_langs * sizeof *langs)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, S_BYNAME, byname, n_nodes * sizeof *byname)) < 0 ||
        (rc = cn_idx_writer_add_ref(w, S_BYQUAL, byqual, n_nodes * sizeof *byqual)) < 0)
        goto out;
    rc = cn_idx_writer_write(w, path);
    if (rc == 0 && n_nodes_out) *n_nodes_out = (uint32_t)n_nodes;
out:
    cn_idx_writer_free(w);
    cn_buf_free(&st.buf);
    free(nodes);
    free(files);
    free(byname);
    free(byqual);
    return rc;
}

/* ---- reading ------------------------------------------------------------ */

static int bad(const char *path, const char *what)
{
    return cn_error_set(CN_ECORRUPT, "%s: corrupt nodes index (%s); recompile with "
                                     "`codenib compile --rebuild`", path, what);
}

int cn_nodes_open(const char *path, cn_nodes **out)
{
    cn_nodes *x;
    const uint32_t *meta;
    size_t sz, nsz, fsz, lsz, bsz, qsz;
    int rc;

    *out = NULL;
    x = calloc(1, sizeof *x);
    if (x == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    if ((rc = cn_idx_open(path, NODES_MAGIC, NODES_VERSION, &x->f)) < 0) {
        free(x);
        return rc;
    }
    meta = cn_idx_section(x->f, S_META, 4, &sz);
    x->nodes = cn_idx_section(x->f, S_NODES, sizeof(node_disk), &nsz);
    x->files = cn_idx_section(x->f, S_FILES, sizeof(file_disk), &fsz);
    x->strtab = cn_idx_section(x->f, S_STRTAB, 0, &x->strtab_size);
    x->langs = cn_idx_section(x->f, S_LANGS, 4, &lsz);
    x->byname = cn_idx_section(x->f, S_BYNAME, 4, &bsz);
    x->byqual = cn_idx_section(x->f, S_BYQUAL, 4, &qsz);
    if (meta == NULL || sz != 16 || x->strtab == NULL || x->strtab_size == 0 ||
        x->strtab[x->strtab_size - 1] != '\0') {
        rc = bad(path, "missing sections");
        goto fail;
    }
    x->n_nodes = meta[0];
    x->n_files = meta[1];
    x->n_langs = meta[2];
    if (nsz != (size_t)x->n_nodes * sizeof(node_disk) || fsz != (size_t)x->n_files * sizeof(file_disk) ||
        lsz != (size_t)x->n_langs * 4 || bsz != (size_t)x->n_nodes * 4 || qsz != (size_t)x->n_nodes * 4) {
        rc = bad(path, "section sizes disagree with the counts");
        goto fail;
    }
    for (uint32_t i = 0; i < x->n_langs; i++)
        if (x->langs[i] >= x->strtab_size) {
            rc = bad(path, "language name out of bounds");
            goto fail;
        }
    for (uint32_t i = 0; i < x->n_files; i++) {
        const file_disk *f = &x->files[i];
        if (f->path >= x->strtab_size || f->lang >= x->n_langs || f->node >= x->n_nodes ||
            f->n_nodes == 0 || f->n_nodes > x->n_nodes - f->node) {
            rc = bad(path, "file record out of bounds");
            goto fail;
        }
    }
    for (uint32_t i = 0; i < x->n_nodes; i++) {
        const node_disk *n = &x->nodes[i];
        if (n->file >= x->n_files || n->name >= x->strtab_size || n->qualname >= x->strtab_size ||
            (n->parent != -1 && (n->parent < 0 || (uint32_t)n->parent >= x->n_nodes)) ||
            x->byname[i] >= x->n_nodes || x->byqual[i] >= x->n_nodes) {
            rc = bad(path, "node record out of bounds");
            goto fail;
        }
    }
    *out = x;
    return 0;
fail:
    cn_idx_close(x->f);
    free(x);
    return rc;
}

void cn_nodes_close(cn_nodes *nodes)
{
    if (nodes == NULL) return;
    cn_idx_close(nodes->f);
    free(nodes);
}

uint32_t cn_nodes_count(const cn_nodes *nodes)
{
    return nodes->n_nodes;
}

uint32_t cn_nodes_file_count(const cn_nodes *nodes)
{
    return nodes->n_files;
}

int cn_nodes_file(const cn_nodes *x, uint32_t index, cn_file_view *out)
{
    const file_disk *f;
    if (index >= x->n_files) return cn_error_set(CN_ENOTFOUND, "no file %u", index);
    f = &x->files[index];
    out->index = index;
    out->path = x->strtab + f->path;
    out->language = x->strtab + x->langs[f->lang];
    out->node = f->node;
    out->n_nodes = f->n_nodes;
    out->hash = f->hash;
    out->size = f->size;
    out->n_lines = f->n_lines;
    out->is_test = (f->flags & 1u) != 0;
    return 0;
}

int cn_nodes_get(const cn_nodes *x, uint32_t id, cn_node_view *out)
{
    const node_disk *n;
    const file_disk *f;
    if (id >= x->n_nodes) return cn_error_set(CN_ENOTFOUND, "no node %u (the index has %u)", id, x->n_nodes);
    n = &x->nodes[id];
    f = &x->files[n->file];
    out->id = id;
    out->kind = (int)(n->kind_flags & 0xffu);
    out->flags = n->kind_flags >> 8;
    out->file = n->file;
    out->parent = n->parent;
    out->start_line = n->start_line;
    out->end_line = n->end_line;
    out->name = x->strtab + n->name;
    out->qualname = x->strtab + n->qualname;
    out->path = x->strtab + f->path;
    out->language = x->strtab + x->langs[f->lang];
    out->is_test = (f->flags & 1u) != 0;
    return 0;
}

int cn_nodes_find_file(const cn_nodes *x, const char *path, cn_file_view *out)
{
    size_t lo = 0, hi = x->n_files;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(x->strtab + x->files[mid].path, path);
        if (c == 0) return cn_nodes_file(x, (uint32_t)mid, out);
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return cn_error_set(CN_ENOTFOUND, "no file '%s' in the index", path);
}

/* First position in a sorted id array whose key is >= s. */
static size_t lower_bound(const cn_nodes *x, const uint32_t *ids, bool by_name, const char *s)
{
    size_t lo = 0, hi = x->n_nodes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const node_disk *n = &x->nodes[ids[mid]];
        if (strcmp(x->strtab + (by_name ? n->name : n->qualname), s) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int cn_nodes_find_qualname(const cn_nodes *x, const char *qualname, uint32_t *id)
{
    size_t i = lower_bound(x, x->byqual, false, qualname);
    if (i < x->n_nodes && strcmp(x->strtab + x->nodes[x->byqual[i]].qualname, qualname) == 0) {
        *id = x->byqual[i];
        return 0;
    }
    return cn_error_set(CN_ENOTFOUND, "no symbol '%s' in the index", qualname);
}

size_t cn_nodes_find_name(const cn_nodes *x, const char *name, uint32_t *ids, size_t max)
{
    size_t i = lower_bound(x, x->byname, true, name), n = 0;
    for (; i < x->n_nodes && strcmp(x->strtab + x->nodes[x->byname[i]].name, name) == 0; i++, n++)
        if (n < max) ids[n] = x->byname[i];
    return n;
}

int cn_nodes_at(const cn_nodes *x, const char *path, uint32_t line, uint32_t *id)
{
    cn_file_view f;
    uint32_t best;
    int rc = cn_nodes_find_file(x, path, &f);
    if (rc < 0) return rc;
    best = f.node;
    /* Nodes follow their parents, so the last node that contains the line
     * is the innermost one. */
    for (uint32_t k = 1; k < f.n_nodes; k++) {
        const node_disk *n = &x->nodes[f.node + k];
        if (n->start_line <= line && line <= n->end_line) best = f.node + k;
    }
    *id = best;
    return 0;
}

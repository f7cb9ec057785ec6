/* SPDX-License-Identifier: Apache-2.0 */
/* The index readers (core/index: nodes, BM25, graph, parse records and
 * their shards, vector reuse) on files whose container is valid -- right
 * magic, version, sizes and checksum, which any bit flip already fails --
 * but whose sections are anything: what a damaged or hand-made cache
 * holds.  The reader must refuse what does not hold together and answer
 * every query on what it accepts without reading out of bounds.
 *
 * Input: a kind byte (which reader), then files separated by a section id
 * of 0xff; each file a list of sections {u8 id, u32 size (LE), bytes}, a
 * size running past the end taken as what is left.  The first file is the
 * index, the next ones (for records) its shards records-00.bin, ...
 * tests/fuzz/make_index_seed.py turns a real index file into this form. */
#include "fuzz.h"

#include <fcntl.h>
#include <unistd.h>

#include "index/cn_bm25.h"
#include "index/cn_graph.h"
#include "index/cn_idxfile.h"
#include "index/cn_nodes.h"
#include "index/cn_records.h"
#include "index/cn_vectors.h"

#define HEADER 64
#define ENTRY 24
#define MAX_FILES 8

typedef struct kind {
    const char *name, *file;
    char magic[9];
    uint32_t version;
} kind;

/* The nodes, records and reuse formats keep their magic and version to
 * themselves: a change there shows as seeds that no longer open (the
 * replay test sets CN_FUZZ_EXPECT_OPEN for the seeds made from real
 * indexes). */
static const kind kinds[] = {
    {"nodes", "nodes.bin", "CNNODES\0", 1},
    {"bm25", "bm25.bin", CN_BM25_MAGIC, CN_BM25_VERSION},
    {"graph", "graph.bin", CN_GRAPH_MAGIC, CN_GRAPH_VERSION},
    {"records", "records.bin", "CNRECS\0\0", 7},
    {"reuse", "vectors_reuse.bin", "CNVREUS\0", 1},
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

static char dir[64];
static int expect_open = -1;   /* CN_FUZZ_EXPECT_OPEN: every input must open */

static void opened(int rc, const char *what)
{
    if (expect_open < 0) expect_open = getenv("CN_FUZZ_EXPECT_OPEN") != NULL;
    FUZZ_CHECK(!expect_open || rc == 0, "a seed made from a real %s index does not open: %s", what,
               cn_error_last()->message);
}

static void cleanup(void)
{
    char p[128];
    for (size_t k = 0; k < N_KINDS; k++) {
        snprintf(p, sizeof p, "%s/%s", dir, kinds[k].file);
        unlink(p);
    }
    for (int i = 0; i < MAX_FILES; i++) {
        snprintf(p, sizeof p, "%s/records-%02d.bin", dir, i);
        unlink(p);
    }
    rmdir(dir);
}

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

/* Writes one container file from the section list in [p, end); returns
 * where the next file's list starts. */
static const uint8_t *write_file(const char *path, const char *magic, uint32_t version, const uint8_t *p,
                                 const uint8_t *end)
{
    unsigned char *img;
    size_t n = 0, total;
    uint32_t ids[CN_IDX_MAX_SECTIONS];
    const uint8_t *data[CN_IDX_MAX_SECTIONS];
    size_t sizes[CN_IDX_MAX_SECTIONS];
    int fd;

    while (p < end && *p != 0xff) {
        uint32_t id = *p++, len = 0;
        if (end - p >= 4) {
            memcpy(&len, p, 4);
            p += 4;
        }
        if (len > (size_t)(end - p)) len = (uint32_t)(end - p);
        if (n < CN_IDX_MAX_SECTIONS) {
            ids[n] = id;
            data[n] = p;
            sizes[n] = len;
            n++;
        }
        p += len;
    }
    if (p < end) p++;   /* the 0xff */
    total = HEADER + n * ENTRY;
    total = (total + 7) & ~(size_t)7;
    for (size_t i = 0; i < n; i++) total += (sizes[i] + 7) & ~(size_t)7;
    if ((img = calloc(1, total)) == NULL) return end;
    memcpy(img, magic, 8);
    put32(img + 8, version);
    put32(img + 12, 1);
    put64(img + 16, total);
    put32(img + 32, (uint32_t)n);
    {
        size_t off = (HEADER + n * ENTRY + 7) & ~(size_t)7;
        for (size_t i = 0; i < n; i++) {
            unsigned char *e = img + HEADER + i * ENTRY;
            put32(e, ids[i]);
            put64(e + 8, off);
            put64(e + 16, sizes[i]);
            if (sizes[i]) memcpy(img + off, data[i], sizes[i]);
            off += (sizes[i] + 7) & ~(size_t)7;
        }
    }
    put64(img + 24, cn_hash64(img + HEADER, total - HEADER, cn_hash64(img, HEADER, 0)));
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
        if (write(fd, img, total) != (ssize_t)total) unlink(path);
        close(fd);
    }
    free(img);
    return p;
}

static void try_nodes(const char *path)
{
    cn_nodes *x;
    cn_node_view v;
    cn_file_view fv;
    uint32_t ids[8], id;
    int rc = cn_nodes_open(path, &x);
    opened(rc, "nodes");
    if (rc < 0) return;
    for (uint32_t i = 0; i < cn_nodes_count(x) && i < 4096; i++)
        if (cn_nodes_get(x, i, &v) == 0) {
            FUZZ_CHECK(v.name && v.qualname && v.path && v.language, "node %u has a NULL string", i);
            (void)cn_nodes_find_qualname(x, v.qualname, &id);
            (void)cn_nodes_find_name(x, v.name, ids, 8);
            (void)cn_nodes_at(x, v.path, v.start_line, &id);
        }
    for (uint32_t i = 0; i < cn_nodes_file_count(x) && i < 1024; i++)
        if (cn_nodes_file(x, i, &fv) == 0) (void)cn_nodes_find_file(x, fv.path, &fv);
    (void)cn_nodes_get(x, cn_nodes_count(x), &v);
    (void)cn_nodes_find_file(x, "", &fv);
    (void)cn_nodes_find_name(x, "main", ids, 8);
    cn_nodes_close(x);
}

static void try_bm25(const char *path)
{
    cn_bm25 *x;
    cn_bm25_hit hits[16];
    size_t n = 0;
    static const char *const queries[] = {"parse config", "a", "the", "x y z main init", ""};
    int rc = cn_bm25_open(path, &x);
    opened(rc, "bm25");
    if (rc < 0) return;
    for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
        if (cn_bm25_search(x, queries[i], 16, NULL, NULL, hits, &n) == 0) {
            FUZZ_CHECK(n <= 16, "%zu hits for 16 asked", n);
            for (size_t k = 0; k < n; k++) {
                FUZZ_CHECK(hits[k].doc < cn_bm25_doc_count(x), "hit %u of %u documents", hits[k].doc,
                           cn_bm25_doc_count(x));
                (void)cn_bm25_doc_len(x, hits[k].doc);
            }
        }
        (void)cn_bm25_df(x, queries[i]);
    }
    (void)cn_bm25_term_count(x);
    (void)cn_bm25_avgdl(x);
    cn_bm25_close(x);
}

static void try_graph(const char *path)
{
    cn_graph *g;
    cn_graph_edge e[16];
    int rc = cn_graph_open(path, &g);
    opened(rc, "graph");
    if (rc < 0) return;
    for (uint32_t v = 0; v < cn_graph_node_count(g) && v < 4096; v++) {
        size_t n = cn_graph_edges(g, v, 0xffffffffu, CN_GRAPH_OUT, e, 16);
        for (size_t k = 0; k < n && k < 16; k++) {
            cn_graph_edge at;
            FUZZ_CHECK(e[k].name != NULL, "edge without a name");
            FUZZ_CHECK(!e[k].resolved || e[k].node < cn_graph_node_count(g), "edge to node %u of %u", e[k].node,
                       cn_graph_node_count(g));
            (void)cn_graph_at(g, v, e[k].line, e[k].column, &at);
            (void)cn_graph_unresolved(g, e[k].name, 0xffffffffu, e, 16);
        }
        (void)cn_graph_edges(g, v, 0xffffffffu, CN_GRAPH_IN, e, 16);
    }
    (void)cn_graph_unresolved(g, "main", 0xffffffffu, e, 16);
    (void)cn_graph_edge_count(g);
    cn_graph_close(g);
}

static void try_records(const char *path)
{
    cn_records *r;
    cn_langs langs;
    memset(&langs, 0, sizeof langs);
    int rc = cn_records_open(path, &langs, &r);
    opened(rc, "records");
    if (rc < 0) return;
    for (size_t i = 0; i < cn_records_count(r) && i < 1024; i++) {
        const cn_file_rec *rec = cn_records_at(r, i);
        FUZZ_CHECK(rec != NULL && rec->path != NULL, "record %zu has no path", i);
        (void)cn_records_has(r, rec->path);
    }
    (void)cn_records_doc_count(r);
    (void)cn_records_left_count(r);
    cn_records_close(r);
}

static void try_reuse(const char *path)
{
    cn_vectors_reuse r;
    uint64_t h[2] = {0, 0};
    int rc = cn_vectors_reuse_open(path, &r);
    opened(rc, "reuse");
    if (rc < 0) return;
    (void)cn_vectors_reuse_find(&r, h);
    cn_vectors_reuse_close(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p = data + 1, *end = data + size;
    const kind *k;
    char path[128];

    if (dir[0] == '\0') {
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(dir, sizeof dir, "%s/cn-fuzz-index.XXXXXX", base);
        if (mkdtemp(dir) == NULL) abort();
        atexit(cleanup);
    }
    if (size < 1) return 0;
    k = &kinds[data[0] % N_KINDS];
    snprintf(path, sizeof path, "%s/%s", dir, k->file);
    p = write_file(path, k->magic, k->version, p, end);
    for (int i = 0; i < MAX_FILES; i++) {
        char sp[128];
        snprintf(sp, sizeof sp, "%s/records-%02d.bin", dir, i);
        if (p < end && k == &kinds[3]) p = write_file(sp, "CNRSHRD\0", 1, p, end);
        else unlink(sp);
    }
    switch (data[0] % N_KINDS) {
    case 0: try_nodes(path); break;
    case 1: try_bm25(path); break;
    case 2: try_graph(path); break;
    case 3: try_records(path); break;
    default: try_reuse(path); break;
    }
    unlink(path);
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* BM25 query latency.
 *
 *   bm25_bench INDEX QUERIES_FILE
 *       Opens INDEX and runs the lines of QUERIES_FILE (blank lines
 *       skipped) as top-20 queries, 1,000 in total, cycling through the
 *       file.  One untimed pass over the queries comes first so that page
 *       faults on the freshly mapped file are not charged to the first
 *       queries.  Prints p50/p99 latency in microseconds and queries/s,
 *       for searches with a reused scratch (the way a server loop runs)
 *       and for plain cn_bm25_search (one score array allocated per call).
 *
 *   bm25_bench --build INDEX FILE_LIST
 *       Builds INDEX from the files named one per line in FILE_LIST, one
 *       document per 30-line chunk (the path is added to every chunk, as
 *       the compiler adds a symbol's path), k1 = 1.2, b = 0.75.  Prints
 *       the document and term counts and the build time.
 *
 * Timing uses CLOCK_MONOTONIC around each query. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "index/cn_bm25.h"
#include "util/cn_util.h"

#define RUNS 1000
#define TOP_K 20
#define CHUNK_LINES 30

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Splits text into its non-blank lines (in place). */
static int split_lines(char *text, cn_strv *out)
{
    char *p = text;
    while (*p) {
        char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
        char *q = p;
        if (nl) *nl = '\0';
        if (end > p && end[-1] == '\r') end[-1] = '\0';
        while (*q == ' ' || *q == '\t') q++;
        if (*q && cn_strv_push(out, q) < 0) return -1;
        if (!nl) break;
        p = nl + 1;
    }
    return 0;
}

static int build(const char *index, const char *list_path)
{
    char *list = NULL;
    size_t len = 0;
    cn_strv files = CN_STRV_INIT;
    cn_bm25_builder *bld = NULL;
    cn_bm25 *idx = NULL;
    uint32_t doc = 0;
    double t0 = now_us();
    int rc;

    rc = cn_file_read(list_path, (size_t)1 << 30, &list, &len);
    if (rc == 0 && split_lines(list, &files) < 0) rc = CN_ENOMEM;
    if (rc == 0) rc = cn_bm25_builder_new(1.2, 0.75, &bld);
    for (size_t i = 0; rc == 0 && i < files.len; i++) {
        char *text = NULL;
        size_t tlen = 0;
        const char *p, *end;
        if (cn_file_read(files.items[i], (size_t)64 << 20, &text, &tlen) != 0) continue;
        p = text;
        end = text + tlen;
        while (rc == 0 && p < end) {
            const char *q = p;
            for (int l = 0; l < CHUNK_LINES && q < end; l++) {
                const char *nl = memchr(q, '\n', (size_t)(end - q));
                q = nl ? nl + 1 : end;
            }
            rc = cn_bm25_add(bld, doc, files.items[i], strlen(files.items[i]));
            if (rc == 0) rc = cn_bm25_add(bld, doc, p, (size_t)(q - p));
            doc++;
            p = q;
        }
        free(text);
    }
    if (rc == 0) rc = cn_bm25_write(bld, doc, index);
    if (rc == 0) rc = cn_bm25_open(index, &idx);
    if (rc == 0) {
        printf("built %s: %u documents, %zu terms, avgdl %.1f, %.2f s\n", index,
               cn_bm25_doc_count(idx), cn_bm25_term_count(idx), cn_bm25_avgdl(idx),
               (now_us() - t0) / 1e6);
    } else {
        fprintf(stderr, "bm25_bench: %s\n", cn_error_last()->message);
    }
    cn_bm25_close(idx);
    cn_bm25_builder_free(bld);
    cn_strv_free(&files);
    free(list);
    return rc == 0 ? 0 : 1;
}

/* Times RUNS queries; scratch NULL means plain cn_bm25_search. */
static int run(const cn_bm25 *idx, const cn_strv *queries, cn_bm25_scratch *scratch,
               const char *label)
{
    double *lat = malloc(RUNS * sizeof *lat), total = 0;
    cn_bm25_hit hits[TOP_K];
    size_t n, hits_total = 0;

    if (lat == NULL) return -1;
    for (size_t i = 0; i < queries->len; i++) {  /* warm-up */
        if (scratch)
            cn_bm25_search_scratch(idx, scratch, queries->items[i], TOP_K, NULL, NULL, hits, &n);
        else
            cn_bm25_search(idx, queries->items[i], TOP_K, NULL, NULL, hits, &n);
    }
    for (int r = 0; r < RUNS; r++) {
        const char *q = queries->items[(size_t)r % queries->len];
        double t0 = now_us();
        int rc = scratch ? cn_bm25_search_scratch(idx, scratch, q, TOP_K, NULL, NULL, hits, &n)
                         : cn_bm25_search(idx, q, TOP_K, NULL, NULL, hits, &n);
        lat[r] = now_us() - t0;
        if (rc != 0) {
            fprintf(stderr, "bm25_bench: query \"%s\": %s\n", q, cn_error_last()->message);
            free(lat);
            return -1;
        }
        total += lat[r];
        hits_total += n;
    }
    qsort(lat, RUNS, sizeof *lat, cmp_double);
    printf("%-8s %d queries (top %d, %.1f hits avg): p50 %.1f us  p99 %.1f us  max %.1f us  "
           "%.0f queries/s\n",
           label, RUNS, TOP_K, (double)hits_total / RUNS, lat[RUNS / 2], lat[RUNS * 99 / 100],
           lat[RUNS - 1], RUNS / (total / 1e6));
    free(lat);
    return 0;
}

int main(int argc, char **argv)
{
    char *text = NULL;
    size_t len = 0;
    cn_strv queries = CN_STRV_INIT;
    cn_bm25 *idx = NULL;
    cn_bm25_scratch *scratch = NULL;
    int status = 1;

    if (argc == 4 && strcmp(argv[1], "--build") == 0) return build(argv[2], argv[3]);
    if (argc != 3) {
        fprintf(stderr, "usage: bm25_bench INDEX QUERIES_FILE\n"
                        "       bm25_bench --build INDEX FILE_LIST\n");
        return 2;
    }
    if (cn_bm25_open(argv[1], &idx) != 0 ||
        cn_file_read(argv[2], (size_t)1 << 30, &text, &len) != 0) {
        fprintf(stderr, "bm25_bench: %s\n", cn_error_last()->message);
        goto done;
    }
    if (split_lines(text, &queries) < 0 || queries.len == 0) {
        fprintf(stderr, "bm25_bench: %s: no queries\n", argv[2]);
        goto done;
    }
    printf("index %s: %u documents, %zu terms; %zu distinct queries\n", argv[1],
           cn_bm25_doc_count(idx), cn_bm25_term_count(idx), queries.len);
    if (cn_bm25_scratch_new(&scratch) != 0) goto done;
    if (run(idx, &queries, scratch, "scratch") == 0 && run(idx, &queries, NULL, "per-call") == 0)
        status = 0;
done:
    cn_bm25_scratch_free(scratch);
    cn_bm25_close(idx);
    cn_strv_free(&queries);
    free(text);
    return status;
}

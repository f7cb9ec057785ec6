/* The offline planner's whole-file signal (see cn_planner.h).
 *
 * Everything else the planner ranks is a node: a function, a class, a
 * file's top-level lines.  An issue often describes a file's subject as a
 * whole (a card, a resolver, a command's options) in words spread over
 * many of its functions, none of which matches well alone.  BM25 over
 * whole files sees that; fused with the node-based file ranking by rank
 * (not by score, which live on different scales), it lifts the files both
 * agree on and costs nothing when they agree already. */
#include "cn_planner.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../index/cn_bm25.h"
#include "../index/cn_index.h"
#include "../index/cn_nodes.h"

/* Reciprocal rank fusion: 1/(K + rank) for the node-based ranking plus
 * W_FILE_BM25/(K + rank) for the whole-file one.  A small K keeps the top
 * of each list apart; the whole-file list weighs less, since it knows
 * nothing of the names, paths and call graph the other one uses.  From
 * the multilingual and Python development sets (bench/README.md). */
#define FUSE_K 5.0
#define W_FILE_BM25 0.7

typedef struct file_hit {
    const char *path;
    double score;
} file_hit;

static int cmp_hits(const void *a, const void *b)
{
    const file_hit *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return strcmp(x->path, y->path);
}

int cn_pl_file_bm25(const struct cn_index *idx, const char *question, size_t top_k, cn_strv *out)
{
    uint32_t n_files, n_docs, n_groups = 0, *group_of = NULL, *file_of_group = NULL;
    double *scores = NULL;
    file_hit *hits = NULL;
    size_t n_hits = 0;
    bool all_tests = true;
    int rc = 0;

    if (idx == NULL || idx->bm25 == NULL || idx->nodes == NULL || question == NULL) return 0;
    n_files = cn_nodes_file_count(idx->nodes);
    n_docs = cn_bm25_doc_count(idx->bm25);
    if (n_files == 0 || n_docs == 0) return 0;
    group_of = malloc((size_t)n_docs * sizeof *group_of);
    file_of_group = malloc((size_t)n_files * sizeof *file_of_group);
    if (group_of == NULL || file_of_group == NULL) goto oom;
    for (uint32_t f = 0; f < n_files && all_tests; f++) {
        cn_file_view fv;
        if (cn_nodes_file(idx->nodes, f, &fv) == 0 && !fv.is_test) all_tests = false;
    }
    memset(group_of, 0xff, (size_t)n_docs * sizeof *group_of);
    /* a file's nodes are numbered contiguously from its file node */
    for (uint32_t f = 0; f < n_files; f++) {
        cn_file_view fv;
        if (cn_nodes_file(idx->nodes, f, &fv) != 0 || (fv.is_test && !all_tests)) continue;
        for (uint32_t d = fv.node; d < n_docs && d - fv.node < fv.n_nodes; d++) group_of[d] = n_groups;
        file_of_group[n_groups++] = f;
    }
    if (n_groups == 0) goto out;
    if ((scores = malloc((size_t)n_groups * sizeof *scores)) == NULL ||
        (hits = malloc((size_t)n_groups * sizeof *hits)) == NULL)
        goto oom;
    if ((rc = cn_bm25_group_scores(idx->bm25, question, group_of, n_groups, scores)) < 0) goto out;
    for (uint32_t g = 0; g < n_groups; g++) {
        cn_file_view fv;
        if (!(scores[g] > 0) || cn_nodes_file(idx->nodes, file_of_group[g], &fv) != 0) continue;
        hits[n_hits].path = fv.path;
        hits[n_hits++].score = scores[g];
    }
    qsort(hits, n_hits, sizeof *hits, cmp_hits);
    for (size_t i = 0; i < n_hits && i < top_k; i++)
        if (cn_strv_push(out, hits[i].path) < 0) goto oom;
    goto out;
oom:
    rc = cn_error_set(CN_ENOMEM, "planner: out of memory (whole-file bm25)");
out:
    free(group_of);
    free(file_of_group);
    free(scores);
    free(hits);
    return rc;
}

typedef struct fused {
    json_object *file;
    size_t rank;             /* in the node-based ranking, from 0 */
    double score;
} fused;

static int cmp_fused(const void *a, const void *b)
{
    const fused *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

int cn_pl_fuse_files(json_object *files, const cn_strv *whole)
{
    size_t n = json_object_array_length(files);
    fused *f;
    json_object *tmp;

    if (n == 0 || whole == NULL || whole->len == 0) return 0;
    if ((f = calloc(n, sizeof *f)) == NULL || (tmp = json_object_new_array()) == NULL) {
        free(f);
        return cn_error_set(CN_ENOMEM, "planner: out of memory (file fusion)");
    }
    for (size_t i = 0; i < n; i++) {
        json_object *path = NULL, *why = NULL;
        f[i].file = json_object_get(json_object_array_get_idx(files, i));
        f[i].rank = i;
        f[i].score = 1.0 / (FUSE_K + (double)i + 1.0);
        json_object_object_get_ex(f[i].file, "path", &path);
        for (size_t j = 0; j < whole->len; j++) {
            char buf[64];
            if (strcmp(whole->items[j], json_object_get_string(path)) != 0) continue;
            f[i].score += W_FILE_BM25 / (FUSE_K + (double)j + 1.0);
            snprintf(buf, sizeof buf, "whole-file bm25 #%zu", j + 1);
            if (json_object_object_get_ex(f[i].file, "why", &why)) json_object_array_add(why, json_object_new_string(buf));
            break;
        }
        /* the score the symbols are weighed by (cn_planner.c) is now the fused one */
        json_object_object_add(f[i].file, "score", json_object_new_double(f[i].score));
    }
    qsort(f, n, sizeof *f, cmp_fused);
    /* the array is rebuilt in the new order: json-c has no in-place sort
     * that keeps references */
    for (size_t i = 0; i < n; i++) json_object_array_add(tmp, f[i].file);
    json_object_array_del_idx(files, 0, n);
    for (size_t i = 0; i < n; i++) json_object_array_add(files, json_object_get(json_object_array_get_idx(tmp, i)));
    json_object_put(tmp);
    free(f);
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The offline planner's in-file function ranking (see cn_planner.h).
 *
 * The retrieval skills search every node of the repository at once, so a
 * function of the right file that shares only a few of the question's
 * words never reaches the pool: the node that wins is whichever matched
 * best anywhere.  Once the answer's files are chosen, the question is
 * asked again of their functions and methods alone (BM25 over the same
 * index, the documents filtered to those files), so the symbols of a file
 * everything points at are ranked among themselves. */
#include "cn_planner.h"

#include <stdlib.h>
#include <string.h>

#include <codenib/lang.h>

#include "../index/cn_bm25.h"
#include "../index/cn_index.h"
#include "../index/cn_nodes.h"

typedef struct span {
    uint32_t lo, hi;   /* the file's nodes: [lo, hi) */
} span;

typedef struct infile_filter {
    const cn_nodes *nodes;
    const span *spans;
    size_t n_spans;
} infile_filter;

static bool in_answer_files(uint32_t doc, void *data)
{
    const infile_filter *f = data;
    cn_node_view v;
    size_t i;
    for (i = 0; i < f->n_spans; i++)
        if (doc >= f->spans[i].lo && doc < f->spans[i].hi) break;
    if (i == f->n_spans || cn_nodes_get(f->nodes, doc, &v) != 0) return false;
    return v.kind == CN_NODE_FUNCTION || v.kind == CN_NODE_METHOD;
}

int cn_pl_infile_bm25(const struct cn_index *idx, const char *question, const cn_strv *files, size_t k,
                      cn_pl_pool *out)
{
    span *spans;
    cn_bm25_hit *hits = NULL;
    size_t n_spans = 0, n_hits = 0;
    int rc = 0, oom = 0;

    if (idx == NULL || idx->bm25 == NULL || idx->nodes == NULL || question == NULL || files->len == 0 || k == 0)
        return 0;
    if ((spans = calloc(files->len, sizeof *spans)) == NULL || (hits = calloc(k, sizeof *hits)) == NULL) {
        free(spans);
        return cn_error_set(CN_ENOMEM, "planner: out of memory (in-file bm25)");
    }
    for (size_t i = 0; i < files->len; i++) {
        cn_file_view fv;
        if (cn_nodes_find_file(idx->nodes, files->items[i], &fv) != 0) {
            cn_error_clear();   /* a path the question named but the index has not */
            continue;
        }
        spans[n_spans].lo = fv.node;
        spans[n_spans++].hi = fv.node + fv.n_nodes;
    }
    if (n_spans > 0) {
        infile_filter f = {idx->nodes, spans, n_spans};
        rc = cn_bm25_search(idx->bm25, question, k, in_answer_files, &f, hits, &n_hits);
    }
    for (size_t i = 0; rc == 0 && i < n_hits && !oom; i++) {
        json_object *o = cn_pl_hit_json(idx, hits[i].doc, hits[i].score);
        cn_pl_node *n;
        if (o == NULL) continue;   /* no such node (or no memory for it): left out */
        n = cn_pl_pool_node(out, o, &oom);
        json_object_put(o);
        if (n != NULL) n->score = hits[i].score;
    }
    free(spans);
    free(hits);
    if (rc == 0 && oom) rc = cn_error_set(CN_ENOMEM, "planner: out of memory (in-file bm25)");
    return rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* An opened compiled index (one generation of one repository): the readers
 * skills use through cn_host.index. */
#ifndef CN_INDEX_H
#define CN_INDEX_H

#include <pthread.h>

#include <json-c/json.h>

#include <codenib/index.h>

#include "cn_bm25.h"
#include "cn_graph.h"
#include "cn_nodes.h"

struct cn_index {
    char *dir;            /* the generation directory */
    char *repo_root;      /* canonical repository root */
    cn_nodes *nodes;
    cn_bm25 *bm25;        /* NULL when not built */
    cn_graph *graph;      /* NULL when not built */
    /* The LSP provider serving this index (a cn_backend_instance), made
     * on first use by cn_host.lsp under lsp_lock, freed with the index. */
    pthread_mutex_t lsp_lock;
    void *lsp;
    char *lsp_error;      /* why the provider could not be made, once tried */
};

/* Opens the generation in `dir`: the parts its manifest lists (nodes
 * always), each checked; one listed but missing or failing its checks is
 * CN_ECORRUPT naming the file (the index is damaged: a query must not
 * answer without it).  `repo_root` is where node text is read from. */
int cn_index_open(const char *dir, const char *repo_root, struct cn_index **out);
/* Opens the current generation of a repository's cache (cache_dir NULL:
 * the default for repo).  CN_ENOTFOUND when it was never compiled. */
int cn_index_open_repo(const char *repo, const char *cache_dir, struct cn_index **out);
void cn_index_close(struct cn_index *idx);
/* The manifest of the generation in `dir` (never through a link), its
 * checksum verified; CN_ECORRUPT naming it when it is missing, fails its
 * checksum or is not a JSON object. */
int cn_index_manifest_read(const char *dir, json_object **out);
/* Writes `m` as the manifest of `dir`, sealed with the checksum the
 * reader verifies (added to m as "checksum"). */
int cn_index_manifest_write(const char *dir, json_object *m);

const cn_index_services *cn_host_index_services(void);

#endif /* CN_INDEX_H */

/* SPDX-License-Identifier: Apache-2.0 */
/* The nodes index: every file, class, function, method, block ... of a
 * repository with its qualified name ("pkg/mod.py:Class.method"), kind,
 * 1-based line range and parent.  Node ids are dense and shared with the
 * BM25 index (one document per node) and the symbol graph. */
#ifndef CN_NODES_H
#define CN_NODES_H

#include <stdbool.h>
#include <stdint.h>

#include "cn_filerec.h"

#define CN_NODES_FILE "nodes.bin"

typedef struct cn_nodes cn_nodes;

typedef struct cn_node_view {
    uint32_t id;
    int kind;               /* cn_node_kind */
    uint32_t flags;
    uint32_t file;          /* file index */
    int32_t parent;         /* node id, -1 for a file node */
    uint32_t start_line;    /* 1-based inclusive */
    uint32_t end_line;
    const char *name;
    const char *qualname;   /* "path:Class.method"; a file node's is its path */
    const char *path;
    const char *language;
    bool is_test;
} cn_node_view;

typedef struct cn_file_view {
    uint32_t index;
    const char *path;
    const char *language;
    uint32_t node;          /* the file node's id */
    uint32_t n_nodes;       /* nodes of this file, contiguous from `node` */
    uint64_t hash;
    uint64_t size;
    uint32_t n_lines;
    bool is_test;
} cn_file_view;

/* Writes the nodes of the parsed records (status CN_REC_PARSED, in order);
 * node ids: each file's node, then its nodes in emission order.  Returns
 * the node count through *n_nodes (may be NULL). */
int cn_nodes_write(const cn_file_rec *recs, size_t n, const char *path, uint32_t *n_nodes);
/* The nodes cn_nodes_write numbers for recs: each parsed file and its
 * nodes (BM25 numbers its documents the same way). */
size_t cn_nodes_numbered(const cn_file_rec *recs, size_t n);

int cn_nodes_open(const char *path, cn_nodes **out);
void cn_nodes_close(cn_nodes *nodes);
uint32_t cn_nodes_count(const cn_nodes *nodes);
uint32_t cn_nodes_file_count(const cn_nodes *nodes);
/* CN_ENOTFOUND for an id out of range. */
int cn_nodes_get(const cn_nodes *nodes, uint32_t id, cn_node_view *out);
int cn_nodes_file(const cn_nodes *nodes, uint32_t index, cn_file_view *out);
/* By exact path; CN_ENOTFOUND when absent. */
int cn_nodes_find_file(const cn_nodes *nodes, const char *path, cn_file_view *out);
/* By exact qualified name ("pkg/mod.py:Class.method" or a path). */
int cn_nodes_find_qualname(const cn_nodes *nodes, const char *qualname, uint32_t *id);
/* Every node whose short name is `name` (up to max ids, in id order);
 * returns how many exist in all. */
size_t cn_nodes_find_name(const cn_nodes *nodes, const char *name, uint32_t *ids, size_t max);
/* The innermost node of `path` whose lines contain `line` (the file node
 * when no other does). */
int cn_nodes_at(const cn_nodes *nodes, const char *path, uint32_t line, uint32_t *id);

const char *cn_node_kind_name(int kind);

#endif /* CN_NODES_H */

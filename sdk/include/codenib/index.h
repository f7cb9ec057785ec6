/* SPDX-License-Identifier: Apache-2.0 */
/* codenib SDK: compiled-index services for skills (cn_host.index).
 *
 * A skill whose context carries an index (cn_skill_context.index, checked
 * with context_require(..., CN_NEEDS_INDEX, ...)) reads nodes and searches
 * through this table.  Line numbers here are 0-based, like everything inside
 * a skill; the host converts at the boundary.  Strings in a cn_node_info
 * are borrowed: valid as long as the index is open (the whole run). */
#ifndef CODENIB_INDEX_H
#define CODENIB_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include <codenib/errors.h>
#include <codenib/host.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cn_index;

typedef struct cn_node_info {
    uint32_t struct_size;
    uint32_t id;
    int kind;                 /* cn_node_kind (codenib/lang.h) */
    uint32_t flags;           /* CN_NODE_F_* */
    uint32_t start_line;      /* 0-based, inclusive */
    uint32_t end_line;        /* 0-based, inclusive */
    int64_t parent;           /* node id, or -1 for a file node */
    const char *name;         /* "method" */
    const char *qualname;     /* "pkg/mod.py:Class.method"; a file node: its path */
    const char *path;         /* "pkg/mod.py" */
    const char *language;
    int is_test;
} cn_node_info;

typedef struct cn_search_filter {
    uint32_t struct_size;
    int exclude_tests;        /* leave out nodes of test files */
    const char *path_prefix;  /* only paths starting with this; NULL: any */
    uint32_t kinds;           /* bit (1u << kind) per wanted kind; 0: any */
} cn_search_filter;

/* Edge types of the symbol graph.  Stored in indexes: only append. */
typedef enum cn_edge_type {
    CN_EDGE_CONTAINS = 1,     /* parent -> child (file -> class -> method) */
    CN_EDGE_CALLS = 2,        /* caller -> callee */
    CN_EDGE_REFERENCES = 3,   /* user -> used symbol */
    CN_EDGE_IMPORTS = 4,      /* importer -> module file or symbol */
    CN_EDGE_INHERITS = 5      /* class -> base class */
} cn_edge_type;

#define CN_EDGES_OUT 0        /* edges from the node */
#define CN_EDGES_IN 1         /* edges to the node */

typedef struct cn_edge_info {
    uint32_t struct_size;
    uint32_t node;            /* the other end; UINT32_MAX when the target was
                                 not resolved to a node (then see name) */
    int type;                 /* cn_edge_type */
    int resolved;
    uint32_t line;            /* 0-based use site; UINT32_MAX for contains */
    uint32_t column;          /* 0-based byte column of the use site */
    const char *name;         /* as written at the use site ("" for contains) */
} cn_edge_info;

typedef struct cn_search_hit {
    uint32_t node;
    double score;
} cn_search_hit;

typedef struct cn_index_services {
    uint32_t struct_size;
    uint32_t (*node_count)(const struct cn_index *idx);
    /* CN_ENOTFOUND for an id out of range. */
    int (*node)(const struct cn_index *idx, uint32_t id, cn_node_info *out, cn_error *err);
    int (*node_by_qualname)(const struct cn_index *idx, const char *qualname, uint32_t *id,
                            cn_error *err);
    /* Ids of every node with this short name (at most max stored);
     * returns how many there are. */
    size_t (*nodes_by_name)(const struct cn_index *idx, const char *name, uint32_t *ids,
                            size_t max);
    /* The innermost node of `path` containing 0-based line `line`. */
    int (*node_at)(const struct cn_index *idx, const char *path, uint32_t line, uint32_t *id,
                   cn_error *err);
    /* BM25 top-k (best first).  CN_EUNSUPPORTED when the index has no
     * BM25 part. */
    int (*bm25_search)(const struct cn_index *idx, const char *query, size_t k,
                       const cn_search_filter *filter, cn_search_hit *hits, size_t *n_hits,
                       cn_error *err);
    /* The node's source lines, read from the repository; *text is
     * allocated with host->alloc. */
    int (*node_text)(const cn_host *host, const struct cn_index *idx, uint32_t id, char **text,
                     size_t *len, cn_error *err);

    /* Symbol graph (each returns 0 / CN_EUNSUPPORTED when the index has
     * no graph part).  Edges of `node` whose type bit (1u << type) is in
     * type_mask, in `direction` (CN_EDGES_OUT/IN), sorted by type, use site
     * and other end; returns how many there are (at most max stored). */
    size_t (*edges)(const struct cn_index *idx, uint32_t node, uint32_t type_mask, int direction,
                    cn_edge_info *out, size_t max);
    /* Use sites whose target was not resolved, by the name written there
     * ("json.loads") or its last component ("loads"); `node` of each is
     * the using node. */
    size_t (*unresolved)(const struct cn_index *idx, const char *name, uint32_t type_mask,
                         cn_edge_info *out, size_t max);
    /* The use site (call, reference, import, base class) at a 0-based
     * position of a file; CN_ENOTFOUND when none is there. */
    int (*edge_at)(const struct cn_index *idx, const char *path, uint32_t line, uint32_t column,
                   uint32_t *from_node, cn_edge_info *out, cn_error *err);
    /* Whether the index has a symbol graph. */
    int (*has_graph)(const struct cn_index *idx);
} cn_index_services;

#ifdef __cplusplus
}
#endif

#endif /* CODENIB_INDEX_H */

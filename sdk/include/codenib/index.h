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
} cn_index_services;

#ifdef __cplusplus
}
#endif

#endif /* CODENIB_INDEX_H */

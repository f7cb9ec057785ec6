/* SPDX-License-Identifier: Apache-2.0 */
/* Graph navigation shared by find_callers, find_callees and trace: symbol
 * resolution (a name as a user or a model writes it -> graph nodes),
 * breadth-first walks over call/reference edges, and bounded path search.
 *
 * Only call and reference edges are ever walked: containment (file ->
 * class -> method), imports and inheritance are not calls, and mixing them
 * in makes "who calls X" answer "the class that contains X".  Everything
 * goes through the host's index services; line numbers are 0-based. */
#ifndef CN_SKILL_GRAPH_H
#define CN_SKILL_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include <codenib/index.h>
#include <codenib/skill.h>

#define CN_SG_CALLS (1u << CN_EDGE_CALLS)
#define CN_SG_REFS (1u << CN_EDGE_REFERENCES)
#define CN_SG_NONE UINT32_MAX

/* Checks the context for an index with a symbol graph: CN_ENOCONTEXT
 * without an index, CN_EUNSUPPORTED (saying how to compile one) when the
 * index was built without its graph. */
int cn_sg_require_graph(const cn_host *h, const cn_skill_context *ctx, const cn_index_services **svc,
                        cn_error *err);

/* "calls", "references", ... */
const char *cn_sg_edge_name(int type);

/* All edges of `node` in `mask` and `direction`, in the index's order;
 * *out is host->alloc'd (NULL when there are none). */
int cn_sg_edges(const cn_host *h, const struct cn_index *idx, uint32_t node, uint32_t mask,
                int direction, cn_edge_info **out, size_t *n, cn_error *err);

/* ---- symbol resolution -------------------------------------------------- */

typedef enum cn_sg_status {
    CN_SG_FOUND = 0,       /* exactly one node: ids[0] */
    CN_SG_AMBIGUOUS = 1,   /* several nodes: ids[0, n) */
    CN_SG_UNRESOLVED = 2,  /* no node, but the name is used at unresolved
                              use sites (a library function): n_uses */
    CN_SG_NOT_FOUND = 3    /* nothing: ids[0, n) are suggestions */
} cn_sg_status;

typedef struct cn_sg_match {
    cn_sg_status status;
    const char *how;     /* the rule that matched: "qualname", "qualified",
                            "name", "unresolved", "fuzzy" (NULL if none) */
    uint32_t *ids;       /* host->alloc'd, sorted by qualname */
    size_t n;
    size_t n_uses;       /* CN_SG_UNRESOLVED: unresolved use sites */
    char *name;          /* the symbol as looked up (host->alloc'd) */
    char *file;          /* the file filter applied, or NULL */
} cn_sg_match;

/* Resolves `symbol` (a short name, a dotted name "Class.method", or a full
 * qualname "path:Class.method"), optionally narrowed to `file_path`.
 * Rules, in order, the first that matches wins:
 *   1. exact qualname;
 *   2. exact qualified suffix: the last components of the node's dotted
 *      name (module path with '/' as '.', then the qualified name) equal
 *      the symbol ("ConnectionPool.get", "pool.ConnectionPool.get");
 *   3. exact short name (one component);
 *   4. a name that appears only at unresolved use sites whose type is in
 *      `use_mask` ("json.loads", "malloc"): CN_SG_UNRESOLVED;
 *   5. fuzzy, on the same number of trailing components: equal ignoring
 *      case; else an edit distance of at most 1 (symbols of 4 to 7
 *      characters) or 2 (8 or more), or the symbol (3 characters or more)
 *      contained in the name, ignoring case.
 * Files and module-level blocks are never candidates of rules 2-5, and
 * when definitions and C prototypes of one name match together, the
 * prototypes are dropped.  A failure is CN_EINVAL (empty symbol) or
 * CN_ENOMEM; "nothing matched" is a status, not an error. */
int cn_sg_resolve(const cn_host *h, const struct cn_index *idx, const char *symbol,
                  const char *file_path, uint32_t use_mask, cn_sg_match *out, cn_error *err);
void cn_sg_match_free(const cn_host *h, cn_sg_match *m);

/* The result object of a match that is not CN_SG_FOUND: status
 * "ambiguous" with candidates, or "not_found" with suggestions, and a hint
 * saying what to do.  `role` names the argument ("symbol", "source", ...). */
cn_json *cn_sg_match_json(const cn_host *h, const struct cn_index *idx, const cn_sg_match *m,
                          const char *role, cn_error *err);

/* A node as a navigation result (cn_su_node_json without a score). */
cn_json *cn_sg_node_json(const cn_host *h, const struct cn_index *idx, uint32_t node, int content,
                         int gutter, cn_error *err);

/* ---- find_callers / find_callees ---------------------------------------- */

/* The whole of find_callers (direction CN_EDGES_IN) and find_callees
 * (CN_EDGES_OUT): arguments symbol, file_path, include_references, depth,
 * top_k, return_content, wrap_with_line_numbers, filter_test. */
int cn_sg_neighbours_run(const cn_host *h, const cn_skill_context *ctx, const cn_json *args,
                         int direction, char **result_json, cn_error *err);

/* ---- path search --------------------------------------------------------- */

typedef struct cn_sg_hop {
    uint32_t node;       /* CN_SG_NONE: the unresolved target name */
    uint32_t line;       /* use site in this node leading to the next hop,
                            UINT32_MAX on the last node */
    int type;            /* edge type of that use site */
} cn_sg_hop;

typedef struct cn_sg_path {
    cn_sg_hop *hops;     /* in call order: callers first */
    size_t n;            /* nodes; the length of the path is n - 1 */
} cn_sg_path;

typedef struct cn_sg_path_query {
    uint32_t source;
    int direction;           /* CN_EDGES_OUT: source calls ... target;
                                CN_EDGES_IN: target (or an entry point)
                                calls ... source */
    uint32_t mask;           /* edge types walked */
    int has_target;          /* 0: up to entry points (CN_EDGES_IN only) */
    uint32_t target;         /* a node, or CN_SG_NONE with target_name */
    const char *target_name; /* an unresolved name (CN_EDGES_OUT only) */
    unsigned max_depth;
    size_t max_paths;
    size_t budget;           /* search entries before giving up */
} cn_sg_path_query;

typedef struct cn_sg_paths {
    cn_sg_path *v;
    size_t n;
    int truncated;           /* a limit cut the search */
    unsigned shortest;       /* when no path fits max_depth but one
                                exists: its length; else 0 */
} cn_sg_paths;

/* Simple (cycle-free) paths, shortest first, ties in the index's edge
 * order.  Entry points (no target): nodes without callers in `mask`, test
 * functions, module-level blocks and files. */
int cn_sg_find_paths(const cn_host *h, const struct cn_index *idx, const cn_sg_path_query *q,
                     cn_sg_paths *out, cn_error *err);
void cn_sg_paths_free(const cn_host *h, cn_sg_paths *p);

#endif /* CN_SKILL_GRAPH_H */

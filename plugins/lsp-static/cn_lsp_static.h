/* SPDX-License-Identifier: Apache-2.0 */
/* lsp-static: the LSP provider over the compiled index (nodes + symbol
 * graph), reached only through the host's index services.  Private to the
 * plugin: shared by the provider (cn_lsp_static.c) and the route extension
 * (cn_lsp_route.c). */
#ifndef CN_LSP_STATIC_H
#define CN_LSP_STATIC_H

#include <stddef.h>
#include <stdint.h>

#include <codenib/index.h>
#include <codenib/lsp.h>

#define CN_LSP_PROVIDER_ID "lsp-static"
#define CN_LSP_MAX_TOP_K 500

/* Use-site edges: everything but containment. */
#define CN_LSP_USE_MASK                                                        \
    ((1u << CN_EDGE_CALLS) | (1u << CN_EDGE_REFERENCES) | (1u << CN_EDGE_IMPORTS) | \
     (1u << CN_EDGE_INHERITS))

/* What the provider behaves by, for metadata.behavior_contract. */
#define CN_LSP_CONTRACT_GRAPH "static-symbol-graph"
#define CN_LSP_CONTRACT_POSITION "static-symbol-graph-position"
#define CN_LSP_CONTRACT_NODES "static-node-names"

/* Match scores and penalties: fractions of powers of two, exact in
 * binary, so results print them as written (0.9375, not 0.93749999...). */
#define CN_LSP_SCORE_QUALNAME 1.0          /* the qualified name itself */
#define CN_LSP_SCORE_DOTTED 0.96875        /* the whole name, dotted ("pkg.base.Base") */
#define CN_LSP_SCORE_SUFFIX 0.9375         /* a dotted or path suffix, an inherited member */
#define CN_LSP_SCORE_NAME 0.875            /* the short name */
#define CN_LSP_SCORE_FUZZY_CASE 0.75       /* the name, ignoring case */
#define CN_LSP_SCORE_FUZZY_PREFIX 0.625
#define CN_LSP_SCORE_FUZZY_INFIX 0.5
#define CN_LSP_PENALTY_PROTOTYPE 0.0625    /* a declaration without a body */
#define CN_LSP_PENALTY_BLOCK 0.125         /* module-level statements */
#define CN_LSP_PENALTY_TEST 0.0078125
#define CN_LSP_PENALTY_ELSEWHERE 0.015625  /* not in the file_path asked about */
#define CN_LSP_GUESS_FACTOR 0.875          /* found by name for an unresolved use site */

/* The provider's state: immutable once created, so calls from several
 * threads need no lock (the index services only read). */
typedef struct cn_lsp_static {
    const cn_host *host;
    const struct cn_index *idx;
    const cn_index_services *I;
    const cn_json_services *J;
    int has_graph;
    char snapshot[40];   /* metadata.index_snapshot */
} cn_lsp_static;

/* One resolved candidate for a name: the node and how well it matched. */
typedef struct cn_lsp_cand {
    uint32_t node;
    double score;
} cn_lsp_cand;

typedef struct cn_lsp_cands {
    cn_lsp_cand *items;
    size_t len, cap;
} cn_lsp_cands;

void cn_lsp_cands_free(const cn_lsp_static *p, cn_lsp_cands *c);
/* Adds node unless it is there already (keeping the better score). */
int cn_lsp_cands_add(const cn_lsp_static *p, cn_lsp_cands *c, uint32_t node, double score);

/* Resolves a name as a user writes it (a qualified name "path:Class.m",
 * a dotted suffix "Class.m" or "mod.Class", a short name, a path, with
 * optional backticks and "()") to its definitions, best first.  Exact
 * matches win; only when there are none and `fuzzy` is set are names
 * compared case-insensitively and by prefix/substring (then *fuzzy_used is
 * set).  prefer_path (may be NULL) ranks candidates of that file first.
 * 0 with no candidates when nothing matches. */
int cn_lsp_resolve_symbol(const cn_lsp_static *p, const char *symbol, const char *prefer_path,
                          int fuzzy, cn_lsp_cands *out, int *fuzzy_used, cn_error *err);

/* Every edge of `node` of the types in mask, in one direction; *out is
 * host->alloc'd (NULL when there are none). */
int cn_lsp_edges(const cn_lsp_static *p, uint32_t node, uint32_t mask, int direction,
                 cn_edge_info **out, size_t *n, cn_error *err);

/* The shared result shape of a node: node_id, node_name (qualified name),
 * type, file, start_line, end_line (0-based) and score. */
cn_json *cn_lsp_node_json(const cn_lsp_static *p, uint32_t node, double score, cn_error *err);

/* "calls", "references", "imports", "inherits", "contains". */
const char *cn_lsp_edge_name(int type);

/* Request accessors: an absent or null member gives the default; a member
 * of the wrong type is CN_EINVAL naming it. */
int cn_lsp_req_str(const cn_lsp_static *p, const cn_json *req, const char *key, const char **out,
                   cn_error *err);
int cn_lsp_req_bool(const cn_lsp_static *p, const cn_json *req, const char *key, int dflt, int *out,
                    cn_error *err);
int cn_lsp_req_top_k(const cn_lsp_static *p, const cn_json *req, size_t dflt, size_t *out,
                     cn_error *err);

/* The route extension (cn_lsp_route.c): fills `nodes` (an array) and sets
 * *fallback to a static string or NULL. */
int cn_lsp_route(const cn_lsp_static *p, const cn_json *req, cn_json *nodes, cn_json *meta,
                 const char **fallback, cn_error *err);

#endif /* CN_LSP_STATIC_H */

/* SPDX-License-Identifier: Apache-2.0 */
/* The deterministic offline planner: how `codenib query` answers when no
 * model is configured.  It runs the same skills an agent would (through the
 * registry, so the user's allow/exclude sets apply) in a fixed policy:
 *
 *   seeds of the question (identifiers, paths, stack-trace frames) and its
 *   error strings
 *   -> retrieval: lsp_route (symbols = seeds, query = question),
 *      bm25_search (the question; the seeds; the error strings),
 *      hybrid_search when a vector index exists
 *   -> fusion: weighted reciprocal rank fusion; anchors of a seed that
 *      resolved exactly weigh most; a path the question names boosts
 *      that file
 *   -> graph expansion around the top hits (find_callers, find_callees and
 *      lsp_route's neighbours) with a decayed score
 *   -> rerank: fused score + seed matches in the node's name, and a file's
 *      score from its best nodes, fused by rank with BM25 over each whole
 *      file; files whose first lines say they were generated kept behind
 *   -> the contract (Files / Symbols / Locations) and cited evidence.
 *
 * Files are the best-scoring files that hold a ranked node (or that the
 * question names); Symbols are the best function/method/class (struct,
 * union, enum) nodes inside those files, named the LocAgent way
 * ("path:Class.method"; a nested function folds into the outermost
 * function around it, so it is listed once under that name); Locations are
 * those symbols' 1-based line ranges.  `answer` is
 *
 *   Evidence:
 *   - path:start-end — why; why; why (Qualified.name)
 *   ...
 *
 *   Files: ...
 *   Symbols: ...
 *   Locations: ...
 *
 * so cn_contract_parse(answer) gives back `contract`.
 *
 * Every step is deterministic (ties broken by name).  A skill that is
 * missing, not allowed or failing is skipped and recorded in `steps`; only
 * when no retrieval worked at all does the run fail. */
#ifndef CN_PLANNER_H
#define CN_PLANNER_H

#include <stddef.h>

#include <json-c/json.h>

#include "../plugin/cn_registry.h"
#include "../util/cn_util.h"
#include "cn_contract.h"

typedef struct cn_planner_options {
    size_t max_files;       /* 5 */
    size_t max_symbols;     /* 10 */
    size_t max_locations;   /* 10 */
    size_t candidates;      /* per retriever, 50 */
    int use_vectors;        /* -1 auto (when the context has a vector index), 0 no, 1 yes */
    const cn_strv *seeds;   /* explicit seeds, may be NULL */
    unsigned without;       /* CN_PL_SIG_* switched off (ablations), 0 */
} cn_planner_options;

/* The planner's signals, each of which can be switched off to measure
 * what it is worth (`codenib eval --without`, bench/README.md). */
#define CN_PL_SIG_ROUTE       (1u << 0)   /* lsp_route: anchors of the seeds */
#define CN_PL_SIG_BM25        (1u << 1)   /* bm25_search over the question */
#define CN_PL_SIG_BM25_SEEDS  (1u << 2)   /* ... over the seeds */
#define CN_PL_SIG_BM25_ERRORS (1u << 3)   /* ... over the error strings */
#define CN_PL_SIG_TITLE       (1u << 4)   /* ... over the title, and names over the title */
#define CN_PL_SIG_HYBRID      (1u << 5)   /* hybrid_search (with a vector index) */
#define CN_PL_SIG_NAMES       (1u << 6)   /* symbol names matched against the question */
#define CN_PL_SIG_LITERALS    (1u << 7)   /* quoted text found verbatim */
#define CN_PL_SIG_EXPAND      (1u << 8)   /* one hop of callers and callees */
#define CN_PL_SIG_SEED_BONUS  (1u << 9)   /* a name that ends with a seed */
#define CN_PL_SIG_PATHS       (1u << 10)  /* files the question names */
#define CN_PL_SIG_FILE_WEIGHT (1u << 11)  /* symbols weighed by their file's rank */
#define CN_PL_SIG_SHORT_SEEDS (1u << 12)  /* seeds under three characters dropped */
#define CN_PL_SIG_ASIDE       (1u << 13)  /* files under doc/, examples/, benchmarks/ demoted */
#define CN_PL_SIG_FILE_BM25   (1u << 14)  /* files also ranked by BM25 over their whole text */
#define CN_PL_SIG_GENERATED   (1u << 15)  /* generated files demoted */
#define CN_PL_SIG_INFILE      (1u << 16)  /* the answer files' functions ranked among themselves */
#define CN_PL_SIG_MINORITY    (1u << 17)  /* files in a minority language of the repository demoted */
#define CN_PL_SIG_VENDORED    (1u << 18)  /* files under a directory with its own licence demoted */

/* Parses a comma-separated list of signal names (route, bm25, bm25-seeds,
 * bm25-errors, title, hybrid, names, literals, expand, seed-bonus, paths,
 * file-weight, short-seeds, aside, file-bm25, generated, infile) into
 * *mask.  CN_EINVAL names the unknown one and lists the known. */
int cn_planner_signals_parse(const char *list, unsigned *mask);
/* The names of the signals in mask, comma-separated in a fixed order ("" for
 * none); NULL on ENOMEM. */
char *cn_planner_signals_string(unsigned mask);

void cn_planner_options_init(cn_planner_options *o);

typedef struct cn_plan {
    cn_contract contract;        /* Files / Symbols / Locations */
    json_object *files;          /* ranked [{"path","score","why":[...]}] */
    json_object *symbols;        /* ranked [{"symbol","path","start_line","end_line","score","why":[...]}] */
    char *answer;                /* evidence lines, then the contract text */
    json_object *steps;          /* [{"skill","args","status","results","reason"}] in call order */
} cn_plan;

/* Answers `question` over the repository the registry is set to
 * (cn_registry_set_repo_cache).  `o` may be NULL (defaults).  On success
 * *out owns everything (free with cn_plan_free).  Errors: CN_EINVAL for an
 * empty question or bad options; CN_ENOTFOUND when no retrieval skill could
 * run (the message lists why each failed); CN_ENOMEM.  On error *out is
 * zeroed except `steps`, which still says what was tried (free it with
 * cn_plan_free too). */
int cn_planner_run(cn_registry *reg, const char *question, const cn_planner_options *o, cn_plan *out);
void cn_plan_free(cn_plan *p);

/* ---- semi-private: the ranking (cn_planner_rank.c) ------------------------
 * Shared by cn_planner.c only; declared here because the planner owns no
 * other header. */

typedef struct cn_pl_node {
    char *name;              /* node_name: "path:Qualified.name", or the path of a file node */
    char *path;
    char *type;              /* "function", "method", "class", "file", ... */
    long long id;            /* node_id, -1 when unknown */
    unsigned start_line, end_line;   /* 1-based */
    double fused;            /* weighted reciprocal rank fusion */
    double expand;           /* best decayed score from a graph neighbour */
    double bonus;            /* seed-name and path matches */
    double score;            /* fused + expand + bonus */
    int exact_seed;          /* an lsp_route anchor of a seed */
    cn_strv why;
} cn_pl_node;

typedef struct cn_pl_pool {
    cn_pl_node *items;
    size_t len, cap;
    json_object *by_name;    /* name -> index + 1 */
} cn_pl_pool;

int cn_pl_pool_init(cn_pl_pool *p);
void cn_pl_pool_free(cn_pl_pool *p);
/* The node of a skill result object (node_name, file, type, lines,
 * node_id), added if new; NULL when the object is no node or on ENOMEM
 * (*oom set). */
cn_pl_node *cn_pl_pool_node(cn_pl_pool *p, json_object *hit, int *oom);
cn_pl_node *cn_pl_pool_find(const cn_pl_pool *p, const char *name);
/* Adds weight/(CN_PL_RRF_K + rank) (scaled so rank 1 with weight 1 is 1.0)
 * to every node of a ranked result list; `label` names the list in
 * each node's why ("bm25 #3").  Returns how many nodes, or CN_ENOMEM. */
#define CN_PL_RRF_K 10.0
int cn_pl_fuse_list(cn_pl_pool *p, json_object *hits, double weight, const char *label);
/* Adds a reason once. */
int cn_pl_why(cn_pl_node *n, const char *fmt, ...) CN_PRINTF(2, 3);
/* Scores every node (fused + expand + seed and path bonuses). */
int cn_pl_score(cn_pl_pool *p, const cn_strv *seeds, const cn_strv *paths);
/* Node indexes sorted best first (ties by name). */
size_t *cn_pl_order(const cn_pl_pool *p);
/* Whether a node kind can be a contract symbol. */
int cn_pl_is_symbol_type(const char *type);
/* Whether `path` is one the question names ("pool.py" names "pkg/pool.py"). */
int cn_pl_path_mentioned(const char *path, const cn_strv *paths);
/* Whether a path lies under a doc(s)/, example(s)/ or benchmark directory. */
int cn_pl_path_is_aside(const char *path);
/* Ranked files: [{"path","score","why"}] best first (ties by path), a
 * file's score its best node plus a share of the next two (halved, when
 * demote_aside, for a file under documentation, examples or benchmarks
 * that the question does not name), plus the path bonus. */
json_object *cn_pl_rank_files(const cn_pl_pool *p, const size_t *order, const cn_strv *paths, int demote_aside);

/* Whole files (cn_planner_files.c): the non-test files of the index
 * ranked by BM25 over each file's whole text (cn_bm25_group_scores), best
 * first, at most top_k paths pushed to *out.  No BM25 index: no files.
 * CN_ENOMEM. */
int cn_pl_file_bm25(const struct cn_index *idx, const char *question, size_t top_k, cn_strv *out);
/* What cn_pl_fuse_files may lower besides fusing: each member NULL/0 is
 * that check off.  A file the question names (`named`) is never lowered. */
typedef struct cn_pl_fuse_opts {
    const cn_strv *named;          /* the paths the question names */
    const char *repo_root;         /* the checks that read the tree: */
    int generated;                 /*   generated files (cn_pl_file_is_generated) */
    int vendored;                  /*   vendored files (cn_pl_file_is_vendored) */
    const struct cn_nodes *nodes;  /* minority-language files (cn_pl_language_minor) */
    int demote_aside;              /* files under doc/, examples/, benchmarks/ ... */
} cn_pl_fuse_opts;
/* Re-ranks `files` (cn_pl_rank_files' list) by reciprocal rank fusion with
 * the whole-file ranking `whole` (NULL or empty: the node-based order
 * alone), then lowers what `o` asks for: the files near the top whose
 * first lines say they were generated or that lie under a directory with
 * a licence of its own, the aside files (the node ranking
 * halved them already, but whole-file BM25 would lift them back), and the
 * files in a language the repository barely uses.  Each file's "score"
 * becomes the fused score and its "why" says what moved it (without a
 * whole-file ranking the node-based score is kept, lowered as above).
 * Files `whole` has but `files` has not are not added: a file enters the
 * answer through a node.  CN_ENOMEM. */
int cn_pl_fuse_files(json_object *files, const cn_strv *whole, const cn_pl_fuse_opts *o);
/* The share of the index's non-test files written in each language:
 * cn_pl_language_minor() says whether `path`'s language has under
 * MINOR_SHARE of them (a repository's Python helper scripts beside its
 * C++, its JavaScript build files beside its TypeScript).  A path the
 * index lacks, or a repository in one language, is not minor. */
int cn_pl_language_minor(const struct cn_nodes *nodes, const char *path);
/* Whether the file `path` beneath the directory rootfd says in its first
 * 2 KiB that a tool generated it ("Code generated ... DO NOT EDIT",
 * "@generated", "generated by", a Bison banner).  A file that cannot be
 * read (gone, a link, not regular) is not generated. */
int cn_pl_file_is_generated(int rootfd, const char *path);
/* Whether a directory on the way to `path` (the root not included) holds
 * a licence file (cn_is_licence_name: "LICENSE", "COPYING",
 * "ICU-license.html") by a name the
 * root's licence files (`root_licences`, cn_pl_root_licences) do not
 * have: code copied in from another project (jq's decNumber beside its
 * COPYING), seldom the place a change belongs.  A workspace whose crates
 * or packages each carry the root's LICENSE is not vendored.  No link is
 * followed; a directory that cannot be read holds no licence. */
int cn_pl_file_is_vendored(int rootfd, const char *path, const cn_strv *root_licences);
/* The lowercased names of the licence files at the root, pushed to *out. */
void cn_pl_root_licences(int rootfd, cn_strv *out);

/* In-file functions (cn_planner_infile.c): BM25 of the question over the
 * functions and methods of `files` alone (paths the index lacks are
 * skipped), at most k of them added to `out` best first, each node's
 * score its BM25 score.  No BM25 index: nothing.  CN_ENOMEM. */
int cn_pl_infile_bm25(const struct cn_index *idx, const char *question, const cn_strv *files, size_t k,
                      cn_pl_pool *out);

/* Node `id` of the index as a skill-shaped hit (node_name, type, file,
 * 1-based start_line/end_line, node_id, score), as the retrieval skills
 * return them; NULL when there is no such node or on ENOMEM. */
json_object *cn_pl_hit_json(const struct cn_index *idx, uint32_t id, double score);

/* Name matching (cn_planner_names.c): the index's functions, methods and
 * classes (test files left out) ranked by how much of `question` their
 * names carry, best first, at most top_k, as skill-shaped hits
 * (node_name, type, file, lines, node_id, score).  CN_ENOMEM. */
struct cn_index;
int cn_pl_name_matches(const struct cn_index *idx, const char *question, size_t top_k, json_object **out);

/* Literal matching (cn_planner_literal.c): the question's error strings
 * (`errors`), quoted code spans with punctuation and --options, looked up
 * verbatim (or by their longest whole-word prefix) in the repository's
 * non-test sources; the symbols holding them, best first (a literal held
 * by n symbols gives each 1/n), at most top_k, as skill-shaped hits.
 * `used` (may be NULL) receives the literals that matched, as matched. */
int cn_pl_literal_matches(const struct cn_index *idx, const char *question, const cn_strv *errors,
                          size_t top_k, json_object **out, cn_strv *used);

#endif /* CN_PLANNER_H */

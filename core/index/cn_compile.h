/* SPDX-License-Identifier: Apache-2.0 */
/* `codenib compile`: a repository -> indexes in a cache directory outside
 * it.  Builds a new generation beside the previous one and switches to it
 * with a rename, under a lock, so a crash at any moment leaves the previous
 * index serving and two compiles never interleave. */
#ifndef CN_COMPILE_H
#define CN_COMPILE_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "../util/cn_util.h"
#include "cn_parse.h"
#include "cn_vectors.h"
#include "cn_walk.h"

#define CN_MANIFEST_FILE "repo_manifest.json"
#define CN_MANIFEST_SCHEMA 1
#define CN_BM25_INDEX_FILE "bm25.bin"
#define CN_RECORDS_FILE "records.bin"
#define CN_BM25_DEFAULT_K1 1.2
#define CN_BM25_DEFAULT_B 0.75

typedef enum cn_compile_stage {
    CN_STAGE_LOCK = 0,    /* waiting for another compile of the repository */
    CN_STAGE_WALK,
    CN_STAGE_PARSE,       /* done/total files */
    CN_STAGE_NODES,
    CN_STAGE_BM25,        /* done/total files */
    CN_STAGE_GRAPH,
    CN_STAGE_VECTORS,     /* done/total nodes embedded (or reused) */
    CN_STAGE_PUBLISH
} cn_compile_stage;

/* What a stage does, for progress lines ("parsing", "linking symbols"). */
const char *cn_compile_stage_name(cn_compile_stage stage);

typedef void (*cn_compile_progress_fn)(cn_compile_stage stage, size_t done, size_t total,
                                       const char *note, void *data);

typedef struct cn_compile_opts {
    const char *repo;              /* the repository directory */
    const char *cache_dir;         /* NULL: cn_cache_dir_for(repo) */
    cn_strv languages;             /* empty: every language with a backend */
    cn_strv exclude_dirs;
    cn_strv indexes;               /* empty: bm25 and graph (nodes always);
                                      "vector" only when asked for */
    cn_vectors_opts vectors;       /* the embedder and store of "vector" */
    bool no_default_excludes;
    bool rebuild;                  /* ignore the previous build's records */
    bool no_wait;                  /* fail at once when another compile holds the lock */
    int threads;                   /* <= 0: all cores */
    cn_compile_progress_fn progress;
    void *progress_data;
} cn_compile_opts;

typedef struct cn_compile_result {
    char *cache_dir;
    char *index_dir;               /* the published generation */
    json_object *manifest;         /* as written (left_out: the files not indexed, and why) */
    cn_walk_stats walk;
    cn_parse_stats parse;
    uint32_t n_nodes;
    bool has_vectors;
    cn_vectors_stats vectors;      /* when has_vectors */
    double seconds;
    double stage_seconds[CN_STAGE_PUBLISH + 1];  /* wall time per stage */
    bool bm25_updated;             /* BM25 merged from the previous build's, not rebuilt */
    bool graph_updated;            /* the graph took the unchanged files' edges from the previous one */
    bool options_recorded;         /* indexes or vector backends came from the previous
                                      build's record (no option said otherwise) */
    bool graph_patched;            /* ... and was its sections, the changed files' lines moved
                                      (their edges were otherwise the same) */
} cn_compile_result;

/* Options not given (no --index; for the vector index, no embedder, store,
 * configuration or precision) are taken from what the current generation's
 * manifest recorded ("options"), so every rebuild builds what was chosen;
 * an option given overrides its recorded value (--index bm25,graph drops
 * the vectors).  See cn_compile_opts_resolve. */
int cn_compile(const cn_compile_opts *opts, cn_compile_result *result);
void cn_compile_result_free(cn_compile_result *result);
void cn_compile_opts_free(cn_compile_opts *opts);   /* the string lists */

/* ---- recorded options (cn_compile_options.c) ---------------------------- */
typedef struct cn_compile_recorded {
    json_object *options;          /* the manifest's "options" (owns the strings used) */
    cn_strv indexes;               /* the recorded indexes, when used */
    bool reused_indexes;           /* no --index: the recorded ones */
    bool reused_vectors;           /* a vector backend or option came from the record */
} cn_compile_recorded;

/* The manifest's "options": the indexes built and, with the vector index,
 * its embedder, redacted configuration, store, precision and text limit. */
json_object *cn_compile_options_json(const cn_compile_opts *o);
/* *eff = *o, with what o leaves unset taken from the options recorded by
 * the repository's current generation (none: *eff is *o).  eff borrows
 * from o and keep; free keep with cn_compile_recorded_free, never eff. */
int cn_compile_opts_resolve(const cn_compile_opts *o, cn_compile_opts *eff, cn_compile_recorded *keep);
void cn_compile_recorded_free(cn_compile_recorded *keep);

/* $CODENIB_HOME/repositories/<name>-<hash of the absolute path>, with
 * CODENIB_HOME defaulting to ~/.codenib. */
int cn_cache_dir_for(const char *repo, char **out);
/* The directory of the current generation in a cache directory
 * (CN_ENOTFOUND when nothing was compiled there yet). */
int cn_cache_current(const char *cache_dir, char **index_dir);

/* The index names --index accepts, for messages. */
#define CN_INDEX_NAMES "nodes, bm25, graph, vector"
/* Whether `name` is one of them. */
bool cn_index_name_valid(const char *name);

/* Writes o as pretty JSON to path through a fsynced temporary file and a
 * rename, so a reader never sees half a file. */
int cn_json_write_file(const char *path, json_object *o);

/* ---- status (cn_status.c) ----------------------------------------------- */
typedef struct cn_status {
    bool compiled;
    bool fresh;
    /* a part of the index is missing or fails its checks: never fresh */
    bool damaged;
    char *damage;                  /* what and where (the file), when damaged */
    /* the vector index, when the generation has one */
    bool has_vectors;
    bool vectors_usable;           /* its embedder and store are installed */
    json_object *vectors;          /* its vectors.json (NULL when absent or unreadable) */
    json_object *manifest;         /* NULL when not compiled */
    cn_strv reasons;               /* why stale, one sentence each */
    size_t changed, added, removed;
} cn_status;

/* Compares the repository as it is now with its compiled manifest. */
int cn_status_check(const char *repo, const char *cache_dir, cn_status *out);
/* As cn_status_check, but the index files are not opened: whoever opens
 * them next checks them (cn_index_open fails with CN_ECORRUPT naming the
 * file), which spares a query opening, hashing and validating its index
 * twice.  The manifest and the parse records are still checked. */
int cn_status_check_shallow(const char *repo, const char *cache_dir, cn_status *out);
void cn_status_free(cn_status *st);

#endif /* CN_COMPILE_H */

/* SPDX-License-Identifier: Apache-2.0 */
/* One localization query end to end: where the index comes from (a
 * repository, compiled on first use; a manifest of a compiled index; or a
 * registry the caller prepared), then the agent with a model or the
 * offline planner without one, and the answer with its contract.  Shared
 * by `codenib query` and the public cn_query(). */
#ifndef CN_QUERY_H
#define CN_QUERY_H

#include <stdbool.h>

#include <json-c/json.h>

#include "../plugin/cn_registry.h"

struct cn_agent_settings;
struct cn_chat_client;

typedef void (*cn_query_progress_fn)(const char *what, size_t done, size_t total, void *data);

typedef struct cn_query_opts {
    /* exactly one of these three */
    const char *repo;              /* a repository directory */
    const char *manifest;          /* a compiled index's repo_manifest.json */
    cn_registry *registry;         /* prepared by the caller (borrowed) */

    const char *cache_dir;         /* with repo: where its index lives */
    bool no_compile;               /* with repo: fail instead of compiling */
    const char *indexes;           /* with repo: what a compile builds ("bm25,graph,vector"),
                                    * NULL for the compiler's default */
    const char *model;             /* chat model; NULL: CODENIB_MODEL; none: offline */
    bool offline;                  /* the offline planner even when CODENIB_MODEL is set */
    size_t max_files;              /* offline: ranked files kept, 0 for the planner's default */
    size_t max_symbols;            /* offline: ranked symbols kept, 0 for the planner's default */
    unsigned planner_without;      /* offline: CN_PL_SIG_* switched off (cn_planner.h), 0 */
    const char *base_url;
    const char *rerank_model;      /* model of a /rerank endpoint for crossencoder_rerank;
                                    * NULL: CODENIB_RERANK_MODEL, none when unset */
    const char *rerank_base_url;   /* its endpoint; NULL: CODENIB_RERANK_BASE_URL, else base_url */
    const char *skills;            /* comma-separated allow list, or NULL */
    const char *harness;           /* harness spec file (YAML or JSON), or NULL */
    int max_turns;                 /* 0: the harness's or the default */
    const char *trace;             /* JSON Lines trace file, or NULL */
    cn_query_progress_fn progress; /* compile progress, may be NULL */
    void *progress_data;
    /* the embedding API's (<codenib/codenib.h>) */
    const struct cn_agent_settings *agent;   /* over the harness file, or NULL */
    const struct cn_chat_client *chat_client; /* agent mode through it, or NULL */
    bool want_messages;            /* agent: the result gains "messages" */
    bool want_trace;               /* agent: the result gains "trace" */
} cn_query_opts;

/* Runs the query.  With a model, the skills that call one get it too: the
 * run's chat model (llm_rerank, extract_keywords) and, when one is
 * configured, the rerank endpoint (crossencoder_rerank); a prepared
 * registry that has its own keeps them.  *result: {"mode": "offline"|"agent", "answer",
 * "contract": {files, symbols, locations}, plus per mode the ranked files
 * and symbols and planner steps, or the tool calls, turns and usage}.
 * Errors name what was wrong (a bad combination of sources, an index that
 * cannot be compiled, a model that cannot be reached). */
int cn_query_run(const cn_query_opts *o, const char *question, json_object **result);

#endif /* CN_QUERY_H */

/* SPDX-License-Identifier: Apache-2.0 */
/* The skill registry: an explicit object (no singleton) holding every skill
 * package discovered or registered in process, with its state, plus the
 * allow/exclude sets and the typed contexts handed to executors. */
#ifndef CN_REGISTRY_H
#define CN_REGISTRY_H

#include <stdbool.h>

#include <json-c/json.h>

#include <codenib/codenib.h>
#include <codenib/skill.h>

#include "cn_dl.h"
#include "cn_host.h"
#include "cn_meta.h"

typedef enum cn_skill_state {
    CN_STATE_DISCOVERED = 0,  /* metadata read, shared object not opened yet */
    CN_STATE_LOADED,          /* executor created */
    CN_STATE_FAILED,          /* unusable: `reason` says why */
    CN_STATE_DUPLICATE,       /* same id as an earlier package: ignored */
    CN_STATE_INPROCESS        /* registered by the embedding application */
} cn_skill_state;

typedef struct cn_skill_entry {
    char *id;               /* from metadata, or the directory name if it failed */
    char *dir;              /* package directory (NULL for in-process skills) */
    char *source;           /* which search-path root it came from */
    cn_skill_meta *meta;    /* NULL when config.yaml could not be read */
    cn_skill_state state;
    int error_code;         /* for FAILED / DUPLICATE */
    char *reason;

    /* loaded plugin */
    cn_dl *dl;
    const cn_skill_descriptor *desc;
    unsigned built_abi_major;  /* the descriptor's ABI once the .so was opened; 0: unknown */
    unsigned built_abi_minor;
    cn_executor *exec;
    cn_host host;
    cn_host_data host_data;

    /* in-process skill */
    cn_skill_fn fn;
    void *fn_data;
    void (*fn_free)(void *);
} cn_skill_entry;

struct cn_registry {
    cn_skill_entry **entries;
    size_t n_entries;
    size_t cap;
    bool has_allow;
    cn_strv allow;
    cn_strv exclude;
    cn_strv tool_names;       /* reserved: the default tools' names */
    cn_skill_context contexts[CN_SKILL_CUSTOM + 1];
    bool has_context[CN_SKILL_CUSTOM + 1];
    char *repo_root;          /* canonical */
    struct cn_index *index;   /* the repository's compiled index, if any */
    struct cn_vector_index *vectors;  /* its vector part, if built */
    struct cn_model *models[3];       /* chat, embedder, reranker (cn_llm_role order) */
};

/* ---- discovery (cn_discover.c) ------------------------------------------ */
/* Adds every package below `root` (each subdirectory holding config.yaml,
 * in name order).  A missing root is not an error.  `source` labels where
 * the entries came from ("CODENIB_SKILLS_PATH", "installed", ...). */
int cn_registry_add_root(cn_registry *reg, const char *root, const char *source);
/* Adds one package directory. */
int cn_registry_add_package(cn_registry *reg, const char *dir, const char *source);
/* The default search path, in order: the build tree's skills (only when
 * this codenib runs from its build tree), each entry of
 * CODENIB_SKILLS_PATH (colon-separated), the installed skills directory,
 * and $CODENIB_HOME/skills (default ~/.codenib/skills).  Fills parallel
 * lists of directories and labels. */
int cn_registry_search_path(cn_strv *dirs, cn_strv *labels);

/* ---- lookup (cn_registry.c) --------------------------------------------- */
/* Semi-private, for the registry's own files: appends an entry (taking it;
 * a later duplicate id is kept as DUPLICATE and returns CN_EEXISTS), and
 * marks an entry FAILED with a reason (also the thread-local error). */
int cn_registry__append(cn_registry *reg, cn_skill_entry *e);
int cn_entry_fail(cn_skill_entry *e, int code, const char *fmt, ...) CN_PRINTF(3, 4);
/* The entry that owns `id` (never a DUPLICATE), or NULL. */
cn_skill_entry *cn_registry_find(const cn_registry *reg, const char *id);
/* Whether allow/exclude let `id` be offered. */
bool cn_registry_enabled(const cn_registry *reg, const char *id);
const char *cn_skill_state_name(cn_skill_state s);
/* Sets the names reserved by default tools (replaces read, grep, glob,
 * bash) and re-checks every entry for collisions. */
int cn_registry_set_tool_names(cn_registry *reg, const char *const *names, size_t n);
/* Registers parsed metadata for an in-process skill; takes `meta` and
 * (on failure too) calls free_data(data). */
int cn_registry_add_inprocess(cn_registry *reg, cn_skill_meta *meta, cn_skill_fn fn, void *data,
                              void (*free_data)(void *));
/* cn_registry_set_repo with the index taken from `cache_dir` (NULL: the
 * repository's default cache). */
/* Opens the model of `role` (0 chat, 1 embedder, 2 reranker: cn_llm_role)
 * from a JSON configuration (see cn_model_services.open) and hands it to
 * every skill context (.chat, .embedder, .reranker); NULL config_json
 * removes it.  Loaded executors are recreated on next use. */
int cn_registry_set_model(cn_registry *reg, int role, const char *config_json);
/* The same with an open handle, of which the registry takes a reference
 * (cn_llm_ref); NULL removes the model. */
int cn_registry_set_model_handle(cn_registry *reg, int role, struct cn_model *m);
/* Opens the models the environment configures: chat when CODENIB_MODEL is
 * set, reranker when CODENIB_RERANK_MODEL is set. */
int cn_registry_models_from_env(cn_registry *reg);
/* The repository and one compiled generation of it (the directory that
 * holds repo_manifest.json), for callers that name an index directly. */
int cn_registry_set_index_dir(cn_registry *reg, const char *repo_root, const char *index_dir);
int cn_registry_set_repo_cache(cn_registry *reg, const char *repo_root, const char *cache_dir);
/* Sets the typed context of one kind (copied; pointers borrowed). */
int cn_registry_set_context(cn_registry *reg, const cn_skill_context *ctx);

/* ---- loading (cn_loader.c) ---------------------------------------------- */
/* Opens the shared object and checks its descriptor (ABI, size, id)
 * without calling into the plugin.  On failure the entry becomes FAILED. */
int cn_registry_open(cn_registry *reg, cn_skill_entry *e);
/* Opens every DISCOVERED package (cn_registry_open), so that broken shared
 * objects show up as FAILED before skills are listed or offered. */
void cn_registry_verify_all(cn_registry *reg);
/* Opens the shared object and creates the executor, if not done yet.
 * On failure the entry becomes FAILED with the reason, and stays listed. */
int cn_registry_load(cn_registry *reg, cn_skill_entry *e);
void cn_entry_unload(cn_skill_entry *e);

/* ---- running (cn_params.c) ---------------------------------------------- */
/* Resolves parameters: input defaults -> config `defaults` -> caller
 * overrides -> model arguments; coerces model arguments to the declared
 * types; converts is_line_number inputs from 1-based to 0-based.
 * Returns a new object. */
int cn_params_resolve(const cn_skill_meta *m, json_object *overrides, json_object *args,
                      json_object **out);
/* Converts the line fields of a result from 0-based to 1-based, in place. */
void cn_params_result_lines(const cn_skill_meta *m, json_object *result);
/* Runs one skill: resolution, the executor, result validation and line
 * conversion.  `args` and `overrides` may be NULL. */
int cn_registry_invoke(cn_registry *reg, const char *id, json_object *args,
                       json_object *overrides, json_object **result);
/* The list a result holds: the result itself when it is an array, else
 * its member outputs.list_field; NULL when there is none (borrowed). */
json_object *cn_params_result_list(const cn_skill_meta *m, json_object *result);

/* ---- results for a model or client (cn_result_cap.c) --------------------- */
/* The default bound of one tool result, in bytes (so at most as many
 * characters): what an MCP client such as Claude Code takes in one go. */
#define CN_RESULT_CAP_DEFAULT 30000u
/* Renders a skill result as JSON text of at most `cap` bytes (0: no cap).
 * A result over the cap keeps the first items of its list that fit (the
 * text stays valid JSON); one with no list, or whose first item alone is
 * too long, is cut at the cap.  *note is then a line saying what was left
 * out and how to get it: the `offset` of the next page for a paged skill,
 * the arguments that narrow the call; NULL when nothing was cut.  `args`
 * (the call's arguments, may be NULL) gives the offset of this page.
 * `m` may be NULL.  Both strings are malloc'd. */
int cn_result_text(const cn_skill_meta *m, json_object *result, json_object *args, size_t cap, char **text,
                   char **note);
/* Cuts plain text to `cap` bytes (0: no cap) at a line or UTF-8 boundary,
 * in place, and returns a note saying how much was left out and `how` to
 * narrow the call (may be NULL); NULL when it fits. */
char *cn_result_cut_text(char *text, size_t cap, const char *how);

/* ---- schemas (cn_schema.c) ---------------------------------------------- */
json_object *cn_skill_tool_schema(const cn_skill_meta *m);
/* Tools for every usable skill that allow/exclude let through, plus the
 * extra allow/exclude given here (NULL = none). */
json_object *cn_registry_tools(const cn_registry *reg, const cn_strv *allow,
                               const cn_strv *exclude);
/* Whether the output of skill `from` can feed input `input` (NULL: any
 * input) of skill `to`.  On mismatch returns CN_ETYPE with the reason. */
int cn_registry_check_flow(const cn_registry *reg, const char *from, const char *to,
                           const char *input);

/* ---- listing (cn_api.c) ------------------------------------------------- */
/* One object per entry: id, state, source, dir, reason, and with verbose
 * the whole metadata and warnings. */
json_object *cn_registry_list(const cn_registry *reg, bool verbose);
json_object *cn_entry_json(const cn_skill_entry *e, bool verbose);
/* "MAJOR.MINOR" as JSON, or NULL when major is 0 or less (unknown). */
json_object *cn_abi_json(int major, int minor);

#endif /* CN_REGISTRY_H */

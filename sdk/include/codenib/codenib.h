/* SPDX-License-Identifier: Apache-2.0 */
/* libcodenib: the C API for applications that embed codenib.
 *
 * Functions return 0 or a negative cn_error_code; the detail of the last
 * failure on the calling thread is in cn_last_error().  Strings returned
 * through `char **out` are owned by the caller: release them with cn_free(). */
#ifndef CODENIB_CODENIB_H
#define CODENIB_CODENIB_H

#include <stddef.h>
#include <stdint.h>

#include <codenib/errors.h>
#include <codenib/version.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CN_BUILDING_LIBCODENIB) && defined(__GNUC__)
#define CN_API __attribute__((visibility("default")))
#else
#define CN_API
#endif

typedef struct cn_registry cn_registry;

/* An in-process skill: receives its resolved arguments as a JSON object and
 * returns its result as JSON text allocated with malloc() (libcodenib frees
 * it with free()).  On failure return a negative code and fill err. */
typedef int (*cn_skill_fn)(void *data, const char *args_json, char **result_json,
                           cn_error *err);

CN_API const char *cn_version(void);
CN_API const cn_error *cn_last_error(void);
CN_API void cn_free(void *ptr);

CN_API int cn_registry_new(cn_registry **out);
CN_API void cn_registry_free(cn_registry *reg);

/* Discovers skill packages on the default search path (see `codenib skills
 * list --verbose`); broken packages are kept, listed with their reason. */
CN_API int cn_registry_discover(cn_registry *reg);
/* Adds every package below one directory. */
CN_API int cn_registry_add_dir(cn_registry *reg, const char *root);

/* Registers a skill implemented by the application.  metadata_json holds
 * the fields of a config.yaml (skill_id, skill_type, inputs, outputs, ...);
 * skill_doc (may be NULL) is the model-facing description.  free_data
 * (may be NULL) is called on data when the registry is freed, or at once
 * when registration fails. */
CN_API int cn_registry_register(cn_registry *reg, const char *metadata_json,
                                const char *skill_doc, cn_skill_fn fn, void *data,
                                void (*free_data)(void *));

/* Allow set (NULL/0 = every skill) and exclude set (applied after). */
CN_API int cn_registry_set_allow(cn_registry *reg, const char *const *ids, size_t n);
CN_API int cn_registry_set_exclude(cn_registry *reg, const char *const *ids, size_t n);
/* Repository the skills work on (their context's repo_root). */
CN_API int cn_registry_set_repo(cn_registry *reg, const char *repo_root);

/* Every entry with its state, as a JSON array. */
CN_API int cn_registry_list_json(cn_registry *reg, int verbose, char **out);
/* OpenAI function-calling tools for the allowed skills, as a JSON array. */
CN_API int cn_registry_tools_json(cn_registry *reg, char **out);
/* Runs one skill.  args_json: the arguments as a model would give them
 * (coerced to the declared types, line numbers 1-based); overrides_json
 * (may be NULL): caller parameters applied before them.  *result_json is
 * the skill's JSON result with line numbers 1-based. */
CN_API int cn_registry_run(cn_registry *reg, const char *id, const char *args_json,
                           const char *overrides_json, char **result_json);

/* One localization query (what `codenib query` does).  Exactly one of
 * repo_path, manifest_path and registry names where the index comes from
 * (anything else is CN_EINVAL): a repository (compiled first when its index
 * is missing or stale, unless no_compile), the repo_manifest.json of a
 * compiled index, or a registry the application prepared with
 * cn_registry_set_repo.  Without a model (model NULL and CODENIB_MODEL
 * unset) a deterministic planner answers offline.  *result_json: {"mode",
 * "answer", "contract": {"files", "symbols", "locations"}, ...}; release it
 * with cn_free(). */
typedef struct cn_query_options {
    uint32_t struct_size;        /* sizeof(cn_query_options) */
    const char *repo_path;
    const char *manifest_path;
    cn_registry *registry;
    const char *cache_dir;       /* with repo_path; NULL: the default */
    int no_compile;
    const char *model;           /* NULL: CODENIB_MODEL; none: offline */
    const char *base_url;
    const char *skills;          /* comma-separated allow list, or NULL */
    const char *harness_path;    /* agent options, YAML or JSON */
    int max_turns;               /* 0: default */
    const char *trace_path;      /* JSON Lines trace, or NULL */
} cn_query_options;

CN_API int cn_query(const cn_query_options *options, const char *question, char **result_json);

#ifdef __cplusplus
}
#endif

#endif /* CODENIB_CODENIB_H */

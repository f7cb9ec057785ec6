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
struct cn_agent_settings;
struct cn_chat_client;

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
 * unset, and no chat client) a deterministic planner answers offline.
 * *result_json: {"mode", "answer", "contract": {"files", "symbols",
 * "locations"}, ...}; in agent mode also "model", "tool_calls", "turns",
 * "usage" (token totals) and "usage_calls" (one entry per model call), and
 * "messages" / "trace" when asked for.  Release it with cn_free().  A
 * struct_size smaller than this version's struct is accepted: the fields
 * past it count as NULL/0. */
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
    /* ABI 1.2: */
    const struct cn_agent_settings *agent; /* agent options as a struct, or NULL */
    const struct cn_chat_client *chat;     /* the application's chat client, or NULL */
    int return_messages;         /* the result gains "messages": the final history */
    int return_trace;            /* the result gains "trace": the events a trace file holds */
} cn_query_options;

/* ABI 1.2: a chat client of the application's own.  With one in
 * cn_query_options.chat the query runs in agent mode and every model call
 * of the run -- the agent's turns and the model-backed skills (llm_rerank,
 * extract_keywords) -- goes to chat() instead of an HTTP endpoint.
 *
 * chat() receives a chat-completions request body as JSON text ("model",
 * "messages", and as the turn needs "tools", "tool_choice", "temperature",
 * "max_tokens") and answers with a chat-completions response as JSON text
 * allocated with malloc() (libcodenib frees it with free()):
 *     {"choices": [{"message": {"role": "assistant", "content": ...,
 *                               "tool_calls": [...]},
 *                   "finish_reason": "stop"}],
 *      "usage": {"prompt_tokens": N, "completion_tokens": N}}
 * It is checked as an HTTP endpoint's answer is: a reply that is not that
 * shape fails the call with CN_EPARSE naming the member, never a crash.
 * On failure chat() returns a negative cn_error_code and fills err; the
 * run stops with that error (prefixed with where it happened).  Calls come
 * from the thread that called cn_query(), one at a time. */
typedef struct cn_chat_client {
    uint32_t struct_size;        /* sizeof(cn_chat_client) */
    const char *model;           /* the name put in requests and results (NULL: "client") */
    int (*chat)(void *data, const char *request_json, char **response_json, cn_error *err);
    void *data;
} cn_chat_client;

/* ABI 1.2: the agent's options as a struct (the keys of a harness spec,
 * `codenib query --harness`; README.md).  Zero leaves an option as the harness file
 * (harness_path) or the default has it, so a zeroed struct changes
 * nothing; the fields of a set struct win over the harness file.  For the
 * on/off options, 1 turns the option on, -1 off.  Strings and lists are
 * copied; the struct may be freed once cn_query() returns. */
typedef struct cn_agent_settings {
    uint32_t struct_size;        /* sizeof(cn_agent_settings) */
    const char *system_prompt;   /* replaces the built-in prompt */
    int max_turns;
    int max_tokens;              /* answer budget per completion */
    double temperature;          /* used when set_temperature is 1 */
    int set_temperature;
    long max_context_tokens;     /* history budget */
    long max_tool_output;        /* bound of one tool result, bytes */
    const char *first_turn_tool_choice; /* "auto", "required", "none" or a tool name */
    int force_first_turn_only;
    int force_localization_contract;
    int force_final_answer;
    int review_final_answer;
    int compact_after_read;
    int include_default_tools;   /* read, grep, glob */
    int enable_bash;
    const char *const *allow_skills;    /* with n_allow_skills > 0: the skills offered */
    size_t n_allow_skills;
    const char *const *exclude_skills;
    size_t n_exclude_skills;
    const char *options_json;    /* any other harness key, as a JSON object, applied
                                  * before the fields above */
} cn_agent_settings;

CN_API int cn_query(const cn_query_options *options, const char *question, char **result_json);

#ifdef __cplusplus
}
#endif

#endif /* CODENIB_CODENIB_H */

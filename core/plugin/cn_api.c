/* SPDX-License-Identifier: Apache-2.0 */
/* The public libcodenib API (codenib/codenib.h) over the internal registry. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn_registry.h"

#include "../agent/cn_query.h"
#include "../index/cn_index.h"
#include "../index/cn_vectors.h"
#include "../llm/cn_llm.h"

CN_API const char *cn_version(void)
{
    return CN_VERSION_STRING;
}

CN_API const cn_error *cn_last_error(void)
{
    return cn_error_last();
}

CN_API void cn_free(void *ptr)
{
    free(ptr);
}

static int parse_json_arg(const char *what, const char *text, json_object **out)
{
    *out = NULL;
    if (text == NULL) return 0;
    return cn_json_parse(text, what, out);
}

CN_API int cn_registry_register(cn_registry *reg, const char *metadata_json, const char *skill_doc,
                                cn_skill_fn fn, void *data, void (*free_data)(void *))
{
    json_object *cfg = NULL;
    cn_skill_meta *m = NULL;
    int rc = parse_json_arg("skill metadata", metadata_json, &cfg);

    if (rc == 0 && cfg == NULL) rc = cn_error_set(CN_EINVAL, "skill metadata is missing");
    if (rc == 0) rc = cn_meta_from_json(cfg, "in-process skill metadata", &m);
    json_object_put(cfg);
    if (rc == 0 && skill_doc != NULL) {
        free(m->skill_doc);
        free(m->description);
        m->skill_doc = cn_strdup(skill_doc);
        m->description = cn_strdup(skill_doc);
        if (m->skill_doc == NULL || m->description == NULL) rc = cn_error_set(CN_ENOMEM, "out of memory");
    }
    if (rc < 0) {
        cn_meta_free(m);
        if (free_data) free_data(data);
        return rc;
    }
    return cn_registry_add_inprocess(reg, m, fn, data, free_data);
}

static void refresh_contexts(cn_registry *reg);

CN_API int cn_registry_set_repo(cn_registry *reg, const char *repo_root)
{
    return cn_registry_set_repo_cache(reg, repo_root, NULL);
}

/* Makes `real` (owned) the repository and `idx` (owned, may be NULL) its
 * index, opening the vector part when there is one. */
static void install(cn_registry *reg, char *real, struct cn_index *idx)
{
    free(reg->repo_root);
    reg->repo_root = real;
    cn_vector_index_close(reg->vectors);
    reg->vectors = NULL;
    cn_index_close(reg->index);
    reg->index = idx;
    /* A vector part that exists but cannot be used is reported when a
     * skill needs it, not here: the other skills still work. */
    if (reg->index != NULL && cn_vector_index_open(reg->index, &reg->vectors) < 0) {
        cn_log(CN_LOG_WARNING, NULL, "%s", cn_error_last()->message);
        cn_error_clear();
        reg->vectors = NULL;
    }
    refresh_contexts(reg);
}

int cn_registry_set_repo_cache(cn_registry *reg, const char *repo_root, const char *cache_dir)
{
    struct cn_index *idx = NULL;
    char *real = NULL;
    int rc;

    if (repo_root != NULL && (rc = cn_repo_realpath(repo_root, &real)) < 0) return rc;
    /* A repository that was compiled brings its index; one that was not
     * leaves the index out, and skills that need it say so when run.  An
     * index that exists but cannot be read is an error here. */
    if (real != NULL && cn_index_open_repo(real, cache_dir, &idx) < 0) {
        idx = NULL;
        if (cn_error_last()->code != CN_ENOTFOUND) {
            free(real);
            return cn_error_last()->code;
        }
        cn_error_clear();
    }
    install(reg, real, idx);
    return 0;
}

int cn_registry_set_index_dir(cn_registry *reg, const char *repo_root, const char *index_dir)
{
    struct cn_index *idx = NULL;
    char *real = NULL;
    int rc;

    if ((rc = cn_repo_realpath(repo_root, &real)) < 0) return rc;
    if ((rc = cn_index_open(index_dir, real, &idx)) < 0) {
        free(real);
        return rc;
    }
    install(reg, real, idx);
    return 0;
}

/* Puts the registry's repository, indexes and models into every typed
 * context; executors made with the old contexts are recreated on next
 * use. */
static void refresh_contexts(cn_registry *reg)
{
    for (int k = CN_SKILL_RETRIEVAL; k <= CN_SKILL_CUSTOM; k++) {
        if (!reg->has_context[k]) {
            memset(&reg->contexts[k], 0, sizeof reg->contexts[k]);
            reg->contexts[k].struct_size = (uint32_t)sizeof(cn_skill_context);
            reg->contexts[k].kind = k;
            reg->has_context[k] = true;
        }
        reg->contexts[k].repo_root = reg->repo_root;
        reg->contexts[k].index = reg->index;
        reg->contexts[k].vectors = reg->vectors;
        reg->contexts[k].chat = reg->models[CN_LLM_CHAT];
        reg->contexts[k].embedder = reg->models[CN_LLM_EMBED];
        reg->contexts[k].reranker = reg->models[CN_LLM_RERANK];
    }
    for (size_t i = 0; i < reg->n_entries; i++) {
        cn_skill_entry *e = reg->entries[i];
        if (e->state == CN_STATE_LOADED) cn_entry_unload(e);
        e->host_data.repo_root = reg->repo_root;
    }
}

int cn_registry_set_model(cn_registry *reg, int role, const char *config_json)
{
    cn_model *m = NULL;
    int rc;

    if (role < CN_LLM_CHAT || role > CN_LLM_RERANK)
        return cn_error_set(CN_EINVAL, "model role %d is not chat (0), embedder (1) or reranker (2)", role);
    if (config_json != NULL && (rc = cn_llm_open(config_json, (cn_llm_role)role, &m)) < 0) return rc;
    cn_llm_close(reg->models[role]);
    reg->models[role] = m;
    refresh_contexts(reg);
    return 0;
}

int cn_registry_set_model_handle(cn_registry *reg, int role, cn_model *m)
{
    if (role < CN_LLM_CHAT || role > CN_LLM_RERANK)
        return cn_error_set(CN_EINVAL, "model role %d is not chat (0), embedder (1) or reranker (2)", role);
    m = cn_llm_ref(m);
    cn_llm_close(reg->models[role]);
    reg->models[role] = m;
    refresh_contexts(reg);
    return 0;
}

int cn_registry_models_from_env(cn_registry *reg)
{
    int rc = 0;
    const char *chat = getenv("CODENIB_MODEL"), *rerank = getenv("CODENIB_RERANK_MODEL");
    if (chat != NULL && *chat != '\0' && reg->models[CN_LLM_CHAT] == NULL)
        rc = cn_registry_set_model(reg, CN_LLM_CHAT, "{}");
    if (rc == 0 && rerank != NULL && *rerank != '\0' && reg->models[CN_LLM_RERANK] == NULL)
        rc = cn_registry_set_model(reg, CN_LLM_RERANK, "{}");
    return rc;
}

static json_object *str_or_null(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

json_object *cn_abi_json(int major, int minor)
{
    char buf[32];
    if (major <= 0) return NULL;
    snprintf(buf, sizeof buf, "%d.%d", major, minor);
    return json_object_new_string(buf);
}

json_object *cn_entry_json(const cn_skill_entry *e, bool verbose)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "skill_id", json_object_new_string(e->id));
    json_object_object_add(o, "state", json_object_new_string(cn_skill_state_name(e->state)));
    json_object_object_add(o, "skill_type",
                           e->meta ? json_object_new_string(cn_skill_type_name(e->meta->skill_type)) : NULL);
    json_object_object_add(o, "cost", e->meta ? json_object_new_string(cn_cost_name(e->meta->cost)) : NULL);
    json_object_object_add(o, "version", e->meta ? str_or_null(e->meta->version) : NULL);
    json_object_object_add(o, "source", str_or_null(e->source));
    json_object_object_add(o, "dir", str_or_null(e->dir));
    json_object_object_add(o, "reason", str_or_null(e->reason));
    json_object_object_add(o, "error", e->reason ? json_object_new_string(cn_error_code_name(e->error_code)) : NULL);
    /* the ABI its shared object was built for (known once it was opened)
     * and the one its config.yaml declares */
    json_object_object_add(o, "abi", cn_abi_json((int)e->built_abi_major, (int)e->built_abi_minor));
    json_object_object_add(o, "abi_declared", e->meta ? cn_abi_json(e->meta->abi_major, e->meta->abi_minor) : NULL);
    if (verbose) {
        json_object *w = json_object_new_array();
        json_object_object_add(o, "metadata", e->meta ? cn_meta_to_json(e->meta) : NULL);
        if (e->meta)
            for (size_t i = 0; i < e->meta->warnings.len; i++)
                json_object_array_add(w, json_object_new_string(e->meta->warnings.items[i]));
        json_object_object_add(o, "warnings", w);
    }
    return o;
}

json_object *cn_registry_list(const cn_registry *reg, bool verbose)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < reg->n_entries; i++)
        json_object_array_add(a, cn_entry_json(reg->entries[i], verbose));
    return a;
}

static int emit(json_object *o, char **out)
{
    *out = cn_json_text(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    json_object_put(o);
    return *out ? 0 : cn_error_set(CN_ENOMEM, "out of memory");
}

CN_API int cn_registry_list_json(cn_registry *reg, int verbose, char **out)
{
    return emit(cn_registry_list(reg, verbose != 0), out);
}

CN_API int cn_registry_tools_json(cn_registry *reg, char **out)
{
    return emit(cn_registry_tools(reg, NULL, NULL), out);
}

CN_API int cn_registry_run(cn_registry *reg, const char *id, const char *args_json,
                           const char *overrides_json, char **result_json)
{
    json_object *args = NULL, *over = NULL, *res = NULL;
    int rc;

    *result_json = NULL;
    if ((rc = parse_json_arg("arguments", args_json, &args)) < 0) return rc;
    if ((rc = parse_json_arg("overrides", overrides_json, &over)) < 0) {
        json_object_put(args);
        return rc;
    }
    rc = cn_registry_invoke(reg, id, args, over, &res);
    json_object_put(args);
    json_object_put(over);
    if (rc < 0) return rc;
    return emit(res, result_json);
}

CN_API int cn_query(const cn_query_options *options, const char *question, char **result_json)
{
    cn_query_opts o;
    json_object *res = NULL;
    int rc;

    if (result_json == NULL) return cn_error_set(CN_EINVAL, "cn_query: result_json is NULL");
    *result_json = NULL;
    if (options == NULL || options->struct_size < offsetof(cn_query_options, trace_path) + sizeof(const char *))
        return cn_error_set(CN_EINVAL, "cn_query: options missing or too small (set struct_size to "
                                       "sizeof(cn_query_options))");
    memset(&o, 0, sizeof o);
    o.repo = options->repo_path;
    o.manifest = options->manifest_path;
    o.registry = options->registry;
    o.cache_dir = options->cache_dir;
    o.no_compile = options->no_compile != 0;
    o.model = options->model;
    o.base_url = options->base_url;
    o.skills = options->skills;
    o.harness = options->harness_path;
    o.max_turns = options->max_turns;
    o.trace = options->trace_path;
    /* fields of ABI 1.2, read only when the caller's struct has them */
#define HAS(field) (options->struct_size >= offsetof(cn_query_options, field) + sizeof options->field)
    if (HAS(agent)) o.agent = options->agent;
    if (HAS(chat)) o.chat_client = options->chat;
    if (HAS(return_messages)) o.want_messages = options->return_messages != 0;
    if (HAS(return_trace)) o.want_trace = options->return_trace != 0;
#undef HAS
    if ((rc = cn_query_run(&o, question, &res)) < 0) return rc;
    return emit(res, result_json);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* One localization query end to end (see cn_query.h). */
#include "cn_query.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "../index/cn_compile.h"
#include "../llm/cn_llm.h"
#include "../plugin/cn_host.h"
#include "cn_agent.h"
#include "cn_agent_support.h"
#include "cn_contract.h"
#include "cn_planner.h"

static int check_sources(const cn_query_opts *o, const char *question)
{
    int n = (o->repo != NULL) + (o->manifest != NULL) + (o->registry != NULL);
    if (n != 1)
        return cn_error_set(CN_EINVAL, "a query needs exactly one of: a repository, a manifest of a compiled "
                                       "index, or a prepared registry (%d given)", n);
    if (o->cache_dir != NULL && o->repo == NULL)
        return cn_error_set(CN_EINVAL, "a cache directory goes with a repository, not with a manifest or registry");
    if (question == NULL || question[strspn(question, " \t\r\n")] == '\0')
        return cn_error_set(CN_EINVAL, "the question is empty: say what you are looking for");
    if (o->max_turns < 0) return cn_error_set(CN_EINVAL, "max_turns must be positive, got %d", o->max_turns);
    return 0;
}

static void on_compile(cn_compile_stage stage, size_t done, size_t total, const char *note, void *data)
{
    const cn_query_opts *o = data;
    (void)note;
    o->progress(cn_compile_stage_name(stage), done, total, o->progress_data);
}

/* Compiles the repository for the query (from scratch when `rebuild`). */
static int compile_for_query(const cn_query_opts *o, bool rebuild)
{
    cn_compile_opts co;
    cn_compile_result res;
    int rc;

    memset(&co, 0, sizeof co);
    memset(&res, 0, sizeof res);
    co.repo = o->repo;
    co.rebuild = rebuild;   /* nothing of a damaged index is reused */
    co.cache_dir = o->cache_dir;
    co.progress = o->progress ? on_compile : NULL;
    co.progress_data = (void *)o;
    rc = o->indexes != NULL && cn_strv_split(&co.indexes, o->indexes, ',') < 0
             ? cn_error_set(CN_ENOMEM, "out of memory")
             : cn_compile(&co, &res);
    cn_strv_free(&co.indexes);
    cn_compile_result_free(&res);
    return rc < 0 ? cn_error_prefix("compiling %s for the query", o->repo) : 0;
}

static int damaged_error(const cn_query_opts *o, const char *why)
{
    return cn_error_set(CN_ECORRUPT, "the index of %s is damaged (%s); run `codenib compile --rebuild %s`", o->repo,
                        why, o->repo);
}

/* The repository's index, compiled first when it is missing or stale (a
 * rebuild parses only what changed) and rebuilt when it is damaged.  The
 * index files themselves are checked when the registry opens them
 * (open_repo_index), not here as well. */
static int ensure_compiled(const cn_query_opts *o)
{
    cn_status st;
    bool damaged;
    int rc;

    memset(&st, 0, sizeof st);
    if ((rc = cn_status_check_shallow(o->repo, o->cache_dir, &st)) < 0) return rc;
    if (st.compiled && st.fresh) {
        cn_status_free(&st);
        return 0;
    }
    damaged = st.damaged;
    if (o->no_compile) {
        rc = damaged ? damaged_error(o, st.damage)
                     : cn_error_set(CN_ENOTFOUND, "%s has no fresh index; run `codenib compile %s` first", o->repo,
                                    o->repo);
        cn_status_free(&st);
        return rc;
    }
    cn_status_free(&st);
    return compile_for_query(o, damaged);
}

/* The registry on the repository's index; an index file that fails its
 * checks (missing, truncated, another checksum) has the index rebuilt and
 * opened again, or with --no-compile is the error. */
static int open_repo_index(const cn_query_opts *o, cn_registry *reg)
{
    int rc = cn_registry_set_repo_cache(reg, o->repo, o->cache_dir);
    if (rc != CN_ECORRUPT) return rc;
    if (o->no_compile) {
        char *why = cn_strdup(cn_error_last()->message);
        rc = why ? damaged_error(o, why) : cn_error_set(CN_ENOMEM, "out of memory");
        free(why);
        return rc;
    }
    cn_error_clear();
    if ((rc = compile_for_query(o, true)) < 0) return rc;
    return cn_registry_set_repo_cache(reg, o->repo, o->cache_dir);
}

/* repository.path and the generation directory of a manifest file. */
static int open_manifest(cn_registry *reg, const char *path)
{
    json_object *m = NULL, *repo, *p;
    char *copy = cn_strdup(path), *dir;
    int rc;

    if (copy == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    {
        char *text = NULL;
        size_t len;
        rc = cn_file_read(path, 16u << 20, &text, &len);
        if (rc == 0) rc = cn_json_parse(text, path, &m);
        free(text);
        if (rc < 0) {
            free(copy);
            return rc;
        }
    }
    if (!json_object_object_get_ex(m, "repository", &repo) || !json_object_object_get_ex(repo, "path", &p) ||
        !json_object_is_type(p, json_type_string)) {
        rc = cn_error_set(CN_EPARSE, "%s: not a codenib manifest (no repository.path)", path);
    } else {
        dir = dirname(copy);
        rc = cn_registry_set_index_dir(reg, json_object_get_string(p), dir);
        if (rc < 0) cn_error_prefix("manifest %s", path);
    }
    json_object_put(m);
    free(copy);
    return rc;
}

static int prepare_registry(const cn_query_opts *o, cn_registry **own, cn_registry **reg)
{
    int rc;
    *own = NULL;
    if (o->registry != NULL) {
        *reg = o->registry;
        return 0;
    }
    if (o->repo != NULL && (rc = ensure_compiled(o)) < 0) return rc;
    if ((rc = cn_registry_new(own)) < 0) return rc;
    if ((rc = cn_registry_discover(*own)) == 0)
        rc = o->repo ? open_repo_index(o, *own) : open_manifest(*own, o->manifest);
    if (rc == 0 && o->skills != NULL) {
        cn_strv ids = CN_STRV_INIT;
        rc = cn_strv_split(&ids, o->skills, ',');
        /* any loaded skill, a third party's too; a misspelt one is named */
        for (size_t i = 0; rc == 0 && i < ids.len; i++)
            if (cn_registry_find(*own, ids.items[i]) == NULL)
                rc = cn_error_set(CN_ENOTFOUND, "--skills: no skill '%s' is installed (see codenib skills list)",
                                  ids.items[i]);
        if (rc == 0) rc = cn_registry_set_allow(*own, (const char *const *)ids.items, ids.len);
        cn_strv_free(&ids);
    }
    if (rc < 0) {
        cn_registry_free(*own);
        *own = NULL;
        return rc;
    }
    *reg = *own;
    return 0;
}

static int run_offline(const cn_query_opts *o, cn_registry *reg, const char *question, json_object *out)
{
    cn_planner_options po;
    cn_plan plan;
    int rc;

    cn_planner_options_init(&po);
    if (o->max_files > 0) po.max_files = o->max_files;
    if (o->max_symbols > 0) po.max_symbols = po.max_locations = o->max_symbols;
    po.without = o->planner_without;
    memset(&plan, 0, sizeof plan);
    if ((rc = cn_planner_run(reg, question, &po, &plan)) < 0) {
        cn_plan_free(&plan);   /* the steps the planner took before it failed */
        return rc;
    }
    json_object_object_add(out, "mode", json_object_new_string("offline"));
    json_object_object_add(out, "answer", json_object_new_string(plan.answer ? plan.answer : ""));
    json_object_object_add(out, "contract", cn_contract_to_json(&plan.contract));
    json_object_object_add(out, "files", json_object_get(plan.files));
    json_object_object_add(out, "symbols", json_object_get(plan.symbols));
    json_object_object_add(out, "steps", json_object_get(plan.steps));
    cn_plan_free(&plan);
    return 0;
}

static int agent_options(const cn_query_opts *o, cn_agent_options *ao)
{
    int rc = 0;
    cn_agent_options_init(ao);
    /* ensure_compiled() has just compared the repository with its index */
    ao->index_known_fresh = o->repo != NULL;
    if (o->harness != NULL && (rc = cn_harness_load_file(o->harness, ao)) < 0) return rc;
    if (o->agent != NULL && (rc = cn_agent_settings_apply(o->agent, ao)) < 0) return rc;
    ao->collect_trace = o->want_trace;
    if (o->max_turns > 0) ao->max_turns = o->max_turns;
    if (o->model != NULL) { /* the command line wins over a harness's model: */
        free(ao->model);
        if ((ao->model = cn_strdup(o->model)) == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    }
    if (o->skills != NULL) {
        cn_strv_free(&ao->allow_skills);
        rc = cn_strv_split(&ao->allow_skills, o->skills, ',');
        ao->has_allow_skills = true;
    }
    if (rc == 0 && o->trace != NULL) {
        free(ao->trace_path);
        if ((ao->trace_path = cn_strdup(o->trace)) == NULL) rc = cn_error_set(CN_ENOMEM, "out of memory");
    }
    return rc;
}

/* The runner's policy when the turns run out (as in the reference): the
 * forced schema answer or the files read when force_localization_contract
 * is set, a forced answer when force_final_answer is, else the model's last
 * words with answer_source "max_turns".  Those last words are mid-search
 * chatter, or nothing: unless they carry the contract they are no answer,
 * and a query that printed them (or an empty line) and exited 0 would pass
 * for answered. */
static int check_exhausted(const cn_agent_options *ao, const cn_agent_result *res)
{
    if (res->answer_source == NULL || strcmp(res->answer_source, "max_turns") != 0 || res->has_contract)
        return 0;
    return cn_error_set(CN_ETIMEOUT,
                        "the agent used all %d turn%s without answering (%zu tool call%s, %s); raise --max-turns, "
                        "or set force_localization_contract (or force_final_answer) in the harness to have "
                        "an answer salvaged when the turns run out",
                        ao->max_turns, ao->max_turns == 1 ? "" : "s", res->n_calls, res->n_calls == 1 ? "" : "s",
                        res->answer && res->answer[0] ? "its last message has no Files:/Symbols:/Locations: contract" : "no text at all");
}

static char *model_config(const char *model, const char *base_url)
{
    json_object *c = json_object_new_object();
    char *s;
    if (model) json_object_object_add(c, "model", json_object_new_string(model));
    if (base_url) json_object_object_add(c, "base_url", json_object_new_string(base_url));
    s = cn_strdup(json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(c);
    return s;
}

/* Opens the model of `role` for the registry's skills from (model,
 * base_url), unless the registry has one already. */
static int give_model(cn_registry *reg, int role, const char *model, const char *base_url)
{
    char *cfg;
    int rc;
    if (reg->models[role] != NULL) return 0;
    if ((cfg = model_config(model, base_url)) == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    rc = cn_registry_set_model(reg, role, cfg);
    free(cfg);
    return rc;
}

/* The skills that call a model are offered to the agent, so they get the
 * run's chat model -- the one the agent talks to -- and the rerank
 * endpoint when one is configured (without one, the runner leaves
 * crossencoder_rerank out and says why). */
static int give_models(const cn_query_opts *o, cn_registry *reg, cn_model *chat)
{
    const char *env = getenv("CODENIB_RERANK_MODEL"), *env_url = getenv("CODENIB_RERANK_BASE_URL");
    const char *rr_url = o->rerank_base_url;
    int rc;
    /* an application's client serves the skills as it serves the agent */
    if (o->chat_client != NULL)
        rc = reg->models[CN_LLM_CHAT] != NULL ? 0 : cn_registry_set_model_handle(reg, CN_LLM_CHAT, chat);
    else
        rc = give_model(reg, CN_LLM_CHAT, o->model, o->base_url);
    /* the rerank endpoint's own URL, else the chat endpoint's */
    if (rr_url == NULL && (env_url == NULL || *env_url == '\0')) rr_url = o->base_url;
    if (rc == 0 && (o->rerank_model != NULL || o->rerank_base_url != NULL || (env != NULL && *env != '\0')))
        rc = give_model(reg, CN_LLM_RERANK, o->rerank_model, rr_url);
    return rc < 0 ? cn_error_prefix("the model of the skills") : 0;
}

static int run_agent(const cn_query_opts *o, cn_registry *reg, const char *question, json_object *out)
{
    cn_agent_options ao;
    cn_agent_result res;
    cn_model *chat = NULL;
    char *cfg = model_config(o->model, o->base_url);
    int rc;

    memset(&res, 0, sizeof res);
    if (cfg == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    rc = o->chat_client != NULL ? cn_llm_open_client(o->chat_client, &chat) : cn_llm_open(cfg, CN_LLM_CHAT, &chat);
    free(cfg);
    if (rc == 0) rc = give_models(o, reg, chat);
    if (rc < 0) {
        cn_llm_close(chat);
        return rc;
    }
    if ((rc = agent_options(o, &ao)) == 0 && (rc = cn_agent_options_validate(&ao, o->harness ? o->harness : "options")) == 0 &&
        (rc = cn_agent_run(reg, chat, &ao, question, &res)) == 0)
        rc = check_exhausted(&ao, &res);
    if (rc == 0) {
        json_object *r = cn_agent_result_json(&res);
        json_object_object_add(out, "mode", json_object_new_string("agent"));
        json_object_object_add(out, "model", json_object_new_string(ao.model ? ao.model : cn_llm_model_name(chat)));
        json_object_object_foreach(r, k, v) json_object_object_add(out, k, json_object_get(v));
        json_object_put(r);
        if (o->want_messages) json_object_object_add(out, "messages", json_object_get(res.messages));
        if (o->want_trace) json_object_object_add(out, "trace", json_object_get(res.trace));
    }
    cn_agent_result_free(&res);
    cn_agent_options_free(&ao);
    cn_llm_close(chat);
    return rc;
}

int cn_query_run(const cn_query_opts *o, const char *question, json_object **result)
{
    cn_registry *own = NULL, *reg = NULL;
    const char *env_model = getenv("CODENIB_MODEL");
    bool with_model = !o->offline && (o->chat_client != NULL || o->model != NULL ||
                                      (env_model != NULL && *env_model != '\0'));
    json_object *out;
    int rc;

    *result = NULL;
    if ((rc = check_sources(o, question)) < 0) return rc;
    if ((rc = prepare_registry(o, &own, &reg)) < 0) return rc;
    if ((out = json_object_new_object()) == NULL) {
        cn_registry_free(own);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    rc = with_model ? run_agent(o, reg, question, out) : run_offline(o, reg, question, out);
    cn_registry_free(own);
    if (rc < 0) {
        json_object_put(out);
        return rc;
    }
    *result = out;
    return 0;
}

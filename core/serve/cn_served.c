/* SPDX-License-Identifier: Apache-2.0 */
/* A repository served to a long-lived client (see cn_served.h). */
#include "cn_served.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <codenib/codenib.h>

#include "../agent/cn_agent_support.h"
#include "../index/cn_compile.h"
#include "../llm/cn_llm.h"
#include "cn_watch.h"

void cn_served_log(const cn_served *s, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    if (s->log == NULL) return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    s->log(line, s->log_data);
}

/* The allow list, each id checked: a misspelt skill would otherwise leave
 * the agent without it and nobody told. */
static int set_allow(cn_served *s, const char *csv)
{
    cn_strv ids = CN_STRV_INIT;
    int rc = cn_strv_split(&ids, csv, ',');
    for (size_t i = 0; rc == 0 && i < ids.len; i++) {
        const cn_skill_entry *e = cn_registry_find(s->reg, ids.items[i]);
        if (e == NULL)
            rc = cn_error_set(CN_ENOTFOUND, "there is no skill '%s' (`codenib skills list` names them)",
                              ids.items[i]);
        else if (e->state == CN_STATE_FAILED)
            rc = cn_error_set(CN_ELOAD, "skill '%s' cannot be used: %s", e->id,
                              e->reason ? e->reason : "it failed to load");
    }
    if (rc == 0 && ids.len == 0) rc = cn_error_set(CN_EINVAL, "the list of skills names none");
    if (rc == 0) rc = cn_registry_set_allow(s->reg, (const char *const *)ids.items, ids.len);
    cn_strv_free(&ids);
    return rc;
}

int cn_served_open(cn_served *s, const cn_served_options *o, const char *const *reserved, size_t n_reserved)
{
    int rc;

    memset(s, 0, sizeof *s);
    if (o == NULL || o->repo == NULL) return cn_error_set(CN_EINVAL, "a server needs a repository");
    s->no_compile = o->no_compile;
    s->log = o->log;
    s->log_data = o->log_data;
    rc = cn_repo_realpath(o->repo, &s->repo);
    if (rc == 0) {
        /* absolute, so that the watch can tell it apart (cn_watch_opts.skip_dir) */
        if (o->cache_dir != NULL && (s->cache = realpath(o->cache_dir, NULL)) == NULL)
            s->cache = cn_strdup(o->cache_dir);
        if (o->cache_dir == NULL) rc = cn_cache_dir_for(s->repo, &s->cache);
        else if (s->cache == NULL) rc = CN_ENOMEM;
    }
    if (rc == 0 && o->indexes != NULL && (s->indexes = cn_strdup(o->indexes)) == NULL) rc = CN_ENOMEM;
    if (rc == 0) rc = cn_registry_new(&s->reg);
    if (rc == 0) rc = cn_registry_discover(s->reg);
    if (rc == 0 && n_reserved > 0) rc = cn_registry_set_tool_names(s->reg, reserved, n_reserved);
    if (rc == 0 && o->skills != NULL) rc = set_allow(s, o->skills);
    if (rc == 0) rc = cn_registry_models_from_env(s->reg);
    if (rc == CN_ENOMEM && cn_error_last()->code != CN_ENOMEM) cn_error_set(CN_ENOMEM, "out of memory");
    if (rc < 0) cn_served_close(s);
    return rc;
}

void cn_served_close(cn_served *s)
{
    cn_watch_close(s->watch);
    cn_registry_free(s->reg);
    free(s->repo);
    free(s->cache);
    free(s->indexes);
    free(s->gen);
    cn_strv_free(&s->excluded);
    cn_strv_free(&s->excluded_why);
    memset(s, 0, sizeof *s);
}

const char *cn_served_excluded(const cn_served *s, const char *id)
{
    for (size_t i = 0; i < s->excluded.len; i++)
        if (strcmp(s->excluded.items[i], id) == 0) return s->excluded_why.items[i];
    return NULL;
}

static void on_compile(cn_compile_stage stage, size_t done, size_t total, const char *note, void *data)
{
    cn_served *s = data;
    (void)done;
    (void)total;
    /* one line a stage: the log is a stream, not a terminal */
    if ((int)stage == s->stage) return;
    s->stage = (int)stage;
    cn_served_log(s, "compiling %s: %s%s%s%s", s->repo, cn_compile_stage_name(stage), note ? " (" : "",
                  note ? note : "", note ? ")" : "");
}

static int compile_repo(cn_served *s, const cn_status *st, bool rebuild)
{
    cn_compile_opts co;
    cn_compile_result res;
    int rc;

    memset(&co, 0, sizeof co);
    memset(&res, 0, sizeof res);
    co.repo = s->repo;
    co.cache_dir = s->cache;
    co.progress = on_compile;
    co.progress_data = s;
    co.rebuild = rebuild;
    s->stage = -1;
    if (st == NULL) cn_served_log(s, "compiling %s again from scratch", s->repo);
    else if (!st->compiled) cn_served_log(s, "%s has no index yet: compiling it", s->repo);
    else if (st->damaged) cn_served_log(s, "the index of %s is damaged (%s): rebuilding it", s->repo, st->damage);
    else
        cn_served_log(s, "%s changed since its index was built (%s): compiling again", s->repo,
                      st->reasons.len ? st->reasons.items[0] : "stale");
    rc = s->indexes != NULL && cn_strv_split(&co.indexes, s->indexes, ',') < 0
             ? cn_error_set(CN_ENOMEM, "out of memory")
             : cn_compile(&co, &res);
    if (rc == 0)
        cn_served_log(s, "compiled %s in %.2f s: %u nodes", s->repo, res.seconds, (unsigned)res.n_nodes);
    cn_strv_free(&co.indexes);
    cn_compile_result_free(&res);
    return rc < 0 ? cn_error_prefix("compiling %s", s->repo) : 0;
}

int cn_served_invoke(cn_served *s, const char *id, json_object *args, json_object **result)
{
    const char *why;
    int rc;
    *result = NULL;
    if ((rc = cn_served_refresh(s)) < 0) return rc;
    if ((why = cn_served_excluded(s, id)) != NULL) return cn_error_set(CN_ENOCONTEXT, "%s", why);
    return cn_registry_invoke(s->reg, id, args, NULL, result);
}

/* Skills that call a model the server was not given: the agent on the
 * other side is a model, but not one these skills can call. */
static int model_guard(cn_served *s)
{
    static const struct {
        const char *resource;
        int role;
        const char *how;
    } needs[] = {{"chat_model", CN_LLM_CHAT, "CODENIB_MODEL"},
                 {"rerank_model", CN_LLM_RERANK, "CODENIB_RERANK_MODEL"}};
    for (size_t i = 0; i < s->reg->n_entries; i++) {
        const cn_skill_entry *e = s->reg->entries[i];
        if (e->meta == NULL || cn_strv_contains(&s->excluded, e->id)) continue;
        for (size_t k = 0; k < sizeof needs / sizeof needs[0]; k++) {
            char why[512];
            if (!cn_strv_contains(&e->meta->resources, needs[k].resource) || s->reg->models[needs[k].role] != NULL)
                continue;
            snprintf(why, sizeof why, "skill %s needs a %s and the server has none: set %s (and CODENIB_BASE_URL, "
                     "CODENIB_API_KEY) in the server's environment", e->id, needs[k].resource, needs[k].how);
            if (cn_strv_push(&s->excluded, e->id) < 0 || cn_strv_push(&s->excluded_why, why) < 0)
                return cn_error_set(CN_ENOMEM, "out of memory");
            break;
        }
    }
    return 0;
}

/* Watches the repository from now on, when it can (once it could not, it
 * is not tried again: a tree too large to watch stays so). */
static void arm_watch(cn_served *s)
{
    cn_watch_opts wo;
    cn_watch_close(s->watch);
    s->watch = NULL;
    if (s->watch_failed) return;
    memset(&wo, 0, sizeof wo);
    wo.skip_dir = s->cache;
    wo.skip_default_excludes = !s->watch_all;
    if (cn_watch_open(s->repo, &wo, &s->watch) < 0) {
        cn_served_log(s, "%s; the repository is compared with its index before every call instead",
                      cn_error_last()->message);
        cn_error_clear();
        s->watch_failed = true;
    }
}

static void disarm_watch(cn_served *s)
{
    cn_watch_close(s->watch);
    s->watch = NULL;
}

/* Whether the index covers the directories the walk skips by default. */
static bool covers_default_excludes(const cn_status *st)
{
    json_object *sel = NULL, *v = NULL;
    return st->manifest != NULL && json_object_object_get_ex(st->manifest, "selection", &sel) &&
           json_object_object_get_ex(sel, "default_excludes", &v) && !json_object_get_boolean(v);
}

int cn_served_refresh(cn_served *s)
{
    cn_status st;
    char *dir = NULL;
    bool fresh;
    int rc;

    /* nothing changed below the repository since it matched its index */
    if (s->gen != NULL && s->watch != NULL && !cn_watch_changed(s->watch)) return 0;
    /* armed before comparing, so that a change made while comparing or
     * compiling is seen by the next call */
    arm_watch(s);
    memset(&st, 0, sizeof st);
    if ((rc = cn_status_check(s->repo, s->cache, &st)) < 0) {
        disarm_watch(s);
        return rc;
    }
    if (covers_default_excludes(&st) && !s->watch_all) {
        /* watched too little: compare again next time, watching all */
        s->watch_all = true;
        disarm_watch(s);
    }
    fresh = st.compiled && st.fresh;
    if (!fresh && !s->no_compile) {
        rc = compile_repo(s, &st, st.damaged);   /* nothing of a damaged index is reused */
        fresh = rc == 0;
    } else if (!st.compiled) {
        rc = cn_error_set(CN_ENOTFOUND, "%s has no index and this server does not compile (--no-compile): run "
                                        "`codenib compile %s`", s->repo, s->repo);
    }
    cn_status_free(&st);
    if (rc == 0) rc = cn_cache_current(s->cache, &dir);
    if (rc == 0 && (s->gen == NULL || strcmp(s->gen, dir) != 0)) {
        cn_strv before = s->excluded, why = CN_STRV_INIT, notes = CN_STRV_INIT;
        rc = cn_registry_set_repo_cache(s->reg, s->repo, s->cache);
        if (rc == CN_ECORRUPT && !s->no_compile) {
            /* a damaged index is rebuilt, not served or left in the way */
            cn_served_log(s, "%s", cn_error_last()->message);
            cn_error_clear();
            free(dir);
            dir = NULL;
            if ((rc = compile_repo(s, NULL, true)) == 0 && (rc = cn_cache_current(s->cache, &dir)) == 0)
                rc = cn_registry_set_repo_cache(s->reg, s->repo, s->cache);
        }
        if (rc == 0) {
            free(s->gen);
            s->gen = dir;
            dir = NULL;
            memset(&s->excluded, 0, sizeof s->excluded);
            cn_strv_free(&s->excluded_why);
            rc = cn_resource_guard(s->reg, NULL, fresh, &s->excluded, &why, &notes);
            s->excluded_why = why;
            /* --no-compile on a stale index: the skills serve it as it is */
            for (size_t i = 0; rc == 0 && i < notes.len; i++) cn_served_log(s, "%s", notes.items[i]);
            cn_strv_free(&notes);
            if (rc == 0) rc = model_guard(s);
            /* said once, and again only when a rebuild changes it */
            for (size_t i = 0; i < s->excluded.len; i++)
                if (!cn_strv_contains(&before, s->excluded.items[i])) cn_served_log(s, "%s", s->excluded_why.items[i]);
            for (size_t i = 0; i < before.len; i++)
                if (!cn_strv_contains(&s->excluded, before.items[i]))
                    cn_served_log(s, "skill %s can run now", before.items[i]);
            cn_strv_free(&before);
        }
    }
    free(dir);
    /* not serving what the repository holds: compare again next time */
    if (rc < 0) disarm_watch(s);
    return rc;
}

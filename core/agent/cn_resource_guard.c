/* SPDX-License-Identifier: Apache-2.0 */
/* The resource guard: before a run, skills whose required index is
 * missing or failed to build are taken out of the offer, so the model
 * never calls a tool that can only fail.  A stale index (files changed
 * since it was built, or older than a skill's max_age_seconds) keeps its
 * skills, as the reference does: they answer from the index as it was
 * built, and a note says so (the runner puts it in the system prompt).
 * Freshness is what `codenib status` computes (cn_status_check); age
 * limits use the manifest's built_at. */
#include <libgen.h>
#include <stdlib.h>
#include <time.h>

#include "cn_agent_support.h"
#include "../index/cn_compile.h"
#include "../index/cn_index.h"
#include "../plugin/cn_registry.h"

/* "2026-12-01T06:46:31Z" -> seconds since the epoch, or -1. */
static long long parse_utc(const char *s)
{
    struct tm tm;
    const char *end;
    if (s == NULL) return -1;
    memset(&tm, 0, sizeof tm);
    end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (end == NULL || *end != '\0') return -1;
    return (long long)timegm(&tm);
}

static char *fmt(const char *f, const char *a, const char *b, const char *c) CN_PRINTF(1, 0);
static char *fmt(const char *f, const char *a, const char *b, const char *c)
{
    cn_buf buf = CN_BUF_INIT;
    cn_buf_printf(&buf, f, a, b, c);
    return cn_buf_steal(&buf);
}

static char *join_reasons(const cn_strv *r)
{
    cn_buf b = CN_BUF_INIT;
    for (size_t i = 0; i < r->len; i++) cn_buf_printf(&b, "%s%s", i ? "; " : "", r->items[i]);
    return cn_buf_steal(&b);
}

/* Whether one requirement is met: CN_GUARD_OK, or CN_GUARD_MISSING /
 * CN_GUARD_STALE with *why (malloc'd) saying what about the index. */
static cn_guard_verdict requirement(const cn_index_requirement *q, json_object *manifest, const cn_strv *stale,
                                    long long now, char **why)
{
    json_object *idx = NULL, *e = NULL, *v = NULL;
    const char *type = q->type ? q->type : "?";

    *why = NULL;
    if (manifest == NULL) {
        *why = fmt("the %s index: the repository is not compiled; run `codenib compile`%s%s", type, "", "");
        return CN_GUARD_MISSING;
    }
    if (!json_object_object_get_ex(manifest, "indexes", &idx) || !json_object_object_get_ex(idx, type, &e) ||
        e == NULL) {
        *why = fmt("the %s index: the compiled index has no %s part; recompile with --index ...,%s", type, type, type);
        return CN_GUARD_MISSING;
    }
    if (json_object_object_get_ex(e, "status", &v) && v && strcmp(json_object_get_string(v), "ok") != 0) {
        *why = fmt("the %s index: its build status is \"%s\"; recompile%s", type, json_object_get_string(v), "");
        return CN_GUARD_MISSING;
    }
    if (stale && stale->len > 0) {
        char *reasons = join_reasons(stale);
        *why = fmt("the %s index, which is stale (%s); run `codenib compile` to bring it up to date%s", type,
                   reasons ? reasons : "", "");
        free(reasons);
        return CN_GUARD_STALE;
    }
    if (q->max_age_seconds >= 0) {
        long long built;
        char age[64];
        if (!json_object_object_get_ex(e, "built_at", &v)) json_object_object_get_ex(manifest, "built_at", &v);
        built = parse_utc(v ? json_object_get_string(v) : NULL);
        if (built < 0) {
            snprintf(age, sizeof age, "%lld", q->max_age_seconds);
            *why = fmt("the %s index, whose build time is unknown, so its age (limit %s s) cannot be checked%s", type,
                       age, "");
            return CN_GUARD_STALE;
        }
        if (now - built > q->max_age_seconds) {
            snprintf(age, sizeof age, "%lld s old, limit %lld s", now - built, q->max_age_seconds);
            *why = fmt("the %s index, which is too old (%s); run `codenib compile`%s", type, age, "");
            return CN_GUARD_STALE;
        }
    }
    return CN_GUARD_OK;
}

cn_guard_verdict cn_resource_guard_check(const struct cn_skill_meta *meta, json_object *manifest,
                                         const cn_strv *stale_reasons, long long now, char **why)
{
    cn_guard_verdict worst = CN_GUARD_OK;
    char *first_stale = NULL;

    if (why) *why = NULL;
    if (meta == NULL) return CN_GUARD_OK;
    for (size_t i = 0; i < meta->n_index_requirements; i++) {
        const cn_index_requirement *q = &meta->index_requirements[i];
        char *r = NULL;
        cn_guard_verdict v;
        if (!q->required) continue;
        v = requirement(q, manifest, stale_reasons, now, &r);
        if (v == CN_GUARD_MISSING) {
            /* a missing index decides: the skill cannot run at all */
            if (why) {
                cn_buf b = CN_BUF_INIT;
                cn_buf_printf(&b, "skill %s needs %s", meta->skill_id, r);
                *why = cn_buf_steal(&b);
            }
            free(r);
            free(first_stale);
            return CN_GUARD_MISSING;
        }
        if (v == CN_GUARD_STALE && first_stale == NULL) first_stale = r;
        else free(r);
        if (v > worst) worst = v;
    }
    if (worst == CN_GUARD_STALE && why) {
        cn_buf b = CN_BUF_INIT;
        cn_buf_printf(&b, "skill %s answers from %s", meta->skill_id, first_stale);
        *why = cn_buf_steal(&b);
    }
    free(first_stale);
    return worst;
}

static char *parent_dir(const char *path)
{
    char *copy = cn_strdup(path), *d, *out;
    if (copy == NULL) return NULL;
    d = dirname(copy);
    out = cn_strdup(d);
    free(copy);
    return out;
}

/* The manifest and the staleness of the cache that holds it. */
static int load_state(cn_registry *reg, const char *manifest_path, bool known_fresh, json_object **manifest,
                      cn_strv *stale)
{
    char *mpath = NULL, *gen = NULL, *cache = NULL;
    const char *repo = reg->repo_root;
    cn_status st;
    json_object *r = NULL, *p = NULL;

    if (manifest_path) mpath = cn_strdup(manifest_path);
    else if (reg->index && reg->index->dir) mpath = cn_path_join(reg->index->dir, CN_MANIFEST_FILE);
    if (mpath == NULL) return 0;  /* nothing compiled: every requirement fails */
    *manifest = json_object_from_file(mpath);
    if (*manifest == NULL) {
        int rc = cn_error_set(CN_EIO, "resource guard: cannot read the manifest %s; recompile the repository", mpath);
        free(mpath);
        return rc;
    }
    if (repo == NULL && json_object_object_get_ex(*manifest, "repository", &r) &&
        json_object_object_get_ex(r, "path", &p))
        repo = json_object_get_string(p);
    gen = parent_dir(mpath);
    cache = gen ? parent_dir(gen) : NULL;
    /* known_fresh: the caller compared the repository just before */
    if (!known_fresh && repo && cache && cn_status_check(repo, cache, &st) == 0) {
        for (size_t i = 0; i < st.reasons.len; i++) cn_strv_push(stale, st.reasons.items[i]);
        cn_status_free(&st);
    } else {
        /* fresh as the caller says, or freshness unknown: no exclusion on a guess */
        cn_error_clear();
    }
    free(mpath);
    free(gen);
    free(cache);
    return 0;
}

/* One note for the skills that answer from a stale index: the reasons are
 * the repository's, so they are said once, not once per skill. */
static char *stale_note(const cn_strv *stale, const cn_strv *ids)
{
    cn_buf b = CN_BUF_INIT;
    char *reasons = join_reasons(stale);
    cn_buf_printf(&b, "The compiled index is stale (%s): ", reasons ? reasons : "");
    for (size_t i = 0; i < ids->len; i++) cn_buf_printf(&b, "%s%s", i ? ", " : "", ids->items[i]);
    cn_buf_printf(&b, " answer%s from the index as it was built and may miss or misplace recent changes; "
                      "confirm what they return with read or grep (run `codenib compile` to update it).",
                  ids->len == 1 ? "s" : "");
    free(reasons);
    return cn_buf_steal(&b);
}

int cn_resource_guard(cn_registry *reg, const char *manifest_path, bool known_fresh, cn_strv *excluded,
                      cn_strv *warnings, cn_strv *notes)
{
    json_object *manifest = NULL;
    cn_strv stale = CN_STRV_INIT, stale_ids = CN_STRV_INIT;
    long long now = (long long)time(NULL);
    int rc;

    if (reg == NULL) return cn_error_set(CN_EINVAL, "resource guard: no registry");
    if ((rc = load_state(reg, manifest_path, known_fresh, &manifest, &stale)) < 0) return rc;
    for (size_t i = 0; rc == 0 && i < reg->n_entries; i++) {
        cn_skill_entry *e = reg->entries[i];
        cn_guard_verdict v;
        char *why = NULL;
        if (e->meta == NULL || e->state == CN_STATE_FAILED || e->state == CN_STATE_DUPLICATE) continue;
        if (!cn_registry_enabled(reg, e->id)) continue;
        v = cn_resource_guard_check(e->meta, manifest, &stale, now, &why);
        if (v == CN_GUARD_MISSING) {
            if (cn_strv_push(excluded, e->id) < 0 || cn_strv_push_owned(warnings, why) < 0)
                rc = cn_error_set(CN_ENOMEM, "out of memory");
            continue;
        }
        if (v == CN_GUARD_STALE && stale.len > 0) {
            /* the repository changed: said once for all such skills */
            free(why);
            if (cn_strv_push(&stale_ids, e->id) < 0) rc = cn_error_set(CN_ENOMEM, "out of memory");
            continue;
        }
        if (v == CN_GUARD_STALE && notes != NULL) {
            if (cn_strv_push_owned(notes, why) < 0) rc = cn_error_set(CN_ENOMEM, "out of memory");
            continue;
        }
        free(why);
    }
    if (rc == 0 && stale_ids.len > 0 && notes != NULL && cn_strv_push_owned(notes, stale_note(&stale, &stale_ids)) < 0)
        rc = cn_error_set(CN_ENOMEM, "out of memory");
    json_object_put(manifest);
    cn_strv_free(&stale);
    cn_strv_free(&stale_ids);
    return rc;
}

/* The resource guard: before a run, skills whose required index is
 * missing, failed or stale are taken out of the offer, so the model never
 * calls a tool that can only fail.  Freshness is what `codenib status`
 * computes (cn_status_check); age limits use the manifest's built_at. */
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

/* Why one requirement is not met, or NULL when it is. */
static char *unmet(const cn_index_requirement *q, json_object *manifest, const cn_strv *stale, long long now)
{
    json_object *idx = NULL, *e = NULL, *v = NULL;
    const char *type = q->type ? q->type : "?";

    if (manifest == NULL) return fmt("the %s index: the repository is not compiled; run `codenib compile`%s%s", type, "", "");
    if (!json_object_object_get_ex(manifest, "indexes", &idx) || !json_object_object_get_ex(idx, type, &e) ||
        e == NULL)
        return fmt("the %s index: the compiled index has no %s part; recompile with --index ...,%s", type, type, type);
    if (json_object_object_get_ex(e, "status", &v) && v && strcmp(json_object_get_string(v), "ok") != 0)
        return fmt("the %s index: its build status is \"%s\"; recompile%s", type, json_object_get_string(v), "");
    if (stale && stale->len > 0) {
        char *why = join_reasons(stale), *s;
        s = fmt("the %s index: it is stale (%s); run `codenib compile`%s", type, why, "");
        free(why);
        return s;
    }
    if (q->max_age_seconds >= 0) {
        long long built;
        char age[64];
        if (!json_object_object_get_ex(e, "built_at", &v)) json_object_object_get_ex(manifest, "built_at", &v);
        built = parse_utc(v ? json_object_get_string(v) : NULL);
        if (built < 0) return fmt("the %s index: its build time is unknown, so its age cannot be checked%s%s", type, "", "");
        if (now - built > q->max_age_seconds) {
            snprintf(age, sizeof age, "%lld s old, limit %lld s", now - built, q->max_age_seconds);
            return fmt("the %s index: it is too old (%s); run `codenib compile`%s", type, age, "");
        }
    }
    return NULL;
}

bool cn_resource_guard_check(const struct cn_skill_meta *meta, json_object *manifest, const cn_strv *stale_reasons,
                             long long now, char **why)
{
    if (why) *why = NULL;
    if (meta == NULL) return true;
    for (size_t i = 0; i < meta->n_index_requirements; i++) {
        const cn_index_requirement *q = &meta->index_requirements[i];
        char *r;
        if (!q->required) continue;
        r = unmet(q, manifest, stale_reasons, now);
        if (r == NULL) continue;
        if (why) {
            cn_buf b = CN_BUF_INIT;
            cn_buf_printf(&b, "skill %s needs %s", meta->skill_id, r);
            *why = cn_buf_steal(&b);
        }
        free(r);
        return false;
    }
    return true;
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

int cn_resource_guard(cn_registry *reg, const char *manifest_path, bool known_fresh, cn_strv *excluded,
                      cn_strv *warnings)
{
    json_object *manifest = NULL;
    cn_strv stale = CN_STRV_INIT;
    long long now = (long long)time(NULL);
    int rc;

    if (reg == NULL) return cn_error_set(CN_EINVAL, "resource guard: no registry");
    if ((rc = load_state(reg, manifest_path, known_fresh, &manifest, &stale)) < 0) return rc;
    for (size_t i = 0; i < reg->n_entries; i++) {
        cn_skill_entry *e = reg->entries[i];
        char *why = NULL;
        if (e->meta == NULL || e->state == CN_STATE_FAILED || e->state == CN_STATE_DUPLICATE) continue;
        if (!cn_registry_enabled(reg, e->id)) continue;
        if (cn_resource_guard_check(e->meta, manifest, &stale, now, &why)) continue;
        if (cn_strv_push(excluded, e->id) < 0 || cn_strv_push_owned(warnings, why) < 0) {
            rc = cn_error_set(CN_ENOMEM, "out of memory");
            break;
        }
    }
    json_object_put(manifest);
    cn_strv_free(&stale);
    return rc;
}

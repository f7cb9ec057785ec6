/* SPDX-License-Identifier: Apache-2.0 */
/* Freshness of a compiled repository: the files as they are now against
 * the records of the current generation, plus what decided the selection
 * and which backends built it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plugin/cn_backends.h"
#include "../plugin/cn_host.h"
#include "../util/cn_git.h"
#include "cn_compile.h"
#include "cn_idxfile.h"
#include "cn_index.h"
#include "cn_records.h"

static int reason(cn_status *st, const char *fmt, ...) CN_PRINTF(2, 3);
static int reason(cn_status *st, const char *fmt, ...)
{
    cn_buf b = CN_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    cn_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    st->fresh = false;
    return cn_strv_push_owned(&st->reasons, cn_buf_steal(&b));
}

/* The index is damaged: cn_error_last() says where (the file) and what;
 * taken as the reason, and the error cleared. */
static int damaged(cn_status *st)
{
    int rc;
    st->damaged = true;
    free(st->damage);
    st->damage = cn_strdup(cn_error_last()->message);
    rc = reason(st, "%s", cn_error_last()->message);   /* names the file, says it is damaged */
    cn_error_clear();
    return st->damage == NULL ? cn_error_set(CN_ENOMEM, "out of memory") : rc;
}

/* Whether backend `id` of `kind` is installed and loads; a reason else. */
static void check_backend(cn_status *st, cn_backends *b, const char *id, int kind)
{
    cn_backend_entry *e = cn_backends_find(b, id);
    const cn_backend_descriptor *d;
    if (e == NULL || e->kind != kind) {
        reason(st, "the %s '%s' that built the vector index is not installed (see `codenib plugins list`)",
               cn_backend_kind_name(kind), id);
    } else if (cn_backends_open(e, &d) < 0) {
        reason(st, "the %s '%s' that built the vector index cannot be loaded: %s", cn_backend_kind_name(kind), id,
               cn_error_last()->message);
    } else {
        return;
    }
    st->vectors_usable = false;
    cn_error_clear();
}

/* The vector part: present (in the manifest), readable, and its backends
 * still installed -- a query cannot embed without the embedder. */
static void check_vectors(cn_status *st, const char *dir, json_object *manifest)
{
    json_object *idx = NULL, *entry = NULL;
    char *path = NULL, *text = NULL;
    cn_backends b;
    size_t len = 0;

    if (!json_object_object_get_ex(manifest, "indexes", &idx) || !json_object_object_get_ex(idx, "vector", &entry))
        return;
    st->has_vectors = true;
    st->vectors_usable = true;
    path = cn_path_join(dir, CN_VECTORS_DIR "/" CN_VECTORS_META);
    if (path == NULL || cn_file_read(path, 0, &text, &len) < 0 || cn_json_parse(text, path, &st->vectors) < 0 ||
        !json_object_is_type(st->vectors, json_type_object)) {
        reason(st, "the vector index cannot be read (%s); recompile with --index ...,vector --rebuild",
               cn_error_last()->message);
        cn_error_clear();
        json_object_put(st->vectors);
        st->vectors = NULL;
        st->vectors_usable = false;
    } else {
        json_object *e = NULL, *s = NULL;
        const char *eid, *sid;
        json_object_object_get_ex(st->vectors, "embedder", &e);
        json_object_object_get_ex(st->vectors, "store", &s);
        eid = json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL;
        sid = json_object_is_type(s, json_type_string) ? json_object_get_string(s) : NULL;
        memset(&b, 0, sizeof b);
        if (eid == NULL || sid == NULL) {
            reason(st, "%s names no embedder or store; recompile with --index ...,vector --rebuild", path);
            st->vectors_usable = false;
        } else if (cn_backends_discover(&b) == 0) {
            check_backend(st, &b, eid, CN_BACKEND_EMBEDDER);
            check_backend(st, &b, sid, CN_BACKEND_VECTOR_STORE);
        }
        cn_error_clear();
        cn_backends_free(&b);
    }
    free(text);
    free(path);
}

static int status_check(const char *repo, const char *cache_dir, bool deep, cn_status *st)
{
    char *cache = NULL, *dir = NULL, *root = NULL, *rpath = NULL;
    json_object *m = NULL, *sel = NULL, *v;
    cn_langs langs = {0};
    cn_records *recs = NULL;
    cn_walk_file *files = NULL;
    cn_walk_stats ws;
    cn_strv excl = CN_STRV_INIT, sel_langs = CN_STRV_INIT;
    size_t n = 0, matched = 0;
    bool default_excludes = true;
    int rc;

    memset(st, 0, sizeof *st);
    root = realpath(repo, NULL);
    if (root == NULL) return cn_error_set(CN_ENOTFOUND, "repository %s does not exist", repo);
    if (cache_dir) cache = cn_strdup(cache_dir);
    else if ((rc = cn_cache_dir_for(root, &cache)) < 0) goto out;
    if ((rc = cn_cache_current(cache, &dir)) == CN_ENOTFOUND) {
        cn_error_clear();
        st->compiled = false;
        rc = reason(st, "not compiled yet (no index in %s); run `codenib compile %s`", cache, repo);
        goto out;
    }
    if (rc == CN_ECORRUPT) {   /* `current` names a generation that is gone */
        st->compiled = true;
        rc = damaged(st);
        goto out;
    }
    if (rc < 0) goto out;   /* a cache entry codenib did not make: refused */
    st->compiled = true;
    st->fresh = true;
    /* every part of the index whole and as its manifest says, or the
     * index is damaged: never fresh, whatever the files are */
    if (cn_index_manifest_read(dir, &m) < 0) {
        rc = damaged(st);
        goto out;
    }
    st->manifest = json_object_get(m);
    if (deep) {
        struct cn_index *idx = NULL;
        if (cn_index_open(dir, root, &idx) < 0) {
            rc = damaged(st);
            goto out;
        }
        cn_index_close(idx);
    }
    check_vectors(st, dir, m);
    if (json_object_object_get_ex(m, "selection", &sel)) {
        if (json_object_object_get_ex(sel, "exclude_dirs", &v))
            for (size_t i = 0; i < json_object_array_length(v); i++)
                cn_strv_push(&excl, json_object_get_string(json_object_array_get_idx(v, i)));
        if (json_object_object_get_ex(sel, "languages", &v))
            for (size_t i = 0; i < json_object_array_length(v); i++)
                cn_strv_push(&sel_langs, json_object_get_string(json_object_array_get_idx(v, i)));
        if (json_object_object_get_ex(sel, "default_excludes", &v)) default_excludes = json_object_get_boolean(v);
    }
    if ((rc = cn_langs_discover(&langs)) < 0) goto out;
    /* backends whose version changed make their files stale */
    {
        json_object *ls = NULL;
        if (json_object_object_get_ex(m, "languages", &ls)) {
            json_object_object_foreach(ls, lname, linfo) {
                cn_lang_entry *e = (cn_lang_entry *)cn_langs_find(&langs, lname);
                const cn_lang_descriptor *d = NULL;
                json_object *ver = NULL;
                json_object_object_get_ex(linfo, "version", &ver);
                if (e == NULL || cn_langs_open(e, &d) < 0) {
                    cn_error_clear();
                    reason(st, "the %s backend that built the index is no longer available", lname);
                } else if (ver && strcmp(json_object_get_string(ver), d->version) != 0) {
                    reason(st, "the %s backend changed (%s, was %s)", lname, d->version,
                           json_object_get_string(ver));
                }
            }
        }
    }
    rpath = cn_path_join(dir, CN_RECORDS_FILE);
    if (cn_records_open(rpath, &langs, &recs) < 0) {
        rc = damaged(st);
        goto out;
    }
    {
        cn_walk_opts wo = {&langs, &excl, &sel_langs, !default_excludes, false, 0};
        if ((rc = cn_walk(root, &wo, &files, &n, &ws)) < 0) goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const char *version = files[i].lang && files[i].lang->desc ? files[i].lang->desc->version : NULL;
        char *abs, *src = NULL;
        size_t len = 0;
        const cn_file_rec *r;
        /* unchanged by its stamp: not read */
        if (cn_records_match(recs, files[i].path, &files[i].stamp, files[i].size, 0, version) != NULL) {
            matched++;
            continue;
        }
        abs = cn_path_join(root, files[i].path);
        if (abs == NULL || cn_file_read(abs, 0, &src, &len) < 0) {
            free(abs);
            cn_error_clear();
            continue;
        }
        free(abs);
        r = cn_records_match(recs, files[i].path, NULL, len, cn_hash64(src, len, 0), version);
        if (r != NULL) matched++;
        else if (cn_records_has(recs, files[i].path)) st->changed++;
        else if (memchr(src, '\0', len) == NULL) st->added++;  /* binary files are never indexed */
        free(src);
    }
    /* the records count the files left out for good too (cn_records_match
     * matches them) */
    {
        size_t known = cn_records_count(recs) + cn_records_left_count(recs);
        if (matched + st->changed < known) st->removed = known - matched - st->changed;
    }
    if (st->changed) reason(st, "%zu file(s) changed since the index was built", st->changed);
    if (st->added) reason(st, "%zu file(s) added since the index was built", st->added);
    if (st->removed) reason(st, "%zu file(s) removed since the index was built", st->removed);
    {
        json_object *repo_o = NULL, *head = NULL;
        if (json_object_object_get_ex(m, "repository", &repo_o) && json_object_object_get_ex(repo_o, "git_head", &head) &&
            head != NULL) {
            static const char *const args[] = {"rev-parse", "--verify", "-q", "HEAD", NULL};
            char *out = NULL;
            int status = -1;
            if (cn_git_capture(root, false, args, 4096, &out, NULL, &status) == 0 && status == 0) {
                out[strcspn(out, "\n")] = '\0';
                if (strcmp(out, json_object_get_string(head)) != 0)
                    reason(st, "git HEAD moved from %.12s to %.12s", json_object_get_string(head), out);
            }
            free(out);
            cn_error_clear();
        }
    }
    rc = 0;
out:
    cn_walk_free(files, n);
    cn_records_close(recs);
    cn_langs_free(&langs);
    cn_strv_free(&excl);
    cn_strv_free(&sel_langs);
    json_object_put(m);
    free(root);
    free(cache);
    free(dir);
    free(rpath);
    return rc;
}

int cn_status_check(const char *repo, const char *cache_dir, cn_status *st)
{
    return status_check(repo, cache_dir, true, st);
}

int cn_status_check_shallow(const char *repo, const char *cache_dir, cn_status *st)
{
    return status_check(repo, cache_dir, false, st);
}

void cn_status_free(cn_status *st)
{
    json_object_put(st->manifest);
    json_object_put(st->vectors);
    free(st->damage);
    cn_strv_free(&st->reasons);
    memset(st, 0, sizeof *st);
}

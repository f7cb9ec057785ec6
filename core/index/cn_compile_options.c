/* SPDX-License-Identifier: Apache-2.0 */
/* What a compile was asked to build -- the indexes, and for the vector index
 * its embedder, store and their options -- recorded in the manifest
 * ("options"), and taken from there by the next compile of the repository
 * for whatever it is not told: a plain `codenib compile`, the recompile of
 * a stale index by `query` and the MCP server's refresh all rebuild what was
 * chosen instead of falling back to the defaults.  Secrets never reach the
 * manifest (cn_vectors_redact_config): a rebuild with a remote embedder
 * takes its key from the environment, as the embedder documents. */
#include <stdlib.h>
#include <string.h>

#include "../plugin/cn_host.h"
#include "cn_compile.h"

/* The indexes a compile with these options builds, in a fixed order. */
static void built_indexes(const cn_compile_opts *o, cn_strv *out)
{
    static const char *const all[] = {"nodes", "bm25", "graph", "vector"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        bool on = strcmp(all[i], "nodes") == 0 || cn_strv_contains(&o->indexes, all[i]) ||
                  (o->indexes.len == 0 && strcmp(all[i], "vector") != 0);
        if (on) cn_strv_push(out, all[i]);
    }
}

json_object *cn_compile_options_json(const cn_compile_opts *o)
{
    json_object *m = json_object_new_object(), *v = NULL;
    cn_strv idx = CN_STRV_INIT;

    built_indexes(o, &idx);
    if (cn_strv_contains(&idx, "vector")) {
        json_object *cfg = NULL;
        const cn_vectors_opts *vo = &o->vectors;
        v = json_object_new_object();
        json_object_object_add(v, "embedder",
                               json_object_new_string(vo->embedder ? vo->embedder : CN_VECTORS_DEFAULT_EMBEDDER));
        if (vo->embedder_config == NULL || cn_json_parse(vo->embedder_config, "the embedder configuration", &cfg) < 0)
            cn_error_clear();
        json_object_object_add(v, "embedder_config", cn_vectors_redact_config(cfg));
        json_object_put(cfg);
        json_object_object_add(v, "store", json_object_new_string(vo->store ? vo->store : CN_VECTORS_DEFAULT_STORE));
        json_object_object_add(v, "precision", vo->precision ? json_object_new_string(vo->precision) : NULL);
        json_object_object_add(v, "max_chars", json_object_new_int64((int64_t)(vo->max_chars ? vo->max_chars
                                                                           : CN_VECTORS_DEFAULT_MAX_CHARS)));
    }
    json_object_object_add(m, "indexes", cn_json_strv(&idx));
    json_object_object_add(m, "vectors", v);
    cn_strv_free(&idx);
    return m;
}

/* The "options" of the current generation's manifest in the repository's
 * cache, or NULL (nothing compiled yet, or unreadable: the defaults then). */
static json_object *recorded_options(const cn_compile_opts *o)
{
    char *cache = NULL, *dir = NULL, *path = NULL, *text = NULL;
    json_object *m = NULL, *opts = NULL;

    if (o->cache_dir) cache = cn_strdup(o->cache_dir);
    else {
        char *root = realpath(o->repo, NULL);
        if (root == NULL || cn_cache_dir_for(root, &cache) < 0) cache = NULL;
        free(root);
    }
    if (cache && cn_cache_current(cache, &dir) == 0 && (path = cn_path_join(dir, CN_MANIFEST_FILE)) != NULL &&
        cn_file_read(path, 1u << 28, &text, NULL) == 0 && cn_json_parse(text, path, &m) == 0 &&
        json_object_object_get_ex(m, "options", &opts) && json_object_is_type(opts, json_type_object))
        json_object_get(opts);
    else opts = NULL;
    cn_error_clear();
    json_object_put(m);
    free(text);
    free(path);
    free(dir);
    free(cache);
    return opts;
}

static const char *str_of(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

static bool same(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

int cn_compile_opts_resolve(const cn_compile_opts *o, cn_compile_opts *eff, cn_compile_recorded *keep)
{
    json_object *rec, *idx, *vec;

    *eff = *o;
    memset(keep, 0, sizeof *keep);
    if ((rec = recorded_options(o)) == NULL) return 0;
    keep->options = rec;
    if (o->indexes.len == 0 && json_object_object_get_ex(rec, "indexes", &idx) &&
        json_object_is_type(idx, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(idx); i++) {
            const char *x = json_object_get_string(json_object_array_get_idx(idx, i));
            /* a name this codenib does not know is left out, not an error */
            if (x && cn_index_name_valid(x) && cn_strv_push(&keep->indexes, x) < 0)
                return cn_error_set(CN_ENOMEM, "out of memory");
        }
        if (keep->indexes.len) {
            eff->indexes = keep->indexes;
            keep->reused_indexes = true;
        }
    }
    if (cn_strv_contains(&eff->indexes, "vector") && json_object_object_get_ex(rec, "vectors", &vec) &&
        json_object_is_type(vec, json_type_object)) {
        const char *emb = str_of(vec, "embedder"), *store = str_of(vec, "store");
        cn_vectors_opts *vo = &eff->vectors;
        json_object *v;
        /* each option given wins; the embedder's configuration and the
         * store's precision only go with the backend they were made for */
        if (vo->embedder == NULL && emb) {
            vo->embedder = emb;
            keep->reused_vectors = true;
        }
        if (vo->embedder_config == NULL && same(vo->embedder ? vo->embedder : CN_VECTORS_DEFAULT_EMBEDDER, emb) &&
            json_object_object_get_ex(vec, "embedder_config", &v) && json_object_is_type(v, json_type_object)) {
            vo->embedder_config = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
            keep->reused_vectors = true;
        }
        if (vo->store == NULL && store) {
            vo->store = store;
            keep->reused_vectors = true;
        }
        if (vo->precision == NULL && same(vo->store ? vo->store : CN_VECTORS_DEFAULT_STORE, store) &&
            str_of(vec, "precision") != NULL) {
            vo->precision = str_of(vec, "precision");
            keep->reused_vectors = true;
        }
        if (vo->max_chars == 0 && json_object_object_get_ex(vec, "max_chars", &v) &&
            json_object_is_type(v, json_type_int) && json_object_get_int64(v) > 0)
            vo->max_chars = (size_t)json_object_get_int64(v);
    }
    return 0;
}

void cn_compile_recorded_free(cn_compile_recorded *keep)
{
    cn_strv_free(&keep->indexes);
    json_object_put(keep->options);   /* owns the strings eff's vector options point to */
    memset(keep, 0, sizeof *keep);
}

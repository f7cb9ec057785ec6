/* SPDX-License-Identifier: Apache-2.0 */
/* The configuration layer (cn_config.h): system file, user file,
 * environment, each value with where it came from. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../index/cn_vectors.h"
#include "../plugin/cn_yaml.h"
#include "cn_config.h"

#ifndef CN_SYSCONFDIR
#define CN_SYSCONFDIR "/etc"
#endif

#define DEFAULT_BASE_URL "https://api.openai.com/v1"

struct cn_config {
    json_object *values;   /* key -> {"value", "source"} */
    json_object *skills;   /* id -> {param -> {"value", "source"}} */
    cn_strv files;         /* the files read, in order */
    cn_strv warnings;
};

static const char *const string_keys[] = {"model", "base_url", "api_key_env", "embedder", "vector_store"};

static cn_config *current;

static int is_string_key(const char *k)
{
    for (size_t i = 0; i < sizeof string_keys / sizeof string_keys[0]; i++)
        if (strcmp(string_keys[i], k) == 0) return 1;
    return 0;
}

static json_object *sourced(json_object *value, const char *source)
{
    json_object *o = json_object_new_object();
    if (o == NULL) return NULL;
    json_object_object_add(o, "value", value);
    json_object_object_add(o, "source", json_object_new_string(source));
    return o;
}

static int set_value(json_object *into, const char *key, json_object *value, const char *source)
{
    json_object *o = sourced(value, source);
    if (o == NULL || json_object_object_add(into, key, o) != 0) {
        json_object_put(o);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    return 0;
}

/* "path:line" of a value read from a file. */
static char *where(const char *path, json_object *v)
{
    cn_buf b = CN_BUF_INIT;
    int line, col;
    if (cn_yaml_mark(v, &line, &col) == 0) cn_buf_printf(&b, "%s:%d", path, line);
    else cn_buf_puts(&b, path);
    return b.oom ? (cn_buf_free(&b), NULL) : cn_buf_steal(&b);
}

static int type_error(const char *path, json_object *v, const char *what)
{
    int line = 0, col = 0;
    const char *got = v == NULL ? "null" : json_type_to_name(json_object_get_type(v));
    if (cn_yaml_mark(v, &line, &col) == 0)
        return cn_error_set(CN_ETYPE, "%s:%d:%d: %s, not %s", path, line, col, what, got);
    return cn_error_set(CN_ETYPE, "%s: %s, not %s", path, what, got);
}

static int warn(cn_config *c, const char *path, json_object *v, const char *fmt, const char *arg)
{
    cn_buf b = CN_BUF_INIT;
    int line, col;
    if (cn_yaml_mark(v, &line, &col) == 0) cn_buf_printf(&b, "%s:%d:%d: ", path, line, col);
    else cn_buf_printf(&b, "%s: ", path);
    cn_buf_printf(&b, fmt, arg);
    if (b.oom) {
        cn_buf_free(&b);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    return cn_strv_push_owned(&c->warnings, cn_buf_steal(&b));
}

static int merge_skills(cn_config *c, const char *path, json_object *skills)
{
    if (skills == NULL) return 0;   /* "skills:" with nothing under it */
    if (!json_object_is_type(skills, json_type_object))
        return type_error(path, skills, "skills must be a mapping of skill ids to parameter defaults");
    json_object_object_foreach(skills, id, params) {
        json_object *dst;
        if (params == NULL) continue;
        if (!json_object_is_type(params, json_type_object))
            return type_error(path, params, "a skill's entry under skills must be a mapping of parameters");
        if (!json_object_object_get_ex(c->skills, id, &dst)) {
            if ((dst = json_object_new_object()) == NULL || json_object_object_add(c->skills, id, dst) != 0) {
                json_object_put(dst);
                return cn_error_set(CN_ENOMEM, "out of memory");
            }
        }
        json_object_object_foreach(params, pk, pv) {
            char *src = where(path, pv);
            int rc = src ? set_value(dst, pk, json_object_get(pv), src) : cn_error_set(CN_ENOMEM, "out of memory");
            free(src);
            if (rc < 0) return rc;
        }
    }
    return 0;
}

static int merge_file(cn_config *c, const char *path)
{
    json_object *doc = NULL;
    struct stat st;
    int rc;

    if (stat(path, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) return 0;
        return cn_error_set(CN_EIO, "%s: %s", path, strerror(errno));
    }
    /* never open a FIFO or a device: reading one could block for ever */
    if (!S_ISREG(st.st_mode)) return cn_error_set(CN_EIO, "%s: not a regular file; make it one or remove it", path);
    if ((rc = cn_yaml_load_file(path, &doc)) < 0) return rc;
    if ((rc = cn_strv_push(&c->files, path)) < 0) goto out;
    if (!json_object_is_type(doc, json_type_object)) {
        rc = type_error(path, doc, "the configuration must be a mapping of settings (model: ..., skills: ...)");
        goto out;
    }
    json_object_object_foreach(doc, key, v) {
        if (strcmp(key, "skills") == 0) {
            rc = merge_skills(c, path, v);
        } else if (is_string_key(key)) {
            char *src;
            if (v == NULL) continue;   /* "model:" left empty: not set here */
            if (!json_object_is_type(v, json_type_string)) {
                cn_buf msg = CN_BUF_INIT;
                cn_buf_printf(&msg, "%s must be a string", key);
                rc = msg.oom ? cn_error_set(CN_ENOMEM, "out of memory") : type_error(path, v, msg.data);
                cn_buf_free(&msg);
                goto out;
            }
            if ((src = where(path, v)) == NULL) {
                rc = cn_error_set(CN_ENOMEM, "out of memory");
                goto out;
            }
            rc = set_value(c->values, key, json_object_get(v), src);
            free(src);
        } else {
            rc = warn(c, path, v, "unknown setting '%s' ignored (known: model, base_url, api_key_env, "
                                  "embedder, vector_store, skills)", key);
        }
        if (rc < 0) goto out;
    }
out:
    json_object_put(doc);
    return rc;
}

static const char *env_value(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0' ? v : NULL;
}

static int merge_env(cn_config *c, const char *key, const char *var)
{
    const char *v = env_value(var);
    cn_buf b = CN_BUF_INIT;
    int rc;
    if (v == NULL) return 0;
    cn_buf_printf(&b, "environment %s", var);
    if (b.oom) return cn_error_set(CN_ENOMEM, "out of memory");
    rc = set_value(c->values, key, json_object_new_string(v), b.data);
    cn_buf_free(&b);
    return rc;
}

/* $(sysconfdir)/codenib/config.yaml, then the user's. */
static int config_paths(cn_strv *out)
{
    const char *sys = env_value("CODENIB_SYSCONFDIR"), *xdg = env_value("XDG_CONFIG_HOME");
    const char *home = env_value("HOME");
    cn_buf b = CN_BUF_INIT;
    int rc;

    cn_buf_printf(&b, "%s/codenib/config.yaml", sys ? sys : CN_SYSCONFDIR);
    if ((rc = b.oom ? cn_error_set(CN_ENOMEM, "out of memory") : cn_strv_push_owned(out, cn_buf_steal(&b))) < 0)
        return rc;
    /* XDG: a relative XDG_CONFIG_HOME is invalid and ignored */
    if (xdg != NULL && xdg[0] == '/') cn_buf_printf(&b, "%s/codenib/config.yaml", xdg);
    else if (home != NULL) cn_buf_printf(&b, "%s/.config/codenib/config.yaml", home);
    else return 0;
    return b.oom ? cn_error_set(CN_ENOMEM, "out of memory") : cn_strv_push_owned(out, cn_buf_steal(&b));
}

static int add_defaults(cn_config *c)
{
    int rc = set_value(c->values, "base_url", json_object_new_string(DEFAULT_BASE_URL), "default");
    if (rc == 0) rc = set_value(c->values, "embedder", json_object_new_string(CN_VECTORS_DEFAULT_EMBEDDER), "default");
    if (rc == 0)
        rc = set_value(c->values, "vector_store", json_object_new_string(CN_VECTORS_DEFAULT_STORE), "default");
    return rc;
}

int cn_config_load(cn_config **out)
{
    cn_config *c = calloc(1, sizeof *c);
    cn_strv paths = CN_STRV_INIT;
    int rc;

    *out = NULL;
    if (c == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    c->values = json_object_new_object();
    c->skills = json_object_new_object();
    rc = c->values && c->skills ? add_defaults(c) : cn_error_set(CN_ENOMEM, "out of memory");
    if (rc == 0) rc = config_paths(&paths);
    for (size_t i = 0; rc == 0 && i < paths.len; i++) rc = merge_file(c, paths.items[i]);
    cn_strv_free(&paths);
    if (rc == 0) rc = merge_env(c, "model", "CODENIB_MODEL");
    if (rc == 0 && env_value("CODENIB_BASE_URL") == NULL) rc = merge_env(c, "base_url", "OPENAI_BASE_URL");
    if (rc == 0) rc = merge_env(c, "base_url", "CODENIB_BASE_URL");
    if (rc < 0) {
        cn_config_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void cn_config_free(cn_config *c)
{
    if (c == NULL) return;
    json_object_put(c->values);
    json_object_put(c->skills);
    cn_strv_free(&c->files);
    cn_strv_free(&c->warnings);
    free(c);
}

const char *cn_config_string(const cn_config *c, const char *key, const char **source)
{
    json_object *e, *v, *s;
    if (source) *source = NULL;
    if (c == NULL || !json_object_object_get_ex(c->values, key, &e)) return NULL;
    json_object_object_get_ex(e, "value", &v);
    json_object_object_get_ex(e, "source", &s);
    if (source) *source = json_object_get_string(s);
    return json_object_get_string(v);
}

json_object *cn_config_skill_defaults(const cn_config *c, const char *skill_id)
{
    json_object *out = json_object_new_object(), *params;
    if (out == NULL || c == NULL || !json_object_object_get_ex(c->skills, skill_id, &params)) return out;
    json_object_object_foreach(params, k, e) {
        json_object *v = NULL;
        json_object_object_get_ex(e, "value", &v);
        json_object_object_add(out, k, json_object_get(v));
    }
    return out;
}

const cn_strv *cn_config_warnings(const cn_config *c)
{
    return c ? &c->warnings : NULL;
}

json_object *cn_config_to_json(const cn_config *c)
{
    json_object *o = json_object_new_object(), *files = json_object_new_array();
    const char *src = NULL;
    char *home = NULL;

    if (o == NULL || files == NULL) {
        json_object_put(o);
        json_object_put(files);
        return NULL;
    }
    for (size_t i = 0; i < sizeof string_keys / sizeof string_keys[0]; i++) {
        json_object *e;
        if (c != NULL && json_object_object_get_ex(c->values, string_keys[i], &e))
            json_object_object_add(o, string_keys[i], json_object_get(e));
        else
            json_object_object_add(o, string_keys[i], sourced(NULL, "not set"));
    }
    json_object_object_add(o, "skills", c ? json_object_get(c->skills) : json_object_new_object());
    if (cn_config_index_home(&home, &src) == 0) json_object_object_add(o, "index_home", sourced(json_object_new_string(home), src));
    else cn_error_clear();
    free(home);
    for (size_t i = 0; c != NULL && i < c->files.len; i++)
        json_object_array_add(files, json_object_new_string(c->files.items[i]));
    json_object_object_add(o, "files", files);
    return o;
}

int cn_config_export_env(const cn_config *c)
{
    const char *v, *var;
    if (c == NULL) return 0;
    if (env_value("CODENIB_MODEL") == NULL && (v = cn_config_string(c, "model", NULL)) != NULL &&
        setenv("CODENIB_MODEL", v, 1) != 0)
        return cn_error_set(CN_ENOMEM, "cannot set CODENIB_MODEL: %s", strerror(errno));
    if (env_value("CODENIB_BASE_URL") == NULL && env_value("OPENAI_BASE_URL") == NULL &&
        (v = cn_config_string(c, "base_url", &var)) != NULL && strcmp(var, "default") != 0 &&
        setenv("CODENIB_BASE_URL", v, 1) != 0)
        return cn_error_set(CN_ENOMEM, "cannot set CODENIB_BASE_URL: %s", strerror(errno));
    if ((var = cn_config_string(c, "api_key_env", NULL)) != NULL && env_value("CODENIB_API_KEY") == NULL &&
        env_value("OPENAI_API_KEY") == NULL && (v = env_value(var)) != NULL && setenv("CODENIB_API_KEY", v, 1) != 0)
        return cn_error_set(CN_ENOMEM, "cannot set CODENIB_API_KEY: %s", strerror(errno));
    return 0;
}

const cn_config *cn_config_current(void)
{
    return current;
}

void cn_config_set_current(cn_config *c)
{
    if (current != c) cn_config_free(current);
    current = c;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int cn_config_index_home(char **out, const char **source)
{
    const char *home = env_value("CODENIB_HOME"), *h = env_value("HOME"), *xdg = env_value("XDG_CACHE_HOME");
    cn_buf b = CN_BUF_INIT;
    const char *src;

    *out = NULL;
    if (home != NULL) {
        cn_buf_puts(&b, home);
        src = "environment CODENIB_HOME";
    } else {
        if (h != NULL) {
            cn_buf_printf(&b, "%s/.codenib/repositories", h);
            if (!b.oom && is_dir(b.data)) {
                b.len -= strlen("/repositories");
                b.data[b.len] = '\0';
                src = "~/.codenib (holds indexes of an older codenib)";
                goto done;
            }
            cn_buf_reset(&b);
        }
        if (xdg != NULL && xdg[0] == '/') {
            cn_buf_printf(&b, "%s/codenib", xdg);
            src = "environment XDG_CACHE_HOME";
        } else if (h != NULL) {
            cn_buf_printf(&b, "%s/.cache/codenib", h);
            src = "default (~/.cache/codenib)";
        } else {
            return cn_error_set(CN_EINVAL, "neither CODENIB_HOME nor HOME is set: pass --cache-dir");
        }
    }
done:
    if (b.oom) {
        cn_buf_free(&b);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    if (source) *source = src;
    *out = cn_buf_steal(&b);
    return 0;
}

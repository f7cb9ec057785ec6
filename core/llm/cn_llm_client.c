/* SPDX-License-Identifier: Apache-2.0 */
/* Model handles: configuration from options and the environment, and the
 * per-handle usage log. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../plugin/cn_host.h"
#include "cn_llm.h"

#define DEFAULT_BASE_URL "https://api.openai.com/v1"
#define DEFAULT_TIMEOUT_MS 120000L
#define DEFAULT_CONNECT_TIMEOUT_MS 10000L
#define DEFAULT_MAX_RETRIES 2
#define DEFAULT_BACKOFF_MS 500L
#define MAX_RETRIES_LIMIT 10
#define MAX_RESPONSE_MB_LIMIT 4096

static const char *role_name(cn_llm_role role)
{
    switch (role) {
    case CN_LLM_EMBED: return "embed";
    case CN_LLM_RERANK: return "rerank";
    case CN_LLM_CHAT: break;
    }
    return "chat";
}

/* A variable's value, or NULL when unset or empty: an empty export is a
 * common way to "unset" a variable in a shell profile. */
static const char *env_value(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0' ? v : NULL;
}

static int opt_string(json_object *cfg, const char *key, const char **out)
{
    json_object *v;

    *out = NULL;
    if (!json_object_object_get_ex(cfg, key, &v) || v == NULL) return 0;
    if (!json_object_is_type(v, json_type_string))
        return cn_error_set(CN_ETYPE, "model configuration: \"%s\" must be a string, not %s", key,
                            json_type_to_name(json_object_get_type(v)));
    *out = json_object_get_string(v);
    return 0;
}

static int opt_long(json_object *cfg, const char *key, long lo, long hi, long *out)
{
    json_object *v;
    int64_t x;

    if (!json_object_object_get_ex(cfg, key, &v) || v == NULL) return 0;
    if (!json_object_is_type(v, json_type_int))
        return cn_error_set(CN_ETYPE, "model configuration: \"%s\" must be an integer, not %s", key,
                            json_type_to_name(json_object_get_type(v)));
    x = json_object_get_int64(v);
    if (x < lo || x > hi)
        return cn_error_set(CN_EINVAL, "model configuration: \"%s\" is %lld; give a value from "
                                       "%ld to %ld", key, (long long)x, lo, hi);
    *out = (long)x;
    return 0;
}

static int parse_role(json_object *cfg, cn_llm_role *role)
{
    const char *s;
    int rc = opt_string(cfg, "role", &s);

    if (rc < 0 || s == NULL) return rc;
    if (strcmp(s, "chat") == 0) *role = CN_LLM_CHAT;
    else if (strcmp(s, "embed") == 0) *role = CN_LLM_EMBED;
    else if (strcmp(s, "rerank") == 0) *role = CN_LLM_RERANK;
    else
        return cn_error_set(CN_EINVAL, "model configuration: \"role\" is \"%s\"; use \"chat\", "
                                       "\"embed\" or \"rerank\"", s);
    return 0;
}

/* Base URL: option, then the role's own variable, then the shared ones.
 * *own tells whether it came from the rerank-only variable. */
static int pick_base_url(json_object *cfg, cn_llm_role role, cn_model *m, int *own)
{
    const char *s;
    size_t len;
    int rc = opt_string(cfg, "base_url", &s);

    *own = 0;
    if (rc < 0) return rc;
    if (s == NULL && role == CN_LLM_RERANK && (s = env_value("CODENIB_RERANK_BASE_URL")) != NULL)
        *own = 1;
    if (s == NULL) s = env_value("CODENIB_BASE_URL");
    if (s == NULL) s = env_value("OPENAI_BASE_URL");
    if (s == NULL) s = DEFAULT_BASE_URL;
    if (strncasecmp(s, "http://", 7) != 0 && strncasecmp(s, "https://", 8) != 0)
        return cn_error_set(CN_EINVAL, "model configuration: base URL '%s' must start with "
                                       "http:// or https:// (e.g. https://api.openai.com/v1)", s);
    len = strlen(s);
    while (len > 0 && s[len - 1] == '/') len--;
    m->base_url = cn_strndup(s, len);
    return m->base_url ? 0 : cn_error_set(CN_ENOMEM, "out of memory");
}

static int pick_api_key(json_object *cfg, cn_llm_role role, int own_base, cn_model *m)
{
    const char *s, *var;
    size_t len;
    int rc;

    if ((rc = opt_string(cfg, "api_key", &s)) < 0) return rc;
    if (s == NULL) {
        if ((rc = opt_string(cfg, "api_key_env", &var)) < 0) return rc;
        if (var != NULL && (s = env_value(var)) == NULL)
            return cn_error_set(CN_EINVAL, "model configuration: \"api_key_env\" names %s, which "
                                           "is not set; export it or give \"api_key\"", var);
    }
    if (s == NULL && role == CN_LLM_RERANK && own_base) {
        s = env_value("CODENIB_RERANK_API_KEY");
    } else if (s == NULL) {
        s = env_value("CODENIB_API_KEY");
        if (s == NULL) s = env_value("OPENAI_API_KEY");
    }
    if (s == NULL) return 0;
    /* Keys read from files often carry a trailing newline; a control
     * character inside would corrupt the request headers. */
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    len = strlen(s);
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n' ||
                       s[len - 1] == '\r'))
        len--;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return cn_error_set(CN_EINVAL, "model configuration: the API key contains a control "
                                           "character at position %zu; check where it comes "
                                           "from", i);
    if (len == 0) return 0;
    m->api_key = cn_strndup(s, len);
    return m->api_key ? 0 : cn_error_set(CN_ENOMEM, "out of memory");
}

static int pick_model(json_object *cfg, cn_llm_role role, cn_model *m)
{
    static const char *const vars[] = {"CODENIB_MODEL", "CODENIB_EMBED_MODEL",
                                       "CODENIB_RERANK_MODEL"};
    static const char *const defaults[] = {"gpt-4o-mini", "text-embedding-3-small", NULL};
    const char *s;
    int rc = opt_string(cfg, "model", &s);

    if (rc < 0) return rc;
    if (s != NULL && *s == '\0')
        return cn_error_set(CN_EINVAL, "model configuration: \"model\" is empty; name a model "
                                       "or leave the field out");
    if (s == NULL) s = env_value(vars[role]);
    if (s == NULL) s = defaults[role];
    if (s == NULL) return 0;
    m->model = cn_strdup(s);
    return m->model ? 0 : cn_error_set(CN_ENOMEM, "out of memory");
}

/* Replies of a chat or a rerank are small; a batch of embeddings (64 texts
 * of 3072 floats is some 4 MiB of JSON) is not. */
static long default_response_mb(cn_llm_role role)
{
    const char *env = env_value("CODENIB_MAX_RESPONSE_MB");
    char *end;
    long v;

    if (env == NULL) return role == CN_LLM_EMBED ? 128 : 16;
    v = strtol(env, &end, 10);
    if (*end != '\0' || v < 1 || v > MAX_RESPONSE_MB_LIMIT)
        return cn_error_set(CN_EINVAL, "CODENIB_MAX_RESPONSE_MB is '%s'; give a number of MiB from 1 to %d",
                            env, MAX_RESPONSE_MB_LIMIT);
    return v;
}

static int pick_numbers(json_object *cfg, cn_llm_role role, cn_model *m)
{
    long retries = DEFAULT_MAX_RETRIES, mb = default_response_mb(role);
    int rc;

    if (mb < 0) return (int)mb;
    m->timeout_ms = DEFAULT_TIMEOUT_MS;
    m->connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS;
    m->backoff_ms = DEFAULT_BACKOFF_MS;
    if ((rc = opt_long(cfg, "timeout_ms", 1, 24L * 3600 * 1000, &m->timeout_ms)) < 0 ||
        (rc = opt_long(cfg, "connect_timeout_ms", 1, 3600L * 1000, &m->connect_timeout_ms)) < 0 ||
        (rc = opt_long(cfg, "max_retries", 0, MAX_RETRIES_LIMIT, &retries)) < 0 ||
        (rc = opt_long(cfg, "backoff_ms", 0, CN_LLM_BACKOFF_MAX_MS, &m->backoff_ms)) < 0 ||
        (rc = opt_long(cfg, "max_response_mb", 1, MAX_RESPONSE_MB_LIMIT, &mb)) < 0)
        return rc;
    m->max_retries = (int)retries;
    m->max_response_bytes = (size_t)mb << 20;
    return 0;
}

static int configure(cn_model *m, json_object *cfg, cn_llm_role role)
{
    int own_base = 0, rc;

    if ((rc = parse_role(cfg, &role)) < 0) return rc;
    m->role = role;
    if ((rc = pick_base_url(cfg, role, m, &own_base)) < 0 ||
        (rc = pick_api_key(cfg, role, own_base, m)) < 0 || (rc = pick_model(cfg, role, m)) < 0 ||
        (rc = pick_numbers(cfg, role, m)) < 0)
        return rc;
    return 0;
}

int cn_llm_open(const char *config_json, cn_llm_role role, cn_model **out)
{
    json_object *cfg = NULL;
    cn_model *m;
    int rc;

    *out = NULL;
    if (role != CN_LLM_CHAT && role != CN_LLM_EMBED && role != CN_LLM_RERANK)
        return cn_error_set(CN_EINVAL, "model role %d is not chat, embed or rerank", (int)role);
    if (config_json != NULL &&
        (rc = cn_json_parse(config_json, "the model configuration", &cfg)) < 0)
        return rc;
    if (cfg != NULL && !json_object_is_type(cfg, json_type_object)) {
        json_object_put(cfg);
        return cn_error_set(CN_EINVAL, "the model configuration must be a JSON object");
    }
    m = calloc(1, sizeof *m);
    if (m == NULL) {
        json_object_put(cfg);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&m->lock, NULL);
    rc = configure(m, cfg, role);
    json_object_put(cfg);
    if (rc < 0) {
        cn_llm_close(m);
        return rc;
    }
    cn_log(CN_LOG_DEBUG, "llm", "%s model %s at %s (%s key)", role_name(m->role),
           m->model ? m->model : "(unnamed)", m->base_url, m->api_key ? "with" : "no");
    *out = m;
    return 0;
}

void cn_llm_close(cn_model *m)
{
    int shared;

    if (m == NULL) return;
    pthread_mutex_lock(&m->lock);
    shared = m->refs > 0;
    if (shared) m->refs--;
    pthread_mutex_unlock(&m->lock);
    if (shared) return;
    pthread_mutex_destroy(&m->lock);
    free(m->base_url);
    if (m->api_key != NULL) {
        /* Do not leave the key lying in freed memory. */
        volatile char *p = m->api_key;
        while (*p) *p++ = '\0';
        free(m->api_key);
    }
    free(m->model);
    free(m->calls);
    free(m);
}

const char *cn_llm_model_name(const cn_model *m)
{
    return m != NULL && m->model != NULL ? m->model : "";
}

const char *cn_llm_base_url(const cn_model *m)
{
    return m != NULL ? m->base_url : NULL;
}

void cn_llm__record(cn_model *m, const cn_llm_call *call)
{
    pthread_mutex_lock(&m->lock);
    if (m->ncalls == m->capcalls) {
        size_t cap = m->capcalls ? m->capcalls * 2 : 16;
        cn_llm_call *grown = realloc(m->calls, cap * sizeof *grown);
        if (grown == NULL) {
            /* Accounting is best effort: a lost record must not fail the
             * call that already succeeded. */
            pthread_mutex_unlock(&m->lock);
            cn_log(CN_LOG_WARNING, "llm", "out of memory: a call was left out of the usage log");
            return;
        }
        m->calls = grown;
        m->capcalls = cap;
    }
    m->calls[m->ncalls++] = *call;
    pthread_mutex_unlock(&m->lock);
}

int cn_llm_calls(const cn_model *m, cn_llm_call **calls, size_t *n)
{
    cn_model *mm = (cn_model *)m; /* the lock is internal state */
    int rc = 0;

    *calls = NULL;
    *n = 0;
    if (m == NULL) return cn_error_set(CN_EINVAL, "cn_llm_calls: no model handle");
    pthread_mutex_lock(&mm->lock);
    if (mm->ncalls > 0) {
        *calls = malloc(mm->ncalls * sizeof **calls);
        if (*calls == NULL) {
            rc = cn_error_set(CN_ENOMEM, "out of memory");
        } else {
            memcpy(*calls, mm->calls, mm->ncalls * sizeof **calls);
            *n = mm->ncalls;
        }
    }
    pthread_mutex_unlock(&mm->lock);
    return rc;
}

char *cn_llm__url(const char *base, const char *endpoint)
{
    cn_buf b = CN_BUF_INIT;
    size_t len = strlen(base);

    while (len > 0 && base[len - 1] == '/') len--;
    while (*endpoint == '/') endpoint++;
    cn_buf_append(&b, base, len);
    cn_buf_putc(&b, '/');
    cn_buf_puts(&b, endpoint);
    if (b.oom) {
        cn_buf_free(&b);
        return NULL;
    }
    return cn_buf_steal(&b);
}

int64_t cn_llm__usage_int(json_object *o, const char *key)
{
    json_object *v;

    if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
        return -1;
    if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
        return -1;
    return json_object_get_int64(v);
}

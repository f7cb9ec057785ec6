/* SPDX-License-Identifier: Apache-2.0 */
/* Agent options and harness spec files.  One table describes every option
 * (its key, kind and place in cn_agent_options) so that loading, checking
 * types and writing back out cannot drift apart. */
#include <ctype.h>
#include <stdlib.h>

#include "cn_agent_support.h"
#include "../plugin/cn_host.h"
#include "../plugin/cn_registry.h"
#include "../plugin/cn_yaml.h"

typedef enum opt_kind { K_STR, K_BOOL, K_INT, K_LONG, K_DOUBLE, K_STRV, K_MESSAGES, K_TABLE } opt_kind;

typedef struct opt_desc {
    const char *key;
    opt_kind kind;
    size_t off;
} opt_desc;

#define O(key, kind) {#key, kind, offsetof(cn_agent_options, key)}
static const opt_desc opts[] = {
    O(model, K_STR),
    O(temperature, K_DOUBLE),
    O(max_tokens, K_INT),
    O(system_prompt, K_STR),
    O(max_turns, K_INT),
    O(max_context_tokens, K_LONG),
    O(keep_last, K_INT),
    O(allow_skills, K_STRV),
    O(exclude_skills, K_STRV),
    O(include_default_tools, K_BOOL),
    O(default_tool_ids, K_STRV),
    O(enable_bash, K_BOOL),
    O(max_tool_output, K_LONG),
    O(first_turn_tool_choice, K_STR),
    O(force_first_turn_only, K_BOOL),
    O(force_localization_contract, K_BOOL),
    O(force_final_answer, K_BOOL),
    O(review_final_answer, K_BOOL),
    O(compact_after_read, K_BOOL),
    O(compact_keep_reads, K_INT),
    O(enable_lsp_route_context, K_BOOL),
    O(lsp_route_seed_limit, K_INT),
    O(lsp_route_seed_policy, K_STR),
    O(lsp_route_query_fallback, K_BOOL),
    O(lsp_route_top_k, K_INT),
    O(lsp_route_include_neighbors, K_BOOL),
    O(trace_path, K_STR),
    O(chat_history, K_MESSAGES),
    {"compile_table", K_TABLE, 0},
};
#undef O
#define N_OPTS (sizeof opts / sizeof opts[0])

void cn_agent_options_init(cn_agent_options *o)
{
    memset(o, 0, sizeof *o);
    o->temperature = 0.0;
    o->max_tokens = 4096;
    o->max_turns = 10;
    o->keep_last = 2;
    o->include_default_tools = true;
    o->max_tool_output = CN_RESULT_CAP_DEFAULT;
    o->lsp_route_seed_limit = 8;
    o->lsp_route_seed_policy = cn_strdup("all");
    o->lsp_route_top_k = 12;
    o->lsp_route_include_neighbors = true;
}

void cn_agent_options_free(cn_agent_options *o)
{
    free(o->model);
    free(o->system_prompt);
    free(o->first_turn_tool_choice);
    free(o->lsp_route_seed_policy);
    free(o->trace_path);
    free(o->compile_table_path);
    cn_strv_free(&o->allow_skills);
    cn_strv_free(&o->exclude_skills);
    cn_strv_free(&o->default_tool_ids);
    json_object_put(o->chat_history);
    json_object_put(o->compile_table);
    memset(o, 0, sizeof *o);
}

static bool valid_tool_name(const char *s)
{
    if (*s == '\0') return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-') return false;
    return true;
}

int cn_agent_options_validate(const cn_agent_options *o, const char *where)
{
    const char *w = where ? where : "options";
    if (o->max_turns < 1)
        return cn_error_set(CN_EINVAL, "%s: max_turns must be at least 1 (got %d)", w, o->max_turns);
    if (o->max_tokens < 1)
        return cn_error_set(CN_EINVAL, "%s: max_tokens must be at least 1 (got %d)", w, o->max_tokens);
    if (o->max_tool_output < 1)
        return cn_error_set(CN_EINVAL, "%s: max_tool_output must be at least 1 byte (got %ld)", w, o->max_tool_output);
    if (o->max_context_tokens < 0)
        return cn_error_set(CN_EINVAL, "%s: max_context_tokens must be 0 (unlimited) or positive (got %ld)", w,
                            o->max_context_tokens);
    if (o->keep_last < 0 || o->compact_keep_reads < 0)
        return cn_error_set(CN_EINVAL, "%s: keep_last and compact_keep_reads must not be negative", w);
    if (!(o->temperature >= 0.0 && o->temperature <= 2.0))
        return cn_error_set(CN_EINVAL, "%s: temperature must be between 0 and 2 (got %g)", w, o->temperature);
    if (o->lsp_route_seed_limit < 1)
        return cn_error_set(CN_EINVAL, "%s: lsp_route_seed_limit must be at least 1 (got %d)", w,
                            o->lsp_route_seed_limit);
    if (o->lsp_route_top_k < 1)
        return cn_error_set(CN_EINVAL, "%s: lsp_route_top_k must be at least 1 (got %d)", w, o->lsp_route_top_k);
    if (o->lsp_route_seed_policy && strcmp(o->lsp_route_seed_policy, "all") != 0 &&
        strcmp(o->lsp_route_seed_policy, "specific") != 0)
        return cn_error_set(CN_EINVAL, "%s: lsp_route_seed_policy must be \"all\" or \"specific\" (got \"%s\")", w,
                            o->lsp_route_seed_policy);
    if (o->first_turn_tool_choice && !valid_tool_name(o->first_turn_tool_choice))
        return cn_error_set(CN_EINVAL,
                            "%s: first_turn_tool_choice must be auto, required, none or a tool name (got \"%s\")", w,
                            o->first_turn_tool_choice);
    if (o->chat_history && !json_object_is_type(o->chat_history, json_type_array))
        return cn_error_set(CN_EINVAL, "%s: chat_history must be an array of messages", w);
    return 0;
}

int cn_agent_options_tool_ids(const cn_agent_options *o, cn_strv *out)
{
    static const char *const base[] = {"read", "grep", "glob"};
    if (!o->include_default_tools) return 0;
    if (o->default_tool_ids.len > 0) {
        for (size_t i = 0; i < o->default_tool_ids.len; i++)
            if (cn_strv_push(out, o->default_tool_ids.items[i]) < 0) return CN_ENOMEM;
        return 0;
    }
    for (size_t i = 0; i < 3; i++)
        if (cn_strv_push(out, base[i]) < 0) return CN_ENOMEM;
    if (o->enable_bash && cn_strv_push(out, "bash") < 0) return CN_ENOMEM;
    return 0;
}

/* ---- applying a spec ----------------------------------------------------- */

static int bad(const char *where, json_object *v, const char *key, const char *fmt, ...) CN_PRINTF(4, 5);
static int bad(const char *where, json_object *v, const char *key, const char *fmt, ...)
{
    char msg[512];
    int line = 0, col = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (v && cn_yaml_mark(v, &line, &col) == 0)
        return cn_error_set(CN_EINVAL, "%s:%d:%d: %s: %s", where, line, col, key, msg);
    return cn_error_set(CN_EINVAL, "%s: %s: %s", where, key, msg);
}

static int set_strv(cn_strv *dst, json_object *v, const char *where, const char *key)
{
    cn_strv tmp = CN_STRV_INIT;
    if (!json_object_is_type(v, json_type_array)) return bad(where, v, key, "expected a list of strings");
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        json_object *s = json_object_array_get_idx(v, i);
        if (!json_object_is_type(s, json_type_string)) {
            cn_strv_free(&tmp);
            return bad(where, s ? s : v, key, "item %zu is not a string", i + 1);
        }
        if (cn_strv_push(&tmp, json_object_get_string(s)) < 0) {
            cn_strv_free(&tmp);
            return cn_error_set(CN_ENOMEM, "out of memory");
        }
    }
    cn_strv_free(dst);
    *dst = tmp;
    return 0;
}

static int set_int(const opt_desc *d, cn_agent_options *o, json_object *v, const char *where)
{
    int64_t n;
    if (!json_object_is_type(v, json_type_int)) return bad(where, v, d->key, "expected an integer");
    n = json_object_get_int64(v);
    if (d->kind == K_INT) {
        if (n < -1000000000LL || n > 1000000000LL) return bad(where, v, d->key, "out of range");
        *(int *)((char *)o + d->off) = (int)n;
    } else {
        *(long *)((char *)o + d->off) = (long)n;
    }
    return 0;
}

static int set_table(cn_agent_options *o, json_object *v, const char *where)
{
    if (json_object_is_type(v, json_type_string)) {
        free(o->compile_table_path);
        o->compile_table_path = cn_strdup(json_object_get_string(v));
        json_object_put(o->compile_table);
        o->compile_table = NULL;
    } else if (json_object_is_type(v, json_type_object)) {
        json_object_put(o->compile_table);
        o->compile_table = json_object_get(v);
        free(o->compile_table_path);
        o->compile_table_path = NULL;
    } else {
        return bad(where, v, "compile_table", "expected a file path or a mapping");
    }
    return 0;
}

static int apply_one(const opt_desc *d, cn_agent_options *o, json_object *v, const char *where)
{
    char *base = (char *)o + d->off;
    switch (d->kind) {
    case K_STR:
        if (v != NULL && !json_object_is_type(v, json_type_string))
            return bad(where, v, d->key, "expected a string or null");
        free(*(char **)base);
        *(char **)base = v ? cn_strdup(json_object_get_string(v)) : NULL;
        if (d->off == offsetof(cn_agent_options, lsp_route_seed_policy) && v == NULL)
            *(char **)base = cn_strdup("all");
        return 0;
    case K_BOOL:
        if (!json_object_is_type(v, json_type_boolean)) return bad(where, v, d->key, "expected true or false");
        *(bool *)base = json_object_get_boolean(v);
        return 0;
    case K_INT:
    case K_LONG:
        return set_int(d, o, v, where);
    case K_DOUBLE:
        if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
            return bad(where, v, d->key, "expected a number");
        *(double *)base = json_object_get_double(v);
        return 0;
    case K_STRV:
        if (v == NULL) {
            cn_strv_free((cn_strv *)base);
            if (d->off == offsetof(cn_agent_options, allow_skills)) o->has_allow_skills = false;
            return 0;
        }
        if (set_strv((cn_strv *)base, v, where, d->key) < 0) return CN_EINVAL;
        if (d->off == offsetof(cn_agent_options, allow_skills)) o->has_allow_skills = true;
        return 0;
    case K_MESSAGES:
        if (v != NULL && !json_object_is_type(v, json_type_array))
            return bad(where, v, d->key, "expected a list of messages");
        for (size_t i = 0; v && i < json_object_array_length(v); i++)
            if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_object))
                return bad(where, v, d->key, "message %zu is not a mapping", i + 1);
        json_object_put(o->chat_history);
        o->chat_history = json_object_get(v);
        return 0;
    case K_TABLE:
        if (v == NULL) {
            json_object_put(o->compile_table);
            o->compile_table = NULL;
            free(o->compile_table_path);
            o->compile_table_path = NULL;
            return 0;
        }
        return set_table(o, v, where);
    }
    return 0;
}

static const opt_desc *find_opt(const char *key)
{
    for (size_t i = 0; i < N_OPTS; i++)
        if (strcmp(opts[i].key, key) == 0) return &opts[i];
    return NULL;
}

/* As the reference reads them: 0 for the route's seed limit or top_k means
 * its default, and the seed policy is read without case or surrounding
 * blanks ("Specific " is "specific").  Negative numbers stay errors. */
static void normalize(cn_agent_options *o)
{
    if (o->lsp_route_seed_limit == 0) o->lsp_route_seed_limit = 8;
    if (o->lsp_route_top_k == 0) o->lsp_route_top_k = 12;
    if (o->lsp_route_seed_policy != NULL) {
        char *p = o->lsp_route_seed_policy, *d = p;
        size_t n;
        while (isspace((unsigned char)*p)) p++;
        for (; *p; p++) *d++ = (char)tolower((unsigned char)*p);
        *d = '\0';
        n = strlen(o->lsp_route_seed_policy);
        while (n > 0 && isspace((unsigned char)o->lsp_route_seed_policy[n - 1])) o->lsp_route_seed_policy[--n] = '\0';
        if (n == 0) { /* an empty policy is the default, as None is there */
            free(o->lsp_route_seed_policy);
            o->lsp_route_seed_policy = cn_strdup("all");
        }
    }
}

int cn_harness_apply_json(json_object *spec, const char *where, cn_agent_options *o)
{
    const char *w = where ? where : "harness spec";
    if (!json_object_is_type(spec, json_type_object))
        return cn_error_set(CN_EINVAL, "%s: a harness spec must be a mapping of option names to values", w);
    json_object_object_foreach(spec, key, val) {
        const opt_desc *d = find_opt(key);
        int rc;
        if (d == NULL) {
            int line = 0, col = 0;
            /* the key itself carries no mark; its value does */
            if (val && cn_yaml_mark(val, &line, &col) == 0)
                return cn_error_set(CN_EINVAL, "%s:%d: unknown option \"%s\"; see `cn_agent_options` for the names",
                                    w, line, key);
            return cn_error_set(CN_EINVAL, "%s: unknown option \"%s\"; see `cn_agent_options` for the names", w, key);
        }
        if ((rc = apply_one(d, o, val, w)) < 0) return rc;
    }
    normalize(o);
    return cn_agent_options_validate(o, w);
}

int cn_harness_load_file(const char *path, cn_agent_options *o)
{
    char *text = NULL;
    size_t len = 0, i = 0;
    json_object *spec = NULL;
    int rc;

    if ((rc = cn_file_read(path, 4u << 20, &text, &len)) < 0) return rc;
    while (i < len && isspace((unsigned char)text[i])) i++;
    rc = cn_yaml_load_string(text, len, path, &spec);
    if (rc < 0 && i < len && text[i] == '{') {
        /* JSON that YAML cannot read (tabs, for one): JSON's own parser,
         * whose values carry no line numbers */
        cn_error_clear();
        rc = cn_json_parse(text, path, &spec);
    }
    free(text);
    if (rc < 0) return rc;
    rc = cn_harness_apply_json(spec, path, o);
    json_object_put(spec);
    return rc;
}

json_object *cn_harness_to_json(const cn_agent_options *o)
{
    json_object *j = json_object_new_object();
    for (size_t i = 0; i < N_OPTS; i++) {
        const opt_desc *d = &opts[i];
        const char *base = (const char *)o + d->off;
        json_object *v = NULL;
        switch (d->kind) {
        case K_STR: v = *(char *const *)base ? json_object_new_string(*(char *const *)base) : NULL; break;
        case K_BOOL: v = json_object_new_boolean(*(const bool *)base); break;
        case K_INT: v = json_object_new_int(*(const int *)base); break;
        case K_LONG: v = json_object_new_int64(*(const long *)base); break;
        case K_DOUBLE: v = json_object_new_double(*(const double *)base); break;
        case K_STRV:
            if (d->off == offsetof(cn_agent_options, allow_skills) && !o->has_allow_skills) v = NULL;
            else v = cn_json_strv((const cn_strv *)base);
            break;
        case K_MESSAGES: v = json_object_get(o->chat_history); break;
        case K_TABLE:
            v = o->compile_table ? json_object_get(o->compile_table)
                : o->compile_table_path ? json_object_new_string(o->compile_table_path) : NULL;
            break;
        }
        json_object_object_add(j, d->key, v);
    }
    return j;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* Compile tables: classify a query into a scenario and narrow the skills
 * offered for it.  A table can only take skills away from the allow set;
 * a scenario that shares nothing with it would leave the agent without
 * skills, so that case keeps the allow set and says why. */
#include <ctype.h>
#include <stdlib.h>
#include <strings.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "cn_agent_support.h"
#include "../plugin/cn_host.h"
#include "../plugin/cn_yaml.h"

typedef struct scenario {
    char *name;
    cn_strv keywords;   /* lower case */
    pcre2_code **patterns;
    size_t n_patterns;
    cn_strv skills;
} scenario;

struct cn_compile_table {
    scenario *items;
    size_t len;
    char *default_name;
};

static void scenario_free(scenario *s)
{
    free(s->name);
    cn_strv_free(&s->keywords);
    cn_strv_free(&s->skills);
    for (size_t i = 0; i < s->n_patterns; i++) pcre2_code_free(s->patterns[i]);
    free(s->patterns);
}

void cn_compile_table_free(cn_compile_table *t)
{
    if (t == NULL) return;
    for (size_t i = 0; i < t->len; i++) scenario_free(&t->items[i]);
    free(t->items);
    free(t->default_name);
    free(t);
}

static char *lower_dup(const char *s)
{
    char *d = cn_strdup(s);
    for (char *p = d; p && *p; p++) *p = (char)tolower((unsigned char)*p);
    return d;
}

static int where_err(const char *where, json_object *v, const char *fmt, const char *a, const char *b)
{
    int line = 0, col = 0;
    char msg[512];
    snprintf(msg, sizeof msg, fmt, a ? a : "", b ? b : "");
    if (v && cn_yaml_mark(v, &line, &col) == 0)
        return cn_error_set(CN_EINVAL, "%s:%d:%d: compile table: %s", where, line, col, msg);
    return cn_error_set(CN_EINVAL, "%s: compile table: %s", where, msg);
}

static int string_list(json_object *v, const char *where, const char *name, const char *field, cn_strv *out,
                       bool lower)
{
    if (v == NULL) return 0;
    if (!json_object_is_type(v, json_type_array))
        return where_err(where, v, "scenario \"%s\": %s must be a list of strings", name, field);
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        json_object *s = json_object_array_get_idx(v, i);
        if (!json_object_is_type(s, json_type_string))
            return where_err(where, s ? s : v, "scenario \"%s\": every item of %s must be a string", name, field);
        if (cn_strv_push_owned(out, lower ? lower_dup(json_object_get_string(s))
                                          : cn_strdup(json_object_get_string(s))) < 0)
            return cn_error_set(CN_ENOMEM, "out of memory");
    }
    return 0;
}

static int add_pattern(scenario *s, json_object *p, const char *where)
{
    int err = 0;
    PCRE2_SIZE off = 0;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)json_object_get_string(p), PCRE2_ZERO_TERMINATED,
                                   PCRE2_CASELESS | PCRE2_UTF, &err, &off, NULL);
    pcre2_code **n;
    if (re == NULL) {
        PCRE2_UCHAR buf[256];
        pcre2_get_error_message(err, buf, sizeof buf);
        return where_err(where, p, "scenario \"%s\": bad pattern: %s", s->name, (const char *)buf);
    }
    n = realloc(s->patterns, (s->n_patterns + 1) * sizeof *n);
    if (n == NULL) {
        pcre2_code_free(re);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    s->patterns = n;
    s->patterns[s->n_patterns++] = re;
    return 0;
}

static int load_scenario(scenario *s, json_object *v, const char *where)
{
    json_object *x = NULL, *pats = NULL;
    int rc;
    if (!json_object_is_type(v, json_type_object)) return where_err(where, v, "every scenario must be a mapping%s%s", NULL, NULL);
    json_object_object_foreach(v, key, val) {
        if (strcmp(key, "name") && strcmp(key, "keywords") && strcmp(key, "patterns") && strcmp(key, "skills"))
            return where_err(where, val, "unknown scenario field \"%s\"%s (expected name, keywords, patterns, skills)",
                             key, NULL);
    }
    if (!json_object_object_get_ex(v, "name", &x) || !json_object_is_type(x, json_type_string))
        return where_err(where, v, "a scenario needs a string \"name\"%s%s", NULL, NULL);
    s->name = cn_strdup(json_object_get_string(x));
    if ((rc = string_list(json_object_object_get_ex(v, "keywords", &x) ? x : NULL, where, s->name, "keywords",
                          &s->keywords, true)) < 0)
        return rc;
    if (!json_object_object_get_ex(v, "skills", &x))
        return where_err(where, v, "scenario \"%s\" lists no skills%s", s->name, NULL);
    if ((rc = string_list(x, where, s->name, "skills", &s->skills, false)) < 0) return rc;
    if (json_object_object_get_ex(v, "patterns", &pats)) {
        if (!json_object_is_type(pats, json_type_array))
            return where_err(where, pats, "scenario \"%s\": patterns must be a list of strings", s->name, NULL);
        for (size_t i = 0; i < json_object_array_length(pats); i++) {
            json_object *p = json_object_array_get_idx(pats, i);
            if (!json_object_is_type(p, json_type_string))
                return where_err(where, p ? p : pats, "scenario \"%s\": every pattern must be a string", s->name, NULL);
            if ((rc = add_pattern(s, p, where)) < 0) return rc;
        }
    }
    return 0;
}

static int load_long(cn_compile_table *t, json_object *table, const char *where)
{
    json_object *list = NULL, *def = NULL;
    int rc;
    json_object_object_foreach(table, key, val) {
        (void)val;
        if (strcmp(key, "scenarios") && strcmp(key, "default"))
            return where_err(where, val, "unknown field \"%s\"%s (expected scenarios, default)", key, NULL);
    }
    json_object_object_get_ex(table, "scenarios", &list);
    if (!json_object_is_type(list, json_type_array))
        return where_err(where, list ? list : table, "\"scenarios\" must be a list%s%s", NULL, NULL);
    t->items = calloc(json_object_array_length(list) + 1, sizeof *t->items);
    if (t->items == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        t->len++;
        if ((rc = load_scenario(&t->items[i], json_object_array_get_idx(list, i), where)) < 0) return rc;
    }
    if (json_object_object_get_ex(table, "default", &def) && def != NULL) {
        if (!json_object_is_type(def, json_type_string))
            return where_err(where, def, "\"default\" must be a scenario name%s%s", NULL, NULL);
        t->default_name = cn_strdup(json_object_get_string(def));
        for (size_t i = 0; i < t->len; i++)
            if (strcmp(t->items[i].name, t->default_name) == 0) return 0;
        return where_err(where, def, "default scenario \"%s\" is not one of the scenarios%s", t->default_name, NULL);
    }
    return 0;
}

/* { scenario: [skills] }: the name is also the keyword. */
static int load_short(cn_compile_table *t, json_object *table, const char *where)
{
    int rc;
    t->items = calloc((size_t)json_object_object_length(table) + 1, sizeof *t->items);
    if (t->items == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    json_object_object_foreach(table, key, val) {
        scenario *s = &t->items[t->len++];
        s->name = cn_strdup(key);
        /* "default" and the session keys ("python:stacktrace") are no keywords */
        if (strcmp(key, "default") == 0) {
            free(t->default_name);
            t->default_name = cn_strdup(key);
        } else if (strchr(key, ':') == NULL && cn_strv_push_owned(&s->keywords, lower_dup(key)) < 0) {
            return cn_error_set(CN_ENOMEM, "out of memory");
        }
        if (!json_object_is_type(val, json_type_array))
            return where_err(where, val ? val : table, "scenario \"%s\" must map to a list of skills%s", key, NULL);
        if ((rc = string_list(val, where, key, "skills", &s->skills, false)) < 0) return rc;
    }
    return 0;
}

int cn_compile_table_load(json_object *table, const char *where, cn_compile_table **out)
{
    const char *w = where ? where : "compile table";
    cn_compile_table *t;
    int rc;

    *out = NULL;
    if (!json_object_is_type(table, json_type_object))
        return cn_error_set(CN_EINVAL, "%s: a compile table must be a mapping", w);
    t = calloc(1, sizeof *t);
    if (t == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    rc = json_object_object_get_ex(table, "scenarios", NULL) ? load_long(t, table, w) : load_short(t, table, w);
    if (rc < 0) {
        cn_compile_table_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int cn_compile_table_load_file(const char *path, cn_compile_table **out)
{
    char *text = NULL;
    size_t len = 0, i = 0;
    json_object *j = NULL;
    int rc;
    *out = NULL;
    if ((rc = cn_file_read(path, 4u << 20, &text, &len)) < 0) return rc;
    while (i < len && isspace((unsigned char)text[i])) i++;
    rc = cn_yaml_load_string(text, len, path, &j);
    if (rc < 0 && i < len && text[i] == '{') {
        cn_error_clear();  /* JSON YAML cannot read (tabs): no line numbers then */
        rc = cn_json_parse(text, path, &j);
    }
    free(text);
    if (rc < 0) return rc;
    rc = cn_compile_table_load(j, path, out);
    json_object_put(j);
    return rc;
}

static bool pattern_hits(pcre2_code *re, const char *q)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    int rc;
    if (md == NULL) return false;
    rc = pcre2_match(re, (PCRE2_SPTR)q, strlen(q), 0, 0, md, NULL);
    pcre2_match_data_free(md);
    return rc >= 0;
}

const char *cn_compile_table_classify(const cn_compile_table *t, const char *query)
{
    char *lq;
    const char *hit = NULL;
    if (t == NULL) return NULL;
    lq = lower_dup(query ? query : "");
    if (lq == NULL) return t->default_name;
    for (size_t i = 0; i < t->len && hit == NULL; i++) {
        const scenario *s = &t->items[i];
        for (size_t k = 0; k < s->keywords.len && hit == NULL; k++)
            if (*s->keywords.items[k] && strstr(lq, s->keywords.items[k])) hit = s->name;
        for (size_t k = 0; k < s->n_patterns && hit == NULL; k++)
            if (pattern_hits(s->patterns[k], query ? query : "")) hit = s->name;
    }
    free(lq);
    return hit ? hit : t->default_name;
}

static const scenario *find_scenario(const cn_compile_table *t, const char *name);

const char *cn_compile_table_select(const cn_compile_table *t, const char *query, const cn_session *s)
{
    const char *kind = cn_has_stacktrace(query) ? "stacktrace" : "no_stacktrace";
    const char *langs[2] = {s && s->language ? s->language : NULL, "any"};
    if (t == NULL) return NULL;
    for (size_t l = 0; l < 2; l++) {
        char key[96];
        if (langs[l] == NULL) continue;
        snprintf(key, sizeof key, "%s:%s", langs[l], kind);
        for (size_t i = 0; i < t->len; i++)
            if (strcasecmp(t->items[i].name, key) == 0) return t->items[i].name;
    }
    return cn_compile_table_classify(t, query);
}

static const scenario *find_scenario(const cn_compile_table *t, const char *name)
{
    for (size_t i = 0; t && name && i < t->len; i++)
        if (strcmp(t->items[i].name, name) == 0) return &t->items[i];
    return NULL;
}

static int copy_strv(const cn_strv *in, cn_strv *out)
{
    for (size_t i = 0; in && i < in->len; i++)
        if (cn_strv_push(out, in->items[i]) < 0) return cn_error_set(CN_ENOMEM, "out of memory");
    return 0;
}

int cn_compile_table_narrow(const cn_compile_table *t, const char *scenario_name, const cn_strv *allow,
                            cn_strv *out, char **warning)
{
    const scenario *s = find_scenario(t, scenario_name);
    size_t before = out->len;
    if (warning) *warning = NULL;
    if (s == NULL) return copy_strv(allow, out);
    if (allow == NULL) return copy_strv(&s->skills, out);
    for (size_t i = 0; i < allow->len; i++)
        if (cn_strv_contains(&s->skills, allow->items[i]) && cn_strv_push(out, allow->items[i]) < 0)
            return cn_error_set(CN_ENOMEM, "out of memory");
    if (out->len > before || allow->len == 0) return 0;
    if (warning) {
        cn_buf b = CN_BUF_INIT;
        cn_buf_printf(&b, "compile table scenario \"%s\" names no allowed skill (", s->name);
        for (size_t i = 0; i < s->skills.len; i++) cn_buf_printf(&b, "%s%s", i ? ", " : "", s->skills.items[i]);
        cn_buf_puts(&b, "); keeping the allowed skills unchanged");
        *warning = cn_buf_steal(&b);
    }
    return copy_strv(allow, out);
}

int cn_compile_table_all_skills(const cn_compile_table *t, cn_strv *out)
{
    for (size_t i = 0; t && i < t->len; i++)
        for (size_t k = 0; k < t->items[i].skills.len; k++)
            if (!cn_strv_contains(out, t->items[i].skills.items[k]) &&
                cn_strv_push(out, t->items[i].skills.items[k]) < 0)
                return cn_error_set(CN_ENOMEM, "out of memory");
    return 0;
}

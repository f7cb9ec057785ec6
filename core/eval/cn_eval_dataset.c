/* SPDX-License-Identifier: Apache-2.0 */
/* Datasets and predictions for `codenib eval`: JSON Lines readers with
 * "FILE:LINE: what" errors, and the gold list of each level built the way
 * the reference scorer (bench/tools/locscore.py) builds it, so that the
 * numbers agree with the published ones to the last digit. */
#include "cn_eval.h"
#include "../plugin/cn_host.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- levels ------------------------------------------------------------- */

static const int file_ks[] = {1, 3, 5};
static const int module_ks[] = {5, 10};
static const int function_ks[] = {5, 10};

const char *cn_eval_level_name(cn_eval_level l)
{
    switch (l) {
    case CN_EVAL_FILE: return "file";
    case CN_EVAL_MODULE: return "module";
    case CN_EVAL_FUNCTION: return "function";
    default: return "?";
    }
}

const char *cn_eval_level_key(cn_eval_level l)
{
    switch (l) {
    case CN_EVAL_FILE: return "found_files";
    case CN_EVAL_MODULE: return "found_modules";
    case CN_EVAL_FUNCTION: return "found_entities";
    default: return "?";
    }
}

size_t cn_eval_level_ks(cn_eval_level l, const int **ks)
{
    switch (l) {
    case CN_EVAL_FILE: *ks = file_ks; return sizeof file_ks / sizeof file_ks[0];
    case CN_EVAL_MODULE: *ks = module_ks; return sizeof module_ks / sizeof module_ks[0];
    case CN_EVAL_FUNCTION: *ks = function_ks; return sizeof function_ks / sizeof function_ks[0];
    default: *ks = NULL; return 0;
    }
}

/* ---- JSON Lines --------------------------------------------------------- */

/* One pass over a JSON Lines file.  The callback gets each non-blank row
 * parsed as an object; `last_unterminated` tells it the row is the final
 * one and lacks its newline (what an interrupted writer leaves). */
typedef struct jsonl_reader {
    const char *path;
    char *data;
    size_t len, pos;
    int line;                /* 1-based number of the row being handed out */
    json_tokener *tok;
} jsonl_reader;

static int jsonl_open(jsonl_reader *r, const char *path, bool missing_ok, bool *missing)
{
    int rc;

    memset(r, 0, sizeof *r);
    r->path = path;
    *missing = false;
    rc = cn_file_read(path, 0, &r->data, &r->len);
    if (rc == CN_ENOTFOUND) {
        if (missing_ok) {
            *missing = true;
            cn_error_clear();
            return 0;
        }
        /* A file named on the command line that is not there is an I/O
         * failure for the caller, whatever the reader calls it. */
        return cn_error_set(CN_EIO, "%s: cannot open: no such file", path);
    }
    if (rc < 0) return rc;
    r->tok = json_tokener_new();
    if (r->tok == NULL) return cn_error_set(CN_ENOMEM, "%s: out of memory", path);
    return 0;
}

static void jsonl_close(jsonl_reader *r)
{
    free(r->data);
    if (r->tok) json_tokener_free(r->tok);
    memset(r, 0, sizeof *r);
}

static bool all_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n') return false;
    return true;
}

/* Next non-blank row.  Returns 1 with *row set, 0 at the end, or an error.
 * *unterminated is set when the row is the file's last and has no
 * newline.  A row that does not parse is an error unless it is such a
 * last row, in which case it returns 2 with *row NULL. */
static int jsonl_next(jsonl_reader *r, json_object **row, bool *unterminated)
{
    *row = NULL;
    *unterminated = false;
    while (r->pos < r->len) {
        const char *s = r->data + r->pos;
        const char *nl = memchr(s, '\n', r->len - r->pos);
        size_t n = nl ? (size_t)(nl - s) : r->len - r->pos;
        enum json_tokener_error err;
        json_object *o;

        r->pos += n + (nl ? 1 : 0);
        r->line++;
        if (all_blank(s, n)) continue;
        *unterminated = nl == NULL;
        if (n > INT32_MAX) return cn_error_set(CN_EPARSE, "%s:%d: line too long", r->path, r->line);
        json_tokener_reset(r->tok);
        o = json_tokener_parse_ex(r->tok, s, (int)n);
        err = json_tokener_get_error(r->tok);
        if (o == NULL || err != json_tokener_success) {
            json_object_put(o);
            if (*unterminated) return 2;
            return cn_error_set(CN_EPARSE, "%s:%d: not JSON: %s", r->path, r->line,
                                err == json_tokener_continue ? "the value is cut short"
                                                             : json_tokener_error_desc(err));
        }
        if (!all_blank(s + json_tokener_get_parse_end(r->tok), n - json_tokener_get_parse_end(r->tok))) {
            json_object_put(o);
            return cn_error_set(CN_EPARSE, "%s:%d: not JSON: text after the value", r->path, r->line);
        }
        if (!json_object_is_type(o, json_type_object)) {
            json_object_put(o);
            return cn_error_set(CN_EPARSE, "%s:%d: not a JSON object", r->path, r->line);
        }
        *row = o;
        return 1;
    }
    return 0;
}

/* A string member; NULL when absent or null, an error when another type. */
static int get_opt_string(const jsonl_reader *r, json_object *row, const char *key, const char **out)
{
    json_object *v = NULL;

    *out = NULL;
    if (!json_object_object_get_ex(row, key, &v) || v == NULL) return 0;
    if (!json_object_is_type(v, json_type_string))
        return cn_error_set(CN_EINVAL, "%s:%d: \"%s\" is not a string", r->path, r->line, key);
    *out = json_object_get_string(v);
    return 0;
}

static int get_instance_id(const jsonl_reader *r, json_object *row, const char **id)
{
    int rc = get_opt_string(r, row, "instance_id", id);
    if (rc < 0) return rc;
    if (*id == NULL || **id == '\0')
        return cn_error_set(CN_EINVAL, "%s:%d: no instance_id (every row needs a non-empty one)",
                            r->path, r->line);
    return 0;
}

/* Copies a JSON array of strings (absent or null: nothing) onto v. */
static int get_string_list(const jsonl_reader *r, json_object *holder, const char *key,
                           const char *where, cn_strv *v)
{
    json_object *a = NULL;
    size_t n;

    if (!json_object_object_get_ex(holder, key, &a) || a == NULL) return 0;
    if (!json_object_is_type(a, json_type_array))
        return cn_error_set(CN_EINVAL, "%s:%d: %s\"%s\" is not an array of strings", r->path, r->line,
                            where, key);
    n = json_object_array_length(a);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(a, i);
        int rc;
        if (!json_object_is_type(e, json_type_string))
            return cn_error_set(CN_EINVAL, "%s:%d: %s\"%s\"[%zu] is not a string", r->path, r->line,
                                where, key, i);
        rc = cn_strv_push(v, json_object_get_string(e));
        if (rc < 0) return rc;
    }
    return 0;
}

/* ---- datasets ------------------------------------------------------------ */

/* "owner__name-123" -> "owner/name"; an id without "__" keeps everything
 * before its trailing "-NUMBER" (or the whole id), so such rows still
 * group by project. */
static char *repo_from_id(const char *id)
{
    const char *sep = strstr(id, "__");
    const char *dash = strrchr(id, '-');
    size_t end = dash && dash > id && dash[1] != '\0' && strspn(dash + 1, "0123456789") == strlen(dash + 1)
                     ? (size_t)(dash - id)
                     : strlen(id);
    cn_buf b = CN_BUF_INIT;

    if (sep && (size_t)(sep - id) < end) {
        cn_buf_append(&b, id, (size_t)(sep - id));
        cn_buf_putc(&b, '/');
        cn_buf_append(&b, sep + 2, end - (size_t)(sep + 2 - id));
    } else {
        cn_buf_append(&b, id, end);
    }
    if (b.oom) {
        cn_buf_free(&b);
        return NULL;
    }
    return cn_buf_steal(&b);
}

/* The module of an entity, as locscore.py derives it: "path:A.b" ->
 * "path:A"; an entity without ':' becomes "entity:". */
static char *module_of(const char *entity)
{
    const char *colon = strchr(entity, ':');
    cn_buf b = CN_BUF_INIT;

    if (colon == NULL) {
        cn_buf_puts(&b, entity);
        cn_buf_putc(&b, ':');
    } else {
        const char *name = colon + 1;
        cn_buf_append(&b, entity, (size_t)(name - entity));
        cn_buf_append(&b, name, strcspn(name, "."));
    }
    if (b.oom) {
        cn_buf_free(&b);
        return NULL;
    }
    return cn_buf_steal(&b);
}

static int add_modules(cn_strv *modules, const cn_strv *entities, size_t from)
{
    for (size_t i = from; i < entities->len; i++) {
        char *m = module_of(entities->items[i]);
        int rc;
        if (m == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
        if (cn_strv_contains(modules, m)) {
            free(m);
            continue;
        }
        rc = cn_strv_push_owned(modules, m);
        if (rc < 0) return rc;
    }
    return 0;
}

static int read_gold(const jsonl_reader *r, json_object *row, cn_eval_instance *in)
{
    json_object *changes = NULL;
    size_t n;

    if (!json_object_object_get_ex(row, "gt_file_changes", &changes) ||
        !json_object_is_type(changes, json_type_array))
        return cn_error_set(CN_EINVAL,
                            "%s:%d: \"gt_file_changes\" is %s; it must be an array of "
                            "{\"file\": ..., \"changes\": {\"edited_entities\": [...]}}",
                            r->path, r->line, changes ? "not an array" : "missing");
    n = json_object_array_length(changes);
    for (size_t i = 0; i < n; i++) {
        json_object *fc = json_object_array_get_idx(changes, i), *file = NULL, *ch = NULL;
        char where[64];
        size_t before = in->gold[CN_EVAL_FUNCTION].len;
        int rc;

        if (!json_object_is_type(fc, json_type_object) || !json_object_object_get_ex(fc, "file", &file) ||
            !json_object_is_type(file, json_type_string) || !json_object_object_get_ex(fc, "changes", &ch) ||
            !json_object_is_type(ch, json_type_object))
            return cn_error_set(CN_EINVAL,
                                "%s:%d: gt_file_changes[%zu] is not {\"file\": \"path\", \"changes\": "
                                "{\"edited_entities\": [...]}}",
                                r->path, r->line, i);
        rc = cn_strv_push(&in->gold[CN_EVAL_FILE], json_object_get_string(file));
        if (rc < 0) return rc;
        snprintf(where, sizeof where, "gt_file_changes[%zu].changes.", i);
        /* edited_entities may be absent (a file with only module-level
         * edits), as the reference scorer allows. */
        rc = get_string_list(r, ch, "edited_entities", where, &in->gold[CN_EVAL_FUNCTION]);
        if (rc < 0) return rc;
        rc = add_modules(&in->gold[CN_EVAL_MODULE], &in->gold[CN_EVAL_FUNCTION], before);
        if (rc < 0) return rc;
    }
    return 0;
}

static void instance_free(cn_eval_instance *in)
{
    free(in->instance_id);
    free(in->repo);
    free(in->base_commit);
    free(in->problem_statement);
    free(in->language);
    for (int l = 0; l < CN_EVAL_LEVELS; l++) cn_strv_free(&in->gold[l]);
    for (size_t i = 0; i < in->n_functions; i++) free(in->functions[i].file);
    free(in->functions);
    for (size_t i = 0; i < in->n_changed; i++) {
        free(in->changed[i].file);
        free(in->changed[i].lines);
    }
    free(in->changed);
    memset(in, 0, sizeof *in);
}

/* A whole number member of a gold item. */
static bool get_line(json_object *o, const char *key, long *out)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int)) return false;
    *out = (long)json_object_get_int64(v);
    return true;
}

/* gold_functions: [{"file", "name", "kind", "start", "end"}] (only file,
 * start and end are scored). */
static int read_gold_functions(const jsonl_reader *r, json_object *a, cn_eval_instance *in)
{
    size_t n = json_object_array_length(a);

    if (n == 0) return 0;
    if ((in->functions = calloc(n, sizeof *in->functions)) == NULL)
        return cn_error_set(CN_ENOMEM, "%s:%d: out of memory", r->path, r->line);
    for (size_t i = 0; i < n; i++) {
        json_object *g = json_object_array_get_idx(a, i), *file = NULL;
        cn_eval_span *sp = &in->functions[i];
        if (!json_object_is_type(g, json_type_object) || !json_object_object_get_ex(g, "file", &file) ||
            !json_object_is_type(file, json_type_string) || !get_line(g, "start", &sp->start) ||
            !get_line(g, "end", &sp->end) || sp->start < 1 || sp->end < sp->start)
            return cn_error_set(CN_EINVAL,
                                "%s:%d: gold_functions[%zu] is not {\"file\": \"path\", \"start\": N, \"end\": M} "
                                "with 1 <= N <= M",
                                r->path, r->line, i);
        if ((sp->file = cn_strdup(json_object_get_string(file))) == NULL)
            return cn_error_set(CN_ENOMEM, "%s:%d: out of memory", r->path, r->line);
        in->n_functions = i + 1;
    }
    return 0;
}

/* changed_lines: {"path": [line, ...], ...} */
static int read_changed_lines(const jsonl_reader *r, json_object *o, cn_eval_instance *in)
{
    size_t n = (size_t)json_object_object_length(o), i = 0;

    if (n == 0) return 0;
    if ((in->changed = calloc(n, sizeof *in->changed)) == NULL)
        return cn_error_set(CN_ENOMEM, "%s:%d: out of memory", r->path, r->line);
    json_object_object_foreach(o, file, lines)
    {
        cn_eval_changed *c = &in->changed[i];
        size_t k;
        if (!json_object_is_type(lines, json_type_array))
            return cn_error_set(CN_EINVAL, "%s:%d: changed_lines[\"%s\"] is not an array of line numbers",
                                r->path, r->line, file);
        k = json_object_array_length(lines);
        if ((c->file = cn_strdup(file)) == NULL || (k && (c->lines = calloc(k, sizeof *c->lines)) == NULL))
            return cn_error_set(CN_ENOMEM, "%s:%d: out of memory", r->path, r->line);
        in->n_changed = ++i;
        for (size_t j = 0; j < k; j++) {
            json_object *v = json_object_array_get_idx(lines, j);
            if (!json_object_is_type(v, json_type_int))
                return cn_error_set(CN_EINVAL, "%s:%d: changed_lines[\"%s\"][%zu] is not a line number", r->path,
                                    r->line, file, j);
            c->lines[c->n++] = (long)json_object_get_int64(v);
        }
    }
    return 0;
}

/* The multilingual benchmark's fields: language, gold_files (which then
 * are the file gold), gold_functions and changed_lines. */
static int read_range_gold(const jsonl_reader *r, json_object *row, cn_eval_instance *in)
{
    json_object *v = NULL;
    const char *lang;
    int rc;

    if ((rc = get_opt_string(r, row, "language", &lang)) < 0) return rc;
    if (lang && *lang && (in->language = cn_strdup(lang)) == NULL)
        return cn_error_set(CN_ENOMEM, "%s:%d: out of memory", r->path, r->line);
    if (json_object_object_get_ex(row, "gold_files", &v) && v != NULL) {
        cn_strv files = CN_STRV_INIT;
        if ((rc = get_string_list(r, row, "gold_files", "", &files)) < 0) {
            cn_strv_free(&files);
            return rc;
        }
        cn_strv_free(&in->gold[CN_EVAL_FILE]);
        in->gold[CN_EVAL_FILE] = files;
    }
    if (json_object_object_get_ex(row, "gold_functions", &v) && v != NULL) {
        if (!json_object_is_type(v, json_type_array))
            return cn_error_set(CN_EINVAL, "%s:%d: \"gold_functions\" is not an array", r->path, r->line);
        in->ranged = true;
        if ((rc = read_gold_functions(r, v, in)) < 0) return rc;
    }
    if (json_object_object_get_ex(row, "changed_lines", &v) && v != NULL) {
        if (!json_object_is_type(v, json_type_object))
            return cn_error_set(CN_EINVAL, "%s:%d: \"changed_lines\" is not an object {\"path\": [lines]}", r->path,
                                r->line);
        in->ranged = true;
        if ((rc = read_changed_lines(r, v, in)) < 0) return rc;
    }
    return 0;
}

static int read_instance(const jsonl_reader *r, json_object *row, cn_eval_instance *in)
{
    const char *id, *repo, *commit, *problem;
    int rc;

    memset(in, 0, sizeof *in);
    if ((rc = get_instance_id(r, row, &id)) < 0 || (rc = get_opt_string(r, row, "repo", &repo)) < 0 ||
        (rc = get_opt_string(r, row, "base_commit", &commit)) < 0 ||
        (rc = get_opt_string(r, row, "problem_statement", &problem)) < 0)
        return rc;
    in->instance_id = cn_strdup(id);
    in->repo = repo && *repo ? cn_strdup(repo) : repo_from_id(id);
    in->base_commit = cn_strdup(commit);
    in->problem_statement = cn_strdup(problem);
    if (in->instance_id == NULL || in->repo == NULL || (commit && in->base_commit == NULL) ||
        (problem && in->problem_statement == NULL))
        rc = cn_error_set(CN_ENOMEM, "%s:%d: out of memory", r->path, r->line);
    else if ((rc = read_gold(r, row, in)) == 0)
        rc = read_range_gold(r, row, in);
    if (rc < 0) instance_free(in);
    return rc;
}

void cn_eval_dataset_free(cn_eval_dataset *d)
{
    if (d == NULL) return;
    for (size_t i = 0; i < d->len; i++) instance_free(&d->items[i]);
    free(d->items);
    d->items = NULL;
    d->len = 0;
}

static int dataset_rows(jsonl_reader *r, cn_eval_dataset *d)
{
    json_object *seen = json_object_new_object(); /* id -> line, for duplicate messages */
    size_t cap = 0;
    int rc = seen ? 0 : cn_error_set(CN_ENOMEM, "out of memory");

    while (rc == 0) {
        json_object *row, *first;
        bool unterminated;
        const char *id;
        int got = jsonl_next(r, &row, &unterminated);

        if (got == 2) /* a dataset is not being written to: a cut row is an error */
            got = cn_error_set(CN_EPARSE, "%s:%d: not JSON: the last row is cut short", r->path, r->line);
        if (got <= 0) {
            rc = got;
            break;
        }
        rc = get_instance_id(r, row, &id);
        if (rc == 0 && json_object_object_get_ex(seen, id, &first))
            rc = cn_error_set(CN_EEXISTS, "%s:%d: duplicate instance_id \"%s\" (first on line %d)", r->path,
                              r->line, id, json_object_get_int(first));
        if (rc == 0 && d->len == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            cn_eval_instance *p = realloc(d->items, ncap * sizeof *p);
            if (p == NULL)
                rc = cn_error_set(CN_ENOMEM, "out of memory");
            else {
                d->items = p;
                cap = ncap;
            }
        }
        if (rc == 0) rc = read_instance(r, row, &d->items[d->len]);
        if (rc == 0) {
            d->len++;
            if (json_object_object_add(seen, id, json_object_new_int(r->line)) != 0)
                rc = cn_error_set(CN_ENOMEM, "out of memory");
        }
        json_object_put(row);
    }
    json_object_put(seen);
    return rc;
}

int cn_eval_dataset_load(const char *path, cn_eval_dataset *out)
{
    jsonl_reader r;
    bool missing;
    int rc;

    memset(out, 0, sizeof *out);
    rc = jsonl_open(&r, path, false, &missing);
    if (rc == 0) rc = dataset_rows(&r, out);
    jsonl_close(&r);
    if (rc < 0) cn_eval_dataset_free(out);
    return rc;
}

/* ---- predictions --------------------------------------------------------- */

void cn_eval_preds_init(cn_eval_preds *p)
{
    memset(p, 0, sizeof *p);
}

void cn_eval_pred_free(cn_eval_pred *pred)
{
    if (pred == NULL) return;
    free(pred->instance_id);
    for (int l = 0; l < CN_EVAL_LEVELS; l++) cn_strv_free(&pred->found[l]);
    cn_strv_free(&pred->locations);
    memset(pred, 0, sizeof *pred);
}

bool cn_eval_location_parse(const char *loc, size_t *path_len, long *start, long *end)
{
    const char *colon, *dash, *p;
    char *stop;

    if (loc == NULL || (colon = strrchr(loc, ':')) == NULL || colon == loc) return false;
    p = colon + 1;
    if (*p < '0' || *p > '9') return false;
    *start = strtol(p, &stop, 10);
    dash = stop;
    if (*dash == '\0') {
        *end = *start;
    } else {
        if (*dash != '-' || dash[1] < '0' || dash[1] > '9') return false;
        *end = strtol(dash + 1, &stop, 10);
        if (*stop != '\0') return false;
    }
    *path_len = (size_t)(colon - loc);
    return true;
}

/* found_locations: "path:START-END" strings, or {"path", "start_line",
 * "end_line"} objects (kept as the string).  Entries that are neither are
 * left out, as the benchmark's scorer leaves them out. */
static int get_locations(const jsonl_reader *r, json_object *row, cn_strv *v)
{
    json_object *a = NULL;

    if (!json_object_object_get_ex(row, "found_locations", &a) || a == NULL) return 0;
    if (!json_object_is_type(a, json_type_array))
        return cn_error_set(CN_EINVAL, "%s:%d: \"found_locations\" is not an array", r->path, r->line);
    for (size_t i = 0; i < json_object_array_length(a); i++) {
        json_object *e = json_object_array_get_idx(a, i), *p = NULL, *s = NULL, *t = NULL;
        char *text = NULL;
        size_t pl;
        long x, y;
        if (json_object_is_type(e, json_type_string)) {
            if (cn_eval_location_parse(json_object_get_string(e), &pl, &x, &y))
                text = cn_strdup(json_object_get_string(e));
            else
                continue;
        } else if (json_object_is_type(e, json_type_object) && json_object_object_get_ex(e, "path", &p) &&
                   json_object_is_type(p, json_type_string) && json_object_object_get_ex(e, "start_line", &s) &&
                   json_object_is_type(s, json_type_int)) {
            json_object_object_get_ex(e, "end_line", &t);
            x = (long)json_object_get_int64(s);
            y = t && json_object_is_type(t, json_type_int) ? (long)json_object_get_int64(t) : x;
            text = cn_strprintf("%s:%ld-%ld", json_object_get_string(p), x, y);
        } else {
            continue;
        }
        if (text == NULL || cn_strv_push_owned(v, text) < 0) return cn_error_set(CN_ENOMEM, "out of memory");
    }
    return 0;
}

void cn_eval_preds_free(cn_eval_preds *p)
{
    if (p == NULL) return;
    for (size_t i = 0; i < p->len; i++) cn_eval_pred_free(&p->items[i]);
    free(p->items);
    json_object_put(p->by_id);
    memset(p, 0, sizeof *p);
}

const cn_eval_pred *cn_eval_preds_find(const cn_eval_preds *p, const char *instance_id)
{
    json_object *ix;

    if (p->by_id == NULL || instance_id == NULL || !json_object_object_get_ex(p->by_id, instance_id, &ix))
        return NULL;
    return &p->items[json_object_get_int(ix)];
}

int cn_eval_preds_add(cn_eval_preds *p, cn_eval_pred *pred)
{
    json_object *ix;
    int rc = 0;

    if (pred->instance_id == NULL || pred->instance_id[0] == '\0') {
        cn_eval_pred_free(pred);
        return cn_error_set(CN_EINVAL, "cn_eval_preds_add: a prediction without an instance_id");
    }
    if (p->by_id == NULL && (p->by_id = json_object_new_object()) == NULL)
        rc = cn_error_set(CN_ENOMEM, "out of memory");
    if (rc == 0 && json_object_object_get_ex(p->by_id, pred->instance_id, &ix)) {
        /* Replace in place: the index keeps pointing at the same slot. */
        cn_eval_pred_free(&p->items[json_object_get_int(ix)]);
        p->items[json_object_get_int(ix)] = *pred;
        memset(pred, 0, sizeof *pred);
        return 0;
    }
    if (rc == 0 && p->len == p->cap) {
        size_t ncap = p->cap ? p->cap * 2 : 64;
        cn_eval_pred *items = p->len < INT32_MAX ? realloc(p->items, ncap * sizeof *items) : NULL;
        if (items == NULL)
            rc = cn_error_set(CN_ENOMEM, "out of memory");
        else {
            p->items = items;
            p->cap = ncap;
        }
    }
    if (rc == 0 && json_object_object_add(p->by_id, pred->instance_id, json_object_new_int((int)p->len)) != 0)
        rc = cn_error_set(CN_ENOMEM, "out of memory");
    if (rc < 0) {
        cn_eval_pred_free(pred);
        return rc;
    }
    p->items[p->len++] = *pred;
    memset(pred, 0, sizeof *pred);
    return 0;
}

static int read_pred(const jsonl_reader *r, json_object *row, cn_eval_pred *pred)
{
    const char *id;
    int rc;

    memset(pred, 0, sizeof *pred);
    rc = get_instance_id(r, row, &id);
    if (rc < 0) return rc;
    pred->instance_id = cn_strdup(id);
    if (pred->instance_id == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    for (int l = 0; l < CN_EVAL_LEVELS && rc == 0; l++)
        rc = get_string_list(r, row, cn_eval_level_key((cn_eval_level)l), "", &pred->found[l]);
    if (rc == 0) rc = get_locations(r, row, &pred->locations);
    if (rc == 0) {
        json_object *err = NULL;
        /* as the benchmark's scorer reads it: a non-empty error */
        pred->failed = json_object_object_get_ex(row, "error", &err) && err != NULL &&
                       !(json_object_is_type(err, json_type_string) && json_object_get_string_len(err) == 0) &&
                       !(json_object_is_type(err, json_type_boolean) && !json_object_get_boolean(err));
    }
    if (rc < 0) cn_eval_pred_free(pred);
    return rc;
}

int cn_eval_preds_load(const char *path, bool missing_ok, cn_eval_preds *out, bool *truncated)
{
    jsonl_reader r;
    bool missing;
    int rc;

    if (truncated) *truncated = false;
    rc = jsonl_open(&r, path, missing_ok, &missing);
    while (rc == 0 && !missing) {
        json_object *row;
        bool unterminated;
        cn_eval_pred pred;
        int got = jsonl_next(&r, &row, &unterminated);

        if (got == 2) {
            /* The writer was interrupted mid-row: the rows before it are
             * good, the instance will simply be run again. */
            if (truncated) *truncated = true;
            break;
        }
        if (got <= 0) {
            rc = got;
            break;
        }
        rc = read_pred(&r, row, &pred);
        json_object_put(row);
        if (rc == 0) rc = cn_eval_preds_add(out, &pred);
    }
    jsonl_close(&r);
    return rc;
}

json_object *cn_eval_pred_json(const cn_eval_pred *pred)
{
    json_object *o = json_object_new_object(), *id;

    if (o == NULL) return NULL;
    id = json_object_new_string(pred->instance_id ? pred->instance_id : "");
    if (id == NULL || json_object_object_add(o, "instance_id", id) != 0) {
        json_object_put(id);
        json_object_put(o);
        return NULL;
    }
    for (int l = 0; l <= CN_EVAL_LEVELS; l++) {
        json_object *a = cn_json_strv(l < CN_EVAL_LEVELS ? &pred->found[l] : &pred->locations);
        if (a == NULL ||
            json_object_object_add(o, l < CN_EVAL_LEVELS ? cn_eval_level_key((cn_eval_level)l) : "found_locations", a) != 0) {
            json_object_put(a);
            json_object_put(o);
            return NULL;
        }
    }
    return o;
}
